"""Tests for the accessibility fixes to the built HTML: _ext/a11y.py and the theme templates in _templates/.

A tiny book (a pre-executed notebook with a hidden cell, a bibliography, no kernel) is built with the book's theme,
and its pages are read as HTML. That axe-core finds nothing on the real book is `make check-html`'s job.
"""
import re
import sys
from pathlib import Path

import nbformat
import pydata_sphinx_theme
import pytest
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "_ext"))
import a11y  # noqa: E402

THEME_COMPONENTS = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "components"
TEMPLATES = sorted((ROOT / "_templates").glob("*.html"))

SUMMARY = '<summary aria-label="Toggle hidden content">\n<p class="collapsed admonition-title">Show code cell content</p>'
BIB = ('<div role="list" class="citation-list">\n<div class="citation" id="id7" role="doc-biblioentry">\n'
       '<span class="label">[BKH16]</span><p>Layer normalization.</p></div></div>')


def test_fix_body_names_summaries_by_their_text_and_makes_citations_list_items():
    body, counts = a11y.fix_body(f"<p>before</p>{SUMMARY}{SUMMARY}{BIB}")
    assert "aria-label" not in body
    assert body.count("<summary>\n<p") == 2
    assert 'role="doc-biblioentry"' not in body
    assert '<div class="citation" id="id7" role="listitem">' in body
    assert '<div role="list" class="citation-list">' in body  # the list itself is kept
    assert sorted(counts.values()) == [1, 2]


def test_fix_body_is_idempotent_and_leaves_other_markup_alone():
    once, _ = a11y.fix_body(SUMMARY + BIB)
    twice, counts = a11y.fix_body(once)
    assert twice == once and set(counts.values()) == {0}
    other = '<summary aria-label="Show all 16 columns">x</summary><div role="doc-biblioentry">y</div>'
    assert a11y.fix_body(other)[0] == other  # only myst-nb's label and bibtex's citation entries are touched


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda p: p.name)
def test_each_template_shadows_a_theme_component_and_keeps_its_classes(template):
    """A template that shadows nothing would silently do nothing; one that drops a class loses the theme's CSS
    and JavaScript (the search overlay, the colour-mode icons)."""
    original = THEME_COMPONENTS / template.name
    assert original.exists(), f"pydata-sphinx-theme has no component {template.name}"
    classes = lambda text: re.findall(r'class="([^"]+)"', re.sub(r"\{#.*?#\}", "", text, flags=re.S))  # noqa: E731
    assert [c.split() for c in classes(template.read_text())] == [c.split() for c in classes(original.read_text())]


def notebook():
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells.append(nbformat.v4.new_markdown_cell("# Title\n\nNo formula here, one citation {cite}`ba2016layer`."))
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", outputs=[], metadata={"tags": ["hide-cell"]},
                                              execution_count=1))
    return nb


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("a11y")
    src = tmp / "src"
    src.mkdir()
    nbformat.write(notebook(), src / "index.ipynb")
    (src / "refs.md").write_text("# References\n\n```{bibliography}\n```\n")
    (src / "refs.bib").write_text("@article{ba2016layer, title={Layer Normalization}, author={Ba, Jimmy Lei},"
                                  " journal={arXiv:1607.06450}, year={2016}}\n")
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
        "extensions = ['myst_nb', 'sphinxcontrib.bibtex', 'a11y']\nnb_execution_mode = 'off'\n"
        "bibtex_bibfiles = ['refs.bib']\nexclude_patterns = ['_build']\nhtml_theme = 'sphinx_book_theme'\n"
        f"templates_path = [{str(ROOT / '_templates')!r}]\nhtml_context = {{'default_mode': 'light'}}\n"
        "myst_enable_extensions = ['dollarmath']\n")
    app = Sphinx(str(src), str(src), str(tmp / "out"), str(tmp / "doctrees"), "html",
                 status=None, warning=None, freshenv=True)
    app.build()
    return tmp / "out"


def test_built_hide_cell_summary_is_named_by_its_visible_text(site):
    page = (site / "index.html").read_text()
    assert "Toggle hidden content" not in page
    assert re.search(r"<summary>\s*<p class=\"collapsed admonition-title\">Show code cell content</p>", page)


def test_built_bibliography_is_a_list_of_list_items(site):
    page = (site / "refs.html").read_text()
    assert 'role="list"' in page and "doc-biblioentry" not in page
    assert len(re.findall(r'<div class="citation"[^>]*role="listitem"', page)) == 1


def test_built_theme_buttons_are_named_as_they_look(site):
    page = (site / "index.html").read_text()
    field = re.search(r'<button class="btn search-button-field[^>]*>', page).group(0)
    assert "aria-label" not in field  # named by its text, "Search Ctrl+K"
    switch = re.search(r'<button class="[^"]*theme-switch-button[^>]*>', page).group(0)
    assert 'aria-label="Dark mode"' in switch and 'aria-pressed="false"' in switch
    assert "title=" not in page.split(switch, 1)[1].split("</button>", 1)[0]  # the icons are decoration


def test_search_page_loads_mathjax_and_a_page_without_math_does_not(site):
    mathjax = re.compile(r'<script[^>]+src="[^"]*mathjax[^"]*"')
    assert mathjax.search((site / "search.html").read_text())
    assert not mathjax.search((site / "refs.html").read_text())
