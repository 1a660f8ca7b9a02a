"""Tests for byhand.views.learning: one gradient step of a small GPT, measured against an independent loss."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from byhand.gpt import GPTConfig, gpt_forward, gpt_loss_and_grads, init_gpt_params
from byhand.ioi import EXAMPLE, load_model
from byhand.views.learning import grad_norm2, learning_view, line_curve, step, step_state
from byhand.widgets import sweep

CONFIG = GPTConfig(vocab_size=7, context=5, d_model=8, n_heads=2, n_layers=1, d_ff=16)
IDS = np.array([0, 3, 5, 2, 4])
A = 6


def setup(seed=0):
    rng = np.random.default_rng(seed)
    params = {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_gpt_params(CONFIG, seed=seed).items()}
    targets = np.full(IDS.size, -1)
    targets[-1] = A
    loss, grads, _ = gpt_loss_and_grads(params, (IDS, targets), CONFIG)
    return params, grads, loss


def own_loss(params):
    z = gpt_forward(params, IDS, CONFIG)[0][-1]
    return float(np.log(np.exp(z - z.max()).sum()) + z.max() - z[A])


def test_step_is_theta_minus_eta_g_and_pure():
    params, grads, _ = setup()
    before = {k: v.copy() for k, v in params.items()}
    new = step(params, grads, 0.1)
    for k in params:
        np.testing.assert_array_equal(params[k], before[k])
        np.testing.assert_allclose(new[k], before[k] - 0.1 * grads[k])


def test_state_matches_independent_loss():
    params, grads, loss = setup(1)
    s = step_state(params, grads, IDS, A, CONFIG, 0.05)
    assert s.loss_before == pytest.approx(loss, rel=1e-10)
    assert s.loss_after == pytest.approx(own_loss(step(params, grads, 0.05)), rel=1e-10)
    assert s.p_after == pytest.approx(np.exp(-s.loss_after))
    g2 = sum(float((g ** 2).sum()) for g in grads.values())
    assert s.predicted == pytest.approx(loss - 0.05 * g2)


def test_small_step_follows_the_straight_line():
    params, grads, loss = setup(2)
    g2 = grad_norm2(grads)
    eta = 1e-4
    s = step_state(params, grads, IDS, A, CONFIG, eta)
    # first order: the drop is eta |g|² up to O(eta²)
    assert (s.loss_before - s.loss_after) == pytest.approx(eta * g2, rel=1e-2)
    assert s.loss_after < s.loss_before


def test_curve_starts_at_loss_and_view_draws():
    params, grads, loss = setup(3)
    c = line_curve(params, grads, IDS, A, CONFIG, [0.2, 0.0, 0.1])
    assert c.etas[0] == 0.0 and c.loss[0] == pytest.approx(loss, rel=1e-10)
    draw = learning_view(params, grads, IDS, A, CONFIG, np.linspace(0, 0.5, 6), word="w")
    fig = plt.figure()
    draw(fig, {"eta": 0.1})
    assert len(fig.axes) == 2
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings.

    Built as chapter "Learning" builds it (the Part IV model's mid checkpoint, the example prompt, "Mary"), so that
    the layout is checked on the numbers the chapter shows."""
    params, config, vocab, _ = load_model("mid")
    params = {name: w.astype(np.float64) for name, w in params.items()}
    ids = vocab.encode(EXAMPLE)
    a = int(vocab.encode(EXAMPLE + " Mary")[-1])
    targets = np.full(ids.size, -1)
    targets[-1] = a
    _, grads, _ = gpt_loss_and_grads(params, (ids, targets), config)
    draw = learning_view(params, grads, ids, a, config, np.linspace(0.0, 0.02, 81), word="Mary")
    # the chapter's slider: η from 0 to 0.02, default 0.001
    moves = [{"eta": e} for e in (0.001, 0.0, 0.02, 0.00025, 0.012)]
    return draw, moves, sweep({"eta": 0.001}, "eta", [0.001, 0.0005, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.014, 0.02])
    fig = Figure(figsize=(7, 3), dpi=72)
    draw(fig, settings[2])
    assert fig.axes[0].get_ylim()[1] >= max(own_loss(step(params, grads, e)) for e in etas)  # the curve fits


def test_no_step_is_neither_downhill_nor_overshoot():
    params, grads, _ = setup(6)
    fig = plt.figure()
    learning_view(params, grads, IDS, A, CONFIG, np.linspace(0, 0.5, 6))(fig, {"eta": 0.0})
    assert "(no step)" in fig.axes[0].get_title()
    plt.close(fig)
