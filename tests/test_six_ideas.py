"""byhand.six_ideas on a tiny random GPT, each number checked against an oracle computed another way.

Oracles: a softmax written here; queries and keys rebuilt from the layer-norm output and W_q, W_k; the sentence
probability from separate forwards of every prefix (no reliance on the causal mask); the SGD step done by hand;
the slope of the loss along the gradient by central differences (it must be -|g|^2).
"""
import numpy as np
import pytest

from byhand import ioi
from byhand.gpt import GPTConfig, gpt_forward, gpt_loss_and_grads, init_gpt_params
from byhand.reported import gpt2_reported
from byhand.six_ideas import answer_ids, six_ideas_numbers, summary

VOCAB = ioi.build_vocab()  # word-level, <bos> first: a tokenizer with encode/decode
CONFIG = GPTConfig(vocab_size=len(VOCAB), context=20, d_model=16, n_heads=4, n_layers=2, d_ff=32)
PARAMS = init_gpt_params(CONFIG, seed=7, std=0.4)  # large weights: peaked, uneven probabilities
PROMPT = "When Mary and John went to the store, John gave a drink to"


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.fixture(scope="module")
def r():
    return six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", layer=1, head=2, lr=0.05, steps=4,
                           line_scales=(-1e-3, 1e-3, 1.0))


