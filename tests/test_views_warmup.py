"""Tests for byhand.views.warmup: the curve is the paper's formula, peaks at the warm-up step, and sums right."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.warmup import warmup_limits, warmup_state, warmup_view
from byhand.widgets import sweep


@given(st.integers(1, 20000))
def test_curve_matches_the_formula_and_its_value_at_t(t):
    s = warmup_state(t)
    assert s.lr_t == pytest.approx(512**-0.5 * min(t**-0.5, t * 4000**-1.5), rel=1e-12)
    assert s.lr[t - 1] == pytest.approx(s.lr_t, rel=1e-12)
    assert s.travelled_t == pytest.approx(sum(512**-0.5 * min(k**-0.5, k * 4000**-1.5) for k in range(1, t + 1)),
                                          rel=1e-9)


def test_peak_is_at_the_warmup_step_and_step_one_is_tiny():
    s = warmup_state(1)
    assert int(np.argmax(s.lr)) + 1 == 4000
    assert s.lr_peak == pytest.approx((512 * 4000) ** -0.5)
    assert s.lr_1 == pytest.approx(s.lr_peak / 4000)  # linear growth: step 1 is 1/4000 of the peak
    # during warm-up the sum is the arithmetic series lr_1 * t (t + 1) / 2
    assert warmup_state(4000).travelled_t == pytest.approx(s.lr_1 * 4000 * 4001 / 2, rel=1e-12)


def test_steps_outside_the_range_are_rejected():
    with pytest.raises(ValueError, match="outside 1..20000"):
        warmup_state(0)
    with pytest.raises(ValueError, match="outside 1..100"):
        warmup_state(101, t_max=100)


def test_the_view_draws_two_labelled_panels():
    fig = plt.figure(figsize=(7, 3), dpi=96)  # the size the chapter, the widget and the static slider use
    warmup_view()(fig, {"t": 4000, "d_model": 512, "warmup": 4000})
    left, right = fig.axes
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert left.get_xlabel() == "step t" and labels[-1] == "t = 4000: η = 6.988e-04"
    from layout_check import layout_problems
    assert layout_problems(fig) == []  # 9 pt text or more, the legend off the data
    plt.close(fig)


def test_the_limits_hold_every_setting_of_the_chapter():
    (lo, hi), top = warmup_limits(20000, (64, 1024), (500, 8000))
    assert lo == pytest.approx(1024**-0.5 * 8000**-1.5)  # step 1 of the widest model with the longest warm-up
    assert hi == pytest.approx((64 * 500) ** -0.5)  # the peak of the narrowest model with the shortest warm-up
    assert top == pytest.approx(warmup_state(20000, 64, 500).travelled_t)
    draw = warmup_view()
    frames = set()
    for setting in ({"t": 1, "d_model": 512, "warmup": 4000}, {"t": 20000, "d_model": 64, "warmup": 500},
                    {"t": 7, "d_model": 1024, "warmup": 8000}):
        fig = plt.figure(figsize=(7, 3), dpi=96)
        draw(fig, setting)
        left, right = fig.axes
        frames.add((left.get_xlim(), left.get_ylim(), right.get_xlim(), right.get_ylim()))
        s = warmup_state(setting["t"], setting["d_model"], setting["warmup"])
        assert left.get_ylim()[0] < s.lr.min() and s.lr.max() < left.get_ylim()[1]
        assert 0 < right.get_ylim()[0] < s.travelled[0] and s.travelled[-1] < right.get_ylim()[1]
        assert right.get_yscale() == "log"  # the sum from about 1e-7 at step 1 to a few units
        assert left.get_xscale() == "log" and left.get_yscale() == "log"  # the ramp and the decay: two lines
        plt.close(fig)
    assert len(frames) == 1


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = warmup_view()
    # the chapter's controls: t from 1 to 20000, d_model in 64 … 1024, warmup from 500 to 8000; default (1, 512, 4000)
    moves = [{"t": 1, "d_model": 512, "warmup": 4000}, {"t": 4000, "d_model": 512, "warmup": 4000},
             {"t": 20000, "d_model": 512, "warmup": 4000},
             {"t": 20000, "d_model": 64, "warmup": 4000},
             {"t": 250, "d_model": 1024, "warmup": 500},
             {"t": 1, "d_model": 1024, "warmup": 8000}]
    frames = [1, 1000, 2000, 3000, 4000, 6000, 10000, 15000, 20000]
    return draw, moves, sweep({"t": 1, "d_model": 512, "warmup": 4000}, "t", frames)
