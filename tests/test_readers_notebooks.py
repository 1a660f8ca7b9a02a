"""The readers' notebooks (notebooks/*.ipynb, made by `make outputs` from book/*.md) read right with no extension.

Binder, Colab, JupyterLab and GitHub's viewer show a notebook's Markdown as plain Markdown: a MyST role, a label
line or a directive fence would show as raw markup there, and a glued number as its role instead of the number.
These tests read the committed notebooks and their sources; they never run the generator's code to decide what
is right.
"""
import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
OUT = ROOT / "notebooks"
NOTEBOOKS = sorted(OUT.glob("*.ipynb"))
SOURCES = sorted(p for p in BOOK.glob("*.md") if (OUT / f"{p.stem}.ipynb").exists()
                 and "kernelspec:" in p.read_text().split("\n---", 1)[0])

RAW = {
    "a MyST role": re.compile(r"\{[a-z]+(?::[a-z]+)?\}`"),
    "a label line": re.compile(r"^\([A-Za-z0-9_.:-]+\)=\s*$", re.M),
    "a directive fence": re.compile(r"^(?::{3,}|`{3,})\{[a-z-]+\}", re.M),
}


def cells(path):
    return json.loads(path.read_text())["cells"]


def text(cell):
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_there_is_a_readers_notebook_for_every_chapter_and_page():
    stems = {p.stem for p in NOTEBOOKS}
    assert len(SOURCES) >= 30
    assert {"intro", "notation", "bibliography"} <= stems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_raw_myst_markup_in_the_prose(path):
    found = []
    for k, cell in enumerate(cells(path)):
        shown = [text(cell)] if cell["cell_type"] == "markdown" else [
            "".join(o.get("data", {}).get("text/markdown", "")) for o in cell.get("outputs", [])]
        for part in shown:
            for what, pattern in RAW.items():
                if m := pattern.search(part):
                    found.append(f"cell {k}: {what} {m.group(0)!r}")
    assert not found, found


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_glued_numbers_are_in_the_prose_as_the_page_formats_them(source):
    """Every {glue:text}`name:fmt` of the source shows in the same Markdown cell of the notebook as the value that
    the notebook's own glue output holds, formatted with Python's format()."""
    nb = cells(OUT / f"{source.stem}.ipynb")
    glued = {}
    for cell in nb:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = "".join(out["data"]["application/papermill.record/text/plain"])
    src_md = [c.source for c in jupytext.read(source).cells if c.cell_type == "markdown"]
    out_md = [text(c) for c in nb if c["cell_type"] == "markdown"]
    assert out_md[:len(src_md)] and len(out_md) in (len(src_md), len(src_md) + 1)  # + "Works cited"
    checked = 0
    for src, made in zip(src_md, out_md):
        for key, fmt in re.findall(r"\{glue:text\}`([A-Za-z_0-9]+)(?::([^`]*))?`", src):
            try:  # the text/plain repr of a number or a string, as Python wrote it
                value = ast.literal_eval(glued[key])
            except (ValueError, SyntaxError):
                value = glued[key]
            if fmt and fmt[-1] in "eEfFgG%":
                value = float(value)
            shown = format(value, fmt) if fmt else str(value)
            assert shown in made, f"{key} = {shown!r} is not in the notebook's prose"
            checked += 1
    assert checked == sum(len(re.findall(r"\{glue:text\}`", s)) for s in src_md)


def test_every_link_between_notebooks_lands_on_an_anchor():
    anchors = {p.name: set(re.findall(r'<a id="([^"]+)"></a>', "".join(text(c) for c in cells(p))))
               for p in NOTEBOOKS}
    broken, seen = [], 0
    for path in NOTEBOOKS:
        for cell in cells(path):
            if cell["cell_type"] != "markdown":
                continue
            for target, anchor in re.findall(r"\]\(([^)#\s]*\.ipynb)?#([^)\s]+)\)", text(cell)):
                seen += 1
                if anchor not in anchors.get(target or path.name, set()):
                    broken.append(f"{path.name}: {target}#{anchor}")
    assert seen > 100 and not broken, broken


def test_hidden_cells_are_collapsed_and_nothing_is_timed():
    for path in NOTEBOOKS:
        for cell in cells(path):
            tags = set(cell.get("metadata", {}).get("tags", []))
            assert "execution" not in cell.get("metadata", {}), path.name  # no timestamps
            if tags & {"hide-input", "hide-cell", "remove-input", "remove-cell"}:
                assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True, path.name
