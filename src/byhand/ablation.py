"""Ablation: run the model with one of its parts removed, and measure what the answer loses.

Taught in Part IV, "Inside the trained model". An attention pattern shows where a head looks; whether the answer
needs that head takes an intervention: remove the head, run the model again, compare. The parts (layer l and
head j counted from 0, d_k = d_model / h) are

    head l.j   the head's columns O[..., j d_k:(j+1) d_k] of the merged head outputs O, before W_o
    attn l     the whole attention sublayer's output, out = O W_o + b_o (every head and the bias)
    ffn l      the whole feed-forward sublayer's output, GELU(LN2(res1) W_1 + b_1) W_2 + b_2

and a part is removed in one of two ways (papers use both; Wang et al. 2022 use the second):

    zero   its output is replaced by 0                                        (zero ablation)
    mean   by its mean over every position of a reference set of prompts      (mean ablation)

Both are edits of a copy of the parameters, so the ordinary ``gpt_forward`` runs the ablated model. Because

    out = O W_o + b_o = sum_j O_j W_o[j d_k:(j+1) d_k, :] + b_o,

zeroing head j's columns of O is zeroing its rows of W_o (b_o stays), and putting a constant m_j (d_k,) in
their place is zeroing those rows and adding m_j W_o[rows] to b_o. A whole sublayer's output is removed with
W_o = b_o = 0 (then res1 = x) or W_2 = b_2 = 0 (then res2 = res1); its mean replaces it through the bias alone.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from byhand.gpt import GPTConfig, gpt_forward
from byhand.ioi import Vocab, encode_batch, evaluate, tokenize

KINDS = ("head", "attn", "ffn")
HOWS = ("zero", "mean")


@dataclass(frozen=True)
class Component:
    """One part of the model that an ablation can remove."""

    kind: str  # "head", "attn" (the layer's attention output) or "ffn" (its feed-forward output)
    layer: int  # l, counted from 0
    head: int | None = None  # j, counted from 0; only for kind "head"

    @property
    def label(self) -> str:
        """How the book names it: "head 1.0", "attention of layer 1", "feed-forward of layer 1"."""
        if self.kind == "head":
            return f"head {self.layer}.{self.head}"
        return f"{'attention' if self.kind == 'attn' else 'feed-forward'} of layer {self.layer}"


def _check(component: Component, config: GPTConfig) -> None:
    """ValueError unless ``component`` names a part of a model of this config."""
    if not isinstance(component, Component) or component.kind not in KINDS:
        raise ValueError(f"component must be a Component of kind {KINDS}, got {component!r}")
    if not 0 <= component.layer < config.n_layers:
        raise ValueError(f"layer {component.layer} is outside the model's {config.n_layers} layers")
    if (component.kind == "head") != (component.head is not None):
        raise ValueError(f"a head needs a head index and a sublayer none, got {component!r}")
    if component.kind == "head" and not 0 <= component.head < config.n_heads:
        raise ValueError(f"head {component.head} is outside the layer's {config.n_heads} heads")


def components(config: GPTConfig, kinds=KINDS) -> tuple[Component, ...]:
    """Every head (layer by layer), then every attention sublayer, then every feed-forward sublayer."""
    out = []
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; use {KINDS}")
        for l in range(config.n_layers):
            heads = range(config.n_heads) if kind == "head" else (None,)
            out += [Component(kind, l, j) for j in heads]
    return tuple(out)


def ablate(params: dict, config: GPTConfig, component: Component, mean=None) -> dict[str, np.ndarray]:
    """A copy of ``params`` whose forward is the model with ``component`` removed; ``params`` are not touched.

    mean None: zero ablation. Otherwise the constant that replaces the part's output: (d_k,) for a head,
    (d_model,) for a sublayer (``component_means`` gives both). Only the edited arrays are new, worked out in
    float64 and returned in their own dtype.
    """
    _check(component, config)
    out = dict(params)
    pre = f"block{component.layer}."
    W_name, b_name = (pre + "attn.W_o", pre + "attn.b_o") if component.kind != "ffn" else (pre + "ffn.W_2",
                                                                                          pre + "ffn.b_2")
    W = np.array(params[W_name], dtype=np.float64)  # (d_in, d_model), a copy
    b = np.array(params[b_name], dtype=np.float64)  # (d_model,)
    if component.kind == "head":
        d_k = config.d_model // config.n_heads
        rows = slice(component.head * d_k, (component.head + 1) * d_k)  # head j's rows of W_o
        if mean is not None:
            b = b + _vector(mean, d_k) @ W[rows]  # (d_model,): the constant m_j W_o[rows] joins the bias
        W[rows] = 0.0
    else:
        b = np.zeros_like(b) if mean is None else _vector(mean, config.d_model).copy()  # (d_model,)
        W[:] = 0.0
    out[W_name] = W.astype(np.asarray(params[W_name]).dtype)
    out[b_name] = b.astype(np.asarray(params[b_name]).dtype)
    return out


def _vector(mean, size: int) -> np.ndarray:
    """The replacement constant as a finite float64 vector of ``size`` entries."""
    m = np.asarray(mean, dtype=np.float64)
    if m.shape != (size,) or not np.all(np.isfinite(m)):
        raise ValueError(f"the mean must be a finite vector of shape ({size},), got shape {m.shape}")
    return m


def _groups(sentences, chunk: int):
    """Indices of the sentences in batches of at most ``chunk`` prompts of one length (no padding, small arrays)."""
    lengths = np.array([len(tokenize(x.prompt)) for x in sentences])  # (B,)
    for n in np.unique(lengths):
        same = np.flatnonzero(lengths == n)
        for start in range(0, same.size, chunk):
            yield same[start:start + chunk]


def component_means(params: dict, config: GPTConfig, vocab: Vocab, sentences, chunk: int = 32) -> dict:
    """Each component's mean output over every position of every prompt (float64): Component -> vector.

    A head's mean is that of its columns of O (d_k,); a sublayer's that of its output (d_model,).
    """
    p64 = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    d_k = config.d_model // config.n_heads
    sums = {c: 0.0 for c in components(config)}
    count = 0
    for rows in _groups(sentences, chunk):
        ids, _ = encode_batch([sentences[i].prompt for i in rows], vocab, eos=True)  # (b, T): prompts, no padding
        _, cache = gpt_forward(p64, ids, config)
        tr = cache["trace"]
        for c in sums:
            pre = f"block{c.layer}."
            if c.kind == "head":
                x = tr[pre + "attn.O"][..., c.head * d_k:(c.head + 1) * d_k]  # (b, T, d_k)
            else:
                x = tr[pre + ("attn.out" if c.kind == "attn" else "ffn.out")]  # (b, T, d_model)
            sums[c] = sums[c] + x.sum(axis=(0, 1))
        count += ids.size
    return {c: s / count for c, s in sums.items()}


def heldout_metrics(params: dict, config: GPTConfig, vocab: Vocab, sentences, chunk: int = 32) -> dict:
    """``byhand.ioi.evaluate``'s "p_io", "p_s" (B,) and "correct" (B,), in sentence order, in batches.

    The prompts go through ``evaluate`` in batches of at most ``chunk`` of one length: the same numbers as one
    call on the whole list, but the arrays stay small, which makes it several times faster.
    """
    sentences = list(sentences)
    if not sentences:
        raise ValueError("give at least one sentence")
    out = {"p_io": np.empty(len(sentences)), "p_s": np.empty(len(sentences)),
           "correct": np.empty(len(sentences), dtype=bool)}
    for rows in _groups(sentences, chunk):
        m = evaluate(params, config, [sentences[i] for i in rows], vocab)
        for key in out:
            out[key][rows] = m[key]
    return out


@dataclass(frozen=True)
class AblationStudy:
    """Mean P(IO), mean P(S) and accuracy on a set of sentences, intact and with each component removed."""

    components: tuple[Component, ...]  # (C,)
    n: int  # sentences evaluated
    p_io: float  # mean P(IO) of the intact model
    p_s: float  # mean P(S) of the intact model
    accuracy: float  # share of sentences where IO is the most likely next word, intact
    ablated_p_io: dict  # how ("zero", "mean") -> (C,) mean P(IO) with component c removed that way
    ablated_p_s: dict  # how -> (C,) mean P(S)
    ablated_accuracy: dict  # how -> (C,) accuracy

    def change(self, how: str = "zero") -> np.ndarray:
        """(C,) the change in mean P(IO) that removing each component causes (negative: it hurts)."""
        return self.ablated_p_io[how] - self.p_io


def ablation_study(params: dict, config: GPTConfig, vocab: Vocab, sentences, comps=None, hows=HOWS,
                   chunk: int = 32) -> AblationStudy:
    """Evaluate the intact model, then the model with each of ``comps`` (default: all) removed in each of ``hows``.

    The means for "mean" come from the same sentences (``component_means``).
    """
    sentences = list(sentences)
    comps = components(config) if comps is None else tuple(comps)
    for c in comps:
        _check(c, config)
    if not hows or any(h not in HOWS for h in hows):
        raise ValueError(f"hows must be a non-empty selection of {HOWS}, got {hows!r}")
    base = heldout_metrics(params, config, vocab, sentences, chunk)
    means = component_means(params, config, vocab, sentences, chunk) if "mean" in hows else {}
    p_io, p_s, acc = {}, {}, {}
    for how in hows:
        runs = [heldout_metrics(ablate(params, config, c, means.get(c) if how == "mean" else None), config, vocab,
                                sentences, chunk) for c in comps]
        p_io[how] = np.array([r["p_io"].mean() for r in runs])  # (C,)
        p_s[how] = np.array([r["p_s"].mean() for r in runs])  # (C,)
        acc[how] = np.array([r["correct"].mean() for r in runs])  # (C,)
    return AblationStudy(comps, len(sentences), float(base["p_io"].mean()), float(base["p_s"].mean()),
                         float(base["correct"].mean()), p_io, p_s, acc)
