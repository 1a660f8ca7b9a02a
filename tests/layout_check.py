"""Figure-layout checks for the book's views: legible text, nothing overlapping, nothing cut off, legends off the data.

This is test code, not library code: the view tests run it over every frame a view draws (the static slider's
settings, and the live widget's moves), so a chapter's execution never pays for it.
"""
from __future__ import annotations

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.legend import Legend
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.transforms import Bbox

MIN_FONT_PT = 9.0  # the smallest text a frame may hold, in points at display size


def _shown_texts(fig) -> list[Text]:
    """Every text the figure draws: visible, not empty, and (for tick labels) at a tick inside the axis' view."""
    hidden = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            scale = axis.get_transform()  # compare in the axis' scale (log axes too)
            lo, hi = sorted(scale.transform(np.asarray(axis.get_view_interval(), float)))
            pad = 1e-9 * (hi - lo)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                loc = tick.get_loc()
                if loc is None or (axis.get_scale() == "log" and loc <= 0):  # never drawn
                    hidden.update((tick.label1, tick.label2))
                    continue
                at = scale.transform(np.array([loc], float))[0]
                if not lo - pad <= at <= hi + pad:
                    hidden.update((tick.label1, tick.label2))
    return [t for t in fig.findobj(Text)
            if t not in hidden and t.get_visible() and t.get_text().strip() and t.get_figure(root=True) is fig]


def _text_quad(t: Text, renderer) -> np.ndarray:
    """The four corners of a text's ink box in display pixels; a rotated line of text gives a rotated rectangle."""
    box = t.get_window_extent(renderer)
    angle = t.get_rotation() % 180.0
    if angle in (0.0, 90.0) or "\n" in t.get_text():
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    text = t.get_text()
    n_dollars = text.count("$") - text.count(r"\$")
    ismath = "TeX" if t.get_usetex() else (n_dollars >= 2 and n_dollars % 2 == 0)  # "$…$" is mathtext
    w, h, _ = renderer.get_text_width_height_descent(text, t.get_fontproperties(), ismath=ismath)
    c = np.array([(box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2])  # a rotated rectangle keeps its centre
    r = np.deg2rad(angle)
    u, v = np.array([np.cos(r), np.sin(r)]), np.array([-np.sin(r), np.cos(r)])
    return np.array([c + sx * w / 2 * u + sy * h / 2 * v for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])


def _data_hits(ax, box: Bbox) -> list[str]:
    """The data artists of ``ax`` that reach into ``box`` (display pixels): lines, markers, bars, collections."""
    hits = []
    data = ax.transData

    def is_data(artist) -> bool:  # axhline/axvline and spans use blended transforms: reference lines, not data
        return artist.get_transform().contains_branch(data)

    for line in ax.get_lines():
        if not line.get_visible() or not is_data(line):
            continue
        xy = line.get_transform().transform(np.column_stack(line.get_data()).astype(float))  # (n, 2) pixels
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy) == 0:
            continue
        if line.get_linestyle() not in ("None", "", " ", "none") and len(xy) > 1 and \
                Path(xy).intersects_bbox(box, filled=False):
            hits.append(f"line {line.get_label()!r}")
        elif line.get_marker() not in (None, "None", "", " ", "none"):
            r = line.get_markersize() * ax.figure.dpi / 72 / 2  # marker radius in pixels
            inside = (xy[:, 0] > box.x0 - r) & (xy[:, 0] < box.x1 + r) & (xy[:, 1] > box.y0 - r) & (xy[:, 1] < box.y1 + r)
            if np.any(inside):
                hits.append(f"markers {line.get_label()!r}")
    for patch in ax.patches:
        if patch.get_visible() and is_data(patch) and patch.get_window_extent().overlaps(box):
            hits.append(f"{type(patch).__name__.lower()} {patch.get_label()!r}")
    for coll in ax.collections:
        if not coll.get_visible() or not is_data(coll):
            continue
        tr = coll.get_transform()
        if isinstance(coll, LineCollection):
            segs = [tr.transform(np.asarray(s, float)) for s in coll.get_segments() if len(s) > 1]
            if any(Path(s).intersects_bbox(box, filled=False) for s in segs):
                hits.append(f"lines {coll.get_label()!r}")
        elif len(coll.get_offsets()) > 1 or type(coll).__name__ == "PathCollection":  # scatter points
            off = coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float))
            if np.any((off[:, 0] > box.x0) & (off[:, 0] < box.x1) & (off[:, 1] > box.y0) & (off[:, 1] < box.y1)):
                hits.append(f"points {coll.get_label()!r}")
        else:  # filled areas (fill_between) and polygons
            if any(tr.transform_path(p).intersects_bbox(box, filled=True) for p in coll.get_paths()):
                hits.append(f"area {coll.get_label()!r}")
    for im in ax.images:
        if im.get_visible() and im.get_window_extent().overlaps(box):
            hits.append("image")
    return hits


