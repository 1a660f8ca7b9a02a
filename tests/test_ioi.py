"""The indirect-object data: generator, roles, held-out pairs, tokenizer, batches and the evaluation read-out."""
import re

import numpy as np
import pytest

from byhand import ioi
from byhand.gpt import GPTConfig, gpt_forward, init_gpt_params

VOCAB = ioi.build_vocab()


def test_vocabulary_size_specials_and_single_token_names():
    assert 100 <= len(VOCAB) <= 200
    assert VOCAB.words[:2] == ("<bos>", "<eos>")
    assert len(set(VOCAB.words)) == len(VOCAB)
    assert len(ioi.NAMES) >= 20 and len(set(ioi.NAMES)) == len(ioi.NAMES)
    for group in (ioi.NAMES, ioi.PLACES, ioi.OBJECTS, ioi.VERBS):
        for word in group:
            assert len(VOCAB.encode(word, bos=False)) == 1, word  # one word, one token


def test_unknown_word_is_named_in_the_error():
    with pytest.raises(ValueError, match="unknown word 'Bob'"):
        VOCAB.encode("When Mary and Bob went to the store")
    with pytest.raises(ValueError, match="unknown word 'mary'"):  # case matters
        VOCAB.encode("mary")


def test_tokenizer_splits_punctuation_and_round_trips():
    assert ioi.tokenize("Then, Anna left. <bos>") == ["Then", ",", "Anna", "left", ".", "<bos>"]
    ids = VOCAB.encode(ioi.EXAMPLE, bos=True, eos=True)
    assert ids[0] == VOCAB.index["<bos>"] and ids[-1] == VOCAB.index["<eos>"]
    assert VOCAB.decode(ids) == "<bos> " + ioi.EXAMPLE + " <eos>"
    for s in ioi.generate(200, seed=3):
        assert VOCAB.decode(VOCAB.encode(s.text, bos=False)) == s.text


def test_generator_is_deterministic_and_prefix_stable():
    a = ioi.generate(300, seed=7)
    assert a == ioi.generate(300, seed=7)
    assert a[:40] == ioi.generate(40, seed=7)  # a short run sees the first batches of a long one
    assert a != ioi.generate(300, seed=8)


def test_roles_io_once_s_twice_prompt_ends_with_to():
    sentences = ioi.generate(500, seed=1) + ioi.generate(200, seed=1, split="heldout")
    for s in sentences:
        words = ioi.tokenize(s.prompt)
        assert s.io != s.s
        assert words.count(s.io) == 1 and words.count(s.s) == 2, s.text
        assert words[-1] == "to" and s.text == s.prompt + " " + s.io
        first = next(w for w in words if w in (s.io, s.s))
        assert (first == s.io) == s.io_first  # ABBA when IO is mentioned first, ABAB otherwise


def test_every_template_and_both_orders_occur():
    sentences = ioi.generate(2000, seed=0)
    assert {s.template for s in sentences} == set(range(len(ioi.TEMPLATES)))
    share = np.mean([s.io_first for s in sentences])
    assert 0.45 < share < 0.55


def test_heldout_pairs_never_meet_in_training():
    held = ioi.name_pairs("heldout")
    train = ioi.name_pairs("train")
    n = len(ioi.NAMES)
    assert len(held) == n and len(train) == n * (n - 1) - n  # (NAMES[2k], NAMES[2k+1]), both orders
    assert ("Mary", "John") in held and ("John", "Mary") in held
    held_sets = {frozenset(p) for p in held}
    for s in ioi.generate(3000, seed=5):
        names = frozenset(w for w in ioi.tokenize(s.text) if w in ioi.NAMES)
        assert names not in held_sets, s.text
    for s in ioi.generate(300, seed=5, split="heldout"):
        assert frozenset((s.io, s.s)) in held_sets


def test_sentences_fit_the_context_of_24():
    longest = max(len(VOCAB.encode(s.text, eos=True)) for s in ioi.generate(3000, seed=2))
    assert longest <= 24


def test_example_is_the_first_template_with_mary_and_john():
    text = ioi.TEMPLATES[0].format(A="Mary", B="John", S="John", IO="Mary", place="store", verb="gave", obj="drink")
    assert text == ioi.EXAMPLE + " Mary"


