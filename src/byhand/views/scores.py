"""The view behind Part II, "Scores, mask, softmax": nudge one score and watch its attention row.

For one head and query t, the row of scaled scores s = S[t] goes through the causal mask and the
softmax: p_u = exp(s_u) / sum over allowed keys of exp(s_w), and p_u = 0 for masked keys. Adding Δ
to one allowed score multiplies its weight's odds against every other key by e^Δ; adding Δ to a masked
score changes nothing. ``score_state`` returns the row before and after; ``draw_scores`` shows both, and a move
redraws only the bars and titles (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.patches import Patch

from ..checks import as_float, check_ndim
from ..softmax import softmax_forward
from . import fmt, make_view, set_bars, span


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


def draw_scores(fig, state: ScoreState, labels=None, ylim: tuple[float, float] | None = None):
    """Left: the scores of row t (masked keys marked ×, the nudged key in red). Right: the attention weights, before
    outlined.

    Returns ``update(state)``, which moves the bars, their colours, the red × of a nudged masked key and the titles
    to another state of the same row and returns those artists (``byhand.live`` redraws only them). The left panel's
    limits are ``ylim`` when given (the widget passes the range of every setting, so the axes stay still); else they
    fit this state.
    """
    ax, ax2 = fig.subplots(1, 2)
    T = state.scores.shape[0]
    x = np.arange(T)
    labels = [str(k) for k in x] if labels is None else list(labels)
    masked = x[~state.allowed]
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    scores = ax.bar(x, np.zeros(T), color="tab:blue", width=0.6)
    (cross,) = ax.plot(masked, np.zeros(masked.size), "x", color="gray", ms=8, label="masked: −∞")
    (chosen,) = ax.plot([0], [0.0], "x", color="tab:red", ms=8, mew=2)  # shown when the nudged key is masked
    ax.set_xticks(x, labels, fontsize=9, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlabel("key position (token)")
    ax.set_ylabel("scaled score")
    title = ax.set_title("", fontsize=9)
    lo, hi = ylim if ylim is not None else span(np.where(state.allowed, state.scores, 0.0))
    top = hi + 0.2 * (hi - lo)  # a free band at the top for the legend, above the bars
    ax.set_ylim(lo - 0.05 * (hi - lo), top + 0.05 * (hi - lo))
    handles = [Patch(color="tab:blue", label="score"), Patch(color="tab:red", label="nudged")]
    ax.legend(handles=handles + ([cross] if masked.size else []), fontsize=9, frameon=False, loc="upper center",
              ncol=3, handlelength=1.0, handletextpad=0.4, columnspacing=0.8, borderaxespad=0.2)
    after = ax2.bar(x, state.before, color="tab:blue", width=0.6)
    before = ax2.bar(x, state.before, fill=False, edgecolor="black", width=0.6, lw=0.8)  # still, painted on top
    ax2.set_ylim(0, 1)
    ax2.set_xticks(x, labels, fontsize=9, rotation=30, ha="right", rotation_mode="anchor")
    ax2.set_xlabel("key position (token)")
    ax2.set_ylabel("attention weight")
    title2 = ax2.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.3, top=0.9, wspace=0.32)

    def update(new: ScoreState) -> list:
        colors = np.where(x == new.s, "tab:red", "tab:blue")
        set_bars(scores, np.where(new.allowed, new.scores, 0.0), colors)
        for bar, shown in zip(scores, new.allowed):  # a masked key has no score to draw: only its ×
            bar.set_visible(bool(shown))
        set_bars(after, new.after, colors)
        chosen.set_data([new.s], [0.0])
        chosen.set_visible(not new.allowed[new.s])
        title.set_text(f"row {new.t}: score {new.s} nudged by {new.delta:+.2f}")
        title2.set_text(f"weights (sum {new.after.sum():.4f}); outline: before")
        return [*scores, chosen, title, *after, *before, title2]

    update(state)
    return update


def describe_scores(s: ScoreState, labels=None) -> str:
    """The figure in words: the nudged score, the masked keys, the nudged key's weight before and after, the
    largest weight."""
    T = s.scores.shape[0]
    labels = [str(k) for k in range(T)] if labels is None else list(labels)
    top = int(np.argmax(s.after))
    masked = int(np.sum(~s.allowed))
    key = f"key {s.s} (“{labels[s.s]}”)"
    weight = (f"{key} is masked, so its weight stays 0 and nothing changes" if not s.allowed[s.s] else
              f"the weight of {key} goes from {fmt(s.before[s.s], 3)} to {fmt(s.after[s.s], 3)}")
    return (f"Left: bar chart of the {T} scaled scores of row {s.t}, the score of key {s.s} nudged by "
            f"{fmt(s.delta)}; {masked} later {'key is' if masked == 1 else 'keys are'} masked (−∞). Right: the "
            f"attention weights, which sum to {fmt(s.after.sum(), '.4f')}: {weight}; the largest weight is "
            f"{fmt(s.after[top], 3)}, on key {top} (“{labels[top]}”).")


def table_scores(s: ScoreState, labels=None):
    """The figure's data: each key's score (or "masked") and its weight before and after."""
    T = s.scores.shape[0]
    labels = [str(k) for k in range(T)] if labels is None else list(labels)
    return ["key", "token", "scaled score", "weight before", "weight after"], [
        [u, labels[u], s.scores[u] if s.allowed[u] else "masked", s.before[u], s.after[u]] for u in range(T)]


def scores_view(S, mask, t: int, labels=None, delta_max: float = 4.0):
    """``draw(fig, setting)``; setting has keys "s" (the key whose score is nudged) and "delta".

    The score panel's limits hold every setting with ``|delta| <= delta_max`` (the widget's range), so that a drag
    moves the bars and not the axes. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    row = score_state(S, mask, t, 0)
    shown = np.where(row.allowed, row.scores, 0.0)  # (T,) masked keys are drawn at 0 whatever their score
    reach = np.where(row.allowed, abs(delta_max), 0.0)  # (T,)
    ylim = span(shown - reach, shown + reach)

    def state(setting: dict) -> ScoreState:
        return score_state(S, mask, t, setting["s"], setting["delta"])

    return make_view(state, draw_scores, labels, ylim, describe=lambda s: describe_scores(s, labels),
                     table=lambda s: table_scores(s, labels))
