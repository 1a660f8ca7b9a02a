"""Tests for byhand.slider and byhand.widgets: the static slider is the widget's view, frame for frame."""
import io
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from PIL import Image

from byhand.slider import MIN_FONT_PT, check_layout, layout_problems, render_png, static_slider
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
    assert re.search(r'<img id="_anim_img\w+" width="288" height="192"', sl.html)  # shown at 96 CSS px per inch


def test_the_caption_line_above_the_player_names_each_frame():
    sl = static_slider(draw_line, sweep({"slope": 1.0}, "slope", [1.0, -2.0]), label, figsize=(3, 2), dpi=50)
    uid = re.search(r'id="_anim_img(\w+)"', sl.html).group(1)
    caption = sl.html.index(f'id="_anim_caption{uid}"')
    assert caption < sl.html.index('<div class="animation"')  # above the player
    assert '>slope = 1.0</div>' in sl.html  # frame 0's label before any script runs
    assert '["slope = 1.0", "slope = -2.0"]' in sl.html  # every label, for the hook that follows the frame
    assert f'window["anim{uid}"]' in sl.html and "set_frame" in sl.html


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


# ---------------------------------------------------------------------------------------- layout checks
def figure(draw, figsize=(4, 3)):
    fig = plt.figure(figsize=figsize, dpi=96)
    draw(fig)
    return fig


def test_a_clean_figure_has_no_layout_problems():
    def draw(fig):
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label="rising")
        ax.set_title("a title")
        ax.set_xlabel("x")
        ax.legend(loc="upper left")
        fig.subplots_adjust(left=0.18, bottom=0.18)

    fig = figure(draw)
    assert layout_problems(fig) == []
    check_layout(fig)  # does not raise
    plt.close(fig)


def test_small_text_is_found():
    def draw(fig):
        ax = fig.add_subplot()
        ax.tick_params(labelsize=5)
        fig.subplots_adjust(left=0.18, bottom=0.18)

    fig = figure(draw)
    problems = layout_problems(fig)
    assert problems and all(f"is 5 pt, under {MIN_FONT_PT:g} pt" in p for p in problems)
    plt.close(fig)


def test_a_title_that_runs_into_a_caption_is_found():
    def draw(fig):
        ax = fig.add_subplot()
        ax.set_title("the plot's own title")
        fig.suptitle("a caption drawn on top", y=0.89)  # lands on the title
        fig.subplots_adjust(left=0.18, bottom=0.18, top=0.85)

    fig = figure(draw)
    problems = layout_problems(fig)
    assert any("overlaps" in p and "caption" in p and "title" in p for p in problems), problems
    with pytest.raises(ValueError, match="frame 3: .*overlaps"):
        check_layout(fig, context="frame 3: ")
    plt.close(fig)


def test_a_legend_over_the_data_is_found_and_moving_it_clears_it():
    def draw(loc):
        def d(fig):
            ax = fig.add_subplot()
            ax.bar(np.arange(5), [1.0, 0.9, 0.2, 0.1, 0.1], label="am")
            ax.plot(np.arange(5), [0.95, 0.9, 0.8, 0.7, 0.6], "k-", label="line")
            ax.set_ylim(0, 1.6)
            ax.legend(loc=loc)
            fig.subplots_adjust(left=0.18, bottom=0.18)
        return d

    fig = figure(draw("center left"))
    assert any(p.startswith("the legend covers") for p in layout_problems(fig))
    plt.close(fig)
    fig = figure(draw("upper right"))  # above the bars and the line: the space set_ylim left free
    assert not any(p.startswith("the legend covers") for p in layout_problems(fig)), layout_problems(fig)
    plt.close(fig)


def test_a_reference_line_under_the_legend_is_not_data():
    def draw(fig):
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 0.2], label="data")
        ax.axhline(0.9, color="gray")  # runs under the legend
        ax.set_ylim(0, 1)
        ax.legend(loc="upper left")
        fig.subplots_adjust(left=0.18, bottom=0.18)

    fig = figure(draw)
    assert layout_problems(fig) == []
    plt.close(fig)


def test_rotated_tick_labels_are_compared_as_rotated_boxes():
    words = ["When", "Mary", "and", "John", "went", "to", "the", "store"]

    def draw(fig):
        ax = fig.add_subplot()
        ax.bar(np.arange(len(words)), 1.0)
        ax.set_xticks(np.arange(len(words)), words, rotation=60, ha="right")
        ax.set_yticks([])
        fig.subplots_adjust(left=0.3, bottom=0.35)

    fig = figure(draw, figsize=(4, 3))  # room enough: the slanted words do not touch
    assert layout_problems(fig) == []
    plt.close(fig)
    fig = figure(draw, figsize=(1.2, 3))  # squeezed: they run into each other
    assert any("'Mary' overlaps 'and'" in p for p in layout_problems(fig)), layout_problems(fig)
    plt.close(fig)


def test_text_cut_off_at_the_edge_is_found():
    def draw(fig):
        ax = fig.add_subplot()
        ax.set_ylabel("a label pushed out")
        fig.subplots_adjust(left=0.0)

    fig = figure(draw)
    assert any("cut off" in p for p in layout_problems(fig))
    plt.close(fig)


def test_static_slider_refuses_a_frame_with_a_collision():
    def draw(fig, setting):
        draw_line(fig, setting)
        fig.axes[0].set_title("title")
        fig.axes[0].text(0.5, 1.0, "a caption on the title", ha="center", va="bottom", transform=fig.axes[0].transAxes)

    with pytest.raises(ValueError, match=r"static slider frame 'slope = 1.0': .*overlaps"):
        static_slider(draw, sweep({"slope": 1.0}, "slope", [1.0, 2.0]), label, figsize=(4, 3))


def test_tick_labels_beyond_a_log_axis_view_are_not_counted():
    # matplotlib keeps labels for ticks just outside the view (here 10^-15 on both axes); they are never drawn
    def draw(fig):
        ax = fig.add_subplot()
        h = np.logspace(-14, 0.4, 60)
        ax.loglog(h, 1e-11 / h + h**2)
        fig.subplots_adjust(left=0.2, bottom=0.2)

    fig = figure(draw, figsize=(3, 3))
    assert layout_problems(fig) == []
    plt.close(fig)
