"""Cross-entropy of logits against target tokens, with optional label smoothing, fused with softmax.

Taught in Part I, chapter "Logs" (cross-entropy as -log p), Part II, chapter "Logits and loss" and
"Backward through loss and output layer" (p - q), and Part III (label smoothing).

For one position with logits z (V,) and target class t, the smoothed target distribution is

    q = (1 - eps) onehot(t) + eps / V,

and the loss is the cross-entropy  L = -sum_i q_i log p_i  with  p = softmax(z). With eps = 0 this is
-log p_t. Why fuse softmax and the loss into one backward: the chain through the softmax Jacobian,
(diag(p) - p p^T)(-q / p), collapses to the short, exact and stable

    dL/dz = p - q,

so there is no division by a probability that may have underflowed to 0.
"""
from __future__ import annotations

import numpy as np

from byhand.checks import as_float, check_int, is_number
from byhand.softmax import log_softmax_forward


def cross_entropy_forward(logits, targets, label_smoothing: float = 0.0, reduction: str = "mean", ignore_index: int = -1):
    """Cross-entropy (optionally label-smoothed) of ``logits`` against integer ``targets``.

    Shapes: logits (..., V), targets (...) integers in [0, V) or ``ignore_index``; returns a scalar loss.

        q = (1 - eps) onehot(target) + eps / V,    loss_position = -sum_i q_i log softmax(z)_i,
        loss = sum over counted positions / n   ("mean", n = number of non-ignored positions)
        loss = sum over counted positions       ("sum")

    Returns (loss, cache). The cache holds, for chapters to display: ``p`` (..., V) the softmax,
    ``q`` (..., V) the target distribution (all-zero rows at ignored positions), ``losses`` (...) the
    per-position losses (0 at ignored positions), ``counted`` (...) bool, ``n`` and ``reduction``.
    """
    logits, targets, counted, n = _checked(logits, targets, label_smoothing, reduction, ignore_index)
    V = logits.shape[-1]
    logp, _ = log_softmax_forward(logits)  # (..., V), finite even for logits of +-1e4
    onehot = np.arange(V) == targets[..., None]  # (..., V) bool; ignored targets match no column
    q = (1.0 - label_smoothing) * onehot + label_smoothing / V  # (..., V) smoothed targets
    q = np.where(counted[..., None], q, 0.0).astype(logits.dtype, copy=False)  # (..., V), zero rows where ignored
    losses = -(q * logp).sum(axis=-1)  # (...) per-position cross-entropy, 0 where ignored
    total = losses.sum()  # scalar
    loss = total / n if reduction == "mean" else total  # n is a Python int, so float32 stays float32
    p = np.exp(logp)  # (..., V) kept for the fused backward and for display
    cache = {"p": p, "q": q, "losses": losses, "counted": counted, "n": n, "reduction": reduction}
    return loss, cache


def _checked(logits, targets, label_smoothing, reduction, ignore_index):
    """The loss's inputs, checked: (logits as floats (..., V), targets (...), counted (...) bool, n counted)."""
    logits = as_float("logits", logits)
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(f"logits must have a non-empty last axis V, got shape {logits.shape}")
    V = logits.shape[-1]
    targets = np.asarray(targets)
    if targets.dtype.kind not in "iu":
        raise ValueError(f"targets must be integer class ids, got dtype {targets.dtype}")
    if targets.shape != logits.shape[:-1]:
        raise ValueError(f"targets must have shape {logits.shape[:-1]} (logits without V), got {targets.shape}")
    if not (is_number(label_smoothing) and 0.0 <= label_smoothing < 1.0):
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
    if reduction not in ("mean", "sum"):
        raise ValueError(f"unknown reduction {reduction!r}; use 'mean' or 'sum'")
    counted = targets != ignore_index  # (...) True where the position counts
    bad = counted & ((targets < 0) | (targets >= V))
    if np.any(bad):
        raise ValueError(f"target {int(targets[bad].flat[0])} is out of range [0, {V}) (ignore_index is {ignore_index})")
    n = int(counted.sum())
    if n == 0:
        raise ValueError("no counted positions: every target equals ignore_index")
    return logits, targets, counted, n


