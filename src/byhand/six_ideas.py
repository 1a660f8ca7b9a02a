"""Part I's six ideas as numbers, for any ``byhand`` GPT: the final-position guess, one head's query-key sum,
the sentence's probability and a few steps of learning.

Taught in Part I (its chapters call it on the book's own trained model, from ``byhand.ioi.load_model``) and in
the appendix "Running the book's code on GPT-2", which runs it on GPT-2 small where its weights exist locally. "The math
inside a transformer" tells the same six ideas with figures from GPT-2 small (``byhand.reported``);
``six_ideas_numbers`` computes each of them for any model ``byhand.gpt`` runs, and ``summary`` names them with the
keys of ``byhand.reported.gpt2_reported()`` for a side-by-side table.

For a prompt x_0 .. x_{T-1} (x_0 is the start token, if the tokenizer adds one) and its answer a:

    p       = softmax(z),  z = logits at position T-1             (V,)   loss = -log p_a,  dloss/dz = p - y
    q, k    = head (l, j)'s query at T-1 and key at a's first mention   (d_k,)
    s_raw   = q . K_t for every position t;  s = s_raw / sqrt(d_k)  (T,)   shares = softmax(s_raw), softmax(s)
    P(text) = prod_t p(x_t | x_<t) over prompt + answer,   -log P(text) = sum_t -log p(x_t | x_<t)
    theta  <- theta - lr * dloss/dtheta   (plain SGD on the final-position loss), repeated ``steps`` times

The tokenizer is anything with ``encode(text) -> ids`` and ``decode(ids) -> str`` (``byhand.gpt2.HFTokenizer``,
``byhand.ioi.Vocab``). The answer's id is the one token that ``encode(prompt + answer)`` adds to ``encode(prompt)``;
the optional subject (the name that should lose) is found the same way.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from byhand.gpt import GPTConfig, gpt_forward, gpt_loss, gpt_loss_and_grads
from byhand.ioi import EXAMPLE
from byhand.softmax import log_softmax_forward, softmax_forward


@dataclass(frozen=True)
class FinalPosition:
    """What the model predicts after the prompt, and the slope of the loss there."""

    tokens: tuple[str, ...]  # the prompt's tokens, decoded one by one (T,)
    answer: str  # the correct next token, decoded
    answer_id: int  # its id a
    logits: np.ndarray  # (V,) scores z at the final position
    probs: np.ndarray  # (V,) p = softmax(z)
    top_ids: np.ndarray  # (k,) ids of the k most likely next tokens, most likely first
    top_words: tuple[str, ...]  # (k,) those tokens, decoded
    p_answer: float  # p_a
    loss: float  # -log p_a
    dlogits: np.ndarray  # (V,) dloss/dz = p - y
    dh: np.ndarray  # (d_model,) dloss/dh for the final vector h (ln_f's output): W_head (p - y)


@dataclass(frozen=True)
class HeadScores:
    """One head's query at the final position against every key, before and after the sqrt(d_k) scaling."""

    layer: int  # l, counted from 0
    head: int  # j, counted from 0
    key_pos: int  # position of the answer's first mention (the key under the microscope)
    q: np.ndarray  # (d_k,) query at the final position, bias included
    k: np.ndarray  # (d_k,) key at key_pos
    keys: np.ndarray  # (T, d_k) the head's key at every position; keys[key_pos] is k
    running: np.ndarray  # (d_k,) running total of q_i k_i; its last entry is q . k
    raw: np.ndarray  # (T,) q . K_t for every position t
    scaled: np.ndarray  # (T,) raw / sqrt(d_k): the scores attention uses
    share_raw: np.ndarray  # (T,) softmax(raw): what attention would be without the scaling
    share_scaled: np.ndarray  # (T,) softmax(scaled): the head's real attention row


@dataclass(frozen=True)
class SentenceProb:
    """The probability of prompt + answer, one next-token probability at a time."""

    words: tuple[str, ...]  # (n,) the predicted tokens x_1 .. x_T, decoded
    probs: np.ndarray  # (n,) p(x_t | x_<t)
    costs: np.ndarray  # (n,) -log p(x_t | x_<t)
    total_cost: float  # sum of the costs = -log P(text)
    product: float  # P(text) = product of probs


