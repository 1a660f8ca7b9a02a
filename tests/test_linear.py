"""Tests for byhand.linear: y = x W + b and the residual add, forward values, gradients, errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.gradcheck import gradcheck
from byhand.linear import linear_backward, linear_forward, residual_backward, residual_forward

seeds = st.integers(0, 2**32 - 1)
lead = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
dims = st.integers(1, 4)


@given(seed=seeds, lead_shape=lead, d_in=dims, d_out=dims, bias=st.booleans())
def test_linear_forward_row_by_row(seed, lead_shape, d_in, d_out, bias):
    rng = np.random.default_rng(seed)
    x, W = rng.standard_normal(lead_shape + (d_in,)), rng.standard_normal((d_in, d_out))
    b = rng.standard_normal(d_out) if bias else None
    y, _ = linear_forward(x, W, b)
    assert y.shape == lead_shape + (d_out,)
    for index in np.ndindex(lead_shape):  # each row on its own: y_j = sum_i x_i W_ij + b_j
        row = [sum(x[index][i] * W[i, j] for i in range(d_in)) + (b[j] if bias else 0.0) for j in range(d_out)]
        np.testing.assert_allclose(y[index], row, rtol=1e-12, atol=1e-14)


@given(seed=seeds, lead_shape=lead, d_in=dims, d_out=dims, bias=st.booleans())
def test_linear_backward_matches_finite_differences(seed, lead_shape, d_in, d_out, bias):
    rng = np.random.default_rng(seed)
    params = {"x": rng.standard_normal(lead_shape + (d_in,)), "W": rng.standard_normal((d_in, d_out))}
    if bias:
        params["b"] = rng.standard_normal(d_out)
    dy = rng.standard_normal(lead_shape + (d_out,))
    dx, dW, db = linear_backward(dy, linear_forward(params["x"], params["W"], params.get("b"))[1])
    assert (db is None) == (not bias)
    grads = {"x": dx, "W": dW} | ({"b": db} if bias else {})
    f = lambda p: np.sum(dy * linear_forward(p["x"], p["W"], p.get("b"))[0])  # noqa: E731
    report = gradcheck(f, params, grads)
    assert report.passed, "\n" + report.to_markdown()
    assert dx.shape == params["x"].shape and dW.shape == (d_in, d_out)


def test_linear_backward_closed_forms():
    # dW is the sum over rows of the outer products x_r dy_r^T; dx = dy W^T; db = sum of dy rows
    rng = np.random.default_rng(7)
    x, W, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    dy = rng.standard_normal((2, 3, 5))
    dx, dW, db = linear_backward(dy, linear_forward(x, W, b)[1])
    dW_oracle = sum(np.outer(x[i, j], dy[i, j]) for i in range(2) for j in range(3))
    np.testing.assert_allclose(dW, dW_oracle, rtol=1e-12)
    np.testing.assert_allclose(dx, np.einsum("btj,ij->bti", dy, W), rtol=1e-12)
    np.testing.assert_allclose(db, dy.sum(axis=(0, 1)), rtol=1e-12)


def test_linear_float32_stays_float32():
    x, W, b = (np.ones(s, dtype=np.float32) for s in ((2, 3), (3, 4), (4,)))
    y, cache = linear_forward(x, W, b)
    assert y.dtype == np.float32
    assert all(g.dtype == np.float32 for g in linear_backward(np.ones_like(y), cache))


def test_linear_errors():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="W must have 2 dimensions"):
        linear_forward(x, np.zeros(3))
    with pytest.raises(ValueError, match="x must have last dimension d_in = 4"):
        linear_forward(x, np.zeros((4, 5)))
    with pytest.raises(ValueError, match="b must have last dimension d_out = 5"):
        linear_forward(x, np.zeros((3, 5)), np.zeros(4))
    with pytest.raises(ValueError, match="W contains NaN or inf"):
        linear_forward(x, np.full((3, 5), np.inf))
    _, cache = linear_forward(x, np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"dy must have shape \(2, 5\)"):
        linear_backward(np.zeros((2, 3)), cache)


# ---------------------------------------------------------------- residual


@given(seed=seeds, lead_shape=lead, d=dims)
def test_residual_forward_backward(seed, lead_shape, d):
    rng = np.random.default_rng(seed)
    params = {"x": rng.standard_normal(lead_shape + (d,)), "y": rng.standard_normal(lead_shape + (d,))}
    out, cache = residual_forward(params["x"], params["y"])
    np.testing.assert_array_equal(out, params["x"] + params["y"])
    dout = rng.standard_normal(out.shape)
    dx, dy = residual_backward(dout, cache)
    np.testing.assert_array_equal(dx, dout)  # the gradient flows through the skip path unchanged
    np.testing.assert_array_equal(dy, dout)
    report = gradcheck(lambda p: np.sum(dout * residual_forward(p["x"], p["y"])[0]), params, {"x": dx, "y": dy})
    assert report.passed, "\n" + report.to_markdown()


def test_residual_gradients_are_independent_copies():
    dout = np.ones((2, 3))
    dx, dy = residual_backward(dout, residual_forward(np.zeros((2, 3)), np.zeros((2, 3)))[1])
    dx += 1.0
    assert np.all(dy == 1.0) and np.all(dout == 1.0)


def test_residual_errors():
    with pytest.raises(ValueError, match=r"residual inputs must have the same shape, got x \(2, 3\) and y \(3,\)"):
        residual_forward(np.zeros((2, 3)), np.zeros(3))
    _, cache = residual_forward(np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"dout must have shape \(3,\)"):
        residual_backward(np.zeros(4), cache)
