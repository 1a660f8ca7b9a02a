"""Tests for byhand.views.backprop: the residual stream's gradients read from a real backward trace."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from byhand.gpt import GPTConfig, gpt_forward, gpt_loss_and_grads, init_gpt_params
from layout_check import check_layout
from byhand.views.backprop import backprop_view, stream_grads, stream_state
from byhand.widgets import sweep

CONFIG = GPTConfig(vocab_size=7, context=5, d_model=8, n_heads=2, n_layers=2, d_ff=16)
IDS = np.array([0, 3, 5, 2, 4])
TARGETS = np.array([-1, -1, -1, -1, 6])


def setup():
    rng = np.random.default_rng(0)
    params = {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_gpt_params(CONFIG, seed=0).items()}
    _, _, trace = gpt_loss_and_grads(params, (IDS, TARGETS), CONFIG)
    return params, trace


def test_stages_and_telescoping_sum():
    _, trace = setup()
    sg = stream_grads(trace, 2)
    assert sg.stages == ("block1.res2", "block1.res1", "block0.res2", "block0.res1", "x0")
    np.testing.assert_allclose(sg.stream[0] + sg.branch.sum(axis=0), trace["dx0"], atol=1e-14)
    np.testing.assert_allclose(sg.stream[2], sg.stream[1] + sg.branch[1])


def test_stream_gradient_matches_a_nudge_of_x0():
    params, trace = setup()
    sg = stream_grads(trace, 2)
    # nudge the position embedding at (t, k): x0[t, k] moves by the same amount
    t, k, h = 2, 3, 1e-5

    def loss(P):
        z = gpt_forward({**params, "P": P}, IDS, CONFIG)[0][-1]
        return float(np.log(np.exp(z - z.max()).sum()) + z.max() - z[6])

    Pp, Pm = params["P"].copy(), params["P"].copy()
    Pp[t, k] += h
    Pm[t, k] -= h
    assert (loss(Pp) - loss(Pm)) / (2 * h) == pytest.approx(sg.stream[-1, t, k], rel=1e-5, abs=1e-9)


def test_state_norms_and_bad_t():
    _, trace = setup()
    sg = stream_grads(trace, 2)
    st = stream_state(sg, 4)
    np.testing.assert_allclose(st.stream_norm, np.linalg.norm(sg.stream[:, 4], axis=-1))
    assert st.branch_norm.shape == (4,)
    assert stream_state(sg, 0).stream_norm[0] == 0.0  # only the last position is scored: nothing at the top of t=0
    with pytest.raises(ValueError):
        stream_state(sg, 5)


def test_draw_runs():
    _, trace = setup()
    draw = backprop_view(trace, 2, words=list("abcde"))
    fig = plt.figure()
    draw(fig, {"t": 4})
    assert len(fig.axes) == 3  # two panels and the colour bar
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings.

    The chapter's live widget is the remove-one-skip view: six links, top first, ``drop`` from 0 (every skip kept)
    to 6."""
    from byhand.views.backprop import skips_view

    rng = np.random.default_rng(3)
    top = rng.standard_normal(8)
    Js = [0.15 * rng.standard_normal((8, 8)) for _ in range(6)]
    stages = ("block2.res2", "block2.res1", "block1.res2", "block1.res1", "block0.res2", "block0.res1", "x0")
    links = [f"block {i} {kind}" for i in (2, 1, 0) for kind in ("feed-forward", "attention")]
    draw = skips_view(top, Js, stages, links)
    moves = [{"drop": k} for k in (0, 6, 1, 3, 2, 5, 4)]
    return draw, moves, sweep({"drop": 0}, "drop", range(7))  # every frame, as the chapter's player


def test_the_left_panel_holds_every_position():
    _, trace = setup()
    sg = stream_grads(trace, 2)
    draw = backprop_view(trace, 2)
    tops = set()
    for t in range(5):
        fig = Figure(figsize=(7, 3), dpi=72)
        FigureCanvasAgg(fig)
        draw(fig, {"t": t})
        tops.add(fig.axes[0].get_ylim())
        check_layout(fig, context=f"t = {t}: ")
    (ylim,) = tops
    assert ylim[1] >= max(np.linalg.norm(sg.stream, axis=-1).max(), np.linalg.norm(sg.branch, axis=-1).max())


def test_skip_figure_draws_and_describes():
    from byhand.views.backprop import describe_skips, draw_skips, table_skips

    stages = ("block1.res2", "block1.res1", "block0.res2", "block0.res1", "x0")
    w, wo = [0.5, 0.6, 0.9, 1.5, 2.0], [0.5, 0.1, 0.02, 0.004, 0.001]
    fig = Figure()
    FigureCanvasAgg(fig)
    draw_skips(fig, w, wo, stages)
    assert len(fig.axes) == 1 and len(fig.axes[0].lines) == 2
    text = describe_skips(w, wo, stages)
    assert "0.001" in text and "2,000 times shorter" in text and "b1.res2" in text
    cols, rows = table_skips(w, wo, stages)
    assert cols == ["stage", "with the skips", "no skip"] and rows[-1] == ["x0", 2.0, 0.001]
    with pytest.raises(ValueError):
        draw_skips(Figure(), w, [0.0] * 5, stages)


def test_skip_lengths_and_skips_view():
    from matplotlib.figure import Figure

    from byhand.views.backprop import skip_lengths, skips_view

    top = np.array([1.0, 0.0])
    Js = [np.eye(2), 2 * np.eye(2)]
    assert np.allclose(skip_lengths(top, Js, [True, True]), [1, 2, 6])  # (1 + 1)(1 + 2)
    assert np.allclose(skip_lengths(top, Js, [False, True]), [1, 1, 3])
    assert np.allclose(skip_lengths(top, Js, [False, False]), [1, 1, 2])
    draw = skips_view(top, Js, ("block0.res2", "block0.res1", "x0"), ["ffn", "attn"])
    for k in range(3):
        draw(Figure(), {"drop": k})
    assert "link 2 (attn) removed" in draw.describe({"drop": 2}) and draw.table({"drop": 2})[1][-1] == ["x0", 6.0, 4.0]


def test_branch_diagram_adds_the_two_paths_and_reads_well():
    from byhand.views.backprop import describe_branch, draw_branch, table_branch
    from layout_check import check_layout

    rng = np.random.default_rng(5)
    arriving, through = rng.normal(size=64), 0.3 * rng.normal(size=64)
    columns, rows = table_branch(arriving, through)
    assert rows[2][1] == pytest.approx(arriving[0] + through[0])
    assert rows[2][2] == pytest.approx(np.linalg.norm(arriving + through))
    assert "add" in describe_branch(arriving, through)
    fig = plt.figure(figsize=(7, 3), dpi=96)
    draw_branch(fig, arriving, through)
    check_layout(fig)
    plt.close(fig)
