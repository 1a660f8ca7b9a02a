"""Tests for byhand.views.embeddings: a row of x0 is a token row plus a position row; a nudged embedding moves
attention rows and nothing is mutated."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.attention import causal_mask
from byhand.layernorm import layernorm_forward
from byhand.live import LiveFigure
from layout_check import check_layout
from byhand.softmax import softmax_forward
from byhand.toy_gpt import VOCAB, toy_batch, toy_params
from byhand.views.embeddings import embed_state, embed_view, nudge_trace, swap_change, x0_row_state, x0_row_view
from byhand.widgets import sweep

from live_helpers import pixels

PARAMS = toy_params()


def attention_rows(E_row_delta, token, j):
    """Independent forward up to the attention weights (LN1, projections, scores, masked softmax)."""
    p = PARAMS
    ids, _ = toy_batch()
    E = p["E"].copy()
    E[VOCAB.index(token), j] += E_row_delta
    x = E[ids] + p["P"][: len(ids)]  # (T, 16)
    ln, _ = layernorm_forward(x, p["block0.ln1.gamma"], p["block0.ln1.beta"])
    Q = (ln @ p["block0.attn.W_q"] + p["block0.attn.b_q"]).reshape(5, 2, 8).transpose(1, 0, 2)
    K = (ln @ p["block0.attn.W_k"] + p["block0.attn.b_k"]).reshape(5, 2, 8).transpose(1, 0, 2)
    S = Q @ K.transpose(0, 2, 1) / np.sqrt(8)
    P, _ = softmax_forward(S, mask=causal_mask(5))
    return P  # (2, 5, 5)


@pytest.mark.parametrize("token, j, delta, t", [("like", 0, 0.0, 4), ("like", 3, 1.5, 4), ("I", 15, -2.0, 2)])
def test_embed_state_matches_an_independent_forward(token, j, delta, t):
    s = embed_state(PARAMS, token, j, delta, t)
    np.testing.assert_allclose(s.before, attention_rows(0.0, token, j)[:, t], atol=1e-12)
    np.testing.assert_allclose(s.after, attention_rows(delta, token, j)[:, t], atol=1e-12)
    np.testing.assert_allclose(s.after.sum(-1), 1.0)


def test_the_nudge_reaches_x0_only_where_the_token_sits_and_params_stay_untouched():
    E = PARAMS["E"].copy()
    s = embed_state(PARAMS, "like", 2, 0.7, 4)
    where = np.flatnonzero(np.abs(s.x0_change).max(-1) > 0)
    assert where.tolist() == [2]  # "like" is token 2 of <bos> I like transformers <eos>
    assert s.x0_change[2, 2] == pytest.approx(0.7)
    assert np.array_equal(PARAMS["E"], E)


def test_a_query_before_the_token_does_not_see_the_nudge():
    s = embed_state(PARAMS, "transformers", 1, 3.0, 2)  # "transformers" sits at 3, after query 2
    np.testing.assert_array_equal(s.before, s.after)


@pytest.mark.parametrize("kwargs, message", [({"token": "dog"}, "unknown token"), ({"j": 16}, "outside 0..15"),
                                             ({"t": 5}, "outside 0..4")])
def test_embed_state_rejects_bad_controls(kwargs, message):
    with pytest.raises(ValueError, match=message):
        embed_state(PARAMS, **kwargs)


def test_nudge_trace_rejects_unknown_names_and_indices():
    with pytest.raises(ValueError, match="unknown parameter"):
        nudge_trace(PARAMS, "W_x", (0,), 1.0)
    with pytest.raises(ValueError, match="outside"):
        nudge_trace(PARAMS, "E", (10, 0), 1.0)


def test_embed_view_draws_one_panel_per_head():
    fig = plt.figure()
    embed_view(PARAMS)(fig, {"j": 0, "delta": 1.0})
    assert len(fig.axes) == 3 and "head 1" in fig.axes[2].get_title()  # heads count from 0
    assert "head 0" in fig.axes[1].get_title()
    assert fig.axes[0].get_title() == "E[like, 0] += +1.00" and "E[like]" in fig.axes[0].get_xlabel()
    plt.close(fig)


def test_without_positions_a_swap_reaches_only_the_swapped_tokens():
    # causal attention sees the set of tokens at or before a query, not their order
    for i, j in [(1, 2), (2, 3), (0, 1)]:
        change = swap_change(PARAMS, i, j, positions=False)
        assert np.all(change[:min(i, j)] < 1e-12)  # before both: causal, nothing reaches them
        assert np.all(change[max(i, j) + 1:] < 1e-12)  # after both: same set of tokens, same output
        assert change[i] > 0.1 and change[j] > 0.1  # each swapped token now sees another set


def test_with_positions_a_swap_also_moves_later_tokens():
    change = swap_change(PARAMS, 1, 2)
    assert change[0] < 1e-12 and np.all(change[1:] > 0.1)


def test_swap_change_compares_each_token_with_itself():
    # an independent oracle: swap the tokens by hand and compare the rows of "like" (position 2 -> 1)
    ids, _ = toy_batch()
    swapped = ids[[0, 2, 1, 3, 4]]
    out = nudge_trace(PARAMS, "E", (0, 0), 0.0)["block0.attn.out"]
    out_swapped = nudge_trace(PARAMS, "E", (0, 0), 0.0, ids=swapped)["block0.attn.out"]
    assert swap_change(PARAMS, 1, 2)[2] == pytest.approx(np.abs(out_swapped[1] - out[2]).max())
    with pytest.raises(ValueError, match="must differ"):
        swap_change(PARAMS, 2, 2)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = x0_row_view(PARAMS)  # the chapter's widget: any token of the vocabulary at any position 0..4
    moves = [{"token": "like", "t": 2}, {"token": "like", "t": 0}, {"token": "like", "t": 4},
             {"token": "<bos>", "t": 0}, {"token": "mat", "t": 4}, {"token": "transformers", "t": 3}]
    defaults = {"token": "like", "t": 2}
    return draw, moves, sweep(defaults, "t", [2, 0, 1, 3, 4]) + sweep(defaults, "token", ["like", "I", "cat"])[1:]


@pytest.mark.parametrize("token, t", [("like", 2), ("<bos>", 0), ("mat", 4)])
def test_x0_row_state_is_token_row_plus_position_row(token, t):
    s = x0_row_state(PARAMS, token, t)
    ids, _ = toy_batch()
    E, P = PARAMS["E"], PARAMS["P"]
    np.testing.assert_array_equal(s.x_row, E[VOCAB.index(token)] + P[t])
    assert s.at_t == VOCAB[ids[t]]
    if VOCAB.index(token) == ids[t]:  # a pair of the toy sentence: its row of x0
        np.testing.assert_allclose(s.x_row, nudge_trace(PARAMS, "E", (0, 0), 0.0)["x0"][t])


def test_x0_row_state_rejects_bad_controls():
    with pytest.raises(ValueError, match="unknown token"):
        x0_row_state(PARAMS, "dog", 0)
    with pytest.raises(ValueError, match="outside 0..4"):
        x0_row_state(PARAMS, "like", 5)


def test_x0_row_view_describes_whether_the_row_is_in_the_sentence():
    draw = x0_row_view(PARAMS)
    assert "row 2 of the toy sentence's x_0" in draw.describe({"token": "like", "t": 2})
    assert "not in its x_0" in draw.describe({"token": "like", "t": 0})
    columns, rows = draw.table({"token": "like", "t": 2})
    assert len(rows) == 16 and rows[4][3] == pytest.approx(rows[4][1] + rows[4][2])


@pytest.mark.parametrize("setting", [{"token": t, "t": p} for t in VOCAB for p in (0, 4)])
def test_x0_row_view_reads_well(setting):
    fig = plt.figure(figsize=(7, 3), dpi=96)
    x0_row_view(PARAMS)(fig, setting)
    check_layout(fig)
    plt.close(fig)


@pytest.mark.pixel
def test_entry_j_shows_even_while_delta_is_0():
    live = LiveFigure(embed_view(PARAMS), (7.0, 3.0), 72)
    frames = [pixels(live.render({"j": j, "delta": 0.0})) for j in (0, 15)]
    assert not np.array_equal(*frames)  # the marked entry moved, though no attention bar did
    s0, s15 = embed_state(PARAMS, "like", 0, 0.0), embed_state(PARAMS, "like", 15, 0.0)
    np.testing.assert_array_equal(s0.after, s15.after)


@pytest.mark.parametrize("setting", [{"j": 0, "delta": -3.0}, {"j": 15, "delta": 3.0}, {"j": 9, "delta": -3.0}])
def test_the_extremes_read_well(setting):
    fig = plt.figure(figsize=(7, 3), dpi=96)
    embed_view(PARAMS)(fig, setting)
    check_layout(fig)
    plt.close(fig)
