"""Exercises of Part III (chapters 30–37). Each solve computes its answer and the known wrong answers from ``byhand``.

Most exercises use the toy's own numbers (``byhand.toy_2017``: the rounded path and the exact path); the few small
inputs of their own are named in ``INPUTS``, so that a chapter shows them from the same place the checker reads them.
The toy's two paths are computed once and cached, so ``check`` stays fast.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import toy_2017 as toy
from ..attention import attention_forward, causal_mask
from ..encdec import EncDecConfig, encdec_param_shapes
from ..layernorm import layernorm_forward
from ..loss import cross_entropy_forward, smoothed_target
from ..mha import merge_heads, mha_forward
from ..optim import OptState, adam_step, warmup_lr
from ..softmax import softmax_backward, softmax_forward
from . import Solution, exercise

INPUTS = {
    "positions.1": {"pos": 2, "column": 0},
    "positions.2": {"d_model": 512, "pair": 128},
    "positions.3": {"order": ("suis", "<eos>", "je"), "entry": (0, 1)},  # a reordering of je suis <eos>
    "positions.4": {"word": "suis"},  # the source word whose scaled row must survive the post's first rounding
    "encdec.3": {"y": np.array([2.0, 0.0, 1.0, -3.0])},  # a row entering the cross-attention in place of i's
    "encoder.2": {"row": np.array([5.0, 1.0, 1.0, 1.0])},
    "smoothing.1": {"eps": 0.2},
    "smoothing.2": {"eps": 0.5},
    "smoothing.4": {"delta": 6.0},
    "encback.1": {"entry": (2, 0), "eps": 0.2},
    "encback.2": {"entry": (0, 0), "nudge": 0.01},
    "encback.4": {"entry": (1, 2), "dK": [[1.0, -2.0], [3.0, 1.0]], "dV": [[0.0, 2.0], [-1.0, 4.0]]},  # row t, per head
    "encback.5": {"g": np.array([1.0, 2.0, 0.0, 0.0]), "j": 0},
    "invariants.3": {"slip": "y = γ x̂ + 2β"},
    "adam.1": {"t": 100},
}


@functools.lru_cache(maxsize=None)
def _rounded():
    return toy.rounded_path()


@functools.lru_cache(maxsize=None)
def _exact():
    return toy.exact_path()


def _am() -> int:
    return toy.TGT_VOCAB.index("am")


def _rounded_loss(W_out=None, eps: float = toy.LABEL_SMOOTHING) -> float:
    """The rounded path's loss from h = [1, 0, -1, 0] through an output layer W_out (the toy's I if None)."""
    W = np.eye(4) if W_out is None else W_out
    z = toy.ROUNDED_H @ W  # (V,) the logits, b_out = 0
    return float(cross_entropy_forward(z[None, :], np.array([_am()]), label_smoothing=eps)[0])


def _ce_against(q, p) -> float:
    return float(-(q * np.log(p)).sum())


# --- 30: the 2017 machine and its toy -----------------------------------------------------------------------------

def _layer_count(shapes: dict, prefix: str, skip=()) -> int:
    return sum(int(np.prod(s)) for n, s in shapes.items()
               if n.startswith(prefix) and not any(k in n for k in skip))


@exercise("encdec.1", "30_encdec_toy", "by hand", 1,
          "Count the numbers in the toy's encoder layer from the parameter table", atol=0.5, precision=("dp", 0))
def _encdec_1():
    shapes = encdec_param_shapes(toy.toy_config())
    return Solution(_layer_count(shapes, "enc0."), {
        "the feed-forward network has biases too: b_1 has d_ff entries and b_2 has d_model.":
            _layer_count(shapes, "enc0.", skip=(".b_1", ".b_2")),
        "each of the two layer norms has a γ and a β, d_model numbers each.":
            _layer_count(shapes, "enc0.", skip=(".ln1.", ".ln2.")),
        "that counts the four attention matrices only; the feed-forward network and the two layer norms are part "
        "of the layer too.": _layer_count(shapes, "enc0.attn.")})


def _base_encoder_layer(**over) -> int:
    P = toy.PAPER
    cfg = EncDecConfig(src_vocab=4, tgt_vocab=4, d_model=over.get("d_model", P["d_model"]), n_heads=P["n_heads"],
                       d_ff=over.get("d_ff", P["d_ff"]))
    return _layer_count(encdec_param_shapes(cfg), "enc0.")


@exercise("encdec.2", "30_encdec_toy", "predict", 2,
          "Predict how many numbers one encoder layer of the paper's base model holds", atol=1.0, rtol=0.05)
def _encdec_2():
    P = toy.PAPER
    four_d_squared = 4 * P["d_model"] ** 2  # the attention matrices alone
    return Solution(_base_encoder_layer(), {
        "that is the four attention matrices alone; the feed-forward network, 512 → 2048 → 512, holds twice as many.":
            four_d_squared,
        # The two likeliest ways to reach about 2.1 million land within 5 % of each other, so one hint names both.
        "about 2.1 million is the feed-forward network alone, or a layer whose network widens only to 2 d_model as "
        "the toy's does; the layer has the attention's 4 · 512² too, and its network widens to d_ff = 2048.":
            _layer_count(encdec_param_shapes(EncDecConfig(src_vocab=4, tgt_vocab=4, d_model=P["d_model"],
                                                          n_heads=P["n_heads"], d_ff=P["d_ff"])), "enc0.ffn.")})


def _cross_head0_weights(y, swap: bool = True, scale: bool = True):
    """Head 0's cross-attention weights (2,) over the toy's memory (je, suis) for a decoder row ``y`` (4,)."""
    p, M = toy.toy_params(), _exact().trace["enc0.ln2"]  # M: (2, 4) the memory
    d_k = toy.toy_config().d_model // toy.toy_config().n_heads  # 2
    q = (y @ (p["dec0.cross.W_q"] if swap else np.eye(4)))[:d_k]  # (d_k,) head 0's query
    K = (M @ p["dec0.cross.W_k"])[:, :d_k]  # (2, d_k) head 0's keys
    a, _ = softmax_forward(K @ q / (math.sqrt(d_k) if scale else 1.0))  # (2,)
    return a


@exercise("encdec.3", "30_encdec_toy", "by hand", 2,
          "Head 0's cross-attention weight on je for a changed decoder row", atol=5e-4, precision=("dp", 4))
def _encdec_3():
    y = INPUTS["encdec.3"]["y"]
    return Solution(_cross_head0_weights(y)[0], {
        "W_Q^cross swaps columns 1 and 2 before head 0 takes columns 0 and 1: the query is y W_Q cut to two columns.":
            _cross_head0_weights(y, swap=False)[0],
        "the score is q · k / √d_k: divide the dot product by √2 before the softmax.":
            _cross_head0_weights(y, scale=False)[0],
        "that is the weight on suis; je's key is the memory's row 0.": _cross_head0_weights(y)[1]})


# --- 31: embeddings and sinusoidal positions ----------------------------------------------------------------------

@exercise("positions.1", "31_sinusoidal_positions", "by hand", 1,
          "The toy's positional encoding at position 2, column 0", atol=5e-4, precision=("dp", 4))
def _positions_1():
    d = INPUTS["positions.1"]
    pos, col = d["pos"], d["column"]
    from ..embedding import sinusoidal_positions
    PE = sinusoidal_positions(pos + 1, toy.toy_config().d_model)  # (pos + 1, d_model)
    return Solution(PE[pos, col], {
        "the angle is in radians: sin(2), not sin(2°).": math.sin(math.radians(pos)),
        "even columns hold the sine and odd columns the cosine; that is the cosine.": math.cos(pos)})


@exercise("positions.2", "31_sinusoidal_positions", "predict", 2,
          "Predict the frequency divisor of column pair 128 in the base model", atol=0.05, rtol=1e-3)
def _positions_2():
    d = INPUTS["positions.2"]
    from ..embedding import sinusoidal_divisors
    div = sinusoidal_divisors(d["d_model"])  # (d_model / 2,)
    i = d["pair"]
    return Solution(div[i], {
        "the exponent is 2i / d_model, with 2i the pair's first column; that used i / d_model.":
            10000.0 ** (i / d["d_model"]),
        "that is the divisor of the last pair; pair 128 sits halfway along, where the exponent is 1/2.": div[-1]})


@exercise("positions.3", "31_sinusoidal_positions", "predict", 2,
          "Predict one entry of the encoder's self-attention output for a reordered source, with no positions",
          atol=5e-4, precision=("dp", 4))
def _positions_3():
    d = INPUTS["positions.3"]
    words = ("je", "suis", "<eos>")  # the order whose output the task shows
    P, d_model = toy.toy_params(), toy.toy_config().d_model
    ids = [toy.SRC_VOCAB.index(w) for w in words]  # (3,)
    X = np.round(math.sqrt(d_model) * P["E_src"][ids])  # (3, 4): scaled, rounded once, no positions
    out = mha_forward(X, X, *(P[f"enc0.attn.W_{n}"] for n in "qkvo"), 2)[0]  # (3, 4) for je suis <eos>
    order = [words.index(w) for w in d["order"]]  # new place -> old row
    t, j = d["entry"]
    return Solution(out[order[t], j], {
        "without positions an output row follows its token, not its place: that is the row of the word that stood "
        "at that place before the reordering.": out[t, j],
        "that moved the rows the wrong way round: read the output row of the word that now stands at that place.":
            out[order.index(t), j]})


@exercise("positions.4", "31_sinusoidal_positions", "by hand", 2,
          "The factor s above which suis survives the post's first rounding", atol=5e-3, precision=("dp", 2))
def _positions_4():
    E = toy.toy_params()["E_src"][toy.SRC_VOCAB.index(INPUTS["positions.4"]["word"])]  # (d_model,) unscaled row
    big = np.abs(E).max()  # the entry of largest size is the first to pass a half, whatever its sign
    return Solution(0.5 / big, {
        "a negative entry counts too: one below −0.5 rounds to −1. Use the entry of largest size, not the largest value.":
            0.5 / E.max(),
        "an entry rounds away from 0 once its size passes a half, not once it reaches 1.": 1.0 / big,
        "one nonzero entry is enough for the word to survive; that is the factor at which every entry survives.":
            0.5 / np.abs(E).min()})


# --- 32: the encoder layer ----------------------------------------------------------------------------------------

@exercise("encoder.1", "32_encoder_layer", "by hand", 2,
          "The encoder's weight A[0, 0] if the scores were not divided by √d_k", atol=5e-4, precision=("dp", 4))
def _encoder_1():
    X = toy.toy_inputs()[0][:, :2]  # (2, 2): head 0's columns, W_Q = W_K = I
    unscaled = softmax_forward(X @ X.T)[0]  # (2, 2)
    scaled = softmax_forward(X @ X.T / math.sqrt(2))[0]
    return Solution(unscaled[0, 0], {
        "that is the chapter's weight, with the division by √d_k; the exercise leaves it out.": scaled[0, 0],
        "that is e^1 before dividing by the row's sum e^1 + e^0.": math.e})


@exercise("encoder.2", "32_encoder_layer", "predict", 2,
          "Predict entry 0 of LN([5, 1, 1, 1]) with γ = 1, β = 0, ε = 0", atol=5e-4)
def _encoder_2():
    x = INPUTS["encoder.2"]["row"]
    y, _ = layernorm_forward(x, np.ones(4), np.zeros(4), eps=0.0)
    dev = x - x.mean()
    return Solution(y[0], {
        "±1 comes only from an even split; one high entry and three low ones give √3 where the row was high.": 1.0,
        "layer norm divides by the biased standard deviation (divide by d_model = 4, not d_model − 1 = 3).":
            dev[0] / np.sqrt((dev ** 2).sum() / 3),
        "that is the deviation x − μ before dividing by σ.": dev[0]})


# --- 33: the decoder layer ----------------------------------------------------------------------------------------

@exercise("decoder.1", "33_decoder_layer", "predict", 1,
          "Predict the weight position 0 puts on position 1 if the causal mask were left out", atol=5e-3)
def _decoder_1():
    S = _exact().trace["dec0.self.S"][0]  # (2, 2) head 0, every score equal
    unmasked = softmax_forward(S)[0]
    masked = softmax_forward(S, mask=causal_mask(2))[0]
    return Solution(unmasked[0, 1], {
        "that is the weight with the mask; without it, position 0 sees both positions with equal scores.":
            masked[0, 1],
        "that is the weight on itself with the mask; without it the two equal scores share the row.": masked[0, 0]})


@exercise("decoder.2", "33_decoder_layer", "by hand", 2,
          "Entry 0 of the residual sum at the scored position after cross-attention, from ω", atol=5e-4,
          precision=("dp", 4))
def _decoder_2():
    tr = _exact().trace
    A = tr["dec0.cross.A"][0]
    omega = A[0, 0] - A[0, 1]  # the margin tanh(sqrt 2)
    omega_post = toy.POST_PRINTED["cross_weights"][0] - toy.POST_PRINTED["cross_weights"][1]
    return Solution(tr["dec0.res2"][toy.SCORED, 0], {
        "that uses ω = 1, a certain attention; ω is the difference of the two weights, tanh √2.": 2.0,
        "ω is the margin A[0, 0] − A[0, 1], not the larger weight A[0, 0].": 3 * A[0, 0] - 1,
        "the leftover of the old pattern has entry −(1 − ω) here: [−1, −1, 1, 1] starts with −1.": 1 + omega,
        "that uses the rounded weights 0.944 and 0.056; keep ω to four decimals.": 3 * omega_post - 1})


def _dec_cases():
    rng = np.random.default_rng(33)
    return tuple((rng.normal(size=(T, 4)), rng.normal(size=(4, 4)), rng.normal(size=(4, 4)), rng.normal(size=(4, 4)))
                 for T in (2, 3, 5))


@exercise("decoder.3", "33_decoder_layer", "find the bug", 2,
          "Fix a one-head decoder self-attention that lets each position look ahead", atol=1e-9)
def _decoder_3():
    def reference(Y, W_q, W_k, W_v):
        O, _ = attention_forward(Y @ W_q, Y @ W_k, Y @ W_v, mask=causal_mask(len(Y)))
        return O

    def no_mask(Y, W_q, W_k, W_v):
        O, _ = attention_forward(Y @ W_q, Y @ W_k, Y @ W_v)
        return O

    def mask_after_softmax(Y, W_q, W_k, W_v):
        Q, K, V = Y @ W_q, Y @ W_k, Y @ W_v
        A = softmax_forward(Q @ K.T / math.sqrt(Q.shape[-1]))[0] * causal_mask(len(Y))
        return A @ V

    def mask_transposed(Y, W_q, W_k, W_v):
        O, _ = attention_forward(Y @ W_q, Y @ W_k, Y @ W_v, mask=causal_mask(len(Y)).T)
        return O

    return Solution(reference, {
        "each position still attends to the positions after it; look at what the scores go through before the softmax.": no_mask,
        "zeroing the weights after the softmax leaves rows that no longer sum to 1: mask the scores before it.":
            mask_after_softmax,
        "that mask lets each position see the future and hides the past: query i may see key j only when j ≤ i.":
            mask_transposed}, _dec_cases())


# --- 34: output layer, softmax and label smoothing ----------------------------------------------------------------

@exercise("smoothing.1", "34_output_loss", "by hand", 2,
          "The rounded path's smoothed loss with ε_ls = 0.2, from the −log p row", atol=5e-4, precision=("dp", 4))
def _smoothing_1():
    eps, V, am = INPUTS["smoothing.1"]["eps"], len(toy.TGT_VOCAB), _am()
    p = _rounded().p
    return Solution(_rounded_loss(eps=eps), {
        "that is the loss with ε_ls = 0.1, the chapter's; the exercise doubles it.": _rounded().loss,
        "that is the plain cross-entropy −log p(am), with no smoothing.": float(-np.log(p[am])),
        "that spreads ε_ls over the n_vocab − 1 other words; this book's form puts ε_ls/n_vocab on every word, am included.":
            _ce_against(smoothed_target(am, V, eps, "tensor2tensor"), p)})


@exercise("smoothing.2", "34_output_loss", "predict", 2,
          "Predict the rounded path's loss at ε_ls = 0.5 from its value at 0.1 and the slope of the line", atol=5e-3)
def _smoothing_2():
    eps = INPUTS["smoothing.2"]["eps"]
    plain, at01 = _rounded_loss(eps=0.0), _rounded().loss
    return Solution(_rounded_loss(eps=eps), {
        "the loss falls as ε_ls grows on this model: am is the word it likes least.": plain + (plain - at01) * eps / 0.1,
        "that is the loss at ε_ls = 0.1; the line keeps falling by the same amount for every 0.1.": at01,
        "that is the smallest possible loss at ε_ls = 0.1, the entropy of ỹ; these logits are far from it.":
            float(-(_rounded().q * np.log(_rounded().q)).sum())})


def _smoothing_cases():
    return ((2, 4, 0.1), (0, 4, 0.2), (3, 7, 0.1), (1, 2, 0.3))


@exercise("smoothing.3", "34_output_loss", "find the bug", 2,
          "Fix a smoothed target that spreads ε_ls over the other words instead of all n_vocab", atol=1e-12)
def _smoothing_3():
    def reference(target, V, eps):
        return smoothed_target(target, V, eps, "pytorch")

    def over_v_minus_1(target, V, eps):
        return smoothed_target(target, V, eps, "tensor2tensor")

    def target_unsmoothed(target, V, eps):
        q = np.full(V, eps / V)
        q[target] = 1.0 - eps
        return q

    return Solution(reference, {
        "that is another convention's target, not this book's: compare each entry with the table of conventions.": over_v_minus_1,
        "the target gets its own share too: 1 − ε_ls + ε_ls/n_vocab, or ỹ no longer sums to 1.": target_unsmoothed},
        _smoothing_cases())


@exercise("smoothing.4", "34_output_loss", "predict", 2,
          "am's entry of ∂ℒ/∂z = p − ỹ after raising am's logit by 6 on the rounded path", atol=5e-4,
          precision=("dp", 4))
def _smoothing_4():
    eps, V, am = toy.LABEL_SMOOTHING, len(toy.TGT_VOCAB), _am()
    z = _rounded().logits.copy()
    z[am] += INPUTS["smoothing.4"]["delta"]
    p_am = float(softmax_forward(z)[0][am])
    q_am = 1 - eps + eps / V
    return Solution(p_am - q_am, {
        "that subtracts 1 − ε_ls: you forgot the smoothing mass on am itself, ε_ls/n_vocab, which every word gets.":
            p_am - (1 - eps),
        "that subtracts 1, the one-hot target; the smoothed target gives am 1 − ε_ls + ε_ls/n_vocab.": p_am - 1,
        "that is ỹ − p, the sign flipped: the gradient of the loss is p − ỹ.": q_am - p_am})


# --- 35: the backward pass ----------------------------------------------------------------------------------------

@exercise("encback.1", "35_encdec_backward", "by hand", 1,
          "One entry of ∂ℒ/∂W_out = H₁ᵀ(p − ỹ) on the rounded path, with label smoothing ε_ls = 0.2",
          atol=5e-4, precision=("dp", 4))
def _encback_1():
    (i, j), eps = INPUTS["encback.1"]["entry"], INPUTS["encback.1"]["eps"]
    r = _rounded()
    q = np.full(4, eps / 4)  # the smoothed target at this ε_ls: ε_ls/n_vocab each, plus 1 − ε_ls on am
    q[_am()] += 1 - eps
    g = r.h[i] * (r.p - q)  # row i of H₁ᵀ(p − ỹ)
    return Solution(g[j], {
        "H₁[2] is −1, so the entry is minus (p − ỹ)[0]: the sign flips.": -g[j],
        "the gradient is H₁[i] times (p − ỹ)[j]; that used p[j] alone.": r.h[i] * r.p[j],
        "that is entry [j, i]: in H₁ᵀ(p − ỹ) the row comes from H₁ and the column from p − ỹ.":
            r.h[j] * (r.p[i] - q[i]),
        "that is the entry at the chapter's ε_ls, as printed; with the larger ε_ls each word but am has the target "
        "ε_ls/n_vocab.": r.dW_out[i, j]})


@exercise("encback.2", "35_encdec_backward", "predict", 2,
          "Predict how much the loss changes when W_out[0, 0] is raised by 0.01", atol=1e-5, rtol=0.05)
def _encback_2():
    d = INPUTS["encback.2"]
    (i, j), dw = d["entry"], d["nudge"]
    W = np.eye(4)
    W[i, j] += dw
    change = _rounded_loss(W) - _rounded_loss()
    g = _rounded().dW_out[i, j]
    return Solution(change, {
        "a positive gradient means the loss rises when the weight goes up.": -g * dw,
        "that is the gradient itself; the change is the gradient times the nudge.": g,
        "the change is the gradient times the nudge, not the nudge itself.": dw})


def _softmax_row_cases():
    rng = np.random.default_rng(35)
    return tuple((softmax_forward(rng.normal(size=n))[0], rng.normal(size=n)) for n in (2, 3, 5))


@exercise("encback.3", "35_encdec_backward", "code", 2,
          "Complete the backward of one softmax row: ∂L/∂s from the weights a and the upstream gradient g",
          atol=1e-12)
def _encback_3():
    def reference(a, g):
        return softmax_backward(g, {"p": a, "axis": -1})

    def times_a(a, g):
        return a * g

    def diag_minus_outer_forgotten(a, g):
        return g - a @ g

    return Solution(reference, {
        "that is a ⊙ g, the diagonal of the Jacobian only; subtract the weighted mean Σ a_j g_j first.": times_a,
        "multiply by a after subtracting the mean: a ⊙ (g − Σ a_j g_j).": diag_minus_outer_forgotten},
        _softmax_row_cases())


@exercise("encback.4", "35_encdec_backward", "by hand", 1,
          "One entry of the memory's gradient, ∂ℒ/∂ENC = ∂ℒ/∂K W_Kᵀ + ∂ℒ/∂V W_Vᵀ, with W_K = W_V = I, "
          "from given upstream rows",
          atol=1e-5, precision=("dp", 5))
def _encback_4():
    d = INPUTS["encback.4"]
    _, j = d["entry"]  # the task gives row t's upstream gradients, one row of 2 per head
    params = toy.toy_params()
    dK, dV = (merge_heads(np.array(d[k])[:, None, :])[0] for k in ("dK", "dV"))  # heads side by side: (d_model,)
    dmem = dK @ params["dec0.cross.W_k"].T + dV @ params["dec0.cross.W_v"].T  # the two paths into the memory, add
    return Solution(float(dmem[j]), {
        "that is the values' path alone: the memory also feeds the keys, and the two paths add.": float(dV[j]),
        "that is the keys' path alone: the memory also feeds the values, and the two paths add.": float(dK[j]),
        "the two paths add: a variable used twice gets the sum of both gradients, not their difference.":
            float(dV[j] - dK[j]),
        "that is head 0's first column; with the heads side by side, column 2 is head 1's first column.":
            float(dK[j % 2] + dV[j % 2])})


@exercise("encback.5", "35_encdec_backward", "by hand", 2,
          "One entry of ∂ℒ/∂x through the last layer norm, from x̂ and σ = 2, for ∂ℒ/∂y = [1, 2, 0, 0]",
          atol=5e-5, precision=("dp", 4))
def _encback_5():
    g, j = INPUTS["encback.5"]["g"], INPUTS["encback.5"]["j"]
    tr = _exact().trace
    xhat, sigma = tr["dec0.ln3"][toy.SCORED], tr["dec0.res3"][toy.SCORED].std()  # the scored row, σ = 2
    mean_term, var_term = g.mean(), xhat[j] * (g @ xhat) / 4
    return Solution(float((g[j] - mean_term - var_term) / sigma), {
        "that divides by σ only, the direct path: x_j also moves the mean and the variance, and both paths "
        "subtract.": float(g[j] / sigma),
        "that leaves out the path through the mean, −(1/4)Σ g_i /σ: every x_j moves μ by 1/4.":
            float((g[j] - var_term) / sigma),
        "that leaves out the path through the variance, −x̂_j (Σ g_i x̂_i)/(4σ).": float((g[j] - mean_term) / sigma),
        "the whole bracket is divided by σ = 2.": float(g[j] - mean_term - var_term)})


# --- 36: Adam and the warm-up schedule ----------------------------------------------------------------------------

@exercise("adam.1", "36_adam_warmup", "by hand", 1,
          "The warm-up learning rate at step 100 with d_model = 512 and 4000 warm-up steps", atol=1e-12, rtol=1e-3)
def _adam_1():
    t = INPUTS["adam.1"]["t"]
    d_model, w = toy.PAPER["d_model"], toy.PAPER["warmup"]
    return Solution(warmup_lr(t, d_model, w), {
        "during the warm-up the smaller term is t · warmup^(−1.5); t^(−0.5) takes over only after step 4000.":
            d_model ** -0.5 * t ** -0.5,
        "the schedule is multiplied by d_model^(−0.5).": t * w ** -1.5})


@exercise("adam.2", "36_adam_warmup", "predict", 2,
          "Predict the first Adam step, in units of η₁, if the bias correction were left out", atol=5e-4,
          precision=("dp", 3))
def _adam_2():
    b1, b2 = toy.PAPER["beta1"], toy.PAPER["beta2"]
    g = _rounded().dW_out[0, 0]
    m, v = (1 - b1) * g, (1 - b2) * g * g  # the moments after step 1, not corrected
    return Solution(m / (math.sqrt(v) + toy.PAPER["eps"]), {
        "that is the corrected step, η₁ · sign(g); without the correction m and v stay small.": 1.0,
        "v is uncorrected too, and its square root is √0.02 |g|, which makes the step larger than 0.1.": 1 - b1,
        "that divides by v, not by its square root.": m / v})


def _adam_cases():
    rng = np.random.default_rng(36)
    cases = []
    for t in (1, 2, 10):  # t: the step about to be taken (1-based)
        W, g = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
        m, v = 0.1 * rng.normal(size=(3, 2)), 0.01 * rng.random(size=(3, 2))
        if t == 1:
            m, v = np.zeros_like(m), np.zeros_like(v)
        cases.append((W, g, m, v, t, 1e-3))
    return tuple(cases)


@exercise("adam.3", "36_adam_warmup", "find the bug", 2,
          "Fix an Adam step that forgets the bias correction", atol=1e-12)
def _adam_3():
    cfg = toy.adam_2017()

    def reference(W, g, m, v, t, lr):
        state = OptState(t=t - 1, m={"W": m}, v={"W": v}, b={})
        new, st, _ = adam_step({"W": W}, {"W": g}, state, cfg, lr=lr)
        return new["W"], st.m["W"], st.v["W"]

    def no_correction(W, g, m, v, t, lr):
        m = cfg.beta1 * m + (1 - cfg.beta1) * g
        v = cfg.beta2 * v + (1 - cfg.beta2) * g * g
        return W - lr * m / (np.sqrt(v) + cfg.eps), m, v

    def correction_with_t_minus_1(W, g, m, v, t, lr):
        m = cfg.beta1 * m + (1 - cfg.beta1) * g
        v = cfg.beta2 * v + (1 - cfg.beta2) * g * g
        s = max(t - 1, 1)
        return W - lr * (m / (1 - cfg.beta1 ** s)) / (np.sqrt(v / (1 - cfg.beta2 ** s)) + cfg.eps), m, v

    def eps_before_correction(W, g, m, v, t, lr):  # the 2017 code's (TensorFlow's) form, which ch36 shows
        m = cfg.beta1 * m + (1 - cfg.beta1) * g
        v = cfg.beta2 * v + (1 - cfg.beta2) * g * g
        lr_t = lr * math.sqrt(1 - cfg.beta2**t) / (1 - cfg.beta1**t)
        return W - lr_t * m / (np.sqrt(v) + cfg.eps), m, v

    def returns_corrected_state(W, g, m, v, t, lr):
        W_new, m, v = reference(W, g, m, v, t, lr)
        return W_new, m / (1 - cfg.beta1**t), v / (1 - cfg.beta2**t)

    return Solution(reference, {
        "the early steps come out the wrong size: m and v start at 0, and the step has to make up for that.": no_correction,
        "the correction uses this step's t, counted from 1: step 1 divides by 1 − β¹.": correction_with_t_minus_1,
        "the bias correction is right: this is the 2017 code's form, ε added to √v before the correction, which the "
        "chapter shows is a legitimate Adam. Its steps differ from byhand's only where √v̂ is near ε; this check "
        "compares with byhand's form, so add ε to √v̂ after the correction.": eps_before_correction,
        "W is right, but the next step must build on the uncorrected m and v: return those, not m̂ and v̂.":
            returns_corrected_state},
        _adam_cases())


# --- 37: the invariants, checked ----------------------------------------------------------------------------------

@exercise("invariants.1", "37_encdec_invariants", "by hand", 1,
          "The factor α that makes α · [1, 0, −1, 0] pass the layer-norm check", atol=5e-4, precision=("dp", 4))
def _invariants_1():
    h = toy.ROUNDED_H
    alpha = 1.0 / h.std()
    return Solution(alpha, {
        "that makes the variance 2; variance grows with α², so α is 1/√(variance), not 1/variance.": 1.0 / h.var(),
        "that is the variance itself; the check wants variance 1, and scaling by α multiplies it by α².": h.var()})


@exercise("invariants.2", "37_encdec_invariants", "predict", 2,
          "Predict how far a row sum strays from 1 if the mask zeroes weights after the softmax", atol=5e-3)
def _invariants_2():
    S = _exact().trace["dec0.self.S"][0]  # (2, 2) equal scores
    after = softmax_forward(S)[0] * causal_mask(2)  # (2, 2) the future zeroed after the softmax
    return Solution(float(np.abs(after.sum(axis=-1) - 1).max()), {
        "zeroing a weight after the softmax takes it away without renormalising the row, so the row sum moves.":
            0.0})


@exercise("invariants.3", "37_encdec_invariants", "predict", 2,
          "Predict the gradient check's deviation when every layer norm's forward adds β twice", atol=5e-5,
          precision=("dp", 4))
def _invariants_3():
    # The slipped model is the toy with each β doubled; at β = 0 its loss is the toy's, its slope in β twice the
    # toy's, and the unchanged backward reports the toy's: the gap is |∂ℒ/∂β|, largest at the last layer norm.
    g = {n: v for n, v in _exact().grads.items() if n.endswith(".beta")}
    gap = max(float(np.abs(v).max()) for v in g.values())
    top = max(float(v.max()) for v in g.values())
    return Solution(gap, {
        "0 is what the five invariants report: β = 0 here, so every row is unchanged. But the gradient check "
        "compares the unchanged backward with the slipped code's own loss, which moves twice as fast in β, and "
        "sees the difference: a forward-only slip is not a consistent wrong model.": 0.0,
        "that is the slipped model's slope 2 ∂ℒ/∂β; the check reports its gap from the backward's ∂ℒ/∂β, "
        "which is half of it.": 2 * gap,
        "the check measures the largest gap in absolute value: am's entry is negative, and larger.": top})
