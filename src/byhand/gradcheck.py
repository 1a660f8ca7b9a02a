"""Gradient checking: compare a hand-written backward with central finite differences.

Taught in Part II, chapter "Checking every gradient" (central differences themselves are met in
Part I, chapter "Derivatives"). Every backward in ``byhand`` is tested with this module, and the
book runs it on every parameter of every model.

The numeric gradient of a scalar function f at a parameter entry theta_k is the central difference

    df/dtheta_k ~ (f(theta + h e_k) - f(theta - h e_k)) / (2h),

whose truncation error is O(h^2) and whose round-off error is O(eps_machine |f| / h). In float64
with h = 1e-6 both are far below the 1e-6 relative tolerance used throughout the book.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from byhand.checks import check_dict, check_finite, check_number


def _float64_copies(params: dict) -> dict:
    """Copy every floating array of ``params`` to float64; other entries (token ids, masks) are copied as they are."""
    work = {}
    for name, value in params.items():
        a = np.asarray(value)
        # float64 so that round-off stays far below the tolerance; copy so the caller's arrays are never touched
        work[name] = a.astype(np.float64, copy=True) if a.dtype.kind == "f" else a.copy()
    return work


def _resolve_names(f, params: dict, names: Iterable[str] | None) -> list[str]:
    """The names to check: ``names`` if given (each must be in ``params``), else every floating entry of ``params``.
    Also refuses an ``f`` that cannot be called and ``params`` that is not a dict."""
    if not callable(f):
        raise ValueError(f"f must be a function params -> scalar, got {type(f).__name__}")
    check_dict("params", params)
    if isinstance(names, str):  # a lone name would be iterated letter by letter
        raise ValueError(f"names must be a list of parameter names, got the string {names!r}")
    if names is None:
        names = [k for k, v in params.items() if np.asarray(v).dtype.kind == "f"]
    names = list(names)
    for name in names:
        if name not in params:
            raise ValueError(f"name {name!r} is not in params (params has {', '.join(map(repr, params))})")
        if np.asarray(params[name]).dtype.kind not in "fiu":
            raise ValueError(f"params[{name!r}] must be a numeric array, got dtype {np.asarray(params[name]).dtype}")
        check_finite(f"params[{name!r}]", np.asarray(params[name], dtype=np.float64))  # a NaN start point has no slope
    return names


def _scalar(value, name: str) -> float:
    """The value of f as a Python float, refusing arrays with more than one entry and NaN/inf."""
    a = np.asarray(value)
    if a.size != 1:
        raise ValueError(f"f must return a scalar, got shape {a.shape} while perturbing {name!r}")
    out = float(a.reshape(()))
    if not np.isfinite(out):
        raise ValueError(f"f returned {out} while perturbing {name!r}")
    return out


def numerical_grads(
    f: Callable[[dict], float],
    params: dict,
    names: Iterable[str] | None = None,
    h: float = 1e-6,
) -> dict[str, np.ndarray]:
    """Central-difference gradients of the scalar ``f(params)`` with respect to each named array.

    ``f`` is called with a dict holding float64 copies of ``params`` (integer entries such as token ids
    are passed through unchanged); ``params`` itself is never modified. ``names`` defaults to every
    floating entry. Each returned gradient has the shape of its parameter, in float64:

        grad[k] = (f(theta + h e_k) - f(theta - h e_k)) / (2h)    for every entry k.

    Cost: two calls of ``f`` per entry, so use it on small shapes.
    """
    check_number("step h", h, positive=True)
    names = _resolve_names(f, params, names)
    work = _float64_copies(params)
    grads = {}
    for name in names:
        theta = work[name] = np.asarray(work[name], dtype=np.float64)  # integer parameters are differentiated as floats
        flat = theta.reshape(-1)  # a view: writing to it perturbs work[name] in place
        grad = np.zeros(theta.size)  # (theta.size,)
        for k in range(theta.size):  # one entry at a time: this loop is the definition, not a hot path
            saved = flat[k]
            flat[k] = saved + h
            f_plus = _scalar(f(work), name)
            flat[k] = saved - h
            f_minus = _scalar(f(work), name)
            flat[k] = saved  # restore exactly, so later entries see the unperturbed point
            grad[k] = (f_plus - f_minus) / (2.0 * h)
        grads[name] = grad.reshape(theta.shape)  # same shape as the parameter
    return grads


@dataclass(frozen=True)
class GradcheckRow:
    """One parameter's comparison of analytic and numeric gradient."""

    name: str  # the parameter's name in the params dict
    shape: tuple[int, ...]  # the parameter's shape
    max_abs_err: float  # max |analytic - numeric| over all entries
    rel_err: float  # max_abs_err / max(max|analytic|, max|numeric|, 1e-300)
    passed: bool  # rel_err <= rtol or max_abs_err <= atol


