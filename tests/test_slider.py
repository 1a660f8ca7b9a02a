"""Tests for byhand.slider and byhand.widgets: the static slider is the widget's view, frame for frame."""
import numpy as np
import pytest

from byhand.slider import render_png, static_slider
from byhand.widgets import interactive_view, sweep


def draw_line(fig, setting):
    ax = fig.add_subplot()
    x = np.linspace(0.0, 1.0, 20)
    ax.plot(x, setting["slope"] * x)
    ax.set_ylim(-3, 3)


def label(setting):
    return f"slope = {setting['slope']:.1f}"


def test_static_slider_has_one_labelled_frame_per_setting_default_first():
    defaults = {"slope": 1.0}
    settings = sweep(defaults, "slope", [1.0, -2.0, 0.0, 2.5])
    sl = static_slider(draw_line, settings, label, figsize=(3, 2), dpi=50)
    assert len(sl.frames) == 4
    assert sl.labels == ("slope = 1.0", "slope = -2.0", "slope = 0.0", "slope = 2.5")
    assert sl.settings[0] == defaults
    for setting, lab, frame in zip(sl.settings, sl.labels, sl.frames):  # frame k is the view at setting k
        assert frame == render_png(draw_line, setting, lab, (3, 2), 50)
    assert len(set(sl.frames)) == 4  # different settings give different pictures
    assert "font-awesome" not in sl.html and "https://" not in sl.html  # nothing fetched from a CDN
    assert sl.html.count("data:image/png;base64,") == 4
    assert sl.nbytes < 100_000


def test_static_slider_refuses_too_few_or_too_many_settings():
    with pytest.raises(ValueError, match="at least 2"):
        static_slider(draw_line, [{"slope": 1.0}], label)
    with pytest.raises(ValueError, match="at most 40"):
        static_slider(draw_line, [{"slope": float(s)} for s in range(41)], label)


def test_sweep_puts_the_default_first_and_keeps_other_controls():
    s = sweep({"a": 1, "b": 5}, "a", [1, 2, 3])
    assert s == [{"a": 1, "b": 5}, {"a": 2, "b": 5}, {"a": 3, "b": 5}]
    with pytest.raises(ValueError, match="must be its default"):
        sweep({"a": 1}, "a", [2, 1])
    with pytest.raises(ValueError, match="unknown control 'c'"):
        sweep({"a": 1}, "c", [1])


def test_interactive_view_redraws_from_the_controls():
    import ipywidgets as widgets  # a reader's pin, so always installed
    seen = []

    def draw(fig, setting):
        seen.append(dict(setting))
        draw_line(fig, setting)

    slider = widgets.FloatSlider(value=1.0, min=-3, max=3)
    box = interactive_view(draw, {"slope": slider}, figsize=(2, 2), dpi=30)
    slider.value = -1.5
    assert seen == [{"slope": 1.0}, {"slope": -1.5}]
    assert box.children[0].children[0] is slider