def cross_entropy_backward(dloss=1.0, cache=None):
    """Fused softmax + cross-entropy backward: the gradient of the loss with respect to the logits.

    Shapes: dloss a scalar (the upstream gradient, 1.0 when the loss is the final output);
    returns dlogits (..., V).

        dlogits = dloss * (p - q) / N    at counted positions (N = n for "mean", 1 for "sum"),
        dlogits = 0                      (exactly) at ignored positions.

    Call as ``cross_entropy_backward(1.0, cache)`` or ``cross_entropy_backward(cache=cache)``.
    """
    if cache is None or isinstance(dloss, dict):
        raise ValueError("cross_entropy_backward needs (dloss, cache): pass the cache from cross_entropy_forward")
    dloss = as_float("dloss", dloss)
    if dloss.size != 1:
        raise ValueError(f"dloss must be a scalar, got shape {dloss.shape}")
    p, q, counted = cache["p"], cache["q"], cache["counted"]
    N = cache["n"] if cache["reduction"] == "mean" else 1
    dlosses = np.where(counted, dloss.reshape(()) / N, 0.0)  # (...) gradient of the loss w.r.t. each position's loss
    dlogits = dlosses[..., None] * (p - q)  # (..., V) p - q scaled; rows of exact zeros where ignored
    return dlogits.astype(p.dtype, copy=False)


SMOOTHING_CONVENTIONS = ("pytorch", "tensor2tensor", "annotated")  # the three label-smoothing forms of Part III


def smoothed_target(target: int, V: int, eps: float, convention: str = "pytorch", pad: int | None = None):
    """The smoothed target q (V,) of one position under one of three published conventions.

    "pytorch"       q = (1 - eps) onehot(target) + eps / V    (torch's label_smoothing; cross_entropy_forward's q)
    "tensor2tensor" q = 1 - eps on the target, eps / (V - 1) on each other word (the 2017 code)
    "annotated"     q = 1 - eps on the target, 0 on the padding column ``pad``, eps / (V - 2) on the rest
                    ("The Annotated Transformer"; ``pad`` required and different from ``target``)
    Taught in Part III, "Output layer, softmax and label smoothing".
    """
    if convention not in SMOOTHING_CONVENTIONS:
        raise ValueError(f"unknown label-smoothing convention {convention!r}; use one of {SMOOTHING_CONVENTIONS}")
    check_int("V", V, low=2)  # one word leaves nothing to smooth towards (and eps / (V - 1) divides by 0)
    check_int("target", target, low=0)
    if not target < V:
        raise ValueError(f"target {target} is out of range [0, {V})")
    if not (is_number(eps) and 0.0 <= eps < 1.0):
        raise ValueError(f"eps must be in [0, 1), got {eps!r}")
    if convention == "pytorch":
        return (1.0 - eps) * (np.arange(V) == target) + eps / V  # (V,)
    if convention == "tensor2tensor":
        q = np.full(V, eps / (V - 1))  # (V,) the other words share eps
    else:
        if pad is None or not 0 <= pad < V or pad == target or V < 3:
            raise ValueError(f"'annotated' needs a padding column pad in [0, {V}) other than the target {target}, got {pad}")
        q = np.full(V, eps / (V - 2))  # (V,) the words other than the target and the padding column share eps
        q[pad] = 0.0
    q[target] = 1.0 - eps
    return q


def smoothing_loss(logits, target: int, eps: float, convention: str = "pytorch", pad: int | None = None):
    """One position's label-smoothed loss as each convention defines it. logits (V,); returns (loss, q).

    "pytorch" is the cross-entropy  -sum q log p  (it equals ``cross_entropy_forward``); "tensor2tensor" and
    "annotated" subtract the entropy of their q, giving the KL divergence  sum_{q_i > 0} q_i (log q_i - log p_i),
    whose smallest value, at p = q, is 0. All three have gradient p - q with respect to the logits.
    """
    z = as_float("logits", logits)
    if z.ndim != 1:
        raise ValueError(f"logits must be one position's (V,) vector, got shape {z.shape}")
    q = smoothed_target(target, z.shape[0], eps, convention, pad)  # (V,)
    logp, _ = log_softmax_forward(z)  # (V,)
    if convention == "pytorch":
        return float(-(q * logp).sum()), q
    kept = q > 0  # 0 log 0 = 0: a zero-target word adds nothing to the KL divergence
    return float((q[kept] * (np.log(q[kept]) - logp[kept])).sum()), q
