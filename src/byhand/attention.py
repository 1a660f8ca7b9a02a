"""Scaled dot-product attention with causal and padding masks, and its backward pass.

Taught in Part II, chapter "Scores, mask, softmax" (forward) and chapter "Through attention"
(backward: the softmax Jacobian, and why masked positions get exactly zero gradient); used again
for every attention of the 2017 model in Part III.

For queries Q (T_q, d_k), keys K (T_k, d_k) and values V (T_k, d_v), one head computes

    S = Q K^T / sqrt(d_k)          scaled scores,          (T_q, T_k)
    A = softmax(S) along keys      masked entries -> 0.0,   (T_q, T_k), rows sum to 1
    O = A V                        weighted mix of values,  (T_q, d_v)

over any leading axes (batch, heads) at once. The softmax is ``byhand.softmax``'s, so a masked
score gets probability exactly 0.0 and, in the backward, gradient exactly 0.0.

Names in ``attention_backward_traced``'s trace, in backward order: "dA", "dV", "dS", "dQ", "dK".
"""
from __future__ import annotations

import math

import numpy as np

from byhand.checks import as_float, check_grad, is_int
from byhand.softmax import softmax_backward, softmax_forward


def causal_mask(T: int) -> np.ndarray:
    """The (T, T) boolean mask of a decoder: query t may attend to keys 0..t.

    mask[t, s] = (s <= t), i.e. True on and below the diagonal. True means "allowed".
    """
    if not is_int(T) or T < 1:
        raise ValueError(f"causal_mask needs a positive integer length T, got {T!r}")
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def padding_mask(valid) -> np.ndarray:
    """The (B, 1, 1, T_k) boolean mask that hides padding keys from every head and every query.

    ``valid`` is (B, T_k), True (or 1) where the key is a real token, False (or 0) at padding.
    The two singleton axes broadcast over heads h and queries T_q of scores (B, h, T_q, T_k).
    """
    v = np.asarray(valid)
    if v.ndim != 2:
        raise ValueError(f"valid must have 2 dimensions (B, T_k), got shape {v.shape}")
    if v.dtype != np.bool_:
        if v.dtype.kind not in "iu" or not np.all((v == 0) | (v == 1)):
            raise ValueError("valid must be a boolean or 0/1 array (True = real token)")
        v = v.astype(bool)
    if v.shape[1] == 0:
        raise ValueError("valid is an empty sequence")
    if not np.all(v.any(axis=1)):
        raise ValueError("valid has a sequence with no real token: every key would be masked")
    return v[:, None, None, :]  # (B, 1, 1, T_k)


def attention_forward(Q, K, V, mask=None):
    """Scaled dot-product attention O = softmax(Q K^T / sqrt(d_k)) V, with an optional mask.

    Shapes: Q (..., T_q, d_k), K (..., T_k, d_k), V (..., T_k, d_v), with the same leading axes;
    mask None or boolean, broadcastable to the scores (..., T_q, T_k), True = allowed.
    Returns O (..., T_q, d_v) and a cache exposing "Q", "K", "V", "S" (scaled scores) and
    "A" (attention weights); A is cached for the backward, S only so chapters can show it.
    """
    Q, K, V = as_float("Q", Q), as_float("K", K), as_float("V", V)
    if Q.ndim < 2 or K.ndim < 2 or V.ndim < 2:
        raise ValueError(f"Q, K, V need at least 2 dimensions (T, d), got {Q.shape}, {K.shape}, {V.shape}")
    if not Q.shape[:-2] == K.shape[:-2] == V.shape[:-2]:
        raise ValueError(f"Q, K, V must share leading axes, got {Q.shape}, {K.shape}, {V.shape}")
    if Q.shape[-1] != K.shape[-1]:
        raise ValueError(f"Q and K must have the same width d_k, got {Q.shape} and {K.shape}")
    if K.shape[-2] != V.shape[-2]:
        raise ValueError(f"K and V must have the same number of keys T_k, got {K.shape} and {V.shape}")
    if 0 in Q.shape[-2:] or K.shape[-2] == 0:
        raise ValueError(f"attention over an empty sequence: Q {Q.shape}, K {K.shape}")
    d_k = Q.shape[-1]
    # 1/sqrt(d_k) keeps the score variance ~1 for unit-variance q, k; a Python float keeps float32 float32
    scale = 1.0 / math.sqrt(d_k)
    S = (Q @ np.swapaxes(K, -1, -2)) * scale  # (..., T_q, T_k)
    A, softmax_cache = softmax_forward(S, axis=-1, mask=mask)  # (..., T_q, T_k), masked -> 0.0
    O = A @ V  # (..., T_q, d_v)
    # cached: Q, K, V, A (all the backward reads) and S (for display only)
    cache = {"Q": Q, "K": K, "V": V, "S": S, "A": A, "softmax": softmax_cache, "scale": scale}
    return O, cache


def attention_backward_traced(dO, cache):
    """``attention_backward`` that also returns its named intermediate gradients.

    Returns (dQ, dK, dV, grad_trace) with grad_trace an ordered dict "dA", "dV", "dS", "dQ", "dK"
    (backward order), for chapters that display the gradient of the probabilities and scores.
    """
    Q, K, V, A, scale = cache["Q"], cache["K"], cache["V"], cache["A"], cache["scale"]
    dO = check_grad("dO", dO, A.shape[:-1] + V.shape[-1:])
    # O = A V
    dA = dO @ np.swapaxes(V, -1, -2)  # (..., T_q, T_k)
    dV = np.swapaxes(A, -1, -2) @ dO  # (..., T_k, d_v)
    # A = softmax(S): dS = A * (dA - rowsum(A * dA)); exactly 0.0 where A is 0 (masked)
    dS = softmax_backward(dA, cache["softmax"])  # (..., T_q, T_k)
    # S = Q K^T * scale
    dQ = (dS @ K) * scale  # (..., T_q, d_k)
    dK = (np.swapaxes(dS, -1, -2) @ Q) * scale  # (..., T_k, d_k)
    grad_trace = {"dA": dA, "dV": dV, "dS": dS, "dQ": dQ, "dK": dK}
    return dQ, dK, dV, grad_trace


def attention_backward(dO, cache):
    """Gradients of O = softmax(Q K^T / sqrt(d_k)) V with respect to Q, K and V.

    Shapes: dO (..., T_q, d_v); returns dQ (..., T_q, d_k), dK (..., T_k, d_k), dV (..., T_k, d_v).

        dA = dO V^T,   dV = A^T dO,   dS = A * (dA - rowsum(A * dA)),
        dQ = dS K / sqrt(d_k),   dK = dS^T Q / sqrt(d_k).
    """
    dQ, dK, dV, _ = attention_backward_traced(dO, cache)
    return dQ, dK, dV
