"""Tests for byhand.toy_gpt: the Part II toy sentence, vocabulary, initialisation and parameter table.

Oracles: the token list written out by hand, a closed-form parameter count, an independent
log-softmax of the logits for the loss, and GPT-2's own initialisation as the near-uniform baseline.
"""
import numpy as np
import pytest

from byhand.gpt import GPTConfig, gpt_param_shapes, init_gpt_params
from byhand.toy_gpt import (TOY_BIAS_STD, TOY_CONFIG, TOY_INIT_STD, VOCAB, detokenize, param_table, tokenize,
                            toy_batch, toy_loss_and_grads, toy_params)


def mean_row_max(P):
    """Mean of the largest weight over the attention rows that have at least 2 allowed keys (rows 1..T-1)."""
    return float(P[..., 1:, :].max(axis=-1).mean())


def test_vocab_has_ten_distinct_tokens_with_the_sentence_and_markers():
    assert len(VOCAB) == 10 and len(set(VOCAB)) == 10
    for token in ("<bos>", "<eos>", "I", "like", "transformers"):
        assert token in VOCAB


def test_tokenize_frames_the_words_with_bos_and_eos():
    ids = tokenize("I like transformers")
    assert ids.dtype == np.int64
    assert [VOCAB[i] for i in ids] == ["<bos>", "I", "like", "transformers", "<eos>"]
    assert detokenize(ids) == ["<bos>", "I", "like", "transformers", "<eos>"]
    assert detokenize(tokenize("the cat sat on the mat"))[1:-1] == "the cat sat on the mat".split()
    assert tokenize("").tolist() == [VOCAB.index("<bos>"), VOCAB.index("<eos>")]


@pytest.mark.parametrize("text, message", [("I like dogs", "unknown word 'dogs'"),
                                           ("i like transformers", "unknown word 'i'"),
                                           ("<bos> I", "added by tokenize")])
def test_tokenize_names_the_bad_word(text, message):
    with pytest.raises(ValueError, match=message):
        tokenize(text)


def test_toy_config_is_the_issue_model():
    c = TOY_CONFIG
    assert (c.vocab_size, c.context, c.d_model, c.n_heads, c.n_layers, c.d_ff) == (10, 5, 16, 2, 1, 64)
    assert c.tie_weights is False and c.d_model // c.n_heads == 8


def test_toy_batch_predicts_the_next_token_and_ignores_the_last():
    ids, targets = toy_batch()
    assert ids.shape == targets.shape == (5,)
    assert targets[:-1].tolist() == ids[1:].tolist()
    assert targets[-1] == -1
    assert detokenize(targets[:-1]) == ["I", "like", "transformers", "<eos>"]


def test_loss_is_the_mean_of_minus_log_p_over_the_four_predicted_positions():
    loss, grads, trace = toy_loss_and_grads()
    ids, targets = toy_batch()
    z = trace["logits"]  # (5, 10)
    logp = z - z.max(-1, keepdims=True) - np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True))
    expected = -np.mean([logp[t, targets[t]] for t in range(4)])
    assert np.isfinite(loss) and loss > 0
    assert loss == pytest.approx(expected, rel=1e-12)
    assert set(grads) == set(gpt_param_shapes(TOY_CONFIG))


def test_toy_params_give_peaked_but_not_one_hot_attention():
    _, _, trace = toy_loss_and_grads()
    P = trace["block0.attn.A"]  # (2, 5, 5)
    np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-12)
    assert mean_row_max(P) >= 0.5  # uniform rows would give mean(1/2, 1/3, 1/4, 1/5) = 0.32
    assert P[..., 1:, :].max() < 0.99  # no row collapses to a single key


def test_gpt2_initialisation_would_give_near_uniform_attention():
    """The reason toy_params exists: GPT-2's std 0.02 makes every row close to uniform."""
    _, _, trace = toy_loss_and_grads(init_gpt_params(TOY_CONFIG, seed=0))
    P = trace["block0.attn.A"]
    allowed = np.tril(np.ones((5, 5)))
    uniform = allowed / allowed.sum(-1, keepdims=True)
    assert np.abs(P - uniform).max() < 0.01
    assert mean_row_max(P) < 0.33


