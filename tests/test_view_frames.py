"""Every frame of each chapter's static slider has a clean layout (``layout_check``): the layout checker runs here,
over the frames the static slider draws, so that a chapter's execution never pays for it. The views and their
settings are in ``view_cases``."""
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from byhand.slider import DISPLAY_DPI
from layout_check import layout_problems
from view_cases import CASES, case


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