@dataclass(frozen=True)
class SGDRun:
    """Plain SGD on the final-position loss: where loss and P(answer) go, step by step."""

    lr: float  # learning rate eta
    loss: np.ndarray  # (steps + 1,) loss before any step, then after each step
    p_answer: np.ndarray  # (steps + 1,) P(answer) at the same moments
    p_top: np.ndarray  # (steps + 1, k) P of each of FinalPosition.top_ids at the same moments
    line_scales: np.ndarray  # (m,) multipliers s of the first step: theta - s * lr * g
    line_loss: np.ndarray  # (m,) loss at theta - s * lr * g (s = 1 is the first step)


@dataclass(frozen=True)
class SixIdeas:
    """Every number of the six ideas for one model, prompt and answer."""

    final: FinalPosition
    head: HeadScores
    sentence: SentenceProb
    sgd: SGDRun
    subject_id: int | None = None  # id of the subject token (the name that should lose), if one was given
    subject_pos: tuple[int, ...] = ()  # its positions in the prompt
    answer_first: int | None = None  # index into sentence.costs of the answer's first mention in the prompt
    watch: tuple[tuple[str, int, int | None], ...] = ()  # (word as given, its id, index into sentence.costs or None)


def answer_ids(tokenizer, prompt: str, answer: str) -> tuple[np.ndarray, int]:
    """(prompt ids (T,), answer id): the answer must add exactly one token after the prompt's own tokens."""
    ids = np.asarray(tokenizer.encode(prompt), dtype=np.int64)  # (T,)
    full = np.asarray(tokenizer.encode(prompt + answer), dtype=np.int64)  # (T + 1,)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"the prompt {prompt!r} encodes to no tokens")
    if full.size != ids.size + 1 or not np.array_equal(full[:-1], ids):
        raise ValueError(f"answer {answer!r} must add exactly one token to the prompt's tokens; "
                         f"it adds {full.size - ids.size}")
    return ids, int(full[-1])


def _final_and_head(trace, ids, a, tokenizer, config, layer, head, key_pos, top_k):
    """The FinalPosition and HeadScores of one traced forward on the prompt (batch of one)."""
    decode = tokenizer.decode
    p = trace["p"][0, -1]  # (V,)
    top = np.argsort(-p, kind="stable")[:top_k]  # (k,)
    final = FinalPosition(tokens=tuple(decode([i]) for i in ids), answer=decode([a]), answer_id=a,
                          logits=trace["logits"][0, -1], probs=p, top_ids=top,
                          top_words=tuple(decode([i]) for i in top), p_answer=float(p[a]),
                          loss=float(-np.log(p[a])), dlogits=trace["dlogits"][0, -1], dh=trace["dln_f"][0, -1])
    if key_pos is None:
        mentions = np.flatnonzero(ids == a)
        if mentions.size == 0:
            raise ValueError(f"the answer {final.answer!r} does not occur in the prompt: pass key_pos")
        key_pos = int(mentions[0])
    if layer is None:  # the head that attends most from the final position to the answer's mention
        P_key = np.stack([trace[f"block{i}.attn.A"][0, :, -1, key_pos] for i in range(config.n_layers)])  # (L, h)
        layer, head = (int(x) for x in np.unravel_index(np.argmax(P_key), P_key.shape))
    if not (0 <= layer < config.n_layers and 0 <= head < config.n_heads and 0 <= key_pos < ids.size):
        raise ValueError(f"layer {layer}, head {head} or key_pos {key_pos} is outside the model or the prompt")
    Q = trace[f"block{layer}.attn.Q"][0, head]  # (T, d_k)
    K = trace[f"block{layer}.attn.K"][0, head]  # (T, d_k)
    q, k = Q[-1], K[key_pos]  # (d_k,), (d_k,)
    raw = K @ q  # (T,) unscaled scores of the final query against every key
    scaled = raw / np.sqrt(q.shape[-1])  # (T,)
    head_scores = HeadScores(layer=layer, head=head, key_pos=key_pos, q=q, k=k, keys=K, running=np.cumsum(q * k),
                             raw=raw, scaled=scaled, share_raw=softmax_forward(raw)[0],
                             share_scaled=softmax_forward(scaled)[0])
    return final, head_scores


