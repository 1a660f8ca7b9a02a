"""Tests for byhand.encdec: the 2017 post-LN encoder-decoder.

Oracles: an independent NumPy forward written here (per-head loop, sinusoids from the paper's
formula), central finite differences for every parameter and for the embedded inputs, a wrong
attention backward that gradcheck must reject, and the seed-000 invariants.
"""
import math

import numpy as np
import pytest

import byhand.encdec as encdec_mod
from byhand.attention import causal_mask
from byhand.encdec import (
    EncDecConfig,
    encdec_backward,
    encdec_forward,
    encdec_forward_embedded,
    encdec_loss_and_grads,
    encdec_param_shapes,
    init_encdec_params,
)
from byhand.gradcheck import gradcheck
from byhand.linear import linear_forward
from byhand.loss import cross_entropy_forward
from byhand.mha import mha_backward_traced

# the seed-000 toy sizes: d_model 4, 2 heads, d_ff 8, target vocabulary 4
CFG = EncDecConfig(src_vocab=5, tgt_vocab=4, d_model=4, n_heads=2, d_ff=8, max_len=6)
SRC = np.array([[1, 2, 2, 4], [3, 3, 0, 0]])  # batch 2, repeated tokens, second row padded with 0
VALID = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=bool)
TGT_IN = np.array([[0, 1, 2], [0, 2, 2]])
TGT_OUT = np.array([[1, 2, 3], [2, 2, -1]])  # -1: ignored


def _random_params(config, seed=0):
    rng = np.random.default_rng(seed)
    params = init_encdec_params(config, seed=seed)
    for name, value in params.items():
        if name.endswith("gamma"):
            params[name] = 1.0 + 0.3 * rng.normal(size=value.shape)
        elif value.ndim == 1:
            params[name] = 0.2 * rng.normal(size=value.shape)
    return params


def _ln(x, gamma, beta, eps):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps) * gamma + beta


