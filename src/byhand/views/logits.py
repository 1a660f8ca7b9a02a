"""The view behind Part II, "Logits and loss": nudge one logit, watch the probabilities and the loss.

At position t, p = softmax(z_t). Adding Δ to one logit z_t[v] raises p_v and lowers every other entry
in proportion; the mean loss L = (1/N) sum over predicted positions of -log p(target) changes, to first
order, by Δ (p_v - y_v) / N with y the one-hot target. ``logit_state`` computes it with byhand's loss.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..loss import cross_entropy_forward


@dataclass(frozen=True)
class LogitState:
    """Probabilities of position t and the mean loss before and after logits[t, v] += delta."""

    t: int  # position
    v: int  # the nudged vocabulary entry
    delta: float  # the nudge
    target: int  # the target id at position t (-1 if ignored)
    p_before: np.ndarray  # (V,) softmax of row t before
    p_after: np.ndarray  # (V,) after
    loss_before: float  # mean loss over the predicted positions, before
    loss_after: float  # after
    slope: float  # dL/dz_t[v] = (p_v - y_v) / N: the first-order change per unit of delta


def logit_state(logits, targets, t: int = 0, v: int = 0, delta: float = 0.0) -> LogitState:
    """Nudge logits[t, v] by ``delta``; logits (T, V), targets (T,) with -1 for ignored positions."""
    logits = as_float("logits", logits)
    check_ndim("logits", logits, (2,))
    T, V = logits.shape
    if not (0 <= t < T and 0 <= v < V):
        raise ValueError(f"t = {t} must be in 0..{T - 1} and v = {v} in 0..{V - 1}")
    loss0, c0 = cross_entropy_forward(logits, targets)
    z = logits.copy()
    z[t, v] += delta
    loss1, c1 = cross_entropy_forward(z, targets)
    target = int(np.asarray(targets)[t])
    y_v = 1.0 if target == v else 0.0
    slope = (c0["p"][t, v] - y_v) / c0["n"] if target != -1 else 0.0
    return LogitState(t, v, float(delta), target, c0["p"][t], c1["p"][t], float(loss0), float(loss1), float(slope))


def draw_logits(fig, state: LogitState, vocab) -> None:
    """Left: probabilities of position t (target in green, nudged token in red, before outlined). Right: loss."""
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1]})
    V = state.p_after.shape[0]
    x = np.arange(V)
    colors = ["tab:green" if k == state.target else "tab:red" if k == state.v else "tab:blue" for k in x]
    ax.bar(x, state.p_after, color=colors, width=0.6)
    ax.bar(x, state.p_before, fill=False, edgecolor="black", width=0.6, lw=0.8)
    ax.set_xticks(x, vocab, fontsize=9, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_ylim(0, 1)
    ax.set_xlabel("next token")
    ax.set_ylabel("probability")
    ax.set_title(f"position {state.t}: z[{vocab[state.v]}] += {state.delta:+.2f}; "
                 f"target {vocab[state.target] if state.target >= 0 else 'none'} (green)", fontsize=9)
    ax2.bar([0, 1], [state.loss_before, state.loss_after], color=["lightgray", "tab:purple"], width=0.6)
    ax2.plot([1], [state.loss_before + state.slope * state.delta], "_", color="black", ms=20, mew=2)
    ax2.set_xticks([0, 1], ["before", "after"], fontsize=9)
    ax2.set_ylabel("mean loss (nats)")
    ax2.set_title(f"{state.loss_before:.3f} → {state.loss_after:.3f}", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.33, top=0.85, wspace=0.35)


def logits_view(logits, targets, vocab, t: int = 0):
    """``draw(fig, setting)``; setting has keys "v" (vocabulary index) and "delta"."""
    def draw(fig, setting: dict) -> None:
        draw_logits(fig, logit_state(logits, targets, t, setting["v"], setting["delta"]), vocab)

    return draw
