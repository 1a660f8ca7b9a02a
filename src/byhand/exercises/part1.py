"""Exercises of Part I (chapters 01–06). Each solve computes its answer and the known wrong answers from ``byhand``."""
from __future__ import annotations

from . import Solution, exercise  # noqa: F401
