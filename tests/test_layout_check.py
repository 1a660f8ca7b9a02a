"""Tests for tests/layout_check.py, the figure-layout checker the view tests run over every frame."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from layout_check import MIN_FONT_PT, check_layout, layout_problems


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
