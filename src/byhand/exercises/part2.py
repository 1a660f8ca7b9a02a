"""Exercises of Part II (chapters 10–25). Each ``solve`` computes its answer and the known wrong answers with byhand.

Most exercises use the toy model's own numbers: the seeded weights of ``toy_params()`` and the trace of
``toy_loss_and_grads()``, computed once and cached here, so that ``check`` stays fast. The entries an exercise asks
about (a position, a column, a nudge) and its small hand-friendly inputs are named in ``INPUTS``, so that a chapter
shows them from the same place the checker reads them (``INPUTS["scores.1"]``), and no number is typed twice.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..activations import gelu_backward, gelu_forward, relu_forward
from ..attention import attention_forward, causal_mask
from ..embedding import embedding_backward, embedding_forward, positions_forward
from ..gpt import GPTConfig, gpt_loss, gpt_loss_and_grads, gpt_param_shapes
from ..gradcheck import numerical_grads
from ..layernorm import layernorm_backward, layernorm_forward
from ..linear import linear_backward, linear_forward
from ..loss import cross_entropy_backward, cross_entropy_forward
from ..mha import merge_heads, split_heads
from ..optim import AdamConfig, AdamWConfig, OptState, adam_step, adamw_step, init_state
from ..softmax import softmax_forward
from ..toy_gpt import TOY_CONFIG, VOCAB, detokenize, tokenize, toy_batch, toy_loss_and_grads, toy_params
from . import Solution, exercise

INPUTS = {
    "tokens.1": {"d_model": 8, "d_ff": 32},
    "tokens.2": {"vocab_size": 20},
    "embeddings.1": {"text": "I sat on", "t": 2, "j": 12},
    "embeddings.2": {"t": 2, "token": "like", "j": 12, "delta": 1.0, "query": 4},
    "qkv.1": {"head": 1, "t": 3, "c": 2},
    "qkv.2": {"t": 2, "j": 5, "col": 12, "delta": 0.5},
    "qkv.4": {"head": 0, "t": 3, "j": 1},  # tied keys: "transformers" (3) against "I" (1)
    "scores.1": {"head": 1, "t": 3, "s": 2},
    "scores.2": {"head": 0, "t": 3, "s": 1, "delta": 1.0},
    "heads.1": {"t": 4, "j": 0},
    "heads.2": {"t": 4, "j": 0, "shift": 1.0},
    "ffn.1": {"t": 3, "c": 1},
    "ffn.2": {"t": 2, "j": 7, "delta": 0.5},
    "ffn.4": {"t": 2, "j": 13, "scale": -2.0},
    "layernorm.1": {"t": 3, "j": 0},
    "layernorm.2": {"t": 4, "scale": 1e-3, "shift": 1.0},
    "loss.1": {"t": 4, "target": "<eos>"},
    "loss.2": {"t": 0, "delta": 0.2},
    "dlogits.1": {"t": 3, "target": "I"},
    "dlogits.2": {"entry": (4, 3), "delta": 0.25},  # not the entry of the chapter's nudge view, (0, 3)
    "dffn.1": {"t": 3, "c": 62},
    "dffn.2": {"t": 3, "shift": 1.0},
    "dattn.1": {"head": 0, "t": 2, "i": 1, "j": 2},
    "dattn.2": {"head": 0, "s": 1, "c": 0},
    "dembed.1": {"texts": ("I like transformers", "I sat on")},
    "dembed.2": {"token": "I", "j": 2},
    "gradcheck.1": {"analytic": 4e-4, "numeric": 5e-4, "floor": 1e-3},
    "gradcheck.2": {"name": "W_out", "index": (0, 3), "h_small": 1e-3, "h_large": 1e-2},
    "adamw.1": {"theta": 0.5, "g": -0.2, "lr": 1e-2, "weight_decay": 0.01},
    "adamw.2": {"g": 1e-5, "lr": 1e-2},
    "adamw.4": {"g1": 0.1, "g2": -0.05, "lr": 1e-2},
}

_A = "block0.attn."  # prefix of the attention's names in params, grads and trace


@functools.lru_cache(maxsize=None)
def _toy():
    """The toy's parameters, loss, gradients and trace, computed once. Callers must not modify them."""
    params = toy_params()
    loss, grads, trace = toy_loss_and_grads(params)
    return params, loss, grads, trace


def _nudged(name: str, index, delta: float) -> dict:
    """A copy of the toy's parameters with ``params[name][index] += delta`` (``index`` may be ``...``)."""
    params = {k: v.copy() for k, v in _toy()[0].items()}
    params[name][index] += delta
    return params


def _loss_of(params) -> float:
    """The toy's loss at ``params``: the forward pass only."""
    return gpt_loss(params, toy_batch(), TOY_CONFIG)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# --- 10: tokens, vocabulary and parameters -----------------------------------------------------------------------

def _count(config: GPTConfig) -> int:
    return sum(int(np.prod(s)) for s in gpt_param_shapes(config).values())


@exercise("tokens.1", "10_toy_model", "by hand", 2,
          "Count the parameters of the toy at width 8 (d_ff = 32), everything else unchanged", atol=0.5,
          precision=("dp", 0))
@functools.lru_cache(maxsize=None)
def _tokens_1():
    d = INPUTS["tokens.1"]
    c = GPTConfig(vocab_size=TOY_CONFIG.vocab_size, context=TOY_CONFIG.context, d_model=d["d_model"],
                  n_heads=TOY_CONFIG.n_heads, n_layers=TOY_CONFIG.n_layers, d_ff=d["d_ff"], tie_weights=False)
    total = _count(c)
    tied = _count(GPTConfig(c.vocab_size, c.context, c.d_model, c.n_heads, c.n_layers, c.d_ff, tie_weights=True))
    return Solution(total, {
        "that counts no W_out: the toy keeps its own output matrix, d_model × V, beside E.": tied,
        "that leaves out the four attention biases b_Q, b_K, b_V, b_O, d_model entries each.": total - 4 * c.d_model,
        "that leaves out the three layer norms, each with a γ and a β of d_model entries.": total - 6 * c.d_model,
        "that is 40 short: the position table P (context × d_model) is missing, or else the feed-forward biases "
        "b_1 (d_ff) and b_2 (d_model), which at this width also hold 40 together.": total - c.context * c.d_model})


@exercise("tokens.2", "10_toy_model", "predict", 1,
          "Predict the loss of an evenly spread guess over a vocabulary of 20 tokens", atol=0.02)
@functools.lru_cache(maxsize=None)
def _tokens_2():
    V = INPUTS["tokens.2"]["vocab_size"]
    ids, targets = toy_batch()
    loss, _ = cross_entropy_forward(np.zeros((ids.size, V)), targets)  # equal logits: p = 1/V everywhere
    return Solution(loss, {
        "that is the loss for ten tokens: with 20 each gets 1/20, and −log(1/20) = log 20.":
            math.log(TOY_CONFIG.vocab_size),
        "doubling the vocabulary adds log 2 to this loss; it does not double it.": 2 * math.log(TOY_CONFIG.vocab_size),
        "that uses log base 10; the book's logs are natural (base e).": math.log10(V)})


def _next_targets(ids):
    return toy_batch(" ".join(detokenize(ids)[1:-1]))[1]


@exercise("tokens.3", "10_toy_model", "code", 1, "Complete next_token_targets: the target of every position",
          atol=1e-12)