def test_final_position(r):
    ids = VOCAB.encode(PROMPT)
    a = VOCAB.index["Mary"]
    logits, _ = gpt_forward(PARAMS, ids, CONFIG)  # (T, V)
    p = softmax(logits[-1])
    np.testing.assert_allclose(r.final.probs, p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(r.final.logits, logits[-1], rtol=1e-12)
    assert r.final.answer == "Mary" and r.final.answer_id == a
    assert r.final.tokens == ("<bos>",) + tuple(ioi.tokenize(PROMPT))
    assert np.isclose(r.final.p_answer, p[a]) and np.isclose(r.final.loss, -np.log(p[a]))
    assert list(r.final.top_ids) == sorted(range(len(p)), key=lambda i: -p[i])[:5]
    assert r.final.top_words == tuple(VOCAB.words[i] for i in r.final.top_ids)
    y = np.zeros(len(p))
    y[a] = 1.0
    np.testing.assert_allclose(r.final.dlogits, p - y, atol=1e-15)  # the fused softmax + log slope
    np.testing.assert_allclose(r.final.dh, (p - y) @ PARAMS["E"], atol=1e-14)  # tied head: E^T (p - y)


def test_head_scores(r):
    ids = VOCAB.encode(PROMPT)
    _, cache = gpt_forward(PARAMS, ids[None], CONFIG)
    x = cache["trace"]["block1.ln1"][0]  # (T, d_model): the head's input
    cols = slice(2 * 4, 3 * 4)  # head 2 of 4, d_k = 4
    Q = x @ PARAMS["block1.attn.W_q"][:, cols] + PARAMS["block1.attn.b_q"][cols]
    K = x @ PARAMS["block1.attn.W_k"][:, cols] + PARAMS["block1.attn.b_k"][cols]
    key_pos = list(ids).index(VOCAB.index["Mary"])
    assert r.head.key_pos == key_pos == 2
    np.testing.assert_allclose(r.head.q, Q[-1], atol=1e-14)
    np.testing.assert_allclose(r.head.k, K[key_pos], atol=1e-14)
    np.testing.assert_allclose(r.head.keys, K, atol=1e-14)  # every position's key
    terms = [Q[-1][i] * K[key_pos][i] for i in range(4)]
    np.testing.assert_allclose(r.head.running, [sum(terms[:n + 1]) for n in range(4)], atol=1e-14)
    np.testing.assert_allclose(r.head.raw, K @ Q[-1], atol=1e-14)
    np.testing.assert_allclose(r.head.scaled, r.head.raw / 2.0, atol=1e-15)  # sqrt(d_k) = 2
    np.testing.assert_allclose(r.head.share_raw, softmax(K @ Q[-1]), atol=1e-14)
    # the scaled shares are the head's real attention row, as the model computed it
    np.testing.assert_allclose(r.head.share_scaled, cache["trace"]["block1.attn.A"][0, 2, -1], atol=1e-14)
    assert r.head.share_raw.max() >= r.head.share_scaled.max()  # dividing by sqrt(d_k) > 1 flattens


def test_sentence_probability_from_separate_prefixes(r):
    full = VOCAB.encode(PROMPT + " Mary")
    probs = []
    for t in range(1, len(full)):  # one forward per prefix: no use of the causal mask
        logits, _ = gpt_forward(PARAMS, full[:t], CONFIG)
        probs.append(softmax(logits[-1])[full[t]])
    np.testing.assert_allclose(r.sentence.probs, probs, rtol=1e-10)
    np.testing.assert_allclose(r.sentence.costs, -np.log(probs), rtol=1e-10)
    assert np.isclose(r.sentence.total_cost, -np.sum(np.log(probs)), rtol=1e-12)
    assert np.isclose(r.sentence.product, np.prod(probs), rtol=1e-10)
    assert r.sentence.words == tuple(ioi.tokenize(PROMPT)) + ("Mary",)
    assert np.isclose(r.sentence.probs[-1], r.final.p_answer, rtol=1e-10)  # its last factor is P(answer)


def test_sgd_steps_by_hand(r):
    ids = VOCAB.encode(PROMPT)
    a = VOCAB.index["Mary"]
    targets = np.full(ids.shape, -1)
    targets[-1] = a
    theta, want_loss, want_p, want_top = dict(PARAMS), [], [], []
    for _ in range(5):
        logits, _ = gpt_forward(theta, ids, CONFIG)
        want_top.append(softmax(logits[-1])[r.final.top_ids])
        want_p.append(softmax(logits[-1])[a])
        want_loss.append(-np.log(want_p[-1]))
        _, g, _ = gpt_loss_and_grads(theta, (ids, targets), CONFIG)
        theta = {n: theta[n] - 0.05 * g[n] for n in theta}
    np.testing.assert_allclose(r.sgd.loss, want_loss, rtol=1e-10)
    np.testing.assert_allclose(r.sgd.p_answer, want_p, rtol=1e-10)
    np.testing.assert_allclose(r.sgd.p_top, want_top, rtol=1e-10)
    assert r.sgd.loss[-1] < r.sgd.loss[0] and r.sgd.lr == 0.05
    assert np.isclose(r.sgd.line_loss[2], r.sgd.loss[1], rtol=1e-12)  # s = 1 is the first step


def test_slope_along_the_gradient_is_minus_its_squared_norm(r):
    ids = VOCAB.encode(PROMPT)
    targets = np.full(ids.shape, -1)
    targets[-1] = VOCAB.index["Mary"]
    _, g, _ = gpt_loss_and_grads(PARAMS, (ids, targets), CONFIG)
    step = 1e-3 * 0.05  # s * lr
    slope = (r.sgd.line_loss[1] - r.sgd.line_loss[0]) / (2 * step)
    assert np.isclose(slope, -sum(np.sum(v * v) for v in g.values()), rtol=1e-5)


def test_params_untouched_and_float32_kept():
    before = {n: v.copy() for n, v in PARAMS.items()}
    p32 = {n: v.astype(np.float32) for n, v in PARAMS.items()}
    r = six_ideas_numbers(p32, CONFIG, VOCAB, PROMPT, " Mary", steps=1)
    assert all(np.array_equal(before[n], PARAMS[n]) for n in PARAMS)
    assert r.final.probs.dtype == r.head.q.dtype == np.float32
    assert r.sgd.loss.shape == (2,) and r.sgd.line_loss.shape == (0,)


def test_default_head_is_the_one_that_looks_at_the_answer():
    r = six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", steps=0)
    _, cache = gpt_forward(PARAMS, VOCAB.encode(PROMPT)[None], CONFIG)
    share = [[cache["trace"][f"block{i}.attn.A"][0, j, -1, 2] for j in range(4)] for i in range(2)]
    assert share[r.head.layer][r.head.head] == max(max(row) for row in share)
    assert np.isclose(r.head.share_scaled[2], max(max(row) for row in share))


class Words:
    """A tokenizer without a start token: ids of space-separated words."""

    words = ("the", "cat", "sat", "on", "mat", "a")

    def encode(self, text):
        return np.array([self.words.index(w) for w in text.split()])

    def decode(self, ids):
        return " ".join(self.words[int(i)] for i in np.ravel(ids))


def test_any_tokenizer_and_config():
    config = GPTConfig(vocab_size=6, context=8, d_model=8, n_heads=2, n_layers=1, d_ff=8, tie_weights=False,
                       gelu="erf")
    params = init_gpt_params(config, seed=1, std=0.5)
    r = six_ideas_numbers(params, config, Words(), "the cat sat on the", " cat", steps=2, top_k=3, watch=(" mat",))
    assert r.sentence.words == ("cat", "sat", "on", "the", "cat")  # the first word is not predicted
    s = summary(r)
    assert s["dloss/dz of ' mat'"] == pytest.approx(r.final.probs[4]) and "cost of ' mat'" not in s  # not in the text
    assert s["cost of the answer's first mention"] == pytest.approx(r.sentence.costs[0])  # "cat" after "the"
    assert r.final.top_words[0] == Words.words[int(np.argmax(r.final.probs))] and len(r.final.top_ids) == 3
    y = np.eye(6)[1]
    np.testing.assert_allclose(r.final.dh, params["W_out"] @ (r.final.probs - y), atol=1e-14)


def test_errors():
    with pytest.raises(ValueError, match="must add exactly one token.*adds 2"):
        answer_ids(VOCAB, PROMPT, " Mary John")
    with pytest.raises(ValueError, match="does not occur in the prompt: pass key_pos"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Anna", steps=0)
    with pytest.raises(ValueError, match="give both layer and head"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", layer=1)
    with pytest.raises(ValueError, match="outside the model"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", layer=2, head=0, steps=0)
    with pytest.raises(ValueError, match="longer than the context of 20"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT + " the store" * 3, " Mary", steps=0)
    with pytest.raises(ValueError, match="lr must be > 0"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", lr=0.0)
    with pytest.raises(ValueError, match="steps must be an int"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", steps=-1)
    with pytest.raises(ValueError, match="unknown word"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, "When Zorro went to", " Mary")


def test_summary_has_the_reported_keys(r):
    s = summary(r)
    long = six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", layer=1, head=2, lr=0.05, steps=10,
                             subject=" John")
    # ten steps and a subject: every reported figure has its counterpart, plus the watched words' other figures
    assert set(summary(long)) == set(gpt2_reported()) | {"P of ' the'", "cost of ' the'", "dloss/dz of ' drink'"}
    assert "loss after 10 steps" not in s and s["loss after 1 step"] == r.sgd.loss[1]
    assert "P(subject)" not in s and "scaled share of the subject" not in s  # no subject given
    p = r.final.probs
    others = [p[i] for i in range(len(p)) if i != r.final.answer_id]
    assert s["P(runner-up)"] == max(others) and s["smallest P"] == min(p)
    assert np.isclose(s["logit gap to the runner-up"], np.log(s["P(answer)"] / s["P(runner-up)"]))  # e^gap = ratio
    assert s["dloss/dz of the answer"] == pytest.approx(s["P(answer)"] - 1)
    assert s["ratio of the answer to the runner-up"] == pytest.approx(np.exp(s["logit gap to the runner-up"]))
    assert s["dloss/dz of the runner-up"] == pytest.approx(s["P(runner-up)"])  # a wrong word's slope is its p
    assert s["dloss/dz of ' the'"] == pytest.approx(p[VOCAB.index["the"]])
    # the first "Mary" is token 2 of the prompt, so sentence cost 1 (cost t - 1 belongs to token t); "drink" is 13
    probs_by_prefix = [softmax(gpt_forward(PARAMS, VOCAB.encode(PROMPT)[:t], CONFIG)[0][-1]) for t in (2, 13)]
    assert s["P of the answer's first mention"] == pytest.approx(probs_by_prefix[0][VOCAB.index["Mary"]])
    assert s["cost of ' drink'"] == pytest.approx(-np.log(probs_by_prefix[1][VOCAB.index["drink"]]))
    assert s["q.k at the answer"] == pytest.approx(r.head.raw[2]) and s["P(sentence)"] == r.sentence.product
    assert s["words in the sentence"] == len(ioi.tokenize(PROMPT)) + 1 and s["learning rate"] == 0.05
    assert all(isinstance(v, float) for v in s.values())


def test_subject_probability_and_share_over_both_mentions():
    r = six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", layer=1, head=2, steps=0, subject=" John")
    john = VOCAB.index["John"]
    assert r.subject_id == john and r.subject_pos == (4, 10)  # <bos> When Mary and John ... , John gave
    s = summary(r)
    assert s["P(subject)"] == r.final.probs[john]
    assert s["loss if the subject were the answer"] == pytest.approx(-np.log(r.final.probs[john]))
    assert s["dloss/dz of the subject"] == pytest.approx(r.final.probs[john])  # y is 0 at John
    _, cache = gpt_forward(PARAMS, VOCAB.encode(PROMPT)[None], CONFIG)
    row = cache["trace"]["block1.attn.A"][0, 2, -1]  # head 1.2's attention from the final position
    assert s["scaled share of the subject"] == pytest.approx(row[4] + row[10], abs=1e-14)
    with pytest.raises(ValueError, match="must add exactly one token"):
        six_ideas_numbers(PARAMS, CONFIG, VOCAB, PROMPT, " Mary", steps=0, subject=" John Mary")


def test_sentence_probability_does_not_underflow_in_float32():
    p32 = {n: v.astype(np.float32) for n, v in init_gpt_params(CONFIG, seed=1, std=3.0).items()}
    r = six_ideas_numbers(p32, CONFIG, VOCAB, PROMPT, " Mary", steps=0)
    assert r.sentence.total_cost > 110  # exp(-110) is below float32's smallest number
    assert r.sentence.product > 0 and np.isclose(np.log(r.sentence.product), -r.sentence.total_cost)
