"""Tests for byhand.display: the written-out arithmetic must equal the arithmetic."""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from byhand.display import COLUMN_EM, dot_terms, fmt, matrix_tex, sum_tex, table, tex_width

finite = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@given(arrays(np.float64, st.integers(1, 40), elements=finite), st.data())
def test_dot_terms_running_total_ends_at_the_dot_product(a, data):
    b = data.draw(arrays(np.float64, a.shape, elements=finite))
    t = dot_terms(a, b)
    # independent oracle: a plain Python loop
    acc, running = 0.0, []
    for x, y in zip(a.tolist(), b.tolist()):
        acc += x * y
        running.append(acc)
    np.testing.assert_allclose(t.running, running, rtol=1e-12, atol=1e-9)
    assert t.total == pytest.approx(float(np.dot(a, b)), rel=1e-12, abs=1e-9)
    assert len(t.products) == len(a)


def test_dot_terms_latex_spells_out_every_term_when_short():
    t = dot_terms([2.0, -1.0, 0.5], [1.0, -2.0, 4.0], digits=1)
    tex = t.latex()
    assert r"2.0 \cdot 1.0" in tex
    assert r"(-1.0) \cdot (-2.0)" in tex  # negative factors get parentheses
    assert tex.count("+") == 4  # 2 pluses in the factor line, 2 in the product line
    assert tex.rstrip().endswith(r"&= 6.0\end{aligned}")
    assert t._repr_markdown_().startswith("$$\n") and repr(t) == "q·k = 6.0 (3 terms)"


def test_dot_terms_elides_long_vectors_but_keeps_the_last_term():
    a = np.arange(1.0, 21.0)
    t = dot_terms(a, np.ones(20), max_terms=5)
    tex = t.latex()
    assert tex.count(r"\cdots") == 2
    assert r"20.00 \cdot 1.00" in tex and r"5.00 \cdot" not in tex
    assert t.total == 210.0


@pytest.mark.parametrize(
    "a, b, message",
    [
        ([1.0, 2.0], [1.0], "same length"),
        ([], [], "empty"),
        ([1.0, np.nan], [1.0, 2.0], "NaN or inf"),
        ([[1.0]], [[1.0]], "dimensions"),
        (["x"], ["y"], "numeric"),
    ],
)
def test_dot_terms_rejects_bad_input(a, b, message):
    with pytest.raises(ValueError, match=message):
        dot_terms(a, b)


def test_fmt_never_shows_negative_zero_and_caps_decimals():
    assert fmt(-1e-12, 3) == "0.000"
    assert fmt(-0.5, 1) == "-0.5"
    with pytest.raises(ValueError, match="at most 5 decimals"):
        fmt(1.0, 6)


def test_matrix_tex_shows_values_and_shape():
    m = matrix_tex(np.array([[1.0, -2.0], [3.0, 4.5]]), name="W", digits=1)
    tex = m.source
    assert tex.startswith("W = ")
    assert repr(m) == "W = [2 × 2 matrix]" and m.full is None  # short plain text; nothing elided, nothing more
    assert r"1.0 & -2.0 \\ 3.0 & 4.5" in tex
    assert r"(2 \times 2)" in tex


def test_matrix_tex_elides_large_matrices():
    tex = matrix_tex(np.zeros((20, 30)), max_rows=6, max_cols=8).source
    assert r"\vdots" in tex and r"\cdots" in tex and r"(20 \times 30)" in tex
    assert tex.count(r"\\") == 5  # 6 rows shown: 4 first, the dots, the last


def test_table_checks_row_width():
    t = table(["a", "b"], [[1, 2], [3, 4]])
    assert t._repr_markdown_().splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |"]
    with pytest.raises(ValueError, match="row 1 has 1 cells, expected 2"):
        table(["a", "b"], [[1, 2], [3]])


def test_matrix_tex_writes_masked_scores_as_minus_infinity_and_refuses_nan():
    tex = matrix_tex(np.array([[0.5, -np.inf], [0.25, 1.0]]), name="S", digits=2).source
    assert r"0.50 & -\infty \\ 0.25 & 1.00" in tex
    with pytest.raises(ValueError, match="S contains NaN"):
        matrix_tex(np.array([1.0, np.nan]), name="S")


# Widths measured in Chromium: MathJax 3 (CHTML, TeX font) at scale 1 on a 16 px page, divided by 16 px per em.
MEASURED_EM = {
    "0.718": 36.44 / 16,
    r"(-0.419) \cdot 0.718": 109.28 / 16,
    r"Q^{(1)}[3,:]\cdot K^{(1)}[1,:]": 124.91 / 16,
    "0000000000": 80.00 / 16,
}


@pytest.mark.parametrize("tex, measured", MEASURED_EM.items())
def test_tex_width_errs_wide_but_not_by_much(tex, measured):
    assert measured <= tex_width(tex) <= 1.15 * measured


def _rows(tex):
    return tex.removeprefix(r"\begin{aligned} ").removesuffix(r"\end{aligned}").split(r" \\ ")