def test_toy_params_are_seeded_layer_norm_neutral_and_have_nonzero_biases():
    a, b, c = toy_params(), toy_params(), toy_params(seed=11)
    assert all(np.array_equal(a[n], b[n]) for n in a)
    assert not np.array_equal(a["E"], c["E"])
    for name, value in a.items():
        if name.endswith("gamma"):
            assert np.all(value == 1.0)
        elif name.endswith("beta"):
            assert np.all(value == 0.0)
        elif name.rsplit(".", 1)[-1].startswith("b_"):
            assert np.all(value != 0.0) and np.abs(value).max() < 0.25
    assert a["block0.attn.W_q"].std() > 5 * 0.02  # far above GPT-2's scale


def test_the_stated_scales_are_the_drawn_ones_and_only_some_are_one_over_root_d_in():
    # Pooled over 32 seeds, each array's spread lands within 12 % of its stated std (4 sampling errors or more).
    draws = [toy_params(seed=s) for s in range(32)]
    for name in gpt_param_shapes(TOY_CONFIG):
        key = name.split(".", 1)[-1] if name.startswith("block") else name
        std = TOY_INIT_STD.get(key, TOY_BIAS_STD if name.rsplit(".", 1)[-1].startswith("b_") else None)
        if std is not None:
            spread = np.sqrt(np.mean([d[name] ** 2 for d in draws]))
            assert abs(spread / std - 1) < 0.12, (name, spread, std)
    # 1/sqrt(d_in) for the projections that read a vector; not for the tables E, P or the query and key matrices.
    d_in = {key: gpt_param_shapes(TOY_CONFIG)[("block0." if "." in key else "") + key][0] for key in TOY_INIT_STD}
    exact = {key for key, std in TOY_INIT_STD.items() if std == d_in[key] ** -0.5}
    assert exact == {"attn.W_v", "attn.W_o", "ffn.W_1", "ffn.W_2", "W_out"}
    assert TOY_INIT_STD["E"] == 1.0 and TOY_INIT_STD["P"] == 0.5


def test_toy_params_keep_a_float32_dtype():
    p = toy_params(dtype=np.float32)
    assert all(v.dtype == np.float32 for v in p.values())


def test_gradients_are_finite_and_visible_except_unused_embedding_rows():
    _, grads, _ = toy_loss_and_grads()
    ids, _ = toy_batch()
    for name, g in grads.items():
        assert np.all(np.isfinite(g)), name
        if name == "block0.attn.b_k":
            # b_k adds q.b_k to every score of a row; the softmax ignores a shift, so dL/db_k = 0 exactly
            assert np.abs(g).max() < 1e-12
        elif name != "E":
            assert np.abs(g).max() > 1e-4, name
    used = np.zeros(10, dtype=bool)
    used[ids[:-1]] = True  # <eos> sits only at the last position, whose prediction is ignored
    assert np.all(grads["E"][~used] == 0.0)  # <eos>, the, cat, sat, on, mat: no path to the loss
    assert np.all(np.abs(grads["E"][used]).max(-1) > 1e-4)
    assert np.all(grads["P"][-1] == 0.0)  # the last position reaches only its own, ignored, output
    assert np.all(np.abs(grads["P"][:-1]).max(-1) > 1e-4)


def test_param_table_counts_every_array():
    rows, total = param_table(toy_params(), TOY_CONFIG)
    d, V, T, f = 16, 10, 5, 64
    closed_form = V * d + T * d + 2 * d + 4 * (d * d + d) + 2 * d + (d * f + f + f * d + d) + 2 * d + d * V
    assert total == closed_form == 3712
    assert [r[0] for r in rows] == list(gpt_param_shapes(TOY_CONFIG))
    assert dict((n, s) for n, s, _ in rows)["block0.ffn.W_1"] == (16, 64)
    assert sum(r[2] for r in rows) == total


def test_param_table_follows_the_config_and_refuses_mismatches():
    tied = GPTConfig(vocab_size=10, context=5, d_model=16, n_heads=2, n_layers=1, d_ff=64)
    _, total = param_table(init_gpt_params(tied), tied)
    assert total == 3712 - 160  # no separate W_out
    with pytest.raises(ValueError, match="missing parameter"):
        param_table(init_gpt_params(tied), TOY_CONFIG)