def _tokens_3():
    cases = tuple((tokenize(s),) for s in ("I like transformers", "the cat sat", "mat", "on the mat"))

    def shifted_wrong_way(ids):
        return np.append(-1, ids[:-1])

    def no_marker(ids):
        return np.asarray(ids)[1:]

    def rolled(ids):
        return np.roll(ids, -1)

    def same(ids):
        return np.asarray(ids).copy()

    return Solution(_next_targets, {
        "that shifts the wrong way: the target at position t is the token at t + 1.": shifted_wrong_way,
        "every position needs an entry: mark the last one, which has no next token, with −1.": no_marker,
        "np.roll wraps <bos> round to the last position; that position has no next token, so its target is −1.":
            rolled,
        "the target is the next token, not the token itself.": same}, cases)


# --- 11: embeddings and positions --------------------------------------------------------------------------------

@exercise("embeddings.1", "11_embeddings", "by hand", 1, "x_0[2, 12] for the sentence 'I sat on', from E and P",
          atol=0.011, precision=("dp", 2))
@functools.lru_cache(maxsize=None)
def _embeddings_1():
    d = INPUTS["embeddings.1"]
    params = _toy()[0]
    E, P = params["E"], params["P"]
    ids = tokenize(d["text"])
    t, j = d["t"], d["j"]
    x0 = embedding_forward(ids, E)[0] + positions_forward(ids.size, P)[0]  # (T, d_model)
    toy_ids = toy_batch()[0]
    return Solution(x0[t, j], {
        f"row {t} of E is the token with id {t}; look up the id of the token at position {t} first.": E[t, j] + P[t, j],
        f"that is the token's row alone: add row {t} of P, the position.": E[ids[t], j],
        f"that is the entry of 'I like transformers', whose position {t} holds another token.":
            E[toy_ids[t], j] + P[t, j]})


@exercise("embeddings.2", "11_embeddings", "predict", 2,
          "Predict how far position 4's attention moves when P[2, 12], not E[like, 12], is nudged by 1",
          atol=1e-3)
@functools.lru_cache(maxsize=None)
def _embeddings_2():
    d = INPUTS["embeddings.2"]
    trace = _toy()[3]
    before = trace[_A + "A"][:, d["query"]]  # (h, T) the attention rows of the query, both heads
    _, _, after = toy_loss_and_grads(_nudged("P", (d["t"], d["j"]), d["delta"]))
    shift = float(np.abs(after[_A + "A"][:, d["query"]] - before).max())
    return Solution(shift, {
        "a position row is added into x_0 just as a token row is, so it moves attention too.": 0.0,
        "that is the size of the nudge in x_0; the attention weights, a softmax of it, move by less.": d["delta"]})


def _embed_ref(ids, E, P):
    return embedding_forward(ids, E)[0] + positions_forward(len(ids), P)[0]


@exercise("embeddings.3", "11_embeddings", "code", 1, "Complete embed: x_0 = E[ids] + P[:T]", atol=1e-12)
def _embeddings_3():
    params = _toy()[0]
    E, P = params["E"].copy(), params["P"].copy()
    cases = ((toy_batch()[0], E, P), (tokenize("the cat sat"), E, P), (np.array([0, 2, 2, 3]), E, P))

    def no_positions(ids, E, P):
        return E[ids]

    def rows_by_position(ids, E, P):
        return E[:len(ids)] + P[:len(ids)]

    return Solution(_embed_ref, {
        "the token rows are only half of x_0: add the position rows P[:T].": no_positions,
        "E is indexed by token id, not by position: row t of x_0 reads E[ids[t]].": rows_by_position}, cases)


# --- 12: queries, keys and values --------------------------------------------------------------------------------

@exercise("qkv.1", "12_qkv", "by hand", 1, "Which column of K holds entry (3, 2) of head 1's keys?", atol=0.1,
          precision=("dp", 0))
@functools.lru_cache(maxsize=None)
def _qkv_1():
    d = INPUTS["qkv.1"]
    K = _toy()[3][_A + "K"]  # (h, T, d_k)
    d_k = K.shape[-1]
    K_full = merge_heads(K)  # (T, d_model)
    cols = [c for c in range(K_full.shape[1]) if K_full[d["t"], c] == K[d["head"], d["t"], d["c"]]]
    assert cols == [d["head"] * d_k + d["c"]]  # the entry is found in exactly one column
    return Solution(cols[0], {
        f"that is the column inside the head; head {d['head']} starts at column {d['head'] * d_k}.": d["c"],
        f"the row stays row {d['t']}; the head picks the block of columns, 8 per head.": d["t"] * d_k + d["c"],
        "heads own blocks of adjacent columns, not every second column.": d["c"] * K.shape[0] + d["head"]})


@exercise("qkv.2", "12_qkv", "predict", 2,
          "Predict how far Q[2, 12] moves when x̂[2, 5] is nudged by 0.5", atol=3e-3)
@functools.lru_cache(maxsize=None)
def _qkv_2():
    d = INPUTS["qkv.2"]
    params, _, _, trace = _toy()
    x_hat, W, b = trace["block0.ln1"], params[_A + "W_q"], params[_A + "b_q"]
    x2 = x_hat.copy()
    x2[d["t"], d["j"]] += d["delta"]
    before, after = linear_forward(x_hat, W, b)[0], linear_forward(x2, W, b)[0]  # (T, d_model) each
    change = after[d["t"], d["col"]] - before[d["t"], d["col"]]
    return Solution(change, {
        f"that uses W_Q[{d['col']}, {d['j']}]; input {d['j']} reaches output {d['col']} through "
        f"W_Q[{d['j']}, {d['col']}].": d["delta"] * W[d["col"], d["j"]],
        "that is the new Q entry; the question asks how far it moves.": after[d["t"], d["col"]],
        "the nudge is multiplied by the weight it passes through.": d["delta"]})


