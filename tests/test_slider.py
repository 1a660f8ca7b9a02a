"""Tests for byhand.slider and byhand.widgets: the static slider is the widget's view, frame for frame."""
import io
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image

from byhand.slider import player_html, render_png, static_slider
from byhand.widgets import interactive_view, sweep


def draw_line(fig, setting):
    ax = fig.add_subplot()
    x = np.linspace(0.0, 1.0, 20)
    ax.plot(x, setting["slope"] * x)
    ax.set_ylim(-3, 3)
    fig.subplots_adjust(left=0.2, bottom=0.2)


def label(setting):
    return f"slope = {setting['slope']:.1f}"


def test_static_slider_has_one_labelled_frame_per_setting_default_first():
    defaults = {"slope": 1.0}
    settings = sweep(defaults, "slope", [1.0, -2.0, 0.0, 2.5])
    sl = static_slider(draw_line, settings, label, figsize=(3, 2), dpi=50, scale=2)
    assert len(sl.frames) == 4
    assert sl.labels == ("slope = 1.0", "slope = -2.0", "slope = 0.0", "slope = 2.5")
    assert sl.settings[0] == defaults
    for setting, frame in zip(sl.settings, sl.frames):  # frame k is the view at setting k
        assert frame == render_png(draw_line, setting, (3, 2), 100)
    assert len(set(sl.frames)) == 4  # different settings give different pictures
    assert "font-awesome" not in sl.html and "https://" not in sl.html  # nothing fetched from a CDN
    assert sl.html.count("data:image/png;base64,") == 4
    assert sl.nbytes < 100_000


def test_frames_are_rendered_at_twice_the_size_they_are_shown_at():
    sl = static_slider(draw_line, sweep({"slope": 1.0}, "slope", [1.0, 2.0]), label, figsize=(3, 2), dpi=96, scale=2)
    with Image.open(io.BytesIO(sl.frames[0])) as im:
        assert im.size == (576, 384)  # 2 × (3 in × 96 px, 2 in × 96 px)
        assert not im.info.get("Software")  # no matplotlib version in the file
    assert re.search(r'<img class="byhand-slider-img" id="bhs-\w+-img" src="data:image/png;base64,[^"]+" '
                     r'width="288" height="192"', sl.html)  # shown at 96 CSS px per inch; frame 0 with no script


def test_the_caption_line_and_the_text_alternative_follow_each_frame():
    def describe(s):
        return f"A line of slope {s['slope']:.1f} through the origin"

    sl = static_slider(draw_line, sweep({"slope": 1.0}, "slope", [1.0, -2.0]), label, figsize=(3, 2), dpi=50,
                       describe=describe, name="Slope")
    assert sl.alts == ("A line of slope 1.0 through the origin", "A line of slope -2.0 through the origin")
    uid = re.search(r'id="bhs-(\w+)"', sl.html).group(1)
    assert sl.html.index(f'id="bhs-{uid}-label"') < sl.html.index(f'id="bhs-{uid}-img"')  # the line is above
    assert '>slope = 1.0</p>' in sl.html  # frame 0's label before any script runs
    assert 'alt="A line of slope 1.0 through the origin"' in sl.html
    assert 'aria-label="Slope"' in sl.html and 'aria-valuetext="slope = 1.0: A line of slope 1.0' in sl.html
    data = re.search(r'<script type="application/json" class="byhand-slider-data">(.*?)</script>', sl.html).group(1)
    import json
    parsed = json.loads(data)
    assert parsed["labels"] == ["slope = 1.0", "slope = -2.0"] and parsed["alts"] == list(sl.alts)
    assert parsed["frames"][0] == "" and parsed["frames"][1].startswith("data:image/png;base64,")  # frame 0 once


def test_the_player_ids_come_from_its_content():
    settings = sweep({"slope": 1.0}, "slope", [1.0, 2.0])
    one = static_slider(draw_line, settings, label, figsize=(3, 2), dpi=50)
    two = static_slider(draw_line, settings, label, figsize=(3, 2), dpi=50)
    other = static_slider(draw_line, sweep({"slope": 1.0}, "slope", [1.0, 3.0]), label, figsize=(3, 2), dpi=50)
    assert one.html == two.html  # re-running a chapter gives the same bytes
    ids = {re.search(r'id="bhs-(\w+)"', s.html).group(1) for s in (one, other)}
    assert len(ids) == 2  # another slider on the same page gets other ids


def test_a_player_needs_a_label_and_a_description_for_every_frame():
    with pytest.raises(ValueError, match="one label and one description each"):
        player_html([b"x", b"y"], ["a"], ["a", "b"], 10, 10)


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




def test_without_a_description_the_setting_is_said_once():
    sl = static_slider(draw_line, sweep({"slope": 1.0}, "slope", [1.0, -2.0]), label, figsize=(3, 2), dpi=50)
    assert 'aria-valuetext="slope = 1.0"' in sl.html and "slope = 1.0: slope = 1.0" not in sl.html


def test_a_view_made_with_make_view_describes_every_frame_by_itself():
    from byhand.views import make_view

    def draw_state(fig, slope):
        draw_line(fig, {"slope": slope})

    draw = make_view(lambda s: s["slope"], draw_state, describe=lambda slope: f"A line that climbs {slope:.1f} per unit.")
    sl = static_slider(draw, sweep({"slope": 1.0}, "slope", [1.0, 0.5, -2.0]), label, figsize=(3, 2), dpi=50)
    assert sl.alts == ("A line that climbs 1.0 per unit.", "A line that climbs 0.5 per unit.",
                       "A line that climbs -2.0 per unit.")
    assert 'alt="A line that climbs 1.0 per unit."' in sl.html
    assert 'aria-valuetext="slope = 1.0: A line that climbs 1.0 per unit."' in sl.html  # the setting, then its number
    given = static_slider(draw, sweep({"slope": 1.0}, "slope", [1.0, 2.0]), label, figsize=(3, 2), dpi=50,
                          describe=lambda s: "given")
    assert given.alts == ("given", "given")  # a describe passed in wins over the view's own
