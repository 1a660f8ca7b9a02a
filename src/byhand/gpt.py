"""A GPT-2-compatible decoder (pre-LN blocks, final layer norm, tied LM head), forward and backward.

Taught across Part II, "One training step of a small GPT": chapter "Model, tokens and parameter
table" (``GPTConfig``, ``gpt_param_shapes``), "Embeddings and positions", "Queries, keys and
values", "Scores, mask, softmax", "Multi-head and output projection", "Feed-forward with GELU",
"Layer norm and residuals", "Logits and loss" (the forward), then "Backward through loss and output
layer", "Through FFN and layer norm", "Through attention", "Into embeddings" and "Checking every
gradient" (the backward). Part IV trains this model.

The arithmetic is GPT-2's, so GPT-2 weights load by renaming: for ids (B, T),

    x0      = E[ids] + P[:T]                                          (B, T, d_model)
    per block i (pre-LN):
      res1  = x + MHA(LN1(x)),  causal mask, biases on Q, K, V, O     (B, T, d_model)
      res2  = res1 + GELU_tanh(LN2(res1) W_1 + b_1) W_2 + b_2         (B, T, d_model)
    ln_f    = LN_f(res2 of the last block)                            (B, T, d_model)
    logits  = ln_f E^T  (tied, default)  or  ln_f W_out               (B, T, V)

with every layer norm over d_model, biased variance and eps = 1e-5. ids may also be (T,).

Forward trace names (``cache["trace"]``, in this order): "x_tok", "x_pos", "x0", then per block i
"block{i}.ln1", "block{i}.attn.Q", ".K", ".V" (B, h, T, d_k), ".S", ".A" (B, h, T, T),
".O_heads" (B, h, T, d_k), ".O" (B, T, d_model), ".out", "block{i}.res1", "block{i}.ln2",
"block{i}.ffn.pre" (B, T, d_ff), "block{i}.ffn.gelu", "block{i}.ffn.out", "block{i}.res2";
then "ln_f", "logits".
Backward trace names (in backward order): "dlogits", "dln_f", then for i from the last block down
"dblock{i}.res2", "dblock{i}.ffn.out", "dblock{i}.ffn.gelu", "dblock{i}.ffn.pre", "dblock{i}.ln2",
"dblock{i}.res1", "dblock{i}.attn.out", ".O", ".O_heads", ".A", ".V", ".S", ".Q", ".K",
"dblock{i}.ln1"; then "dx0", "dx_tok", "dx_pos". Each "d<name>" is dloss/d<name>, shaped like <name>.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from byhand.activations import gelu_backward, gelu_forward
from byhand.attention import causal_mask
from byhand.checks import (check_grad, check_instance, check_int, check_number, check_sequence_ids, float_dtype,
                           float_params, is_int)
from byhand.embedding import embedding_backward, embedding_forward, positions_backward, positions_forward
from byhand.layernorm import layernorm_backward, layernorm_forward
from byhand.linear import linear_backward, linear_forward, residual_backward, residual_forward
from byhand.loss import cross_entropy_backward, cross_entropy_forward
from byhand.mha import mha_backward_traced, mha_forward

_ATTN = ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o")
_SHOWN = ("Q", "K", "V", "S", "A", "O_heads", "O")  # mha cache entries copied into the trace


@dataclass(frozen=True)
class GPTConfig:
    """Sizes and switches of a GPT-style decoder; the defaults are GPT-2's arithmetic."""

    vocab_size: int  # V: number of token ids (rows of E)
    context: int  # T_max: longest sequence, rows of the learned positions P
    d_model: int  # width of the residual stream
    n_heads: int  # h: attention heads per block, d_k = d_model / h
    n_layers: int  # number of blocks
    d_ff: int  # hidden width of the feed-forward (4 d_model in GPT-2)
    tie_weights: bool = True  # logits = ln_f E^T (GPT-2); False adds a separate W_out
    ln_eps: float = 1e-5  # layer-norm epsilon (GPT-2: 1e-5)
    gelu: str = "tanh"  # "tanh" (GPT-2's approximation) or "erf" (exact GELU)

    def __post_init__(self):
        for field in ("vocab_size", "context", "d_model", "n_heads", "n_layers", "d_ff"):
            value = getattr(self, field)
            if not is_int(value) or value < 1:
                raise ValueError(f"GPTConfig.{field} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"n_heads = {self.n_heads} does not divide d_model = {self.d_model}")
        if not self.ln_eps >= 0:
            raise ValueError(f"ln_eps must be >= 0, got {self.ln_eps}")
        if self.gelu not in ("tanh", "erf"):
            raise ValueError(f"gelu must be 'tanh' or 'erf', got {self.gelu!r}")


def gpt_param_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """The parameter table: name -> shape, in the order the forward uses them."""
    check_instance("config", config, GPTConfig)
    d, V, d_ff = config.d_model, config.vocab_size, config.d_ff
    shapes = {"E": (V, d), "P": (config.context, d)}
    for i in range(config.n_layers):
        b = f"block{i}."
        shapes.update({b + "ln1.gamma": (d,), b + "ln1.beta": (d,)})
        for w in _ATTN:
            shapes[b + "attn." + w] = (d, d) if w.startswith("W") else (d,)
        shapes.update({b + "ln2.gamma": (d,), b + "ln2.beta": (d,)})
        shapes.update({b + "ffn.W_1": (d, d_ff), b + "ffn.b_1": (d_ff,), b + "ffn.W_2": (d_ff, d), b + "ffn.b_2": (d,)})
    shapes.update({"ln_f.gamma": (d,), "ln_f.beta": (d,)})
    if not config.tie_weights:
        shapes["W_out"] = (d, V)
    return shapes


def init_gpt_params(config: GPTConfig, seed: int = 0, std: float = 0.02, dtype=np.float64) -> dict[str, np.ndarray]:
    """GPT-2's initialisation: weights ~ N(0, std^2), biases and betas 0, gammas 1.

    As in GPT-2, the two projections that write into the residual stream (attn.W_o and ffn.W_2)
    use std / sqrt(2 n_layers), so the stream's variance does not grow with depth.
    """
    check_int("seed", seed, low=0)
    check_number("std", std)
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in gpt_param_shapes(config).items():
        leaf = name.rsplit(".", 1)[-1]
        if leaf == "gamma":
            params[name] = np.ones(shape, dtype=dtype)
        elif leaf == "beta" or leaf.startswith("b_"):
            params[name] = np.zeros(shape, dtype=dtype)
        else:
            scale = std / np.sqrt(2 * config.n_layers) if leaf in ("W_o", "W_2") else std
            params[name] = (rng.standard_normal(shape) * scale).astype(dtype)
    return params


def _checked(params: dict, config: GPTConfig) -> dict[str, np.ndarray]:
    """Validate names, shapes and finiteness against the parameter table; return float arrays."""
    return float_params(params, gpt_param_shapes(config))  # names, shapes, NaN/inf


def _block_forward(p, pre, x, mask, config, trace):
    """One pre-LN block; records its intermediates in ``trace``. x (..., T, d_model)."""
    c = {}
    ln1, c["ln1"] = layernorm_forward(x, p[pre + "ln1.gamma"], p[pre + "ln1.beta"], config.ln_eps)  # (..., T, d_model)
    trace[pre + "ln1"] = ln1
    a = {w: p[pre + "attn." + w] for w in _ATTN}
    attn_out, c["attn"] = mha_forward(ln1, ln1, a["W_q"], a["W_k"], a["W_v"], a["W_o"], config.n_heads,
                                      a["b_q"], a["b_k"], a["b_v"], a["b_o"], mask=mask)  # (..., T, d_model)
    for key in _SHOWN:
        trace[pre + "attn." + key] = c["attn"][key]
    trace[pre + "attn.out"] = attn_out
    res1, c["res1"] = residual_forward(x, attn_out)  # (..., T, d_model)
    trace[pre + "res1"] = res1
    ln2, c["ln2"] = layernorm_forward(res1, p[pre + "ln2.gamma"], p[pre + "ln2.beta"], config.ln_eps)
    trace[pre + "ln2"] = ln2
    h, c["fc"] = linear_forward(ln2, p[pre + "ffn.W_1"], p[pre + "ffn.b_1"])  # (..., T, d_ff)
    trace[pre + "ffn.pre"] = h
    g, c["gelu"] = gelu_forward(h, approximate=config.gelu)  # (..., T, d_ff)
    trace[pre + "ffn.gelu"] = g
    f, c["proj"] = linear_forward(g, p[pre + "ffn.W_2"], p[pre + "ffn.b_2"])  # (..., T, d_model)
    trace[pre + "ffn.out"] = f
    res2, c["res2"] = residual_forward(res1, f)  # (..., T, d_model)
    trace[pre + "res2"] = res2
    return res2, c


def _block_backward(dres2, c, pre, grads, gtrace):
    """Backward of one block, line against line with ``_block_forward``; returns dx (..., T, d_model)."""
    gtrace["d" + pre + "res2"] = dres2
    dres1, df = residual_backward(dres2, c["res2"])  # both (..., T, d_model)
    gtrace["d" + pre + "ffn.out"] = df
    dg, grads[pre + "ffn.W_2"], grads[pre + "ffn.b_2"] = linear_backward(df, c["proj"])  # (..., T, d_ff)
    gtrace["d" + pre + "ffn.gelu"] = dg
    dh = gelu_backward(dg, c["gelu"])  # (..., T, d_ff)
    gtrace["d" + pre + "ffn.pre"] = dh
    dln2, grads[pre + "ffn.W_1"], grads[pre + "ffn.b_1"] = linear_backward(dh, c["fc"])  # (..., T, d_model)
    gtrace["d" + pre + "ln2"] = dln2
    dres1_ln, grads[pre + "ln2.gamma"], grads[pre + "ln2.beta"] = layernorm_backward(dln2, c["ln2"])
    dres1 = dres1 + dres1_ln  # res1 feeds the skip path and LN2: the gradients add
    gtrace["d" + pre + "res1"] = dres1
    dx, dattn_out = residual_backward(dres1, c["res1"])  # both (..., T, d_model)
    gtrace["d" + pre + "attn.out"] = dattn_out
    g, attn_trace = mha_backward_traced(dattn_out, c["attn"])
    for key, value in attn_trace.items():
        gtrace["d" + pre + "attn." + key] = value
    for w in _ATTN:
        grads[pre + "attn." + w] = g[w]
    dln1 = g["x_q"] + g["x_kv"]  # self-attention: LN1's output is both queries and keys/values
    gtrace["d" + pre + "ln1"] = dln1
    dx_ln, grads[pre + "ln1.gamma"], grads[pre + "ln1.beta"] = layernorm_backward(dln1, c["ln1"])
    return dx + dx_ln  # x feeds the skip path and LN1


def gpt_forward(params: dict, ids, config: GPTConfig):
    """Logits of the next token at every position: ids (B, T) or (T,) -> logits (B, T, V) or (T, V).

    2-D ids are always (B, T): ids of shape (B, 1) are B sequences of one token each (the first step of B prompts).
    Position t sees only tokens 0..t (causal mask). Returns (logits, cache) with cache["trace"] the
    ordered dict of every named intermediate (module docstring). ValueError for ids that are empty,
    longer than the context, outside [0, V), not integers, not 1-D/2-D, for params that are not a
    dict or have unknown, missing, misshapen or non-finite entries, and for a config that is not a GPTConfig.
    """
    p = _checked(params, config)
    ids = check_sequence_ids("ids", ids, config.vocab_size, config.context, f"the context of {config.context}")
    T = ids.shape[-1]
    # cache: each op's own (minimal) cache, plus the trace of references to arrays already computed
    trace, c = {}, {"config": config}
    x_tok, c["tok"] = embedding_forward(ids, p["E"])  # (B, T, d_model)
    x_pos, c["pos"] = positions_forward(T, p["P"])  # (T, d_model)
    x0, c["x0"] = residual_forward(x_tok, np.broadcast_to(x_pos, x_tok.shape))  # (B, T, d_model)
    trace.update({"x_tok": x_tok, "x_pos": x_pos, "x0": x0})
    mask = causal_mask(T)  # (T, T), broadcast over batch and heads
    x = x0
    for i in range(config.n_layers):  # a loop over layers, never over tokens or heads
        x, c[f"block{i}"] = _block_forward(p, f"block{i}.", x, mask, config, trace)
    ln_f, c["ln_f"] = layernorm_forward(x, p["ln_f.gamma"], p["ln_f.beta"], config.ln_eps)  # (B, T, d_model)
    trace["ln_f"] = ln_f
    W_head = p["E"].T if config.tie_weights else p["W_out"]  # (d_model, V)
    logits, c["head"] = linear_forward(ln_f, W_head)  # (B, T, V)
    trace["logits"] = logits
    c["trace"] = trace
    return logits, c


def gpt_backward(dlogits, cache):
    """Gradients of every parameter from dloss/dlogits (shaped like the logits).

    Returns (grads, grad_trace): grads has exactly the parameter names (in table order), each
    shaped like its parameter; grad_trace holds the named intermediate gradients in backward order
    (module docstring). Tied weights: E's gradient is the embedding scatter-add plus the head's
    (dlogits^T ln_f), summed over batch and positions.
    """
    config = cache["config"]
    dlogits = check_grad("dlogits", dlogits, cache["trace"]["logits"].shape, of="the logits")
    grads, gtrace = {}, {"dlogits": dlogits}
    dln_f, dW_head, _ = linear_backward(dlogits, cache["head"])  # (B, T, d_model), (d_model, V)
    gtrace["dln_f"] = dln_f
    dx, grads["ln_f.gamma"], grads["ln_f.beta"] = layernorm_backward(dln_f, cache["ln_f"])  # (B, T, d_model)
    for i in reversed(range(config.n_layers)):
        dx = _block_backward(dx, cache[f"block{i}"], f"block{i}.", grads, gtrace)
    gtrace["dx0"] = dx
    dx_tok, dx_pos = residual_backward(dx, cache["x0"])  # both (B, T, d_model)
    dx_pos = dx_pos.reshape((-1,) + dx_pos.shape[-2:]).sum(axis=0)  # (T, d_model): x_pos was broadcast over B
    gtrace["dx_tok"] = dx_tok
    gtrace["dx_pos"] = dx_pos
    grads["P"] = positions_backward(dx_pos, cache["pos"])  # (context, d_model), rows >= T stay 0
    dE = embedding_backward(dx_tok, cache["tok"])  # (V, d_model), scatter-add over repeated ids
    if config.tie_weights:
        grads["E"] = dE + dW_head.T  # E is used twice: as the lookup table and as the LM head
    else:
        grads["E"] = dE
        grads["W_out"] = dW_head
    return {name: grads[name] for name in gpt_param_shapes(config)}, gtrace


def _batch(batch):
    """``(ids, targets)`` of a batch, which must be a pair of arrays of one shape."""
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ValueError("batch must be a pair (ids, targets)")
    ids, targets = batch
    if np.shape(targets) != np.shape(ids):
        raise ValueError(f"targets must have the shape of ids {np.shape(ids)}, got {np.shape(targets)}")
    return ids, targets


def gpt_loss(params: dict, batch, config: GPTConfig, label_smoothing: float = 0.0) -> float:
    """The mean next-token cross-entropy on a batch, by the forward pass alone (no gradients, no trace).

    batch = (ids, targets) as for ``gpt_loss_and_grads``. Used where a loss is read at moved parameters: a nudge,
    a finite difference, a step along a line (Part II, "The backward pass, output layer", and after).
    """
    ids, targets = _batch(batch)
    logits, _ = gpt_forward(params, ids, config)  # (B, T, V)
    return float(cross_entropy_forward(logits, targets, label_smoothing=label_smoothing, ignore_index=-1)[0])


def gpt_loss_and_grads(params: dict, batch, config: GPTConfig, label_smoothing: float = 0.0):
    """One forward and backward on a batch: mean next-token cross-entropy and every gradient.

    batch = (ids, targets), ids (B, T) or (T,), targets the same shape with -1 for ignored positions.
    Returns (loss, grads, trace): loss a float, grads keyed like params, trace the forward trace,
    then the loss's "p" (softmax of the logits) and "q" (smoothed targets), then the grad_trace.
    """
    ids, targets = _batch(batch)
    logits, cache = gpt_forward(params, ids, config)  # (B, T, V)
    loss, loss_cache = cross_entropy_forward(logits, targets, label_smoothing=label_smoothing, ignore_index=-1)
    dlogits = cross_entropy_backward(1.0, loss_cache)  # (p - q) / N on counted positions, 0 elsewhere
    grads, gtrace = gpt_backward(dlogits, cache)
    trace = dict(cache["trace"])
    trace.update({"p": loss_cache["p"], "q": loss_cache["q"]})
    trace.update(gtrace)
    return float(loss), grads, trace
