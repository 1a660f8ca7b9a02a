"""Tests for byhand.layernorm: normalised rows, finite-difference gradients, the explicit Jacobian, eps = 0."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.gradcheck import gradcheck, numerical_grads
from byhand.layernorm import layernorm_backward, layernorm_forward, layernorm_jacobian

seeds = st.integers(0, 2**32 - 1)
lead = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
widths = st.integers(2, 6)


@given(seed=seeds, lead_shape=lead, D=widths, scale=st.floats(0.01, 100.0), offset=st.floats(-50, 50))
def test_rows_have_mean_zero_and_variance_one(seed, lead_shape, D, scale, offset):
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.standard_normal(lead_shape + (D,))
    y, _ = layernorm_forward(x, np.ones(D), np.zeros(D), eps=0.0)
    # round-off in x - mean grows with |offset| / scale (offset 50 on scale 0.01 loses about 4 digits)
    atol = 1e-13 * (1 + abs(offset) / scale)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=atol)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-12 * (1 + abs(offset) / scale))
    # with eps > 0 the variance is var / (var + eps) exactly
    y, _ = layernorm_forward(x, np.ones(D), np.zeros(D), eps=0.5)
    var = x.var(axis=-1)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + 0.5), rtol=1e-12)


@given(seed=seeds, lead_shape=lead, D=widths)
def test_affine_output_matches_independent_formula(seed, lead_shape, D):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(lead_shape + (D,))
    gamma, beta = rng.standard_normal(D), rng.standard_normal(D)
    y, _ = layernorm_forward(x, gamma, beta, eps=1e-5)
    oracle = gamma * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) + beta
    np.testing.assert_allclose(y, oracle, rtol=1e-12, atol=1e-13)


@given(seed=seeds, lead_shape=lead, D=widths, eps=st.sampled_from([0.0, 1e-5, 0.3]))
def test_backward_matches_finite_differences(seed, lead_shape, D, eps):
    rng = np.random.default_rng(seed)
    params = {
        "x": rng.standard_normal(lead_shape + (D,)),
        "gamma": rng.standard_normal(D),
        "beta": rng.standard_normal(D),
    }
    dy = rng.standard_normal(lead_shape + (D,))
    _, cache = layernorm_forward(params["x"], params["gamma"], params["beta"], eps=eps)
    dx, dgamma, dbeta = layernorm_backward(dy, cache)

    def f(p):
        return np.sum(dy * layernorm_forward(p["x"], p["gamma"], p["beta"], eps=eps)[0])

    report = gradcheck(f, params, {"x": dx, "gamma": dgamma, "beta": dbeta})
    assert report.passed, "\n" + report.to_markdown()


@given(seed=seeds, D=st.integers(1, 6), eps=st.sampled_from([1e-5, 0.3]))
def test_jacobian_agrees_with_backward_and_finite_differences(seed, D, eps):
    rng = np.random.default_rng(seed)
    x, gamma, beta, dy = (rng.standard_normal(D) for _ in range(4))
    J = layernorm_jacobian(x, gamma, eps)
    assert J.shape == (D, D)
    _, cache = layernorm_forward(x, gamma, beta, eps=eps)
    dx, _, _ = layernorm_backward(dy, cache)
    np.testing.assert_allclose(dy @ J, dx, rtol=1e-10, atol=1e-12)
    # each row i of J is the gradient of y_i, by central differences
    for i in range(D):
        g = numerical_grads(lambda p: layernorm_forward(p["x"], gamma, beta, eps=eps)[0][i], {"x": x})["x"]
        np.testing.assert_allclose(J[i], g, rtol=1e-6, atol=1e-8)
    # adding a constant to the row changes nothing, so every row of J sums to 0
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-10 * max(1.0, np.abs(J).max()))


def test_jacobian_closed_form_for_two_entries():
    # with eps = 0 any two distinct entries normalise to [1, -1] (or [-1, 1]), so y cannot move: J = 0
    J = layernorm_jacobian(np.array([2.0, -0.5]), np.array([1.0, 3.0]), eps=0.0)
    np.testing.assert_allclose(J, [[0.0, 0.0], [0.0, 0.0]], atol=1e-15)
    # x = [1, 0, -1]: var = 2/3, so J = rstd (I - 1/3 - xhat xhat^T / 3) with rstd = sqrt(3/2)
    J = layernorm_jacobian(np.array([1.0, 0.0, -1.0]), np.ones(3), eps=0.0)
    rstd = 1 / np.sqrt(2 / 3)
    xhat = np.array([1.0, 0.0, -1.0]) * rstd
    np.testing.assert_allclose(J, rstd * (np.eye(3) - 1 / 3 - np.outer(xhat, xhat) / 3), rtol=1e-14)


def test_eps_zero_works_on_non_constant_row_and_raises_on_constant_row():
    x = np.array([[1.0, 2.0, 4.0], [-3.0, 0.0, 3.0]])
    y, cache = layernorm_forward(x, np.ones(3), np.zeros(3), eps=0.0)
    np.testing.assert_allclose(y[1], np.array([-1.0, 0.0, 1.0]) * np.sqrt(3 / 2), rtol=1e-14)
    assert np.all(np.isfinite(layernorm_backward(np.ones_like(x), cache)[0]))
    for c in (0.0, 0.1, 0.7, 3.14159):  # some of these leave a rounding residue of ~1e-34 in the variance
        for D in (1, 3, 7):
            bad = np.vstack([np.arange(D, dtype=float), np.full(D, c)])
            with pytest.raises(ValueError, match="zero variance and eps = 0"):
                layernorm_forward(bad, np.ones(D), np.zeros(D), eps=0.0)
            with pytest.raises(ValueError, match="zero variance and eps = 0"):
                layernorm_jacobian(np.full(D, c), np.ones(D), eps=0.0)
    # with eps > 0 a constant row is fine and maps to beta
    y, _ = layernorm_forward(np.full((1, 3), 0.1), np.ones(3), np.array([1.0, 2.0, 3.0]), eps=1e-5)
    np.testing.assert_allclose(y, [[1.0, 2.0, 3.0]], atol=1e-10)


def test_float32_stays_float32():
    x = np.array([[0.5, -1.0, 2.0]], dtype=np.float32)
    g = np.ones(3, dtype=np.float32)
    y, cache = layernorm_forward(x, g, np.zeros(3, dtype=np.float32))
    assert y.dtype == np.float32
    assert all(a.dtype == np.float32 for a in layernorm_backward(np.ones_like(y), cache))
    assert layernorm_jacobian(x[0], g).dtype == np.float32
