"""Static sliders: a widget's view precomputed over a list of settings, scrubbable with no kernel.

A widget needs a running kernel; the published page has none. So each widget in the book gets a twin:
the same ``draw(fig, setting)`` function rendered once per setting into compact PNG frames, wrapped in
matplotlib's ``to_jshtml`` player (plain HTML and JavaScript). The widget and the slider call the same
``draw``, so they cannot disagree. Frame 0 is the default setting. Introduced in Part I, "Dot products".
"""
from __future__ import annotations

import base64
import io
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import matplotlib

matplotlib.use("Agg", force=False)  # a no-op inside Jupyter's inline backend; headless elsewhere
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.animation import FuncAnimation  # noqa: E402
from PIL import Image  # noqa: E402  (a matplotlib dependency)

# matplotlib's player links an icon stylesheet from a CDN; its buttons render without it, and an offline page
# would log a failed request, so the link is removed.
_CDN_LINK = re.compile(r'<link rel="stylesheet"\s+href="https://[^"]*font-awesome[^"]*">\s*')
# each frame is embedded as `frames[k] = "data:image/png;base64,…"`, its base64 lines joined by a backslash-newline
_FRAME = re.compile(r'frames\[(\d+)\] = "data:image/png;base64,([A-Za-z0-9+/=\\\n]*)"')


def compact_png(png: bytes, colors: int = 96) -> bytes:
    """Re-encode a PNG with an adaptive palette of ``colors`` colours: figures have few colours, so this is
    several times smaller and looks the same."""
    with Image.open(io.BytesIO(png)) as im:
        pal = im.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        out = io.BytesIO()
        pal.save(out, format="PNG", optimize=True)
    return out.getvalue()


def render_png(draw: Callable, setting, label: str, figsize: tuple[float, float], dpi: int) -> bytes:
    """Render ``draw(fig, setting)`` into a fresh figure, with ``label`` as its title, and return compact PNG bytes."""
    fig = plt.figure(figsize=figsize, dpi=dpi)
    try:
        _draw_frame(fig, draw, setting, label)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    return compact_png(buf.getvalue())


def _draw_frame(fig, draw: Callable, setting, label: str) -> None:
    fig.clear()
    draw(fig, setting)
    fig.suptitle(label, fontsize=10, x=0.01, ha="left")


@dataclass(frozen=True)
class StaticSlider:
    """Rendered frames plus the HTML player. ``frames[k]`` is the PNG for ``settings[k]``, titled ``labels[k]``."""

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


def static_slider(draw: Callable, settings: Sequence, label: Callable[[object], str],
                  figsize: tuple[float, float] = (7.0, 3.0), dpi: int = 72, colors: int = 96) -> StaticSlider:
    """Precompute ``draw(fig, s)`` for every setting ``s`` and return a scrubbable HTML player.

    ``settings[0]`` must be the widget's default, so that the static page first shows what the widget shows.
    ``label(s)`` gives the readable caption of a setting (e.g. ``"θ = 30°"``), drawn on each frame.
    """
    settings = tuple(settings)
    if len(settings) < 2:
        raise ValueError(f"a static slider needs at least 2 settings, got {len(settings)}")
    if len(settings) > 40:
        raise ValueError(f"{len(settings)} settings would make a heavy page; use at most 40")
    labels = tuple(label(s) for s in settings)
    fig = plt.figure(figsize=figsize, dpi=dpi)
    try:
        anim = FuncAnimation(fig, lambda k: _draw_frame(fig, draw, settings[k], labels[k]),
                             frames=len(settings), interval=400, repeat=False)
        with matplotlib.rc_context({"animation.embed_limit": 20.0, "savefig.dpi": dpi}):
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
    return StaticSlider(settings, labels, tuple(frames), html)
