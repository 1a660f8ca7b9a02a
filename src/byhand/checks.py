"""Input checks shared by every module: bad input becomes a ValueError that names the problem.

No chapter teaches this module; it is what makes ``byhand`` refuse NaN, wrong shapes, empty and
too long sequences and out-of-range token ids instead of silently computing nonsense. Every message
names the argument, what was expected and what came.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def all_finite(a: np.ndarray) -> bool:
    """True when no entry is NaN or ±inf. Fast path: a sum is finite only if every entry is (NaN and inf propagate);
    only when the sum is not finite (or overflowed) are the entries scanned one by one."""
    if a.size == 0 or np.isfinite(a.sum(dtype=np.float64)):
        return True
    return bool(np.all(np.isfinite(a)))


def check_finite(name: str, a: np.ndarray, neg_inf_hint: str = "") -> None:
    """Raise unless every entry of the float array ``a`` is finite; the message gives the first bad entry and
    its index, and ``neg_inf_hint`` (if given) when ``a`` holds -inf."""
    if all_finite(a):
        return
    index = tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])  # first NaN or inf, in C order
    where = f" at index {index}" if index else ""
    message = f"{name} contains NaN or inf ({a[index]}{where})"
    if neg_inf_hint and np.any(np.isneginf(a)):
        message += f": {neg_inf_hint}"
    raise ValueError(message)


def _array(name: str, x) -> np.ndarray:
    """``np.asarray(x)``, with a ragged nested list refused by name rather than by NumPy's own words."""
    try:
        return np.asarray(x)
    except (ValueError, TypeError):
        raise ValueError(f"{name} must be a rectangular array (rows of equal length), got a ragged "
                         f"{type(x).__name__}") from None


def _dtype_text(x, a: np.ndarray) -> str:
    """What came, for a message: the dtype, or the Python type when NumPy could only store objects."""
    return f"dtype {a.dtype}" if a.dtype != object else f"{type(x).__name__} (dtype object)"


def check_numeric(name: str, x) -> np.ndarray:
    """Return ``np.asarray(x)``, refusing strings, objects and complex numbers (no scan of the values)."""
    a = _array(name, x)
    if a.dtype.kind not in "fiub":
        raise ValueError(f"{name} must be numeric, got {_dtype_text(x, a)}")
    return a


def as_float(name: str, x, neg_inf_hint: str = "", booleans: bool = True) -> np.ndarray:
    """Return ``x`` as a floating ndarray (float64 unless already float32/float64), refusing NaN and inf
    (``neg_inf_hint`` is added to the message when the culprit is -inf; see ``check_finite``), and booleans
    unless ``booleans``."""
    a = check_numeric(name, x)
    if not booleans and a.dtype == np.bool_:
        raise ValueError(f"{name} must be numbers, got dtype bool")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    check_finite(name, a, neg_inf_hint)
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


def check_nonempty(name: str, x: np.ndarray) -> None:
    """Raise when ``x`` has no entries (some axis of length 0)."""
    if x.size == 0:
        raise ValueError(f"{name} is empty, got shape {x.shape}")


def is_int(value) -> bool:
    """True for a Python or NumPy integer (bools, floats, strings and arrays are not integers here)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value, low: int = 1) -> int:
    """Return ``value`` as an int, refusing bools, floats, strings and values below ``low``."""
    if not is_int(value) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_cache(cache, keys: tuple[str, ...], forward: str) -> Mapping:
    """Return ``cache``, which must be the dict that ``forward`` returned (it holds every name in ``keys``)."""
    if not isinstance(cache, Mapping) or any(key not in cache for key in keys):
        raise ValueError(f"cache must be the cache {forward} returned (a dict with {', '.join(keys)}), "
                         f"got {type(cache).__name__}")
    return cache


def check_grad(name: str, grad, shape: tuple, of: str = "") -> np.ndarray:
    """A backward pass's incoming gradient: ``grad`` as floats (``as_float``), of the forward output's ``shape``
    (``of`` names that output in the message, as in "dp must have the shape of p (2, 3)")."""
    grad = as_float(name, grad)
    if grad.shape != tuple(shape):
        want = f"the shape of {of} {tuple(shape)}" if of else f"shape {tuple(shape)}"
        raise ValueError(f"{name} must have {want}, got {grad.shape}")
    return grad


def check_instance(name: str, obj, cls: type, what: str = "") -> None:
    """Raise unless ``obj`` is a ``cls`` (a config dataclass, an optimizer state); ``what`` words the expected
    type in the message (default: "a GPTConfig", "an OptState")."""
    if not isinstance(obj, cls):
        what = what or ("an " if cls.__name__[0] in "AEIOU" else "a ") + cls.__name__
        raise ValueError(f"{name} must be {what}, got {type(obj).__name__}")


def is_number(value) -> bool:
    """True for a real Python or NumPy number (bools, strings and arrays are not numbers here)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def check_number(name: str, value, positive: bool = False) -> None:
    """Raise unless ``value`` is a finite real number >= 0 (> 0 when ``positive``)."""
    if not (is_number(value) and np.isfinite(value) and (value > 0 if positive else value >= 0)):
        raise ValueError(f"{name} must be {'positive' if positive else '>= 0'} (a finite number), got {value!r}")


