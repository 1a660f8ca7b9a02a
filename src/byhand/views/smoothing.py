"""The view behind Part III, "Output, softmax and label smoothing": nudge a logit or epsilon, watch q, p - q, the loss.

``smoothing_state`` is the widget callback (pure, microseconds): it adds Δ to one logit, smooths the
one-hot target with ε and returns p, q, p - q and the loss; ``draw_smoothing`` draws it, and a move of the widget
redraws only the bars, the loss line and the numbers (``byhand.live``). Equations:

    p = softmax(z),   q = (1 - ε) onehot(target) + ε / V,   L = -Σ q_i log p_i,   dL/dz = p - q.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..softmax import log_softmax_forward
from . import fmt, make_view, set_bars


@dataclass(frozen=True)
class SmoothingState:
    """Everything the view shows for one setting of the controls (arrays are (V,))."""

    z: np.ndarray  # logits after the nudge
    p: np.ndarray  # softmax(z)
    q: np.ndarray  # smoothed target distribution
    grad: np.ndarray  # p - q, the gradient of the loss with respect to z
    loss: float  # -Σ q log p
    eps: float  # label smoothing ε
    j: int  # index of the nudged logit
    delta: float  # amount added to z[j]
    target: int  # index of the correct token
    eps_grid: np.ndarray  # (101,) ε from 0 to 0.5, for the loss curve
    loss_curve: np.ndarray  # (101,) the loss at each ε of eps_grid, same logits


def smoothing_state(logits, target: int, eps: float = 0.1, j: int = 0, delta: float = 0.0) -> SmoothingState:
    """Add ``delta`` to logit ``j``, then compute p, the ε-smoothed target q, p - q and the loss."""
    z = as_float("logits", logits).copy()
    check_ndim("logits", z, (1,))
    V = z.shape[0]
    if not 0 <= target < V:
        raise ValueError(f"target {target} is outside 0..{V - 1}")
    if not 0 <= j < V:
        raise ValueError(f"logit index j = {j} is outside 0..{V - 1}")
    if not 0.0 <= eps < 1.0:
        raise ValueError(f"eps must be in [0, 1), got {eps}")
    z[j] += delta
    logp, _ = log_softmax_forward(z)  # (V,)
    p = np.exp(logp)
    onehot = np.eye(V)[target]  # (V,)
    q = (1 - eps) * onehot + eps / V
    eps_grid = np.linspace(0.0, 0.5, 101)
    # L(ε) = -(1 - ε) log p_target - (ε / V) Σ log p: a straight line in ε
    loss_curve = -(1 - eps_grid) * logp[target] - eps_grid / V * logp.sum()  # (101,)
    return SmoothingState(z, p, q, p - q, float(-(q * logp).sum()), eps, j, delta, target, eps_grid, loss_curve)


def draw_smoothing(fig, state: SmoothingState, tokens, loss_limits: tuple[float, float] | None = None):
    """Left: p and q per token. Middle: p - q. Right: the loss against ε, with the current ε marked.

    No legend: the left panel's title names the colours and the nudged logit, so nothing covers the bars (text is
    9 pt or more).
    Returns ``update(state)``, which moves the bars, the loss line, its dot and the two titles with numbers to
    another state of the same logits and returns those artists (``byhand.live`` redraws only them). The right
    panel's vertical range is ``loss_limits`` when given (a widget passes ``loss_range``, the range of every
    setting, so the axes stay still); else it fits this state's line.
    """
    ax, ax2, ax3 = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.3, 1.1, 1.0]})
    x = np.arange(len(tokens))
    p_bars = ax.bar(x - 0.2, state.p, width=0.4, color="tab:blue")
    q_bars = ax.bar(x + 0.2, state.q, width=0.4, color="tab:orange")
    ax.set_xticks(x, tokens)
    ax.set_ylim(0, 1)
    ax.set_ylabel("probability")
    title1 = ax.set_title("", fontsize=9)
    grad_bars = ax2.bar(x, state.grad)
    ax2.axhline(0, color="gray", lw=0.6, zorder=0.5)  # under the bars, as in a moved frame
    ax2.set_xticks(x, tokens)
    ax2.set_ylim(-1, 1)
    ax2.set_ylabel(r"$\partial \mathcal{L} / \partial z = p - \tilde y$")
    title2 = ax2.set_title("", fontsize=9)
    (line,) = ax3.plot(state.eps_grid, state.loss_curve, color="tab:gray", lw=1.2)
    ax3.autoscale_view()  # ε from 0 to 0.5, the grid of every state
    ax3.set_autoscale_on(False)
    curve_span = (float(state.loss_curve.min()), float(state.loss_curve.max()))
    lo, hi = loss_limits if loss_limits is not None else curve_span
    pad = 0.05 * max(hi - lo, 1e-3)
    ax3.set_ylim(lo - pad, hi + pad)
    (dot,) = ax3.plot([state.eps], [state.loss], "o", color="black")
    ax3.set_xlabel(r"label smoothing $\epsilon_{ls}$")
    ax3.set_ylabel("loss (nats)")
    title3 = ax3.set_title("", fontsize=9)
    for a in (ax, ax2, ax3):
        a.tick_params(labelsize=9)
    for a in (ax, ax2):  # token names under narrow bars: tilted, so that "am" and "<eos>" do not run together
        a.tick_params(axis="x", labelrotation=35)
        for t in a.get_xticklabels():
            t.set_horizontalalignment("right")
            t.set_rotation_mode("anchor")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.22, top=0.88, wspace=0.6)

    def update(new: SmoothingState) -> list:
        set_bars(grad_bars, new.grad, np.where(new.grad >= 0, "tab:blue", "tab:red"))
        set_bars(p_bars, new.p)
        set_bars(q_bars, new.q)
        total = round(float(new.grad.sum()), 6) + 0.0  # 0 up to round-off; + 0.0 turns -0.0 into 0.0
        title1.set_text(f"p (blue), ỹ (orange); z[{tokens[new.j]}] {new.delta:+.2f}")
        title2.set_text(f"red < 0 < blue; Σ = {total:.4f}")
        line.set_ydata(new.loss_curve)
        dot.set_data([new.eps], [new.loss])
        title3.set_text(f"loss = {new.loss:.4f}")
        return [*p_bars, *q_bars, *grad_bars, title1, title2, line, dot, title3]

    update(state)
    return update


def loss_range(logits, target: int, delta_range: tuple[float, float], eps_max: float = 0.5,
               n: int = 801) -> tuple[float, float]:
    """The smallest and largest loss over every nudge Δ in ``delta_range`` of every logit and every ε in
    [0, ``eps_max``]: the right panel's fixed range for a widget. The loss is a straight line in ε, so its ends
    ε = 0 and ``eps_max`` bound it; Δ is sampled at ``n`` points (the chapters' sliders step it by 0.25)."""
    z = as_float("logits", logits)
    check_ndim("logits", z, (1,))
    V = z.shape[0]
    deltas = np.union1d(np.linspace(*delta_range, n), [0.0])  # (n',)
    lows, highs = [], []
    for j in range(V):
        zs = np.repeat(z[None, :], len(deltas), axis=0)  # (n', V)
        zs[:, j] += deltas
        logp, _ = log_softmax_forward(zs)  # (n', V)
        ends = [-(1 - e) * logp[:, target] - e / V * logp.sum(axis=1) for e in (0.0, eps_max)]  # 2 x (n',)
        lows.append(min(float(np.min(v)) for v in ends))
        highs.append(max(float(np.max(v)) for v in ends))
    return min(lows), max(highs)


def describe_smoothing(s: SmoothingState, tokens) -> str:
    """The figure in words: the nudge, the target's p and ỹ, the largest entry of p − ỹ, the loss at ε_ls."""
    c = int(np.argmax(np.abs(s.grad)))
    return (f"Left: bar chart of the probabilities p and the smoothed target ỹ (ε_ls = {fmt(s.eps, '.2f')}) over "
            f"the {len(tokens)} tokens, z[{tokens[s.j]}] nudged by {fmt(s.delta)}: the target “{tokens[s.target]}” "
            f"has p = {fmt(s.p[s.target], 3)} and ỹ = {fmt(s.q[s.target], 3)}. Middle: the gradient p − ỹ, whose "
            f"largest entry in size is {fmt(s.grad[c], 3)} at “{tokens[c]}”; its entries sum to 0. Right: the loss "
            f"against ε_ls, a straight line, marked at ε_ls = {fmt(s.eps, '.2f')}: loss = {fmt(s.loss, '.4f')}.")


def table_smoothing(s: SmoothingState, tokens):
    """The figure's data: p, ỹ and p − ỹ for each token."""
    return ["token", "p", "ỹ", "p − ỹ"], [[w, p, q, g] for w, p, q, g in zip(tokens, s.p, s.q, s.grad)]


def smoothing_view(logits, target: int, tokens, delta_range: tuple[float, float] = (-4.0, 4.0),
                   loss_limits: tuple[float, float] | None = None):
    """Return ``draw(fig, setting)`` for the widget and the static slider; ``setting`` has keys eps, j, delta.

    The loss panel's range holds every setting with Δ in ``delta_range`` on any logit and ε in [0, 0.5] (the
    widget's range), so that a drag moves the line and not the axes. A setting outside it still draws, its line cut
    at the panel's edge if it leaves the range. ``loss_limits``, when given, replaces that range (a static slider
    over fewer settings passes the range of its own frames, so that the slope of each line stays visible).
    ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    span = loss_range(logits, target, delta_range) if loss_limits is None else tuple(loss_limits)

    def state(setting: dict) -> SmoothingState:
        return smoothing_state(logits, target, setting["eps"], setting["j"], setting["delta"])

    return make_view(state, draw_smoothing, tokens, span, describe=lambda s: describe_smoothing(s, tokens),
                     table=lambda s: table_smoothing(s, tokens))
