"""A check every view with a live widget passes: moving its artists in place draws what a whole draw draws.

Used by the view tests (``tests/test_views_*.py``). ``byhand.live`` redraws only a view's moving artists when the
view's ``draw`` returns an ``update``; this checks that a frame reached by any sequence of moves equals, pixel for
pixel, the frame a fresh widget draws whole at that setting, that no move fell back to a whole draw, and that the
static slider's frame (drawn in plain z-order, with nothing animated) differs from it by at most a few pixels where a
moving artist crosses a still one.
"""
from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from byhand.live import LIVE_DPI, LiveFigure


def pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGBA")).astype(np.int16)


def static_png(draw, setting, figsize, dpi) -> bytes:
    """The frame as the static slider draws it: a fresh figure, every artist in its z-order."""
    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)
    draw(fig, setting)
    fig.canvas.draw()
    buf = io.BytesIO()
    Image.frombuffer("RGBA", fig.canvas.get_width_height(), fig.canvas.buffer_rgba(), "raw", "RGBA", 0, 1).save(
        buf, format="PNG")
    return buf.getvalue()


def assert_moves_in_place(draw, settings, figsize=(7.0, 3.0), dpi=LIVE_DPI, max_static_diff=0.01) -> None:
    """Move a live figure through ``settings`` (and back to the first) and check every frame.

    ``max_static_diff`` bounds the share of pixels that may differ from the static slider's frame (the moving
    artists are painted over the still ones, where a whole draw interleaves them by z-order).
    """
    settings = list(settings)
    assert len(settings) >= 2, "give at least two settings, so that something moves"
    live = LiveFigure(draw, figsize, dpi)
    frames = [live.render(s) for s in settings + settings[:1]]
    assert live.whole_draws == 1, f"{live.whole_draws - 1} of {len(settings)} moves drew the whole figure"
    assert frames[-1] == frames[0], "moving away and back did not give the first frame again"
    assert len(set(frames)) > 1, "no move changed the picture"
    for s, png in zip(settings, frames):
        fresh = LiveFigure(draw, figsize, dpi).render(s)
        assert np.array_equal(pixels(png), pixels(fresh)), f"the frame moved in place to {s} differs from a whole draw"
        differ = np.any(pixels(png) != pixels(static_png(draw, s, figsize, dpi)), axis=-1).mean()
        assert differ <= max_static_diff, f"at {s}, {differ:.2%} of pixels differ from the static slider's frame"
