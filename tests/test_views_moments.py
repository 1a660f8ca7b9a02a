"""Tests for byhand.views.moments: Adam's moments along a fixed gradient sequence, against closed forms and against
byhand.optim's adam_step."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.optim import AdamConfig, adam_step, init_state
from byhand.views.moments import moments_state, moments_view
from byhand.widgets import sweep

G = [0.3, -0.1, 0.25, -0.4, 0.05, 0.2]


def test_first_step_is_minus_sign_with_correction_and_the_factor_without():
    for b1, b2 in ((0.9, 0.999), (0.0, 0.9), (0.5, 0.99)):
        s = moments_state(G, b1, b2)
        assert s.m_hat[0] == pytest.approx(G[0]) and s.v_hat[0] == pytest.approx(G[0] ** 2)
        assert s.step[0] == pytest.approx(-1.0, rel=1e-6)
        assert s.step_raw[0] == pytest.approx(-(1 - b1) / np.sqrt(1 - b2), rel=1e-5)  # eps aside


def test_constant_gradient_gives_closed_forms():
    s = moments_state([0.2] * 5, 0.9, 0.99)
    t = np.arange(1, 6)
    np.testing.assert_allclose(s.m, (1 - 0.9**t) * 0.2, rtol=1e-12)
    np.testing.assert_allclose(s.v, (1 - 0.99**t) * 0.04, rtol=1e-12)
    np.testing.assert_allclose(s.step, -0.2 / (0.2 + 1e-8), rtol=1e-12)


def test_the_steps_are_adam_steps_of_byhand_optim():
    b1, b2, eps = 0.9, 0.98, 1e-8
    s = moments_state(G, b1, b2, eps)
    cfg = AdamConfig(lr=1.0, beta1=b1, beta2=b2, eps=eps)
    theta, state = {"w": np.array([0.0])}, init_state({"w": np.array([0.0])})
    for k, g in enumerate(G):
        theta, state, info = adam_step(theta, {"w": np.array([g])}, state, cfg)
        assert info["w"]["update"][0] == pytest.approx(s.step[k], rel=1e-12)
        assert info["w"]["m_hat"][0] == pytest.approx(s.m_hat[k], rel=1e-12)


def test_bad_inputs_are_rejected():
    with pytest.raises(ValueError, match="beta1"):
        moments_state(G, 1.0, 0.9)
    with pytest.raises(ValueError, match="non-empty"):
        moments_state([], 0.9, 0.9)


def test_the_view_draws_every_setting_of_the_player():
    draw = moments_view(G, (0.0, 0.9), (0.9, 0.999))
    defaults = {"beta1": 0.9, "beta2": 0.999}
    fig = plt.figure(figsize=(7, 3), dpi=96)
    update = draw(fig, defaults)
    for setting in sweep(defaults, "beta1", [0.9, 0.0]) + sweep(defaults, "beta2", [0.999, 0.9]):
        update(setting)
    assert "β₁ = 0.9 and β₂ = 0.9" in draw.describe({"beta1": 0.9, "beta2": 0.9})
    columns, rows = draw.table(defaults)
    assert len(rows) == len(G) and columns[0] == "t"
    from layout_check import layout_problems
    assert layout_problems(fig) == []
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    g = [0.1066, -0.0223, 0.1065, -0.1716, 0.0031, 0.1115, -0.2114, 0.0021, 0.111, -0.1997, 0.0005, 0.1547]
    draw = moments_view(g, (0.0, 0.5, 0.9, 0.99), (0.9, 0.99, 0.999))  # the chapter's controls (its g, to 4 digits)
    defaults = {"beta1": 0.9, "beta2": 0.999}
    moves = [defaults, {"beta1": 0.0, "beta2": 0.999}, {"beta1": 0.99, "beta2": 0.9}, {"beta1": 0.5, "beta2": 0.99}]
    frames = sweep(defaults, "beta1", [0.9, 0.0, 0.5, 0.99]) + sweep(defaults, "beta2", [0.999, 0.9, 0.99])[1:]
    return draw, moves, frames
