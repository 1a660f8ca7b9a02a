"""Elementwise activations of the feed-forward layer: GELU (tanh and erf forms) and ReLU.

Taught in Part II, chapter "Feed-forward with GELU" (GPT-2 uses the tanh form) and Part III
(the 2017 encoder-decoder uses ReLU).

    GELU(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt(2)))                        ("erf", exact)
    GELU(x) ~ 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))                 ("tanh", GPT-2's)
    ReLU(x) = max(x, 0)
"""
from __future__ import annotations

import math

import numpy as np

from byhand.checks import as_float, check_grad

_GELU_FORMS = ("tanh", "erf")
_erf = np.vectorize(math.erf, otypes=[np.float64])  # NumPy has no erf; math.erf applied entrywise


def gelu_forward(x, approximate: str = "tanh"):
    """GELU of every entry of ``x``, in the tanh approximation (GPT-2) or the exact erf form.

    Shapes: x any shape; y the same shape and dtype.

        "tanh": y = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)
        "erf":  y = 0.5 x (1 + erf(x / sqrt(2)))

    Returns (y, cache); the cache holds x, the form and, for "tanh", tanh(u) (one more array, but the
    tanh is the costly part and the backward needs it); the erf form recomputes Phi in the backward.
    """
    x = as_float("x", x)
    if approximate not in _GELU_FORMS:
        raise ValueError(f"unknown GELU form {approximate!r}; use 'tanh' or 'erf'")
    cache = {"x": x, "approximate": approximate}
    if approximate == "tanh":
        # x*x*x, not x**3: NumPy's general power is several times slower and dominated the training step
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))  # same shape as x
        t = np.tanh(u)  # same shape as x
        y = 0.5 * x * (1.0 + t)  # same shape as x
        cache["t"] = t
    else:
        Phi = 0.5 * (1.0 + _erf(x / math.sqrt(2.0))).astype(x.dtype)  # standard normal CDF, same shape as x
        y = x * Phi  # same shape as x
    return y, cache


def gelu_backward(dy, cache):
    """Gradient through GELU: dx = dy * GELU'(x), with the exact derivative of the form used forward.

    Shapes: dy like x; returns dx like x.

        "tanh": GELU'(x) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
        "erf":  GELU'(x) = Phi(x) + x phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    """
    x = cache["x"]
    dy = check_grad("dy", dy, x.shape)
    if cache["approximate"] == "tanh":
        c = math.sqrt(2.0 / math.pi)
        t = cache["t"]  # tanh u from the forward, same shape as x
        du = 0.5 * x * (1.0 - t * t)  # dy/du per unit dy
        dgelu = 0.5 * (1.0 + t) + du * c * (1.0 + 3.0 * 0.044715 * (x * x))  # GELU'(x), same shape as x
    else:
        Phi = 0.5 * (1.0 + _erf(x / math.sqrt(2.0))).astype(x.dtype)  # same shape as x
        phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)  # standard normal density, same shape as x
        dgelu = Phi + x * phi  # GELU'(x), same shape as x
    dx = dy * dgelu  # same shape as x
    return dx


def relu_forward(x):
    """ReLU of every entry: y = max(x, 0).

    Shapes: x any shape; y the same. Returns (y, cache); the cache holds only the boolean x > 0.
    """
    x = as_float("x", x)
    positive = x > 0  # same shape as x
    y = np.where(positive, x, 0.0)  # same shape and dtype as x; +0.0 (never -0.0) where x <= 0
    cache = {"positive": positive}
    return y, cache


def relu_backward(dy, cache):
    """Gradient through ReLU: dx = dy where x > 0 and exactly 0 where x <= 0 (the choice ReLU'(0) = 0).

    Shapes: dy like x; returns dx like x.
    """
    positive = cache["positive"]
    dy = check_grad("dy", dy, positive.shape)
    dx = np.where(positive, dy, 0.0)  # same shape as x
    return dx