def _mha_ref(p, a, x, kv, h, allowed):
    d_k = x.shape[-1] // h
    q, k, v = x @ p[a + ".W_q"], kv @ p[a + ".W_k"], kv @ p[a + ".W_v"]
    heads = []
    for j in range(h):
        c = slice(j * d_k, (j + 1) * d_k)
        s = np.where(allowed, q[..., c] @ np.swapaxes(k[..., c], -1, -2) / math.sqrt(d_k), -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        heads.append(e / e.sum(-1, keepdims=True) @ v[..., c])
    return np.concatenate(heads, -1) @ p[a + ".W_o"]


def _reference_logits(p, src, tgt, config, valid):
    """The paper's forward, written independently of byhand."""
    d, eps = config.d_model, config.ln_eps

    def embed(E, ids):
        pos = np.arange(ids.shape[-1])[:, None]
        i = np.arange(d)[None, :]
        angle = pos / 10000.0 ** ((i - i % 2) / d)  # PE(pos, 2i) = sin, PE(pos, 2i+1) = cos
        return E[ids] * math.sqrt(d) + np.where(i % 2 == 0, np.sin(angle), np.cos(angle))

    def ffn(pre, x):
        return np.maximum(x @ p[pre + ".W_1"] + p[pre + ".b_1"], 0.0) @ p[pre + ".W_2"] + p[pre + ".b_2"]

    def ln(name, x):
        return _ln(x, p[name + ".gamma"], p[name + ".beta"], eps)

    pad = valid[:, None, :]  # (B, 1, T_s)
    x = embed(p["E_src"], src)
    for i in range(config.n_enc_layers):
        x = ln(f"enc{i}.ln1", x + _mha_ref(p, f"enc{i}.attn", x, x, config.n_heads, pad))
        x = ln(f"enc{i}.ln2", x + ffn(f"enc{i}.ffn", x))
    y = embed(p["E_tgt"], tgt)
    T = tgt.shape[-1]
    for i in range(config.n_dec_layers):
        y = ln(f"dec{i}.ln1", y + _mha_ref(p, f"dec{i}.self", y, y, config.n_heads, np.tri(T, dtype=bool)))
        y = ln(f"dec{i}.ln2", y + _mha_ref(p, f"dec{i}.cross", y, x, config.n_heads, pad))
        y = ln(f"dec{i}.ln3", y + ffn(f"dec{i}.ffn", y))
    return y @ (p["E_tgt"].T if config.tie_output else p["W_out"]) + p["b_out"]


def _loss(p, config, label_smoothing, valid):
    logits, _ = encdec_forward(p, SRC, TGT_IN, config, src_valid=valid)
    return float(cross_entropy_forward(logits, TGT_OUT, label_smoothing=label_smoothing)[0])


def test_parameter_table_names_and_shapes():
    shapes = encdec_param_shapes(EncDecConfig(3, 5, 4, 2, 8, max_len=4))
    ln = lambda n: [n + ".gamma", n + ".beta"]  # noqa: E731
    attn = lambda n: [f"{n}.W_{w}" for w in "qkvo"]  # noqa: E731
    ffn = lambda n: [n + ".W_1", n + ".b_1", n + ".W_2", n + ".b_2"]  # noqa: E731
    expected = ["E_src", "E_tgt", *attn("enc0.attn"), *ln("enc0.ln1"), *ffn("enc0.ffn"), *ln("enc0.ln2"),
                *attn("dec0.self"), *ln("dec0.ln1"), *attn("dec0.cross"), *ln("dec0.ln2"), *ffn("dec0.ffn"),
                *ln("dec0.ln3"), "W_out", "b_out"]
    assert list(shapes) == expected
    assert shapes["E_src"] == (3, 4) and shapes["W_out"] == (4, 5) and shapes["dec0.ffn.W_1"] == (4, 8)
    tied = encdec_param_shapes(EncDecConfig(3, 5, 4, 2, 8, tie_output=True))
    assert "W_out" not in tied and tied["b_out"] == (5,)


@pytest.mark.parametrize("tie, layers", [(False, 1), (True, 2)])
def test_forward_matches_independent_reference(tie, layers):
    cfg = EncDecConfig(5, 4, 8, 2, 16, n_enc_layers=layers, n_dec_layers=layers, max_len=6, tie_output=tie)
    p = _random_params(cfg, seed=1)
    logits, _ = encdec_forward(p, SRC, TGT_IN, cfg, src_valid=VALID)
    assert logits.shape == (2, 3, 4)
    np.testing.assert_allclose(logits, _reference_logits(p, SRC, TGT_IN, cfg, VALID), rtol=1e-11, atol=1e-12)
    one, _ = encdec_forward(p, SRC[1, :2], TGT_IN[1], cfg)  # unbatched, padding dropped
    np.testing.assert_allclose(one, logits[1], rtol=1e-12, atol=1e-13)


def _deep_names(params):
    """For the 2 + 2 layer model: the bottom encoder layer (its gradient arrives through two
    cross-attentions and enc1), the top decoder layer, and the embeddings and output bias."""
    return [n for n in params if n.startswith(("enc0.", "dec1.")) or n in ("E_src", "E_tgt", "b_out")]


@pytest.mark.parametrize(
    "config, label_smoothing, valid, names",
    [
        (CFG, 0.1, VALID, None),
        (EncDecConfig(5, 4, 4, 2, 8, max_len=6, tie_output=True), 0.2, None, None),
        (EncDecConfig(5, 4, 4, 2, 8, 2, 2, max_len=6, tie_output=True), 0.0, None, _deep_names),
    ],
)
def test_gradcheck_every_parameter(config, label_smoothing, valid, names):
    p = _random_params(config, seed=2)
    loss, grads, trace = encdec_loss_and_grads(p, (SRC, TGT_IN, TGT_OUT), config, label_smoothing, src_valid=valid)
    assert list(grads) == list(p)
    assert loss == pytest.approx(_loss(p, config, label_smoothing, valid), rel=1e-14)
    names = None if names is None else names(p)
    report = gradcheck(lambda q: _loss(q, config, label_smoothing, valid), p, grads, names=names)
    assert report.passed, report.to_markdown()
    # source id 0 occurs only at padded positions: masked, it gets exactly zero gradient
    assert np.all(grads["E_src"][0] == 0.0) if valid is not None else np.all(grads["E_src"][0] != 0.0)
    assert trace["dX_src"].shape == trace["X_src"].shape and trace["dX_tgt"].shape == trace["X_tgt"].shape


def test_gradcheck_embedded_inputs():
    cfg = EncDecConfig(5, 4, 4, 2, 8, max_len=6, ln_eps=1e-3)
    p = _random_params(cfg, seed=3)
    rng = np.random.default_rng(3)
    X_src, X_tgt = rng.normal(size=(2, 4, 4)), rng.normal(size=(2, 3, 4))
    R = rng.normal(size=(2, 3, 4))
    logits, cache = encdec_forward_embedded(p, X_src, X_tgt, cfg, src_valid=VALID)
    grads, gtrace = encdec_backward(R, cache)
    assert np.all(grads["E_src"] == 0.0) and np.all(grads["E_tgt"] == 0.0)  # not used from embedded inputs

    def f(q):
        params = {k: q[k] for k in p}
        return float(np.sum(encdec_forward_embedded(params, q["X_src"], q["X_tgt"], cfg, src_valid=VALID)[0] * R))

    report = gradcheck(f, {**p, "X_src": X_src, "X_tgt": X_tgt},
                       {**grads, "X_src": gtrace["dX_src"], "X_tgt": gtrace["dX_tgt"]},
                       names=["X_src", "X_tgt", "enc0.attn.W_k", "dec0.cross.W_v", "W_out"])
    assert report.passed, report.to_markdown()
    assert np.all(gtrace["dX_src"][1, 2:] == 0.0)  # padded source positions are never read


def _buggy_mha_backward(dout, cache):
    """The public bug: the gradient reaching the merged heads O uses W_o instead of W_o^T."""
    lin_o = cache["lin_o"]
    _, wrong = linear_forward(cache["O"], lin_o["W"].T)  # linear_backward then returns dout W_o
    return mha_backward_traced(dout, dict(cache, lin_o=wrong))


def test_gradcheck_rejects_W_o_instead_of_its_transpose(monkeypatch):
    p = _random_params(CFG, seed=4)
    monkeypatch.setattr(encdec_mod, "mha_backward_traced", _buggy_mha_backward)
    _, grads, _ = encdec_loss_and_grads(p, (SRC, TGT_IN, TGT_OUT), CFG, 0.1, src_valid=VALID)
    upstream = ["E_src", "E_tgt", "enc0.attn.W_q", "dec0.self.W_v", "dec0.cross.W_q", "dec0.cross.W_k"]
    downstream = ["dec0.cross.W_o", "dec0.ffn.b_2", "b_out"]
    report = gradcheck(lambda q: _loss(q, CFG, 0.1, VALID), p, grads, names=upstream + downstream)
    assert {row.name for row in report.failures()} == set(upstream)


def test_trace_names_in_order():
    _, _, trace = encdec_loss_and_grads(_random_params(CFG), (SRC, TGT_IN, TGT_OUT), CFG)
    attn = lambda a: [f"{a}.{n}" for n in ("Q", "K", "V", "S", "A", "O_heads", "O", "out")]  # noqa: E731
    dattn = lambda a: [f"d{a}.{n}" for n in ("out", "O", "O_heads", "A", "V", "S", "Q", "K")]  # noqa: E731
    ffn = lambda pre: [pre + ".ffn.pre", pre + ".ffn.relu", pre + ".ffn.out"]  # noqa: E731
    dffn = lambda pre: ["d" + pre + ".ffn.out", "d" + pre + ".ffn.relu", "d" + pre + ".ffn.pre"]  # noqa: E731
    forward = ["src_emb", "src_pos", "X_src", "tgt_emb", "tgt_pos", "X_tgt",
               *attn("enc0.attn"), "enc0.res1", "enc0.ln1", *ffn("enc0"), "enc0.res2", "enc0.ln2",
               *attn("dec0.self"), "dec0.res1", "dec0.ln1", *attn("dec0.cross"), "dec0.res2", "dec0.ln2",
               *ffn("dec0"), "dec0.res3", "dec0.ln3", "logits"]
    backward = ["dlogits", "ddec0.ln3", "ddec0.res3", *dffn("dec0"), "ddec0.ln2", "ddec0.res2",
                *dattn("dec0.cross"), "ddec0.ln1", "ddec0.res1", *dattn("dec0.self"), "dX_tgt",
                "denc0.ln2", "denc0.res2", *dffn("enc0"), "denc0.ln1", "denc0.res1", *dattn("enc0.attn"), "dX_src"]
    assert list(trace) == forward + ["p", "q"] + backward
    for name in backward:
        assert trace[name].shape == trace[name[1:]].shape, name
    assert trace["dec0.cross.A"].shape == (2, 2, 3, 4) and trace["enc0.attn.Q"].shape == (2, 2, 4, 2)
    embedded_trace = encdec_forward_embedded(_random_params(CFG), trace["X_src"], trace["X_tgt"], CFG)[1]["trace"]
    assert list(embedded_trace) == forward[2:3] + forward[5:]


def test_seed_invariants():
    cfg = EncDecConfig(5, 4, 8, 2, 16, max_len=6, ln_eps=0.0)  # the seed's toy uses eps = 0
    p = init_encdec_params(cfg, seed=5)  # gamma 1, beta 0: LN outputs are the normalised rows
    _, _, trace = encdec_loss_and_grads(p, (SRC, TGT_IN, TGT_OUT), cfg, 0.1, src_valid=VALID)
    for name in ("enc0.ln1", "enc0.ln2", "dec0.ln1", "dec0.ln2", "dec0.ln3"):
        np.testing.assert_allclose(trace[name].mean(-1), 0.0, atol=1e-12)
        np.testing.assert_allclose(trace[name].var(-1), 1.0, rtol=1e-12)
    pad = np.broadcast_to(~VALID[:, None, None, :], trace["enc0.attn.A"].shape)
    future = np.broadcast_to(~causal_mask(3), trace["dec0.self.A"].shape)
    cross_pad = np.broadcast_to(~VALID[:, None, None, :], trace["dec0.cross.A"].shape)
    for a, masked in (("enc0.attn", pad), ("dec0.self", future), ("dec0.cross", cross_pad)):
        np.testing.assert_allclose(trace[a + ".A"].sum(-1), 1.0, atol=1e-14)
        assert np.all(trace[a + ".A"][masked] == 0.0) and np.all(trace[a + ".A"][~masked] > 0.0)
        assert np.all(trace["d" + a + ".S"][masked] == 0.0)
    counted = TGT_OUT != -1
    np.testing.assert_allclose((trace["p"] - trace["q"])[counted].sum(-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(trace["dlogits"].sum(-1), 0.0, atol=1e-15)


@pytest.mark.parametrize("t", [0, 1])
def test_decoder_output_at_t_ignores_targets_after_t(t):
    p = _random_params(CFG, seed=6)
    logits, _ = encdec_forward(p, SRC, TGT_IN, CFG, src_valid=VALID)
    changed = TGT_IN.copy()
    changed[:, t + 1:] = (changed[:, t + 1:] + 1) % 4
    logits2, _ = encdec_forward(p, SRC, changed, CFG, src_valid=VALID)
    np.testing.assert_array_equal(logits2[:, : t + 1], logits[:, : t + 1])
    assert not np.allclose(logits2[:, t + 1:], logits[:, t + 1:])
    # padded source tokens are invisible; a real one is not
    src = SRC.copy()
    src[1, 2:] = 4
    np.testing.assert_array_equal(encdec_forward(p, src, TGT_IN, CFG, src_valid=VALID)[0], logits)
    src[1, 0] = 4
    assert not np.allclose(encdec_forward(p, src, TGT_IN, CFG, src_valid=VALID)[0][1], logits[1])


def test_float32_stays_float32():
    p = {k: v.astype(np.float32) for k, v in _random_params(CFG).items()}
    _, grads, trace = encdec_loss_and_grads(p, (SRC, TGT_IN, TGT_OUT), CFG)
    assert trace["logits"].dtype == np.float32 and trace["X_src"].dtype == np.float32
    assert all(g.dtype == np.float32 for g in grads.values())


# bad ids: one row per kind in tests/test_bad_input.py


def test_rejects_bad_params_inputs_and_config():
    good = init_encdec_params(CFG)
    with pytest.raises(ValueError, match="unknown parameter.*enc0.attn.b_q"):
        encdec_forward({**good, "enc0.attn.b_q": np.zeros(4)}, SRC, TGT_IN, CFG)
    with pytest.raises(ValueError, match="missing parameter.*dec0.cross.W_k"):
        encdec_forward({k: v for k, v in good.items() if k != "dec0.cross.W_k"}, SRC, TGT_IN, CFG)
    with pytest.raises(ValueError, match=r"b_out must have shape \(4,\)"):
        encdec_forward({**good, "b_out": np.zeros(5)}, SRC, TGT_IN, CFG)
    with pytest.raises(ValueError, match="X_src contains NaN or inf"):
        encdec_forward_embedded(good, np.full((4, 4), np.inf), np.zeros((3, 4)), CFG)
    with pytest.raises(ValueError, match="X_tgt must have last dimension"):
        encdec_forward_embedded(good, np.zeros((4, 4)), np.zeros((3, 5)), CFG)
    with pytest.raises(ValueError, match="src_valid must have shape"):
        encdec_forward(good, SRC, TGT_IN, CFG, src_valid=VALID[:, :3])
    with pytest.raises(ValueError, match="does not divide d_model"):
        EncDecConfig(5, 4, 8, 3, 16)
    with pytest.raises(ValueError, match="batch must be a triple"):
        encdec_loss_and_grads(good, (SRC, TGT_IN), CFG)
    with pytest.raises(ValueError, match="target"):
        encdec_loss_and_grads(good, (SRC, TGT_IN, TGT_OUT + 4), CFG)
