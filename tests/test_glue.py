"""Tests for byhand.glue: values reach the prose as plain, finite Python numbers, with their provenance."""
import numpy as np
import pytest
from myst_nb.ext import glue as myst_glue_module

from byhand import glue as glue_module
from byhand.bounds import below
from byhand.glue import PROVENANCE_KEY, glue, kind, plain


def test_plain_unwraps_numpy_scalars():
    assert type(plain(np.float64(1.5))) is float
    assert type(plain(np.int64(3))) is int
    assert type(plain(np.array(2.5))) is float
    assert plain("text") == "text"


def capture(monkeypatch, module, attr):
    """Collect (bundle, metadata) of every display call that ``module`` makes through ``attr``."""
    shown = []
    monkeypatch.setattr(module, attr, lambda bundle, raw, metadata: shown.append((bundle, metadata)))
    return shown


def test_glue_returns_the_plain_value_and_records_it(monkeypatch):
    shown = capture(monkeypatch, glue_module, "_display")
    assert glue("loss", np.float64(0.25)) == 0.25
    (bundle, metadata), = shown
    assert bundle == {"application/papermill.record/text/plain": "0.25"}
    assert metadata["scrapbook"] == {"name": "loss", "mime_prefix": "application/papermill.record/"}


def test_glue_output_is_myst_nbs_own_plus_one_metadata_entry(monkeypatch):
    ours = capture(monkeypatch, glue_module, "_display")
    theirs = capture(monkeypatch, myst_glue_module, "ipy_display")
    for display in (False, True):
        glue("p_am", 0.0723, display=display)
        myst_glue_module.glue("p_am", 0.0723, display=display)
    for (b1, m1), (b2, m2) in zip(ours, theirs, strict=True):
        assert b1 == b2
        assert {k: v for k, v in m1.items() if k != PROVENANCE_KEY} == m2


def test_provenance_is_the_calling_line_and_holds_no_digits(monkeypatch):
    shown = capture(monkeypatch, glue_module, "_display")
    x0 = np.arange(6.0).reshape(2, 3) / 7
    glue("x0_12", x0[1, 2])
    glue("spread",
         x0.max() - x0.min())
    first, second = (m[PROVENANCE_KEY] for _, m in shown)
    assert first["source"] == 'glue("x0_12", x0[1, 2])'
    assert first["kind"] == "a float" and first["shapes"] == ["x0 of shape (2, 3)"]
    assert second["source"] == 'glue("spread",\n         x0.max() - x0.min())'
    assert second["line"] == first["line"] + 1
    assert "0.71428" not in repr(first)  # the digits live in the glue data only, never in the metadata


def test_provenance_of_a_call_made_through_the_library_is_the_cells_line(monkeypatch):
    shown = capture(monkeypatch, glue_module, "_display")
    # byhand.bounds.below does not glue, so call glue from a frame that claims to be in the byhand package
    helper = {"__name__": "byhand.helper", "glue": glue}
    exec("def helper(v):\n    return glue('via_helper', v)\n", helper)
    helper["helper"](3)
    (_, metadata), = shown
    assert metadata[PROVENANCE_KEY]["source"] == 'helper["helper"](3)'
    assert metadata[PROVENANCE_KEY]["kind"] == "an integer"


def test_kind_names_bounds_and_arrays():
    assert kind(below(3e-13, 1e-9)).startswith("a bound")
    assert kind(np.zeros((2, 5))) == "an array of shape (2, 5)"
    assert kind(True) == "a truth value" and kind("Mary") == "text"


@pytest.mark.parametrize("name, value, message", [("bad name", 1.0, "identifier"), ("x", np.nan, "not finite"),
                                                  ("y", float("inf"), "not finite")])
def test_glue_rejects_bad_names_and_values(name, value, message):
    with pytest.raises(ValueError, match=message):
        glue(name, value)


def test_a_float_is_recorded_the_same_whatever_its_last_bits(monkeypatch):
    """Two CPUs that differ in the last bits of a result must write the same notebook (README, "Platforms")."""
    shown = capture(monkeypatch, glue_module, "_display")
    a = 0.84057841680387
    b = np.nextafter(np.nextafter(a, 1.0), 1.0)  # two ulps away, as another machine's SIMD loop may land
    assert repr(a) != repr(float(b))
    assert glue("p", a) == a  # the unrounded value comes back to the cell
    glue("p", b)
    (b1, _), (b2, _) = shown
    assert b1 == b2 == {"application/papermill.record/text/plain": "0.8405784168"}
