"""The 2017 encoder-decoder transformer (post-LN, ReLU, cross-attention), forward and backward.

Taught in Part III, "The 2017 encoder-decoder, by hand": sinusoidal positions and scaled
embeddings, encoder self-attention, post-LN Add & Norm, the ReLU feed-forward, masked decoder
self-attention, cross-attention, the output layer, then the backward through all of it. The
chapter feeds hand-picked inputs to ``encdec_forward_embedded``; ``encdec_forward`` starts from ids.

For source X_src (B, T_s, d_model) and shifted target X_tgt (B, T_t, d_model), with
X = E[ids] sqrt(d_model) + PE (sinusoidal) when starting from ids:

    encoder layer i:  res1 = x + MHA(x, x);          ln1 = LN(res1)
                      res2 = ln1 + FFN(ln1);         ln2 = LN(res2)      memory = last ln2
    decoder layer i:  res1 = y + MHA(y, y, causal);  ln1 = LN(res1)
                      res2 = ln1 + MHA(ln1, memory); ln2 = LN(res2)      (Q from decoder, K, V from memory)
                      res3 = ln2 + FFN(ln2);         ln3 = LN(res3)
    logits = ln3 W_out + b_out   (or ln3 E_tgt^T + b_out when tie_output)           (B, T_t, V_tgt)

with FFN(x) = ReLU(x W_1 + b_1) W_2 + b_2 and no biases inside attention, as in the paper.

Trace names. Each attention a in {enc{i}.attn, dec{i}.self, dec{i}.cross} records a.Q, a.K, a.V
(B, h, T, d_k), a.S, a.A (B, h, T_q, T_k), a.O_heads, a.O, a.out; its gradients come back as
da.out, da.O, da.O_heads, da.A, da.V, da.S, da.Q, da.K. Forward, in order: "src_emb" (scaled
lookup), "src_pos", "X_src", "tgt_emb", "tgt_pos", "X_tgt" (only "X_src", "X_tgt" when embedded);
per encoder layer: enc{i}.attn.*, "enc{i}.res1", "enc{i}.ln1", "enc{i}.ffn.pre", "enc{i}.ffn.relu",
"enc{i}.ffn.out", "enc{i}.res2", "enc{i}.ln2" (the last one is the memory); per decoder layer:
dec{i}.self.*, "dec{i}.res1", "dec{i}.ln1", dec{i}.cross.*, "dec{i}.res2", "dec{i}.ln2",
"dec{i}.ffn.pre", ".relu", ".out", "dec{i}.res3", "dec{i}.ln3"; "logits".
Backward, in order: "dlogits"; per decoder layer from the last: "ddec{i}.ln3", "ddec{i}.res3",
"ddec{i}.ffn.out", ".relu", ".pre", "ddec{i}.ln2", "ddec{i}.res2", ddec{i}.cross.*, "ddec{i}.ln1",
"ddec{i}.res1", ddec{i}.self.*; "dX_tgt"; per encoder layer from the last: "denc{i}.ln2" (the
memory's gradient, summed over every cross-attention), "denc{i}.res2", "denc{i}.ffn.out", ".relu",
".pre", "denc{i}.ln1", "denc{i}.res1", denc{i}.attn.*; "dX_src".
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from byhand.activations import relu_backward, relu_forward
from byhand.attention import causal_mask, padding_mask
from byhand.checks import (as_float, check_grad, check_instance, check_int, check_last_dim, check_ndim,
                           check_sequence_ids, float_dtype, float_params, is_int)
from byhand.embedding import embedding_backward, embedding_forward, sinusoidal_positions
from byhand.layernorm import layernorm_backward, layernorm_forward
from byhand.linear import linear_backward, linear_forward, residual_backward, residual_forward
from byhand.loss import cross_entropy_backward, cross_entropy_forward
from byhand.mha import mha_backward_traced, mha_forward

_W = ("W_q", "W_k", "W_v", "W_o")
_SHOWN = ("Q", "K", "V", "S", "A", "O_heads", "O")  # mha cache entries copied into the trace


@dataclass(frozen=True)
class EncDecConfig:
    """Sizes and switches of the 2017 encoder-decoder."""

    src_vocab: int  # source vocabulary size (rows of E_src)
    tgt_vocab: int  # target vocabulary size (rows of E_tgt, columns of W_out)
    d_model: int  # model width (512 in the base paper, 4 in Part III's toy)
    n_heads: int  # h: heads per attention, d_k = d_model / h
    d_ff: int  # hidden width of the ReLU feed-forward
    n_enc_layers: int = 1  # encoder layers N (6 in the paper)
    n_dec_layers: int = 1  # decoder layers N (6 in the paper)
    max_len: int = 512  # longest source or target sequence accepted
    ln_eps: float = 1e-5  # layer-norm epsilon (Part III's toy uses 0)
    tie_output: bool = False  # logits = h E_tgt^T + b_out instead of h W_out + b_out
    scale_embeddings: bool = True  # multiply looked-up embeddings by sqrt(d_model), as in the paper

    def __post_init__(self):
        sizes = ("src_vocab", "tgt_vocab", "d_model", "n_heads", "d_ff", "n_enc_layers", "n_dec_layers", "max_len")
        for field in sizes:
            value = getattr(self, field)
            if not is_int(value) or value < 1:
                raise ValueError(f"EncDecConfig.{field} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"n_heads = {self.n_heads} does not divide d_model = {self.d_model}")
        if not self.ln_eps >= 0:
            raise ValueError(f"ln_eps must be >= 0, got {self.ln_eps}")


def encdec_param_shapes(config: EncDecConfig) -> dict[str, tuple[int, ...]]:
    """The parameter table: name -> shape, encoder first, then decoder, then the output layer."""
    check_instance("config", config, EncDecConfig)
    d, d_ff = config.d_model, config.d_ff
    ln = {"gamma": (d,), "beta": (d,)}
    attn = {w: (d, d) for w in _W}
    ffn = {"W_1": (d, d_ff), "b_1": (d_ff,), "W_2": (d_ff, d), "b_2": (d,)}
    enc = {"attn": attn, "ln1": ln, "ffn": ffn, "ln2": ln}  # sublayers in forward order
    dec = {"self": attn, "ln1": ln, "cross": attn, "ln2": ln, "ffn": ffn, "ln3": ln}
    shapes = {"E_src": (config.src_vocab, d), "E_tgt": (config.tgt_vocab, d)}
    for side, n_layers, parts in (("enc", config.n_enc_layers, enc), ("dec", config.n_dec_layers, dec)):
        for i in range(n_layers):
            for part, table in parts.items():
                shapes.update({f"{side}{i}.{part}.{leaf}": shape for leaf, shape in table.items()})
    if not config.tie_output:
        shapes["W_out"] = (d, config.tgt_vocab)
    shapes["b_out"] = (config.tgt_vocab,)
    return shapes


def init_encdec_params(config: EncDecConfig, seed: int = 0, dtype=np.float64) -> dict[str, np.ndarray]:
    """Xavier-uniform matrices (embeddings included), zero biases and betas, unit gammas."""
    check_int("seed", seed, low=0)
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in encdec_param_shapes(config).items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "gamma":
            params[name] = np.ones(shape, dtype=dtype)
        elif len(shape) == 1:  # b_1, b_2, b_out, beta
            params[name] = np.zeros(shape, dtype=dtype)
        else:
            limit = np.sqrt(6.0 / (shape[0] + shape[1]))  # keeps activation variance ~ constant
            params[name] = rng.uniform(-limit, limit, size=shape).astype(dtype)
    return params


def _checked(params: dict, config: EncDecConfig) -> dict[str, np.ndarray]:
    """Validate names, shapes and finiteness against the parameter table; return float arrays."""
    return float_params(params, encdec_param_shapes(config))  # names, shapes, NaN/inf


class _Sublayer(NamedTuple):
    """One sublayer and its Add & Norm, by the names its parameters and trace entries carry."""

    name: str  # the sublayer: "enc0.attn", "dec0.self", "dec0.cross", "enc0.ffn", ...
    res: str  # its residual sum x + sublayer(x): "enc0.res1", ...
    ln: str  # the layer norm after it: "enc0.ln1", ...


def _sublayers(side: str, i: int) -> tuple[_Sublayer, ...]:
    """Layer i of the encoder (side "enc": attn, ffn) or the decoder ("dec": self, cross, ffn), in forward order."""
    parts = ("attn", "ffn") if side == "enc" else ("self", "cross", "ffn")
    return tuple(_Sublayer(f"{side}{i}.{part}", f"{side}{i}.res{n}", f"{side}{i}.ln{n}")
                 for n, part in enumerate(parts, start=1))


def _add_norm(p, s: _Sublayer, x, out, config, trace, c):
    """Add & Norm, the paper's post-LN step: res = x + out; ln = LN(res). (..., T, d_model)."""
    res, c[s.res] = residual_forward(x, out)  # (..., T, d_model)
    trace[s.res] = res
    ln, c[s.ln] = layernorm_forward(res, p[s.ln + ".gamma"], p[s.ln + ".beta"], config.ln_eps)
    trace[s.ln] = ln
    return ln


