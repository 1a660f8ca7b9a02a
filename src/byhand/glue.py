"""Glue: hand a computed value to the book's prose, with a note of where it came from.

In the built book, ``{glue:text}`name:.3f``` in a Markdown cell shows a value that a code cell computed, so no
number is ever typed into the prose. The output that ``glue`` leaves in the notebook is exactly myst-nb's (the
``application/papermill.record/...`` data and its ``scrapbook`` note). One thing is added, in the output's
*metadata* only: the provenance of the value, that is the source text of the call that glued it, its line in the
cell, and what kind of value it is (a float, an integer, a bound, an array's shape). The book's Sphinx extension
(``_ext/provenance.py``) turns it into the popover of each number on the page. The metadata holds nothing that
changes from run to run or from machine to machine (no value digits, no addresses, no timings), and nbval does not
compare output metadata. On Colab (no myst-nb) the call falls back to IPython's display so that the notebook still
runs. Used by every chapter; introduced in Part I, "Dot products".
"""
from __future__ import annotations

import ast
import inspect
import linecache
import numbers
import sys

import numpy as np

try:  # myst-nb is in the book's pins; Colab does not have it
    from IPython.core.formatters import format_display_data
    from IPython.display import display as _display
    from myst_nb.ext.glue import GLUE_PREFIX
except ImportError:  # pragma: no cover - exercised only where myst-nb is absent
    GLUE_PREFIX = None

PROVENANCE_KEY = "byhand_provenance"  # the output-metadata key that the book's extension reads
# A float is recorded to this many significant digits: enough for any format the prose uses (at most 5 decimals),
# few enough that every IEEE machine records the same text. Two CPUs differ in the last bits of a result (SIMD loops,
# BLAS kernels), so the full repr changes from machine to machine (0.84057841680387 on one, 0.8405784168038699 on
# another), and regenerating an unchanged chapter would rewrite its notebook.
RECORD_DIGITS = 10


def recorded(value):
    """The value as glue records it: a float rounded to ``RECORD_DIGITS`` significant digits, anything else as is."""
    if isinstance(value, float):
        return float(f"{value:.{RECORD_DIGITS}g}")
    return value


def plain(value):
    """Return ``value`` as a plain Python scalar when it is a NumPy scalar, so that glue stores ``0.5``, not ``np.float64(0.5)``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def _caller(frame):
    """The first frame outside the ``byhand`` package: the notebook cell (or a function a cell defined)."""
    while frame is not None and str(frame.f_globals.get("__name__", "")).split(".")[0] == "byhand":
        frame = frame.f_back
    return frame


def _segment(frame) -> tuple[str, int] | None:
    """The source text of the call that the frame is running, and the line of the cell where it starts (1-based)."""
    info = inspect.getframeinfo(frame, context=0)
    pos = info.positions  # Python >= 3.11: where the running call starts and ends
    lines = linecache.getlines(info.filename, frame.f_globals)
    if pos is None or pos.lineno is None or pos.end_lineno is None or not lines:
        return None
    chunk = lines[pos.lineno - 1:pos.end_lineno]
    if not chunk:
        return None
    if len(chunk) == 1:
        text = chunk[0][pos.col_offset:pos.end_col_offset]
    else:  # a call written over several lines keeps its lines as written
        text = chunk[0][pos.col_offset:] + "".join(chunk[1:-1]) + chunk[-1][:pos.end_col_offset]
    return text.rstrip(), pos.lineno


def kind(value) -> str:
    """What sort of value was glued, in words the popover can show: a float, an integer, a bound, a shape."""
    if isinstance(value, bool):
        return "a truth value"
    if isinstance(value, numbers.Integral):
        return "an integer"
    if isinstance(value, numbers.Real):
        return "a float"
    if isinstance(value, str):
        return "text"
    if type(value).__name__ == "Below":  # byhand.bounds: a rounding-noise value, glued as its bound
        return "a bound (rounding noise: only the bound holds on every machine)"
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"an array of shape {tuple(int(n) for n in shape)}"
    return type(value).__name__


def _shapes(text: str, frame) -> list[str]:
    """``name of shape (a, b)`` for each array that the glued expression reads by name, e.g. ``x0`` in ``x0[2, 4]``."""
    try:
        call = ast.parse("(" + text + "\n)", mode="eval").body
    except SyntaxError:
        return []
    if not isinstance(call, ast.Call) or len(call.args) < 2:
        return []
    found = []
    for node in ast.walk(call.args[1]):  # the value argument only
        if isinstance(node, ast.Name) and node.id not in found:
            obj = frame.f_locals.get(node.id, frame.f_globals.get(node.id))
            if isinstance(obj, np.ndarray) and obj.ndim > 0:
                found.append(node.id)
    return [f"{n} of shape {tuple(int(k) for k in frame.f_locals.get(n, frame.f_globals.get(n)).shape)}" for n in found]


def provenance(value, frame=None) -> dict:
    """Where a glued value comes from: the call's source text, its line in the cell, the value's kind and shapes.

    ``frame`` is the caller of ``glue`` (found from the stack when not given). Everything recorded is the same on
    every run and every machine; the value's digits are not recorded here (myst-nb's glue data holds them).
    """
    frame = _caller(frame if frame is not None else sys._getframe(1))
    found = _segment(frame) if frame is not None else None
    if found is None:  # the build then fails for this name, saying its source is unknown
        return {"source": None, "line": None, "kind": kind(value), "shapes": []}
    text, line = found
    return {"source": text, "line": line, "kind": kind(value), "shapes": _shapes(text, frame)}


def glue(name: str, value, display: bool = False):
    """Record ``value`` under ``name`` for ``{glue:...}`` roles; show it too when ``display`` is true.

    Numbers are converted to plain Python scalars first, and a float is recorded to ``RECORD_DIGITS`` significant
    digits (``recorded``). Returns the plain value, unrounded, so a cell can ``assert glue("loss", loss) > 0``-style
    checks in one line. The output is myst-nb's glue output, with the
    value's provenance added to its metadata (see the module docstring).
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"glue name must be a Python identifier, got {name!r}")
    value = plain(value)
    if isinstance(value, numbers.Real) and not np.isfinite(value):
        raise ValueError(f"glue value for {name!r} is not finite: {value}")
    if GLUE_PREFIX is not None:
        # what myst_nb.glue does, plus one metadata entry (tests/test_glue.py checks the two outputs agree)
        bundle, metadata = format_display_data(recorded(value))
        prefix = "" if display else GLUE_PREFIX
        metadata["scrapbook"] = dict(name=name, mime_prefix=prefix)
        metadata[PROVENANCE_KEY] = provenance(value, sys._getframe(1))
        _display({prefix + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)
    elif display:  # pragma: no cover - Colab fallback
        from IPython.display import display as ipy_display

        ipy_display(value)
    return value
