"""Every view with a live widget, frame by frame: moving its artists draws what a whole draw draws, and every frame
of the chapter's static slider has a clean layout (``layout_check``).

Each ``tests/test_views_<view>.py`` gives its case as ``live_case()``: the view's ``draw``, a few settings for the
live widget's moves (the controls' ends and some points between), and the settings of the chapter's static slider.
The layout checker runs here, over the frames the static slider draws, so that a chapter's execution never pays for
it.
"""
import importlib

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from byhand.slider import DISPLAY_DPI
from layout_check import layout_problems
from live_helpers import assert_moves_in_place

VIEWS = ("adamw", "backprop", "derivatives", "dot", "embeddings", "fdstep", "gelu", "heads", "inside", "layernorm",
         "learning", "logits", "logs", "params", "qkv", "scores", "smoothing", "softmax", "warmup")
CASES = [pytest.param(view, (), id=view) for view in VIEWS]
CASES += [pytest.param("nudge", (chapter,), id=f"nudge-chapter{chapter}") for chapter in (20, 21, 22, 23)]


def case(view: str, args: tuple):
    return importlib.import_module(f"test_views_{view}").live_case(*args)


@pytest.mark.pixel
@pytest.mark.parametrize("view, args", CASES)
def test_a_move_draws_what_a_whole_draw_draws(view, args):
    draw, moves, _ = case(view, args)
    assert_moves_in_place(draw, moves)


@pytest.mark.parametrize("view, args", CASES)
def test_every_static_slider_frame_has_a_clean_layout(view, args):
    draw, _, frames = case(view, args)
    assert len(frames) >= 2
    problems = []
    for setting in frames:  # as byhand.slider draws a frame: a fresh figure of the default size
        fig = Figure(figsize=(7.0, 3.0), dpi=DISPLAY_DPI)
        FigureCanvasAgg(fig)
        draw(fig, setting)
        problems += [f"{setting}: {p}" for p in layout_problems(fig)]
    assert problems == []
