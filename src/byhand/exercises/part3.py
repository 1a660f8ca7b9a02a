"""Exercises of Part III (chapters 30–37). Each solve computes its answer and the known wrong answers from ``byhand``."""
from __future__ import annotations

from . import Solution, exercise  # noqa: F401
