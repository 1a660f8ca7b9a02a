"""Tests for byhand.views.adamw: AdamW's first step, with and without bias correction, against hand formulas and
against an independent loss."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.gpt import GPTConfig, gpt_forward, gpt_loss_and_grads, init_gpt_params
from byhand.optim import AdamWConfig
from byhand.toy_gpt import TOY_CONFIG, toy_batch, toy_loss_and_grads, toy_params
from byhand.views.adamw import adamw_curve, adamw_state, adamw_view, first_step
from byhand.widgets import sweep

CONFIG = GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16, tie_weights=False)
BATCH = (np.array([0, 3, 5, 2]), np.array([3, 5, 2, -1]))


def setup(seed=0):
    rng = np.random.default_rng(seed)
    params = {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_gpt_params(CONFIG, seed=seed).items()}
    _, grads, _ = gpt_loss_and_grads(params, BATCH, CONFIG)
    matrices = {n for n, a in params.items() if a.ndim == 2}
    return params, grads, AdamWConfig(lr=1e-2, weight_decay=0.01, decay=lambda n: n in matrices)


def own_loss(params):
    logits, _ = gpt_forward(params, BATCH[0], CONFIG)
    ids, targets = BATCH
    z = logits[targets >= 0]
    top = z.max(axis=1, keepdims=True)
    logZ = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
    return float(np.mean(logZ - z[np.arange(len(z)), targets[targets >= 0]]))


def test_corrected_first_step_is_lr_sign_g_plus_decay():
    params, grads, opt = setup()
    lr = 3e-3
    new = first_step(params, grads, opt, lr, bias_correction=True)
    for name, theta in params.items():
        decay = lr * 0.01 * theta if theta.ndim == 2 else 0.0
        g = grads[name]
        expected = theta - decay - lr * g / (np.abs(g) + 1e-8)  # m_hat = g, v_hat = g^2 at t = 1
        np.testing.assert_allclose(new[name], expected, rtol=0, atol=1e-15)
        big = np.abs(g) > 1e-4  # where |g| >> eps, the step is lr * sign(g)
        np.testing.assert_allclose((theta - decay - new[name])[big], lr * np.sign(g[big]), rtol=1e-3)


def test_uncorrected_step_is_larger_by_one_minus_beta1_over_root_one_minus_beta2():
    params, grads, opt = setup(1)
    lr = 1e-3
    a = first_step(params, grads, opt, lr, True)
    b = first_step(params, grads, opt, lr, False)
    name = "W_out"
    decay = lr * 0.01 * params[name]
    ratio = (params[name] - decay - b[name]) / (params[name] - decay - a[name])
    big = np.abs(grads[name]) > 1e-4
    np.testing.assert_allclose(ratio[big], 0.1 / np.sqrt(0.001), rtol=1e-3)


def test_state_measures_the_loss_independently():
    params, grads, opt = setup(2)
    s = adamw_state(params, grads, BATCH, CONFIG, opt, 1e-2)
    new = first_step(params, grads, opt, 1e-2)
    assert s.loss_before == pytest.approx(own_loss(params), abs=1e-13)
    assert s.loss_after == pytest.approx(own_loss(new), abs=1e-13)
    first_order = sum(np.sum(grads[n] * (new[n] - params[n])) for n in params)
    assert s.predicted == pytest.approx(s.loss_before + first_order, abs=1e-13)
    assert s.max_move == pytest.approx(max(np.abs(new[n] - params[n]).max() for n in params), rel=1e-12)


def test_a_small_step_lowers_the_loss_as_the_straight_line_predicts():
    params, grads, opt = setup(3)
    s = adamw_state(params, grads, BATCH, CONFIG, opt, 1e-5)
    assert s.loss_after < s.loss_before
    drop, predicted_drop = s.loss_before - s.loss_after, s.loss_before - s.predicted
    assert drop == pytest.approx(predicted_drop, rel=0.01)


def test_inputs_are_not_modified():
    params, grads, opt = setup()
    before = {k: v.copy() for k, v in params.items()}
    adamw_state(params, grads, BATCH, CONFIG, opt, 0.1, bias_correction=False)
    adamw_state(params, grads, BATCH, CONFIG, opt, 0.1)
    for k in params:
        np.testing.assert_array_equal(params[k], before[k])


def test_curve_matches_the_state_and_refuses_bad_rates():
    params, grads, opt = setup(4)
    c = adamw_curve(params, grads, BATCH, CONFIG, opt, [1e-1, 1e-3])
    np.testing.assert_array_equal(c.lrs, [1e-3, 1e-1])
    assert c.corrected[0] == pytest.approx(adamw_state(params, grads, BATCH, CONFIG, opt, 1e-3).loss_after)
    assert c.uncorrected[1] == pytest.approx(adamw_state(params, grads, BATCH, CONFIG, opt, 1e-1, False).loss_after)
    with pytest.raises(ValueError, match="at least 2 positive"):
        adamw_curve(params, grads, BATCH, CONFIG, opt, [1e-3])
    with pytest.raises(ValueError, match="lr must be"):
        first_step(params, grads, opt, -1.0)


def test_view_draws_two_labelled_panels():
    params, grads, opt = setup()
    fig = plt.figure()
    adamw_view(params, grads, BATCH, CONFIG, opt, [1e-3, 1e-2])(fig, {"log10_lr": -2.0, "bias_correction": True})
    left, right = fig.axes
    assert left.get_xscale() == "log" and left.get_xlabel() == "learning rate η"
    assert "nats" in right.get_ylabel()
    plt.close(fig)


def test_bars_carry_their_values_and_the_axes_do_not_move():
    params, grads, opt = setup()
    draw = adamw_view(params, grads, BATCH, CONFIG, opt, np.logspace(-4, 0, 9))
    limits, values = set(), []
    for setting in ({"log10_lr": -2.0, "bias_correction": True}, {"log10_lr": 0.0, "bias_correction": False}):
        fig = plt.figure(figsize=(7, 3), dpi=96)
        draw(fig, setting)
        limits.add(tuple(np.round([*fig.axes[0].get_xlim(), *fig.axes[0].get_ylim(), *fig.axes[1].get_ylim()], 12)))
        s = adamw_state(params, grads, BATCH, CONFIG, opt, 10.0 ** setting["log10_lr"], setting["bias_correction"])
        values = [t.get_text() for t in fig.axes[1].texts]
        assert values == [f"{v:.3f}".replace("-", "−") for v in (s.loss_before, s.loss_after, s.predicted)]
        from layout_check import layout_problems
        assert layout_problems(fig) == []
        plt.close(fig)
    assert len(limits) == 1  # the same frame for a small step and for a diverging one


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    # as chapter "AdamW: three steps and their moments" builds it: the toy's weights, decay on the matrices, rates 1e-4 … 1
    params = toy_params()
    _, grads, _ = toy_loss_and_grads(params)
    matrices = {n for n, a in params.items() if a.ndim == 2}
    opt = AdamWConfig(lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, decay=lambda n: n in matrices)
    draw = adamw_view(params, grads, toy_batch(), TOY_CONFIG, opt, np.logspace(-4, 0, 33))
    # the chapter's controls: log10 lr from -4 to 0 in steps of 0.25, default -2; bias correction on or off
    moves = [{"log10_lr": -2.0, "bias_correction": True},
             {"log10_lr": -4.0, "bias_correction": True},
             {"log10_lr": -1.25, "bias_correction": True},
             {"log10_lr": 0.0, "bias_correction": True},
             {"log10_lr": 0.0, "bias_correction": False},
             {"log10_lr": -4.0, "bias_correction": False},
             {"log10_lr": -2.0, "bias_correction": False}]
    frames = [-2.0, -4.0, -3.5, -3.0, -2.5, -1.5, -1.0, -0.5, 0.0]
    return draw, moves, sweep({"log10_lr": -2.0, "bias_correction": True}, "log10_lr", frames)
