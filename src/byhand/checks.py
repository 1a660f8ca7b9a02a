"""Input checks shared by every module: bad input becomes a ValueError that names the problem.

No chapter teaches this module; it is what makes ``byhand`` refuse NaN, wrong shapes and
out-of-range token ids instead of silently computing nonsense.
"""
from __future__ import annotations

import numpy as np


def all_finite(a: np.ndarray) -> bool:
    """True when no entry is NaN or ±inf. Fast path: a sum is finite only if every entry is (NaN and inf propagate);
    only when the sum is not finite (or overflowed) are the entries scanned one by one."""
    if a.size == 0 or np.isfinite(a.sum(dtype=np.float64)):
        return True
    return bool(np.all(np.isfinite(a)))


def as_float(name: str, x) -> np.ndarray:
    """Return ``x`` as a floating ndarray (float64 unless already float32/float64), refusing NaN and inf."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got dtype {a.dtype}")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    if not all_finite(a):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def check_ndim(name: str, x: np.ndarray, ndims: tuple[int, ...]) -> None:
    """Raise unless ``x.ndim`` is one of ``ndims``."""
    if x.ndim not in ndims:
        want = " or ".join(str(n) for n in ndims)
        raise ValueError(f"{name} must have {want} dimensions, got shape {x.shape}")


def check_last_dim(name: str, x: np.ndarray, size: int, what: str) -> None:
    """Raise unless the last axis of ``x`` has ``size`` entries (``what`` names the expected size)."""
    if x.ndim == 0 or x.shape[-1] != size:
        raise ValueError(f"{name} must have last dimension {what} = {size}, got shape {x.shape}")


def check_ids(name: str, ids, vocab_size: int) -> np.ndarray:
    """Return integer token ids as an ndarray, refusing floats, empty input and ids outside [0, vocab_size)."""
    a = np.asarray(ids)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integer token ids, got dtype {a.dtype}")
    if a.size == 0 or (a.ndim >= 1 and a.shape[-1] == 0):
        raise ValueError(f"{name} is an empty sequence")
    bad = (a < 0) | (a >= vocab_size)
    if np.any(bad):
        first = int(a[bad].flat[0])
        raise ValueError(f"{name} has token id {first} outside the vocabulary [0, {vocab_size})")
    return a.astype(np.int64)


def check_params(params: dict, expected: dict[str, tuple[int, ...]]) -> None:
    """Check a params dict against the expected ``name -> shape`` table: no missing, unknown or misshapen entries."""
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise ValueError(f"unknown parameter name(s): {', '.join(unknown)}")
    missing = sorted(set(expected) - set(params))
    if missing:
        raise ValueError(f"missing parameter(s): {', '.join(missing)}")
    for name, shape in expected.items():
        arr = np.asarray(params[name])
        if arr.shape != tuple(shape):
            raise ValueError(f"parameter {name} must have shape {tuple(shape)}, got {arr.shape}")
        if arr.dtype.kind in "fc" and not all_finite(arr):
            raise ValueError(f"parameter {name} contains NaN or inf")


def float_params(params: dict, expected: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """``check_params`` against the ``name -> shape`` table, then every array as float32/float64 (others become
    float64). The models' shared entry check."""
    check_params(params, expected)
    arrays = {name: np.asarray(value) for name, value in params.items()}
    return {name: a if a.dtype in (np.float32, np.float64) else as_float(name, a) for name, a in arrays.items()}