@exercise("qkv.3", "12_qkv", "code", 2, "Complete split_heads: (T, d_model) to (h, T, d_k)", atol=1e-12)
def _qkv_3():
    Q = merge_heads(_toy()[3][_A + "Q"]).copy()  # (T, d_model)
    r = _rng(12)
    cases = ((Q, 2), (r.normal(size=(3, 12)), 3), (r.normal(size=(4, 8)), 4))

    def plain_reshape(M, n_heads):
        T, d = M.shape
        return M.reshape(n_heads, T, d // n_heads)

    def interleaved(M, n_heads):
        T, d = M.shape
        return M.reshape(T, d // n_heads, n_heads).transpose(2, 0, 1)

    return Solution(split_heads, {
        "a plain reshape to (h, T, d_k) mixes rows: cut each row into h blocks of d_k first, then move the head "
        "axis to the front.": plain_reshape,
        "head j owns a block of d_k adjacent columns, j*d_k to (j + 1)*d_k − 1, not every h-th column.": interleaved},
        cases)


@exercise("qkv.4", "12_qkv", "by hand", 2,
          "Tied, by how much at most could transformers score I above itself in head 0?", precision=("dp", 2))
@functools.lru_cache(maxsize=None)
def _qkv_4():
    d = INPUTS["qkv.4"]
    Q = _toy()[3][_A + "Q"][d["head"]]  # (T, d_k): head 0's queries, which are also its keys when tied
    a, b = (round(float(Q[i] @ Q[i]), 2) for i in (d["t"], d["j"]))  # |q_t|^2, |q_j|^2 as printed
    bound = math.sqrt(a * b)  # Cauchy-Schwarz: q_t . q_j <= |q_t| |q_j|
    actual = float(Q[d["t"]] @ Q[d["j"]] - Q[d["t"]] @ Q[d["t"]])  # what this draw's tied weights give
    return Solution(bound - a, {  # the most the score for j can exceed the score for itself, |q_t|^2
        "that compares the lengths ‖q₁‖ and ‖q₃‖; compare the scores instead: at most ‖q₃‖ ‖q₁‖ for I, "
        "‖q₃‖² for itself.": math.sqrt(b) - math.sqrt(a),
        "that multiplies the squared lengths; the bound is the product of the lengths, the square root of that.":
            a * b - a,
        "that is the most it could score I; the task asks how far that lies above its score for itself, ‖q₃‖².":
            bound,
        "that is what the tied weights of this draw actually give; the task asks what the bound allows, and the "
        "bound says how far the score could go, not where it lands.": actual})


# --- 13: scores, mask, softmax -----------------------------------------------------------------------------------

@exercise("scores.1", "13_scores", "by hand", 2, "A[3, 2] of head 1 if the causal mask were left out", atol=1e-3)
@functools.lru_cache(maxsize=None)
def _scores_1():
    d = INPUTS["scores.1"]
    trace = _toy()[3]
    row = trace[_A + "S"][d["head"], d["t"]]  # (T,) the scaled scores of the query, masked key included
    unmasked = softmax_forward(row)[0]
    masked = trace[_A + "A"][d["head"], d["t"]]
    return Solution(unmasked[d["s"]], {
        "that is the weight with the mask; without it, the key after the query joins the sum.": masked[d["s"]],
        "S is already divided by √d_k; dividing again flattens the row.":
            softmax_forward(row / math.sqrt(trace[_A + "Q"].shape[-1]))[0][d["s"]]})


@exercise("scores.2", "13_scores", "predict", 2, "Predict A[3, 1] of head 0 after adding 1 to its score", atol=2e-3)
@functools.lru_cache(maxsize=None)
def _scores_2():
    d = INPUTS["scores.2"]
    trace = _toy()[3]
    S = trace[_A + "S"][d["head"]].copy()  # (T, T)
    mask = causal_mask(S.shape[0])
    S[d["t"], d["s"]] += d["delta"]
    after = softmax_forward(S, mask=mask)[0][d["t"], d["s"]]
    before = trace[_A + "A"][d["head"], d["t"], d["s"]]
    return Solution(after, {
        "that multiplies the weight by e but forgets to renormalise: the row must still sum to 1.":
            before * math.exp(d["delta"]),
        "raising a score raises its weight; that is the weight before the nudge.": before,
        "that adds Δ to the weight itself; Δ is added to the score, inside the exponential.": before + d["delta"]})


def _weights_ref(Q, K):
    _, cache = attention_forward(Q, K, K, causal_mask(Q.shape[0]))
    return cache["A"]


@exercise("scores.3", "13_scores", "find the bug", 2,
          "Find the bug: attention weights that let a query see the keys after it", atol=1e-12)
def _scores_3():
    Q, K = _toy()[3][_A + "Q"], _toy()[3][_A + "K"]
    r = _rng(13)
    cases = ((Q[0].copy(), K[0].copy()), (Q[1].copy(), K[1].copy()), (r.normal(size=(4, 3)), r.normal(size=(4, 3))))

    def softmax_rows(S):
        e = np.exp(S - S.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def no_mask(Q, K):
        return softmax_rows(Q @ K.T / np.sqrt(K.shape[-1]))

    def zeroed_after(Q, K):
        return np.tril(no_mask(Q, K))

    def upper(Q, K):
        S = Q @ K.T / np.sqrt(K.shape[-1])
        return softmax_rows(np.where(np.triu(np.ones(S.shape, dtype=bool)), S, -np.inf))

    def unscaled(Q, K):
        S = Q @ K.T
        return softmax_rows(np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf))

    return Solution(_weights_ref, {
        "row t of these weights gives weight to keys after t: something the chapter does to the scores is missing.":
            no_mask,
        "zeroing the future weights after the softmax leaves rows that no longer sum to 1: hide those keys "
        "before it.": zeroed_after,
        "that hides the wrong triangle: query t may read keys 0 to t, on and below the diagonal.": upper,
        "the scores are divided by √d_k before the softmax.": unscaled}, cases)


# --- 14: multi-head and output projection ------------------------------------------------------------------------

@exercise("heads.1", "14_multi_head", "by hand", 1, "out[4, 0] with head 1 switched off", atol=5e-4)
@functools.lru_cache(maxsize=None)
def _heads_1():
    d = INPUTS["heads.1"]
    params, _, _, trace = _toy()
    O_heads = trace[_A + "O_heads"].copy()  # (h, T, d_k)
    O_heads[1] = 0.0  # head 1 off
    out = linear_forward(merge_heads(O_heads), params[_A + "W_o"], params[_A + "b_o"])[0]
    t, j = d["t"], d["j"]
    d_k = O_heads.shape[-1]
    head1 = trace[_A + "O_heads"][1, t] @ params[_A + "W_o"][d_k:, j]
    return Solution(out[t, j], {
        "that is out[4, 0] with both heads on.": trace[_A + "out"][t, j],
        "b_O is added whatever the heads do: keep it.": out[t, j] - params[_A + "b_o"][j],
        "that switches head 0 off instead of head 1.": head1 + params[_A + "b_o"][j]})


@exercise("heads.2", "14_multi_head", "predict", 2,
          "Predict how far out[4, 0] moves when every entry of b_V goes up by 1", atol=0.01)
@functools.lru_cache(maxsize=None)
def _heads_2():
    d = INPUTS["heads.2"]
    params, _, _, trace = _toy()
    _, _, after = toy_loss_and_grads(_nudged(_A + "b_v", ..., d["shift"]))
    t, j = d["t"], d["j"]
    change = after[_A + "out"][t, j] - trace[_A + "out"][t, j]
    return Solution(change, {
        "every entry of O goes up by 1, but out mixes the 16 columns of O through W_O.": d["shift"],
        f"out[{t}, {j}] reads column {j} of W_O; that used row {j}.": d["shift"] * params[_A + "W_o"][j].sum(),
        "the values move, and with them every output: the weights of each row sum to 1, so nothing cancels.": 0.0})


def _attn_out_ref(A, V, W_o, b_o):
    O_heads = np.matmul(A, V)  # (h, T, d_k)
    return linear_forward(merge_heads(O_heads), W_o, b_o)[0]


@exercise("heads.3", "14_multi_head", "code", 2,
          "Complete attention_output: weights times values, heads side by side, then W_O and b_O", atol=1e-12)
def _heads_3():
    params, _, _, trace = _toy()
    r = _rng(14)
    A2 = softmax_forward(r.normal(size=(4, 3, 3)), mask=causal_mask(3))[0]
    cases = ((trace[_A + "A"].copy(), trace[_A + "V"].copy(), params[_A + "W_o"].copy(), params[_A + "b_o"].copy()),
             (A2, r.normal(size=(4, 3, 2)), r.normal(size=(8, 8)), r.normal(size=8)),
             (softmax_forward(r.normal(size=(2, 4, 4)))[0], r.normal(size=(2, 4, 3)), r.normal(size=(6, 6)),
              r.normal(size=6)))

    def plain_reshape(A, V, W_o, b_o):
        O = A @ V
        return O.reshape(O.shape[1], -1) @ W_o + b_o

    def no_bias(A, V, W_o, b_o):
        return merge_heads(A @ V) @ W_o

    def transposed(A, V, W_o, b_o):
        return merge_heads(A @ V) @ W_o.T + b_o

    return Solution(_attn_out_ref, {
        "a plain reshape of (h, T, d_k) to (T, h·d_k) mixes positions: put the heads side by side in each row.":
            plain_reshape,
        "the projection adds the bias b_O.": no_bias,
        "out = O W_O: the forward pass uses W_O as it is.": transposed}, cases)


# --- 15: feed-forward with GELU ----------------------------------------------------------------------------------

@exercise("ffn.1", "15_feed_forward", "by hand", 2, "GELU of ã[3, 1], step by step in the tanh form", atol=5e-5,
          precision=("dp", 5))
@functools.lru_cache(maxsize=None)
def _ffn_1():
    d = INPUTS["ffn.1"]
    pre = _toy()[3]["block0.ffn.pre"]  # (T, d_ff)
    x = np.array([pre[d["t"], d["c"]]])
    y = gelu_forward(x, approximate="tanh")[0][0]
    no_cube = 0.5 * x[0] * (1 + math.tanh(math.sqrt(2 / math.pi) * x[0]))
    worked = gelu_forward(pre[2:3, 5], approximate="tanh")[0][0]  # the chapter's worked entry, ã[2, 5]
    return Solution(y, {
        "that is GELU(ã[2, 5]), the chapter's worked entry, which lands within 2e-4 of this one: GELU is not "
        "monotone below about −0.75, so two inputs can share nearly one output. Work ã[3, 1] through.": worked,
        "that is ReLU, which cuts a negative input to 0; GELU lets a little through.": relu_forward(x)[0][0],
        "that forgets the ½ in front.": 2 * y,
        "that leaves out the cubic term κ x³ inside the tanh.": no_cube})


@exercise("ffn.2", "15_feed_forward", "predict", 2,
          "Predict how many of the 80 entries of f change when one entry of its input moves", atol=0.1,
          precision=("dp", 0))
@functools.lru_cache(maxsize=None)
def _ffn_2():
    d = INPUTS["ffn.2"]
    params, _, _, trace = _toy()
    p = "block0.ffn."
    x = trace["block0.ln2"]

    def ffn(x):
        h = linear_forward(x, params[p + "W_1"], params[p + "b_1"])[0]
        return linear_forward(gelu_forward(h)[0], params[p + "W_2"], params[p + "b_2"])[0]

    x2 = x.copy()
    x2[d["t"], d["j"]] += d["delta"]
    changed = int(np.count_nonzero(ffn(x2) != ffn(x)))
    return Solution(changed, {
        "one input entry reaches every column of its own row, through W_1, GELU and W_2.": 1,
        "no number of one row meets a number of another row in this layer: the other rows stay.": x.size})


def _ffn_ref(x, W_1, b_1, W_2, b_2):
    h = linear_forward(x, W_1, b_1)[0]
    return linear_forward(gelu_forward(h, approximate="tanh")[0], W_2, b_2)[0]


@exercise("ffn.3", "15_feed_forward", "code", 2, "Complete ffn: widen, GELU (tanh form), narrow", atol=1e-12)
def _ffn_3():
    params, _, _, trace = _toy()
    p = "block0.ffn."
    r = _rng(15)
    cases = ((trace["block0.ln2"].copy(), params[p + "W_1"].copy(), params[p + "b_1"].copy(),
              params[p + "W_2"].copy(), params[p + "b_2"].copy()),
             (r.normal(size=(3, 4)), r.normal(size=(4, 16)), r.normal(size=16), r.normal(size=(16, 4)),
              r.normal(size=4)),
             (r.normal(size=(2, 3)), r.normal(size=(3, 5)), r.normal(size=5), r.normal(size=(5, 3)), r.normal(size=3)))

    def relu(x, W_1, b_1, W_2, b_2):
        return np.maximum(x @ W_1 + b_1, 0) @ W_2 + b_2

    def erf_form(x, W_1, b_1, W_2, b_2):
        return gelu_forward(x @ W_1 + b_1, approximate="erf")[0] @ W_2 + b_2

    def gelu_twice(x, W_1, b_1, W_2, b_2):
        return gelu_forward(gelu_forward(x @ W_1 + b_1)[0] @ W_2 + b_2)[0]

    return Solution(_ffn_ref, {
        "that is ReLU; the toy, like GPT-2, uses GELU.": relu,
        "that is the exact erf form of GELU; GPT-2 and this book use the tanh form.": erf_form,
        "GELU acts between the two layers only, not on the output.": gelu_twice}, cases)


@exercise("ffn.4", "15_feed_forward", "predict", 2,
          "Predict an output of the layer without GELU when its input row is scaled by −2", atol=5e-4)
@functools.lru_cache(maxsize=None)
def _ffn_4():
    d = INPUTS["ffn.4"]
    params, _, _, trace = _toy()
    p = "block0.ffn."
    u = trace["block0.ln2"][d["t"]]  # (d_model,)

    def without_gelu(x):
        return linear_forward(linear_forward(x, params[p + "W_1"], params[p + "b_1"])[0], params[p + "W_2"],
                              params[p + "b_2"])[0][d["j"]]

    def with_gelu(x):
        h = linear_forward(x, params[p + "W_1"], params[p + "b_1"])[0]
        return linear_forward(gelu_forward(h)[0], params[p + "W_2"], params[p + "b_2"])[0][d["j"]]

    at0, at1 = without_gelu(np.zeros_like(u)), without_gelu(u)
    return Solution(without_gelu(d["scale"] * u), {
        "that scales the whole output, constant and all: only the change from the value at 0 scales with the input.":
            d["scale"] * at1,
        "that is the change scaled by +2: a factor of −2 also reverses its direction.":
            at0 - d["scale"] * (at1 - at0),
        "that uses the column with GELU; the question is about the layer without it.":
            with_gelu(np.zeros_like(u)) + d["scale"] * (with_gelu(u) - with_gelu(np.zeros_like(u)))})


# --- 16: layer norm and residuals --------------------------------------------------------------------------------

@exercise("layernorm.1", "16_layer_norm", "by hand", 1,
          "LN_2's output at row 3, column 0, from r_1 and the row's mean and std", atol=2e-3)
@functools.lru_cache(maxsize=None)
def _layernorm_1():
    d = INPUTS["layernorm.1"]
    params, _, _, trace = _toy()
    r1 = trace["block0.res1"]
    y = layernorm_forward(r1, params["block0.ln2.gamma"], params["block0.ln2.beta"], TOY_CONFIG.ln_eps)[0]
    x, mu, sd = r1[d["t"], d["j"]], r1[d["t"]].mean(), r1[d["t"]].std()
    return Solution(y[d["t"], d["j"]], {
        "subtract the row's mean first.": x / sd,
        "divide by the standard deviation, the square root of the variance.": (x - mu) / sd**2,
        "after subtracting the mean, divide by the standard deviation.": x - mu})


@exercise("layernorm.2", "16_layer_norm", "predict", 3,
          "Predict the factor by which LN_2 shrinks row 4 when the row is scaled by 0.001", rtol=0.02, atol=1e-4)
@functools.lru_cache(maxsize=None)
def _layernorm_2():
    d = INPUTS["layernorm.2"]
    params, _, _, trace = _toy()
    x = trace["block0.res1"][d["t"]]
    g, b, eps = params["block0.ln2.gamma"], params["block0.ln2.beta"], TOY_CONFIG.ln_eps
    y = layernorm_forward(x, g, b, eps)[0]
    y_small = layernorm_forward(d["scale"] * x + d["shift"], g, b, eps)[0]
    factor = y_small / y  # (d_model,) the same in every entry (gamma = 1, beta = 0)
    assert np.allclose(factor, factor[0], rtol=1e-9)
    return Solution(factor[0], {
        "layer norm ignores a row's scale only while α²σ² is large beside ε; here it is not.": 1.0,
        "the division by √(α²σ² + ε) still undoes most of the scaling: the output does not shrink by α.":
            d["scale"]})


def _ln_ref(x, gamma, beta, eps):
    return layernorm_forward(x, gamma, beta, eps)[0]


@exercise("layernorm.3", "16_layer_norm", "find the bug", 2,
          "Find the bug: a layer norm whose rows do not come out with variance 1", atol=1e-9)
def _layernorm_3():
    params, _, _, trace = _toy()
    r = _rng(16)
    cases = ((trace["block0.res1"].copy(), params["block0.ln2.gamma"].copy(), params["block0.ln2.beta"].copy(),
              TOY_CONFIG.ln_eps),
             (r.normal(size=(3, 6)) * 3 + 1, r.normal(size=6), r.normal(size=6), 1e-5),
             (r.normal(size=(2, 5)) * 0.1, r.normal(size=5), r.normal(size=5), 1e-3))

    def unbiased(x, gamma, beta, eps):
        mu = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, ddof=1, keepdims=True)
        return gamma * (x - mu) / np.sqrt(var + eps) + beta

    def eps_outside(x, gamma, beta, eps):
        mu = x.mean(axis=-1, keepdims=True)
        return gamma * (x - mu) / (x.std(axis=-1, keepdims=True) + eps) + beta

    def no_affine(x, gamma, beta, eps):
        mu = x.mean(axis=-1, keepdims=True)
        return (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)

    return Solution(_ln_ref, {
        "the rows come out with a variance a little below 1, the same on every row: compare how the variance is "
        "computed with the chapter's formula.": unbiased,
        "ε goes inside the square root, with the variance.": eps_outside,
        "after normalising, scale by γ and shift by β.": no_affine}, cases)


# --- 17: logits and loss -----------------------------------------------------------------------------------------

@exercise("loss.1", "17_logits_loss", "by hand", 2, "The mean loss if position 4 were scored too, with target <eos>",
          atol=2e-3)
@functools.lru_cache(maxsize=None)
def _loss_1():
    d = INPUTS["loss.1"]
    _, loss, _, trace = _toy()
    ids, targets = toy_batch()
    t2 = targets.copy()
    t2[d["t"]] = VOCAB.index(d["target"])
    new = cross_entropy_forward(trace["logits"], t2)[0]
    total = loss * int((targets >= 0).sum())
    extra = -math.log(trace["p"][d["t"], t2[d["t"]]])
    return Solution(new, {
        "five positions are scored now: divide the sum by 5.": (total + extra) / 4,
        "that is the sum of the five terms; the loss is their mean.": total + extra,
        "that is the loss of the four scored positions; add position 4's term.": loss})


@exercise("loss.2", "17_logits_loss", "predict", 2,
          "Predict the change of the loss when the target's logit at position 0 goes up by 0.2", rtol=0.05)
@functools.lru_cache(maxsize=None)
def _loss_2():
    d = INPUTS["loss.2"]
    _, loss, _, trace = _toy()
    ids, targets = toy_batch()
    Z = trace["logits"].copy()
    t, y = d["t"], targets[d["t"]]
    Z[t, y] += d["delta"]
    change = cross_entropy_forward(Z, targets)[0] - loss
    p, N = trace["p"][t, y], int((targets >= 0).sum())
    return Solution(change, {
        "raising the target's logit lowers the loss: the slope (p − 1)/N is negative.": -change,
        "at the target the slope is p − 1, not p.": p * d["delta"] / N,
        "the loss is a mean over 4 positions: divide the slope by N = 4.": (p - 1) * d["delta"]})


def _ce_ref(Z, targets):
    return cross_entropy_forward(Z, targets)[0]


@exercise("loss.3", "17_logits_loss", "code", 2,
          "Complete mean_cross_entropy: stable softmax, −log p of the targets, mean over the scored positions",
          atol=1e-9)
def _loss_3():
    trace = _toy()[3]
    r = _rng(17)
    cases = ((trace["logits"].copy(), toy_batch()[1]), (r.normal(size=(3, 6)), np.array([2, -1, 5])),
             (np.array([[1000.0, 0.0, -1000.0], [0.0, 500.0, 999.0]]), np.array([0, 2])))

    def logp(Z):
        z = Z - Z.max(axis=-1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

    def total(Z, targets):
        keep = targets >= 0
        return -logp(Z)[keep, targets[keep]].sum()

    def with_ignored(Z, targets):
        return -logp(Z)[np.arange(len(targets)), targets].mean()

    def log10(Z, targets):
        keep = targets >= 0
        return -(logp(Z)[keep, targets[keep]] / math.log(10)).mean()

    return Solution(_ce_ref, {
        "that is the sum; the loss is the mean over the scored positions.": total,
        "a target of −1 means 'not scored': leave that position out, rather than reading the last column.":
            with_ignored,
        "that uses log base 10; the loss uses natural logs.": log10}, cases)


# --- 20: backward through the loss and the output layer ----------------------------------------------------------

@exercise("dlogits.1", "20_backward_output", "by hand", 1, "G[3, 2] if the target at position 3 were 'I'",
          atol=5e-4)
@functools.lru_cache(maxsize=None)
def _dlogits_1():
    d = INPUTS["dlogits.1"]
    trace = _toy()[3]
    ids, targets = toy_batch()
    t2 = targets.copy()
    t, v = d["t"], VOCAB.index(d["target"])
    t2[t] = v
    _, cache = cross_entropy_forward(trace["logits"], t2)
    G = cross_entropy_backward(1.0, cache)  # (T, V)
    p, N = trace["p"][t, v], cache["n"]
    return Solution(G[t, v], {
        "'I' is the target now: subtract 1 at its column.": p / N,
        "the loss is a mean over 4 positions: divide by N = 4.": p - 1,
        "the gradient is p − y, not y − p.": (1 - p) / N})


@exercise("dlogits.2", "20_backward_output", "predict", 2,
          "Predict the change of the loss when W_out[4, 3] goes up by 0.25", rtol=0.03)
@functools.lru_cache(maxsize=None)
def _dlogits_2():
    d = INPUTS["dlogits.2"]
    _, loss, grads, _ = _toy()
    change = _loss_of(_nudged("W_out", d["entry"], d["delta"])) - loss
    g = grads["W_out"][d["entry"]]
    return Solution(change, {
        "the loss moves along the gradient: the change has the sign of g·Δ.": -g * d["delta"],
        "that is the gradient itself; multiply it by the size of the nudge.": g,
        "G already carries the 1/N of the mean: do not divide again.": g * d["delta"] / 4})


def _dlogits_ref(p, targets):
    _, cache = cross_entropy_forward(np.log(p), targets)  # softmax(log p) = p, since each row of p sums to 1
    return cross_entropy_backward(1.0, cache)


@exercise("dlogits.3", "20_backward_output", "code", 2,
          "Complete dlogits: G = (p − Y)/N, with a zero row for the ignored position", atol=1e-12)
def _dlogits_3():
    trace = _toy()[3]
    r = _rng(20)
    p2 = softmax_forward(r.normal(size=(3, 6)))[0]
    cases = ((trace["p"].copy(), toy_batch()[1]), (p2, np.array([1, -1, 0])),
             (softmax_forward(r.normal(size=(4, 3)))[0], np.array([-1, 2, 2, 0])))

    def onehot(p, targets):
        Y = np.zeros_like(p)
        keep = targets >= 0
        Y[np.flatnonzero(keep), targets[keep]] = 1.0
        return Y, keep

    def no_mean(p, targets):
        Y, keep = onehot(p, targets)
        return np.where(keep[:, None], p - Y, 0.0)

    def over_T(p, targets):
        Y, keep = onehot(p, targets)
        return np.where(keep[:, None], p - Y, 0.0) / len(targets)

    def ignored_kept(p, targets):
        Y, keep = onehot(p, targets)
        return (p - Y) / keep.sum()

    def flipped(p, targets):
        Y, keep = onehot(p, targets)
        return np.where(keep[:, None], Y - p, 0.0) / keep.sum()

    return Solution(_dlogits_ref, {
        "the loss is a mean: divide by N, the number of scored positions.": no_mean,
        "N counts the scored positions only, not every position.": over_T,
        "the ignored position is not in the loss, so its whole row of G is 0.": ignored_kept,
        "the gradient is p − Y, not Y − p.": flipped}, cases)


# --- 21: backward through the feed-forward layer and layer norm --------------------------------------------------

@exercise("dffn.1", "21_backward_ffn_layernorm", "by hand", 2, "dã[3, 62] = da · GELU'(ã), from the formula",
          rtol=2e-3, atol=1e-7)
@functools.lru_cache(maxsize=None)
def _dffn_1():
    d = INPUTS["dffn.1"]
    trace = _toy()[3]
    t, c = d["t"], d["c"]
    x, da = trace["block0.ffn.pre"][t, c], trace["dblock0.ffn.gelu"][t, c]
    _, cache = gelu_forward(np.array([x]))
    dh = gelu_backward(np.array([da]), cache)[0]
    gate = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return Solution(dh, {
        "that is GELU'(ã) alone, the slope; the chain rule multiplies it by da, the gradient arriving from above.":
            dh / da,
        "that is GELU's value times da; the chain rule needs its slope, GELU'(ã).":
            da * gelu_forward(np.array([x]))[0][0],
        "that is only the gate ½(1 + tanh ξ); GELU' has a second term, from the gate's own slope.": da * gate,
        "that passes da straight through, as ReLU does for a positive input; GELU's slope is not 1.": da,
        "that is ReLU's slope, 0 for a negative input; GELU's is not 0 there.": 0.0})


@exercise("dffn.2", "21_backward_ffn_layernorm", "predict", 2,
          "Predict how far the loss moves when 1 is added to every entry of row 3 of r_2", atol=1e-3)
@functools.lru_cache(maxsize=None)
def _dffn_2():
    d = INPUTS["dffn.2"]
    params, loss, _, trace = _toy()
    r2 = trace["block0.res2"].copy()
    r2[d["t"]] += d["shift"]
    H = layernorm_forward(r2, params["ln_f.gamma"], params["ln_f.beta"], TOY_CONFIG.ln_eps)[0]
    change = cross_entropy_forward(H @ params["W_out"], toy_batch()[1])[0] - loss
    assert abs(change) < 1e-12  # zero up to rounding: the final layer norm removes the shift
    return Solution(0.0, {
        "that passes dH straight through; the final layer norm subtracts the row's mean, and the shift with it.":
            d["shift"] * trace["dln_f"][d["t"]].sum()})


def _ln_back_ref(dy, x, gamma, eps):
    _, cache = layernorm_forward(x, gamma, np.zeros_like(gamma), eps)
    return layernorm_backward(dy, cache)[0]


@exercise("dffn.3", "21_backward_ffn_layernorm", "code", 3,
          "Complete layernorm_dx: the gradient at a layer norm's input, all three paths", atol=1e-12)
def _dffn_3():
    params, _, _, trace = _toy()
    r = _rng(21)
    cases = ((trace["dln_f"].copy(), trace["block0.res2"].copy(), params["ln_f.gamma"].copy(), TOY_CONFIG.ln_eps),
             (r.normal(size=(3, 6)), r.normal(size=(3, 6)) * 2 + 1, r.normal(size=6), 1e-5),
             (r.normal(size=(2, 4)), r.normal(size=(2, 4)) * 0.5, r.normal(size=4), 1e-5))

    def parts(dy, x, gamma, eps):
        xhat = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
        return xhat, dy * gamma, 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)

    def no_var_path(dy, x, gamma, eps):
        xhat, dxhat, rstd = parts(dy, x, gamma, eps)
        return rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True))

    def direct_only(dy, x, gamma, eps):
        xhat, dxhat, rstd = parts(dy, x, gamma, eps)
        return rstd * dxhat

    def no_gamma(dy, x, gamma, eps):
        xhat, _, rstd = parts(dy, x, gamma, eps)
        return rstd * (dy - dy.mean(axis=-1, keepdims=True) - xhat * (dy * xhat).mean(axis=-1, keepdims=True))

    return Solution(_ln_back_ref, {
        "the variance depends on every input too: subtract x̂ times the mean of dx̂ ⊙ x̂.": no_var_path,
        "the mean and the variance depend on every input of the row: the gradient has two more terms.": direct_only,
        "y = γ ⊙ x̂ + β: the gradient reaching x̂ is dy ⊙ γ.": no_gamma}, cases)


