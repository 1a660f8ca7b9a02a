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
