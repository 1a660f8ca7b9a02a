"""byhand.ablation against oracles computed another way.

Oracles: a plain-NumPy forward written here that loops over heads and removes a part where the module's
docstring says (a head's columns of O before W_o, a sublayer's output), instead of editing weights; per-sentence
forwards for the means; ``ioi.evaluate`` in one call for the batched metrics; the training record for the intact
model's held-out P(IO).
"""
import numpy as np
import pytest

from byhand import ioi
from byhand.ablation import (Component, ablate, ablation_study, component_means, components, heldout_metrics)
from byhand.gpt import gpt_forward


@pytest.fixture(scope="module")
def model():
    return ioi.load_model("final")  # float32 weights, as shipped


@pytest.fixture(scope="module")
def p64(model):
    return {k: v.astype(np.float64) for k, v in model[0].items()}  # the oracle's precision


def _ln(x, g, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def oracle_logits(params, ids, config, head=None, head_value=0.0, attn=None, attn_value=0.0, ffn=None,
                  ffn_value=0.0):
    """Logits (T, V) of one prompt, with head (l, j)'s columns of O, or layer l's attention or feed-forward
    output, replaced by a constant (0 by default)."""
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    T, d_k = len(ids), config.d_model // config.n_heads
    x = p["E"][ids] + p["P"][:T]
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    for l in range(config.n_layers):
        b = f"block{l}."
        h = _ln(x, p[b + "ln1.gamma"], p[b + "ln1.beta"], config.ln_eps)
        O = np.zeros((T, config.d_model))
        for j in range(config.n_heads):  # one head at a time
            c = slice(j * d_k, (j + 1) * d_k)
            q, k, v = (h @ p[b + f"attn.W_{n}"][:, c] + p[b + f"attn.b_{n}"][c] for n in "qkv")
            s = np.where(future, -np.inf, q @ k.T / np.sqrt(d_k))
            a = np.exp(s - s.max(axis=1, keepdims=True))
            O[:, c] = (a / a.sum(axis=1, keepdims=True)) @ v
            if head == (l, j):
                O[:, c] = head_value
        out = O @ p[b + "attn.W_o"] + p[b + "attn.b_o"]
        x = x + (np.broadcast_to(attn_value, out.shape) if attn == l else out)
        u = _ln(x, p[b + "ln2.gamma"], p[b + "ln2.beta"], config.ln_eps) @ p[b + "ffn.W_1"] + p[b + "ffn.b_1"]
        f = 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3))) @ p[b + "ffn.W_2"] + p[b + "ffn.b_2"]
        x = x + (np.broadcast_to(ffn_value, f.shape) if ffn == l else f)
    return _ln(x, p["ln_f.gamma"], p["ln_f.beta"], config.ln_eps) @ p["E"].T


def test_the_oracle_is_the_model(model):
    params, config, vocab, _ = model
    ids = vocab.encode(ioi.EXAMPLE)
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    np.testing.assert_allclose(oracle_logits(params, ids, config), gpt_forward(p64, ids, config)[0], atol=1e-10)


@pytest.mark.parametrize("layer, head", [(0, 3), (1, 0), (2, 2)])
def test_zeroing_a_head_is_zeroing_its_columns_of_O(model, p64, layer, head):
    params, config, vocab, _ = model
    ids = vocab.encode(ioi.EXAMPLE)
    ablated = ablate(p64, config, Component("head", layer, head))
    want = oracle_logits(params, ids, config, head=(layer, head))
    np.testing.assert_allclose(gpt_forward(ablated, ids, config)[0], want, atol=1e-10)
    d_k = config.d_model // config.n_heads
    W = ablated[f"block{layer}.attn.W_o"]
    assert np.all(W[head * d_k:(head + 1) * d_k] == 0)  # its rows of W_o, and only those, are zero
    rest = np.s_[head * d_k:(head + 1) * d_k]
    np.testing.assert_array_equal(np.delete(W, rest, axis=0), np.delete(p64[f"block{layer}.attn.W_o"], rest, axis=0))
    shipped = ablate(params, config, Component("head", layer, head))  # float32 in, float32 out
    assert shipped[f"block{layer}.attn.W_o"].dtype == np.float32
    np.testing.assert_array_equal(shipped[f"block{layer}.attn.W_o"], W.astype(np.float32))


def test_removing_sublayers_and_mean_ablation(model, p64):
    params, config, vocab, _ = model
    ids = vocab.encode(ioi.EXAMPLE)
    rng = np.random.default_rng(0)
    m_head, m_attn, m_ffn = rng.standard_normal(16), rng.standard_normal(64), rng.standard_normal(64)
    cases = [(Component("attn", 1), None, dict(attn=1)), (Component("ffn", 2), None, dict(ffn=2)),
             (Component("head", 1, 2), m_head, dict(head=(1, 2), head_value=m_head)),
             (Component("attn", 0), m_attn, dict(attn=0, attn_value=m_attn)),
             (Component("ffn", 0), m_ffn, dict(ffn=0, ffn_value=m_ffn))]
    for comp, mean, oracle in cases:
        got = gpt_forward(ablate(p64, config, comp, mean), ids, config)[0]
        np.testing.assert_allclose(got, oracle_logits(params, ids, config, **oracle), atol=1e-10, err_msg=comp.label)


