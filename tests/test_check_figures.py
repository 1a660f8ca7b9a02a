"""Tests for tools/check_figures.py: what counts as a text alternative that says what a figure shows."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from check_figures import name_problem, slider_problems  # noqa: E402


def image(alt, kind="figure", title=None, said=None):
    return {"alt": alt, "title": title, "src": "x", "kind": kind, "said": said}


def test_a_file_name_or_an_empty_alt_fails_and_a_description_with_a_number_passes():
    assert "file name" in name_problem(image("../_images/07ad5f3e.png"))
    assert "empty" in name_problem(image(""))
    assert "empty" in name_problem(image(None))
    assert "no number" in name_problem(image("A bar chart of the products."))
    assert name_problem(image("Bar chart of the 64 products; the total is 3.21.")) is None


def test_a_logo_needs_a_name_but_no_number():
    assert name_problem(image("Binder logo", kind="other")) is None
    assert "empty" in name_problem(image("", kind="other"))


def test_a_live_image_may_be_described_by_the_line_under_it():
    assert name_problem(image(None, kind="live", said="Line of slope 2.00.")) is None
    assert name_problem(image(None, kind="live", title="Line of slope 2.00.")) is None
    assert "empty" in name_problem(image(None, kind="live"))
    assert "empty" in name_problem(image(None, kind="figure", said="Line of slope 2.00."))  # a figure needs its alt


def test_a_slider_frame_described_by_its_label_alone_fails():
    labelled = {"alts": ["θ = 0°", "θ = 15°"], "labels": ["θ = 0°", "θ = 15°"], "valuetext": "θ = 0°"}
    assert "2 of 2 frames" in slider_problems(0, labelled)[0]
    described = {"alts": ["Total 3.21.", "Total 2.10."], "labels": ["θ = 0°", "θ = 15°"],
                 "valuetext": "θ = 0°: Total 3.21."}
    assert slider_problems(0, described) == []
    assert "aria-valuetext" in slider_problems(1, {**described, "valuetext": None})[0]
