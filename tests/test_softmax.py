"""Tests for byhand.softmax: closed forms, invariants, masking, extreme logits and finite-difference gradients."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.gradcheck import gradcheck
from byhand.softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward

seeds = st.integers(0, 2**32 - 1)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def _random_mask(rng, shape, axis):
    """A random boolean mask with at least one allowed entry in every row along ``axis``."""
    mask = rng.random(shape) < 0.6
    first = np.moveaxis(mask, axis, -1)  # a view with the softmax axis last
    first[..., rng.integers(shape[axis])] = True
    return mask


def _assert_gradcheck(f, params, grads):
    report = gradcheck(f, params, grads)
    assert report.passed, "\n" + report.to_markdown()


# ---------------------------------------------------------------- values


def test_softmax_closed_form():
    # exp(log k) = k, so the probabilities are k / (1 + 2 + 3)
    p, _ = softmax_forward(np.log([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(p, [1 / 6, 2 / 6, 3 / 6], rtol=1e-15)


@given(seed=seeds, shape=shapes, data=st.data())
def test_softmax_matches_naive_formula_and_rows_sum_to_one(seed, shape, data):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    z = rng.standard_normal(shape) * 3
    p, _ = softmax_forward(z, axis=axis)
    naive = np.exp(z) / np.exp(z).sum(axis=axis, keepdims=True)  # fine for small logits
    np.testing.assert_allclose(p, naive, rtol=1e-13)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-14)
    assert np.all(p > 0)


@given(seed=seeds, shape=shapes, shift=st.floats(-1e3, 1e3))
def test_softmax_shift_invariance(seed, shape, shift):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(shape)
    row_shifts = shift * rng.random(shape[:-1] + (1,))  # a different constant per row
    np.testing.assert_allclose(softmax_forward(z + row_shifts)[0], softmax_forward(z)[0], rtol=1e-9, atol=1e-15)


def test_softmax_extreme_and_equal_logits_stay_finite():
    p, _ = softmax_forward(np.array([[1e4, -1e4, 0.0], [1e4, 1e4, -1e4], [-1e4, -1e4, -1e4], [7.0, 7.0, 7.0]]))
    assert np.all(np.isfinite(p))
    np.testing.assert_array_equal(p[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(p[1], [0.5, 0.5, 0.0])
    np.testing.assert_allclose(p[2], [1 / 3] * 3, rtol=1e-15)
    np.testing.assert_allclose(p[3], [1 / 3] * 3, rtol=1e-15)
    # p = [1, 0, 0] is saturated, so the gradient p (dp - p.dp) is exactly zero
    _, cache = softmax_forward(np.array([1e4, -1e4, 0.0]))
    np.testing.assert_array_equal(softmax_backward(np.array([1.0, 2.0, 3.0]), cache), [0.0, 0.0, 0.0])


def test_softmax_keeps_float32():
    z = np.array([[0.1, 0.2, -0.3]], dtype=np.float32)
    p, cache = softmax_forward(z, mask=np.array([True, False, True]))
    assert p.dtype == np.float32
    assert softmax_backward(np.ones_like(p), cache).dtype == np.float32
    logp, cache = log_softmax_forward(z)
    assert logp.dtype == np.float32
    assert log_softmax_backward(np.ones_like(logp), cache).dtype == np.float32


# ---------------------------------------------------------------- masking


def test_masked_entries_get_exactly_zero_probability_and_gradient():
    z = np.array([[2.0, 1.0, 5.0, 0.5], [0.0, 3.0, -1.0, 100.0]])
    mask = np.array([[True, True, False, True], [True, False, True, False]])
    p, cache = softmax_forward(z, mask=mask)
    assert np.all(p[~mask] == 0.0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-15)
    # allowed entries: the softmax of the allowed logits alone (an independent oracle)
    row0 = np.exp([2.0, 1.0, 0.5]) / np.exp([2.0, 1.0, 0.5]).sum()
    np.testing.assert_allclose(p[0, mask[0]], row0, rtol=1e-14)
    np.testing.assert_allclose(p[1, mask[1]], [1 / (1 + np.exp(-1.0)), np.exp(-1.0) / (1 + np.exp(-1.0))], rtol=1e-14)
    dp = np.array([[1.0, -2.0, 3.0, 4.0], [-5.0, 6.0, 7.0, -8.0]])
    dz = softmax_backward(dp, cache)
    assert np.all(dz[~mask] == 0.0)
    assert not np.any(np.signbit(dz[~mask]))  # +0.0, not -0.0, so a printed table shows "0"


def test_causal_mask_broadcasts_over_batch_and_heads():
    rng = np.random.default_rng(0)
    B, h, T = 2, 3, 4
    z = rng.standard_normal((B, h, T, T))
    causal = np.tril(np.ones((T, T), dtype=bool))
    p, _ = softmax_forward(z, mask=causal)
    assert p.shape == (B, h, T, T)
    assert np.all(p[..., ~causal] == 0.0)
    np.testing.assert_allclose(p[..., 0, 0], 1.0)  # the first token can only see itself
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-14)


def test_mask_errors():
    with pytest.raises(ValueError, match="mask must be a boolean array"):
        softmax_forward(np.zeros((2, 2)), mask=np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"mask of shape \(3,\) does not broadcast to z of shape \(2, 2\)"):
        softmax_forward(np.zeros((2, 2)), mask=np.ones(3, dtype=bool))


# ---------------------------------------------------------------- gradients


@given(seed=seeds, shape=shapes, data=st.data(), masked=st.booleans())
def test_softmax_backward_matches_finite_differences(seed, shape, data, masked):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    z = rng.standard_normal(shape)
    mask = _random_mask(rng, shape, axis) if masked else None
    dp = rng.standard_normal(shape)
    p, cache = softmax_forward(z, axis=axis, mask=mask)
    dz = softmax_backward(dp, cache)
    _assert_gradcheck(lambda q: np.sum(dp * softmax_forward(q["z"], axis=axis, mask=mask)[0]), {"z": z}, {"z": dz})


@given(seed=seeds, n=st.integers(1, 5))
def test_softmax_backward_equals_explicit_jacobian(seed, n):
    rng = np.random.default_rng(seed)
    z, dp = rng.standard_normal(n), rng.standard_normal(n)
    p, cache = softmax_forward(z)
    J = np.diag(p) - np.outer(p, p)  # dp_i/dz_j, symmetric
    np.testing.assert_allclose(softmax_backward(dp, cache), dp @ J, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- log-softmax


@given(seed=seeds, shape=shapes, data=st.data())
def test_log_softmax_equals_log_of_softmax(seed, shape, data):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    z = rng.standard_normal(shape) * 4
    logp, _ = log_softmax_forward(z, axis=axis)
    np.testing.assert_allclose(logp, np.log(softmax_forward(z, axis=axis)[0]), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.exp(logp).sum(axis=axis), 1.0, rtol=1e-13)


def test_log_softmax_is_finite_where_softmax_underflows():
    z = np.array([0.0, -1000.0, 1e4, -1e4])
    logp, _ = log_softmax_forward(z)
    with np.errstate(divide="ignore"):
        naive = np.log(softmax_forward(z)[0])
    assert np.isneginf(naive[1]) and np.isneginf(naive[3])  # the naive route loses these entries
    assert np.all(np.isfinite(logp))
    # closed form: logp_i = z_i - logsumexp(z), and logsumexp(z) = 1e4 up to exp(-1e4)
    np.testing.assert_allclose(logp, z - 1e4, rtol=1e-15)


@given(seed=seeds, shape=shapes, data=st.data())
def test_log_softmax_backward_matches_finite_differences(seed, shape, data):
    rng = np.random.default_rng(seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    z, dlogp = rng.standard_normal(shape), rng.standard_normal(shape)
    logp, cache = log_softmax_forward(z, axis=axis)
    dz = log_softmax_backward(dlogp, cache)
    _assert_gradcheck(lambda q: np.sum(dlogp * log_softmax_forward(q["z"], axis=axis)[0]), {"z": z}, {"z": dz})
