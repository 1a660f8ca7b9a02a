"""Softmax and log-softmax along one axis, with an optional mask, and their backward passes.

Taught in Part I, chapter "Softmax" (the stable form) and Part II, chapter "Scores, mask, softmax"
(masking); the backward is taught in Part II, chapter "Through attention".

Softmax turns a row of logits z into probabilities,

    p_i = exp(z_i - m) / sum_j exp(z_j - m),    m = max_j z_j,

where subtracting the row maximum m changes nothing mathematically (softmax is shift invariant)
but keeps every exponent <= 0, so nothing overflows even for logits of 1e4.
"""
from __future__ import annotations

import numpy as np

from byhand.checks import as_float, check_cache, check_grad

# what to do instead of writing -inf into the scores: the mask= argument the chapters teach
_MASK_HINT = "for masked positions pass mask= (a boolean array, True = allowed) instead of -inf scores"


def _check_axis(z: np.ndarray, axis: int) -> int:
    """Return ``axis`` as a non-negative index into ``z.shape``, refusing scalars and empty rows."""
    if z.ndim == 0:
        raise ValueError("softmax needs at least one axis, got a scalar")
    if not -z.ndim <= axis < z.ndim:
        raise ValueError(f"axis {axis} is out of range for an array of shape {z.shape}")
    axis = axis % z.ndim
    if z.shape[axis] == 0:
        raise ValueError(f"softmax over an empty axis {axis} (shape {z.shape})")
    return axis


def softmax_forward(z, axis: int = -1, mask=None):
    """Stable softmax of ``z`` along ``axis``; masked entries get probability exactly 0.0.

    Shapes: z (..., n) (any axis may play the role of n); mask None or a boolean array broadcastable
    to z, True where the entry is allowed; p has the shape of z.

        p_i = exp(z_i - m) / sum_{j allowed} exp(z_j - m),    m = max_{j allowed} z_j,
        p_i = 0 for masked i.

    A row with no allowed entry has no softmax and is a ValueError, and so is a -inf in z (use mask=).
    Returns (p, cache); the cache holds p and the axis (p is all the backward needs).
    """
    z = as_float("z", z, neg_inf_hint=_MASK_HINT, booleans=False)
    axis = _check_axis(z, axis)
    if mask is None:
        m = z.max(axis=axis, keepdims=True)  # row maxima, size 1 along axis
        shifted = z - m  # every entry <= 0, so exp cannot overflow
    else:
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            raise ValueError(f"mask must be a boolean array (True = allowed), got dtype {mask.dtype}")
        try:
            mask = np.broadcast_to(mask, z.shape)  # same shape as z
        except ValueError:
            raise ValueError(f"mask of shape {mask.shape} does not broadcast to z of shape {z.shape}") from None
        if not np.all(mask.any(axis=axis)):
            raise ValueError("mask leaves a softmax row with every entry masked (nothing allowed)")
        m = np.where(mask, z, -np.inf).max(axis=axis, keepdims=True)  # max over allowed entries only
        shifted = np.where(mask, z - m, -np.inf)  # masked entries -> -inf, so exp gives exactly 0.0
    e = np.exp(shifted)  # same shape as z, entries in [0, 1]
    p = e / e.sum(axis=axis, keepdims=True)  # same shape as z, rows sum to 1
    cache = {"p": p, "axis": axis}
    return p, cache


def softmax_backward(dp, cache):
    """Gradient through softmax: the Jacobian-vector product of dp with the softmax Jacobian.

    Shapes: dp like p; returns dz like p.

        dz_i = p_i (dp_i - sum_j p_j dp_j)

    which is exactly 0.0 wherever p is 0 (masked entries get no gradient).
    """
    p, axis = (check_cache(cache, ("p", "axis"), "softmax_forward")[k] for k in ("p", "axis"))
    dp = check_grad("dp", dp, p.shape, of="p")
    s = (p * dp).sum(axis=axis, keepdims=True)  # sum_j p_j dp_j, size 1 along axis
    dz = p * (dp - s)  # same shape as p
    dz = np.where(p == 0, 0.0, dz).astype(dz.dtype, copy=False)  # write +0.0 rather than -0.0 at masked entries
    return dz


def log_softmax_forward(z, axis: int = -1):
    """Stable log-softmax of ``z`` along ``axis``: finite even where softmax underflows to 0.

    Shapes: z (..., n); logp like z.

        log p_i = (z_i - m) - log sum_j exp(z_j - m),    m = max_j z_j.

    Returns (logp, cache); the cache holds logp and the axis, and the backward recomputes p = exp(logp).
    """
    z = as_float("z", z)
    axis = _check_axis(z, axis)
    m = z.max(axis=axis, keepdims=True)  # row maxima, size 1 along axis
    shifted = z - m  # every entry <= 0, the largest exactly 0
    lse = np.log(np.exp(shifted).sum(axis=axis, keepdims=True))  # in [0, log n], size 1 along axis
    logp = shifted - lse  # same shape as z, finite
    cache = {"logp": logp, "axis": axis}
    return logp, cache


def log_softmax_backward(dlogp, cache):
    """Gradient through log-softmax.

    Shapes: dlogp like logp; returns dz like logp.

        dz_i = dlogp_i - p_i sum_j dlogp_j,    p = exp(logp).
    """
    logp, axis = (check_cache(cache, ("logp", "axis"), "log_softmax_forward")[k] for k in ("logp", "axis"))
    dlogp = check_grad("dlogp", dlogp, logp.shape, of="logp")
    p = np.exp(logp)  # recomputed from the cache rather than stored twice
    dz = dlogp - p * dlogp.sum(axis=axis, keepdims=True)  # same shape as logp
    return dz