def _add_norm_backward(dln, s: _Sublayer, c, grads, gtrace):
    """Backward of ``_add_norm``: returns (dx, dout), both (..., T, d_model)."""
    gtrace["d" + s.ln] = dln
    dres, grads[s.ln + ".gamma"], grads[s.ln + ".beta"] = layernorm_backward(dln, c[s.ln])
    gtrace["d" + s.res] = dres
    return residual_backward(dres, c[s.res])


def _attn_forward(p, s: _Sublayer, x, kv, mask, config, trace, c):
    """Attention sublayer then Add & Norm: LN(x + MHA(x, kv)). x (..., T, d_model)."""
    out, c[s.name] = mha_forward(x, kv, *(p[f"{s.name}.{w}"] for w in _W), config.n_heads, mask=mask)
    for key in _SHOWN:
        trace[f"{s.name}.{key}"] = c[s.name][key]
    trace[s.name + ".out"] = out  # (..., T, d_model)
    return _add_norm(p, s, x, out, config, trace, c)


def _attn_backward(dln, s: _Sublayer, c, grads, gtrace, self_attention):
    """Backward of ``_attn_forward``; returns (dx, dkv), dkv None for self-attention (folded into dx)."""
    dx, dout = _add_norm_backward(dln, s, c, grads, gtrace)  # both (..., T, d_model)
    gtrace[f"d{s.name}.out"] = dout
    g, attn_trace = mha_backward_traced(dout, c[s.name])
    for key, value in attn_trace.items():
        gtrace[f"d{s.name}.{key}"] = value
    for w in _W:
        grads[f"{s.name}.{w}"] = g[w]
    dx = dx + g["x_q"]  # the skip path plus the queries' path
    if self_attention:
        return dx + g["x_kv"], None  # x was also the keys and values
    return dx, g["x_kv"]


