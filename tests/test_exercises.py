"""byhand.exercises: the checker accepts each exercise's right answer and rejects each known wrong one with its hint.

The expected answers come from each exercise's ``solve()``, which computes them with byhand; these tests do not
restate them. What they pin down is the checker's behaviour, on every registered exercise and on a toy one.
"""
import re
from pathlib import Path

import numpy as np
import pytest

from byhand import exercises as ex
from byhand.exercises import Solution, all_exercises, answer_box, check, exercise

@exercise("toy.1", chapter="00_toy", kind="by hand", level=1, prompt="2 + 2, with a known slip", atol=0.01)
def _toy():
    a = np.float64(2.0) + 2.0
    return Solution(answer=a, wrong={"that is 2 × 2 + 1: add, don't multiply.": 5.0})


@exercise("toy.2", chapter="00_toy", kind="code", level=2, prompt="softmax of a row", atol=1e-9)
def _toy_code():
    from byhand.softmax import softmax_forward

    def ref(z):
        return softmax_forward(z)[0]

    def no_max(z):
        return np.exp(z) / np.exp(z).sum()

    def no_norm(z):
        return np.exp(z - z.max())

    return Solution(answer=ref, wrong={"each row must sum to 1: divide by the sum.": no_norm},
                    cases=((np.array([1.0, 2.0, 3.0]),), (np.array([0.0, 0.0]),)))


ALL = ex.all_exercises()  # the book's exercises and the two toys above


def test_toy_number_right_wrong_and_direction():
    assert check("toy.1", 4.004) and not check("toy.1", 4.02)
    v = check("toy.1", 5.0)
    assert not v and "add, don't multiply" in v.message
    assert "too high" in check("toy.1", 7).message and "too low" in check("toy.1", 1).message


def test_toy_code_right_and_hint():
    assert check("toy.2", lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())
    assert "divide by the sum" in check("toy.2", lambda z: np.exp(z - z.max())).message
    assert "raised ZeroDivisionError" in check("toy.2", lambda z: 1 / 0).message
    assert "wants a function" in check("toy.2", 3.0).message


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="no exercise 'toy.9'; did you mean one of toy.1, toy.2"):
        check("toy.9", 1.0)
    with pytest.raises(ValueError, match="NaN or inf"):
        check("toy.1", float("nan"))
    with pytest.raises(ValueError, match="wants a number"):
        check("toy.1", "four")
    with pytest.raises(ValueError, match="kind must be one of"):
        exercise("toy.3", "00_toy", "essay", 1, "x")
    with pytest.raises(ValueError, match="registered twice"):
        exercise("toy.1", "00_toy", "by hand", 1, "x")(_toy)


def test_answer_box_carries_the_computed_answer_and_hints_and_starts_disabled():
    html = answer_box("toy.1")._repr_html_()
    assert "&quot;answer&quot;: 4.0" in html and "add, don&#x27;t multiply" in html
    assert html.count("disabled") == 2 and 'check("toy.1", your_answer)' in html
    with pytest.raises(ValueError, match="not answered by one number"):
        answer_box("toy.2")


@pytest.mark.parametrize("e", ALL, ids=[e.key for e in ALL])
def test_every_exercise_accepts_its_answer_and_rejects_each_known_mistake(e):
    sol = e.solve()
    if callable(sol.answer):
        assert sol.cases, f"{e.key}: a code exercise needs test inputs"
        assert check(e.key, sol.answer)
        for hint, wrong in sol.wrong.items():
            v = check(e.key, wrong)
            assert not v and hint in v.message
        return
    assert check(e.key, sol.answer)
    right = np.asarray(sol.answer, dtype=float)
    tol = e.tolerance(float(np.max(np.abs(right))))
    for hint, wrong in sol.wrong.items():
        # a mistake must land clearly outside the tolerance, or its hint could never be told from the right answer
        assert np.max(np.abs(np.asarray(wrong, dtype=float) - right)) > 2 * tol, f"{e.key}: {hint}"
        v = check(e.key, wrong)
        assert not v and hint in v.message
    values = [np.asarray(w, dtype=float) for w in sol.wrong.values()]
    for a in range(len(values)):  # two mistakes that give the same number could not get their own hints
        for b in range(a + 1, len(values)):
            assert np.max(np.abs(values[a] - values[b])) > 2 * tol, f"{e.key}: two known mistakes coincide"


def test_every_chapter_from_01_to_40_has_at_least_two_exercises():
    toc = (Path(__file__).resolve().parent.parent / "_toc.yml").read_text()
    chapters = [c for c in re.findall(r"file: book/(\d\d_\w+)", toc) if "01" <= c[:2] <= "40"]
    assert len(chapters) >= 29, "the table of contents lost chapters"
    counts = {c: sum(e.chapter == c for e in all_exercises()) for c in chapters}  # a test's toy is in chapter 00
    assert not {c: n for c, n in counts.items() if n < 2}, f"chapters with fewer than two exercises: {counts}"


def test_every_registered_exercise_has_its_anchor_in_its_chapter():
    book = Path(__file__).resolve().parent.parent / "book"
    for e in all_exercises():
        if not e.solve.__module__.startswith("byhand.exercises.part"):
            continue  # a toy exercise registered by a test here
        text = (book / f"{e.chapter}.ipynb").read_text()
        assert f"({e.anchor})=" in text, f"{e.key}: no ({e.anchor})= in {e.chapter}.ipynb"
