"""Tests for byhand.views.scores: a nudged score scales its odds by e^delta; masked scores change nothing."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.attention import causal_mask
from byhand.views.scores import score_state, scores_view
from byhand.widgets import sweep


S = np.random.default_rng(1).normal(size=(5, 5))
MASK = causal_mask(5)


@given(st.integers(1, 4), st.data(), st.floats(-4, 4))
def test_odds_against_every_other_key_grow_by_e_delta(t, data, delta):
    s_key = data.draw(st.integers(0, t))
    st_ = score_state(S, MASK, t, s_key, delta)
    assert st_.after.sum() == pytest.approx(1.0)
    assert np.all(st_.after[t + 1:] == 0.0)
    for u in range(t + 1):
        if u != s_key:
            ratio = (st_.after[s_key] / st_.after[u]) / (st_.before[s_key] / st_.before[u])
            assert ratio == pytest.approx(np.exp(delta), rel=1e-9)


def test_the_row_before_is_the_masked_softmax_by_hand():
    st_ = score_state(S, MASK, 2, 0, 0.0)
    e = np.exp(S[2, :3])
    np.testing.assert_allclose(st_.before[:3], e / e.sum())


def test_nudging_a_masked_score_changes_nothing():
    st_ = score_state(S, MASK, 1, 3, 5.0)
    np.testing.assert_array_equal(st_.before, st_.after)


def test_score_state_rejects_bad_input():
    with pytest.raises(ValueError, match="must be in 0..4"):
        score_state(S, MASK, 5, 0)
    with pytest.raises(ValueError, match="mask must have the shape"):
        score_state(S, MASK[:4], 1, 0)


def test_scores_view_draws_two_panels():
    fig = plt.figure()
    scores_view(S, MASK, 3)(fig, {"s": 1, "delta": 1.0})
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "attention weight"
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = scores_view(S, MASK, 3, labels=["a", "b", "c", "d", "e"])  # the chapter's ranges: s in 0..4, delta in -4..4
    moves = [{"s": 1, "delta": 0.0}, {"s": 0, "delta": -4.0}, {"s": 3, "delta": 4.0},
             {"s": 4, "delta": 0.0}, {"s": 4, "delta": -4.0}, {"s": 2, "delta": 1.5}]
    return draw, moves, sweep({"s": 1, "delta": 0.0}, "delta", [0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0])


def test_a_nudged_masked_key_is_marked():
    fig = plt.figure()
    scores_view(S, MASK, 3)(fig, {"s": 4, "delta": 2.0})  # key 4 is masked for query 3
    red = [line for line in fig.axes[0].get_lines() if line.get_color() == "tab:red"]
    assert len(red) == 1 and red[0].get_visible() and list(red[0].get_xdata()) == [4]
    plt.close(fig)
