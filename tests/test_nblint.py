"""tools/nblint.py's check for results typed into a chapter's prose."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("nblint", ROOT / "tools" / "nblint.py")
nblint = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nblint)

HEADER = "---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n---\n\n"


def findings(tmp_path, prose):
    path = tmp_path / "99_x.md"
    path.write_text(HEADER + prose + "\n\n```{code-cell}\nx = 1\n```\n")
    return nblint.typed_numbers(path)


def test_a_result_typed_into_a_solution_is_flagged(tmp_path):
    """The maintainer's planted slip: a solution that types its answer instead of gluing it."""
    found = findings(tmp_path, ":::{dropdown} Solution\nThe gap is 1.700, so the weight rises.\n:::")
    assert len(found) == 1 and "'1.700'" in found[0]


def test_settings_math_code_and_glue_are_allowed(tmp_path):
    prose = ("Raise it by Δ = 0.25, keep bars above 0.01, read head 9.9. With $\\beta_2 = 0.999$ and `lr = 0.0125`,"
             " the loss is {glue:text}`loss:.4f`, see [the table](#tab-1.234).")
    assert findings(tmp_path, prose) == []


def test_a_glued_number_in_a_dropdown_title_is_flagged(tmp_path):
    found = findings(tmp_path, ":::{dropdown} Deeper: the {glue:text}`n` weights\nBody.\n:::")
    assert len(found) == 1 and "dropdown" in found[0]


def test_a_tex_command_eaten_by_a_python_escape_is_flagged(tmp_path, monkeypatch):
    """"\text" in a non-raw string is a tab and "ext": the Markdown a cell writes shows "ext{LN}" (chapter 35 had it)."""
    import nbformat
    nb = nbformat.v4.new_notebook()
    out = nbformat.v4.new_output("display_data", data={"text/markdown": "| full Jacobian $J_{\text{LN}}$ | 0.1 |"})
    ok = nbformat.v4.new_output("display_data", data={"text/markdown": r"| full Jacobian $J_{\text{LN}}$ | 0.1 |"})
    nb.cells = [nbformat.v4.new_code_cell("import sys", execution_count=1),
                nbformat.v4.new_code_cell("show()", execution_count=2, outputs=[out]),
                nbformat.v4.new_code_cell("show()", execution_count=3, outputs=[ok])]
    path = tmp_path / "99_x.ipynb"
    nbformat.write(nb, path)
    monkeypatch.setattr(nblint, "ROOT", tmp_path)
    eaten = [f for f in nblint.lint_notebook(path) if "control character" in f]
    assert len(eaten) == 1 and "cell 1" in eaten[0] and "'ext{LN'" in eaten[0]