def test_encode_batch_shifts_by_one_and_pads_with_ignored_targets():
    texts = ["Mary and John went to the park. John gave a pen to Mary", "When Anna and Tom went to the zoo, Tom sent a key to Anna"]
    ids, targets = ioi.encode_batch(texts, VOCAB)
    full = [VOCAB.encode(t, eos=True) for t in texts]
    assert ids.shape == targets.shape == (2, max(len(f) for f in full) - 1)
    for row, f in enumerate(full):
        n = len(f) - 1
        np.testing.assert_array_equal(ids[row, :n], f[:-1])
        np.testing.assert_array_equal(targets[row, :n], f[1:])
        assert np.all(targets[row, n:] == -1)


def test_evaluate_matches_one_sentence_at_a_time():
    """The padded batch read-out equals unpadded forwards of each prompt, read by hand."""
    config = GPTConfig(vocab_size=len(VOCAB), context=24, d_model=16, n_heads=2, n_layers=2, d_ff=32)
    params = init_gpt_params(config, seed=1, std=0.5)  # large weights: attention far from uniform
    sentences = ioi.generate(6, seed=4, split="heldout")
    m = ioi.evaluate(params, config, sentences, VOCAB)
    for k, s in enumerate(sentences):
        ids = VOCAB.encode(s.prompt)  # (T,), no padding
        logits, cache = gpt_forward(params, ids, config)
        p = np.exp(logits[-1] - logits[-1].max())
        p /= p.sum()
        assert m["p_io"][k] == pytest.approx(p[VOCAB.index[s.io]], rel=1e-12)
        assert m["p_s"][k] == pytest.approx(p[VOCAB.index[s.s]], rel=1e-12)
        assert m["correct"][k] == (np.argmax(p) == VOCAB.index[s.io])
        words = ["<bos>"] + ioi.tokenize(s.prompt)
        for layer in range(config.n_layers):
            row = cache["trace"][f"block{layer}.attn.A"][:, -1, :]  # (h, T): each head's query at the last "to"
            io_pos = [t for t, w in enumerate(words) if w == s.io]
            s_pos = [t for t, w in enumerate(words) if w == s.s]
            np.testing.assert_allclose(m["attn_io"][layer, :, k], row[:, io_pos].sum(axis=1), rtol=1e-12)
            np.testing.assert_allclose(m["attn_s"][layer, :, k], row[:, s_pos].sum(axis=1), rtol=1e-12)


def test_next_word_probs_is_a_distribution_over_the_vocabulary():
    config = GPTConfig(vocab_size=len(VOCAB), context=24, d_model=16, n_heads=2, n_layers=1, d_ff=32)
    probs = ioi.next_word_probs(init_gpt_params(config, seed=0), config, VOCAB)
    assert list(probs) == list(VOCAB.words)
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(p > 0 for p in probs.values())


def test_templates_use_only_known_placeholders():
    for t in ioi.TEMPLATES:
        assert set(re.findall(r"\{(\w+)\}", t)) <= {"A", "B", "S", "IO", "place", "obj", "verb"}
        assert t.endswith("to {IO}")


@pytest.mark.parametrize("mask_s2", [False, True])
def test_answer_targets_keep_only_the_io_and_can_drop_the_second_s(mask_s2):
    from byhand.train_ioi import answer_targets

    sentences = ioi.generate(50, seed=9)
    ids, targets = ioi.encode_batch([s.text for s in sentences], VOCAB)
    io_targets, kept = answer_targets(ids, targets, sentences, VOCAB, mask_s2)
    for k, s in enumerate(sentences):
        words = ["<bos>"] + ioi.tokenize(s.text) + ["<eos>"]
        answer = len(words) - 3  # input position of the final "to", whose target is IO
        assert words[answer] == "to" and words[answer + 1] == s.io
        assert [t for t in range(ids.shape[1]) if io_targets[k, t] >= 0] == [answer]
        assert io_targets[k, answer] == VOCAB.index[s.io]
        s_positions = [t for t in range(len(words) - 1) if words[t + 1] == s.s]  # inputs whose target is S
        assert len(s_positions) == 2
        assert (kept[k, s_positions[1]] == -1) == mask_s2  # the coin flip between the names
        assert kept[k, s_positions[0]] == VOCAB.index[s.s]
        others = np.delete(np.arange(ids.shape[1]), s_positions[1:])
        np.testing.assert_array_equal(kept[k, others], targets[k, others])
