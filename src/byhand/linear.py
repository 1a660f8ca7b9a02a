"""The linear (affine) layer y = x W + b and the residual add, with their backward passes.

Taught in Part I, chapter "Backpropagation" (Y = XW gives dX = dY W^T and dW = X^T dY; residual
paths copy the gradient), and used in every projection of Part II and Part III.

Row-vector convention: activations are (..., d_in), weights (d_in, d_out), so each token's row
is multiplied from the left. Leading axes (batch, tokens) are all "rows": the weight gradient sums
over every one of them.
"""
from __future__ import annotations

from byhand.checks import as_float, check_grad, check_last_dim, check_ndim, check_nonempty


def linear_forward(x, W, b=None):
    """Affine map of the last axis: y = x W + b.

    Shapes: x (..., d_in), W (d_in, d_out), b (d_out,) or None; y (..., d_out).
    Returns (y, cache); the cache holds x, W and whether there was a bias.
    """
    x = as_float("x", x)
    W = as_float("W", W)
    check_ndim("W", W, (2,))
    check_nonempty("W", W)  # a width of 0 would give an all-zero y without complaint
    check_last_dim("x", x, W.shape[0], "d_in")
    # one 2-D product over all rows at once: a stacked (B, T, d) @ W runs one product per batch entry and is slower
    y = (x.reshape(-1, W.shape[0]) @ W).reshape(x.shape[:-1] + (W.shape[1],))  # (..., d_out)
    if b is not None:
        b = as_float("b", b)
        check_ndim("b", b, (1,))
        check_last_dim("b", b, W.shape[1], "d_out")
        y = y + b  # (..., d_out), b broadcast over every row
    cache = {"x": x, "W": W, "has_b": b is not None}
    return y, cache


def linear_backward(dy, cache):
    """Gradients of y = x W + b, in reverse order of the forward.

    Shapes: dy (..., d_out); returns dx (..., d_in), dW (d_in, d_out), db (d_out,) or None.

        db = sum over rows of dy,    dW = x^T dy (summed over every leading axis),    dx = dy W^T.
    """
    x, W = cache["x"], cache["W"]
    d_in, d_out = W.shape
    dy = check_grad("dy", dy, x.shape[:-1] + (d_out,))
    dy_rows = dy.reshape(-1, d_out)  # (N, d_out), N = all leading axes flattened
    db = dy_rows.sum(axis=0) if cache["has_b"] else None  # (d_out,)
    dW = x.reshape(-1, d_in).T @ dy_rows  # (d_in, d_out)
    dx = (dy_rows @ W.T).reshape(x.shape)  # (..., d_in), as one 2-D product
    return dx, dW, db


def residual_forward(x, y):
    """Residual add: out = x + y (the skip path plus the sublayer's output).

    Shapes: x and y the same shape (..., d_model); out the same. No broadcasting, so that a shape
    slip is an error rather than a silent sum. Returns (out, cache); the cache holds only the shape.
    """
    x = as_float("x", x)
    y = as_float("y", y)
    if x.shape != y.shape:
        raise ValueError(f"residual inputs must have the same shape, got x {x.shape} and y {y.shape}")
    out = x + y  # (..., d_model)
    cache = {"shape": x.shape}
    return out, cache


def residual_backward(dout, cache):
    """Gradient of out = x + y: both inputs receive dout unchanged (dx = dout, dy = dout).

    Shapes: dout (..., d_model); returns dx and dy of the same shape, as separate copies so that a
    caller adding into one does not change the other.
    """
    dout = check_grad("dout", dout, cache["shape"])
    dy = dout.copy()  # (..., d_model)
    dx = dout.copy()  # (..., d_model)
    return dx, dy
