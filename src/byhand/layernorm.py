"""Layer normalisation over the last axis, its backward pass, and its explicit Jacobian for one row.

Taught in Part II, chapter "Layer norm and residuals" (forward) and chapter "Through FFN and layer
norm" (backward and Jacobian); Part III uses it post-LN, with eps = 0 in the hand-worked toy.

For one row x of width D:

    mu = mean(x),    var = mean((x - mu)^2)   (biased: divide by D, not D - 1),
    rstd = 1 / sqrt(var + eps),    xhat = (x - mu) rstd,    y = gamma * xhat + beta.
"""
from __future__ import annotations

import numpy as np

from byhand.checks import all_finite, as_float, check_grad, check_last_dim, check_ndim, is_number


def _check_affine(x: np.ndarray, **arrays):
    """The named arrays (gamma, and beta when given) as float arrays of shape (D,), D = x.shape[-1]."""
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have a non-empty last axis to normalise, got shape {x.shape}")
    D = x.shape[-1]
    out = []
    for name, a in arrays.items():
        a = as_float(name, a)
        check_ndim(name, a, (1,))
        check_last_dim(name, a, D, "d_model")
        out.append(a)
    return out


def _check_eps(eps) -> float:
    if not (is_number(eps) and eps >= 0):
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    return float(eps)


def _zero_variance_error():
    return ValueError("layer norm of a row with zero variance and eps = 0 divides by zero; use eps > 0")


def layernorm_forward(x, gamma, beta, eps: float = 1e-5):
    """Normalise each row of ``x`` (the last axis) to mean 0 and variance 1, then scale and shift.

    Shapes: x (..., d_model), gamma (d_model,), beta (d_model,); y (..., d_model).

        y = gamma * (x - mu) / sqrt(var + eps) + beta,    mu, var over the last axis (biased variance).

    eps = 0 is allowed, but then a constant row (var = 0) is a ValueError. Returns (y, cache); the
    cache holds x, mu, rstd and gamma (as llm.c does) and the backward recomputes xhat from them.
    Rows so large that var overflows (|x| beyond about 1e154 in float64, 1e19 in float32) are normalised at a smaller scale (see
    ``_rescaled``); their cache then also holds "scale".
    """
    x = as_float("x", x)
    gamma, beta = _check_affine(x, gamma=gamma, beta=beta)
    eps = _check_eps(eps)
    # test constancy directly: the rounded mean of a constant row can leave var at 1e-34 instead of 0
    if eps == 0.0 and np.any(np.all(x == x[..., :1], axis=-1)):
        raise _zero_variance_error()
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is caught below, not warned about
        mu = x.mean(axis=-1, keepdims=True)  # (..., 1)
        xc = x - mu  # (..., d_model) centred
        var = (xc * xc).mean(axis=-1, keepdims=True)  # (..., 1) biased variance
    cache = {}
    if not all_finite(var):  # (x - mu)^2 overflowed: only then, so ordinary rows keep their exact arithmetic
        x, mu, xc, var, eps, cache["scale"] = _rescaled(x, var, eps)
    if np.any(var + eps == 0.0):  # eps = 0 and a row whose spread rounds away
        raise _zero_variance_error()
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    xhat = xc * rstd  # (..., d_model) mean 0, variance var / (var + eps)
    y = xhat * gamma + beta  # (..., d_model)
    cache.update({"x": x, "mu": mu, "rstd": rstd, "gamma": gamma})
    return y, cache


def _rescaled(x, var, eps):
    """Moments of the rows of ``x`` whose variance overflowed, computed after dividing each such row by its max |x|.

    Layer norm is scale-invariant apart from eps: for any s > 0, LN(x; eps) = LN(x / s; eps / s^2) exactly, so
    dividing a row by s = max |x| (and eps by s^2) changes nothing but keeps (x - mu)^2 in range. Rows whose
    variance was finite keep s = 1. Returns (x / s, mu, xc, var, eps / s^2, s); mu, var, eps / s^2 and s have shape (..., 1).
    """
    s = np.where(np.isfinite(var), 1.0, np.abs(x).max(axis=-1, keepdims=True)).astype(x.dtype)  # (..., 1)
    x = x / s  # (..., d_model), every |entry| <= 1 in rescaled rows
    mu = x.mean(axis=-1, keepdims=True)  # (..., 1)
    xc = x - mu  # (..., d_model)
    var = (xc * xc).mean(axis=-1, keepdims=True)  # (..., 1), finite now
    with np.errstate(over="ignore"):  # s * s may overflow to inf: eps / s^2 is then 0.0, as it should be
        eps = eps / (s * s)  # (..., 1)
    return x, mu, xc, var, eps, s


def layernorm_backward(dy, cache):
    """Gradients of layer norm, in reverse order of the forward.

    Shapes: dy (..., d_model); returns dx (..., d_model), dgamma (d_model,), dbeta (d_model,), the
    parameter gradients summed over every leading axis.

        dbeta = sum dy,    dgamma = sum dy * xhat,    dxhat = dy * gamma,
        dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))    (means over the last axis).

    The last line is the full Jacobian-vector product: each x_j moves y_i through xhat_i directly,
    through the mean, and through the variance.
    """
    x, mu, rstd, gamma = cache["x"], cache["mu"], cache["rstd"], cache["gamma"]
    dy = check_grad("dy", dy, x.shape)
    D = x.shape[-1]
    xhat = (x - mu) * rstd  # (..., d_model) recomputed rather than cached
    dbeta = dy.reshape(-1, D).sum(axis=0)  # (d_model,)
    dgamma = (dy * xhat).reshape(-1, D).sum(axis=0)  # (d_model,)
    dxhat = dy * gamma  # (..., d_model)
    dx = rstd * (
        dxhat
        - dxhat.mean(axis=-1, keepdims=True)  # through mu
        - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)  # through var
    )  # (..., d_model)
    if "scale" in cache:  # the forward normalised x / s: by the chain rule dx = d(x / s) / s
        dx = dx / cache["scale"]
    return dx, dgamma, dbeta


def layernorm_jacobian(x_row, gamma, eps: float = 1e-5):
    """The explicit Jacobian J[i, j] = dy_i / dx_j of layer norm for one row (beta does not enter).

    Shapes: x_row (D,), gamma (D,); J (D, D).

        J[i, j] = gamma_i * rstd * (delta_ij - 1/D - xhat_i xhat_j / D).

    With the row-vector convention the backward is dx = dy @ J. Chapters display this matrix; the
    backward never builds it.
    """
    x_row = as_float("x_row", x_row)
    check_ndim("x_row", x_row, (1,))
    (gamma,) = _check_affine(x_row, gamma=gamma)
    eps = _check_eps(eps)
    D = x_row.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is caught below, not warned about
        xc = x_row - x_row.mean()  # (D,)
        var = (xc * xc).mean()  # scalar
        if not np.isfinite(var):  # overflowed: LN(x; eps) = LN(x / s; eps / s^2), so J(x) = J(x / s; eps / s^2) / s
            s = np.abs(x_row).max()
            return layernorm_jacobian(x_row / s, gamma, eps / (s * s)) / s
    if eps == 0.0 and (var == 0.0 or np.all(x_row == x_row[0])):
        raise _zero_variance_error()
    rstd = 1.0 / np.sqrt(var + eps)  # scalar
    xhat = xc * rstd  # (D,)
    J = gamma[:, None] * rstd * (np.eye(D, dtype=xhat.dtype) - 1.0 / D - np.outer(xhat, xhat) / D)  # (D, D)
    return J
