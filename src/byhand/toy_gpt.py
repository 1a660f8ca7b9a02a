"""The Part II toy: "I like transformers" through a one-layer GPT with d_model 16, every number shown.

Taught in Part II, chapter "Tokens, vocabulary and parameters"; every later chapter of Part II
(forward, backward, gradient check, AdamW) starts from the values made here, so the chapters chain.

    VOCAB        10 word tokens, id = position in the tuple
    TOY_CONFIG   GPTConfig(V=10, context=5, d_model=16, h=2 (d_k=8), 1 block, d_ff=64, untied W_out)
    toy_batch()  ids     <bos>  I     like  transformers  <eos>
                 targets I      like  transformers  <eos>  -1 (ignored)
    loss         mean over the 4 predicted positions of -log p(target)

The initialisation is documented in ``toy_params``: it is not GPT-2's, on purpose.
"""
from __future__ import annotations

import numpy as np

from byhand.checks import check_ids, check_int, check_params, check_text, float_dtype
from byhand.gpt import GPTConfig, gpt_loss_and_grads, gpt_param_shapes, init_gpt_params

VOCAB: tuple[str, ...] = ("<bos>", "<eos>", "I", "like", "transformers", "the", "cat", "sat", "on", "mat")
TOY_TEXT = "I like transformers"  # the sentence of Part II
TOY_SEED = 3  # the random seed of toy_params (chosen for varied attention rows, see toy_params)

TOY_CONFIG = GPTConfig(vocab_size=len(VOCAB), context=5, d_model=16, n_heads=2, n_layers=1, d_ff=64,
                       tie_weights=False)

# Standard deviations of the toy initialisation (see toy_params for why). Weights (d_in, d_out).
TOY_INIT_STD = {
    "E": 1.0,  # token embeddings: unit scale, so tokens differ clearly
    "P": 0.5,  # learned positions: half the token scale, visible but not dominant
    "attn.W_q": 0.3,  # ~1.2 / sqrt(d_model): scores spread over a few units, attention rows peaked
    "attn.W_k": 0.3,
    "attn.W_v": 0.25,  # 1 / sqrt(d_model): keeps unit scale through the projection
    "attn.W_o": 0.25,  # 1 / sqrt(d_model)
    "ffn.W_1": 0.25,  # 1 / sqrt(d_model)
    "ffn.W_2": 0.125,  # 1 / sqrt(d_ff)
    "W_out": 0.25,  # 1 / sqrt(d_model): logits of order 1, probabilities neither flat nor one-hot
}
TOY_BIAS_STD = 0.05  # attention and FFN biases: small, but nonzero so that they visibly act


def tokenize(text: str) -> np.ndarray:
    """Word-level tokens of ``text`` framed by <bos> and <eos>: "I like transformers" -> [0, 2, 3, 4, 1].

    Words are split on whitespace and matched exactly (case-sensitive) against ``VOCAB``; the ids are
    their positions in ``VOCAB``. Returns int64 ids (n_words + 2,). An unknown word, or a literal
    "<bos>"/"<eos>" inside the text, is a ValueError that names it.
    """
    check_text("text", text)
    index = {token: i for i, token in enumerate(VOCAB)}
    ids = [index["<bos>"]]
    for word in text.split():
        if word in ("<bos>", "<eos>"):
            raise ValueError(f"{word!r} is added by tokenize; do not write it in the text")
        if word not in index:
            raise ValueError(f"unknown word {word!r}: the vocabulary is {', '.join(VOCAB)}")
        ids.append(index[word])
    ids.append(index["<eos>"])
    return np.array(ids, dtype=np.int64)  # (T,)


def detokenize(ids) -> list[str]:
    """The tokens of ``ids`` as strings, <bos> and <eos> included; ValueError for ids outside the vocabulary."""
    if np.size(ids) == 0:
        return []
    return [VOCAB[i] for i in check_ids("ids", ids, len(VOCAB)).ravel()]


