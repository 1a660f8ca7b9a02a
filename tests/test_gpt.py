"""Tests for byhand.gpt: the GPT-2-compatible decoder.

Oracles: an independent NumPy forward written here (per-head loop, GPT-2's formulas), central
finite differences for every parameter, a deliberately wrong attention backward that gradcheck must
reject, and the seed-000 invariants (causality, layer-norm rows, attention rows, p - q sums to 0).
"""
import math

import numpy as np
import pytest

import byhand.gpt as gpt_mod
from byhand.attention import causal_mask
from byhand.gpt import (GPTConfig, gpt_backward, gpt_forward, gpt_loss, gpt_loss_and_grads, gpt_param_shapes,
                        init_gpt_params)
from byhand.gradcheck import gradcheck
from byhand.linear import linear_forward
from byhand.loss import cross_entropy_forward
from byhand.mha import mha_backward_traced

CFG = GPTConfig(vocab_size=7, context=6, d_model=8, n_heads=2, n_layers=2, d_ff=16)
IDS = np.array([[1, 2, 1, 3, 1], [0, 6, 6, 2, 5]])  # batch 2, repeated tokens, ids 4 never used
TARGETS = np.array([[2, 1, 3, 1, -1], [6, 6, -1, 5, 0]])  # some ignored


def _random_params(config, seed=0, dtype=np.float64):
    """Weights large enough that every gradient is far from zero; gammas, betas, biases random too."""
    rng = np.random.default_rng(seed)
    params = init_gpt_params(config, seed=seed, std=0.4, dtype=dtype)
    for name, value in params.items():
        if name.endswith("gamma"):
            params[name] = (1.0 + 0.3 * rng.normal(size=value.shape)).astype(dtype)
        elif value.ndim == 1:
            params[name] = (0.2 * rng.normal(size=value.shape)).astype(dtype)
    return params


def _ln(x, gamma, beta, eps):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta


def _reference_logits(p, ids, config):
    """GPT-2's forward, written independently: heads by column slices, masked scores set to -inf."""
    T = ids.shape[-1]
    x = p["E"][ids] + p["P"][:T]
    d_k = config.d_model // config.n_heads
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    for i in range(config.n_layers):
        b = f"block{i}."
        h = _ln(x, p[b + "ln1.gamma"], p[b + "ln1.beta"], config.ln_eps)
        q, k, v = (h @ p[b + "attn.W_" + n] + p[b + "attn.b_" + n] for n in "qkv")
        heads = []
        for j in range(config.n_heads):
            c = slice(j * d_k, (j + 1) * d_k)
            s = np.where(future, -np.inf, q[..., c] @ np.swapaxes(k[..., c], -1, -2) / math.sqrt(d_k))
            a = np.exp(s - s.max(-1, keepdims=True))
            heads.append(a / a.sum(-1, keepdims=True) @ v[..., c])
        x = x + np.concatenate(heads, -1) @ p[b + "attn.W_o"] + p[b + "attn.b_o"]
        h = _ln(x, p[b + "ln2.gamma"], p[b + "ln2.beta"], config.ln_eps) @ p[b + "ffn.W_1"] + p[b + "ffn.b_1"]
        g = 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
        x = x + g @ p[b + "ffn.W_2"] + p[b + "ffn.b_2"]
    x = _ln(x, p["ln_f.gamma"], p["ln_f.beta"], config.ln_eps)
    return x @ (p["E"].T if config.tie_weights else p["W_out"])


def _loss(p, config, ids=IDS, targets=TARGETS, label_smoothing=0.1):
    logits, _ = gpt_forward(p, ids, config)
    return float(cross_entropy_forward(logits, targets, label_smoothing=label_smoothing)[0])


