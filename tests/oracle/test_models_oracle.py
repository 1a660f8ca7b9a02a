"""The two byhand models against the same models written in plain torch ops, float64.

The torch models below are written from the architecture descriptions (GPT-2's pre-LN decoder, the 2017
post-LN encoder-decoder) with torch.nn.functional ops on tensors made from byhand's params dict; no
torch.nn.Transformer and no byhand code inside them. Loss, logits and every gradient must agree within
1e-9 of each tensor's largest entry. The weights are random and O(1) (not the tiny init), so that every
gradient is large enough for a wrong one to show.
"""
import math

import numpy as np
import pytest

from byhand.encdec import EncDecConfig, encdec_backward, encdec_forward_embedded, encdec_loss_and_grads
from byhand.gpt import GPTConfig, gpt_forward, gpt_loss_and_grads, gpt_param_shapes
from byhand.encdec import encdec_param_shapes

TOL = 1e-9


def assert_close(ours, theirs, what):
    """max |ours - theirs| <= 1e-9 * max|theirs| (+1e-13 for all-zero tensors), naming the tensor on failure."""
    a = np.asarray(ours, dtype=np.float64)
    b = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    err = float(np.max(np.abs(a - b)))
    scale = float(np.max(np.abs(b)))
    assert err <= TOL * scale + 1e-13, f"{what}: max |byhand - torch| = {err:.3e}, max |torch| = {scale:.3e}"