# --- 22: backward through attention ------------------------------------------------------------------------------

@exercise("dattn.1", "22_backward_attention", "by hand", 1, "J[1, 2] of the softmax Jacobian of query 2, head 0",
          atol=5e-4)
@functools.lru_cache(maxsize=None)
def _dattn_1():
    d = INPUTS["dattn.1"]
    a = _toy()[3][_A + "A"][d["head"], d["t"]]  # (T,) the attention row
    J = np.diag(a) - np.outer(a, a)  # (T, T)
    i, j = d["i"], d["j"]
    return Solution(J[i, j], {
        "off the diagonal the entry is −a_i a_j: mind the sign.": a[i] * a[j],
        "off the diagonal the entry is not 0: every weight of a row moves when one score does.": 0.0,
        "that is a diagonal entry's form, a_i(1 − a_i); off the diagonal it is −a_i a_j.": a[i] * (1 - a[i])})


@exercise("dattn.2", "22_backward_attention", "by hand", 2, "dV[0, 1, 0] of head 0: the queries that read key 1",
          atol=1e-3)
@functools.lru_cache(maxsize=None)
def _dattn_2():
    d = INPUTS["dattn.2"]
    trace = _toy()[3]
    hd, s, c = d["head"], d["s"], d["c"]
    A, dO = trace[_A + "A"][hd], trace["d" + _A + "O_heads"][hd]  # (T, T), (T, d_k)
    dV = trace["d" + _A + "V"][hd]
    return Solution(dV[s, c], {
        f"dV = Aᵀ dO: key {s}'s row sums over the queries that read key {s}, down column {s} of A, "
        f"not along row {s}.": A[s] @ dO[:, c],
        f"every query that reads key {s} adds a term, queries {s} to 4, not only query {s}.": A[s, s] * dO[s, c]})


