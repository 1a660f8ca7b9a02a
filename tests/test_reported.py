"""byhand.reported: the cited GPT-2 figures load as numbers, with their source and meaning."""
import math

import pytest

from byhand.reported import gpt2_reported, gpt2_reported_meaning, gpt2_source


def test_figures_are_finite_numbers_with_a_meaning():
    figs = gpt2_reported()
    assert len(figs) >= 20
    for name, value in figs.items():
        assert isinstance(value, (int, float)) and math.isfinite(value), name
        assert gpt2_reported_meaning(name)


def test_internal_consistency_of_the_reported_figures():
    f = gpt2_reported()
    # -log of the reported P(answer) is the reported loss, to the source's rounding
    assert -math.log(f["P(answer)"]) == pytest.approx(f["loss = -log P(answer)"], abs=0.005)
    # p - y at the answer is P(answer) - 1
    assert f["P(answer)"] - 1 == pytest.approx(f["dloss/dz of the answer"], abs=1e-9)
    # the ratio of two probabilities is e to the gap of their logits
    assert math.exp(f["logit gap to the runner-up"]) == pytest.approx(f["P(answer)"] / f["P(runner-up)"], rel=0.01)
    # the sentence's cost is -log of its probability
    assert -math.log(f["P(sentence)"]) == pytest.approx(f["-log P(sentence)"], abs=0.1)
    # the article's e^1.66 is its ratio of 5.3, and 0.677 / 0.128 rounds to it too
    assert math.exp(f["logit gap to the runner-up"]) == pytest.approx(f["ratio of the answer to the runner-up"], abs=0.05)
    assert f["P(answer)"] / f["P(runner-up)"] == pytest.approx(f["ratio of the answer to the runner-up"], abs=0.05)
    # a word's cost is -log of its p; p is printed to one significant figure, so only to about 0.2 nats
    for word in ("the answer's first mention", "' drink'"):
        assert -math.log(f[f"P of {word}"]) == pytest.approx(f[f"cost of {word}"], abs=0.2), word
    # had John been the answer, the loss is -log P(John): 0.023 printed to 3 decimals spans 3.75 .. 3.79
    assert -math.log(f["P(subject)"]) == pytest.approx(f["loss if the subject were the answer"], abs=0.04)
    # a wrong word's slope p - y is its probability
    assert f["dloss/dz of the runner-up"] == f["P(runner-up)"] and f["dloss/dz of the subject"] == f["P(subject)"]
    # the least likely token is far below every probability the article names
    assert f["smallest P"] < 1e-12


def test_source_is_cited_by_title_and_key():
    s = gpt2_source()
    assert s["title"] == "The math inside a transformer" and s["bibkey"] == "mathinside"


def test_unknown_figure_names_the_known_ones():
    with pytest.raises(ValueError, match="P\\(answer\\)"):
        gpt2_reported_meaning("P(Mary)")
