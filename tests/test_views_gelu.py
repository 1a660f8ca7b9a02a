"""Tests for byhand.views.gelu: both forms against closed forms, and how close they are."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.gelu import gap_peaks, gelu_state, gelu_view
from byhand.widgets import sweep



@given(st.floats(-5, 5))
def test_both_forms_match_their_formulas(x):
    s = gelu_state(x)
    assert s.erf_at == pytest.approx(0.5 * x * (1 + math.erf(x / math.sqrt(2))), abs=1e-12)
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    assert s.tanh_at == pytest.approx(0.5 * x * (1 + math.tanh(inner)), abs=1e-12)


def test_the_forms_agree_to_a_few_ten_thousandths_on_the_grid():
    s = gelu_state(0.0)
    gap = np.abs(s.tanh - s.erf).max()
    assert 1e-5 < gap < 1e-3
    assert s.tanh_at == 0.0 == s.erf_at


def test_gelu_state_rejects_points_off_the_plot():
    with pytest.raises(ValueError, match="outside the plotted range"):
        gelu_state(5.5)


def test_gelu_view_draws_two_panels_with_samples():
    fig = plt.figure()
    gelu_view(np.array([-1.0, 0.5]))(fig, {"x": 1.0})
    assert len(fig.axes) == 2 and "GELU" in fig.axes[0].get_ylabel()
    plt.close(fig)


def test_gap_peaks_are_where_the_difference_stops_growing():
    # independent oracle: math.erf / math.tanh, and the slope of |difference| changes sign at each peak
    def gap(x):
        exact = 0.5 * x * (1 + math.erf(x / math.sqrt(2)))
        approx = 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
        return abs(approx - exact)

    x, g = gap_peaks()
    assert len(x) == 4 and np.allclose(x, -x[::-1], atol=1e-9)  # two symmetric pairs
    for xk, gk in zip(x, g):
        assert gk == pytest.approx(gap(xk), abs=1e-15)
        assert gap(xk - 1e-3) < gk and gap(xk + 1e-3) < gk
    assert np.argmax(g) in (0, 3)  # the outer pair is the largest gap
    with pytest.raises(ValueError, match="lo < hi"):
        gap_peaks(1.0, -1.0)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = gelu_view(np.linspace(-3.0, 3.0, 40))  # the chapter's range: x in -5..5
    moves = [{"x": 0.0}, {"x": -5.0}, {"x": 5.0}, {"x": -0.8}, {"x": 2.7}]
    return draw, moves, sweep({"x": 0.0}, "x", [0.0, -0.5, -1.0, -2.0, -3.0, -4.0, 0.5, 1.0, 2.0, 3.0, 4.0])