def test_gpt_loss_is_the_loss_of_gpt_loss_and_grads_without_the_backward():
    p = _random_params(CFG, seed=2)
    for smoothing in (0.0, 0.1):
        full, _, _ = gpt_loss_and_grads(p, (IDS, TARGETS), CFG, label_smoothing=smoothing)
        assert gpt_loss(p, (IDS, TARGETS), CFG, label_smoothing=smoothing) == full
    # and the independent forward's cross-entropy, written out: -mean log softmax at the counted targets
    z = _reference_logits(p, IDS, CFG)
    logp = z - z.max(-1, keepdims=True) - np.log(np.exp(z - z.max(-1, keepdims=True)).sum(-1, keepdims=True))
    counted = TARGETS != -1
    expected = -np.take_along_axis(logp, np.where(counted, TARGETS, 0)[..., None], -1)[..., 0][counted].mean()
    np.testing.assert_allclose(gpt_loss(p, (IDS, TARGETS), CFG), expected, rtol=1e-12)


def test_parameter_table_names_and_shapes():
    cfg = GPTConfig(vocab_size=5, context=4, d_model=6, n_heads=3, n_layers=1, d_ff=12, tie_weights=False)
    expected = {
        "E": (5, 6), "P": (4, 6), "block0.ln1.gamma": (6,), "block0.ln1.beta": (6,),
        "block0.attn.W_q": (6, 6), "block0.attn.b_q": (6,), "block0.attn.W_k": (6, 6), "block0.attn.b_k": (6,),
        "block0.attn.W_v": (6, 6), "block0.attn.b_v": (6,), "block0.attn.W_o": (6, 6), "block0.attn.b_o": (6,),
        "block0.ln2.gamma": (6,), "block0.ln2.beta": (6,), "block0.ffn.W_1": (6, 12), "block0.ffn.b_1": (12,),
        "block0.ffn.W_2": (12, 6), "block0.ffn.b_2": (6,), "ln_f.gamma": (6,), "ln_f.beta": (6,), "W_out": (6, 5),
    }
    assert gpt_param_shapes(cfg) == expected
    assert "W_out" not in gpt_param_shapes(GPTConfig(5, 4, 6, 3, 1, 12))


def test_init_follows_gpt2():
    params = init_gpt_params(CFG, seed=3, std=0.02)
    assert list(params) == list(gpt_param_shapes(CFG))
    assert np.all(params["block1.ln2.gamma"] == 1.0) and np.all(params["block1.attn.b_v"] == 0.0)
    assert np.all(params["ln_f.beta"] == 0.0)
    big = init_gpt_params(GPTConfig(50, 40, 64, 4, 2, 128), std=0.02)
    assert abs(big["E"].std() - 0.02) < 0.002
    assert abs(big["block0.attn.W_o"].std() - 0.02 / 2) < 0.002  # std / sqrt(2 n_layers)
    np.testing.assert_array_equal(init_gpt_params(CFG, seed=3)["E"], params["E"])
    assert init_gpt_params(CFG, dtype=np.float32)["E"].dtype == np.float32


