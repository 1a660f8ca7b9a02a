"""The notation page keeps one meaning per symbol, and the chapters keep to it.

The page (book/notation.md) holds markdown tables whose first column is a symbol (or a shape letter). A symbol
that appears in two rows would have two meanings, so every symbol may appear in one row only. Each row also names
the chapter that introduces it, by a label that must exist. Last, the chapters must not fall back on notation the
book retired (a plain L for the loss, lr_t for the learning rate, the trace key attn.P, ...).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTATION = ROOT / "book" / "notation.md"
CHAPTERS = sorted(p for p in (ROOT / "book").glob("[0-9][0-9]_*.md"))

# notation the book no longer uses, as (pattern in chapter math, what replaced it)
RETIRED_MATH = [
    (r"\\mathrm\{lr\}", "the learning rate is \\eta, at step t \\eta_t"),
    (r"\\varepsilon", "the denominator floor is \\epsilon; machine epsilon is \\epsilon_\\text{mach}"),
    (r"\\partial L\b|(?<![\\\w{])L\((?!\w*\))", "the loss is \\mathcal{L}"),
    (r"E\s*(\\,)?\s*h\b", "logits of a row are z = H_t E^\\top (rows as vectors)"),
    (r"\\hat r_1", "the layer-normed stream a sublayer reads is u"),
]
# names in code cells that the book renamed
RETIRED_CODE = [
    (r"attn\.P\b|\.(self|cross)\.P\b", "attention weights are trace key .A"),
    (r"ffn\.h\b", "the feed-forward pre-activation is trace key ffn.pre"),
]

INLINE = re.compile(r"(?<![\\$])\$(?!\$)([^$]+?)\$")
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.S)


def _rows() -> list[tuple[int, list[str]]]:
    """(line number, cells) of every row of the page's symbol and shape-letter tables."""
    rows, in_table = [], False
    for n, line in enumerate(NOTATION.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("symbol", "letter"):
            in_table = True
        elif in_table and not set(line) <= set("|- "):
            rows.append((n, cells))
    return rows


def _symbols(cell: str) -> list[str]:
    """The symbols a first cell defines: "$W_Q, W_K$" -> ["W_Q", "W_K"], commas inside braces kept."""
    found = []
    for math in re.findall(r"\$([^$]+)\$", cell):
        depth, part = 0, ""
        for ch in math:
            depth += (ch in "{([") - (ch in "})]")
            if ch == "," and depth == 0:
                found.append(part)
                part = ""
            else:
                part += ch
        found.append(part)
    return [re.sub(r"\s+", " ", s).strip() for s in found if s.strip()]


def _labels() -> set[str]:
    return {m for p in CHAPTERS for m in re.findall(r"^\(([\w-]+)\)=", p.read_text(encoding="utf-8"), re.M)}


def _math(text: str) -> str:
    return "\n".join(INLINE.findall(text) + DISPLAY.findall(text))


def _code(text: str) -> str:
    return "\n".join(re.findall(r"^```\{code-cell\}.*?\n(.*?)^```", text, re.M | re.S))


def test_the_page_has_tables_to_check():
    rows = _rows()
    assert len(rows) > 60  # the shape letters and the four symbol tables
    assert all(len(cells) == 4 for _, cells in rows), [n for n, cells in rows if len(cells) != 4]


def test_every_symbol_is_defined_once():
    seen: dict[str, int] = {}
    twice = []
    for n, cells in _rows():
        symbols = _symbols(cells[0])
        assert symbols, f"notation.md:{n}: no symbol in the first cell"
        for s in symbols:
            if s in seen:
                twice.append(f"{s!r} on lines {seen[s]} and {n}")
            seen[s] = n
    assert not twice, "symbols defined twice: " + "; ".join(twice)


def test_no_row_admits_a_second_meaning():
    loose = [n for n, cells in _rows() if re.search(r"by context|\(also\b|; also\b", cells[1])]
    assert not loose, f"rows that give a symbol a second meaning: lines {loose}"


def test_every_row_names_the_chapter_that_introduces_it():
    labels = _labels()
    for n, cells in _rows():
        refs = re.findall(r"\{ref\}`([\w-]+)`", cells[3])
        assert len(refs) == 1, f"notation.md:{n}: the last cell should be one chapter link, got {cells[3]!r}"
        assert refs[0] in labels, f"notation.md:{n}: no chapter has the label {refs[0]!r}"


def test_the_macros_the_page_lists_are_defined():
    macros = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    text = NOTATION.read_text(encoding="utf-8").split("## Macros", 1)[1]
    listed = re.findall(r"`\\(\w+)`", text)
    assert "nvocab" in listed and set(listed) <= set(macros), set(listed) - set(macros)
    used = {m for p in CHAPTERS for m in re.findall(r"\\(dmodel|dff|nvocab|softmax|LN|GELU|ReLU|R)\b", p.read_text())}
    assert used <= set(macros)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapters_use_no_retired_notation(path):
    text = path.read_text(encoding="utf-8")
    math, code = _math(text), _code(text)
    found = [f"{pat!r} in math ({why})" for pat, why in RETIRED_MATH if re.search(pat, math)]
    found += [f"{pat!r} in code ({why})" for pat, why in RETIRED_CODE if re.search(pat, code)]
    assert not found, "; ".join(found)


def test_the_retired_checks_can_fail():
    # each pattern catches the notation it retires, so a chapter that slipped back would fail
    slips = ["\\mathrm{lr}_t", "\\varepsilon", "\\partial L / \\partial z", "z = E\\,h", "\\hat r_1 W_1"]
    assert len(slips) == len(RETIRED_MATH)
    for (pat, _), slip in zip(RETIRED_MATH, slips):
        assert re.search(pat, slip), (pat, slip)
    assert re.search(RETIRED_MATH[2][0], "L(x + h)")
    assert not re.search(RETIRED_MATH[2][0], "\\mathcal{L}(x + \\Delta)")
    assert re.search(RETIRED_CODE[0][0], 'trace["block0.attn.P"]') and re.search(RETIRED_CODE[1][0], '"ffn.h"')
    assert _symbols("$W_Q, W_K, W_V, W_O$") == ["W_Q", "W_K", "W_V", "W_O"]
    assert _symbols("$\\mathbb{1}[\\cdot]$") == ["\\mathbb{1}[\\cdot]"] and _symbols("$A_{t,s}$") == ["A_{t,s}"]
