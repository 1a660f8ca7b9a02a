"""Tests for byhand.views.head_removal: every set of heads is scored as ablate + heldout_metrics score it."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.ablation import Component, ablate, ablation_study, heldout_metrics
from byhand.ioi import generate, load_model
from byhand.views.head_removal import head_removal_runs, head_removal_state, head_removal_view, without


@pytest.fixture(scope="module")
def model():
    params, config, vocab, meta = load_model("final")
    sentences = generate(8, seed=meta["train"]["eval_seed"], split="heldout")
    return params, config, vocab, sentences, head_removal_runs(params, config, vocab, sentences, layer=0)


def test_every_set_is_scored_and_one_head_out_is_the_ablation_study(model):
    params, config, vocab, sentences, runs = model
    assert len(runs.p_io) == 2 ** config.n_heads and () in runs.p_io
    study = ablation_study(params, config, vocab, sentences)
    for j in range(config.n_heads):
        i = study.components.index(Component("head", 0, j))
        assert runs.p_io[(j,)].mean() == pytest.approx(study.ablated_p_io["zero"][i], rel=1e-12)
    assert runs.p_io[()].mean() == pytest.approx(study.p_io, rel=1e-12)


def test_a_set_is_the_heads_removed_one_after_another(model):
    params, config, vocab, sentences, runs = model
    p = params
    for j in (2, 0):  # any order gives the same weights
        p = ablate(p, config, Component("head", 0, j))
    m = heldout_metrics(p, config, vocab, sentences)
    np.testing.assert_allclose(runs.p_io[(0, 2)], m["p_io"], rtol=1e-12)
    np.testing.assert_array_equal(runs.correct[(0, 2)], m["correct"])
    w = without(params, config, 0, (0, 2))
    assert all(np.array_equal(w[n], p[n]) for n in p)


def test_state_picks_any_order_and_rejects_other_heads(model):
    *_, runs = model
    a, b = head_removal_state(runs, (3, 1)), head_removal_state(runs, [1, 3])
    assert a.removed == b.removed == (1, 3) and a.mean_p_io == b.mean_p_io
    assert a.intact == head_removal_state(runs, ()).intact
    with pytest.raises(ValueError):
        head_removal_state(runs, (4,))


def test_the_view_draws_and_describes_with_its_numbers(model):
    *_, runs = model
    draw = head_removal_view(runs)
    setting = {"removed": (3,)}
    fig = plt.figure(figsize=(7, 3), dpi=60)
    draw(fig, setting)
    assert len(fig.axes) == 2
    plt.close(fig)
    s = head_removal_state(runs, (3,))
    text = draw.describe(setting)
    assert "head 0.3 removed" in text and f"{s.mean_p_io:.3f}" in text
    columns, rows = draw.table(setting)
    assert rows[0][1] == s.mean_p_io and rows[0][2] == s.intact[0]


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    params, config, vocab, meta = load_model("final")
    sentences = generate(8, seed=meta["train"]["eval_seed"], split="heldout")
    draw = head_removal_view(head_removal_runs(params, config, vocab, sentences, layer=0))
    # the chapter's control: a SelectMultiple of layer 0's four heads; its player: none, each head, 0.0-0.2, all four
    moves = [{"removed": ()}, {"removed": (3,)}, {"removed": (0, 1, 2)}, {"removed": (0, 1, 2, 3)}, {"removed": (1,)}]
    frames = [{"removed": r} for r in [(), (0,), (1,), (2,), (3,), (0, 1, 2), (0, 1, 2, 3)]]
    return draw, moves, frames
