"""The view behind Part II, "Scores, mask, softmax": nudge one score and watch its attention row.

For one head and query t, the row of scaled scores s = S[t] goes through the causal mask and the
softmax: p_u = exp(s_u) / sum over allowed keys of exp(s_w), and p_u = 0 for masked keys. Adding Δ
to one allowed score multiplies its weight's odds against every other key by e^Δ; adding Δ to a masked
score changes nothing. ``score_state`` returns the row before and after; ``draw_scores`` shows both.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..softmax import softmax_forward


@dataclass(frozen=True)
class ScoreState:
    """One attention row before and after S[t, s] += delta."""

    t: int  # query position
    s: int  # key position whose score is nudged
    delta: float  # the nudge
    scores: np.ndarray  # (T,) the nudged scores of row t
    allowed: np.ndarray  # (T,) bool, the mask row: True for keys 0..t
    before: np.ndarray  # (T,) the attention row before the nudge
    after: np.ndarray  # (T,) after; masked entries exactly 0, sum 1


def score_state(S, mask, t: int, s: int, delta: float = 0.0) -> ScoreState:
    """Row t of softmax(S with S[t, s] += delta, masked); S (T, T) scaled scores, mask (T, T) bool."""
    S = as_float("S", S)
    check_ndim("S", S, (2,))
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != S.shape:
        raise ValueError(f"mask must have the shape of S {S.shape}, got {mask.shape}")
    T = S.shape[0]
    if not (0 <= t < T and 0 <= s < T):
        raise ValueError(f"positions t = {t}, s = {s} must be in 0..{T - 1}")
    row = S[t].copy()  # (T,)
    before, _ = softmax_forward(row, mask=mask[t])  # (T,)
    row[s] += delta
    after, _ = softmax_forward(row, mask=mask[t])  # (T,)
    return ScoreState(t, s, delta, row, mask[t].copy(), before, after)


def draw_scores(fig, state: ScoreState, labels=None) -> None:
    """Left: the scores of row t (masked keys marked ×). Right: the attention weights, before outlined."""
    ax, ax2 = fig.subplots(1, 2)
    T = state.scores.shape[0]
    x = np.arange(T)
    labels = [str(k) for k in x] if labels is None else list(labels)
    shown = np.where(state.allowed, state.scores, 0.0)
    ax.bar(x, shown, color=np.where(x == state.s, "tab:red", "tab:blue"), width=0.6)
    ax.plot(x[~state.allowed], np.zeros((~state.allowed).sum()), "x", color="gray", ms=8, label="masked (−∞)")
    ax.axhline(0, color="gray", lw=0.6)
    ax.set_xticks(x, labels, fontsize=9, rotation=20)
    ax.set_xlabel("key position (token)")
    ax.set_ylabel("scaled score")
    ax.set_title(f"row {state.t}: score {state.s} nudged by {state.delta:+.2f}", fontsize=9)
    if (~state.allowed).any():
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi + 0.35 * (hi - lo))  # a free band at the top for the legend, above the bars
        ax.legend(fontsize=9, frameon=False, loc="upper right")
    ax2.bar(x, state.after, color=np.where(x == state.s, "tab:red", "tab:blue"), width=0.6)
    ax2.bar(x, state.before, fill=False, edgecolor="black", width=0.6, lw=0.8)
    ax2.set_ylim(0, 1)
    ax2.set_xticks(x, labels, fontsize=9, rotation=20)
    ax2.set_xlabel("key position (token)")
    ax2.set_ylabel("attention weight")
    ax2.set_title(f"weights (sum {state.after.sum():.4f}); outline: before", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.24, top=0.88, wspace=0.32)


def scores_view(S, mask, t: int, labels=None):
    """``draw(fig, setting)``; setting has keys "s" (the key whose score is nudged) and "delta"."""
    def draw(fig, setting: dict) -> None:
        draw_scores(fig, score_state(S, mask, t, setting["s"], setting["delta"]), labels)

    return draw