def _sentence(params, config, full, decode) -> SentenceProb:
    """Next-token probabilities of every token after the first in ``full`` (T + 1,)."""
    logits, _ = gpt_forward(params, full[None, :-1], config)  # (1, T, V): position t predicts x_{t+1}
    logp, _ = log_softmax_forward(logits[0])  # (T, V)
    lp = logp[np.arange(full.size - 1), full[1:]]  # (T,) log p(x_{t+1} | x_<=t)
    total = float(-np.sum(lp, dtype=np.float64))  # summed in float64: in float32 the product can underflow
    return SentenceProb(words=tuple(decode([i]) for i in full[1:]), probs=np.exp(lp), costs=-lp,
                        total_cost=total, product=float(np.exp(-total)))


def six_ideas_numbers(params: dict, config: GPTConfig, tokenizer, prompt: str = EXAMPLE, answer: str = " Mary",
                      layer: int | None = None, head: int | None = None, key_pos: int | None = None,
                      lr: float = 2e-5, steps: int = 10, top_k: int = 5, line_scales=(),
                      subject: str | None = None, watch: tuple[str, ...] = (" the", " drink")) -> SixIdeas:
    """The six ideas' computations for ``prompt`` -> ``answer`` on any byhand GPT; ``params`` are not modified.

    layer/head pick the attention head (for GPT-2 small, "The math inside a transformer" uses 9, 9, a name-mover
    head that Wang et al. 2022 found by path patching); None picks the head whose final query attends most to
    the answer's first mention (key_pos, by default found in the prompt): a choice by attention alone. The loss
    is -log P(answer) at the final position only; ``steps`` SGD steps of size ``lr`` follow, and ``line_scales``
    adds the loss at theta - s * lr * g for each s (g the first gradient). ``subject`` (e.g. " John") records
    the id and positions of the name that should lose, for ``summary``. ``watch`` names words whose slope at the
    final position and cost in the sentence ``summary`` reports (by default the two that "The math inside a
    transformer" singles out). Arrays come back in the params' dtype.
    """
    if (layer is None) != (head is None):
        raise ValueError("give both layer and head, or neither")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr!r}")
    lr = float(lr)  # a Python float keeps float32 params in float32
    if not (isinstance(steps, int) and steps >= 0 and isinstance(top_k, int) and top_k >= 1):
        raise ValueError(f"steps must be an int >= 0 and top_k an int >= 1, got {steps!r} and {top_k!r}")
    ids, a = answer_ids(tokenizer, prompt, answer)
    subject_id = None if subject is None else answer_ids(tokenizer, prompt, subject)[1]
    subject_pos = () if subject_id is None else tuple(int(t) for t in np.flatnonzero(ids == subject_id))
    if ids.size + 1 > config.context:
        raise ValueError(f"prompt + answer has {ids.size + 1} tokens, longer than the context of {config.context}")
    targets = np.full((1, ids.size), -1, dtype=np.int64)  # (1, T): only the final position counts
    targets[0, -1] = a
    batch = (ids[None, :], targets)  # batch of one, (1, T) each
    theta = params
    losses, p_answer, p_top = [], [], []
    for t in range(steps + 1):  # pass t measures the model after t steps, and (but the last) takes a step
        loss, grads, trace = gpt_loss_and_grads(theta, batch, config)
        if t == 0:
            final, head_scores = _final_and_head(trace, ids, a, tokenizer, config, layer, head, key_pos, top_k)
            g0 = grads if len(line_scales) else None  # kept only when the line is asked for
        losses.append(loss)
        p_answer.append(trace["p"][0, -1, a])
        p_top.append(trace["p"][0, -1, final.top_ids])  # (k,)
        if t < steps:  # plain SGD, written out: optim.sgd_step would also allocate m, v, b (3 more GPT-2s)
            theta = {n: theta[n] - lr * grads[n] for n in theta}
        del grads, trace
    scales = np.asarray(line_scales, dtype=np.float64)  # (m,)
    line = [gpt_loss({n: params[n] - float(s) * lr * g0[n] for n in params}, batch, config) for s in scales]
    run = SGDRun(lr=lr, loss=np.array(losses), p_answer=np.array(p_answer), p_top=np.stack(p_top),
                 line_scales=scales, line_loss=np.array(line))
    full = np.append(ids, a)  # (T + 1,); sentence.costs[t - 1] is the cost of full[t]

    def first(i):  # index into sentence.costs of the first t >= 1 with full[t] == i, or None
        hits = np.flatnonzero(full[1:] == i)
        return int(hits[0]) if hits.size else None

    watched = tuple((w, i, first(i)) for w, i in ((w, answer_ids(tokenizer, prompt, w)[1]) for w in watch))
    first_a = first(a)
    return SixIdeas(final=final, head=head_scores, sentence=_sentence(params, config, full, tokenizer.decode), sgd=run,
                    subject_id=subject_id, subject_pos=subject_pos,
                    answer_first=first_a if first_a is not None and first_a < full.size - 2 else None, watch=watched)


