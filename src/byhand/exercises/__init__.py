"""Exercises that check themselves: ``check("attention.2", answer)`` says right, or not yet and why.

Each exercise is registered with a ``solve()`` function that computes its answer from ``byhand`` when it is checked,
never from a stored literal, together with the answers that typical mistakes give (W_O in place of W_Oᵀ, a forgotten
√d_k, p in place of p − y), each with the hint a learner should read. The same registry feeds three faces:

- in the kernel, ``check(key, answer)`` compares a number, an array or a function with the computed answer;
- on the static page, ``answer_box(key)`` writes a small answer box whose expected value and hints were computed when
  the page was built, checked in the browser by ``exercises.js`` with no kernel and no network;
- ``index_rows()`` lists every exercise for the instructors' index page.

The exercises themselves live beside this module, one file per part (``part1.py`` …), and each chapter ends with its
own. Introduced in Part I, "Dot products"; every chapter uses it.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

KINDS = ("by hand", "predict", "compute", "code", "find the bug")
_REGISTRY: dict[str, "Exercise"] = {}


@dataclass(frozen=True)
class Solution:
    """What ``solve()`` returns: the right answer and what each known mistake gives.

    ``answer`` is a number or an array, or for a code exercise the reference function. ``wrong`` maps a hint (one
    sentence naming the mistake) to the value, or function, that the mistake produces. ``cases`` are the argument
    tuples a code exercise calls both functions with.
    """

    answer: object
    wrong: Mapping[str, object] = field(default_factory=dict)
    cases: tuple = ()


@dataclass(frozen=True)
class Exercise:
    key: str  # "<topic>.<n>", e.g. "attention.2"; also the anchor "ex-attention-2" in its chapter
    chapter: str  # the notebook's file stem, e.g. "22_backward_attention"
    kind: str  # one of KINDS
    level: int  # difficulty 1 (a few minutes) .. 3 (a real think)
    prompt: str  # one line, for the index
    solve: Callable[[], Solution]
    atol: float = 5e-4  # a typed answer within atol + rtol·|answer| is right ...
    rtol: float = 0.0
    precision: tuple = ("sf", 3)  # ... and so is the answer rounded as the task asks: ("dp", 4) is four decimals

    @property
    def anchor(self) -> str:
        return "ex-" + self.key.replace(".", "-")

    def rounded(self, answer: float) -> float:
        """``answer`` rounded to the precision the task asks for (three significant figures where it names none)."""
        how, n = self.precision
        if how == "sf" and answer != 0:
            return float(f"{answer:.{n}g}")
        return round(float(answer), n) if how == "dp" else float(answer)

    def tolerance(self, answer: float) -> float:
        """How far a typed answer may sit from ``answer``: atol + rtol·|answer|, and never less than half a unit
        of the asked precision, so that the right answer rounded as the task asks is always accepted."""
        how, n = self.precision
        if how == "dp":
            unit = 10.0 ** -n
        elif answer != 0:
            unit = 10.0 ** (math.floor(math.log10(abs(answer))) - n + 1)
        else:  # zero has no significant figures: the explicit tolerance alone
            unit = 0.0
        return max(self.atol + self.rtol * abs(answer), 0.5 * unit * (1 + 1e-9))


@dataclass(frozen=True)
class Verdict:
    """The result of ``check``: ``ok`` and one line to read. Renders as that line in a notebook."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        """The line as a paragraph, so that a long verdict wraps to the column instead of scrolling sideways."""
        return f'<p class="en-verdict">{html.escape(self.message)}</p>'


def exercise(key: str, chapter: str, kind: str, level: int, prompt: str, atol: float = 5e-4, rtol: float = 0.0,
             precision: tuple = ("sf", 3)):
    """Register ``solve`` as exercise ``key`` (a decorator). Keys are unique; kind, level and precision are checked.

    ``precision`` is what the task asks for: ``("dp", n)``, n decimals, or ``("sf", n)``, n significant figures
    (three where the task names none). An answer given at that precision is accepted (``Exercise.tolerance``).
    """
    if kind not in KINDS:
        raise ValueError(f"exercise {key!r}: kind must be one of {KINDS}, got {kind!r}")
    if level not in (1, 2, 3):
        raise ValueError(f"exercise {key!r}: level must be 1, 2 or 3, got {level!r}")
    if not (atol >= 0 and rtol >= 0 and atol + rtol > 0):
        raise ValueError(f"exercise {key!r}: tolerances must be non-negative and not both zero")
    if not (isinstance(precision, tuple) and len(precision) == 2 and precision[0] in ("dp", "sf")
            and isinstance(precision[1], int) and 0 <= precision[1] <= 12 and not precision == ("sf", 0)):
        raise ValueError(f"exercise {key!r}: precision must be ('dp', n) or ('sf', n) with n = 1 .. 12 "
                         f"(n = 0 decimals for a whole number), got {precision!r}")

    def register(solve: Callable[[], Solution]) -> Callable[[], Solution]:
        if key in _REGISTRY:
            raise ValueError(f"exercise {key!r} is registered twice")
        _REGISTRY[key] = Exercise(key, chapter, kind, level, prompt, solve, atol, rtol, precision)
        return solve

    return register


def _load_all() -> None:
    from . import part1, part2, part3, part4  # noqa: F401  (importing registers the exercises)


def get(key: str) -> Exercise:
    """The exercise registered under ``key``; a ``ValueError`` lists the keys of the same topic if it is unknown."""
    _load_all()
    if key not in _REGISTRY:
        topic = key.split(".")[0]
        near = sorted(k for k in _REGISTRY if k.split(".")[0] == topic) or sorted(_REGISTRY)[:8]
        raise ValueError(f"no exercise {key!r}; did you mean one of {', '.join(near)}?")
    return _REGISTRY[key]


def all_exercises() -> list[Exercise]:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda e: (e.chapter, e.key))


def _close(a, b, tol: float) -> bool:
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):  # a function may return several arrays
        return (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b)
                and all(_close(x, y, tol) for x, y in zip(a, b)))
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol))


def _as_number(key: str, answer):
    try:
        return np.asarray(answer, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"exercise {key!r} wants a number or an array of numbers, got {type(answer).__name__}") from None


def check(key: str, answer) -> Verdict:
    """Check ``answer`` for exercise ``key``: right, a targeted hint for a known mistake, or "not yet"."""
    ex = get(key)
    sol = ex.solve()
    if callable(sol.answer):
        return _check_code(ex, sol, answer)
    a = _as_number(key, answer)
    if not np.all(np.isfinite(a)):  # a slip such as 0/0 is a verdict, not an error
        return Verdict(False, "not yet: type a number; that answer is NaN or infinite, which no exercise asks for.")
    right = np.asarray(sol.answer, dtype=np.float64)
    tol = ex.tolerance(float(np.max(np.abs(right))))
    if a.shape != right.shape:
        return Verdict(False, f"not yet: the answer has shape {a.shape}, but this exercise wants shape {right.shape}")
    if _close(a, right, tol):
        return Verdict(True, f"right (within {tol:.0e}).")
    for hint, value in sol.wrong.items():  # each mistake is matched at the precision of its own size
        if _close(a, value, ex.tolerance(float(np.max(np.abs(np.asarray(value, dtype=np.float64)))))):
            return Verdict(False, f"not yet: {hint}")
    if a.ndim == 0:
        side = "high" if a > right else "low"
        return Verdict(False, f"not yet: that is too {side}. Check each step against the chapter's numbers.")
    return Verdict(False, "not yet: some entries are off. Check each step against the chapter's numbers.")


def _check_code(ex: Exercise, sol: Solution, fn) -> Verdict:
    if not callable(fn):
        return Verdict(False, f"not yet: exercise {ex.key!r} wants a function, got {type(fn).__name__}")
    outs = []
    for args in sol.cases:
        try:
            outs.append(fn(*args))
        except Exception as exc:  # a learner's bug is reported, not raised
            return Verdict(False, f"not yet: your function raised {type(exc).__name__}: {exc}")
    tol = ex.atol
    if all(_close(o, sol.answer(*args), tol) for o, args in zip(outs, sol.cases)):
        n = len(sol.cases)
        inputs = {1: "its test input", 2: "both test inputs"}.get(n, f"all {n} test inputs")
        return Verdict(True, f"right: it matches byhand on {inputs}.")
    for hint, wrong_fn in sol.wrong.items():
        if all(_close(o, wrong_fn(*args), tol) for o, args in zip(outs, sol.cases)):
            return Verdict(False, f"not yet: {hint}")
    return Verdict(False, "not yet: the outputs differ from byhand's. Try it on the chapter's small example first.")


def _sig(x: float) -> float:
    """The value rounded to 10 significant digits, so that the page carries no rounding noise of one machine."""
    return float(f"{x:.10g}")


@dataclass(frozen=True)
class AnswerBox:
    """A static answer box for a numeric exercise: disabled until the book's script enables it in the browser."""

    ex: Exercise
    answer: float
    tol: float
    wrong: tuple[tuple[str, float], ...]

    def _repr_html_(self) -> str:
        data = {"key": self.ex.key, "answer": _sig(self.answer), "tol": self.tol,
                "wrong": [[h, _sig(v), self.ex.tolerance(v)] for h, v in self.wrong]}  # each mistake, its own tol
        key = html.escape(self.ex.key)
        return (f'<div class="en-exercise" data-exercise="{html.escape(json.dumps(data))}">'
                f'<label>Your answer: <input type="text" inputmode="decimal" size="12" disabled autocomplete="off" '
                f'aria-label="Your answer to exercise {key}"></label> '
                f'<button type="button" disabled>Check</button> '
                f'<span class="en-feedback" role="status" aria-live="polite" aria-atomic="true">In a live notebook, '
                f'run <code>check("{key}", your_answer)</code>.</span></div>')

    def __repr__(self) -> str:
        return f'check("{self.ex.key}", your_answer)'


def answer_box(key: str) -> AnswerBox:
    """The static answer box of a numeric exercise whose answer is one number."""
    ex = get(key)
    sol = ex.solve()
    if callable(sol.answer) or np.ndim(sol.answer) != 0:
        raise ValueError(f"exercise {key!r} is not answered by one number, so it has no answer box")
    answer = float(sol.answer)
    if not math.isfinite(answer):
        raise ValueError(f"exercise {key!r}: its computed answer is not finite")
    wrong = tuple((h, float(v)) for h, v in sol.wrong.items() if np.ndim(v) == 0 and not callable(v))
    return AnswerBox(ex, answer, ex.tolerance(answer), wrong)


def index_rows() -> list[tuple[str, str, str, int, str]]:
    """(chapter, key, kind, level, prompt) for every exercise, in chapter order."""
    return [(e.chapter, e.key, e.kind, e.level, e.prompt) for e in all_exercises()]
