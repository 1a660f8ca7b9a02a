"""Tests for byhand.views.inside: the batched run agrees with one-sentence forwards and with ioi.evaluate."""

import functools

import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.gpt import gpt_forward
from byhand.ioi import EXAMPLE, IOISentence, evaluate, generate, load_model, next_word_probs
from byhand.views.inside import draw_inside, inside_state, inside_view, run_sentences
from byhand.widgets import sweep


@pytest.fixture(scope="module")
def model():
    params, config, vocab, meta = load_model("mid")
    nm = meta["final"]["name_mover"]
    sentences = generate(6, seed=7, split="heldout")
    run = run_sentences(params, config, vocab, sentences, nm["layer"], nm["head"])
    return params, config, vocab, sentences, run


def test_rows_are_attention_rows_and_match_a_single_sentence_forward(model):
    params, config, vocab, sentences, run = model
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    for b, x in enumerate(sentences):
        ids = vocab.encode(x.prompt)  # unpadded, one sentence
        _, cache = gpt_forward(p64, ids[None, :], config)
        row = cache["trace"][f"block{run.layer}.attn.A"][0, run.head, -1]  # (T_b,)
        state = inside_state({"mid": run}, "mid", b)
        np.testing.assert_allclose(state.attn, row, atol=1e-12)
        assert state.attn.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(run.attn[b, len(ids):] == 0)  # nothing past the prompt
        probs = next_word_probs(params, config, vocab, x.prompt)
        assert state.p_io == pytest.approx(probs[x.io], rel=1e-9)
        assert state.p_s == pytest.approx(probs[x.s], rel=1e-9)
        assert state.top == max(probs, key=probs.get)


def test_agrees_with_ioi_evaluate(model):
    params, config, vocab, sentences, run = model
    m = evaluate(params, config, sentences, vocab)
    np.testing.assert_allclose(run.p_io, m["p_io"], rtol=1e-9)
    for b in range(len(sentences)):
        state = inside_state({"mid": run}, "mid", b)
        assert state.attn_io == pytest.approx(m["attn_io"][run.layer, run.head, b], abs=1e-12)
        assert state.attn_s == pytest.approx(m["attn_s"][run.layer, run.head, b], abs=1e-12)
        assert len(state.s_pos) == 2 and len(state.io_pos) == 1


def test_the_example_positions():
    params, config, vocab, meta = load_model("final")
    x = IOISentence(EXAMPLE + " Mary", EXAMPLE, "Mary", "John", 0, True)
    nm = meta["final"]["name_mover"]
    run = run_sentences(params, config, vocab, [x], nm["layer"], nm["head"])
    state = inside_state({"final": run}, "final", 0)
    assert state.io_pos == (2,) and state.s_pos == (4, 10)
    assert state.p_io == pytest.approx(meta["final"]["example_p_mary"], rel=1e-6)
    assert state.attn_io == pytest.approx(nm["example_attn_io"], rel=1e-6)


def test_bad_inputs_are_refused(model):
    params, config, vocab, sentences, run = model
    with pytest.raises(ValueError, match="outside"):
        inside_state({"mid": run}, "mid", len(sentences))
    with pytest.raises(ValueError, match="unknown checkpoint"):
        inside_state({"mid": run}, "final", 0)
    with pytest.raises(ValueError, match="outside the model"):
        run_sentences(params, config, vocab, sentences, config.n_layers, 0)
    with pytest.raises(ValueError, match="at least one"):
        run_sentences(params, config, vocab, [], 0, 0)


def test_draw_makes_one_axes(model):  # the state's speed is in benchmarks/bench_widgets.py
    *_, run = model
    runs = {"mid": run}
    fig = plt.figure()
    inside_view(runs)(fig, {"sentence": 0, "checkpoint": "mid"})
    assert len(fig.axes) == 1 and sum(p.get_visible() for p in fig.axes[0].patches) == len(run.words[0])
    plt.close(fig)


@functools.lru_cache(maxsize=None)
def build_player():
    """Like the chapter's player: the example first, then held-out sentences of several lengths, two checkpoints."""
    example = IOISentence(EXAMPLE + " Mary", EXAMPLE, "Mary", "John", 0, True)
    chosen = [example] + generate(9, seed=11, split="heldout")
    runs = {}
    for name in ("mid", "final"):
        params, config, vocab, meta = load_model(name)
        nm = meta["final"]["name_mover"]
        runs[name] = run_sentences(params, config, vocab, chosen, nm["layer"], nm["head"])
    return runs


@pytest.fixture(scope="module")
def player():
    return build_player()


def test_the_axes_hold_the_longest_sentence_and_do_not_move(player):
    lengths = [len(w) for w in player["mid"].words]
    assert len(set(lengths)) > 1  # the sentences differ in length
    draw = inside_view(player)
    frames = set()
    for b in range(len(lengths)):
        for name in ("mid", "final"):
            fig = plt.figure(figsize=(7, 3), dpi=96)
            draw(fig, {"sentence": b, "checkpoint": name})
            (ax,) = fig.axes
            frames.add((ax.get_xlim(), ax.get_ylim(), len(ax.patches), len(ax.texts)))
            shown = [t.get_text() for t in ax.texts if t.get_visible()]
            assert shown == list(player[name].words[b])  # the words under the bars are the prompt's
            assert sum(p.get_visible() for p in ax.patches) == lengths[b]
            from layout_check import layout_problems
            assert layout_problems(fig) == []
            plt.close(fig)
    assert frames == {((-0.6, max(lengths) - 0.4), (0.0, 1.3), max(lengths), max(lengths))}
    with pytest.raises(ValueError, match="shorter than the prompt"):
        draw_inside(plt.figure(), inside_state(player, "mid", int(np.argmax(lengths))), n_max=3)
    plt.close("all")


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    player = build_player()
    lengths = [len(w) for w in player["mid"].words]
    longest, shortest = int(np.argmax(lengths)), int(np.argmin(lengths))
    draw = inside_view(player)
    # the chapter's controls: a sentence Dropdown (ten prompts, the example first) and the checkpoint, mid or final
    moves = [{"sentence": 0, "checkpoint": "mid"}, {"sentence": 0, "checkpoint": "final"},
             {"sentence": longest, "checkpoint": "final"},
             {"sentence": shortest, "checkpoint": "mid"},
             {"sentence": 9, "checkpoint": "mid"}, {"sentence": 9, "checkpoint": "final"}]
    return draw, moves, sweep({"sentence": 0, "checkpoint": "mid"}, "sentence", range(len(lengths)))