@dataclass(frozen=True)
class GradcheckReport:
    """The result of ``gradcheck``: one row per parameter, with the tolerances that judged them."""

    rows: tuple[GradcheckRow, ...]  # in the order the names were checked
    rtol: float = 1e-6  # relative tolerance a row must meet (or atol)
    atol: float = 1e-9  # absolute tolerance, for gradients that are (almost) all zero

    @property
    def passed(self) -> bool:
        """True when every row passed."""
        return all(row.passed for row in self.rows)

    def failures(self) -> list[GradcheckRow]:
        """The rows that failed, in order."""
        return [row for row in self.rows if not row.passed]

    def to_markdown(self, digits: int = 2) -> str:
        """A Markdown table with one row per parameter; errors in scientific notation with ``digits`` decimals."""
        lines = [
            "| parameter | shape | max abs error | relative error | passed |",
            "|---|---|---:|---:|:---:|",
        ]
        for row in self.rows:
            shape = str(tuple(row.shape))  # "(2, 3)", and "(3,)" for vectors
            lines.append(
                f"| {row.name} | {shape} | {row.max_abs_err:.{digits}e} | {row.rel_err:.{digits}e} | "
                f"{'yes' if row.passed else 'NO'} |"
            )
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def gradcheck(
    f: Callable[[dict], float],
    params: dict,
    grads: dict,
    names: Iterable[str] | None = None,
    h: float = 1e-6,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> GradcheckReport:
    """Compare analytic gradients ``grads[name]`` with central differences of ``f`` at ``params``.

    For each name (default: every floating entry of ``params``):

        max_abs_err = max |analytic - numeric|
        rel_err     = max_abs_err / max(max|analytic|, max|numeric|, 1e-300)
        passed      = rel_err <= rtol  or  max_abs_err <= atol

    Returns a ``GradcheckReport``; it does not raise on a failed check, so a chapter can show the
    failing row. A name missing from ``grads`` (or mapped to None), or an analytic gradient of the
    wrong shape, is a ValueError naming it.
    """
    names = _resolve_names(f, params, names)
    check_dict("grads", grads)
    for name in names:  # check everything before the (slow) numeric pass
        if name not in grads or grads[name] is None:
            raise ValueError(f"grads has no gradient for parameter {name!r}")
        want = np.shape(params[name])
        if np.shape(grads[name]) != want:
            raise ValueError(f"grads[{name!r}] has shape {np.shape(grads[name])}, but the parameter has shape {want}")
    numeric = numerical_grads(f, params, names=names, h=h)
    return compare_grads(grads, numeric, names=names, rtol=rtol, atol=atol)


def compare_grads(
    grads: dict,
    numeric: dict,
    names: Iterable[str] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-9,
) -> GradcheckReport:
    """Judge analytic gradients ``grads[name]`` against numeric ones ``numeric[name]`` already computed (for example
    by ``numerical_grads``), by the rule of ``gradcheck``, which is ``numerical_grads`` followed by this function.

    Use it when a chapter keeps the numeric gradients for more than the report, so that the slow central
    differences run once. ``names`` defaults to every name of ``numeric``; a name missing from either dict, or two
    arrays of different shapes, is a ValueError naming it.
    """
    check_dict("grads", grads)
    check_dict("numeric", numeric)
    if isinstance(names, str):
        raise ValueError(f"names must be a list of parameter names, got the string {names!r}")
    names = list(numeric) if names is None else list(names)
    rows = []
    for name in names:
        if grads.get(name) is None or numeric.get(name) is None:
            raise ValueError(f"no gradient for parameter {name!r} in {'grads' if grads.get(name) is None else 'numeric'}")
        analytic = np.asarray(grads[name], dtype=np.float64)  # same shape as the parameter
        if analytic.shape != np.shape(numeric[name]):
            raise ValueError(f"grads[{name!r}] has shape {analytic.shape}, numeric[{name!r}] {np.shape(numeric[name])}")
        # a NaN in the analytic gradient fails the check (the thing under test); a NaN in the yardstick is bad input
        check_finite(f"numeric[{name!r}]", np.asarray(numeric[name], dtype=np.float64))
        diff = np.abs(analytic - numeric[name])  # same shape as the parameter
        max_abs_err = float(diff.max()) if diff.size else 0.0
        scale = max(float(np.abs(analytic).max(initial=0.0)), float(np.abs(numeric[name]).max(initial=0.0)), 1e-300)
        rel_err = max_abs_err / scale
        passed = bool(rel_err <= rtol or max_abs_err <= atol)
        rows.append(GradcheckRow(name, tuple(int(n) for n in analytic.shape), max_abs_err, rel_err, passed))
    return GradcheckReport(rows=tuple(rows), rtol=rtol, atol=atol)
