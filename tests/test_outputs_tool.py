"""tools/outputs.py writes MyST as plain Markdown: each construct the book uses, and a clear error otherwise."""
import importlib.util
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("outputs_tool", ROOT / "tools" / "outputs.py")
outputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(outputs)

TARGETS = {"doc:notation": ("notation", "Notation"), "ch-a": ("01_a", "Dot products"), "sec-b": ("02_b", "Why $\\sqrt{d_k}$"), "para": ("01_a", None)}
BIB = {"vaswani2017attention": {"cite": "Vaswani et al., 2017", "entry": "…", "sort": (["Vaswani"], "2017")}}


def renderer(glued=None):
    return outputs.Renderer("01_a", glued or {"loss": {"text/plain": "2.5265012"}, "word": {"text/plain": "'am'"}},
                            TARGETS, BIB)


def test_glue_roles_become_numbers_formatted_as_on_the_page():
    r = renderer()
    assert r.markdown("loss {glue:text}`loss:.3f`, word {glue:text}`word`", "t") == "loss 2.527, word am"


def test_references_become_linked_titles_and_citations_author_year():
    r = renderer()
    assert r.markdown("see {ref}`sec-b`", "t") == "see [Why $\\sqrt{d_k}$](02_b.ipynb#sec-b)"
    assert r.markdown("see {ref}`ch-a`", "t") == "see [Dot products](#ch-a)"  # the same notebook
    assert r.markdown("see {ref}`this one <para>`", "t") == "see [this one](#para)"
    assert r.markdown("in {doc}`notation`", "t") == "in [Notation](notation.ipynb)"
    assert r.markdown("{cite}`vaswani2017attention`", "t") == \
        "\\[[Vaswani et al., 2017](bibliography.ipynb#vaswani2017attention)\\]"  # the brackets show, as on the page
    assert r.cited == {"vaswani2017attention"}


def test_labels_become_anchors_and_fences_plain_markdown():
    r = renderer()
    md = "(ch-a)=\n# Dot products\n\n:::{dropdown} Solution\nIt is {glue:text}`loss:.1f`.\n:::\n"
    out = r.markdown(md, "t")
    assert out.startswith('<a id="ch-a"></a>\n\n# Dot products')  # a blank line, so the heading stays a heading
    assert "<details>\n<summary>Solution</summary>\n\nIt is 2.5.\n\n</details>" in out
    note = r.markdown("```{note}\nTwo lines\nof text.\n```", "t")
    assert note == "> **Note**\n>\n> Two lines\n> of text."


@pytest.mark.parametrize("md, message", [
    ("{glue:text}`missing:.2f`", "'missing' is not glued"),
    ("{ref}`nowhere`", "unknown label 'nowhere'"),
    ("{ref}`para`", "needs a title"),
    ("{cite}`nobody2020`", "no bibliography entry"),
    ("{eq}`e1`", "no plain-Markdown form for the {eq} role"),
    ("```{figure} x.png\n```", "no plain-Markdown form for the 'figure' directive"),
    (":::{dropdown} x\nnever closed", "never closes"),
])
def test_what_has_no_plain_form_is_an_error_that_names_it(md, message):
    with pytest.raises(outputs.RenderError, match=message.replace("{", r"\{").replace("}", r"\}")):
        renderer().markdown(md, "t")


def test_a_code_cells_markdown_links_point_at_the_notebook_of_their_label():
    r = renderer()
    assert r.output_links("| [why](#sec-b) | [here](#ch-a) |", "t") == "| [why](02_b.ipynb#sec-b) | [here](#ch-a) |"
    with pytest.raises(outputs.RenderError, match="holds the role"):
        r.output_links("computed in {ref}`sec-b`", "t")
    with pytest.raises(outputs.RenderError, match="unknown label 'gone'"):
        r.output_links("[x](#gone)", "t")


def test_the_books_tex_macros_are_written_out_in_prose_and_in_code_written_markdown():
    r = renderer()
    assert r.markdown("a row of $\\dmodel$ numbers, $\\softmax(z)$, $\\LN_1$", "t") == \
        "a row of ${d_{\\text{model}}}$ numbers, ${\\operatorname{softmax}}(z)$, ${\\operatorname{LN}}_1$"
    assert r.output_links("$x \\in \\R^{\\dff}$", "t") == "$x \\in {\\mathbb{R}}^{{d_{\\text{ff}}}}$"
    # another command that starts with a macro's name, and a macro's name shown as code, are left alone
    assert r.markdown("$a \\Rightarrow b$, the shorthand `\\dmodel`", "t") == "$a \\Rightarrow b$, the shorthand `\\dmodel`"



