"""Tests for byhand.views.qkv: nudging x_t[j] moves q_t by exactly delta times row j of W_q."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.qkv import qkv_state, qkv_view
from byhand.widgets import sweep


rng = np.random.default_rng(0)
X, W, B = rng.normal(size=(5, 16)), rng.normal(size=(16, 16)), rng.normal(size=16)


@given(st.integers(0, 4), st.integers(0, 15), st.floats(-3, 3))
def test_the_change_is_delta_times_a_row_of_W_q(t, j, delta):
    s = qkv_state(X, W, B, 2, t, j, delta)
    np.testing.assert_allclose(s.before, [sum(X[t, i] * W[i, c] for i in range(16)) + B[c] for c in range(16)])
    np.testing.assert_allclose(s.after - s.before, s.predicted, atol=1e-12)
    np.testing.assert_allclose(s.predicted, delta * W[j])


@pytest.mark.parametrize("kwargs, message", [({"t": 5}, "outside 0..4"), ({"j": 16}, "outside 0..15")])
def test_qkv_state_rejects_bad_controls(kwargs, message):
    with pytest.raises(ValueError, match=message):
        qkv_state(X, W, B, 2, **kwargs)
    with pytest.raises(ValueError, match="W_q must be"):
        qkv_state(X, W[:8], B, 2)


def test_qkv_view_draws_and_leaves_x_untouched():
    x = X.copy()
    fig = plt.figure()
    qkv_view(X, W, B, 2, t=1)(fig, {"j": 3, "delta": 2.0})
    assert "q_{1}" in fig.axes[0].get_title()
    assert "0:8 head 0" in fig.axes[0].get_xlabel() and "8:16 head 1" in fig.axes[0].get_xlabel()
    assert np.array_equal(X, x)
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = qkv_view(X, W, B, 2, t=2)  # the chapter's ranges: j in 0..15, delta in -3..3
    moves = [{"j": 5, "delta": 0.0}, {"j": 0, "delta": 0.0}, {"j": 0, "delta": -3.0},
             {"j": 15, "delta": 3.0}, {"j": 9, "delta": 0.75}]
    return draw, moves, sweep({"j": 5, "delta": 0.0}, "delta", [0.0, 0.5, 1.0, 1.5, 2.0, -0.5, -1.0, -1.5, -2.0])