def _value_grads_ref(dout, A, W_o, n_heads):
    _, lin = linear_forward(np.zeros_like(dout), W_o)  # dO = dout W_o^T does not depend on the input O
    dO = linear_backward(dout, lin)[0]  # (T, d_model)
    return np.swapaxes(A, -1, -2) @ split_heads(dO, n_heads)  # (h, T, d_k)


@exercise("dattn.3", "22_backward_attention", "find the bug", 2,
          "Find the bug: value gradients that fail the check against the loss", atol=1e-12)
def _dattn_3():
    params, _, _, trace = _toy()
    toy_case = (trace["d" + _A + "out"].copy(), trace[_A + "A"].copy(), params[_A + "W_o"].copy(),
                TOY_CONFIG.n_heads)
    assert np.allclose(_value_grads_ref(*toy_case), trace["d" + _A + "V"], rtol=0, atol=1e-15)  # byhand's dV
    r = _rng(22)
    A2 = softmax_forward(r.normal(size=(4, 3, 3)), mask=causal_mask(3))[0]
    cases = (toy_case, (r.normal(size=(3, 8)), A2, r.normal(size=(8, 8)), 4),
             (r.normal(size=(4, 6)), softmax_forward(r.normal(size=(3, 4, 4)), mask=causal_mask(4))[0],
              r.normal(size=(6, 6)), 3))

    def w_o(dout, A, W_o, n_heads):
        return np.swapaxes(A, -1, -2) @ split_heads(dout @ W_o, n_heads)

    def a_not_transposed(dout, A, W_o, n_heads):
        return A @ split_heads(dout @ W_o.T, n_heads)

    return Solution(_value_grads_ref, {
        "the numbers are wrong from the very first line on: check which matrix carries the gradient from out back "
        "to O (Step 1 of this chapter).": w_o,
        "dV sums over the queries that read each key: multiply by Aᵀ, not A.": a_not_transposed}, cases)