def test_nbval_compares_a_written_out_macro_with_the_macro_a_fresh_run_prints():
    """A code cell that prints Markdown with \\dmodel is stored written out; nbval's sanitizer must map both to one."""
    import configparser
    import re
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg")
    rules = [(cfg[s]["regex"], cfg[s]["replace"]) for s in cfg.sections()]
    r = renderer()
    for name in outputs.tex_macros():
        fresh = f"a row of ${chr(92)}{name}^2$ numbers"
        stored = r.output_links(fresh, "t")
        assert stored != fresh
        for pattern, replace in rules:
            fresh, stored = re.sub(pattern, replace, fresh), re.sub(pattern, replace, stored)
        assert stored == fresh, name


def test_an_answer_cell_moves_below_its_solution_and_nothing_else_moves():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [md("### Exercise a.1\n\nPredict."), code("answer_box('a.1')"), code("x = get('a.1').solve().answer"),
             md("<details>\n<summary>Solution</summary>\n\nIt is 3.\n\n</details>"), md("### Exercise a.2"),
             code("y = get('a.2').solve().cases"), code("check('a.2', f)"),  # a code cell between: stays
             md("<details>\n<summary>Solution</summary>\n\n</details>")]
    moved = outputs.answers_below_solutions(cells)
    assert [c.source[:12] for c in moved] == [c.source[:12] for c in [cells[k] for k in (0, 1, 3, 2, 4, 5, 6, 7)]]


def test_in_every_readers_notebook_each_answer_comes_after_its_solution_and_folded_cells_fold_as_on_the_page():
    for path in sorted(outputs.OUT.glob("[0-9]*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        for k, cell in enumerate(cells):
            if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden"):
                assert cell.metadata.get("cellView") == "form", f"{path.name} cell {k}: folded, but not in Colab"
            if cell.cell_type == "code" and "hide-cell" in cell.metadata.get("tags", []) and cell.outputs:
                assert cell.metadata["jupyter"].get("outputs_hidden"), f"{path.name} cell {k}: output not folded"
            if cell.cell_type == "code" and ".solve().answer" in cell.source:
                heading = max(i for i in range(k) if "### Exercise" in cells[i].source)
                assert any(outputs.SOLUTION in cells[i].source for i in range(heading, k)), \
                    f"{path.name} cell {k} computes an answer before its exercise's solution"


COLAB = '''# On Colab only.
import sys

if "google.colab" in sys.modules:
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "byhand @ git+https://github.com/every-number/every-number"], check=True)'''


def test_the_colab_cell_is_pinned_to_a_commit_and_pinning_again_replaces_the_pin():
    once = outputs.pin_colab(COLAB, "a" * 40, "c" * 12)
    assert '"byhand @ git+https://github.com/every-number/every-number"\n' in once
    assert once.count('"@' + "a" * 40 + '"], check=True)') == 1
    assert "# The library as of commit aaaaaaaaaaaa (content cccccccccccc)" in once
    assert outputs.pinned(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(once)])) == ("a" * 40, "c" * 12)
    twice = outputs.pin_colab(once, "b" * 40, "d" * 12)
    assert "a" * 12 not in twice and twice.count("# The library") == 1
    assert outputs.PIN.sub("", twice) == COLAB
    with pytest.raises(ValueError, match="does not run pip"):
        outputs.pin_colab("import sys", "a" * 40, "c" * 12)


def test_a_notebook_pinned_to_another_library_is_a_lint_finding(tmp_path):
    if outputs.library_id() is None:
        pytest.skip("not a git checkout")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs.pin_colab(COLAB, "a" * 40, "0" * 12))])
    nbformat.write(nb, tmp_path / "01_x.ipynb")
    assert "not the library at HEAD" in outputs.pin_problems([tmp_path / "01_x.ipynb"])[0]
    nb.cells[0].source = COLAB
    nbformat.write(nb, tmp_path / "01_x.ipynb")
    assert "pins no commit" in outputs.pin_problems([tmp_path / "01_x.ipynb"])[0]