def test_means_from_single_sentence_forwards(model):
    params, config, vocab, _ = model
    sentences = ioi.generate(7, seed=3, split="heldout")  # prompts of several lengths
    means = component_means(params, config, vocab, sentences, chunk=2)
    p64 = {k: v.astype(np.float64) for k, v in params.items()}
    traces = [gpt_forward(p64, vocab.encode(x.prompt), config)[1]["trace"] for x in sentences]
    O = np.concatenate([t["block0.attn.O"] for t in traces])  # (sum of lengths, d_model)
    np.testing.assert_allclose(means[Component("head", 0, 3)], O[:, 48:64].mean(axis=0), atol=1e-12)
    f = np.concatenate([t["block2.ffn.out"] for t in traces])
    np.testing.assert_allclose(means[Component("ffn", 2)], f.mean(axis=0), atol=1e-12)
    a = np.concatenate([t["block1.attn.out"] for t in traces])
    np.testing.assert_allclose(means[Component("attn", 1)], a.mean(axis=0), atol=1e-12)
    assert len(means) == len(components(config)) == 12 + 3 + 3


def test_batched_metrics_equal_one_evaluate_call(model):
    params, config, vocab, _ = model
    sentences = ioi.generate(20, seed=5, split="heldout")
    want = ioi.evaluate(params, config, sentences, vocab)
    got = heldout_metrics(params, config, vocab, sentences, chunk=3)
    np.testing.assert_allclose(got["p_io"], want["p_io"], rtol=1e-10)
    np.testing.assert_allclose(got["p_s"], want["p_s"], rtol=1e-8, atol=1e-15)
    np.testing.assert_array_equal(got["correct"], want["correct"])


def test_removing_nothing_reproduces_the_training_record(model):
    params, config, vocab, meta = model
    held = ioi.generate(meta["train"]["n_eval"], seed=meta["train"]["eval_seed"], split="heldout")
    m = heldout_metrics(params, config, vocab, held)
    assert m["p_io"].mean() == pytest.approx(meta["final"]["heldout_mean_p_io"], rel=1e-10)
    assert m["correct"].sum() == meta["final"]["heldout_correct"]


def test_study_agrees_with_its_parts_and_leaves_params_alone(model):
    params, config, vocab, _ = model
    before = {k: v.copy() for k, v in params.items()}
    sentences = ioi.generate(12, seed=9, split="heldout")
    comps = (Component("head", 0, 3), Component("attn", 1))
    st = ablation_study(params, config, vocab, sentences, comps)
    assert st.n == 12 and st.components == comps
    means = component_means(params, config, vocab, sentences)
    for i, c in enumerate(comps):
        for how, mean in (("zero", None), ("mean", means[c])):
            m = heldout_metrics(ablate(params, config, c, mean), config, vocab, sentences)
            assert st.ablated_p_io[how][i] == m["p_io"].mean() and st.ablated_accuracy[how][i] == m["correct"].mean()
            assert st.ablated_p_s[how][i] == m["p_s"].mean()
    np.testing.assert_array_equal(st.change("zero"), st.ablated_p_io["zero"] - st.p_io)
    assert all(np.array_equal(before[k], params[k]) for k in params)
    only_zero = ablation_study(params, config, vocab, sentences, comps, hows=("zero",))
    assert set(only_zero.ablated_p_io) == {"zero"}


def test_components_and_labels(model):
    _, config, _, _ = model
    comps = components(config)
    assert [c.label for c in comps[:5]] == ["head 0.0", "head 0.1", "head 0.2", "head 0.3", "head 1.0"]
    assert comps[12].label == "attention of layer 0" and comps[-1].label == "feed-forward of layer 2"
    assert components(config, kinds=("attn",)) == tuple(Component("attn", l) for l in range(3))


def test_errors(model):
    params, config, vocab, _ = model
    with pytest.raises(ValueError, match="outside the model's 3 layers"):
        ablate(params, config, Component("head", 3, 0))
    with pytest.raises(ValueError, match="outside the layer's 4 heads"):
        ablate(params, config, Component("head", 0, 4))
    with pytest.raises(ValueError, match="needs a head index"):
        ablate(params, config, Component("attn", 0, 1))
    with pytest.raises(ValueError, match="Component of kind"):
        ablate(params, config, Component("mlp", 0))
    with pytest.raises(ValueError, match="shape \\(16,\\)"):
        ablate(params, config, Component("head", 0, 0), mean=np.zeros(64))
    with pytest.raises(ValueError, match="finite"):
        ablate(params, config, Component("ffn", 0), mean=np.full(64, np.nan))
    with pytest.raises(ValueError, match="at least one sentence"):
        heldout_metrics(params, config, vocab, [])
    with pytest.raises(ValueError, match="hows must be"):
        ablation_study(params, config, vocab, ioi.generate(2, seed=1, split="heldout"), hows=("half",))
    with pytest.raises(ValueError, match="unknown kind"):
        components(config, kinds=("block",))