# --- 23: into the embeddings -------------------------------------------------------------------------------------

@exercise("dembed.1", "23_backward_embeddings", "by hand", 1,
          "How many rows of dE are exactly 0 for the batch of two sentences?", atol=0.1, precision=("dp", 0))
@functools.lru_cache(maxsize=None)
def _dembed_1():
    texts = INPUTS["dembed.1"]["texts"]
    pairs = [toy_batch(s) for s in texts]
    batch = (np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs]))
    _, grads, _ = gpt_loss_and_grads(_toy()[0], batch, TOY_CONFIG)
    zero_rows = int(np.all(grads["E"] == 0.0, axis=1).sum())
    unused = int((~np.isin(np.arange(TOY_CONFIG.vocab_size), batch[0])).sum())
    return Solution(zero_rows, {
        "<eos> occurs in both sentences, but only at the unscored position 4, which no other position reads.": unused,
        "that counts the rows that are not zero; the question asks for the rows of exact zeros.":
            TOY_CONFIG.vocab_size - unused - 1})


@exercise("dembed.2", "23_backward_embeddings", "predict", 2,
          "Predict dE[I, 2] for a batch of the same sentence twice", atol=1e-3)
@functools.lru_cache(maxsize=None)
def _dembed_2():
    d = INPUTS["dembed.2"]
    params, _, grads, _ = _toy()
    ids, targets = toy_batch()
    _, g2, _ = gpt_loss_and_grads(params, (np.stack([ids, ids]), np.stack([targets, targets])), TOY_CONFIG)
    v = VOCAB.index(d["token"])
    one = grads["E"][v, d["j"]]
    return Solution(g2["E"][v, d["j"]], {
        "the loss is a mean over all 8 scored positions: each copy carries half the weight.": 2 * one,
        "the two copies' gradients add; each is half of the single sentence's.": one / 2})


