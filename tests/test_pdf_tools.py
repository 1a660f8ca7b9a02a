"""The printed book's tools: the editions extension (_ext/editions.py), tools/pdf.py and tools/check_pdf.py.

The browser and poppler are not needed here: `make check-pdf` runs them on the real PDFs. These tests check the
pieces that decide what gets printed and what counts as a finding.
"""
import sys
from pathlib import Path

import pytest
from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
sys.path.insert(0, str(ROOT / "tools"))

import check_pdf  # noqa: E402
import editions  # noqa: E402
import pdf  # noqa: E402


# --- editions -------------------------------------------------------------------------------------------------

def test_edition_default_config_and_environment():
    assert editions.edition_of(None, environ={}) == "instructor"
    assert editions.edition_of("student", environ={}) == "student"
    # the environment wins over the configuration, whatever its case
    assert editions.edition_of("student", environ={"BYHAND_EDITION": "Instructor"}) == "instructor"
    assert editions.edition_of(None, environ={"BYHAND_EDITION": "student"}) == "student"


def test_unknown_edition_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown edition 'teacher'"):
        editions.edition_of(None, environ={"BYHAND_EDITION": "teacher"})


def _dropdown(title: str, body: str) -> nodes.container:
    box = nodes.container(design_component="dropdown", has_title=True)
    box += nodes.rubric(title, title)
    box += nodes.paragraph(body, body)
    return box


def _cell(tags: list[str], code: str) -> nodes.container:
    cell = nodes.container(nb_element="cell_code", cell_metadata={"tags": tags},
                           classes=["cell"] + [f"tag_{t}" for t in tags])
    cell += nodes.literal_block(code, code)
    return cell


def _document(*children) -> nodes.document:
    doc = new_document("test", get_default_settings(Parser))
    section = nodes.section()
    section += nodes.title("Exercise softmax.1", "Exercise softmax.1")
    for child in children:
        section += child
    doc += section
    return doc


def test_strip_solutions_takes_out_solutions_only():
    doc = _document(
        nodes.paragraph("Turn the logits into probabilities.", "Turn the logits into probabilities."),
        _cell(["remove-input", "nbval-ignore-output"], "answer_box('softmax.1')"),
        _dropdown("Solution", "The exponentials are 7.3891, 2.7183 and 1."),
        _cell(["hide-cell", "solution"], "def softmax(Z): ..."),
        _dropdown("Hint", "Exponentiate first."),
        _cell(["hide-cell"], "import numpy as np"),
    )
    assert editions.strip_solutions(doc) == 2
    text = doc.astext()
    assert "7.3891" not in text and "def softmax" not in text
    # the exercise, its answer box, a dropdown with another title and a collapsed cell of another kind stay
    for kept in ("Turn the logits", "answer_box", "Exponentiate first", "import numpy"):
        assert kept in text
    assert editions.strip_solutions(doc) == 0  # nothing left to take


def test_a_solution_title_must_match_exactly():
    assert not editions.is_solution_dropdown(_dropdown("Solutions manual", "…"))
    assert editions.is_solution_dropdown(_dropdown("Solution", "…"))
    assert not editions.is_solution_cell(_cell(["hide-cell"], "x = 1"))


# --- pdf.py -----------------------------------------------------------------------------------------------------

def test_read_toc_gives_every_part_and_chapter_in_order(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nparts:\n"
                   "  - caption: 'Part I: ideas'\n    chapters:\n      - file: book/01_a\n      - file: book/02_b\n"
                   "  - caption: 'Part II: a step'\n    chapters:\n      - file: book/10_c\n"
                   "  - caption: Appendices\n    chapters:\n      - file: book/notation\n")
    root, parts = pdf.read_toc(toc)
    assert root == "book/intro"
    assert [p.slug for p in parts] == ["part-1", "part-2", "appendices"]
    assert [p.files for p in parts] == [["book/01_a", "book/02_b"], ["book/10_c"], ["book/notation"]]


