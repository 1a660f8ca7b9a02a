"""Tests for byhand.views.warmup_start: the first steps of training for a warm-up length and an optimizer, against
hand-written steps on a tiny quadratic loss."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.optim import AdamConfig, warmup_lr
from byhand.views.warmup_start import start_run, warmup_start_view

TARGET = {"a": np.array([1.0, -2.0, 0.5]), "b": np.array([[0.3, 0.0]])}  # b[0, 1] has no gradient at the start
START = {"a": np.zeros(3), "b": np.array([[0.0, 0.0]])}
CFG = AdamConfig(lr=1.0, beta1=0.9, beta2=0.98, eps=1e-9)


def quadratic(params):
    """0.5 |θ − target|², its (unused) second output, and its gradient θ − target."""
    grads = {n: params[n] - TARGET[n] for n in params}
    return 0.5 * sum(float((g**2).sum()) for g in grads.values()), None, grads


def test_gradient_descent_is_theta_minus_lr_g():
    run = start_run(quadratic, START, CFG, 16, 4, "gradient descent", 3)
    theta = {n: v.copy() for n, v in START.items()}
    for t in range(1, 4):
        lr = 16**-0.5 * min(t**-0.5, t * 4**-1.5)
        assert run.lr[t - 1] == pytest.approx(lr, rel=1e-12)
        new = {n: theta[n] - lr * (theta[n] - TARGET[n]) for n in theta}
        moves = np.concatenate([np.abs(new[n] - theta[n]).ravel() for n in theta])
        assert run.move[t - 1] == pytest.approx(np.median(moves), rel=1e-12)
        theta = new
        assert run.loss[t] == pytest.approx(quadratic(theta)[0], rel=1e-12)


def test_adam_moves_every_weight_with_a_gradient_by_lr_at_step_one():
    run = start_run(quadratic, START, CFG, 16, 4, "Adam", 2)
    # five entries: four with a gradient move by lr_1 (to within eps), one (b[0, 1]) stays: the median is lr_1
    assert run.move[0] == pytest.approx(warmup_lr(1, 16, 4), rel=1e-6)
    assert run.loss[1] < run.loss[0]


def test_inputs_are_not_modified_and_bad_settings_are_rejected():
    start = {n: v.copy() for n, v in START.items()}
    start_run(quadratic, start, CFG, 16, 4, "Adam", 2)
    assert all(np.array_equal(start[n], START[n]) for n in START)
    with pytest.raises(ValueError, match="optimizer"):
        start_run(quadratic, START, CFG, 16, 4, "SGD", 2)
    with pytest.raises(ValueError, match="at least 1"):
        start_run(quadratic, START, CFG, 16, 0, "Adam", 2)


def test_the_view_draws_every_setting_and_describes_it():
    draw, runs = warmup_start_view(quadratic, START, CFG, 16, (4, 1), 5, 4)
    assert set(runs) == {(4, "Adam"), (1, "Adam"), (4, "gradient descent"), (1, "gradient descent")}
    fig = plt.figure(figsize=(7, 3), dpi=96)
    update = draw(fig, {"warmup": 4, "optimizer": "Adam"})
    update({"warmup": 1, "optimizer": "gradient descent"})
    text = draw.describe({"warmup": 1, "optimizer": "gradient descent"})
    assert "gradient descent with warm-up 1" in text
    columns, rows = draw.table({"warmup": 1, "optimizer": "gradient descent"})
    assert columns[0] == "step t" and [r[0] for r in rows] == ["1", "2", "5"]
    from layout_check import layout_problems
    assert layout_problems(fig) == []
    plt.close(fig)
    with pytest.raises(ValueError, match="reference"):
        warmup_start_view(quadratic, START, CFG, 16, (1, 2), 2, 4)


def live_case():
    """For tests/view_cases.py: the chapter's view on the Part III toy (20 steps, not the chapter's 80, to keep the
    test short), the live widget's moves, and the chapter's static-slider settings."""
    from byhand import toy_2017 as toy
    from byhand.widgets import sweep

    warmups = (4000, 1, 20, 80, 320)
    draw, _ = warmup_start_view(toy.loss_and_grads, toy.toy_params(), toy.adam_2017(), 512, warmups, 20, 4000)
    defaults = {"warmup": 4000, "optimizer": "Adam"}
    moves = [defaults, {"warmup": 1, "optimizer": "Adam"}, {"warmup": 20, "optimizer": "gradient descent"},
             {"warmup": 320, "optimizer": "gradient descent"}]
    frames = sweep(defaults, "warmup", warmups) + sweep({**defaults, "optimizer": "gradient descent"}, "warmup", warmups)
    return draw, moves, frames
