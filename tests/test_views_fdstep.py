"""Tests for byhand.views.fdstep: forward and central differences of the GPT loss, and how their errors scale with h."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.gpt import GPTConfig, gpt_forward, init_gpt_params
from byhand.toy_gpt import TOY_CONFIG, toy_batch, toy_params
from byhand.views.fdstep import error_text, fd_curve, fd_state, fd_view, one_digit, round_off
from byhand.widgets import sweep

CONFIG = GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16, tie_weights=False)
BATCH = (np.array([0, 3, 5, 3]), np.array([3, 5, 3, -1]))


def setup(seed=0):
    rng = np.random.default_rng(seed)
    return {k: v + 0.3 * rng.standard_normal(v.shape) for k, v in init_gpt_params(CONFIG, seed=seed).items()}


def own_loss(params, name, index, delta):
    """Oracle: mean cross-entropy by a hand-written log-sum-exp, with one entry moved."""
    moved = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    moved[name][index] += delta
    logits, _ = gpt_forward(moved, BATCH[0], CONFIG)
    ids, targets = BATCH
    z = logits[targets >= 0]
    top = z.max(axis=1, keepdims=True)
    logZ = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
    return float(np.mean(logZ - z[np.arange(len(z)), targets[targets >= 0]]))


@pytest.mark.parametrize("name, index", [("W_out", (1, 2)), ("block0.attn.W_k", (3, 6)), ("P", (2, 0))])
def test_differences_are_the_textbook_formulas(name, index):
    params = setup()
    h = 1e-3
    s = fd_state(params, BATCH, CONFIG, name, index, h)
    up, mid, down = (own_loss(params, name, index, d) for d in (h, 0.0, -h))
    assert s.forward == pytest.approx((up - mid) / h, rel=1e-9)
    assert s.central == pytest.approx((up - down) / (2 * h), rel=1e-9)
    assert s.forward_err == pytest.approx(abs(s.forward - s.grad)) and s.central_err == abs(s.central - s.grad)


@pytest.mark.parametrize("name, index", [("W_out", (1, 2)), ("block0.ffn.W_1", (0, 5)), ("E", (3, 1))])
def test_truncation_errors_scale_like_h_and_h_squared(name, index):
    params = setup(1)
    # in the truncation regime, a 10x smaller h cuts the forward error 10x and the central error 100x
    a, b = (fd_state(params, BATCH, CONFIG, name, index, h) for h in (1e-2, 1e-3))
    assert a.forward_err / b.forward_err == pytest.approx(10.0, rel=0.15)
    assert a.central_err / b.central_err == pytest.approx(100.0, rel=0.15)


def test_the_central_difference_confirms_the_backward_at_small_h():
    params = setup(2)
    s = fd_state(params, BATCH, CONFIG, "block0.attn.W_q", (2, 3), 1e-6)
    assert s.central_err <= 1e-6 * max(abs(s.grad), 1e-3)
    assert s.central_err < s.forward_err


def test_round_off_makes_tiny_steps_worse():
    params = setup(3)
    c = fd_curve(params, BATCH, CONFIG, "W_out", (0, 0), [1e-13, 1e-6])
    assert c.central_err[0] > 100 * c.central_err[1]  # h = 1e-13: round-off dominates


def test_curve_is_sorted_and_matches_the_state():
    params = setup(4)
    c = fd_curve(params, BATCH, CONFIG, "W_out", (2, 2), [1e-2, 1e-4, 1e-3])
    np.testing.assert_array_equal(c.hs, [1e-4, 1e-3, 1e-2])
    s = fd_state(params, BATCH, CONFIG, "W_out", (2, 2), 1e-3)
    assert c.central_err[1] == pytest.approx(s.central_err, rel=1e-12, abs=1e-18)


def test_bad_steps_are_refused():
    params = setup()
    with pytest.raises(ValueError, match="positive finite"):
        fd_state(params, BATCH, CONFIG, "W_out", (0, 0), 0.0)
    with pytest.raises(ValueError, match="at least 2 positive"):
        fd_curve(params, BATCH, CONFIG, "W_out", (0, 0), [1e-3])
    with pytest.raises(ValueError, match="unknown parameter"):
        fd_state(params, BATCH, CONFIG, "W_x", (0, 0), 1e-3)


def test_view_draws_a_log_log_panel():
    params = setup()
    fig = plt.figure()
    fd_view(params, BATCH, CONFIG, "W_out", (0, 1), [1e-8, 1e-5, 1e-2])(fig, {"log10_h": -5})
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_xlabel() == "step Δ (nudge of W_out[0, 1])"
    plt.close(fig)


def test_the_predicted_best_steps_are_dashed_lines_in_the_legend_and_the_text():
    params = setup()
    fig = plt.figure()
    draw = fd_view(params, BATCH, CONFIG, "W_out", (0, 1), [1e-8, 1e-5, 1e-2], best=(2e-7, 3e-5))
    draw(fig, {"log10_h": -5})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "predicted best Δ*, forward: 2e-7" in labels and "predicted best Δ*, central: 3e-5" in labels
    assert "Δ* = 2e-7 for the forward difference and 3e-5 for the central one" in draw.describe({"log10_h": -5})
    plt.close(fig)
    with pytest.raises(ValueError, match="two positive finite steps"):
        fd_view(params, BATCH, CONFIG, "W_out", (0, 1), [1e-8, 1e-5], best=(0.0, 1e-5))


def test_the_title_shows_truncation_digits_and_bounds_rounding_noise():
    loss = 2.0
    assert round_off(1e-6, loss) == pytest.approx(np.finfo(float).eps * 2.0 / 1e-6)
    assert one_digit(3.065e-7) == "3e-7" and one_digit(1e-6) == "1e-6" and one_digit(9.7e-5) == "1e-4"
    assert error_text(3.065e-7, 1e-5, loss) == "3e-7"  # 7000 times the round-off: truncation, reproducible
    # round-off at h = 1e-6 and L = 2 is 4.44e-10: up to 10 of them print as the power of ten above 4.44e-9, up to
    # 100 as the one above 4.44e-8, and more as a digit
    assert error_text(6.956e-11, 1e-6, loss) == "< 1e-8" and error_text(4.4e-9, 1e-6, loss) == "< 1e-8"
    assert error_text(4.5e-9, 1e-6, loss) == "< 1e-7" and error_text(4.4e-8, 1e-6, loss) == "< 1e-7"
    assert error_text(4.6e-8, 1e-6, loss) == "5e-8"
    assert error_text(0.0, 1e-6, loss).startswith("< ")  # an exact zero is below any bound
    params = setup()
    fig = plt.figure()
    fd_view(params, BATCH, CONFIG, "W_out", (0, 1), [1e-8, 1e-5, 1e-2])(fig, {"log10_h": -8.0})
    title = fig.axes[0].get_title()
    assert title.startswith("Δ = 1e-8: forward error < 1e-") and "central error < 1e-" in title  # no noise digits
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    # as chapter "Checking every gradient" builds it: the toy's weights, W_out[0, 3], h over 1e-12 … 1e-1
    hs = 10.0 ** np.arange(-12.0, -0.5, 0.5)
    draw = fd_view(toy_params(), toy_batch(), TOY_CONFIG, "W_out", (0, 3), hs, best=(2e-7, 3e-5))
    # the chapter's slider: log10 h from -12 to -1 in steps of 0.5, default -6
    moves = [{"log10_h": -6.0}, {"log10_h": -12.0}, {"log10_h": -8.5}, {"log10_h": -3.0},
             {"log10_h": -1.0}]
    frames = [-6.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -5.0, -4.0, -3.0, -2.0, -1.0]
    return draw, moves, sweep({"log10_h": -6.0}, "log10_h", frames)


@pytest.mark.portable
def test_the_books_sweep_prints_the_same_text_on_any_machine():
    """Chapter "Checking every gradient" describes every step of its sweep; noise of 3 round-offs (more than any
    CPU's, which stays under 2) must not change a character, neither a bound nor a digit."""
    from byhand.toy_gpt import TOY_CONFIG, toy_batch, toy_loss_and_grads, toy_params

    params = toy_params()
    loss = toy_loss_and_grads(params)[0]
    hs = 10.0 ** np.arange(-12.0, -0.5, 0.5)
    curve = fd_curve(params, toy_batch(), TOY_CONFIG, "W_out", (0, 3), hs)
    for h, *errs in zip(curve.hs, curve.forward_err, curve.central_err):
        for err in errs:
            texts = {error_text(max(err + k * round_off(h, loss), 0.0), h, loss) for k in (-3, 0, 3)}
            assert len(texts) == 1, (h, err, texts)
