"""byhand.exercises: the checker's behaviour, on two toy exercises and on every registered exercise's known mistakes.

The right answers themselves are pinned apart from ``solve()`` in ``test_exercise_answers.py``. Here: the checker gives
each known mistake its hint, bad input a clear error, the answer box and the instructors' index their content, and
every exercise its anchor in its chapter.
"""
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from byhand import exercises as ex
from byhand.exercises import Solution, all_exercises, answer_box, check, exercise
from byhand.exercises.index import exercise_index

BOOK = Path(__file__).resolve().parent.parent / "book"
EXERCISES_JS = BOOK.parent / "_theme" / "exercises.js"

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
    for bad in (float("nan"), float("inf"), [4.0, float("nan")]):  # a slip such as 0/0 gets a verdict, not an error
        v = check("toy.1", bad)
        assert not v and "type a number" in v.message
    with pytest.raises(ValueError, match="wants a number"):
        check("toy.1", "four")
    with pytest.raises(ValueError, match="kind must be one of"):
        exercise("toy.3", "00_toy", "essay", 1, "x")
    with pytest.raises(ValueError, match="registered twice"):
        exercise("toy.1", "00_toy", "by hand", 1, "x")(_toy)


def test_answer_box_carries_the_computed_answer_and_hints_and_starts_disabled():
    html = answer_box("toy.1")._repr_html_()
    assert "&quot;answer&quot;: 4.0" in html and "add, don&#x27;t multiply" in html
    assert "multiply.&quot;, 5.0, 0.01]" in html  # the mistake with its own tolerance: atol, above half a unit at 3 s.f.
    assert html.count("disabled") == 2 and 'check("toy.1", your_answer)' in html
    with pytest.raises(ValueError, match="not answered by one number"):
        answer_box("toy.2")


def test_the_answer_box_is_labelled_and_announces_its_verdict():
    html = answer_box("toy.1")._repr_html_()
    assert 'aria-label="Your answer to exercise toy.1"' in html  # the visible label's words start the name
    status = re.search(r'<span class="en-feedback"([^>]*)>', html).group(1)
    assert 'role="status"' in status and 'aria-live="polite"' in status and 'aria-atomic="true"' in status


def test_a_verdict_renders_as_a_paragraph_that_wraps():
    v = check("toy.1", 5.0)
    assert v._repr_html_() == ('<p class="en-verdict">not yet: that is 2 × 2 + 1: add, don&#x27;t '
                               'multiply.</p>')
    assert repr(v) == "not yet: that is 2 × 2 + 1: add, don't multiply."