def _embed_grad_ref(ids, dx, V):
    _, cache = embedding_forward(ids, np.zeros((V, dx.shape[-1])))
    return embedding_backward(dx, cache)


@exercise("dembed.3", "23_backward_embeddings", "find the bug", 2,
          "Find the bug: an embedding gradient that loses repeated tokens", atol=1e-12)
def _dembed_3():
    r = _rng(23)
    dx0 = _toy()[3]["dx0"]
    cases = ((toy_batch()[0], dx0.copy(), TOY_CONFIG.vocab_size),
             (np.array([0, 2, 3, 2, 1]), r.normal(size=(5, 4)), 10),
             (np.array([[0, 2, 7, 2], [0, 6, 6, 1]]), r.normal(size=(2, 4, 3)), 10))

    def fancy(ids, dx, V):
        dE = np.zeros((V, dx.shape[-1]))
        dE[ids] += dx
        return dE

    def by_position(ids, dx, V):
        dE = np.zeros((V, dx.shape[-1]))
        flat = dx.reshape(-1, dx.shape[-1])
        dE[:len(flat)] += flat[:V]
        return dE

    return Solution(_embed_grad_ref, {
        "with a token that occurs twice, one of its rows of dx is lost: check what dE[ids] += dx does when ids "
        "repeats.": fancy,
        "row v of dE collects the rows of dx at the positions where token v occurs.": by_position}, cases)


# --- 24: checking every gradient ---------------------------------------------------------------------------------

@exercise("gradcheck.1", "24_gradient_check", "by hand", 2,
          "The elementwise relative error rel_i of one small entry, with the floor", atol=5e-3)
@functools.lru_cache(maxsize=None)
def _gradcheck_1():
    d = INPUTS["gradcheck.1"]
    a, n, floor = d["analytic"], d["numeric"], d["floor"]
    r = abs(a - n) / max(abs(a), abs(n), floor)
    return Solution(r, {
        "the floor 10⁻³ is larger than both entries here: divide by the floor.": abs(a - n) / max(abs(a), abs(n)),
        "that divides by the smaller entry; without the floor it would be the larger, and here the floor wins.":
            abs(a - n) / min(abs(a), abs(n)),
        "that is the absolute difference; divide it by the size.": abs(a - n)})


@exercise("gradcheck.2", "24_gradient_check", "predict", 2,
          "Predict how much larger the central difference's error is at h = 1e-2 than at h = 1e-3", rtol=0.25)
@functools.lru_cache(maxsize=None)
def _gradcheck_2():
    d = INPUTS["gradcheck.2"]
    _, _, grads, _ = _toy()
    g = grads[d["name"]][d["index"]]

    def central_error(h):
        up, down = _nudged(d["name"], d["index"], h), _nudged(d["name"], d["index"], -h)
        return abs((_loss_of(up) - _loss_of(down)) / (2 * h) - g)

    ratio = central_error(d["h_large"]) / central_error(d["h_small"])
    ratio = float(f"{ratio:.3g}")  # three digits: the error at 1e-3 carries a little round-off
    step = d["h_large"] / d["h_small"]
    return Solution(ratio, {"that is the forward difference's factor; the central one's error grows as h².": step,
                            "the error grows as h², not h³.": step**3})


def _central_ref(f, x, h):
    return numerical_grads(lambda p: f(p["x"]), {"x": x}, h=h)["x"]


@exercise("gradcheck.3", "24_gradient_check", "code", 2, "Complete central_difference: the gradient of f at x",
          atol=1e-7)