def toy_batch(text: str = TOY_TEXT) -> tuple[np.ndarray, np.ndarray]:
    """The next-token training pair for ``text``: ids (T,) and targets (T,).

    targets[t] = ids[t + 1]: the model at position t predicts the token after it. The last position
    has no next token, so its target is -1 and the loss ignores it. For the toy sentence:
    ids = <bos> I like transformers <eos>, targets = I like transformers <eos> -1 (4 predictions).
    """
    ids = tokenize(text)  # (T,)
    if ids.shape[0] > TOY_CONFIG.context:
        raise ValueError(f"{text!r} has {ids.shape[0]} tokens with <bos> and <eos>, more than the "
                         f"context of {TOY_CONFIG.context}")
    targets = np.append(ids[1:], -1)  # (T,) shifted left by one; -1 = ignored
    return ids, targets


def toy_params(seed: int = TOY_SEED, dtype=np.float64) -> dict[str, np.ndarray]:
    """The seeded toy initialisation: GPT-2's parameter layout, with scales chosen for teaching.

    Why not GPT-2's std = 0.02: with it, every query and key entry is about 0.08, every score
    q.k / sqrt(8) is about 0.006, and the softmax of nearly equal scores is nearly uniform
    (1/2, 1/3, 1/4, 1/5 in the rows of the causal mask). Such attention teaches nothing, and the
    gradients are as flat as the patterns. Instead, each weight matrix W (d_in, d_out) is drawn from
    N(0, std^2) with std = 1/sqrt(d_in), which keeps activations of order 1 layer after layer, except:

    - W_q and W_k use std 0.3 (about 1.2/sqrt(d_model)): scores then spread over a few units and
      each attention row has a clear favourite key, but is far from one-hot (a one-hot row would
      have a softmax Jacobian of almost 0 and nothing to show in the backward chapters);
    - E uses std 1 and P std 0.5: tokens differ clearly, positions visibly but less.

    Biases of the attention and the FFN are N(0, 0.05^2): small, but not zero. Layer-norm gammas
    are 1 and betas 0, as in GPT-2. The draws come from one ``np.random.default_rng(seed)`` in the
    order of ``gpt_param_shapes``; the default seed gives varied rows (some sharp, some broad).
    """
    check_int("seed", seed, low=0)
    dtype = float_dtype(dtype)
    rng = np.random.default_rng(seed)
    params = init_gpt_params(TOY_CONFIG, seed=seed, dtype=dtype)  # gammas 1, betas 0: kept
    for name, shape in gpt_param_shapes(TOY_CONFIG).items():
        key = name.split(".", 1)[-1] if name.startswith("block") else name  # "block0.attn.W_q" -> "attn.W_q"
        leaf = name.rsplit(".", 1)[-1]
        if key in TOY_INIT_STD:
            params[name] = (rng.standard_normal(shape) * TOY_INIT_STD[key]).astype(dtype)
        elif leaf.startswith("b_"):
            params[name] = (rng.standard_normal(shape) * TOY_BIAS_STD).astype(dtype)
    return params


def toy_loss_and_grads(params: dict | None = None):
    """``gpt_loss_and_grads`` on the toy batch: (loss, grads, trace), with ``toy_params()`` by default.

    ids are (T,) = (5,), so the trace has no batch axis: "x0" is (5, 16), "block0.attn.A" (the
    attention weights A of both heads) is (2, 5, 5), "logits" and "p" are (5, 10). The loss is the
    mean over the 4 predicted positions.
    """
    params = toy_params() if params is None else params
    return gpt_loss_and_grads(params, toy_batch(), TOY_CONFIG)


def param_table(params: dict, config: GPTConfig) -> tuple[list[tuple[str, tuple[int, ...], int]], int]:
    """The parameter table, counted from the arrays: ([(name, shape, count), ...], total).

    Rows follow ``gpt_param_shapes(config)`` order; count = product of the shape; total = sum of
    the counts. ValueError when ``params`` does not match the config (missing, unknown, misshapen).
    """
    check_params(params, gpt_param_shapes(config))
    rows = []
    for name in gpt_param_shapes(config):
        shape = tuple(np.shape(params[name]))
        rows.append((name, shape, int(np.prod(shape, dtype=np.int64))))
    return rows, sum(count for _, _, count in rows)
