"""Multi-head attention: project, split into heads, attend, merge, project out; and its backward.

Taught in Part II, chapter "Queries, keys and values" (the projections), chapter "Multi-head and
output projection" (split, merge, W_o) and chapter "Through attention" (the backward, including
the W_o^T that a public hand-derivation got wrong); used for self- and cross-attention in Part III.

With queries read from x_q (T_q, d_model) and keys/values from x_kv (T_k, d_model):

    Q = split(x_q W_q + b_q),  K = split(x_kv W_k + b_k),  V = split(x_kv W_v + b_v)   (h, T, d_k)
    O_h = attention(Q, K, V, mask)                                                    (h, T_q, d_k)
    O = merge(O_h),    out = O W_o + b_o                                              (T_q, d_model)

where split reshapes (T, d_model) -> (T, h, d_k) and moves the head axis forward, d_k = d_model / h.
Self-attention passes the same array as x_q and x_kv; cross-attention (2017 decoder) passes the
decoder stream as x_q and the encoder memory as x_kv. The heads are never looped over: they are
one more leading axis of the attention batch.

Names in ``mha_backward_traced``'s trace, in backward order:
"O" (merged heads), "O_heads", "A", "V", "S", "Q", "K" (per head), each the gradient of that name.
"""
from __future__ import annotations

import numpy as np

from byhand.attention import attention_backward_traced, attention_forward
from byhand.checks import as_float, check_grad, check_last_dim, check_ndim, check_numeric, is_int
from byhand.linear import linear_backward, linear_forward


def _check_heads(d_model: int, n_heads: int) -> int:
    """Return d_k = d_model / n_heads, refusing a head count that does not divide d_model."""
    if not is_int(n_heads) or n_heads < 1:
        raise ValueError(f"n_heads must be a positive integer, got {n_heads!r}")
    if d_model % n_heads != 0:
        raise ValueError(f"n_heads = {n_heads} does not divide d_model = {d_model}")
    return d_model // n_heads


def split_heads(x, n_heads: int) -> np.ndarray:
    """Split the last axis into heads: (..., T, d_model) -> (..., h, T, d_k), d_k = d_model / h.

    Head j owns columns j*d_k .. (j+1)*d_k - 1 of d_model (the convention of GPT-2 and the paper).
    """
    x = check_numeric("x", x)
    if x.ndim < 2:
        raise ValueError(f"split_heads needs (..., T, d_model), got shape {x.shape}")
    *lead, T, d_model = x.shape
    d_k = _check_heads(d_model, n_heads)
    x = x.reshape(*lead, T, n_heads, d_k)  # (..., T, h, d_k)
    return np.swapaxes(x, -2, -3)  # (..., h, T, d_k)


def merge_heads(x) -> np.ndarray:
    """Inverse of ``split_heads``: (..., h, T, d_k) -> (..., T, h * d_k), heads side by side."""
    x = check_numeric("x", x)
    if x.ndim < 3:
        raise ValueError(f"merge_heads needs (..., h, T, d_k), got shape {x.shape}")
    *lead, h, T, d_k = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., T, h, d_k)
    return x.reshape(*lead, T, h * d_k)  # (..., T, d_model)


