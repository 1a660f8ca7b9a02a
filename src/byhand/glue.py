"""Glue: hand a computed value to the book's prose.

In the built book, ``{glue:text}`name:.3f``` in a Markdown cell shows a value that a code cell computed, so no
number is ever typed into the prose. myst-nb provides the real ``glue``; on Colab (no myst-nb) this falls back
to IPython's display so that the notebook still runs. Used by every chapter; introduced in Part I, "Dot products".
"""
from __future__ import annotations

import numbers

import numpy as np

try:  # myst-nb is in the book's pins; Colab does not have it
    from myst_nb import glue as _myst_glue
except ImportError:  # pragma: no cover - exercised only where myst-nb is absent
    _myst_glue = None


def plain(value):
    """Return ``value`` as a plain Python scalar when it is a NumPy scalar, so that glue stores ``0.5``, not ``np.float64(0.5)``."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def glue(name: str, value, display: bool = False):
    """Record ``value`` under ``name`` for ``{glue:...}`` roles; show it too when ``display`` is true.

    Numbers are converted to plain Python scalars first. Returns the stored value, so a cell can
    ``assert glue("loss", loss) > 0``-style checks in one line.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"glue name must be a Python identifier, got {name!r}")
    value = plain(value)
    if isinstance(value, numbers.Real) and not np.isfinite(value):
        raise ValueError(f"glue value for {name!r} is not finite: {value}")
    if _myst_glue is not None:
        _myst_glue(name, value, display=display)
    elif display:  # pragma: no cover - Colab fallback
        from IPython.display import display as ipy_display

        ipy_display(value)
    return value
