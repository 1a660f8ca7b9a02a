"""Tests for byhand.optim against closed forms worked out by hand (no values copied from the code under test)."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from byhand.optim import (
    AdamConfig,
    AdamWConfig,
    OptState,
    SGDConfig,
    adam_step,
    adamw_step,
    clip_grad_norm,
    cosine_lr,
    init_state,
    sgd_step,
    warmup_lr,
)


def _params():
    return {"W": np.array([[0.5, -1.0], [2.0, 0.25]]), "b": np.array([0.1, -0.3])}


def _grads():
    return {"W": np.array([[0.2, -0.4], [-3.0, 1.5]]), "b": np.array([-0.7, 0.05])}


# ---------------------------------------------------------------- SGD


def test_sgd_plain_step_is_theta_minus_lr_g():
    params, grads = _params(), _grads()
    new, state, info = sgd_step(params, grads, init_state(params), SGDConfig(lr=0.1))
    for k in params:
        np.testing.assert_allclose(new[k], params[k] - 0.1 * grads[k], rtol=0, atol=1e-15)
    assert state.t == 1


def test_sgd_momentum_two_steps_with_constant_gradient():
    # b1 = g, b2 = mu*g + g, so theta2 = theta0 - lr*g - lr*(1 + mu)*g = theta0 - lr*(2 + mu)*g
    params, grads = _params(), _grads()
    cfg = SGDConfig(lr=0.1, momentum=0.9)
    p1, s1, _ = sgd_step(params, grads, init_state(params), cfg)
    p2, s2, info = sgd_step(p1, grads, s1, cfg)
    for k in params:
        np.testing.assert_allclose(p2[k], params[k] - 0.1 * 2.9 * grads[k], rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(info[k]["b"], 1.9 * grads[k], rtol=1e-14)


def test_sgd_weight_decay_is_added_to_the_gradient():
    params, grads = _params(), _grads()
    new, _, _ = sgd_step(params, grads, init_state(params), SGDConfig(lr=0.1, weight_decay=0.01))
    for k in params:
        np.testing.assert_allclose(new[k], params[k] - 0.1 * (grads[k] + 0.01 * params[k]), atol=1e-15)


# ---------------------------------------------------------------- Adam and AdamW


@pytest.mark.parametrize(
    "step, cfg", [(adam_step, AdamConfig(lr=0.01)), (adamw_step, AdamWConfig(lr=0.01, weight_decay=0.0))]
)
def test_first_step_is_lr_times_sign_of_g(step, cfg):
    # m_hat = g and v_hat = g^2 at t = 1, so the step is lr * g / (|g| + eps) ~ lr * sign(g) when |g| >> eps
    params, grads = _params(), _grads()
    new, _, _ = step(params, grads, init_state(params), cfg)
    for k in params:
        # the gap lr * eps / (|g| + eps) is largest for the smallest |g| = 0.05; allow twice that
        np.testing.assert_allclose(new[k], params[k] - 0.01 * np.sign(grads[k]), rtol=0, atol=2 * 0.01 * 1e-8 / 0.05)


def test_bias_correction_at_t1_gives_m_hat_g_and_v_hat_g_squared():
    params, grads = _params(), _grads()
    _, _, info = adam_step(params, grads, init_state(params), AdamConfig(lr=0.01, beta1=0.8, beta2=0.99))
    for k in params:
        # m = (1 - beta1) g = 0.2 g, v = (1 - beta2) g^2 = 0.01 g^2; dividing by 1 - beta^1 recovers g and g^2
        np.testing.assert_allclose(info[k]["m"], 0.2 * grads[k], rtol=1e-14)
        np.testing.assert_allclose(info[k]["v"], 0.01 * grads[k] ** 2, rtol=1e-12)
        np.testing.assert_allclose(info[k]["m_hat"], grads[k], rtol=1e-14)
        np.testing.assert_allclose(info[k]["v_hat"], grads[k] ** 2, rtol=1e-12)


def test_without_bias_correction_the_first_step_is_1_minus_beta1_over_sqrt_1_minus_beta2_times_larger():
    params, grads = _params(), _grads()
    cfg = AdamWConfig(lr=0.01, beta1=0.8, beta2=0.99, eps=1e-15, weight_decay=0.0, bias_correction=False)
    new, _, info = adamw_step(params, grads, init_state(params), cfg)
    for k in params:
        np.testing.assert_allclose(info[k]["m_hat"], 0.2 * grads[k], rtol=1e-14)  # m as it is: (1 - beta1) g
        # -lr (1 - beta1) g / sqrt((1 - beta2) g^2) = -lr 0.2 / 0.1 sign(g): twice the corrected step
        np.testing.assert_allclose(new[k], params[k] - 0.01 * 2.0 * np.sign(grads[k]), rtol=1e-12)


def test_adam_constant_gradient_steps_lr_sign_g_every_step_and_t_counts_1_2_3():
    # with a constant g, m_hat = g and v_hat = g^2 at every t (bias correction is exact), so each step is lr*sign(g)
    params, grads = _params(), _grads()
    cfg = AdamConfig(lr=0.01)
    state = init_state(params)
    assert state.t == 0
    p = params
    for expected_t in (1, 2, 3):
        p, state, info = adam_step(p, grads, state, cfg)
        assert state.t == expected_t
        for k in params:
            np.testing.assert_allclose(info[k]["m_hat"], grads[k], rtol=1e-12)
            np.testing.assert_allclose(p[k], params[k] - expected_t * 0.01 * np.sign(grads[k]), atol=1e-9)


def test_adam_coupled_weight_decay_enters_the_gradient():
    params, grads = _params(), _grads()
    lam = 0.5
    new, _, _ = adam_step(params, grads, init_state(params), AdamConfig(lr=0.01, weight_decay=lam))
    for k in params:
        g_eff = grads[k] + lam * params[k]  # coupled L2: step 1 is lr * sign(g + lambda*theta)
        np.testing.assert_allclose(new[k], params[k] - 0.01 * np.sign(g_eff), atol=1e-8)


def test_adamw_step1_with_decay_is_shrink_then_sign():
    params, grads = _params(), _grads()
    lr, lam = 0.01, 0.1
    new, _, info = adamw_step(params, grads, init_state(params), AdamWConfig(lr=lr, weight_decay=lam))
    for k in params:
        expected = params[k] * (1 - lr * lam) - lr * np.sign(grads[k])  # theta(1 - lr*lambda) - lr*sign(g)
        np.testing.assert_allclose(new[k], expected, rtol=0, atol=1e-8)
        np.testing.assert_allclose(info[k]["decay"], -lr * lam * params[k], rtol=1e-15)
        # decoupled: the moments see the raw gradient, not g + lambda*theta
        np.testing.assert_allclose(info[k]["m_hat"], grads[k], rtol=1e-14)


def test_adamw_decay_callable_excludes_named_params():
    params, grads = _params(), _grads()
    lr, lam = 0.01, 0.1
    cfg = AdamWConfig(lr=lr, weight_decay=lam, decay=lambda name: name != "b")
    new, _, info = adamw_step(params, grads, init_state(params), cfg)
    np.testing.assert_allclose(new["W"], params["W"] * (1 - lr * lam) - lr * np.sign(grads["W"]), atol=1e-8)
    np.testing.assert_allclose(new["b"], params["b"] - lr * np.sign(grads["b"]), atol=1e-8)
    assert np.all(info["b"]["decay"] == 0.0)


def test_lr_override_replaces_config_lr():
    params, grads = _params(), _grads()
    new, _, _ = adam_step(params, grads, init_state(params), AdamConfig(lr=0.5), lr=0.002)
    for k in params:
        np.testing.assert_allclose(new[k], params[k] - 0.002 * np.sign(grads[k]), atol=1e-9)


@pytest.mark.parametrize(
    "step, cfg",
    [(sgd_step, SGDConfig(lr=0.1, momentum=0.9, weight_decay=0.1)), (adam_step, AdamConfig(weight_decay=0.1)),
     (adamw_step, AdamWConfig())],
)
def test_steps_do_not_mutate_their_inputs(step, cfg):
    params, grads = _params(), _grads()
    state = init_state(params)
    p1, s1, _ = step(params, grads, state, cfg)  # one step so the buffers are non-zero
    copies = ({k: a.copy() for k, a in p1.items()}, {k: a.copy() for k, a in grads.items()},
              {k: a.copy() for k, a in s1.m.items()}, {k: a.copy() for k, a in s1.v.items()},
              {k: a.copy() for k, a in s1.b.items()})
    step(p1, grads, s1, cfg)
    for before, after in zip(copies, (p1, grads, s1.m, s1.v, s1.b)):
        for k in before:
            np.testing.assert_array_equal(before[k], after[k])
    assert s1.t == 1


def test_float32_stays_float32():
    params = {k: a.astype(np.float32) for k, a in _params().items()}
    grads = {k: a.astype(np.float32) for k, a in _grads().items()}
    steps = ((sgd_step, SGDConfig(lr=0.1, momentum=0.9)), (adam_step, AdamConfig()), (adamw_step, AdamWConfig()))
    for step, cfg in steps:
        new, state, _ = step(params, grads, init_state(params), cfg)
        assert all(a.dtype == np.float32 for a in new.values())
        assert all(a.dtype == np.float32 for a in state.m.values())


@given(arrays(np.float64, (3, 2), elements=st.floats(1e-3, 1e3) | st.floats(-1e3, -1e-3)))
def test_adam_first_step_size_is_lr_for_any_gradient(g):
    params = {"x": np.zeros((3, 2))}
    new, _, _ = adam_step(params, {"x": g}, init_state(params), AdamConfig(lr=0.1))
    # |step| = lr * |g| / (|g| + eps) lies within lr * eps / |g| <= 0.1 * 1e-8 / 1e-3 of lr
    np.testing.assert_allclose(np.abs(new["x"]), 0.1, rtol=0, atol=1.1e-6)


# ---------------------------------------------------------------- schedules


def test_warmup_lr_2017_numbers_by_hand():
    # d_model = 512, warmup = 4000.  512^-0.5 = 1 / 22.62741699796952 = 0.04419417382415922.
    # step 1:    min(1^-0.5, 1 * 4000^-1.5) = 4000^-1.5 = 1 / (4000 * 63.245553203367585) = 1 / 252982.21281347034
    #            lr = 0.04419417382415922 / 252982.21281347034 = 1.7469281074217108e-07
    # step 4000: both terms equal 4000^-0.5 = 1 / 63.245553203367585 = 0.015811388300841896
    #            lr = 0.04419417382415922 * 0.015811388300841896 = 6.987712429686843e-04 (= 1 / sqrt(2_048_000))
    assert warmup_lr(1, 512, 4000) == pytest.approx(1.7469281074217108e-07, rel=1e-12)
    assert warmup_lr(4000, 512, 4000) == pytest.approx(6.987712429686843e-04, rel=1e-12)
    assert warmup_lr(4000, 512, 4000) == pytest.approx(1 / math.sqrt(2_048_000), rel=1e-12)


def test_warmup_lr_peaks_at_warmup():
    d, w = 64, 50
    lrs = [warmup_lr(t, d, w) for t in range(1, 301)]
    peak = int(np.argmax(lrs)) + 1
    assert peak == w
    assert lrs[w - 1] == pytest.approx(d**-0.5 * w**-0.5, rel=1e-14)
    assert all(a < b for a, b in zip(lrs[: w - 1], lrs[1:w]))  # strictly increasing up to t = warmup
    assert all(a > b for a, b in zip(lrs[w - 1 : -1], lrs[w:]))  # strictly decreasing after


def test_cosine_lr_shape():
    lr_max, lr_min, w, total = 1e-3, 1e-4, 10, 110
    assert cosine_lr(1, lr_max, w, total, lr_min) == pytest.approx(lr_max / 10)  # linear warm-up: t / warmup
    assert cosine_lr(w, lr_max, w, total, lr_min) == pytest.approx(lr_max)
    # halfway through the decay cos(pi/2) = 0, so lr is the mean of lr_max and lr_min
    assert cosine_lr(60, lr_max, w, total, lr_min) == pytest.approx((lr_max + lr_min) / 2)
    assert cosine_lr(total, lr_max, w, total, lr_min) == pytest.approx(lr_min)
    assert cosine_lr(total + 50, lr_max, w, total, lr_min) == pytest.approx(lr_min)
    decay = [cosine_lr(t, lr_max, w, total, lr_min) for t in range(w, total + 1)]
    assert all(a > b for a, b in zip(decay, decay[1:]))


# ---------------------------------------------------------------- clipping


def test_clip_grad_norm_345():
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}  # global norm sqrt(9 + 16) = 5
    same, norm = clip_grad_norm(grads, max_norm=10.0)
    assert norm == pytest.approx(5.0, rel=1e-15)
    np.testing.assert_array_equal(same["a"], grads["a"])
    np.testing.assert_array_equal(same["b"], grads["b"])
    clipped, norm = clip_grad_norm(grads, max_norm=1.0)
    assert norm == pytest.approx(5.0, rel=1e-15)
    coef = 1.0 / (5.0 + 1e-6)  # torch's coefficient
    np.testing.assert_allclose(clipped["a"], [3.0 * coef, 0.0], rtol=1e-15)
    np.testing.assert_allclose(clipped["b"], [[4.0 * coef]], rtol=1e-15)
    new_norm = math.sqrt(clipped["a"][0] ** 2 + clipped["b"][0, 0] ** 2)
    assert new_norm == pytest.approx(1.0, abs=1e-6)
    assert grads["a"][0] == 3.0  # input untouched


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: SGDConfig(lr=-0.1), "lr"),
        (lambda: AdamConfig(lr=-1.0), "lr"),
        (lambda: AdamConfig(beta1=1.0), "beta1"),
        (lambda: AdamConfig(beta2=-0.1), "beta2"),
        (lambda: AdamWConfig(beta2=1.5), "beta2"),
        (lambda: AdamConfig(eps=0.0), "eps"),
        (lambda: AdamWConfig(eps=-1e-8), "eps"),
        (lambda: AdamWConfig(weight_decay=-0.1), "weight_decay"),
        (lambda: SGDConfig(lr=0.1, momentum=-0.5), "momentum"),
        (lambda: warmup_lr(0, 512, 4000), "t"),
        (lambda: cosine_lr(0, 1e-3, 10, 100), "t"),
        (lambda: cosine_lr(5, 1e-3, 10, 10), "total"),
        (lambda: clip_grad_norm({"a": np.array([np.nan])}, 1.0), "NaN"),
        (lambda: clip_grad_norm({"a": np.array([1.0])}, 0.0), "max_norm"),
    ],
)
def test_bad_hyperparameters_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_step_inputs_raise():
    params, grads = _params(), _grads()
    state = init_state(params)
    cfg = AdamConfig()
    with pytest.raises(ValueError, match="'b'"):
        adam_step(params, {"W": grads["W"]}, state, cfg)
    with pytest.raises(ValueError, match="'extra'"):
        adam_step(params, {**grads, "extra": np.zeros(2)}, state, cfg)
    with pytest.raises(ValueError, match="shape"):
        adam_step(params, {**grads, "b": np.zeros(3)}, state, cfg)
    with pytest.raises(ValueError, match="NaN or inf"):
        adam_step(params, {**grads, "W": np.array([[np.inf, 0.0], [0.0, 0.0]])}, state, cfg)
    with pytest.raises(ValueError, match="lr"):
        adam_step(params, grads, state, cfg, lr=-1.0)
    with pytest.raises(ValueError, match="state"):
        adam_step(params, grads, OptState(t=0, m={}, v={}, b={}), cfg)


def test_init_state_allocates_only_the_buffers_asked_for():
    params, grads = _params(), _grads()
    full = init_state(params)
    assert full.t == 0 and all(np.all(full.m[k] == 0) and full.b[k].shape == params[k].shape for k in params)
    lean = init_state(params, buffers=())
    assert lean.m == {} and lean.v == {} and lean.b == {}
    new, state, _ = sgd_step(params, grads, lean, SGDConfig(lr=0.1))  # plain SGD needs no buffer
    np.testing.assert_allclose(new["W"], params["W"] - 0.1 * grads["W"], atol=1e-15)
    new, state, _ = adam_step(params, grads, init_state(params, buffers=("m", "v")), AdamConfig(lr=0.01))
    np.testing.assert_allclose(new["b"], params["b"] - 0.01 * np.sign(grads["b"]), atol=1e-8)
    with pytest.raises(ValueError, match="state b"):
        sgd_step(params, grads, lean, SGDConfig(lr=0.1, momentum=0.9))
    with pytest.raises(ValueError, match="buffer"):
        init_state(params, buffers=("w",))
