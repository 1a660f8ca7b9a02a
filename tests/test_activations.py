"""Tests for byhand.activations: GELU (both forms) and ReLU values, derivatives and errors."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.activations import gelu_backward, gelu_forward, relu_backward, relu_forward
from byhand.gradcheck import gradcheck

seeds = st.integers(0, 2**32 - 1)
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)
forms = st.sampled_from(["tanh", "erf"])


def test_gelu_known_values():
    # Phi(1) and Phi(-1), the standard normal CDF, from tables: 0.8413447460685429, 0.15865525393145707
    y, _ = gelu_forward(np.array([-1.0, 0.0, 1.0]), approximate="erf")
    np.testing.assert_allclose(y, [-0.15865525393145707, 0.0, 0.8413447460685429], rtol=1e-14)
    # the tanh form written out with scalar math, one entry at a time
    xs = [-2.5, -1.0, 0.0, 0.3, 4.0]
    oracle = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in xs]
    np.testing.assert_allclose(gelu_forward(np.array(xs))[0], oracle, rtol=1e-14, atol=1e-16)


def test_gelu_tanh_and_erf_close_but_not_equal():
    x = np.linspace(-5.0, 5.0, 2001)
    y_tanh, _ = gelu_forward(x, approximate="tanh")
    y_erf, _ = gelu_forward(x, approximate="erf")
    diff = np.abs(y_tanh - y_erf).max()
    assert diff < 1e-3
    assert diff > 1e-5  # an approximation, not the same function
    # their derivatives are close too
    dx_tanh = gelu_backward(np.ones_like(x), gelu_forward(x, "tanh")[1])
    dx_erf = gelu_backward(np.ones_like(x), gelu_forward(x, "erf")[1])
    assert 1e-5 < np.abs(dx_tanh - dx_erf).max() < 1e-2


@given(form=forms)
def test_gelu_limits_and_slope_at_zero(form):
    x = np.array([-30.0, 30.0])
    y, _ = gelu_forward(x, approximate=form)
    np.testing.assert_allclose(y, [0.0, 30.0], atol=1e-12)  # GELU -> 0 on the left, -> x on the right
    dx = gelu_backward(np.ones(1), gelu_forward(np.zeros(1), approximate=form)[1])
    assert dx[0] == pytest.approx(0.5, rel=1e-15)  # GELU'(0) = Phi(0) = 1/2 in both forms


@given(seed=seeds, shape=shapes, form=forms)
def test_gelu_backward_matches_finite_differences(seed, shape, form):
    rng = np.random.default_rng(seed)
    x, dy = 2.5 * rng.standard_normal(shape), rng.standard_normal(shape)
    _, cache = gelu_forward(x, approximate=form)
    dx = gelu_backward(dy, cache)
    report = gradcheck(lambda p: np.sum(dy * gelu_forward(p["x"], approximate=form)[0]), {"x": x}, {"x": dx})
    assert report.passed, "\n" + report.to_markdown()


def test_relu_values_and_gradient_is_zero_where_x_not_positive():
    x = np.array([[-2.0, -0.0, 0.0, 1e-300, 3.0]])
    y, cache = relu_forward(x)
    np.testing.assert_array_equal(y, [[0.0, 0.0, 0.0, 1e-300, 3.0]])
    assert not np.any(np.signbit(y))
    dy = np.array([[5.0, -6.0, 7.0, 8.0, -9.0]])
    dx = relu_backward(dy, cache)
    np.testing.assert_array_equal(dx, [[0.0, 0.0, 0.0, 8.0, -9.0]])
    assert not np.any(np.signbit(dx[x <= 0]))


@given(seed=seeds, shape=shapes)
def test_relu_backward_matches_finite_differences_away_from_the_kink(seed, shape):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape)
    x = np.sign(z) * (0.01 + np.abs(z))  # |x| >= 0.01, so a step of 1e-6 never crosses 0
    x = np.where(x == 0, 0.5, x)
    dy = rng.standard_normal(shape)
    dx = relu_backward(dy, relu_forward(x)[1])
    np.testing.assert_array_equal(dx[x < 0], 0.0)
    report = gradcheck(lambda p: np.sum(dy * relu_forward(p["x"])[0]), {"x": x}, {"x": dx})
    assert report.passed, "\n" + report.to_markdown()


@given(form=forms)
def test_float32_stays_float32(form):
    x = np.array([[-1.5, 0.2, 3.0]], dtype=np.float32)
    y, cache = gelu_forward(x, approximate=form)
    assert y.dtype == np.float32
    assert gelu_backward(np.ones_like(y), cache).dtype == np.float32
    y, cache = relu_forward(x)
    assert y.dtype == np.float32
    assert relu_backward(np.ones_like(y), cache).dtype == np.float32


def test_errors():
    with pytest.raises(ValueError, match="unknown GELU form 'none'"):
        gelu_forward(np.zeros(2), approximate="none")
    with pytest.raises(ValueError, match="x contains NaN or inf"):
        gelu_forward(np.array([np.inf]))
    with pytest.raises(ValueError, match="x contains NaN or inf"):
        relu_forward(np.array([np.nan]))
    with pytest.raises(ValueError, match=r"dy must have shape \(2,\)"):
        gelu_backward(np.zeros(3), gelu_forward(np.zeros(2))[1])
    with pytest.raises(ValueError, match=r"dy must have shape \(2,\)"):
        relu_backward(np.zeros((2, 1)), relu_forward(np.zeros(2))[1])