def _js_parse(texts):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = ("const m = require(process.argv[1]);"
              "console.log(JSON.stringify(JSON.parse(process.argv[2]).map(m.parseAnswer)));")
    out = subprocess.run([node, "-e", script, str(EXERCISES_JS), json.dumps(texts)], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def test_the_page_reads_typed_answers_evenly():
    ok = {"0.25": 0.25, "\u22121.5": -1.5, "2.5e-3": 0.0025, ".5": 0.5, "+3": 3.0, "1 000": 1000.0,
          "1/4": 0.25, "-3/8": -0.375, "1/3": 1 / 3}
    got = _js_parse(list(ok))
    assert [g.get("value") for g in got] == list(ok.values())
    bad = {"1e400": "too large", "-1e400": "too large", "inf": "not a finite", "-Infinity": "not a finite",
           "nan": "not a finite", "\u221e": "not a finite", "0,5": "with a point", "1,000": "with a point",
           "": "Type your answer first", "twelve": "Type a number", "1/0": "divides by zero", "1/2/3": "Type a number",
           "0x10": "Type a number"}
    got = _js_parse(list(bad))
    for (text, want), g in zip(bad.items(), got):
        assert "value" not in g and want in g["error"], (text, g)
        assert "such as 0.25" in g["error"] or "0,5" in text or "1,000" in text  # each says what is accepted


def test_the_tolerance_accepts_the_asked_precision():
    assert exercise("toy.3", "00_toy", "by hand", 1, "x", atol=1e-12, precision=("sf", 3))(_toy) is _toy
    sf = ex.get("toy.3")
    assert sf.tolerance(1.746928e-5) == pytest.approx(0.5e-7) and sf.tolerance(12.61) == pytest.approx(0.05)
    assert sf.rounded(1.746928e-5) == 1.75e-5 and sf.tolerance(0.0) == 1e-12  # zero has no significant figures
    dp = ex.Exercise("toy.4", "00_toy", "by hand", 1, "x", _toy, atol=1e-9, precision=("dp", 4))
    assert dp.tolerance(123.0) == pytest.approx(5e-5) and dp.rounded(0.66524) == 0.6652
    with pytest.raises(ValueError, match="precision must be"):
        exercise("toy.5", "00_toy", "by hand", 1, "x", precision=("decimals", 2))


@pytest.mark.parametrize("e", ALL, ids=[e.key for e in ALL])
def test_every_known_mistake_gets_its_own_hint(e):
    sol = e.solve()
    if callable(sol.answer):
        assert sol.cases, f"{e.key}: a code exercise needs test inputs"
    for hint, wrong in sol.wrong.items():  # two mistakes that coincide would fail here: the first hint wins
        v = check(e.key, wrong)
        assert not v and hint in v.message, f"{e.key}: {hint}"


def test_every_chapter_from_01_to_40_has_at_least_two_exercises():
    toc = (Path(__file__).resolve().parent.parent / "_toc.yml").read_text()
    chapters = [c for c in re.findall(r"file: book/(\d\d_\w+)", toc) if "01" <= c[:2] <= "40"]
    assert len(chapters) >= 29, "the table of contents lost chapters"
    counts = {c: sum(e.chapter == c for e in all_exercises()) for c in chapters}  # a test's toy is in chapter 00
    assert not {c: n for c, n in counts.items() if n < 2}, f"chapters with fewer than two exercises: {counts}"


def _book_exercises():
    return [e for e in all_exercises() if e.solve.__module__.startswith("byhand.exercises.part")]  # not the toys


def test_every_registered_exercise_has_its_anchor_in_its_chapter():
    for e in _book_exercises():
        text = (BOOK / f"{e.chapter}.md").read_text(encoding="utf-8")
        assert f"\n({e.anchor})=\n" in text, f"{e.key}: no ({e.anchor})= in {e.chapter}.md"


def test_exercises_come_in_key_order_in_their_chapter():
    for chapter in sorted({e.chapter for e in _book_exercises()}):
        text = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
        keys = [e.key for e in _book_exercises() if e.chapter == chapter]
        by_number = sorted(keys, key=lambda k: (k.split(".")[0], int(k.split(".")[1])))
        on_page = sorted(keys, key=lambda k: text.index(f"({get_anchor(k)})="))
        assert on_page == by_number, f"{chapter}: the page has {on_page}"


def get_anchor(key):
    return ex.get(key).anchor


def test_the_index_lists_every_exercise_and_links_only_the_anchors_it_is_given():
    book = _book_exercises()
    full = exercise_index()  # no anchors given: every exercise linked
    for e in book:
        assert f"[{e.key}](#{e.anchor})" in full.markdown
    some = exercise_index({"ex-dot-1"}, {"01_dot_products": ("ch-dot-products", "Dot products")})
    assert "| [Dot products](#ch-dot-products) | [dot.1](#ex-dot-1) |" in some.markdown
    assert some.markdown.count("](#ex-") == 1 and "| 02_softmax | softmax.1 |" in some.markdown
    assert "| dot.2 |" in some.markdown and some.count == full.count == len(all_exercises())
    assert repr(full) == f"{full.count} exercises" and full._repr_markdown_() == full.markdown
    # one <div> around the tables (the phone layout's hook), with blank lines so that the Markdown inside is parsed
    assert full.markdown.startswith('<div class="byhand-exercise-index">\n\n## Part I')
    assert full.markdown.endswith("\n</div>") and full.markdown.count("<div") == 1
    for bad in ("ex-dot-1", [1, 2]):
        with pytest.raises(ValueError, match="anchors must be a collection"):
            exercise_index(bad)


def test_the_index_page_passes_every_chapter_anchor():
    import re

    anchors = {a for f in BOOK.glob("[0-4]*.md")
               for a in re.findall(r"^\((ex-[a-z]+-\d+)\)=", f.read_text(encoding="utf-8"), re.M)}
    assert {e.anchor for e in _book_exercises()} <= anchors
    page = (BOOK / "50_exercises.md").read_text(encoding="utf-8")
    assert "exercise_index(anchors, chapters)" in page and r"^\((ex-[a-z]+-\d+)\)=" in page  # the same pattern as here
