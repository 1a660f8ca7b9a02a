"""Tests for byhand.attention: masks, scaled dot-product attention forward and backward.

Oracles: a per-entry Python loop with math.exp (forward), central finite differences (backward),
and the seed-000 invariants (rows sum to 1, masked entries exactly 0 forward and backward, a causal
output at t does not see inputs after t).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byhand.attention import (
    attention_backward,
    attention_backward_traced,
    attention_forward,
    causal_mask,
    padding_mask,
)
from byhand.gradcheck import gradcheck


def _loop_attention(Q, K, V, allowed):
    """Oracle: one query row at a time, scalar exps, for a single (T_q, d_k) head."""
    T_q, d_k = Q.shape
    T_k = K.shape[0]
    O = np.zeros((T_q, V.shape[1]))
    for i in range(T_q):
        scores = [sum(Q[i, a] * K[j, a] for a in range(d_k)) / math.sqrt(d_k) for j in range(T_k)]
        weights = [math.exp(s) if allowed[i][j] else 0.0 for j, s in enumerate(scores)]
        total = sum(weights)
        for j in range(T_k):
            O[i] += weights[j] / total * V[j]
    return O


def test_causal_mask_values():
    expected = np.array([[True, False, False], [True, True, False], [True, True, True]])
    np.testing.assert_array_equal(causal_mask(3), expected)
    assert causal_mask(1).shape == (1, 1) and causal_mask(1)[0, 0]


def test_padding_mask_shape_and_values():
    m = padding_mask(np.array([[1, 1, 0], [1, 0, 0]]))
    assert m.shape == (2, 1, 1, 3) and m.dtype == bool
    np.testing.assert_array_equal(m[:, 0, 0, :], [[True, True, False], [True, False, False]])


@pytest.mark.parametrize(
    "valid, message",
    [
        (np.array([1, 0]), "2 dimensions"),
        (np.array([[2, 1]]), "boolean or 0/1"),
        (np.array([[False, False], [True, True]]), "no real token"),
        (np.zeros((2, 0), dtype=bool), "empty"),
    ],
)
def test_padding_mask_rejects(valid, message):
    with pytest.raises(ValueError, match=message):
        padding_mask(valid)


def test_forward_matches_loop_oracle_with_causal_mask():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    O, cache = attention_forward(Q, K, V, mask=causal_mask(4))
    allowed = [[j <= i for j in range(4)] for i in range(4)]
    np.testing.assert_allclose(O, _loop_attention(Q, K, V, allowed), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(cache["S"], Q @ K.T / math.sqrt(3), rtol=1e-13)


def test_forward_batched_heads_match_per_head_oracle_with_padding():
    rng = np.random.default_rng(1)
    B, h, T_q, T_k = 2, 2, 3, 4
    Q, K, V = rng.normal(size=(B, h, T_q, 2)), rng.normal(size=(B, h, T_k, 2)), rng.normal(size=(B, h, T_k, 3))
    valid = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=bool)
    O, cache = attention_forward(Q, K, V, mask=padding_mask(valid))
    assert O.shape == (B, h, T_q, 3) and cache["A"].shape == (B, h, T_q, T_k)
    for b in range(B):
        for j in range(h):
            allowed = [list(valid[b]) for _ in range(T_q)]
            expected = _loop_attention(Q[b, j], K[b, j], V[b, j], allowed)
            np.testing.assert_allclose(O[b, j], expected, rtol=1e-12, atol=1e-14)


def test_rows_sum_to_one_and_masked_probability_is_exactly_zero():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4))
    mask = causal_mask(5)
    _, cache = attention_forward(Q, K, V, mask=mask)
    np.testing.assert_allclose(cache["A"].sum(axis=-1), 1.0, rtol=0, atol=1e-15)
    masked = np.broadcast_to(~mask, cache["A"].shape)
    assert np.all(cache["A"][masked] == 0.0)
    assert np.all(cache["A"][~masked] > 0.0)


def test_masked_positions_get_exactly_zero_gradient():
    rng = np.random.default_rng(3)
    T = 5
    Q, K, V = rng.normal(size=(2, T, 3)), rng.normal(size=(2, T, 3)), rng.normal(size=(2, T, 3))
    mask = causal_mask(T)
    _, cache = attention_forward(Q, K, V, mask=mask)
    dO = rng.normal(size=(2, T, 3))
    _, _, _, trace = attention_backward_traced(dO, cache)
    assert np.all(trace["dS"][np.broadcast_to(~mask, trace["dS"].shape)] == 0.0)
    # a loss that reads only query row t: keys and values after t get exactly zero gradient
    t = 2
    dO_t = np.zeros_like(dO)
    dO_t[:, t] = dO[:, t]
    dQ, dK, dV = attention_backward(dO_t, cache)
    assert np.all(dK[:, t + 1:] == 0.0) and np.all(dV[:, t + 1:] == 0.0)
    assert np.all(dQ[:, :t] == 0.0) and np.all(dQ[:, t + 1:] == 0.0)
    assert np.any(dK[:, : t + 1] != 0.0) and np.any(dV[:, : t + 1] != 0.0)


def test_causal_output_at_t_ignores_inputs_after_t():
    rng = np.random.default_rng(4)
    T, t = 6, 3
    Q, K, V = rng.normal(size=(T, 2)), rng.normal(size=(T, 2)), rng.normal(size=(T, 2))
    O, _ = attention_forward(Q, K, V, mask=causal_mask(T))
    Q2, K2, V2 = Q.copy(), K.copy(), V.copy()
    for X in (Q2, K2, V2):
        X[t + 1:] = rng.normal(size=X[t + 1:].shape) * 10
    O2, _ = attention_forward(Q2, K2, V2, mask=causal_mask(T))
    np.testing.assert_array_equal(O2[: t + 1], O[: t + 1])
    assert not np.allclose(O2[t + 1:], O[t + 1:])


def _check_grads(Q, K, V, mask, seed=0):
    """Gradcheck of f = sum(O * R) for a fixed random R."""
    O, cache = attention_forward(Q, K, V, mask=mask)
    R = np.random.default_rng(seed).normal(size=O.shape)
    dQ, dK, dV = attention_backward(R, cache)

    def f(p):
        return float(np.sum(attention_forward(p["Q"], p["K"], p["V"], mask=mask)[0] * R))

    report = gradcheck(f, {"Q": Q, "K": K, "V": V}, {"Q": dQ, "K": dK, "V": dV})
    assert report.passed, report.to_markdown()


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "both"])
def test_gradcheck_batched(mask_kind):
    rng = np.random.default_rng(5)
    B, h, T, d_k = 2, 2, 4, 3
    Q, K, V = rng.normal(size=(B, h, T, d_k)), rng.normal(size=(B, h, T, d_k)), rng.normal(size=(B, h, T, 2))
    pad = padding_mask(np.array([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=bool))
    mask = {"none": None, "causal": causal_mask(T), "padding": pad, "both": causal_mask(T) & pad}[mask_kind]
    _check_grads(Q, K, V, mask)


@settings(max_examples=15)
@given(
    B=st.integers(1, 2),
    T_q=st.integers(1, 4),
    T_k=st.integers(1, 4),
    d_k=st.integers(1, 3),
    d_v=st.integers(1, 3),
    mask_kind=st.sampled_from(["none", "causal", "padding"]),
    seed=st.integers(0, 2**16),
)
def test_gradcheck_hypothesis(B, T_q, T_k, d_k, d_v, mask_kind, seed):
    rng = np.random.default_rng(seed)
    if mask_kind == "causal":
        T_k = T_q
        mask = causal_mask(T_q)
    elif mask_kind == "padding":
        valid = rng.random((B, T_k)) < 0.6
        valid[:, 0] = True  # at least one real key per sequence
        mask = valid[:, None, :]  # (B, 1, T_k) for scores (B, T_q, T_k)
    else:
        mask = None
    Q, K, V = rng.normal(size=(B, T_q, d_k)), rng.normal(size=(B, T_k, d_k)), rng.normal(size=(B, T_k, d_v))
    _check_grads(Q, K, V, mask, seed=seed)


def test_float32_stays_float32():
    rng = np.random.default_rng(6)
    Q, K, V = (rng.normal(size=(3, 2)).astype(np.float32) for _ in range(3))
    O, cache = attention_forward(Q, K, V, mask=causal_mask(3))
    assert O.dtype == np.float32 and cache["A"].dtype == np.float32
    assert all(g.dtype == np.float32 for g in attention_backward(np.ones_like(O), cache))


@pytest.mark.parametrize(
    "shapes, message",
    [
        (((3, 2), (3, 4), (3, 2)), "same width d_k"),
        (((3, 2), (3, 2), (4, 2)), "same number of keys"),
        (((2, 3, 2), (1, 3, 2), (1, 3, 2)), "share leading axes"),
        (((3,), (3, 2), (3, 2)), "at least 2 dimensions"),
        (((0, 2), (3, 2), (3, 2)), "empty sequence"),
    ],
)
def test_rejects_bad_shapes(shapes, message):
    Q, K, V = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError, match=message):
        attention_forward(Q, K, V)