def _ffn_forward(p, s: _Sublayer, x, config, trace, c):
    """ReLU feed-forward sublayer then Add & Norm: LN(x + ReLU(x W_1 + b_1) W_2 + b_2)."""
    f = s.name  # "enc0.ffn"
    h, c[f + ".fc"] = linear_forward(x, p[f + ".W_1"], p[f + ".b_1"])  # (..., T, d_ff)
    r, c[f + ".relu"] = relu_forward(h)  # (..., T, d_ff)
    out, c[f + ".proj"] = linear_forward(r, p[f + ".W_2"], p[f + ".b_2"])  # (..., T, d_model)
    trace.update({f + ".pre": h, f + ".relu": r, f + ".out": out})
    return _add_norm(p, s, x, out, config, trace, c)


def _ffn_backward(dln, s: _Sublayer, c, grads, gtrace):
    """Backward of ``_ffn_forward``; returns dx (..., T, d_model)."""
    f = s.name
    dx, dout = _add_norm_backward(dln, s, c, grads, gtrace)  # both (..., T, d_model)
    gtrace[f"d{f}.out"] = dout
    dr, grads[f + ".W_2"], grads[f + ".b_2"] = linear_backward(dout, c[f + ".proj"])  # (..., T, d_ff)
    gtrace[f"d{f}.relu"] = dr
    dh = relu_backward(dr, c[f + ".relu"])  # (..., T, d_ff), 0 where h <= 0
    gtrace[f"d{f}.pre"] = dh
    dx_ffn, grads[f + ".W_1"], grads[f + ".b_1"] = linear_backward(dh, c[f + ".fc"])
    return dx + dx_ffn


def encdec_forward_embedded(params: dict, X_src, X_tgt, config: EncDecConfig, src_valid=None):
    """Logits from already-embedded inputs: X_src (B, T_s, d_model), X_tgt (B, T_t, d_model) (or no B).

    ``src_valid`` (B, T_s), optional, marks real source tokens; padding is masked from the encoder's
    self-attention and from every cross-attention. The decoder's self-attention is causal.
    Returns logits (B, T_t, tgt_vocab) and a cache whose "trace" is the ordered dict of intermediates.
    E_src is not used here (and gets zero gradient); E_tgt only when tie_output.
    """
    return _encode_decode(_checked(params, config), X_src, X_tgt, config, src_valid)


