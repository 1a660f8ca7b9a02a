"""Tests for byhand.views.heads: per-head terms add up to merge(O) W_o + b_o."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.mha import merge_heads
from byhand.views.heads import head_state, heads_view
from byhand.widgets import sweep


rng = np.random.default_rng(2)
O, W_o, b_o = rng.normal(size=(2, 5, 8)), rng.normal(size=(16, 16)), rng.normal(size=16)


@pytest.mark.parametrize("t", range(5))
def test_factor_one_is_concat_times_W_o(t):
    s = head_state(O, W_o, b_o, t, 1.0)
    np.testing.assert_allclose(s.out, merge_heads(O)[t] @ W_o + b_o)
    np.testing.assert_allclose(s.terms[1], O[1, t] @ W_o[8:])


def test_factor_zero_switches_the_last_head_off():
    s = head_state(O, W_o, b_o, 3, 0.0)
    np.testing.assert_allclose(s.out, O[0, 3] @ W_o[:8] + b_o)
    s2 = head_state(O, W_o, b_o, 3, 0.5)
    np.testing.assert_allclose(s2.terms[1], 0.5 * O[1, 3] @ W_o[8:])


def test_head_state_rejects_bad_input():
    with pytest.raises(ValueError, match="outside 0..4"):
        head_state(O, W_o, b_o, 5)
    with pytest.raises(ValueError, match="W_o must have 16 rows"):
        head_state(O, W_o[:8], b_o)


def test_heads_view_draws_a_labelled_panel():
    fig = plt.figure()
    heads_view(O, W_o, b_o)(fig, {"factor": 0.0})
    assert "head 1 times 0.00" in fig.axes[0].get_title()  # heads count from 0
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "head 0" in labels and "head 1 × factor" in labels
    plt.close(fig)


def readout(factor):
    """A stand-in for the chapter's P of the right word: any smooth function of the factor."""
    return 0.03 - 0.01 * factor + 0.002 * factor**2


def test_readout_panel_draws_the_callers_number_at_the_factor():
    fig = plt.figure(figsize=(7, 3))
    draw = heads_view(O, W_o, b_o, t=3, readout=readout, readout_label="P(right) at 3")
    draw(fig, {"factor": 0.5})
    assert len(fig.axes) == 2 and "head 1 times 0.50" in fig.axes[0].get_title()
    assert fig.axes[1].get_title(loc="right") == f"P(right) at 3 = {readout(0.5):.4f}"
    assert f"P(right) at 3 = {readout(0.5):.4f} at this factor" in draw.describe({"factor": 0.5})
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = heads_view(O, W_o, b_o, t=3, readout=readout, readout_label="P(right) at 3")  # factor in 0..2
    moves = [{"factor": 1.0}, {"factor": 0.0}, {"factor": 2.0}, {"factor": 0.3}]
    return draw, moves, sweep({"factor": 1.0}, "factor", [1.0, 0.75, 0.5, 0.25, 0.0, 1.5, 2.0])
