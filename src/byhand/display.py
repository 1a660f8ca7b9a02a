"""Display helpers: turn arrays into the book's arithmetic, written out.

Each helper returns an object; nothing here prints. In a notebook the object renders as Markdown with TeX
(``_repr_markdown_``), which the built book and JupyterLab both typeset; its plain-text form is short and
deterministic, because nbval compares it. Introduced in Part I, "Dot products"; every chapter uses them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import as_float, check_ndim


def fmt(x: float, digits: int = 3) -> str:
    """Format one number for TeX: fixed ``digits`` decimals, ``-0`` shown as ``0``, infinities as ``\\pm\\infty``."""
    if digits < 0 or digits > 5:
        raise ValueError(f"digits must be between 0 and 5 (the book prints at most 5 decimals), got {digits}")
    if np.isinf(x):  # a masked attention score is -inf before the softmax
        return r"-\infty" if x < 0 else r"\infty"
    s = f"{float(x):.{digits}f}"
    if float(s) == 0.0:  # -0.000 reads as a sign error
        s = s.lstrip("-")
    return s


def _paren(x: float, digits: int) -> str:
    """A factor in a product: negative numbers get parentheses so that ``(−2)(3)`` reads right."""
    s = fmt(x, digits)
    return f"({s})" if s.startswith("-") else s


@dataclass(frozen=True)
class Tex:
    """A block of display math. Renders as ``$$ … $$`` in Markdown; its plain text is the TeX source."""

    source: str

    def _repr_markdown_(self) -> str:
        return f"$$\n{self.source}\n$$"

    def __repr__(self) -> str:
        return self.source


def matrix_tex(A, name: str | None = None, digits: int = 3, max_rows: int = 12, max_cols: int = 16) -> Tex:
    """Write a vector or matrix as a TeX ``bmatrix`` with its shape underneath, e.g. ``Q = [..]`` with (5 × 8).

    Rows or columns beyond ``max_rows``/``max_cols`` are elided with dots, keeping the first and last ones.
    Entries of ±inf (masked scores) are written as ``±\\infty``; NaN is refused.
    """
    A = np.asarray(A, dtype=np.float64)
    if np.any(np.isnan(A)):
        raise ValueError(f"{name or 'A'} contains NaN")
    check_ndim(name or "A", A, (1, 2))
    M = A[None, :] if A.ndim == 1 else A  # a vector is shown as one row

    def pick(n: int, most: int) -> list[int | None]:
        if n <= most:
            return list(range(n))
        head = most - 2
        return list(range(head)) + [None, n - 1]  # None marks the elided run

    rows = []
    for i in pick(M.shape[0], max_rows):
        if i is None:
            rows.append(" & ".join(r"\vdots" if j is not None else r"\ddots" for j in pick(M.shape[1], max_cols)))
            continue
        rows.append(" & ".join(r"\cdots" if j is None else fmt(M[i, j], digits) for j in pick(M.shape[1], max_cols)))
    shape = r" \times ".join(str(n) for n in A.shape)
    body = r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"
    lhs = f"{name} = " if name else ""
    return Tex(rf"{lhs}\underset{{({shape})}}{{{body}}}")


@dataclass(frozen=True)
class DotTerms:
    """A dot product written out: every product ``a_i·b_i``, the running total, and the sum.

    ``products[i] = a[i] * b[i]``; ``running[i]`` is the sum of the first ``i + 1`` products, so
    ``running[-1] == total``. Render it to see ``a·b = a_1 b_1 + a_2 b_2 + … = total``.
    """

    a: np.ndarray  # (n,)
    b: np.ndarray  # (n,)
    products: np.ndarray  # (n,) a_i * b_i
    running: np.ndarray  # (n,) cumulative sum of products
    total: float
    names: tuple[str, str]
    digits: int
    max_terms: int

    def _shown(self) -> list[int | None]:
        n = len(self.a)
        if n <= self.max_terms:
            return list(range(n))
        head = self.max_terms - 1
        return list(range(head)) + [None, n - 1]  # None stands for the elided terms

    def latex(self) -> str:
        """The three-line derivation: factors, products, total."""
        a, b = self.names
        idx = self._shown()
        factors = " + ".join(r"\cdots" if i is None
                             else rf"{_paren(self.a[i], self.digits)} \cdot {_paren(self.b[i], self.digits)}" for i in idx)
        prods = " + ".join(r"\cdots" if i is None else _paren(self.products[i], self.digits) for i in idx)
        return (rf"\begin{{aligned}} {a}\cdot {b} &= {factors} \\ &= {prods} \\ &= {fmt(self.total, self.digits)}"
                r"\end{aligned}")

    def _repr_markdown_(self) -> str:
        return f"$$\n{self.latex()}\n$$"

    def __repr__(self) -> str:
        a, b = self.names
        return f"{a}·{b} = {fmt(self.total, self.digits)} ({len(self.a)} terms)"


def dot_terms(a, b, names: tuple[str, str] = ("q", "k"), digits: int = 2, max_terms: int = 8) -> DotTerms:
    """Spell out the dot product of two equal-length vectors, term by term (``a·b = Σ a_i b_i``)."""
    a = as_float(names[0], a)
    b = as_float(names[1], b)
    check_ndim(names[0], a, (1,))
    check_ndim(names[1], b, (1,))
    if a.shape != b.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same length, got {a.shape[0]} and {b.shape[0]}")
    if a.size == 0:
        raise ValueError(f"{names[0]} and {names[1]} are empty")
    if max_terms < 2:
        raise ValueError(f"max_terms must be at least 2, got {max_terms}")
    products = a * b  # (n,)
    running = np.cumsum(products)  # (n,)
    return DotTerms(a, b, products, running, float(running[-1]), names, digits, max_terms)


@dataclass(frozen=True)
class MarkdownTable:
    """A Markdown table built from rows of already-formatted cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def _repr_markdown_(self) -> str:
        lines = ["| " + " | ".join(self.headers) + " |", "|" + "---|" * len(self.headers)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self._repr_markdown_()


def table(headers, rows) -> MarkdownTable:
    """Build a Markdown table; every row must have one cell per header."""
    headers = tuple(str(h) for h in headers)
    rows = tuple(tuple(str(c) for c in r) for r in rows)
    for i, r in enumerate(rows):
        if len(r) != len(headers):
            raise ValueError(f"table row {i} has {len(r)} cells, expected {len(headers)}")
    return MarkdownTable(headers, rows)