def random_params(shapes, seed):
    """O(1) random weights; gammas near 1, betas and biases non-zero, so every path carries signal."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in shapes.items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "gamma":
            params[name] = 1.0 + 0.3 * rng.standard_normal(shape)
        elif len(shape) == 1:
            params[name] = 0.3 * rng.standard_normal(shape)
        else:
            params[name] = rng.standard_normal(shape) / math.sqrt(shape[0])  # rows of E, P, W all ~unit scale out
    return params


def _mha(torch, x_q, x_kv, tp, pre, n_heads, mask, biases):
    """Multi-head attention in torch ops; mask is a bool tensor broadcastable to (B, h, T_q, T_k) or None."""
    F = torch.nn.functional

    def proj(x, w):
        y = x @ tp[pre + "W_" + w]
        return y + tp[pre + "b_" + w] if biases else y

    def split(x):  # (..., T, d_model) -> (..., h, T, d_k)
        return x.reshape(*x.shape[:-1], n_heads, x.shape[-1] // n_heads).transpose(-2, -3)

    Q, K, V = split(proj(x_q, "q")), split(proj(x_kv, "k")), split(proj(x_kv, "v"))
    O = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)  # (..., h, T_q, d_k)
    O = O.transpose(-2, -3).reshape(*x_q.shape)  # (..., T_q, d_model), heads concatenated
    return proj(O, "o")


# ---------------------------------------------------------------- GPT (pre-LN decoder)


def torch_gpt_logits(torch, tp, ids, cfg):
    F = torch.nn.functional
    d = cfg.d_model
    T = ids.shape[-1]
    x = tp["E"][ids] + tp["P"][:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(cfg.n_layers):
        pre = f"block{i}."
        h = F.layer_norm(x, (d,), tp[pre + "ln1.gamma"], tp[pre + "ln1.beta"], eps=cfg.ln_eps)
        x = x + _mha(torch, h, h, tp, pre + "attn.", cfg.n_heads, causal, biases=True)
        h = F.layer_norm(x, (d,), tp[pre + "ln2.gamma"], tp[pre + "ln2.beta"], eps=cfg.ln_eps)
        g = F.gelu(h @ tp[pre + "ffn.W_1"] + tp[pre + "ffn.b_1"], approximate="tanh" if cfg.gelu == "tanh" else "none")
        x = x + g @ tp[pre + "ffn.W_2"] + tp[pre + "ffn.b_2"]
    x = F.layer_norm(x, (d,), tp["ln_f.gamma"], tp["ln_f.beta"], eps=cfg.ln_eps)
    return x @ (tp["E"].T if cfg.tie_weights else tp["W_out"])


GPT_CASES = {
    # name: (config, batch shape, label smoothing)
    "tied_1layer_B2": (GPTConfig(vocab_size=11, context=7, d_model=8, n_heads=2, n_layers=1, d_ff=16), (2, 5), 0.0),
    "untied_2layers_B3_smooth": (
        GPTConfig(vocab_size=9, context=6, d_model=12, n_heads=3, n_layers=2, d_ff=20, tie_weights=False), (3, 6), 0.1),
    "tied_2layers_erf_unbatched": (
        GPTConfig(vocab_size=10, context=8, d_model=8, n_heads=4, n_layers=2, d_ff=12, gelu="erf"), (5,), 0.2),
    "part2_toy": (GPTConfig(vocab_size=10, context=8, d_model=16, n_heads=2, n_layers=1, d_ff=64), (1, 5), 0.0),
}


def assert_matches_torch(case, loss, trace, grads, tloss, logits, tp):
    """byhand's loss, logits and every gradient against torch's, after ``tloss.backward()``."""
    assert_close(loss, tloss, f"{case}: loss")
    assert_close(trace["logits"], logits, f"{case}: logits")
    assert set(grads) == set(tp)
    for name in tp:
        assert_close(grads[name], tp[name].grad, f"{case}: d{name}")


@pytest.mark.parametrize("case", list(GPT_CASES))
def test_gpt_matches_torch(torch, case):
    cfg, shape, eps = GPT_CASES[case]
    rng = np.random.default_rng(7)
    params = random_params(gpt_param_shapes(cfg), seed=11)
    ids = rng.integers(0, cfg.vocab_size, size=shape)
    targets = rng.integers(0, cfg.vocab_size, size=shape)
    targets.flat[1] = -1  # ignored positions
    if targets.size > 4:
        targets.flat[-2] = -1

    loss, grads, trace = gpt_loss_and_grads(params, (ids, targets), cfg, label_smoothing=eps)

    tp = {n: torch.tensor(a, requires_grad=True) for n, a in params.items()}
    logits = torch_gpt_logits(torch, tp, torch.tensor(ids), cfg)
    tloss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab_size), torch.tensor(targets).reshape(-1),
                                              ignore_index=-1, label_smoothing=eps)
    tloss.backward()
    assert_matches_torch(case, loss, trace, grads, tloss, logits, tp)
    assert np.all(grads["P"][shape[-1]:] == 0.0)  # positions beyond T get no gradient


def test_gpt_logits_only_forward(torch):
    cfg = GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=8, tie_weights=False)
    params = random_params(gpt_param_shapes(cfg), seed=3)
    ids = np.array([[1, 6, 6, 0], [2, 2, 5, 3]])
    logits, _ = gpt_forward(params, ids, cfg)
    tp = {n: torch.tensor(a) for n, a in params.items()}
    assert_close(logits, torch_gpt_logits(torch, tp, torch.tensor(ids), cfg), "gpt_forward logits")


# ---------------------------------------------------------------- 2017 encoder-decoder (post-LN)


def torch_sinusoids(torch, T, d):
    pos = torch.arange(T).unsqueeze(1)  # (T, 1)
    div = torch.pow(torch.tensor(10000.0), torch.arange(0, d, 2) / d)  # (d/2,)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    return pe


def torch_encdec_logits(torch, tp, X_src, X_tgt, cfg, src_valid=None):
    F = torch.nn.functional
    d = cfg.d_model

    def ln(x, pre):
        return F.layer_norm(x, (d,), tp[pre + ".gamma"], tp[pre + ".beta"], eps=cfg.ln_eps)

    def ffn(x, pre):
        return F.relu(x @ tp[pre + ".W_1"] + tp[pre + ".b_1"]) @ tp[pre + ".W_2"] + tp[pre + ".b_2"]

    pad = None if src_valid is None else torch.tensor(src_valid, dtype=torch.bool)[:, None, None, :]  # (B,1,1,T_s)
    x = X_src
    for i in range(cfg.n_enc_layers):
        x = ln(x + _mha(torch, x, x, tp, f"enc{i}.attn.", cfg.n_heads, pad, biases=False), f"enc{i}.ln1")
        x = ln(x + ffn(x, f"enc{i}.ffn"), f"enc{i}.ln2")
    memory = x
    T_t = X_tgt.shape[-2]
    causal = torch.ones(T_t, T_t, dtype=torch.bool).tril()
    y = X_tgt
    for i in range(cfg.n_dec_layers):
        y = ln(y + _mha(torch, y, y, tp, f"dec{i}.self.", cfg.n_heads, causal, biases=False), f"dec{i}.ln1")
        y = ln(y + _mha(torch, y, memory, tp, f"dec{i}.cross.", cfg.n_heads, pad, biases=False), f"dec{i}.ln2")
        y = ln(y + ffn(y, f"dec{i}.ffn"), f"dec{i}.ln3")
    return y @ (tp["E_tgt"].T if cfg.tie_output else tp["W_out"]) + tp["b_out"]


ENCDEC_CASES = {
    # name: (config, batch size or None, (T_s, T_t), label smoothing, with source padding)
    "untied_1x1_B2": (EncDecConfig(src_vocab=7, tgt_vocab=6, d_model=8, n_heads=2, d_ff=16, max_len=10),
                      2, (4, 3), 0.0, False),
    "tied_2x2_B3_smooth": (EncDecConfig(src_vocab=9, tgt_vocab=8, d_model=8, n_heads=4, d_ff=12, n_enc_layers=2,
                                        n_dec_layers=2, max_len=10, tie_output=True), 3, (5, 4), 0.1, False),
    "untied_unscaled_unbatched": (EncDecConfig(src_vocab=5, tgt_vocab=5, d_model=6, n_heads=3, d_ff=10,
                                               max_len=10, scale_embeddings=False), None, (3, 4), 0.1, False),
    "untied_2x1_padding": (EncDecConfig(src_vocab=7, tgt_vocab=6, d_model=8, n_heads=2, d_ff=16, n_enc_layers=2,
                                        max_len=10), 2, (5, 3), 0.1, True),
}


@pytest.mark.parametrize("case", list(ENCDEC_CASES))
def test_encdec_matches_torch(torch, case):
    cfg, B, (T_s, T_t), eps, padded = ENCDEC_CASES[case]
    rng = np.random.default_rng(5)
    params = random_params(encdec_param_shapes(cfg), seed=13)
    lead = () if B is None else (B,)
    src = rng.integers(0, cfg.src_vocab, size=lead + (T_s,))
    tgt_in = rng.integers(0, cfg.tgt_vocab, size=lead + (T_t,))
    tgt_out = rng.integers(0, cfg.tgt_vocab, size=lead + (T_t,))
    tgt_out.flat[0] = -1  # an ignored position
    src_valid = None
    if padded:
        src_valid = np.ones((B, T_s), dtype=bool)
        src_valid[0, -2:] = False  # the first source sentence is 2 tokens shorter

    loss, grads, trace = encdec_loss_and_grads(params, (src, tgt_in, tgt_out), cfg, label_smoothing=eps,
                                               src_valid=src_valid)

    tp = {n: torch.tensor(a, requires_grad=True) for n, a in params.items()}
    scale = math.sqrt(cfg.d_model) if cfg.scale_embeddings else 1.0
    X_src = tp["E_src"][torch.tensor(src)] * scale + torch_sinusoids(torch, T_s, cfg.d_model)
    X_tgt = tp["E_tgt"][torch.tensor(tgt_in)] * scale + torch_sinusoids(torch, T_t, cfg.d_model)
    logits = torch_encdec_logits(torch, tp, X_src, X_tgt, cfg, src_valid)
    tloss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.tgt_vocab), torch.tensor(tgt_out).reshape(-1),
                                              ignore_index=-1, label_smoothing=eps)
    tloss.backward()
    assert_matches_torch(case, loss, trace, grads, tloss, logits, tp)


def test_encdec_embedded_inputs_and_their_gradients(torch):
    # the Part III chapter starts from hand-picked X: check dX_src and dX_tgt as well
    cfg = EncDecConfig(src_vocab=4, tgt_vocab=5, d_model=4, n_heads=2, d_ff=8, max_len=4, ln_eps=0.0)
    rng = np.random.default_rng(9)
    params = random_params(encdec_param_shapes(cfg), seed=17)
    X_src, X_tgt = rng.standard_normal((2, 4)), rng.standard_normal((3, 4))
    dlogits = rng.standard_normal((3, 5))
    logits, cache = encdec_forward_embedded(params, X_src, X_tgt, cfg)
    grads, gtrace = encdec_backward(dlogits, cache)

    tp = {n: torch.tensor(a, requires_grad=True) for n, a in params.items()}
    tX_src, tX_tgt = torch.tensor(X_src, requires_grad=True), torch.tensor(X_tgt, requires_grad=True)
    tlogits = torch_encdec_logits(torch, tp, tX_src, tX_tgt, cfg)
    tlogits.backward(torch.tensor(dlogits))
    assert_close(logits, tlogits, "embedded: logits")
    assert_close(gtrace["dX_src"], tX_src.grad, "embedded: dX_src")
    assert_close(gtrace["dX_tgt"], tX_tgt.grad, "embedded: dX_tgt")
    for name in params:
        expected = tp[name].grad if tp[name].grad is not None else torch.zeros_like(tp[name])
        assert_close(grads[name], expected, f"embedded: d{name}")