def test_read_toc_without_parts_is_a_clear_error(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/01_a\n")
    with pytest.raises(ValueError, match="lists no parts"):
        pdf.read_toc(toc)


def test_the_book_toc_has_its_four_parts_and_appendices():
    _, parts = pdf.read_toc()
    assert [p.slug for p in parts][:4] == ["part-1", "part-2", "part-3", "part-4"]
    assert all((ROOT / f"{f}.md").is_file() for p in parts for f in p.files)


def test_chapter_headings_nest_under_the_part():
    out = pdf._demote('<h1>Softmax<a class="headerlink">#</a></h1><h2 id="x">Logits</h2><h6>deep</h6>')
    assert out == '<h2>Softmax<a class="headerlink">#</a></h2><h3 id="x">Logits</h3><h6>deep</h6>'


def test_ids_and_their_links_get_the_chapter_prefix():
    out = pdf._id_prefix('<section id="exercises"><a href="#exercises">x</a><a href="other.html#y">', "02_softmax")
    assert 'id="02_softmax--exercises"' in out and 'href="#02_softmax--exercises"' in out
    assert 'href="other.html#y"' in out  # links to other pages are sorted out in the print document


def test_running_head_quotes_the_title():
    css = pdf.page_css("ch-02", 'The "stable" form')
    assert '@page ch-02' in css and 'content: "The \\"stable\\" form"' in css and "page: ch-02" in css


def test_unknown_edition_for_pdf(tmp_path):
    with pytest.raises(ValueError, match="unknown edition"):
        pdf.build(tmp_path, tmp_path / "out", "draft")


def test_pdf_of_a_site_that_was_not_built(tmp_path):
    with pytest.raises(ValueError, match="run `make book` first"):
        pdf.build(tmp_path, tmp_path / "out", "instructor")


# --- check_pdf.py -----------------------------------------------------------------------------------------------

BBOX = """<doc>
<page width="595.000000" height="842.000000">
<word xMin="45.350000" yMin="60.0" xMax="90.000000" yMax="70.0">Softmax</word>
<word xMin="500.000000" yMin="60.0" xMax="549.900000" yMax="70.0">edge</word>
<word xMin="520.000000" yMin="80.0" xMax="580.000000" yMax="90.0">overflow&amp;co</word>
</page>
<page width="595.000000" height="842.000000">
<word xMin="10.000000" yMin="60.0" xMax="40.000000" yMax="70.0">left</word>
</page>
</doc>"""


def test_words_past_either_margin_are_found():
    bad = check_pdf.words_outside(BBOX)
    assert len(bad) == 2
    assert bad[0].startswith("page 1: 'overflow&co'") and bad[1].startswith("page 2: 'left'")


def test_text_is_compared_without_spacing_hyphens_or_curly_quotes():
    assert check_pdf.squash("Adam and the warm-\nup\n  schedule") == check_pdf.squash("Adam and the warmup schedule")
    assert check_pdf.squash("The book\u2019s \u201cmodel\u201d") == check_pdf.squash("The book's \"model\"")


def test_chapter_title_is_the_sources_first_heading(tmp_path):
    md = tmp_path / "ch.md"
    md.write_text("---\njupytext: {}\n---\n\n(ch-x)=\n# Why $\\sqrt{d_k}$: `scores`\n\n## Not this one\n")
    assert check_pdf.chapter_title(md) == "Why \\sqrt{dk}: scores"
    (tmp_path / "none.md").write_text("no heading here\n")
    with pytest.raises(ValueError, match="no '# ' title"):
        check_pdf.chapter_title(tmp_path / "none.md")


DROPDOWNS = """
<details class="sd-sphinx-override sd-dropdown sd-card sd-mb-3">
<summary class="sd-summary-title sd-card-header"><span class="sd-summary-text">Deeper: why
<span class="math notranslate nohighlight">\\(\\sqrt{d_k}\\)</span></span><div class="sd-summary-down">v</div></summary>
<div class="sd-summary-content sd-card-body docutils"><p>With <span class="math">\\(d_k = 4\\)</span> the sum has
<a class="prov-num" href="#n1">0.84058</a> as its spread, and so the scores grow with the width of the key.</p>
</div></details>
<details class="sd-sphinx-override sd-dropdown sd-card sd-mb-3">
<summary class="sd-summary-title sd-card-header"><span class="sd-summary-text">Solution</span></summary>
<div class="sd-summary-content sd-card-body docutils"><p>Exponentiate first, then divide each by their sum.</p>
</div></details>
<details class="sd-sphinx-override sd-dropdown sd-card sd-mb-3">
<summary class="sd-summary-title sd-card-header">Too short</summary>
<div class="sd-summary-content sd-card-body docutils"><p>One word.</p></div></details>
"""


def test_deeper_boxes_give_a_run_of_plain_words_and_solutions_none():
    probes = check_pdf.deeper_probes(DROPDOWNS)
    assert probes == [("Deeper: why \\(\\sqrt{d_k}\\)", "as its spread, and so the scores grow with the width of the key")]


@pytest.mark.parametrize("line, is_heading", [
    ("Solutions to Part I: ideas, with real numbers", True),
    ("   Solution: in \u201cSolutions to Part I\u201d, at the end of the part.", True),
    ("The solution to the exercise is below.", False),
    ("Worked solutions sit in collapsed boxes.", False),
])
def test_solution_headings(line, is_heading):
    assert bool(check_pdf.SOLUTION_LINE.search("text before\n" + line + "\n")) is is_heading


def test_every_pdf_has_expected_sizes():
    import json

    expected = json.loads(check_pdf.EXPECTED.read_text())
    _, parts = pdf.read_toc()
    names = {f"{p.slug}.pdf" for p in parts} | {"every-number.pdf"}
    for edition in pdf.EDITIONS:
        assert set(expected[edition]) == names
        assert expected[edition]["appendices.pdf"]["pages"][0] > 0
        for e in expected[edition].values():
            lo, hi = e["pages"]
            assert 0 < lo <= hi and e["min_bytes"] > 0


def _site(folder: Path, pages: dict[str, str]) -> Path:
    for name, body in pages.items():
        path = folder / f"{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><body>{body}</body></html>")
    return folder


BOX = '<div class="en-exercise" data-exercise="{&quot;key&quot;: &quot;softmax.1&quot;}">'
SOLUTION = ('<details class="sd-dropdown"><summary class="sd-summary-title">\n<span class="sd-summary-text">Solution'
            '</span></summary><p>7.3891</p></details>')


def test_student_site_compared_with_the_instructor_one(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("root: book/intro\nparts:\n  - caption: 'Part I: x'\n    chapters:\n      - file: book/02_a\n")
    inst = _site(tmp_path / "inst", {"book/intro": "", "book/02_a": BOX + SOLUTION})
    good = _site(tmp_path / "good", {"book/intro": "", "book/02_a": BOX})
    assert check_pdf.check_sites(inst, good, toc) == []
    # a solution left in, a lost answer box, and the page sources copied: three findings
    bad = _site(tmp_path / "bad", {"book/intro": "", "book/02_a": SOLUTION})
    (bad / "_sources").mkdir()
    found = check_pdf.check_sites(inst, bad, toc)
    assert len(found) == 3 and "worked solution" in found[0] and "answer boxes" in found[1] and "_sources" in found[2]