def summary(r: SixIdeas) -> dict[str, float]:
    """The headline numbers of a ``SixIdeas`` as plain floats, under the keys of ``byhand.reported.gpt2_reported()``.

    The runner-up is the most likely token other than the answer; "after n steps" needs at least n steps;
    "P(subject)", "dloss/dz of the subject", "loss if the subject were the answer" and "scaled share of the
    subject" (summed over every mention) need ``subject``; the answer's first mention needs one in the prompt. Each
    watched word w adds "dloss/dz of w" and, if it occurs in the sentence, "P of w" and "cost of w" (keys spell w
    with ``repr``, quotes and leading space included); keys beyond the reported figures are the price of that.
    """
    f, h, s = r.final, r.head, r.sentence
    a = f.answer_id
    rival = int(np.argmax(np.where(np.arange(f.probs.size) == a, -np.inf, f.probs)))  # best token that is not a
    out = {"q.k at the answer": h.running[-1], "raw score at position 0": h.raw[0],
           "raw share of the answer": h.share_raw[h.key_pos], "scaled share of the answer": h.share_scaled[h.key_pos],
           "scaled share of position 0": h.share_scaled[0]}
    if r.subject_id is not None:
        out["scaled share of the subject"] = h.share_scaled[list(r.subject_pos)].sum()
    out.update({"logit of the answer": f.logits[a], "mean logit": f.logits.mean(),
                "logit gap to the runner-up": f.logits[a] - f.logits[rival], "P(answer)": f.p_answer,
                "P(runner-up)": f.probs[rival], "ratio of the answer to the runner-up": f.p_answer / f.probs[rival]})
    if r.subject_id is not None:
        out["P(subject)"] = f.probs[r.subject_id]
    out["smallest P"] = f.probs.min()
    out["loss = -log P(answer)"] = f.loss
    if r.subject_id is not None:
        out["loss if the subject were the answer"] = -np.log(f.probs[r.subject_id])
    out.update({"dloss/dz of the answer": f.dlogits[a], "dloss/dz of the runner-up": f.dlogits[rival]})
    for w, i, _ in r.watch:
        out[f"dloss/dz of {w!r}"] = f.dlogits[i]
    if r.subject_id is not None:
        out["dloss/dz of the subject"] = f.dlogits[r.subject_id]
    out.update({"words in the sentence": len(s.words), "P(sentence)": s.product, "-log P(sentence)": s.total_cost})
    if r.answer_first is not None:
        out["P of the answer's first mention"] = s.probs[r.answer_first]
        out["cost of the answer's first mention"] = s.costs[r.answer_first]
    for w, _, t in r.watch:
        if t is not None:
            out[f"P of {w!r}"], out[f"cost of {w!r}"] = s.probs[t], s.costs[t]
    out["learning rate"] = r.sgd.lr
    for n in (1, 10):
        if r.sgd.loss.size > n:
            out[f"loss after {n} step{'s' * (n > 1)}"] = r.sgd.loss[n]
            out[f"P(answer) after {n} step{'s' * (n > 1)}"] = r.sgd.p_answer[n]
    return {k: float(v) for k, v in out.items()}
