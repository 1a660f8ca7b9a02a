"""Tests for byhand.display: the written-out arithmetic must equal the arithmetic."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from byhand.display import dot_terms, fmt, matrix_tex, table

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
    tex = repr(matrix_tex(np.array([[1.0, -2.0], [3.0, 4.5]]), name="W", digits=1))
    assert tex.startswith("W = ")
    assert r"1.0 & -2.0 \\ 3.0 & 4.5" in tex
    assert r"(2 \times 2)" in tex


def test_matrix_tex_elides_large_matrices():
    tex = repr(matrix_tex(np.zeros((20, 30)), max_rows=6, max_cols=8))
    assert r"\vdots" in tex and r"\cdots" in tex and r"(20 \times 30)" in tex
    assert tex.count(r"\\") == 5  # 6 rows shown: 4 first, the dots, the last


def test_table_checks_row_width():
    t = table(["a", "b"], [[1, 2], [3, 4]])
    assert t._repr_markdown_().splitlines() == ["| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |"]
    with pytest.raises(ValueError, match="row 1 has 1 cells, expected 2"):
        table(["a", "b"], [[1, 2], [3]])


def test_matrix_tex_writes_masked_scores_as_minus_infinity_and_refuses_nan():
    tex = repr(matrix_tex(np.array([[0.5, -np.inf], [0.25, 1.0]]), name="S", digits=2))
    assert r"0.50 & -\infty \\ 0.25 & 1.00" in tex
    with pytest.raises(ValueError, match="S contains NaN"):
        matrix_tex(np.array([1.0, np.nan]), name="S")
