"""Exercises of Part IV and the appendix (chapters 40, 49). Each solve computes its answers, right and wrong, with byhand.

Chapter 40's exercises use the trained model's own recipe (``TrainConfig``) and its held-out sentences. The ablation
exercise runs the model on a few hundred sentences, so its ``solve`` is cached and ``check`` stays fast. The steps,
heads and small gradients an exercise asks about are named in ``INPUTS``, so that the chapter shows them from the
same place the checker reads them.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..ablation import Component, ablate, heldout_metrics
from ..ioi import generate, load_model
from ..optim import clip_grad_norm, cosine_lr
from ..train_config import TrainConfig
from . import Solution, exercise

INPUTS = {
    "inside.1": {"t": 1430},
    "inside.2": {"layer": 1, "keep": 3, "n": 250},
    "inside.3": {"grads": (np.array([[3.0, 0.0], [0.0, -4.0]]), np.array([12.0])), "c": 6.5},  # norms 5, 12; 13
}


# --- 40: inside the trained model ---------------------------------------------------------------------------------

@exercise("inside.1", "40_inside_the_model", "by hand", 1,
          "The learning rate of the cosine schedule at step 1430, from the recipe table", atol=1e-8, rtol=2e-3)
def _inside_1():
    t, tc = INPUTS["inside.1"]["t"], TrainConfig()
    w, N, lr_max, lr_min = tc.warmup, tc.steps, tc.lr_max, tc.lr_min
    s = (t - w) / (N - w)  # the share of the decay phase done
    return Solution(cosine_lr(t, lr_max, w, N, lr_min), {
        "that decays to 0; the schedule ends at η_min, so it is η_min plus a share of η_max − η_min.":
            cosine_lr(t, lr_max, w, N, 0.0),
        "ψ counts from the end of the warm-up: ψ = (t − t_warm) / (t_end − t_warm), not t / t_end.":
            lr_min + (lr_max - lr_min) * 0.5 * (1 + math.cos(math.pi * t / N)),
        "the cosine runs from 1 to −1; (1 + cos πψ) / 2 turns it into a share that runs from 1 to 0.":
            lr_min + (lr_max - lr_min) * math.cos(math.pi * s)})


@functools.lru_cache(maxsize=None)
def _heldout_p_io(layer: int, removed: tuple, n: int) -> float:
    """Mean P(IO) of the final model on the first n held-out sentences, with heads ``layer.j`` (j in removed) zeroed."""
    params, config, vocab, meta = load_model("final")
    held = generate(n, seed=meta["train"]["eval_seed"], split="heldout")  # prefix-stable: the chapter's first n
    for j in removed:  # each head owns its own rows of W_o, so the edits do not interfere
        params = ablate(params, config, Component("head", layer, j))
    return float(heldout_metrics(params, config, vocab, held)["p_io"].mean())


@exercise("inside.2", "40_inside_the_model", "compute", 2,
          "Compute mean P(IO) with three of layer 1's four heads removed, keeping head 1.3", atol=2e-4,
          precision=("dp", 4))
def _inside_2():
    d = INPUTS["inside.2"]
    layer, keep, n = d["layer"], d["keep"], d["n"]
    removed = tuple(j for j in range(4) if j != keep)
    base = _heldout_p_io(layer, (), n)
    additive = base + sum(_heldout_p_io(layer, (j,), n) - base for j in removed)  # the one-at-a-time changes, summed
    wrong = {
        "that adds up the three one-head changes from the table; heads that can stand in for each other lose little "
        "one at a time and much more together.": additive,
        "that is the intact model: no head is removed. ablate returns new weights and leaves its input alone; score "
        "the weights it returns.": base,
        f"that keeps head {layer}.0, the head the chapter kept; this exercise keeps head {layer}.{keep} and removes "
        f"the other three.": _heldout_p_io(layer, tuple(j for j in range(4) if j != 0), n)}
    # calling ablate on the intact weights each time leaves one head removed: the first (scored after one call) or
    # the last (scored after the loop); heads 1.1 and 1.2 alone give nearly the same value, so one hint covers both
    first, last = removed[0], removed[-1]
    again = ("each call to ablate started again from the intact weights. Pass the weights one call returns into the "
             "next, so that the three removals add up.")
    wrong[f"that is the model without head {layer}.{first} alone: {again}"] = _heldout_p_io(layer, (first,), n)
    wrong[f"that is the model with one head removed, not three (head {layer}.{last}, say): {again}"] = \
        _heldout_p_io(layer, (last,), n)
    return Solution(_heldout_p_io(layer, removed, n), wrong)


@exercise("inside.3", "40_inside_the_model", "code", 2,
          "Complete clip_global: scale every gradient by one factor so the global norm is at most C", atol=1e-5)
def _inside_3():
    rng = np.random.default_rng(40)
    big = [rng.normal(size=(4, 3)), rng.normal(size=(3,)), 3.0 * rng.normal(size=(2, 2))]  # norm well above 1
    uneven = [g.copy() for g in INPUTS["inside.3"]["grads"]]  # norms 5 and 12, global 13
    small = [0.1 * rng.normal(size=(2, 3)), 0.1 * rng.normal(size=(3,))]  # norm below 1: left alone
    cases = ((big, 1.0), (uneven, INPUTS["inside.3"]["c"]), (small, 1.0), (uneven, 20.0))

    def reference(grads, max_norm):
        clipped, norm = clip_grad_norm({str(i): g for i, g in enumerate(grads)}, max_norm)
        return [clipped[str(i)] for i in range(len(grads))], norm

    def per_array(grads, max_norm):
        norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads))
        return [g * min(1.0, max_norm / (np.linalg.norm(g) + 1e-6)) for g in grads], norm

    def sum_of_norms(grads, max_norm):
        norm = sum(float(np.linalg.norm(g)) for g in grads)
        coef = max_norm / (norm + 1e-6)
        return [g * min(1.0, coef) for g in grads], norm

    def always(grads, max_norm):
        norm = math.sqrt(sum(float(np.sum(g * g)) for g in grads))
        return [g * max_norm / (norm + 1e-6) for g in grads], norm

    return Solution(reference, {
        "each array was clipped on its own norm; the clip measures all of them together as one long vector and "
        "scales them all by the same factor.": per_array,
        "the global norm is the square root of the sum of all squares, not the sum of the arrays' norms.":
            sum_of_norms,
        "a gradient shorter than c is left as it is: scale only when the factor is below 1.": always}, cases)


# --- 49: running the book's code on GPT-2 ----------------------------------------------------------------------------

@exercise("gpt.1", "49_gpt2", "by hand", 1,
          "The ratio of head 9.9's scaled shares for Mary and the start token, from the two raw scores",
          atol=0.0, rtol=2e-3)
def _gpt_1():
    from ..reported import gpt2_reported  # the raw scores as "The math inside a transformer" reports them

    r = gpt2_reported()
    gap, d_k = r["q.k at the answer"] - r["raw score at position 0"], 768 // 12  # GPT-2 small: 64 per head
    return Solution(math.exp(gap / math.sqrt(d_k)), {
        "the scores are divided by √d_k before the softmax; the ratio of the raw shares is e^gap, not e^(gap/√d_k).":
            math.exp(gap),
        "the scores are divided by √d_k = 8, not by d_k = 64.": math.exp(gap / d_k),
        "the softmax turns a difference of scores into a ratio of shares, e^(difference), not the ratio of the "
        "scores themselves.": r["q.k at the answer"] / r["raw score at position 0"]})
