"""The view behind Part II, "Logits and loss": nudge one logit, watch the probabilities and the loss.

At position t, p = softmax(z_t). Adding Δ to one logit z_t[v] raises p_v and lowers every other entry
in proportion; the mean loss L = (1/N) sum over predicted positions of -log p(target) changes, to first
order, by Δ (p_v - y_v) / N with y the one-hot target. ``logit_state`` computes it with byhand's loss;
``draw_logits`` shows both, and a move redraws only the bars, the loss and the titles (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..loss import cross_entropy_forward
from . import fmt, make_view, set_bars


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


def draw_logits(fig, state: LogitState, vocab, loss_lim: tuple[float, float] | None = None):
    """Left: probabilities of position t (target in green, nudged token in red, before outlined). Right: loss.

    Returns ``update(state)``, which moves the probability bars and their colours, the loss after the nudge, its
    straight-line prediction and the titles to another state of the same position and returns those artists
    (``byhand.live`` redraws only them). The loss panel's limits are ``loss_lim`` when given (the widget passes the
    range of every setting, so the axes stay still); else they fit this state.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1]})
    V = state.p_after.shape[0]
    x = np.arange(V)
    after = ax.bar(x, state.p_before, color="tab:blue", width=0.6)
    before = ax.bar(x, state.p_before, fill=False, edgecolor="black", width=0.6, lw=0.8)  # still, painted on top
    ax.set_xticks(x, vocab, fontsize=9, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_ylim(0, 1)
    ax.set_xlabel("next token")
    ax.set_ylabel("probability")
    title = ax.set_title("", fontsize=9)
    ax2.bar([0], [state.loss_before], color="lightgray", width=0.6)
    (loss,) = ax2.bar([1], [state.loss_before], color="tab:purple", width=0.6)
    (line,) = ax2.plot([1], [state.loss_before], "_", color="black", ms=20, mew=2)
    lo, hi = loss_lim if loss_lim is not None else (
        min(0.0, state.loss_after, state.loss_before + state.slope * state.delta),
        max(state.loss_before, state.loss_after, state.loss_before + state.slope * state.delta))
    ax2.set_xlim(-0.5, 1.5)
    ax2.set_ylim(lo, hi + 0.05 * (hi - lo))
    ax2.set_xticks([0, 1], ["before", "after"], fontsize=9)
    ax2.set_ylabel("mean loss (nats)")
    title2 = ax2.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.33, top=0.85, wspace=0.35)

    def update(new: LogitState) -> list:
        set_bars(after, new.p_after, ["tab:green" if k == new.target else "tab:red" if k == new.v else "tab:blue"
                                      for k in range(len(after))])
        loss.set_height(new.loss_after)
        line.set_ydata([new.loss_before + new.slope * new.delta])
        target = vocab[new.target] if new.target >= 0 else "none"
        title.set_text(f"position {new.t}: z[{vocab[new.v]}] += {new.delta:+.2f}; target {target} (green)")
        title2.set_text(f"{new.loss_before:.3f} → {new.loss_after:.3f}")
        return [*after, *before, title, loss, line, title2]

    update(state)
    return update


def describe_logits(s: LogitState, vocab) -> str:
    """The figure in words: the nudge, the target's and the nudged token's probabilities, the loss before and after."""
    V = s.p_after.shape[0]
    target = (f"the target “{vocab[s.target]}” has p = {fmt(s.p_after[s.target], 3)} (was "
              f"{fmt(s.p_before[s.target], 3)})" if s.target >= 0 else "this position has no target")
    return (f"Left: bar chart of the probabilities of the {V} next tokens at position {s.t} after "
            f"z[{vocab[s.v]}] is nudged by {fmt(s.delta)}, before outlined: “{vocab[s.v]}” has "
            f"p = {fmt(s.p_after[s.v], 3)} (was {fmt(s.p_before[s.v], 3)}); {target}. Right: the mean loss goes "
            f"from {fmt(s.loss_before, '.3f')} to {fmt(s.loss_after, '.3f')} nats; the straight line predicts "
            f"{fmt(s.loss_before + s.slope * s.delta, '.3f')}.")


def table_logits(s: LogitState, vocab):
    """The figure's data: each token's probability before and after the nudge."""
    return ["token", "before", "after"], [[w, b, a] for w, b, a in zip(vocab, s.p_before, s.p_after)]


def logits_view(logits, targets, vocab, t: int = 0, delta_range: tuple[float, float] = (-3.0, 5.0)):
    """``draw(fig, setting)``; setting has keys "v" (vocabulary index) and "delta".

    The loss panel's limits hold every token v and every Δ in ``delta_range`` (the widget's range): for one v the
    loss and its straight line are monotone in Δ, so the two ends bound them. ``draw`` returns ``update(setting)``
    for ``byhand.live``.
    """
    V = np.shape(logits)[1]
    ends = [logit_state(logits, targets, t, v, d) for v in range(V) for d in delta_range]
    values = [0.0] + [e.loss_before for e in ends] + [e.loss_after for e in ends] \
        + [e.loss_before + e.slope * e.delta for e in ends]
    loss_lim = (min(values), max(values))

    def state(setting: dict) -> LogitState:
        return logit_state(logits, targets, t, setting["v"], setting["delta"])

    return make_view(state, draw_logits, vocab, loss_lim, describe=lambda s: describe_logits(s, vocab),
                     table=lambda s: table_logits(s, vocab))