def layout_problems(fig, min_fontsize: float = MIN_FONT_PT, tol_px: float = 1.0) -> list[str]:
    """What a reader would trip over in ``fig``, as sentences (an empty list when the layout is clean):

    - a text smaller than ``min_fontsize`` points;
    - a text cut off at the figure's edge;
    - two texts (titles, labels, tick labels, annotations, legends) that overlap by more than ``tol_px`` pixels;
    - a legend that covers a data artist (a line, markers, bars, an area, an image) of its axes.
    Reference lines drawn across the axes (``axhline``, ``axvline``) are not data. The figure is drawn first.
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    texts = _shown_texts(fig)
    legends = [lg for lg in fig.findobj(Legend) if lg.get_visible()]
    in_legend = {id(t) for lg in legends for t in lg.findobj(Text)}
    W, H = fig.bbox.width, fig.bbox.height

    def name(t: Text) -> str:
        return repr(t.get_text()[:40])

    for t in texts:
        if t.get_fontsize() < min_fontsize - 1e-9:
            problems.append(f"text {name(t)} is {t.get_fontsize():g} pt, under {min_fontsize:g} pt")
    items = [(name(t), _text_quad(t, renderer)) for t in texts if id(t) not in in_legend]
    for lg in legends:
        b = lg.get_window_extent(renderer)
        items.append(("the legend", np.array([[b.x0, b.y0], [b.x1, b.y0], [b.x1, b.y1], [b.x0, b.y1]])))
    for label, quad in items:
        if quad[:, 0].min() < -tol_px or quad[:, 1].min() < -tol_px or quad[:, 0].max() > W + tol_px \
                or quad[:, 1].max() > H + tol_px:
            problems.append(f"{label} is cut off at the figure's edge")
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if _quads_overlap(items[i][1], items[j][1], tol_px):
                problems.append(f"{items[i][0]} overlaps {items[j][0]}")
    for lg in legends:
        if lg.axes is None:
            continue
        b = lg.get_window_extent(renderer).padded(-2.0)  # the legend's own padding may touch the data
        for hit in _data_hits(lg.axes, b):
            problems.append(f"the legend covers {hit}")
    return problems


def _quads_overlap(p: np.ndarray, q: np.ndarray, tol: float) -> bool:
    """True when two convex quads overlap by more than ``tol`` pixels (the separating-axis test)."""
    for quad in (p, q):
        for k in range(4):
            edge = quad[(k + 1) % 4] - quad[k]
            axis = np.array([-edge[1], edge[0]])
            norm = np.hypot(*axis)
            if norm == 0:
                continue
            a, b = p @ (axis / norm), q @ (axis / norm)
            if min(a.max(), b.max()) - max(a.min(), b.min()) <= tol:
                return False  # a gap (or a touch) along this axis separates them
    return True


def check_layout(fig, context: str = "", **kwargs) -> None:
    """Raise ``ValueError`` listing ``layout_problems(fig)``, if there are any."""
    problems = layout_problems(fig, **kwargs)
    if problems:
        raise ValueError(f"{context}{'; '.join(problems)}")


