"""Tests for _ext/provenance.py: which cell glued a name, duplicates and unknown sources stop the build, and a
tiny book (pre-executed notebooks, no kernel) gets its numbers linked to their cells."""
import sys
from pathlib import Path

import nbformat
import pytest
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
import provenance  # noqa: E402

PREFIX = "application/papermill.record/"


def glued(name, value, source=None, kind="a float"):
    """A glue output as byhand.glue leaves it (source None: as myst_nb.glue leaves it, with no provenance)."""
    meta = {"scrapbook": {"name": name, "mime_prefix": PREFIX}}
    if source is not None:
        meta["byhand_provenance"] = {"source": source, "line": 1, "kind": kind, "shapes": []}
    return nbformat.v4.new_output("display_data", data={PREFIX + "text/plain": repr(value)}, metadata=meta)


def notebook(*cells):
    """cells: (source, outputs, tags) for code cells, or a str for a Markdown cell."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    for c in cells:
        if isinstance(c, str):
            nb.cells.append(nbformat.v4.new_markdown_cell(c))
        else:
            source, outputs, tags = c
            nb.cells.append(nbformat.v4.new_code_cell(source, outputs=outputs, metadata={"tags": tags},
                                                      execution_count=1))
    return nb


def test_glue_table_maps_each_name_to_its_cell():
    nb = notebook("# Title", ('glue("a", 0.5)', [glued("a", 0.5, 'glue("a", 0.5)')], []),
                  ('glue("b", 2)', [glued("b", 2, 'glue("b", 2)', "an integer")], ["remove-cell"]))
    numbers, problems = provenance.glue_table(nb, [1, 3, 7])
    assert problems == []
    assert (numbers["a"]["cell"], numbers["a"]["number"], numbers["a"]["shown"]) == (1, 1, True)
    assert (numbers["b"]["cell"], numbers["b"]["number"], numbers["b"]["shown"]) == (2, 2, False)
    assert numbers["b"]["value"] == "2" and provenance.link_target(numbers["b"]) == "prov-code-2"


def test_glue_table_reports_a_name_glued_twice_with_both_cells():
    nb = notebook(('glue("a", 1)', [glued("a", 1, 'glue("a", 1)')], []),
                  ('glue("a", 2)', [glued("a", 2, 'glue("a", 2)')], []))
    _, problems = provenance.glue_table(nb, [5, 9])
    assert len(problems) == 1
    assert "'a' is glued twice" in problems[0] and "line 5" in problems[0] and "line 9" in problems[0]


def test_glue_table_reports_a_name_with_no_source_or_a_source_in_no_cell():
    nb = notebook(('myst_nb.glue("a", 1)', [glued("a", 1)], []),
                  ('glue("b", 1)', [glued("b", 1, 'glue("b", 999)')], []))
    _, problems = provenance.glue_table(nb, [1, 2])
    assert any("'a'" in p and "no recorded source" in p for p in problems)
    assert any("'b'" in p and "in no code cell" in p for p in problems)


def test_glue_key_reads_the_roles_text():
    assert provenance.glue_key("loss:.4f", True) == "loss"
    assert provenance.glue_key("loss", True) == "loss"
    assert provenance.glue_key("other.ipynb::loss:.4f", True) is None


def build(tmp_path, nb):
    src = tmp_path / "src"
    src.mkdir()
    nbformat.write(nb, src / "index.ipynb")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'provenance']\nnb_execution_mode = 'off'\nexclude_patterns = ['_build']\n")
    app = Sphinx(str(src), str(src), str(tmp_path / "out"), str(tmp_path / "doctrees"), "html",
                 status=None, warning=None, freshenv=True)
    app.build()
    return (tmp_path / "out" / "index.html").read_text()


def test_a_tiny_book_links_each_number_to_its_cell(tmp_path):
    page = build(tmp_path, notebook(
        "# Title\n\nThe loss is {glue:text}`loss:.2f` and the count {glue:text}`n`.",
        ('loss = 0.25 + 1e-3\nglue("loss", loss)', [glued("loss", 0.251, 'glue("loss", loss)')], []),
        ('glue("n", 7)', [glued("n", 7, 'glue("n", 7)', "an integer")], ["remove-cell"])))
    assert '<a class="prov-num" href="#prov-cell-1" aria-describedby="prov-tip-0" data-prov-key="loss">' in page
    assert 'id="prov-cell-1"' in page  # the visible cell is the target
    assert 'href="#prov-code-2"' in page and 'id="prov-code-2"' in page  # the removed cell's code is listed
    assert 'id="prov-tip-0" hidden>' in page and "0.251" in page and "glue(&quot;loss&quot;, loss)" in page
    assert "Numbers in this chapter (2)" in page


def test_a_tiny_book_with_a_duplicate_name_does_not_build(tmp_path):
    with pytest.raises(provenance.ProvenanceError, match="'x' is glued twice"):
        build(tmp_path, notebook("# Title\n\n{glue:text}`x`",
                                 ('glue("x", 1)', [glued("x", 1, 'glue("x", 1)')], []),
                                 ('glue("x", 2)', [glued("x", 2, 'glue("x", 2)')], [])))
