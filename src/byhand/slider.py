"""Static sliders: a widget's view precomputed over a list of settings, scrubbable with no kernel.

A widget needs a running kernel; the published page has none. So each widget in the book gets a twin:
the same ``draw(fig, setting)`` function rendered once per setting into compact PNG frames, wrapped in
matplotlib's ``to_jshtml`` player (plain HTML and JavaScript). The widget and the slider call the same
``draw``, so they cannot disagree. Frame 0 is the default setting. Introduced in Part I, "Dot products".

Legibility. A frame is shown at its true size (``DISPLAY_DPI`` = 96 CSS pixels per figure inch, so a 9 pt label
reads as 9 pt) and rendered at ``SCALE`` times that for high-density screens. Each frame's label (``label(s)``) is
a line of text above the player that changes with the frame, not ink inside the figure. Every frame is checked by
``layout_problems`` before it is kept: no text under ``MIN_FONT_PT``, no two texts overlapping, no text cut off at
the figure's edge, no legend over the data.
"""
from __future__ import annotations

import base64
import html as html_lib
import io
import json
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import matplotlib

# No matplotlib.use() here: switching backends at import would turn off Jupyter's inline figures for every cell
# after it. Headless, matplotlib falls back to Agg by itself.
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.path import Path  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402
from PIL import Image  # noqa: E402  (a matplotlib dependency)

DISPLAY_DPI = 96  # CSS pixels per figure inch on the page: a figure inch is a CSS inch, a point is a point
SCALE = 2  # frames carry SCALE × the pixels they are shown at (sharp on high-density screens)
MIN_FONT_PT = 9.0  # the smallest text a frame may hold, in points at display size

# matplotlib's player links an icon stylesheet from a CDN; its buttons render without it, and an offline page
# would log a failed request, so the link is removed.
_CDN_LINK = re.compile(r'<link rel="stylesheet"\s+href="https://[^"]*font-awesome[^"]*">\s*')
# each frame is embedded as `frames[k] = "data:image/png;base64,…"`, its base64 lines joined by a backslash-newline
_FRAME = re.compile(r'frames\[(\d+)\] = "data:image/png;base64,([A-Za-z0-9+/=\\\n]*)"')
_IMG = re.compile(r'<img id="_anim_img(\w+)">')


def compact_png(png: bytes, colors: int = 96) -> bytes:
    """Re-encode a PNG with an adaptive palette of ``colors`` colours: figures have few colours, so this is
    several times smaller and looks the same."""
    with Image.open(io.BytesIO(png)) as im:
        pal = im.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        out = io.BytesIO()
        pal.save(out, format="PNG", optimize=True)
    return out.getvalue()


# ------------------------------------------------------------------------------------------ layout checks
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


# ------------------------------------------------------------------------------------------ frames
def render_png(draw: Callable, setting, figsize: tuple[float, float], dpi: int = DISPLAY_DPI * SCALE,
               colors: int = 96) -> bytes:
    """Render ``draw(fig, setting)`` into a fresh figure and return compact PNG bytes at ``dpi``."""
    fig = plt.figure(figsize=figsize, dpi=DISPLAY_DPI)
    try:
        draw(fig, setting)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return compact_png(buf.getvalue(), colors)


def _draw_frame(fig, draw: Callable, setting, label: str, check: bool) -> None:
    fig.clear()
    draw(fig, setting)
    if check:
        check_layout(fig, context=f"static slider frame {label!r}: ")


@dataclass(frozen=True)
class StaticSlider:
    """Rendered frames plus the HTML player. ``frames[k]`` is the PNG for ``settings[k]``, captioned ``labels[k]``."""

    settings: tuple
    labels: tuple[str, ...]
    frames: tuple[bytes, ...]
    html: str

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return f"StaticSlider({len(self.frames)} frames: {self.labels[0]} … {self.labels[-1]})"

    @property
    def nbytes(self) -> int:
        """Size of the HTML that the page carries."""
        return len(self.html.encode())


