"""The README's description of the Part IV model must not drift from the shipped metadata and the data generator.

The README is read before anything runs, so it states the model's sizes and training settings in words; this
test reads those words back and compares each with `ioi_meta.json` and `byhand.ioi`, so a retrain with other
settings fails here until the README is updated.
"""
import re
from pathlib import Path

import pytest

from byhand import ioi
from byhand.ioi import load_model

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
_, CONFIG, VOCAB, META = load_model("final")
TRAIN = META["train"]


def said(pattern: str) -> str:
    """The number that ``pattern``'s one group captures in the README; fails if the README no longer says it."""
    m = re.search(pattern, README)
    assert m, f"the README no longer matches {pattern!r}"
    return m.group(1)


@pytest.mark.parametrize("pattern, actual", [
    (r"with (\d+) layers", CONFIG.n_layers),
    (r"(\d+) heads, d_model", CONFIG.n_heads),
    (r"d_model (\d+)", CONFIG.d_model),
    (r"d_ff (\d+)", CONFIG.d_ff),
    (r"a context of (\d+)", CONFIG.context),
    (r"a (\d+)-word vocabulary", CONFIG.vocab_size),
    (r"(\d+) templates", len(ioi.TEMPLATES)),
    (r"(\d+) one-token names", len(ioi.NAMES)),
    (r"(\d+) places", len(ioi.PLACES)),
    (r"(\d+) objects", len(ioi.OBJECTS)),
    (r"(\d+) verbs", len(ioi.VERBS)),
    (r"runs (\d+) AdamW steps", TRAIN["steps"]),
    (r"steps of (\d+) sentences", TRAIN["batch_size"]),
    (r"warm-up over (\d+) steps", TRAIN["warmup"]),
])
def test_integer_settings(pattern, actual):
    assert int(said(pattern)) == actual


@pytest.mark.parametrize("pattern, actual", [
    (r"cosine decay\s+from ([\d.e-]+) to", TRAIN["lr_max"]),
    (r"cosine decay\s+from [\d.e-]+ to ([\d.e-]+)", TRAIN["lr_min"]),
    (r"weight decay (\d+(?:\.\d+)?) on", TRAIN["weight_decay"]),
    (r"global norm (\d+(?:\.\d+)?)", TRAIN["clip"]),
])
def test_real_settings(pattern, actual):
    assert float(said(pattern)) == actual


def test_vocabulary_size_is_the_tokenizer_size():
    assert CONFIG.vocab_size == len(VOCAB)
