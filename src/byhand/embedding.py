"""Token embeddings, learned position embeddings and sinusoidal positions.

Taught in Part II, chapter "Embeddings and positions" (lookup) and chapter "Into embeddings"
(the scatter-add backward); sinusoidal positions in Part III, the 2017 encoder-decoder.

A token embedding is a row lookup, x[t] = E[id_t]. Its gradient sends each row of dx back to the
row of E it came from, and a token that appears twice receives the sum of both gradients:

    dE[v] = sum over positions t with id_t = v of dx[t]    (0 for tokens not in the batch).
"""
from __future__ import annotations

import numpy as np

from byhand.checks import as_float, check_grad, check_ids, check_ndim, is_int


def embedding_forward(ids, E):
    """Look up the embedding row of every token id: x = E[ids].

    Shapes: ids (..., T) integers in [0, V), E (V, d_model); x (..., T, d_model).
    Returns (x, cache); the cache holds the ids and the shape and dtype of E.
    """
    E = as_float("E", E)
    check_ndim("E", E, (2,))
    ids = check_ids("ids", ids, E.shape[0])
    x = E[ids]  # (..., T, d_model), a copy (fancy indexing)
    cache = {"ids": ids, "E_shape": E.shape, "dtype": E.dtype}
    return x, cache


def embedding_backward(dx, cache):
    """Scatter-add the gradient of every looked-up row back into its row of E.

    Shapes: dx (..., T, d_model); returns dE (V, d_model).

        dE[v] = sum_{positions with id = v} dx[position]

    np.add.at (unbuffered) makes repeated ids accumulate; plain ``dE[ids] += dx`` would keep only
    the last of them. Rows of tokens that do not occur stay exactly 0.
    """
    ids = cache["ids"]
    dx = check_grad("dx", dx, ids.shape + (cache["E_shape"][1],))
    dE = np.zeros(cache["E_shape"], dtype=np.result_type(cache["dtype"], dx.dtype))  # (V, d_model)
    np.add.at(dE, ids, dx)  # dE[ids[...]] += dx[...], accumulating repeats
    return dE


def positions_forward(T: int, P):
    """Learned position embeddings for positions 0 .. T-1: the first T rows of P.

    Shapes: P (T_max, d_model); pos (T, d_model), to be broadcast-added to x (..., T, d_model).
    ValueError if T < 1 or T > T_max. Returns (pos, cache); the cache holds T and P's shape and dtype.
    """
    P = as_float("P", P)
    check_ndim("P", P, (2,))
    if not is_int(T):
        raise ValueError(f"T must be an integer number of tokens, got {T!r}")
    T_max = P.shape[0]
    if T < 1:
        raise ValueError(f"T = {T}: a sequence needs at least one token")
    if T > T_max:
        raise ValueError(f"T = {T} tokens is longer than the T_max = {T_max} learned positions")
    pos = P[:T].copy()  # (T, d_model), a copy so that editing it cannot change the parameter
    cache = {"T": int(T), "P_shape": P.shape, "dtype": P.dtype}
    return pos, cache


def positions_backward(dpos, cache):
    """Gradient of the position table: dpos summed over leading axes into the first T rows of dP.

    Shapes: dpos (..., T, d_model) (the gradient of x + pos, so any batch axes in front); returns
    dP (T_max, d_model), zero after row T.
    """
    T = cache["T"]
    T_max, d_model = cache["P_shape"]
    dpos = as_float("dpos", dpos)
    if dpos.ndim < 2 or dpos.shape[-2:] != (T, d_model):
        raise ValueError(f"dpos must have shape (..., {T}, {d_model}), got {dpos.shape}")
    dP = np.zeros((T_max, d_model), dtype=np.result_type(cache["dtype"], dpos.dtype))  # (T_max, d_model)
    dP[:T] = dpos.reshape(-1, T, d_model).sum(axis=0)  # (T, d_model) summed over batch axes
    return dP


def sinusoidal_divisors(d_model: int, base: float = 10000.0):
    """The wavelength divisors of the 2017 sinusoidal positions: div_i = base^(2i / d_model).

    Shapes: returns (d_model // 2,), for i = 0 .. d_model/2 - 1; div_0 = 1 and they grow geometrically.
    d_model must be a positive even integer (each divisor feeds one sin column and one cos column).
    """
    if not is_int(d_model) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be a positive even integer for sinusoidal positions, got {d_model!r}")
    if not base > 0:
        raise ValueError(f"base must be positive, got {base}")
    i = np.arange(d_model // 2)  # (d_model/2,)
    div = float(base) ** (2.0 * i / d_model)  # (d_model/2,)
    return div


def sinusoidal_positions(T: int, d_model: int, base: float = 10000.0):
    """The fixed positional encoding of Vaswani et al. (2017); no parameters, so no backward.

    Shapes: returns PE (T, d_model) with

        PE[pos, 2i] = sin(pos / div_i),    PE[pos, 2i + 1] = cos(pos / div_i),    div_i = base^(2i / d_model).
    """
    if not is_int(T) or T < 1:
        raise ValueError(f"T must be a positive integer number of tokens, got {T!r}")
    div = sinusoidal_divisors(d_model, base)  # (d_model/2,)
    angle = np.arange(T)[:, None] / div[None, :]  # (T, d_model/2)
    PE = np.empty((T, d_model))  # (T, d_model)
    PE[:, 0::2] = np.sin(angle)  # even columns
    PE[:, 1::2] = np.cos(angle)  # odd columns
    return PE