def _gradcheck_3():
    cases = ((lambda x: float(np.sum(x**3)), np.array([1.0, 2.0, -0.5]), 1e-3),
             (lambda x: float(np.sum(np.sin(x) * x)), np.array([[0.3, -1.2], [2.0, 0.1]]), 1e-4),
             (lambda x: float(np.log(np.sum(np.exp(x)))), np.array([0.5, -0.5, 1.5, 0.0]), 1e-3))

    def forward(f, x, h):
        g = np.zeros_like(x)
        for k in np.ndindex(x.shape):
            up = x.copy()
            up[k] += h
            g[k] = (f(up) - f(x)) / h
        return g

    def over_h(f, x, h):
        return 2 * _central_ref(f, x, h)

    return Solution(_central_ref, {
        "that is the one-sided forward difference; the central one steps to θ + h and θ − h.": forward,
        "the two points are 2h apart: divide by 2h.": over_h}, cases)


# --- 25: AdamW ---------------------------------------------------------------------------------------------------

@exercise("adamw.1", "25_adamw", "by hand", 2, "One AdamW step from θ = 0.5 with g = −0.2: the new θ", atol=5e-6,
          precision=("dp", 5))
@functools.lru_cache(maxsize=None)
def _adamw_1():
    d = INPUTS["adamw.1"]
    theta, g = {"w": np.array(d["theta"])}, {"w": np.array(d["g"])}
    cfg = AdamWConfig(lr=d["lr"], weight_decay=d["weight_decay"])
    new = adamw_step(theta, g, init_state(theta), cfg)[0]["w"]
    m, v = (1 - cfg.beta1) * d["g"], (1 - cfg.beta2) * d["g"] ** 2
    no_correction = d["theta"] - d["lr"] * d["weight_decay"] * d["theta"] - d["lr"] * m / (math.sqrt(v) + cfg.eps)
    paper = d["theta"] - d["weight_decay"] * d["theta"] - d["lr"] * d["g"] / (abs(d["g"]) + cfg.eps)
    return Solution(float(new), {
        "that leaves out the bias correction: at t = 1, m̂ = g and v̂ = g².": no_correction,
        "in PyTorch's AdamW, used here, the decay is scaled by η too: −ηλθ.": paper,
        "that leaves out the weight decay: a matrix weight also shrinks by ηλθ, here in the fifth decimal.":
            d["theta"] - d["lr"] * d["g"] / (abs(d["g"]) + cfg.eps),
        "a negative gradient moves the weight up: the step is −η m̂/(√v̂ + ε).":
            d["theta"] - d["lr"] * d["weight_decay"] * d["theta"] - d["lr"]})


@exercise("adamw.2", "25_adamw", "predict", 1,
          "Predict the first Adam step of a weight whose gradient is 1e-5 (η = 1e-2)", atol=5e-7,
          precision=("sf", 4))
@functools.lru_cache(maxsize=None)
def _adamw_2():
    d = INPUTS["adamw.2"]
    theta, g = {"b": np.array(0.0)}, {"b": np.array(d["g"])}
    cfg = AdamWConfig(lr=d["lr"], weight_decay=0.0)
    info = adamw_step(theta, g, init_state(theta), cfg)[2]
    step = float(info["b"]["update"])
    return Solution(step, {
        "that is −η sign(g), with ε left out: at four figures it shows, since the step is −η g/(|g| + ε).":
            -d["lr"],
        "Adam divides by √v̂ + ε = |g| + ε at the first step, so the size of g cancels: the step is about η.":
            -d["lr"] * d["g"],
        "the step goes against the gradient: a positive g moves the weight down.": -step})


def _adamw_ref(theta, g, m, v, t, lr, weight_decay):
    cfg = AdamWConfig(lr=lr, weight_decay=weight_decay)
    state = OptState(t=t - 1, m={"w": m}, v={"w": v}, b={})
    new, st, _ = adamw_step({"w": theta}, {"w": g}, state, cfg)
    return new["w"], st.m["w"], st.v["w"]


@exercise("adamw.3", "25_adamw", "code", 3,
          "Complete adamw_update: moments, bias correction, decoupled decay; return θ, m, v", atol=1e-12)
def _adamw_3():
    r = _rng(25)
    cases = ((r.normal(size=4), r.normal(size=4), np.zeros(4), np.zeros(4), 1, 1e-2, 0.01),
             (r.normal(size=(2, 3)), r.normal(size=(2, 3)), 0.1 * r.normal(size=(2, 3)),
              0.01 * r.random(size=(2, 3)), 3, 1e-3, 0.1),
             (r.normal(size=5), 1e-3 * r.normal(size=5), 1e-3 * r.normal(size=5), 1e-6 * r.random(size=5), 10,
              3e-4, 0.0))

    def no_correction(theta, g, m, v, t, lr, weight_decay):
        m2 = 0.9 * m + 0.1 * g
        v2 = 0.999 * v + 0.001 * g * g
        return theta * (1 - lr * weight_decay) - lr * m2 / (np.sqrt(v2) + 1e-8), m2, v2

    def coupled(theta, g, m, v, t, lr, weight_decay):
        cfg = AdamConfig(lr=lr, weight_decay=weight_decay)
        new, st, _ = adam_step({"w": theta}, {"w": g}, OptState(t=t - 1, m={"w": m}, v={"w": v}, b={}), cfg)
        return new["w"], st.m["w"], st.v["w"]

    def paper_decay(theta, g, m, v, t, lr, weight_decay):
        new, m2, v2 = _adamw_ref(theta, g, m, v, t, lr, 0.0)
        return new - weight_decay * theta, m2, v2

    return Solution(_adamw_ref, {
        "m and v started at 0: divide them by 1 − β₁ᵗ and 1 − β₂ᵗ before the step.": no_correction,
        "that adds λθ to the gradient (Adam with L2); AdamW shrinks θ itself and keeps the gradient as it is.":
            coupled,
        "in PyTorch's AdamW, used here, the decay is −ηλθ: scaled by the learning rate.": paper_decay}, cases)


@exercise("adamw.4", "25_adamw", "by hand", 2,
          "A bias's gradient turns from 0.1 to −0.05: its Adam step at t = 2, in units of η", atol=5e-4,
          precision=("dp", 3))
@functools.lru_cache(maxsize=None)
def _adamw_4():
    d = INPUTS["adamw.4"]
    theta, cfg = {"b": np.array(0.0)}, AdamWConfig(lr=d["lr"], weight_decay=0.0)
    _, state, _ = adamw_step(theta, {"b": np.array(d["g1"])}, init_state(theta), cfg)  # step 1
    info = adamw_step(theta, {"b": np.array(d["g2"])}, state, cfg)[2]  # step 2, from the moments of step 1
    b1, b2, g1, g2 = cfg.beta1, cfg.beta2, d["g1"], d["g2"]
    m, v = b1 * (1 - b1) * g1 + (1 - b1) * g2, b2 * (1 - b2) * g1**2 + (1 - b2) * g2**2  # m_2, v_2
    return Solution(float(info["b"]["update"]) / d["lr"], {
        "that is −sign(g₂), a step from g₂ alone: m and v carry g₁ into step 2, and m̂ averages both gradients.":
            -math.copysign(1.0, g2),
        "that leaves out the bias correction: divide m₂ by 1 − β₁² and v₂ by 1 − β₂².":
            -m / (math.sqrt(v) + cfg.eps),
        "t is 2 at the second step: divide by 1 − β₁² and 1 − β₂², not by 1 − β₁ and 1 − β₂.":
            -(m / (1 - b1)) / (math.sqrt(v / (1 - b2)) + cfg.eps)})