def test_a_long_dot_product_breaks_into_aligned_lines_that_fit():
    # chapter 13's entry S[3, 1] of head 0: greedy filling would leave (-0.331) alone on a line
    a = np.array([-0.419, -0.278, -0.837, -0.734, 0.549, 1.279, -0.164, 0.297])
    b = np.array([0.718, 1.294, -2.209, -1.813, 1.037, 0.063, -0.758, -1.115])
    t = dot_terms(a, b, names=(r"Q^{(1)}[3,:]", r"K^{(1)}[1,:]"), digits=3)
    rows = _rows(t.latex())
    assert len(rows) >= 4  # the factors need two lines, then products and total
    assert rows[0].startswith(r"Q^{(1)}[3,:]\cdot K^{(1)}[1,:] &= ")
    assert rows[1].startswith(r"&\quad {}+ ")  # a continuation line, aligned under the first
    lhs = tex_width(r"Q^{(1)}[3,:]\cdot K^{(1)}[1,:]")
    for r in rows:
        body = r.split("&", 1)[1]
        assert lhs + tex_width(body) <= COLUMN_EM, r
    # every factor is still there, in order: the line breaks changed the layout, not the sum
    written = re.findall(r"\(?(-?\d+\.\d+)\)? \\cdot \(?(-?\d+\.\d+)\)?", t.latex())
    assert [float(x) for x, _ in written] == [float(fmt(x, 3)) for x in t.a]
    assert rows[-1] == f"&= {fmt(t.total, 3)}"
    # the lines share the terms evenly: no term left alone on a line of its own
    sums = [r.split("&", 1)[1].removeprefix(r"\quad {}").lstrip("=+ ") for r in rows[:-1]]
    assert all(" + " in body for body in sums), sums


def test_sum_tex_writes_short_sums_on_one_line_and_checks_its_steps():
    assert sum_tex("s", ["0.2", "0.3"], "0.5").source == r"\begin{aligned} s &= 0.2 + 0.3 \\ &= 0.5\end{aligned}"
    with pytest.raises(ValueError, match="no terms"):
        sum_tex("s", [])
    with pytest.raises(ValueError, match="at least one step"):
        sum_tex("s")


def test_a_wide_matrix_keeps_its_shape_and_first_and_last_columns_and_the_rest_is_one_click_away():
    A = np.arange(80.0).reshape(5, 16) / 1000 - 0.05  # (5, 16), entries like -0.050
    m = matrix_tex(A, name="dO", digits=3)
    first_row = m.source.split(r"\begin{bmatrix}")[1].split(r" \\ ")[0].split(" & ")
    assert r"\cdots" in first_row and len(first_row) < 16
    assert first_row[0] == fmt(A[0, 0], 3) and first_row[-1] == fmt(A[0, -1], 3) and first_row[-2] == fmt(A[0, -2], 3)
    assert r"(5 \times 16)" in m.source
    widths = [tex_width(c) for c in first_row]
    assert tex_width("dO = ") + sum(widths) + len(first_row) - 1 + 1.0 <= COLUMN_EM
    # the full matrix: every entry, in a <details> box under the display, in blocks of columns that fit the column.
    # By hand: each column is as wide as "-0.0xx" (0.778 + 0.5 + 0.278 + 3 × 0.5 = 3.056 em); a block line starts
    # with "dO[:, 00{:}00] = " (6.345 em) and the brackets take 1 em, which leaves 28.655 em: 7 columns fit
    # (7 × 3.056 + 6 = 27.4), 8 do not, so 16 columns need 3 blocks, spread evenly as 6 + 6 + 4.
    blocks = re.findall(r"dO\[:, (\d+)\{:\}(\d+)\] &= \\underset\{\(5 \\times (\d+)\)\}", m.full)
    assert blocks == [("0", "6", "6"), ("6", "12", "6"), ("12", "16", "4")]
    assert m.full.startswith(r"\begin{aligned} ") and r"\cdots" not in m.full
    for i in range(5):  # every entry, once, in order, row by row
        row = [c for b in m.full.split(r"\begin{bmatrix}")[1:] for c in b.split(r"\end{bmatrix}")[0].split(r" \\ ")[i].split(" & ")]
        assert row == [fmt(x, 3) for x in A[i]]
    for line in m.full.removeprefix(r"\begin{aligned} ").removesuffix(r"\end{aligned}").split(r" \\[0.6em] "):
        cells = line.split(r"\begin{bmatrix}")[1].split(r" \\ ")[0].split(" & ")
        assert tex_width(line.split("&=")[0] + "= ") + sum(map(tex_width, cells)) + len(cells) - 1 + 1.0 <= COLUMN_EM
    md = m._repr_markdown_()
    assert md.startswith("$$\n") and '<details class="byhand-full"><summary>Show all 16 columns</summary>' in md
    assert md.endswith("$$\n\n</details>") and md.count("$$") == 4
    assert repr(m) == "dO = [5 × 16 matrix]"


def test_a_long_vector_is_elided_too():
    m = matrix_tex(np.linspace(-1, 1, 64), name="v", digits=4)
    assert r"\cdots" in m.source and "Show all 64 entries" in m._repr_markdown_()
    # its full copy in slices v[lo{:}hi] that cover 0 .. 64 without a gap, each with its own length underneath
    runs = [(int(a), int(b), int(n)) for a, b, n in re.findall(r"v\[(\d+)\{:\}(\d+)\] &= \\underset\{\((\d+)\)\}", m.full)]
    assert runs[0][0] == 0 and runs[-1][1] == 64 and all(r[1] == s[0] for r, s in zip(runs, runs[1:]))
    assert all(n == b - a for a, b, n in runs) and len(runs) > 1
    assert repr(m) == "v = [64 vector]"


def test_a_full_copy_that_fits_is_one_block():
    # 4 columns of "0.0" fit easily; only the rows are elided, so the full copy is the plain matrix
    m = matrix_tex(np.zeros((20, 4)), name="Z", digits=1, max_rows=6)
    assert m.full.startswith(r"Z = \underset{(20 \times 4)}{\begin{bmatrix}") and "aligned" not in m.full
    assert m.full.count(r" \\ ") == 19 and "Show all 20 rows" in m._repr_markdown_()
