"""Display helpers: turn arrays into the book's arithmetic, written out, sized to fit the text column.

Each helper returns an object; nothing here prints. In a notebook the object renders as Markdown with TeX
(``_repr_markdown_``), which the built book and JupyterLab both typeset; its plain-text form is short and
deterministic, because nbval compares it. Introduced in Part I, "Dot products"; every chapter uses them.

Fitting the column. The book's text column is 784 px wide at a 1400 px window. MathJax sets display math in its TeX
font scaled to the x-height of the text around it, so one em of math is 20.4 px there (not the text's 16 px) and the
column holds about 38.5 em of math. Every display aims at ``COLUMN_EM`` = 36 em, measured with ``tex_width``, an
estimate from the widths of MathJax's TeX font:
  - a written-out sum (``sum_tex``, ``DotTerms``) breaks into aligned lines that each fit;
  - a matrix wider than the column (``matrix_tex``) shows its first and last columns with ``\\cdots`` between them,
    keeps its shape underneath, and carries the whole matrix one click away in a ``<details>`` box, in blocks of
    columns that each fit (``Q[:, 0{:}8]``, ``Q[:, 8{:}16]``).
On a phone (390 px, about 17 em) most displays cannot fit: they scroll sideways in their own box, which the book's
script makes a named, focusable region with a line under it that says it continues (``_theme/exercises.js``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .checks import as_float, check_ndim, is_int

# The width a display may take, in em of MathJax's font: the column is ~38.5 em; 2.5 em are left for the estimate's
# error (`make check-html` measures the real widths).
COLUMN_EM = 36.0
# A matrix with more entries than this gets no full copy (it would be a page of numbers).
FULL_MAX_ENTRIES = 4096


def check_digits(digits) -> int:
    """``digits``, the decimals a display prints: an integer from 0 to 5 (the book prints at most 5 decimals)."""
    if not is_int(digits) or not 0 <= digits <= 5:
        raise ValueError(f"digits must be between 0 and 5 (the book prints at most 5 decimals), got {digits!r}")
    return int(digits)


def fmt(x: float, digits: int = 3) -> str:
    """Format one number for TeX: fixed ``digits`` decimals, ``-0`` shown as ``0``, infinities as ``\\pm\\infty``."""
    check_digits(digits)
    if isinstance(x, (bool, np.bool_)) or np.ndim(x) != 0 or np.asarray(x).dtype.kind not in "fiu":
        raise ValueError(f"x must be a real number, got {x!r}")
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


# ---------------------------------------------------------------------------------------------------- widths
# Glyph widths of MathJax's TeX font, in em (digits 0.5, the period 0.278, the minus sign 0.778, …); a binary
# operator gets 2 × 4/18 em of space around it and a relation 2 × 5/18 em.
_CHAR_EM = {**dict.fromkeys("0123456789", 0.5), **dict.fromkeys(".,:;!|'", 0.278), **dict.fromkeys("()[]", 0.389),
            "/": 0.5, "*": 0.5, "<": 1.333, ">": 1.333, "=": 1.333, "+": 1.222, " ": 0.0, "&": 0.0, "~": 0.333}
_COMMAND_EM = {"cdot": 0.722, "times": 1.222, "cdots": 1.172, "ldots": 1.172, "dots": 1.172, "vdots": 0.278,
               "ddots": 1.172, "infty": 1.0, "quad": 1.0, "qquad": 2.0, ",": 0.167, ";": 0.278, ":": 0.222,
               "!": -0.167, "top": 0.778, "pm": 1.222, "mp": 1.222, "leq": 1.333, "geq": 1.333, "approx": 1.333,
               "to": 1.556, "sum": 1.1, "sqrt": 0.9, "left": 0.0, "right": 0.0, "big": 0.0, "Big": 0.0,
               "displaystyle": 0.0, "textstyle": 0.0, "hat": 0.0, "bar": 0.0, "tilde": 0.0, "vec": 0.0,
               "mathbf": 0.0, "mathrm": 0.0, "mathit": 0.0, "boldsymbol": 0.0, "operatorname": 0.0,
               "underset": 0.0, "overset": 0.0, "phantom": 0.0, "\\": 0.0}
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|([_^])|(\{)|(\})|(.)", re.S)


def _group(s: str, i: int) -> tuple[str, int]:
    """The brace group (or single token) that starts at ``s[i]``; returns its text and the index after it."""
    if i < len(s) and s[i] == "{":
        depth = 0
        for j in range(i, len(s)):
            depth += {"{": 1, "}": -1}.get(s[j], 0)
            if depth == 0:
                return s[i + 1:j], j + 1
        return s[i + 1:], len(s)
    m = _TOKEN.match(s, i)
    return (m.group(0), m.end()) if m else ("", i)


def tex_width(tex: str) -> float:
    """Estimate the typeset width of one line of TeX, in em (MathJax's TeX font at the surrounding size).

    Meant for the TeX this module writes (numbers, operators, names such as ``Q^{(1)}[3,:]``); it errs wide.
    A line break ``\\\\`` is not handled here: measure each line on its own.
    """
    width, i, prev = 0.0, 0, "start"
    while i < len(tex):
        m = _TOKEN.match(tex, i)
        cmd, script, _open, _close, ch = m.groups()
        i = m.end()
        if script:  # a subscript or superscript is set at 70 %
            inner, i = _group(tex, i)
            width += 0.7 * tex_width(inner)
            prev = "atom"
        elif cmd is not None:
            if cmd in ("text", "mbox", "textrm", "textit"):  # upright text: ~0.5 em a character
                inner, i = _group(tex, i)
                width += 0.5 * len(inner)
            elif cmd in ("begin", "end"):  # an environment's name takes no room
                _, i = _group(tex, i)
            elif cmd == "frac":
                num, i = _group(tex, i)
                den, i = _group(tex, i)
                width += max(tex_width(num), tex_width(den)) + 0.4
            else:
                width += _COMMAND_EM.get(cmd, 0.8)
            prev = "op" if cmd in ("cdot", "times", "pm", "leq", "geq", "approx", "to") else "atom"
        elif ch is not None:
            if ch == "-":  # binary minus after an atom, unary (no space) after an operator or at the start
                width += 1.222 if prev == "atom" else 0.778
                prev = "op"
                continue
            if ch.isalpha():
                width += 0.85 if ch.isupper() else 0.55
            else:
                width += _CHAR_EM.get(ch, 0.6)
            prev = "op" if ch in "+=<>&(,[" else "atom"
    return width


# ---------------------------------------------------------------------------------------------------- Tex
@dataclass(frozen=True)
class Tex:
    """A block of display math. Renders as ``$$ … $$`` in Markdown.

    ``full`` (optional) is a larger version of the same display (e.g. the whole of an elided matrix); it is shown
    under the display in a ``<details>`` box whose summary line is ``more``. The plain text is ``text`` when given
    (short, for nbval), else the TeX source.
    """

    source: str
    full: str | None = None
    more: str = "Show it in full"
    text: str | None = None

    def _repr_markdown_(self) -> str:
        md = f"$$\n{self.source}\n$$"
        if self.full is not None:  # blank lines around the math, so that Markdown parses it inside the HTML block
            md += (f'\n\n<details class="byhand-full"><summary>{self.more}</summary>\n\n'
                   f"$$\n{self.full}\n$$\n\n</details>")
        return md

    def __repr__(self) -> str:
        return self.text if self.text is not None else self.source


def _pick(n: int, most: int, tail: int) -> list[int | None]:
    """At most ``most`` items out of ``n``: the first ones, ``None`` for the elided run, the last ``tail``."""
    if n <= most:
        return list(range(n))
    return list(range(most - 1 - tail)) + [None] + list(range(n - tail, n))


def _bmatrix(cells: list[list[str]], rows: list[int | None], cols: list[int | None]) -> str:
    lines = []
    for i in rows:
        if i is None:
            lines.append(" & ".join(r"\vdots" if j is not None else r"\ddots" for j in cols))
        else:
            lines.append(" & ".join(r"\cdots" if j is None else cells[i][j] for j in cols))
    return r"\begin{bmatrix}" + r" \\ ".join(lines) + r"\end{bmatrix}"


def _column_blocks(col_w: list[float], room: float) -> list[tuple[int, int]]:
    """Split columns of widths ``col_w`` (em) into runs ``(lo, hi)`` that each fit ``room`` em, with 1 em between
    columns; the runs are as even as greedy filling allows (no short last run), and each holds at least one column."""
    n = len(col_w)

    def greedy(cap: float) -> list[tuple[int, int]]:
        runs, lo, used = [], 0, 0.0
        for j, w in enumerate(col_w):
            extra = w + (1.0 if j > lo else 0.0)
            if j > lo and used + extra > cap:
                runs.append((lo, j))
                lo, used, extra = j, 0.0, w
            used += extra
        return runs + [(lo, n)]

    runs = greedy(room)
    # the same number of runs, as even as possible: the widest run is made as narrow as it can be
    k = len(runs)
    best = runs
    for size in range(1, n + 1):  # columns per run, ascending: the first that gives k runs and fits wins
        even = [(lo, min(lo + size, n)) for lo in range(0, n, size)]
        if len(even) == k and all(sum(col_w[lo:hi]) + (hi - lo - 1) <= room for lo, hi in even):
            best = even
            break
    return best


def matrix_tex(A, name: str | None = None, digits: int = 3, max_rows: int = 12, max_cols: int | None = None,
               width: float = COLUMN_EM) -> Tex:
    """Write a vector or matrix as a TeX ``bmatrix`` with its shape underneath, e.g. ``Q = [..]`` with (5 × 8).

    The display fits ``width`` em (the text column): columns that do not fit are elided from the middle, keeping
    the first and the last ones (``\\cdots`` marks the gap); rows beyond ``max_rows`` (and columns beyond
    ``max_cols``, if given) are elided the same way. When anything is elided, the whole matrix is one click away
    (``Tex.full``), split into slices of columns ``name[:, lo{:}hi]`` that each fit ``width`` when it is wider. Entries of ±inf (masked scores) are written as ``±\\infty``; NaN is refused.
    The plain text is short: ``Q = [5 × 8 matrix]``.
    """
    A = np.asarray(A, dtype=np.float64)
    if np.any(np.isnan(A)):
        raise ValueError(f"{name or 'A'} contains NaN")
    check_ndim(name or "A", A, (1, 2))
    if max_rows < 3 or (max_cols is not None and max_cols < 3):
        raise ValueError(f"max_rows and max_cols must be at least 3 (first, dots, last), got {max_rows}, {max_cols}")
    M = A[None, :] if A.ndim == 1 else A  # a vector is shown as one row
    n_rows, n_cols = M.shape
    cells = [[fmt(x, digits) for x in row] for row in M]
    col_w = [max(tex_width(cells[i][j]) for i in range(n_rows)) for j in range(n_cols)]  # (n_cols,) em
    lhs = f"{name} = " if name else ""
    room = width - tex_width(lhs) - 1.0  # the brackets take about 1 em

    def fits(cols: list[int | None]) -> bool:  # entries plus 1 em between columns
        return sum(1.172 if j is None else col_w[j] for j in cols) + (len(cols) - 1) <= room

    shown = n_cols if max_cols is None else min(n_cols, max_cols)
    cols = _pick(n_cols, shown, 2 if shown >= 6 else 1)
    while shown > 3 and not fits(cols):  # drop columns from the middle until it fits (shown counts the dots)
        shown -= 1
        cols = _pick(n_cols, shown, 2 if shown >= 6 else 1)
    rows = _pick(n_rows, max_rows, 1)
    shape = r" \times ".join(str(n) for n in A.shape)

    def display(r, c) -> str:
        return rf"{lhs}\underset{{({shape})}}{{{_bmatrix(cells, r, c)}}}"

    full, more = None, ""
    elided_rows, elided_cols = None in rows, None in cols
    if (elided_rows or elided_cols) and A.size <= FULL_MAX_ENTRIES:
        all_rows = list(range(n_rows))
        blocks = _column_blocks(col_w, width - tex_width(f"{name or ''}[:, 00{{:}}00] = ") - 1.0)
        if len(blocks) == 1:
            full = display(all_rows, list(range(n_cols)))
        else:  # the whole matrix in blocks of columns that each fit the column, named as slices: Q[:, 0{:}8]
            lines = []
            for lo, hi in blocks:
                part = f"[{lo}{{:}}{hi}]" if A.ndim == 1 else f"[:, {lo}{{:}}{hi}]"
                block_shape = f"{hi - lo}" if A.ndim == 1 else rf"{n_rows} \times {hi - lo}"
                lines.append(rf"{name or ''}{part} &= \underset{{({block_shape})}}"
                             rf"{{{_bmatrix(cells, all_rows, list(range(lo, hi)))}}}")
            full = r"\begin{aligned} " + r" \\[0.6em] ".join(lines) + r"\end{aligned}"
        if elided_rows and elided_cols:
            more = f"Show all {n_rows} × {n_cols} entries"
        elif elided_cols:
            more = f"Show all {n_cols} {'entries' if A.ndim == 1 else 'columns'}"
        else:
            more = f"Show all {n_rows} rows"
    kind = "vector" if A.ndim == 1 else "matrix"
    text = f"{name + ' = ' if name else ''}[{' × '.join(str(n) for n in A.shape)} {kind}]"
    return Tex(display(rows, cols), full=full, more=more, text=text)


# ---------------------------------------------------------------------------------------------------- sums
def _wrap(terms: list[str], first: float, rest: float) -> list[list[str]]:
    """Break ``terms`` (joined by `` + ``) into lines of at most ``first`` em, then ``rest`` em: as few lines as
    greedy filling needs, with the terms spread evenly over them (no lone term on a last line)."""
    lines = _greedy(terms, first, rest)
    lo, hi = 0.0, max(first, rest)
    for _ in range(30):  # the narrowest measure that still needs no more lines
        mid = (lo + hi) / 2
        if len(_greedy(terms, min(first, mid), min(rest, mid))) <= len(lines):
            hi = mid
        else:
            lo = mid
    return _greedy(terms, min(first, hi), min(rest, hi))


def _greedy(terms: list[str], first: float, rest: float) -> list[list[str]]:
    """Greedy line breaking: each line takes terms while they fit (``first`` em for line 0, ``rest`` after)."""
    lines: list[list[str]] = [[]]
    used, room = 0.0, first
    for t in terms:
        w = tex_width(t) + (1.222 if lines[-1] else 0.0)  # " + " before every term but a line's first
        if lines[-1] and used + w > room:
            lines.append([])
            used, room = 0.0, rest
            w = tex_width(t)
        lines[-1].append(t)
        used += w
    return lines


def sum_lines(terms: list[str], width: float) -> list[str]:
    """The rows of an ``aligned`` block that write ``= t_0 + t_1 + …`` across as many lines as ``width`` needs.

    Each row starts at the alignment point: the first ``&= …``, the next ones ``&\\quad {}+ …``.
    """
    first = width - tex_width("=")  # after "&="
    rest = width - tex_width(r"\quad +")  # after "&\quad {}+"
    lines = _wrap(terms, first, rest)
    return [("&= " if k == 0 else r"&\quad {}+ ") + " + ".join(line) for k, line in enumerate(lines)]


def sum_tex(lhs: str, *steps, width: float = COLUMN_EM) -> Tex:
    """A derivation ``lhs = … = … = result`` as aligned lines that fit ``width`` em.

    Each step is either a list of TeX terms (written as a sum, broken into lines as needed) or one TeX string
    (written on its own line). E.g. ``sum_tex("s", ["0.2", "0.3"], "0.5")`` gives ``s = 0.2 + 0.3 = 0.5``.
    """
    if not steps:
        raise ValueError("sum_tex needs at least one step after the left-hand side")
    room = width - tex_width(lhs)
    rows = []
    for step in steps:
        if isinstance(step, str):
            rows.append(f"&= {step}")
        else:
            terms = [str(t) for t in step]
            if not terms:
                raise ValueError("a step of sum_tex has no terms")
            rows += sum_lines(terms, room)
    rows[0] = f"{lhs} {rows[0]}"
    return Tex(r"\begin{aligned} " + r" \\ ".join(rows) + r"\end{aligned}")


@dataclass(frozen=True)
class DotTerms:
    """A dot product written out: every product ``a_i·b_i``, the running total, and the sum.

    ``products[i] = a[i] * b[i]``; ``running[i]`` is the sum of the first ``i + 1`` products, so
    ``running[-1] == total``. Render it to see ``a·b = a_0 b_0 + a_1 b_1 + … = total``, broken into aligned lines
    that fit ``width`` em.
    """

    a: np.ndarray  # (n,)
    b: np.ndarray  # (n,)
    products: np.ndarray  # (n,) a_i * b_i
    running: np.ndarray  # (n,) cumulative sum of products
    total: float
    names: tuple[str, str]
    digits: int
    max_terms: int
    width: float = COLUMN_EM  # em the display may take

    def _shown(self) -> list[int | None]:
        n = len(self.a)
        if n <= self.max_terms:
            return list(range(n))
        head = self.max_terms - 1
        return list(range(head)) + [None, n - 1]  # None stands for the elided terms

    def latex(self) -> str:
        """The derivation: factors, products, total, each sum broken into lines that fit ``width``."""
        a, b = self.names
        idx = self._shown()
        factors = [r"\cdots" if i is None else rf"{_paren(self.a[i], self.digits)} \cdot {_paren(self.b[i], self.digits)}"
                   for i in idx]
        prods = [r"\cdots" if i is None else _paren(self.products[i], self.digits) for i in idx]
        return sum_tex(rf"{a}\cdot {b}", factors, prods, fmt(self.total, self.digits), width=self.width).source

    def _repr_markdown_(self) -> str:
        return f"$$\n{self.latex()}\n$$"

    def __repr__(self) -> str:
        a, b = self.names
        return f"{a}·{b} = {fmt(self.total, self.digits)} ({len(self.a)} terms)"


def dot_terms(a, b, names: tuple[str, str] = ("q", "k"), digits: int = 2, max_terms: int = 8,
              width: float = COLUMN_EM) -> DotTerms:
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
    check_digits(digits)
    products = a * b  # (n,)
    running = np.cumsum(products)  # (n,)
    return DotTerms(a, b, products, running, float(running[-1]), names, digits, max_terms, width)


@dataclass(frozen=True)
class MarkdownTable:
    """A Markdown table built from rows of already-formatted cells.

    In the built book a table wider than the column scrolls inside its own box (the theme's table container,
    styled by the book's CSS with a visible scrollbar).
    """

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
