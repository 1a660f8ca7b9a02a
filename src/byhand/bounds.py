"""Bounds for numbers at rounding-noise level: show "< 1e-9", never the noise digits.

A finite-difference gap, an error column or a difference of two near-equal numbers has digits that depend on
the CPU's SIMD kernels, the BLAS library and its thread count. Printed in full, they differ from machine to
machine and fail nbval on a reader's laptop. ``below`` checks the value against a power-of-ten bound that holds on
every IEEE-754 machine and returns an object that prints as that bound, so the check and the text are one line.
Used wherever a chapter shows such a gap, first in Part I, "Derivatives".
"""
from __future__ import annotations

import math

import numpy as np


class BoundExceeded(AssertionError):
    """A value that should sit at rounding-noise level is larger than its bound."""


class Below:
    """``|value| < bound``, checked when made. ``str``/``repr`` give ``< 1e-9``; ``tex`` gives ``< 10^{-9}``."""

    __slots__ = ("value", "bound")

    def __init__(self, value: float, bound: float):
        self.value = value  # the largest |x| that was checked (noise: do not print it)
        self.bound = bound  # a power of ten

    @property
    def exponent(self) -> int:
        return round(math.log10(self.bound))

    @property
    def text(self) -> str:
        return f"< 1e{self.exponent}"

    @property
    def tex(self) -> str:
        return rf"< 10^{{{self.exponent}}}"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:  # what glue and nbval see: the bound, never the noise
        return self.text

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)


def below(x, bound: float, name: str = "value") -> Below:
    """Check that every entry of ``x`` has ``|x| < bound`` and return the bound as a printable object.

    ``bound`` must be a positive power of ten (1e-9, 1e-7, ...). ``x`` may be a number or an array; the largest
    absolute entry is checked. NaN or inf raise ``ValueError``; a value at or above the bound raises
    ``BoundExceeded`` (an ``AssertionError``), naming ``name``, the value and the bound.
    """
    if isinstance(bound, bool) or not isinstance(bound, (int, float, np.floating)) or not bound > 0:
        raise ValueError(f"bound for {name} must be a positive number, got {bound!r}")
    exp = math.log10(float(bound))
    if abs(exp - round(exp)) > 1e-9:
        raise ValueError(f"bound for {name} must be a power of ten such as 1e-9, got {bound!r}")
    a = np.abs(np.asarray(x, dtype=np.float64))
    if a.size == 0:
        raise ValueError(f"{name} is empty: there is nothing to bound")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    worst = float(a.max())
    if not worst < bound:
        raise BoundExceeded(f"{name} = {worst:.3e} is not below {float(bound):.0e}")
    return Below(worst, float(10.0 ** round(exp)))