def _encode_decode(p, X_src, X_tgt, config, src_valid):
    """The body of ``encdec_forward_embedded`` for already-checked params p."""
    X_src, X_tgt = as_float("X_src", X_src), as_float("X_tgt", X_tgt)
    for name, X in (("X_src", X_src), ("X_tgt", X_tgt)):
        check_ndim(name, X, (2, 3))
        check_last_dim(name, X, config.d_model, "d_model")
        if X.shape[-2] == 0:
            raise ValueError(f"{name} is an empty sequence")
        if X.shape[-2] > config.max_len:
            raise ValueError(f"{name} has {X.shape[-2]} tokens, longer than max_len = {config.max_len}")
    if X_src.shape[:-2] != X_tgt.shape[:-2]:
        raise ValueError(f"X_src and X_tgt must have the same batch axes, got {X_src.shape} and {X_tgt.shape}")
    src_mask = None  # or (B, 1, 1, T_s): padding hidden from encoder self-attention and cross-attention
    if src_valid is not None:
        valid = np.asarray(src_valid)
        if valid.shape != X_src.shape[:-1]:
            raise ValueError(f"src_valid must have shape {X_src.shape[:-1]}, got {valid.shape}")
        src_mask = padding_mask(valid) if valid.ndim == 2 else padding_mask(valid[None])[0]
    trace, c = {"X_src": X_src, "X_tgt": X_tgt}, {"config": config}
    x = X_src  # (B, T_s, d_model)
    for i in range(config.n_enc_layers):
        attn, ffn = _sublayers("enc", i)
        x = _attn_forward(p, attn, x, x, src_mask, config, trace, c)
        x = _ffn_forward(p, ffn, x, config, trace, c)
    memory = x  # (B, T_s, d_model): keys and values of every cross-attention
    y = X_tgt  # (B, T_t, d_model)
    mask = causal_mask(X_tgt.shape[-2])  # (T_t, T_t)
    for i in range(config.n_dec_layers):
        self_attn, cross, ffn = _sublayers("dec", i)
        y = _attn_forward(p, self_attn, y, y, mask, config, trace, c)
        y = _attn_forward(p, cross, y, memory, src_mask, config, trace, c)
        y = _ffn_forward(p, ffn, y, config, trace, c)
    W_head = p["E_tgt"].T if config.tie_output else p["W_out"]  # (d_model, tgt_vocab)
    logits, c["head"] = linear_forward(y, W_head, p["b_out"])  # (B, T_t, tgt_vocab)
    trace["logits"] = logits
    c["trace"] = trace
    return logits, c


def encdec_forward(params: dict, src_ids, tgt_ids, config: EncDecConfig, src_valid=None):
    """Logits from token ids: src_ids (B, T_s) or (T_s,), tgt_ids (the shifted target) likewise.

    X = E[ids] * sqrt(d_model) (if scale_embeddings) + sinusoidal positions, then
    ``encdec_forward_embedded``. The trace starts with "src_emb" (scaled lookup), "src_pos", "X_src",
    "tgt_emb", "tgt_pos", "X_tgt". ValueError for empty, too long or out-of-vocabulary ids, and for batches of
    different sizes. 2-D ids are (B, T): (B, 1) is B sequences of one token each.
    """
    p = _checked(params, config)
    if config.d_model % 2:
        raise ValueError(f"sinusoidal positions need an even d_model, got {config.d_model}")
    scale = math.sqrt(config.d_model) if config.scale_embeddings else 1.0
    trace, emb = {}, {"scale": scale}
    ids = {side: check_sequence_ids(f"{side}_ids", a, p[f"E_{side}"].shape[0], config.max_len,
                                    f"max_len = {config.max_len}") for side, a in (("src", src_ids), ("tgt", tgt_ids))}
    if ids["src"].shape[:-1] != ids["tgt"].shape[:-1]:
        raise ValueError(f"src_ids and tgt_ids must have the same batch size, got shapes {ids['src'].shape} and "
                         f"{ids['tgt'].shape}")
    X = {}
    for side, ids, E in (("src", ids["src"], p["E_src"]), ("tgt", ids["tgt"], p["E_tgt"])):
        tok, emb[side] = embedding_forward(ids, E)  # (B, T, d_model)
        x_emb = tok * scale  # (B, T, d_model)
        pos = sinusoidal_positions(ids.shape[-1], config.d_model).astype(E.dtype)  # (T, d_model), no parameters
        X[side] = x_emb + pos  # (B, T, d_model)
        trace.update({f"{side}_emb": x_emb, f"{side}_pos": pos, f"X_{side}": X[side]})
    logits, c = _encode_decode(p, X["src"], X["tgt"], config, src_valid)
    trace.update(c["trace"])
    c["trace"], c["emb"] = trace, emb
    return logits, c


