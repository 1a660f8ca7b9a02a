"""Tests for byhand.views.layernorm: LN ignores a row's scale and shift until eps matters."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.layernorm import ln_state, ln_view
from byhand.widgets import sweep


X = np.random.default_rng(3).normal(size=16)
G, B = np.ones(16), np.zeros(16)


@given(st.floats(0.5, 50), st.floats(-10, 10))
def test_scale_and_shift_leave_the_output_unchanged(scale, shift):
    s = ln_state(X, G, B, 1e-5, scale, shift)
    np.testing.assert_allclose(s.y, s.y_ref, atol=1e-4)
    assert s.y.mean() == pytest.approx(0.0, abs=1e-12)


def test_a_tiny_scale_lets_eps_shrink_the_output():
    s = ln_state(X, G, B, 1e-5, 1e-3, 0.0)
    var = (1e-3 * X).var()
    np.testing.assert_allclose(s.y, (1e-3 * X - 1e-3 * X.mean()) / np.sqrt(var + 1e-5))
    assert np.abs(s.y).max() < 0.5 * np.abs(s.y_ref).max()


def test_ln_state_rejects_a_non_positive_scale():
    with pytest.raises(ValueError, match="scale must be positive"):
        ln_state(X, G, B, 1e-5, 0.0)


def test_ln_view_draws_two_panels():
    fig = plt.figure()
    ln_view(X, G, B)(fig, {"scale": 2.0, "shift": 1.0})
    assert len(fig.axes) == 2
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = ln_view(X, G, B)  # the chapter's ranges: α = 10**k for k in -3..1 (a log slider), b in -5..5
    moves = [{"scale": 1.0, "shift": 1.0}, {"scale": 10.0, "shift": 5.0},
             {"scale": 10.0, "shift": -5.0}, {"scale": 1e-3, "shift": -5.0},
             {"scale": 1e-3, "shift": 5.0}, {"scale": 10 ** -2.75, "shift": 0.0}]
    return draw, moves, sweep({"scale": 1.0, "shift": 1.0}, "scale", [1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001])


def test_the_left_panel_holds_every_setting():
    fig = plt.figure()
    ln_view(X, G, B)(fig, {"scale": 1.0, "shift": 0.0})
    lo, hi = fig.axes[0].get_ylim()
    assert lo <= 10 * X.min() - 5 and hi >= 10 * X.max() + 5  # the corners α = 10, b = ±5
    plt.close(fig)
