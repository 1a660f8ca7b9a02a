"""Tests for byhand.views.params: parameter counts by group against the closed form."""
import matplotlib.pyplot as plt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from layout_check import check_layout
from byhand.views.params import GROUPS, config_for, group_of, param_counts, param_state, params_view
from live_helpers import assert_moves_in_place


def closed_form(d, V=10, T=5):
    """One block, untied head, d_ff = 4d: E, P; 4 (d x d) + 4 biases; W_1, b_1, W_2, b_2; 3 layer norms; W_out."""
    return {"embeddings": V * d + T * d, "attention": 4 * (d * d + d), "feed-forward": 8 * d * d + 4 * d + d,
            "layer norms": 3 * 2 * d, "output": d * V}


@given(st.integers(1, 40))
def test_counts_match_the_closed_form(half):
    d = 2 * half
    assert param_counts(d) == closed_form(d)


def test_the_toy_has_3712_parameters_and_the_state_agrees():
    s = param_state(16)
    assert s.total == 3712 == sum(closed_form(16).values())
    assert s.totals[list(s.widths).index(16)] == 3712
    assert list(s.counts) == list(GROUPS)


def test_group_of_and_config_for_refuse_bad_input():
    assert group_of("block0.ln2.beta") == "layer norms" and group_of("ln_f.gamma") == "layer norms"
    assert group_of("block0.attn.b_o") == "attention"
    with pytest.raises(ValueError, match="no group"):
        group_of("mystery")
    with pytest.raises(ValueError, match="does not divide"):
        config_for(15)
    assert config_for(32).d_ff == 128


def test_params_view_draws_two_labelled_panels():
    fig = plt.figure()
    params_view()(fig, {"d_model": 32})
    left, right = fig.axes
    assert "parameters" in left.get_xlabel() and "d_{model}" in right.get_xlabel()
    assert "total" in left.get_title()
    plt.close(fig)


def test_the_live_widget_moves_bars_counts_point_and_title_in_place():
    draw = params_view()
    # the chapter's slider: widths 2 to 64 in steps of 2
    assert_moves_in_place(draw, [{"d_model": d} for d in (16, 2, 64, 30)])
    for d in (2, 64):
        fig = Figure(figsize=(7, 3), dpi=72)
        FigureCanvasAgg(fig)
        draw(fig, {"d_model": d})
        check_layout(fig, context=f"width {d}: ")
        left = fig.axes[0]
        assert left.get_xlim()[1] > max(param_counts(64).values()) / sum(param_counts(64).values())
