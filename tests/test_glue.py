"""Tests for byhand.glue: values reach the prose as plain, finite Python numbers."""
import numpy as np
import pytest

from byhand import glue as glue_module
from byhand.glue import glue, plain


def test_plain_unwraps_numpy_scalars():
    assert type(plain(np.float64(1.5))) is float
    assert type(plain(np.int64(3))) is int
    assert type(plain(np.array(2.5))) is float
    assert plain("text") == "text"


def test_glue_returns_the_plain_value_and_records_it(monkeypatch):
    recorded = {}
    monkeypatch.setattr(glue_module, "_myst_glue", lambda name, value, display: recorded.update({name: value}))
    assert glue("loss", np.float64(0.25)) == 0.25
    assert recorded == {"loss": 0.25} and type(recorded["loss"]) is float


@pytest.mark.parametrize("name, value, message", [("bad name", 1.0, "identifier"), ("x", np.nan, "not finite"),
                                                  ("y", float("inf"), "not finite")])
def test_glue_rejects_bad_names_and_values(name, value, message):
    with pytest.raises(ValueError, match=message):
        glue(name, value)