def float_dtype(dtype) -> np.dtype:
    """``np.dtype(dtype)``, which must be float32 or float64 (the two dtypes byhand computes in)."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}") from None
    if d not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {d}")
    return d


def check_dict(name: str, obj) -> None:
    """Raise unless ``obj`` is a dict (any Mapping) of name -> array, as params, grads and tensors are."""
    check_instance(name, obj, Mapping, "a dict of name -> array")


def check_ids(name: str, ids, vocab_size: int) -> np.ndarray:
    """Return integer token ids as an ndarray, refusing empty input, floats and ids outside [0, vocab_size)."""
    a = _array(name, ids)
    # empty first: np.asarray([]) is float64, and "empty" is the problem to name, not the dtype
    if a.size == 0 or (a.ndim >= 1 and a.shape[-1] == 0):
        raise ValueError(f"{name} is an empty sequence (shape {a.shape})")
    if a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integer token ids, got {_dtype_text(ids, a)}")
    bad = (a < 0) | (a >= vocab_size)
    if np.any(bad):
        first = int(a[bad].flat[0])
        raise ValueError(f"{name} has token id {first} outside the vocabulary [0, {vocab_size})")
    return a.astype(np.int64)


def check_sequence_ids(name: str, ids, vocab_size: int, max_len: int, limit: str) -> np.ndarray:
    """``check_ids`` for a model's input: shape (T,) or (B, T) with 1 <= T <= max_len (``limit`` names max_len in
    the message). 2-D ids are always (B, T): a (B, 1) array is B sequences of one token each (the first step of B
    prompts), as in every GPT library."""
    a = check_ids(name, ids, vocab_size)
    if a.ndim not in (1, 2):
        raise ValueError(f"{name} must have shape (T,) or (B, T), got {a.shape}")
    if a.shape[-1] > max_len:
        raise ValueError(f"{name} has {a.shape[-1]} tokens, longer than {limit}")
    return a


def check_text(name: str, text) -> str:
    """Return ``text``, which must be a string (a list of words or bytes would be read wrongly, or fail far away)."""
    check_instance(name, text, str, "a string")
    return text


def check_params(params: dict, expected: dict[str, tuple[int, ...]]) -> None:
    """Check a params dict against the expected ``name -> shape`` table: no missing, unknown or misshapen entries."""
    check_dict("params", params)
    unknown = sorted(set(params) - set(expected))
    if unknown:
        raise ValueError(f"unknown parameter name(s): {', '.join(map(str, unknown))}")
    missing = sorted(set(expected) - set(params))
    if missing:
        raise ValueError(f"missing parameter(s): {', '.join(missing)}")
    for name, shape in expected.items():
        arr = _array(f"parameter {name}", params[name])
        if arr.shape != tuple(shape):
            raise ValueError(f"parameter {name} must have shape {tuple(shape)}, got {arr.shape}")
        if arr.dtype.kind in "fc":
            check_finite(f"parameter {name}", arr)


def float_params(params: dict, expected: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
    """``check_params`` against the ``name -> shape`` table, then every array as float32/float64 (others become
    float64). The models' shared entry check."""
    check_params(params, expected)
    arrays = {name: np.asarray(value) for name, value in params.items()}
    return {name: a if a.dtype in (np.float32, np.float64) else as_float(name, a) for name, a in arrays.items()}
