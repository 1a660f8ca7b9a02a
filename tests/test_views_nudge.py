"""Tests for byhand.views.nudge: the loss change of one nudged weight, against an independent loss and
central finite differences; the gap to g·Δ shrinks like Δ²."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from live_helpers import assert_moves_in_place
from matplotlib.text import Annotation

from byhand.gpt import GPTConfig, gpt_forward, init_gpt_params
from byhand.toy_gpt import TOY_CONFIG, toy_batch, toy_loss_and_grads, toy_params
from byhand.views.nudge import nudge_curve, nudge_state, nudge_view, nudged_loss, signed

CONFIGS = {
    "untied": GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16, tie_weights=False),
    "tied": GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16),
}
BATCH = (np.array([0, 3, 5, 3]), np.array([3, 5, 3, -1]))  # a repeated token and an ignored last position


def setup(kind="untied", seed=0):
    config = CONFIGS[kind]
    rng = np.random.default_rng(seed)
    # O(1)-ish weights so that the loss is curved enough in every direction for the gap to show
    params = {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_gpt_params(config, seed=seed).items()}
    return params, config


def own_loss(params, config, name, index, delta):
    """The oracle: copy the params, move one entry, and take the mean cross-entropy with a hand-written
    log-sum-exp over the counted positions (no byhand loss code)."""
    moved = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    moved[name][index] += delta
    ids, targets = BATCH
    logits, _ = gpt_forward(moved, ids, config)  # (T, V)
    counted = targets >= 0
    z = logits[counted]  # (n, V)
    top = z.max(axis=1, keepdims=True)
    logZ = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))  # (n,)
    return float(np.mean(logZ - z[np.arange(len(z)), targets[counted]]))


ENTRIES = [("W_out", (2, 3)), ("E", (3, 1)), ("P", (1, 4)), ("block0.attn.W_q", (0, 5)),
           ("block0.attn.W_o", (6, 2)), ("block0.ln1.gamma", (4,)), ("block0.ffn.b_1", (9,)), ("ln_f.beta", (7,))]


@pytest.mark.parametrize("name, index", ENTRIES)
def test_actual_change_is_the_independent_loss_difference(name, index):
    params, config = setup()
    s = nudge_state(params, BATCH, config, name, index, 0.37)
    base = own_loss(params, config, name, index, 0.0)
    assert s.loss == pytest.approx(base, abs=1e-12)
    assert s.loss_nudged == pytest.approx(own_loss(params, config, name, index, 0.37), abs=1e-12)
    assert s.actual == pytest.approx(s.loss_nudged - s.loss, abs=1e-15)
    assert s.theta == params[name][index]


@pytest.mark.parametrize("kind, name, index", [("untied", n, i) for n, i in ENTRIES]
                         + [("tied", n, i) for n, i in ENTRIES if n != "W_out"])  # tied: no W_out
def test_gradient_matches_central_differences(kind, name, index):
    params, config = setup(kind)
    h = 1e-6
    numeric = (own_loss(params, config, name, index, h) - own_loss(params, config, name, index, -h)) / (2 * h)
    s = nudge_state(params, BATCH, config, name, index, 0.1)
    assert s.grad == pytest.approx(numeric, rel=1e-6, abs=1e-10)
    assert s.predicted == pytest.approx(s.grad * 0.1, rel=1e-15)


@given(st.sampled_from(ENTRIES), st.floats(-1.0, 1.0).filter(lambda d: abs(d) > 1e-3))
def test_gap_is_the_difference_of_actual_and_predicted(entry, delta):
    params, config = setup(seed=1)
    name, index = entry
    s = nudge_state(params, BATCH, config, name, index, delta)
    assert s.gap == pytest.approx(s.actual - s.predicted, abs=1e-15)
    assert s.delta == delta and s.index == index


@pytest.mark.parametrize("name, index", [("W_out", (2, 3)), ("block0.attn.W_v", (1, 1)), ("E", (5, 0))])
def test_the_gap_shrinks_like_delta_squared(name, index):
    params, config = setup(seed=2)
    # halving Δ must quarter the gap (second order), while the prediction only halves (first order)
    g1 = nudge_state(params, BATCH, config, name, index, 2e-2).gap
    g2 = nudge_state(params, BATCH, config, name, index, 1e-2).gap
    assert g1 / g2 == pytest.approx(4.0, rel=0.05)
    # and the curve's curvature c gives gap ≈ ½ c Δ² (c checked against the oracle's second difference)
    c = nudge_curve(params, BATCH, config, name, index, span=0.5, n=5).curvature
    h = 1e-3
    oracle_c = (own_loss(params, config, name, index, h) - 2 * own_loss(params, config, name, index, 0.0)
                + own_loss(params, config, name, index, -h)) / h**2
    assert c == pytest.approx(oracle_c, rel=1e-6, abs=1e-8)
    assert g2 == pytest.approx(0.5 * c * 1e-4, rel=0.05)


def test_curve_is_the_state_along_the_sweep():
    params, config = setup(seed=3)
    curve = nudge_curve(params, BATCH, config, "W_out", (0, 1), span=2.0, n=9)
    np.testing.assert_allclose(curve.deltas, np.linspace(-2.0, 2.0, 9))
    for d, a, p in zip(curve.deltas, curve.actual, curve.predicted):
        s = nudge_state(params, BATCH, config, "W_out", (0, 1), d)
        assert a == pytest.approx(s.actual, abs=1e-13) and p == pytest.approx(s.predicted, abs=1e-15)
    assert curve.actual[4] == 0.0  # Δ = 0 is the unmoved loss


def test_params_are_not_modified():
    params, config = setup()
    before = {k: v.copy() for k, v in params.items()}
    nudge_state(params, BATCH, config, "E", (3, 1), 5.0)
    nudged_loss(params, BATCH, config, "block0.ffn.W_1", (0, 0), -3.0)
    nudge_curve(params, BATCH, config, "P", (0, 0), span=1.0, n=3)
    for k in params:
        np.testing.assert_array_equal(params[k], before[k])


def test_an_integer_index_picks_a_vector_entry():
    params, config = setup()
    assert nudge_state(params, BATCH, config, "ln_f.gamma", 3, 0.2).index == (3,)


@pytest.mark.parametrize("name, index, message", [
    ("W_in", (0, 0), "unknown parameter 'W_in'"),
    ("W_out", (0,), "has 1 entries, but W_out has shape"),
    ("W_out", (8, 0), "outside W_out"),
    ("W_out", (0, -1), "outside W_out"),
    ("ln_f.gamma", (True,), "outside ln_f.gamma"),
])
def test_bad_entries_are_refused(name, index, message):
    params, config = setup()
    with pytest.raises(ValueError, match=message):
        nudge_state(params, BATCH, config, name, index, 0.1)


def test_bad_delta_span_and_points_are_refused():
    params, config = setup()
    with pytest.raises(ValueError, match="delta must be a finite"):
        nudge_state(params, BATCH, config, "W_out", (0, 0), float("nan"))
    with pytest.raises(ValueError, match="span must be positive"):
        nudge_curve(params, BATCH, config, "W_out", (0, 0), span=0.0)
    with pytest.raises(ValueError, match="at least 3 points"):
        nudge_curve(params, BATCH, config, "W_out", (0, 0), span=1.0, n=2)


def test_view_draws_two_labelled_panels():
    params, config = setup()
    draw = nudge_view(params, BATCH, config, "W_out", (2, 3), span=1.0, n=7)
    fig = plt.figure()
    draw(fig, {"delta": 0.5})
    left, right = fig.axes
    assert left.get_xlabel() == "nudge Δ of W_out[2, 3]" and "nats" in left.get_ylabel()
    assert left.get_legend().get_texts()[0].get_text().startswith("actual ΔL = ")  # the current values beside it
    assert right.get_legend().get_texts()[0].get_text().startswith("gap ΔL − g·Δ = ")
    plt.close(fig)


def test_entries_are_labelled_as_python_indexes_them():
    params, config = setup()
    fig = plt.figure()
    nudge_view(params, BATCH, config, "ln_f.gamma", 4, span=0.5, n=3)(fig, {"delta": 0.1})
    assert fig.axes[0].get_xlabel() == "nudge Δ of ln_f.gamma[4]"  # counted from 0, as params["ln_f.gamma"][4]
    plt.close(fig)


def test_the_values_sit_beside_the_legends():
    params, config = setup()
    fig = plt.figure(figsize=(7, 3), dpi=96)
    nudge_view(params, BATCH, config, "W_out", (2, 3), span=1.0, n=7)(fig, {"delta": -0.5})
    s = nudge_state(params, BATCH, config, "W_out", (2, 3), -0.5)
    values = [t.get_text() for t in fig.findobj(Annotation)]
    assert values == [signed(s.actual, 4), signed(s.predicted, 4), signed(s.gap, 5)]
    assert signed(-0.25, 4) == "−0.2500" and "-" not in "".join(values)  # a true minus, as wide as "+"
    from layout_check import layout_problems
    assert layout_problems(fig) == []  # 9 pt text or more, the values clear of the legends and of each other
    plt.close(fig)


def chapter_entries():
    """The weight each backward chapter nudges, chosen as the chapter chooses it, on the toy's own weights."""
    _, grads, _ = toy_loss_and_grads(toy_params())

    def largest(name):
        return tuple(int(i) for i in np.unravel_index(np.abs(grads[name]).argmax(), grads[name].shape))

    return {20: ("W_out", largest("W_out")), 21: ("block0.ffn.W_1", (0, 0)),
            22: ("block0.attn.W_k", largest("block0.attn.W_k")), 23: ("E", largest("E"))}


@pytest.mark.parametrize("chapter", [20, 21, 22, 23])
def test_the_live_widget_moves_markers_and_values_in_place(chapter):
    name, index = chapter_entries()[chapter]
    draw = nudge_view(toy_params(), toy_batch(), TOY_CONFIG, name, index, span=2.0)  # as each chapter builds it
    # the chapters' slider: Δ from -2 to 2 in steps of 0.05, default 0.25
    assert_moves_in_place(draw, [{"delta": 0.25}, {"delta": -2.0}, {"delta": -0.05}, {"delta": 0.0},
                                 {"delta": 1.35}, {"delta": 2.0}])
