"""Tests for byhand.views.logits: the loss change of a nudged logit against (p - y)/N and the softmax by hand."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.logits import logit_state, logits_view
from byhand.widgets import sweep


Z = np.random.default_rng(4).normal(size=(5, 10))
TARGETS = np.array([2, 3, 4, 1, -1])


def mean_loss(z):
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -np.mean([logp[t, TARGETS[t]] for t in range(4)])


@given(st.integers(0, 3), st.integers(0, 9))
def test_the_slope_is_a_central_difference(t, v):
    s = logit_state(Z, TARGETS, t, v, 0.0)
    h = 1e-5
    zp, zm = Z.copy(), Z.copy()
    zp[t, v] += h
    zm[t, v] -= h
    assert s.slope == pytest.approx((mean_loss(zp) - mean_loss(zm)) / (2 * h), abs=1e-9)


@given(st.integers(0, 3), st.integers(0, 9), st.floats(-3, 3))
def test_probabilities_and_loss_after_the_nudge(t, v, delta):
    s = logit_state(Z, TARGETS, t, v, delta)
    z = Z.copy()
    z[t, v] += delta
    np.testing.assert_allclose(s.p_after, np.exp(z[t]) / np.exp(z[t]).sum())
    assert s.loss_after == pytest.approx(mean_loss(z))
    assert s.loss_before == pytest.approx(mean_loss(Z))


def test_the_ignored_position_does_not_move_the_loss():
    s = logit_state(Z, TARGETS, 4, 0, 2.0)
    assert s.loss_after == pytest.approx(s.loss_before) and s.slope == 0.0


def test_logit_state_rejects_bad_positions():
    with pytest.raises(ValueError, match="t = 5"):
        logit_state(Z, TARGETS, 5, 0)


def test_logits_view_draws_two_panels():
    fig = plt.figure()
    logits_view(Z, TARGETS, [f"w{k}" for k in range(10)])(fig, {"v": 2, "delta": 1.0})
    assert len(fig.axes) == 2 and fig.axes[0].get_ylabel() == "probability"
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = logits_view(Z, TARGETS, [f"w{k}" for k in range(10)], t=0)  # chapter: v in 0..9, delta in -3..5
    moves = [{"v": 2, "delta": 0.0}, {"v": 0, "delta": -3.0}, {"v": 9, "delta": 5.0},
             {"v": 2, "delta": 5.0}, {"v": 2, "delta": -3.0}, {"v": 5, "delta": 0.0}]
    return draw, moves, sweep({"v": 2, "delta": 0.0}, "delta", [0.0, 0.5, 1.0, 2.0, 3.0, 5.0, -1.0, -2.0, -3.0])