def encdec_backward(dlogits, cache):
    """Gradients of every parameter (and of X_src, X_tgt) from dloss/dlogits.

    Returns (grads, grad_trace): grads has exactly the parameter names, each shaped like its
    parameter; grad_trace holds the intermediate gradients in backward order (module docstring),
    including "dX_tgt" and "dX_src". The memory's gradient is the sum over all cross-attentions.
    """
    config = cache["config"]
    shapes = encdec_param_shapes(config)
    dlogits = check_grad("dlogits", dlogits, cache["trace"]["logits"].shape, of="the logits")
    grads, gtrace = {}, {"dlogits": dlogits}
    dy, dW_head, grads["b_out"] = linear_backward(dlogits, cache["head"])  # (B, T_t, d_model)
    dmemory = 0.0  # accumulates over the decoder layers' cross-attentions
    for i in reversed(range(config.n_dec_layers)):
        self_attn, cross, ffn = _sublayers("dec", i)
        dy = _ffn_backward(dy, ffn, cache, grads, gtrace)
        dy, dkv = _attn_backward(dy, cross, cache, grads, gtrace, self_attention=False)
        dmemory = dmemory + dkv  # (B, T_s, d_model)
        dy, _ = _attn_backward(dy, self_attn, cache, grads, gtrace, self_attention=True)
    gtrace["dX_tgt"] = dy
    dx = dmemory
    for i in reversed(range(config.n_enc_layers)):
        attn, ffn = _sublayers("enc", i)
        dx = _ffn_backward(dx, ffn, cache, grads, gtrace)
        dx, _ = _attn_backward(dx, attn, cache, grads, gtrace, self_attention=True)
    gtrace["dX_src"] = dx
    if "emb" in cache:  # started from ids: X = E[ids] * scale + PE (PE has no parameters)
        emb = cache["emb"]
        grads["E_src"] = embedding_backward(dx * emb["scale"], emb["src"])  # (src_vocab, d_model)
        grads["E_tgt"] = embedding_backward(dy * emb["scale"], emb["tgt"])  # (tgt_vocab, d_model)
    else:  # started from embedded inputs: the lookup tables were not used
        grads["E_src"], grads["E_tgt"] = (np.zeros(shapes[n], dtype=dlogits.dtype) for n in ("E_src", "E_tgt"))
    if config.tie_output:
        grads["E_tgt"] = grads["E_tgt"] + dW_head.T  # E_tgt is also the output layer
    else:
        grads["W_out"] = dW_head
    return {name: grads[name] for name in shapes}, gtrace


def encdec_loss_and_grads(params: dict, batch, config: EncDecConfig, label_smoothing: float = 0.0, src_valid=None):
    """One forward and backward: batch = (src_ids, tgt_in_ids, tgt_out_ids), -1 in tgt_out = ignored.

    Returns (loss, grads, trace): mean (smoothed) cross-entropy over counted target positions,
    grads keyed like params, and the forward trace + "p", "q" + the backward trace.
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 3:
        raise ValueError("batch must be a triple (src_ids, tgt_in_ids, tgt_out_ids)")
    src_ids, tgt_in, tgt_out = batch
    if np.shape(tgt_out) != np.shape(tgt_in):
        raise ValueError(f"tgt_out_ids must have the shape of tgt_in_ids {np.shape(tgt_in)}, got {np.shape(tgt_out)}")
    logits, cache = encdec_forward(params, src_ids, tgt_in, config, src_valid=src_valid)
    loss, loss_cache = cross_entropy_forward(logits, tgt_out, label_smoothing=label_smoothing, ignore_index=-1)
    dlogits = cross_entropy_backward(1.0, loss_cache)  # (p - q) / N on counted positions
    grads, gtrace = encdec_backward(dlogits, cache)
    trace = dict(cache["trace"])
    trace.update({"p": loss_cache["p"], "q": loss_cache["q"]})
    trace.update(gtrace)
    return float(loss), grads, trace