@pytest.mark.parametrize("tie", [True, False])
def test_forward_matches_independent_reference(tie):
    cfg = GPTConfig(7, 6, 8, 2, 2, 16, tie_weights=tie)
    p = _random_params(cfg, seed=1)
    logits, _ = gpt_forward(p, IDS, cfg)
    assert logits.shape == (2, 5, 7)
    np.testing.assert_allclose(logits, _reference_logits(p, IDS, cfg), rtol=1e-11, atol=1e-12)
    unbatched, _ = gpt_forward(p, IDS[1], cfg)
    np.testing.assert_allclose(unbatched, logits[1], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize(
    "config, label_smoothing",
    [  # every switch in two checks of the same small GPT: tied, two layers; untied, four heads, erf GELU, ln_eps
        (CFG, 0.1),
        (GPTConfig(7, 6, 8, 4, 1, 16, tie_weights=False, gelu="erf", ln_eps=1e-3), 0.3),
    ],
)
def test_gradcheck_every_parameter(config, label_smoothing):
    p = _random_params(config, seed=2)
    loss, grads, _ = gpt_loss_and_grads(p, (IDS, TARGETS), config, label_smoothing=label_smoothing)
    assert list(grads) == list(p)
    assert loss == pytest.approx(_loss(p, config, label_smoothing=label_smoothing), rel=1e-14)
    report = gradcheck(lambda q: _loss(q, config, label_smoothing=label_smoothing), p, grads)
    assert report.passed, report.to_markdown()
    if not config.tie_weights:
        assert np.all(grads["E"][4] == 0.0)  # id 4 is never looked up: scatter-add leaves its row 0
    assert np.all(grads["P"][5:] == 0.0)  # positions after T = 5 are unused


def _buggy_mha_backward(dout, cache):
    """The public bug: the gradient reaching the merged heads O uses W_o instead of W_o^T."""
    lin_o = cache["lin_o"]
    b = np.zeros(lin_o["W"].shape[1]) if lin_o["has_b"] else None
    _, wrong = linear_forward(cache["O"], lin_o["W"].T, b)  # linear_backward then returns dout W_o
    return mha_backward_traced(dout, dict(cache, lin_o=wrong))


def test_gradcheck_rejects_W_o_instead_of_its_transpose(monkeypatch):
    p = _random_params(CFG, seed=4)
    monkeypatch.setattr(gpt_mod, "mha_backward_traced", _buggy_mha_backward)
    _, grads, _ = gpt_loss_and_grads(p, (IDS, TARGETS), CFG, label_smoothing=0.1)
    upstream = ["E", "block1.attn.W_q", "block1.attn.W_k", "block1.attn.W_v", "block0.attn.W_q", "block0.ln2.gamma"]
    downstream = ["block1.attn.W_o", "block1.attn.b_o", "block1.ffn.b_2", "ln_f.gamma"]
    report = gradcheck(lambda q: _loss(q, CFG), p, grads, names=upstream + downstream)
    assert {row.name for row in report.failures()} == set(upstream)


def test_trace_names_in_order():
    cfg = GPTConfig(7, 6, 8, 2, 1, 16)
    _, _, trace = gpt_loss_and_grads(_random_params(cfg), (IDS, TARGETS), cfg)
    attn = [f"block0.attn.{n}" for n in ("Q", "K", "V", "S", "A", "O_heads", "O", "out")]
    forward = ["x_tok", "x_pos", "x0", "block0.ln1", *attn, "block0.res1", "block0.ln2", "block0.ffn.pre",
               "block0.ffn.gelu", "block0.ffn.out", "block0.res2", "ln_f", "logits"]
    dattn = [f"dblock0.attn.{n}" for n in ("out", "O", "O_heads", "A", "V", "S", "Q", "K")]
    backward = ["dlogits", "dln_f", "dblock0.res2", "dblock0.ffn.out", "dblock0.ffn.gelu", "dblock0.ffn.pre",
                "dblock0.ln2", "dblock0.res1", *dattn, "dblock0.ln1", "dx0", "dx_tok", "dx_pos"]
    assert list(trace) == forward + ["p", "q"] + backward
    for name in backward:
        assert trace[name].shape == trace[name[1:]].shape, name
    assert trace["block0.attn.Q"].shape == (2, 2, 5, 4) and trace["block0.attn.A"].shape == (2, 2, 5, 5)


def test_seed_invariants():
    p = init_gpt_params(CFG, seed=5, std=1.0)  # gamma 1, beta 0: LN outputs are the normalised rows
    _, _, trace = gpt_loss_and_grads(p, (IDS, TARGETS), CFG, label_smoothing=0.1)
    for name in ("block0.ln1", "block0.ln2", "block1.ln1", "block1.ln2", "ln_f"):
        np.testing.assert_allclose(trace[name].mean(-1), 0.0, atol=1e-12)
        np.testing.assert_allclose(trace[name].var(-1), 1.0, rtol=1e-4)
    future = np.broadcast_to(~causal_mask(5), trace["block0.attn.A"].shape)
    for i in range(2):
        P = trace[f"block{i}.attn.A"]
        np.testing.assert_allclose(P.sum(-1), 1.0, atol=1e-14)
        assert np.all(P[future] == 0.0) and np.all(P[~future] > 0.0)
        assert np.all(trace[f"dblock{i}.attn.S"][future] == 0.0)
    counted = TARGETS != -1
    np.testing.assert_allclose((trace["p"] - trace["q"])[counted].sum(-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(trace["dlogits"].sum(-1), 0.0, atol=1e-15)
    assert np.all(trace["dlogits"][~counted] == 0.0)


@pytest.mark.parametrize("t", [0, 2, 3])
def test_logits_at_t_ignore_tokens_after_t(t):
    p = _random_params(CFG, seed=6)
    logits, _ = gpt_forward(p, IDS, CFG)
    changed = IDS.copy()
    changed[:, t + 1:] = (changed[:, t + 1:] + 3) % 7
    logits2, _ = gpt_forward(p, changed, CFG)
    np.testing.assert_array_equal(logits2[:, : t + 1], logits[:, : t + 1])
    assert not np.allclose(logits2[:, t + 1:], logits[:, t + 1:])


def test_float32_stays_float32():
    p = _random_params(CFG, dtype=np.float32)
    loss, grads, trace = gpt_loss_and_grads(p, (IDS, TARGETS), CFG)
    assert trace["logits"].dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads.values())


def test_a_batch_of_one_token_sequences_is_b_sequences():
    """ids of shape (B, 1): the first step of B prompts, as every GPT library feeds it."""
    p = _random_params(CFG, seed=3)
    ids = np.array([[1], [4], [6]])  # (3, 1)
    logits, _ = gpt_forward(p, ids, CFG)
    assert logits.shape == (3, 1, CFG.vocab_size)
    np.testing.assert_allclose(logits, _reference_logits(p, ids, CFG), rtol=1e-12, atol=1e-12)
    for b in range(3):  # each row is that one token alone, at position 0
        np.testing.assert_allclose(logits[b], gpt_forward(p, ids[b], CFG)[0], rtol=1e-12, atol=1e-12)


# bad ids: one row per kind in tests/test_bad_input.py


def test_rejects_bad_params_config_and_batch():
    good = init_gpt_params(CFG)
    with pytest.raises(ValueError, match="unknown parameter.*W_out"):
        gpt_forward({**good, "W_out": np.zeros((8, 7))}, IDS, CFG)
    with pytest.raises(ValueError, match="missing parameter.*block1.ffn.b_2"):
        gpt_forward({k: v for k, v in good.items() if k != "block1.ffn.b_2"}, IDS, CFG)
    with pytest.raises(ValueError, match=r"block0.attn.W_q must have shape \(8, 8\)"):
        gpt_forward({**good, "block0.attn.W_q": np.zeros((8, 4))}, IDS, CFG)
    with pytest.raises(ValueError, match="P contains NaN or inf"):
        gpt_forward({**good, "P": np.full((6, 8), np.nan)}, IDS, CFG)
    with pytest.raises(ValueError, match="does not divide d_model"):
        GPTConfig(7, 6, 8, 3, 1, 16)
    with pytest.raises(ValueError, match="gelu must be"):
        GPTConfig(7, 6, 8, 2, 1, 16, gelu="relu")
    with pytest.raises(ValueError, match="targets must have the shape of ids"):
        gpt_loss_and_grads(good, (IDS, TARGETS[:, :3]), CFG)
    with pytest.raises(ValueError, match="dlogits must have the shape"):
        gpt_backward(np.zeros((2, 5)), gpt_forward(good, IDS, CFG)[1])