def mha_forward(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, b_q=None, b_k=None, b_v=None, b_o=None, mask=None):
    """Multi-head attention of queries from ``x_q`` over keys and values from ``x_kv``.

    Shapes: x_q (..., T_q, d_model), x_kv (..., T_k, d_model) with the same leading axes;
    W_q, W_k, W_v, W_o (d_model, d_model); biases (d_model,) or None; mask None or boolean,
    broadcastable to the scores (..., h, T_q, T_k) (``causal_mask(T)`` or ``padding_mask(valid)``).
    Returns out (..., T_q, d_model) and a cache exposing per-head "Q", "K", "V" (..., h, T, d_k),
    "S", "A" (..., h, T_q, T_k), the merged heads "O" (..., T_q, d_model) and "out".
    """
    x_q, x_kv = as_float("x_q", x_q), as_float("x_kv", x_kv)
    check_ndim("x_q", x_q, tuple(range(2, 8)))
    d_model = x_q.shape[-1]
    _check_heads(d_model, n_heads)
    check_last_dim("x_kv", x_kv, d_model, "d_model")
    if x_q.shape[:-2] != x_kv.shape[:-2]:
        raise ValueError(f"x_q and x_kv must share leading axes, got {x_q.shape} and {x_kv.shape}")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v), ("W_o", W_o)):
        if np.shape(W) != (d_model, d_model):
            raise ValueError(f"{name} must have shape {(d_model, d_model)}, got {np.shape(W)}")
    # the three projections (biases None in the 2017 model, present in GPT-2)
    Q_all, lin_q = linear_forward(x_q, W_q, b_q)  # (..., T_q, d_model)
    K_all, lin_k = linear_forward(x_kv, W_k, b_k)  # (..., T_k, d_model)
    V_all, lin_v = linear_forward(x_kv, W_v, b_v)  # (..., T_k, d_model)
    Q = split_heads(Q_all, n_heads)  # (..., h, T_q, d_k)
    K = split_heads(K_all, n_heads)  # (..., h, T_k, d_k)
    V = split_heads(V_all, n_heads)  # (..., h, T_k, d_k)
    O_heads, attn = attention_forward(Q, K, V, mask)  # (..., h, T_q, d_k)
    O = merge_heads(O_heads)  # (..., T_q, d_model), heads concatenated
    out, lin_o = linear_forward(O, W_o, b_o)  # (..., T_q, d_model)
    # cached: the four linear caches and the attention cache (they hold what the backward reads);
    # Q, K, V, S, A, O, out are references to arrays already computed, kept for display
    cache = {
        "Q": Q, "K": K, "V": V, "S": attn["S"], "A": attn["A"], "O_heads": O_heads, "O": O, "out": out,
        "n_heads": n_heads, "lin_q": lin_q, "lin_k": lin_k, "lin_v": lin_v, "attn": attn, "lin_o": lin_o,
    }
    return out, cache


def mha_backward_traced(dout, cache):
    """``mha_backward`` that also returns the named intermediate gradients (see the module docstring).

    Returns (grads, grad_trace); grad_trace holds "O", "O_heads", "A", "V", "S", "Q", "K" in backward
    order (the gradient of each forward name, without the "d" prefix so a model can prefix it).
    """
    n_heads = cache["n_heads"]
    dout = check_grad("dout", dout, cache["out"].shape)
    grads, grad_trace = {}, {}
    # out = O W_o + b_o: the gradient reaching O is dout W_o^T (transposed!)
    dO, grads["W_o"], db_o = linear_backward(dout, cache["lin_o"])  # (..., T_q, d_model)
    grad_trace["O"] = dO
    dO_heads = split_heads(dO, n_heads)  # (..., h, T_q, d_k); the backward of merge is split
    grad_trace["O_heads"] = dO_heads
    dQ, dK, dV, attn_trace = attention_backward_traced(dO_heads, cache["attn"])  # per head
    for name in ("dA", "dV", "dS", "dQ", "dK"):
        grad_trace[name[1:]] = attn_trace[name]
    dV_all = merge_heads(dV)  # (..., T_k, d_model); the backward of split is merge
    dK_all = merge_heads(dK)  # (..., T_k, d_model)
    dQ_all = merge_heads(dQ)  # (..., T_q, d_model)
    dx_kv_v, grads["W_v"], db_v = linear_backward(dV_all, cache["lin_v"])  # (..., T_k, d_model)
    dx_kv_k, grads["W_k"], db_k = linear_backward(dK_all, cache["lin_k"])  # (..., T_k, d_model)
    grads["x_q"], grads["W_q"], db_q = linear_backward(dQ_all, cache["lin_q"])  # (..., T_q, d_model)
    grads["x_kv"] = dx_kv_k + dx_kv_v  # x_kv feeds both K and V: the two gradients add
    for name, db in (("b_q", db_q), ("b_k", db_k), ("b_v", db_v), ("b_o", db_o)):
        if db is not None:  # only the biases that were given
            grads[name] = db
    return grads, grad_trace


def mha_backward(dout, cache):
    """Gradients of multi-head attention with respect to its inputs, weights and given biases.

    Shapes: dout (..., T_q, d_model). Returns a dict with "x_q" (..., T_q, d_model),
    "x_kv" (..., T_k, d_model), "W_q", "W_k", "W_v", "W_o" (d_model, d_model) and "b_q", "b_k",
    "b_v", "b_o" (d_model,) for the biases that were given. For self-attention the caller adds
    grads["x_q"] + grads["x_kv"]. The key steps:

        dO = dout W_o^T,   dW_o = O^T dout,   (dQ, dK, dV) = attention_backward(split(dO)),
        dx_q = merge(dQ) W_q^T,   dx_kv = merge(dK) W_k^T + merge(dV) W_v^T.
    """
    grads, _ = mha_backward_traced(dout, cache)
    return grads
