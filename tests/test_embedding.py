"""Tests for byhand.embedding: lookup, scatter-add backward, learned positions, sinusoidal positions."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.embedding import (
    embedding_backward,
    embedding_forward,
    positions_backward,
    positions_forward,
    sinusoidal_divisors,
    sinusoidal_positions,
)
from byhand.gradcheck import gradcheck

seeds = st.integers(0, 2**32 - 1)
lead = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


# ---------------------------------------------------------------- token embeddings


@given(seed=seeds, lead_shape=lead, T=st.integers(1, 4), V=st.integers(1, 5), d=st.integers(1, 3))
def test_embedding_forward_is_row_lookup(seed, lead_shape, T, V, d):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((V, d))
    ids = rng.integers(0, V, size=lead_shape + (T,))
    x, _ = embedding_forward(ids, E)
    assert x.shape == lead_shape + (T, d)
    for index in np.ndindex(ids.shape):  # one token at a time, the slow obvious way
        np.testing.assert_array_equal(x[index], E[ids[index]])


@given(seed=seeds, lead_shape=lead, T=st.integers(1, 4), V=st.integers(1, 5), d=st.integers(1, 3))
def test_embedding_backward_matches_finite_differences(seed, lead_shape, T, V, d):
    rng = np.random.default_rng(seed)
    E = rng.standard_normal((V, d))
    ids = rng.integers(0, V, size=lead_shape + (T,))
    dx = rng.standard_normal(lead_shape + (T, d))
    dE = embedding_backward(dx, embedding_forward(ids, E)[1])
    report = gradcheck(lambda p: np.sum(dx * embedding_forward(ids, p["E"])[0]), {"E": E}, {"E": dE})
    assert report.passed, "\n" + report.to_markdown()


def test_repeated_tokens_accumulate_and_unused_rows_stay_zero():
    V, d = 7, 3
    ids = np.array([[2, 5, 2, 2], [0, 5, 2, 6]])
    E = np.arange(V * d, dtype=float).reshape(V, d)
    dE = embedding_backward(np.ones((2, 4, d)), embedding_forward(ids, E)[1])
    counts = np.bincount(ids.ravel(), minlength=V)  # [1, 0, 4, 0, 0, 2, 1]
    np.testing.assert_array_equal(dE, counts[:, None] * np.ones((V, d)))
    assert np.all(dE[[1, 3, 4]] == 0.0)
    # with distinct upstream rows, a repeated token gets their sum
    dx = np.arange(2 * 4 * d, dtype=float).reshape(2, 4, d)
    dE = embedding_backward(dx, embedding_forward(ids, E)[1])
    np.testing.assert_array_equal(dE[2], dx[0, 0] + dx[0, 2] + dx[0, 3] + dx[1, 2])
    np.testing.assert_array_equal(dE[5], dx[0, 1] + dx[1, 1])


def test_embedding_dtype_and_copy():
    E = np.ones((3, 2), dtype=np.float32)
    x, cache = embedding_forward(np.array([0, 1]), E)
    assert x.dtype == np.float32
    assert embedding_backward(np.ones_like(x), cache).dtype == np.float32
    x[0, 0] = 5.0
    assert E[0, 0] == 1.0  # the lookup is a copy


def test_embedding_errors():
    E = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"ids has token id 4 outside the vocabulary \[0, 4\)"):
        embedding_forward(np.array([1, 4]), E)
    with pytest.raises(ValueError, match="ids has token id -1 outside the vocabulary"):
        embedding_forward(np.array([-1]), E)
    with pytest.raises(ValueError, match="ids must be integer token ids"):
        embedding_forward(np.array([1.0]), E)
    with pytest.raises(ValueError, match="ids is an empty sequence"):
        embedding_forward(np.zeros((2, 0), dtype=int), E)
    with pytest.raises(ValueError, match="E must have 2 dimensions"):
        embedding_forward(np.array([0]), np.zeros(4))
    with pytest.raises(ValueError, match="E contains NaN or inf"):
        embedding_forward(np.array([0]), np.full((2, 2), np.nan))
    _, cache = embedding_forward(np.array([[0, 1, 2]]), E)
    with pytest.raises(ValueError, match=r"dx must have shape \(1, 3, 2\)"):
        embedding_backward(np.zeros((3, 2)), cache)


# ---------------------------------------------------------------- learned positions


@given(seed=seeds, lead_shape=lead, T_max=st.integers(1, 5), d=st.integers(1, 3), data=st.data())
def test_positions_forward_and_backward(seed, lead_shape, T_max, d, data):
    T = data.draw(st.integers(1, T_max))
    rng = np.random.default_rng(seed)
    P = rng.standard_normal((T_max, d))
    pos, cache = positions_forward(T, P)
    np.testing.assert_array_equal(pos, P[:T])
    dout = rng.standard_normal(lead_shape + (T, d))  # gradient of x + pos, with batch axes in front
    dP = positions_backward(dout, cache)
    assert dP.shape == (T_max, d)
    assert np.all(dP[T:] == 0.0)

    def f(p):
        pos_b = np.broadcast_to(positions_forward(T, p["P"])[0], lead_shape + (T, d))
        return np.sum(dout * pos_b)

    report = gradcheck(f, {"P": P}, {"P": dP})
    assert report.passed, "\n" + report.to_markdown()


def test_positions_is_a_copy():
    P = np.zeros((3, 2))
    pos, _ = positions_forward(2, P)
    pos += 1.0
    assert np.all(P == 0.0)


def test_positions_errors():
    P = np.zeros((4, 2))
    with pytest.raises(ValueError, match="T = 5 tokens is longer than the T_max = 4 learned positions"):
        positions_forward(5, P)
    for T in (0, -1):
        with pytest.raises(ValueError, match="at least one token"):
            positions_forward(T, P)
    with pytest.raises(ValueError, match="T must be an integer"):
        positions_forward(2.0, P)
    with pytest.raises(ValueError, match="P must have 2 dimensions"):
        positions_forward(1, np.zeros(4))
    _, cache = positions_forward(3, P)
    with pytest.raises(ValueError, match=r"dpos must have shape \(\.\.\., 3, 2\)"):
        positions_backward(np.zeros((2, 4, 2)), cache)


# ---------------------------------------------------------------- sinusoidal positions


def test_sinusoidal_divisors_closed_form():
    np.testing.assert_allclose(sinusoidal_divisors(4), [1.0, 100.0], rtol=1e-15)
    np.testing.assert_allclose(sinusoidal_divisors(8), [1.0, 10.0, 100.0, 1000.0], rtol=1e-14)
    np.testing.assert_allclose(sinusoidal_divisors(6, base=64.0), [1.0, 4.0, 16.0], rtol=1e-15)
    d = 512
    div = sinusoidal_divisors(d)
    assert div.shape == (d // 2,)
    np.testing.assert_allclose(div, [10000.0 ** (2 * i / d) for i in range(d // 2)], rtol=1e-14)


def test_sinusoidal_positions_values():
    PE = sinusoidal_positions(5, 4)
    assert PE.shape == (5, 4)
    np.testing.assert_array_equal(PE[0], [0.0, 1.0, 0.0, 1.0])  # sin 0 = 0, cos 0 = 1
    np.testing.assert_allclose(PE[1], [np.sin(1.0), np.cos(1.0), np.sin(0.01), np.cos(0.01)], rtol=1e-15)
    np.testing.assert_allclose(PE[:, 0], np.sin(np.arange(5.0)), rtol=1e-15, atol=1e-16)  # div_0 = 1
    np.testing.assert_allclose(PE[:, 3], np.cos(np.arange(5.0) / 100.0), rtol=1e-15)


@given(T=st.integers(1, 20), half=st.integers(1, 8), k=st.integers(0, 10))
def test_sinusoidal_even_odd_columns_and_rotation(T, half, k):
    d = 2 * half
    PE = sinusoidal_positions(T + k, d)
    assert PE.shape == (T + k, d)
    sin, cos = PE[:, 0::2], PE[:, 1::2]  # (T + k, d/2) each
    np.testing.assert_allclose(sin**2 + cos**2, 1.0, rtol=1e-14)
    np.testing.assert_array_equal(PE[0, 0::2], 0.0)
    np.testing.assert_array_equal(PE[0, 1::2], 1.0)
    # moving k positions along rotates each (sin, cos) pair by the angle k / div_i
    b = k / sinusoidal_divisors(d)  # (d/2,)
    np.testing.assert_allclose(sin[k:], sin[:T] * np.cos(b) + cos[:T] * np.sin(b), atol=1e-12)
    np.testing.assert_allclose(cos[k:], cos[:T] * np.cos(b) - sin[:T] * np.sin(b), atol=1e-12)
