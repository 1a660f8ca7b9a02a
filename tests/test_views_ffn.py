"""Tests for byhand.views.ffn: the layer with GELU and without it, and the straight line that the one without draws."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.views import fmt
from byhand.views.ffn import ffn_both, ffn_state, ffn_view
from byhand.widgets import sweep

rng = np.random.default_rng(5)
U = rng.normal(size=16)
W_1, B_1 = rng.normal(size=(16, 64)) * 0.3, rng.normal(size=64) * 0.1
W_2, B_2 = rng.normal(size=(64, 16)) * 0.2, rng.normal(size=16) * 0.1


def gelu_tanh(x):
    """Independent oracle: GPT-2's tanh form, entry by entry with math."""
    return np.array([0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x])


@pytest.mark.parametrize("alpha", [-3.0, -0.7, 0.0, 1.0, 2.5])
def test_both_layers_match_their_formulas(alpha):
    s = ffn_state(U, W_1, B_1, W_2, B_2, alpha, j=3)
    pre = alpha * U @ W_1 + B_1
    np.testing.assert_allclose(s.out_gelu, gelu_tanh(pre) @ W_2 + B_2, atol=1e-12)
    np.testing.assert_allclose(s.out_lin, alpha * U @ (W_1 @ W_2) + (B_1 @ W_2 + B_2), atol=1e-12)  # one matrix
    assert s.n_on == int((pre > 0).sum()) and s.d_ff == 64


def test_without_gelu_each_entry_is_a_straight_line_and_with_it_is_not():
    s = ffn_state(U, W_1, B_1, W_2, B_2, 0.0, j=3)
    second = np.diff(s.curve_lin, 2)  # second differences of a straight line are 0
    assert np.abs(second).max() < 1e-12
    assert np.abs(np.diff(s.curve_gelu, 2)).max() > 1e-4  # the GELU layer bends
    assert s.curve_gelu[60] == pytest.approx(s.out_gelu[3]) and s.grid[60] == 0.0  # alpha = 0 is on the grid


def test_ffn_both_keeps_leading_axes():
    x = rng.normal(size=(3, 5, 16))
    with_g, without, pre = ffn_both(x, W_1, B_1, W_2, B_2)
    assert with_g.shape == without.shape == (3, 5, 16) and pre.shape == (3, 5, 64)


def test_ffn_state_rejects_bad_input():
    with pytest.raises(ValueError, match="outside the plotted range"):
        ffn_state(U, W_1, B_1, W_2, B_2, 3.5)
    with pytest.raises(ValueError, match="outside 0..15"):
        ffn_state(U, W_1, B_1, W_2, B_2, 1.0, j=16)
    with pytest.raises(ValueError, match="do not chain"):
        ffn_state(U, W_1[:, :32], B_1, W_2, B_2)


def test_view_draws_two_labelled_panels_and_describes_its_numbers():
    draw = ffn_view(U, W_1, B_1, W_2, B_2, j=3)
    fig = plt.figure()
    draw(fig, {"alpha": 1.0})
    assert len(fig.axes) == 2 and "f[3]" in fig.axes[0].get_ylabel()
    (legend,) = fig.legends  # one legend for both panels
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["with GELU (curve, bars)", "without GELU (line, dashes)"]
    assert [h.get_color() for h in legend.legend_handles] == ["tab:blue", "tab:orange"]
    s = ffn_state(U, W_1, B_1, W_2, B_2, 1.0, j=3)
    text = draw.describe({"alpha": 1.0})
    assert f"{fmt(s.out_gelu[3], 3)} with GELU and {fmt(s.out_lin[3], 3)} without" in text
    assert f"{s.n_on} of the 64 hidden units" in text
    columns, rows = draw.table({"alpha": 1.0})
    assert len(rows) == 16 and rows[3][1] == pytest.approx(s.out_gelu[3])
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = ffn_view(U, W_1, B_1, W_2, B_2, j=3)  # the chapter's range: alpha in -3..3
    moves = [{"alpha": 1.0}, {"alpha": -3.0}, {"alpha": 3.0}, {"alpha": 0.0}, {"alpha": -0.75}]
    return draw, moves, sweep({"alpha": 1.0}, "alpha", [1.0, 2.0, 3.0, 0.5, 0.0, -0.5, -1.0, -2.0, -3.0])
