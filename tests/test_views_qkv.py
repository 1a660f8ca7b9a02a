"""Tests for byhand.views.qkv: nudging x_t[j] moves q_t by exactly delta times row j of W_q; blending the keys'
weights from W_q to W_k turns one head's raw scores from symmetric to the model's own."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.qkv import qkv_state, qkv_view, tie_state, tie_view
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


WK, BK = rng.normal(size=(16, 16)), rng.normal(size=16)


@given(st.integers(0, 1), st.floats(0, 1))
def test_the_blended_scores_are_q_dot_k_with_blended_keys(head, mix):
    s = tie_state(X, W, B, WK, BK, 2, head, mix)
    cols = slice(8 * head, 8 * head + 8)
    Q = (X @ W + B)[:, cols]
    K = (X @ ((1 - mix) * W + mix * WK) + (1 - mix) * B + mix * BK)[:, cols]
    np.testing.assert_allclose(s.S, [[Q[t] @ K[u] for u in range(5)] for t in range(5)], atol=1e-9)
    np.testing.assert_allclose(s.S, (1 - mix) * Q @ Q.T + mix * Q @ (X @ WK + BK)[:, cols].T, atol=1e-9)  # linear
    assert all(s.S[t, s.favourite[t]] == s.S[t, : t + 1].max() for t in range(5))  # favourite among s <= t


def test_tied_scores_are_symmetric_with_a_non_negative_diagonal():
    s = tie_state(X, W, B, WK, BK, 2, 1, 0.0)
    assert s.asymmetry < 1e-9 and np.all(np.diag(s.S) >= 0)
    assert tie_state(X, W, B, WK, BK, 2, 1, 1.0).asymmetry > 0.1


@pytest.mark.parametrize("kwargs, message", [({"mix": 1.5}, "outside 0..1"), ({"head": 2}, "outside 0..1")])
def test_tie_state_rejects_bad_controls(kwargs, message):
    args = {"head": 0, "mix": 0.5, **kwargs}
    with pytest.raises(ValueError, match=message):
        tie_state(X, W, B, WK, BK, 2, args["head"], args["mix"])


def test_tie_view_draws_and_describes():
    fig = plt.figure()
    draw = tie_view(X, W, B, WK, BK, 2, 1)
    draw(fig, {"mix": 0.0})
    assert "symmetric" in draw.describe({"mix": 0.0}) and "symmetric" not in draw.describe({"mix": 1.0})
    assert len(draw.table({"mix": 0.5})[1]) == 5
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the chapter's widget (the keys' weights blended from W_q to W_k), its moves, the
    chapter's static-slider settings."""
    draw = tie_view(X, W, B, WK, BK, 2, 1, labels=["<bos>", "I", "like", "transformers", "<eos>"])
    moves = [{"mix": 0.0}, {"mix": 1.0}, {"mix": 0.3}, {"mix": 0.65}]
    return draw, moves, sweep({"mix": 0.0}, "mix", [0.0, 0.25, 0.5, 0.75, 1.0])
