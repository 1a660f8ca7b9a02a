"""Figures that say what they show: a PNG output with its text alternative, and its data one click away.

A figure drawn in a chapter is shown with ``show_figure(fig, alt, table)`` instead of ``plt.show()``. The output is
an ``image/png`` whose metadata carries ``alt`` (the book's ``_ext/figure_alt.py`` puts it on the ``<img>``), and
whose ``text/plain`` is the same sentence, so a reader's notebook holds the description too. ``table``, when given,
follows as a collapsed "Data of this figure" table (``data_table``): the numbers behind a picture that holds more
than a sentence can say. Everything is deterministic: no software version in the PNG, numbers to ≤ 5 decimals.
Introduced with the first figure, Part I, "Dot products".
"""
from __future__ import annotations

import base64
import html
import io
import numbers
import re
from typing import Sequence

ALT_KEY = "alt"  # the key in an output's image/png metadata that _ext/figure_alt.py reads
# a hyphen that stands for a minus sign: before a number, and not inside a word, an exponent (1e-8) or a range (0-5)
HYPHEN_MINUS = re.compile(r"(?<![\w.])-(?=\.?\d)")


def with_true_minus(text: str) -> str:
    """``text`` with each hyphen that is a minus sign written as the minus sign, "−" (U+2212), which a screen
    reader reads as "minus"; a number formatted by Python starts with a hyphen."""
    return HYPHEN_MINUS.sub("−", text)


def cell(value, decimals: int = 4) -> str:
    """One table entry: an integer as it is, a real number to ``decimals`` places (at most 5), text as it is."""
    if not 0 <= decimals <= 5:
        raise ValueError(f"decimals must be 0 to 5, got {decimals}")
    if isinstance(value, (bool, str)) or not isinstance(value, numbers.Real):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    text = f"{float(value):.{decimals}f}"
    return "0." + "0" * decimals if float(text) == 0 else text  # no "-0.0000"


def data_table(columns: Sequence[str], rows: Sequence[Sequence], summary: str = "Data of this figure",
               decimals: int = 4) -> str:
    """A collapsed HTML table (``<details>``): a header row of ``columns``, then one row per entry of ``rows``."""
    columns = [str(c) for c in columns]
    rows = [list(r) for r in rows]
    if not columns or any(len(r) != len(columns) for r in rows):
        raise ValueError(f"every row needs {len(columns)} entries, one per column {columns}")
    esc = html.escape
    pad = ' style="padding: 0.1em 0.6em;"'  # inline, so that the table reads the same on the page and in a notebook
    head = "".join(f'<th scope="col"{pad}>{esc(c)}</th>' for c in columns)
    body = "\n".join("<tr>" + "".join(f"<td{pad}>{esc(cell(v, decimals))}</td>" for v in r) + "</tr>"
                     for r in rows)
    # a table wider or longer than its box scrolls in it, and the box is at most 24 lines tall, so that its
    # scrollbar stays in view; the keyboard can reach the box and a screen reader names it
    box = "overflow: auto; max-width: 100%; max-height: 24em;"
    return (f'<details class="byhand-figure-data">\n<summary>{esc(summary)}</summary>\n'
            f'<div role="region" tabindex="0" aria-label="{esc(summary)}" style="{box}">\n'
            f'<table style="border-collapse: collapse;">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n'
            f'</table>\n</div>\n</details>')


def figure_png(fig) -> bytes:
    """The figure as PNG bytes, cropped as Jupyter's inline backend crops it, with no software version written."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


class FigureOutput:
    """A PNG with its text alternative, as one notebook output (``_repr_mimebundle_``)."""

    def __init__(self, png: bytes, alt: str):
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("a figure needs a text alternative that says what it shows, got an empty one")
        self.png, self.alt = png, with_true_minus(" ".join(alt.split()))

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {"image/png": base64.b64encode(self.png).decode(), "text/plain": self.alt}
        return data, {"image/png": {ALT_KEY: self.alt}}

    def __repr__(self) -> str:
        return self.alt


def show_figure(fig, alt: str, table: tuple[Sequence[str], Sequence[Sequence]] | None = None) -> None:
    """Show ``fig`` with the text alternative ``alt`` (in place of ``plt.show()``) and close it; if ``table`` is
    ``(columns, rows)``, show the figure's data under it, collapsed. Returns None, so that a cell ending with it
    shows nothing twice."""
    from IPython.display import HTML, display
    import matplotlib.pyplot as plt

    out = FigureOutput(figure_png(fig), alt)
    plt.close(fig)
    display(out)
    if table is not None:
        display(HTML(data_table(*table)))