# A line of text above the player names the frame on show; this hook updates it whenever the player changes frame
# (matplotlib's Animation object calls set_frame for the slider, the buttons and playback alike).
_CAPTION_JS = """<script>
(function () {
  var labels = %(labels)s;
  function hook() {
    var anim = window["anim%(id)s"];
    if (!anim) { setTimeout(hook, 20); return; }
    var caption = document.getElementById("_anim_caption%(id)s");
    var img = document.getElementById("_anim_img%(id)s");
    var set_frame = anim.set_frame;
    anim.set_frame = function (k) {
      set_frame.call(anim, k);
      caption.textContent = labels[k];
      img.alt = labels[k];
    };
    anim.set_frame(anim.current_frame);
  }
  setTimeout(hook, 0);
})();
</script>"""


def _player(html: str, labels: Sequence[str], width: int, height: int) -> str:
    """Show the frames at ``width`` × ``height`` CSS pixels (shrinking to the column), add the caption line and
    its hook, and wrap the player in ``<div class="byhand-slider">`` (the book's CSS styles it)."""
    m = _IMG.search(html)
    if m is None:
        raise RuntimeError("matplotlib's player has no <img id=\"_anim_img…\">; its template changed")
    uid = m.group(1)
    first = html_lib.escape(labels[0])
    html = _IMG.sub(f'<img id="_anim_img{uid}" width="{width}" height="{height}" alt="{first}" '
                    f'style="max-width: 100%; height: auto;">', html, count=1)
    html = html.replace('class="anim-slider"', 'class="anim-slider" style="max-width: 100%;"', 1)
    html = html.replace('<div class="animation">', '<div class="animation" style="max-width: 100%;">', 1)
    caption = (f'<div class="byhand-frame-label" id="_anim_caption{uid}" aria-live="polite" '
               f'style="font-weight: 600; margin: 0.25em 0;">{first}</div>')
    hook = _CAPTION_JS % {"labels": json.dumps(list(labels), ensure_ascii=False), "id": uid}
    return f'<div class="byhand-slider" style="max-width: 100%; overflow-x: auto;">\n{caption}\n{html}\n{hook}\n</div>'


def static_slider(draw: Callable, settings: Sequence, label: Callable[[object], str],
                  figsize: tuple[float, float] = (7.0, 3.0), dpi: int = DISPLAY_DPI, scale: int = SCALE,
                  colors: int = 96, check: bool = True) -> StaticSlider:
    """Precompute ``draw(fig, s)`` for every setting ``s`` and return a scrubbable HTML player.

    ``settings[0]`` must be the widget's default, so that the static page first shows what the widget shows.
    ``label(s)`` says what frame ``s`` shows (e.g. ``"θ = 30°"``); it is the line of text above the player.
    Frames are shown at ``dpi`` CSS pixels per inch and rendered at ``scale × dpi``. With ``check`` (the default)
    every frame must pass ``layout_problems``, or a ``ValueError`` names the frame and the problem.
    """
    settings = tuple(settings)
    if len(settings) < 2:
        raise ValueError(f"a static slider needs at least 2 settings, got {len(settings)}")
    if len(settings) > 40:
        raise ValueError(f"{len(settings)} settings would make a heavy page; use at most 40")
    labels = tuple(str(label(s)) for s in settings)
    fig = plt.figure(figsize=figsize, dpi=dpi)
    try:
        anim = FuncAnimation(fig, lambda k: _draw_frame(fig, draw, settings[k], labels[k], check),
                             frames=len(settings), interval=400, repeat=False)
        with matplotlib.rc_context({"animation.embed_limit": 20.0, "savefig.dpi": dpi * scale}):
            html = anim.to_jshtml(default_mode="once")
    finally:
        plt.close(fig)
    html = _CDN_LINK.sub("", html)
    frames = []

    def squeeze(m: re.Match) -> str:  # swap each embedded frame for its palette-compressed version
        png = compact_png(base64.b64decode(m.group(2).replace("\\\n", "")), colors)
        frames.append(png)
        return f'frames[{m.group(1)}] = "data:image/png;base64,{base64.b64encode(png).decode()}"'

    html = _FRAME.sub(squeeze, html)
    if len(frames) != len(settings):
        raise RuntimeError(f"expected {len(settings)} frames in the player, found {len(frames)}")
    html = _player(html, labels, round(figsize[0] * dpi), round(figsize[1] * dpi))
    return StaticSlider(settings, labels, tuple(frames), html)
