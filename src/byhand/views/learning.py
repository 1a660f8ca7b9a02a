"""The view behind Part I, "Learning": one gradient step θ ← θ − η·g, and the loss it lands on, against η.

The gradient g of the loss at θ is computed once. For each learning rate η the step costs one forward pass:

    L(η) = loss at θ − η·g,       L(0) − η·|g|²   (the straight line the slope at η = 0 predicts)

For small η the loss falls along the straight line; past the best η it climbs back and, for large η, ends above
where it started (overshoot). ``step_state`` is the widget callback (one forward, a few ms); ``line_curve`` sweeps η
once; ``learning_view`` returns ``draw(fig, setting)`` with ``setting = {"eta": η}``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.legend_handler import HandlerTuple

from ..gpt import GPTConfig, gpt_forward
from ..softmax import softmax_forward
from . import fmt, make_view


def step(params: dict, grads: dict, eta: float) -> dict:
    """θ − η·g for every parameter (new arrays; the inputs are not modified)."""
    if not np.isfinite(eta):
        raise ValueError(f"eta must be finite, got {eta!r}")
    return {name: params[name] - eta * grads[name] for name in params}


def final_probs(params: dict, ids, config: GPTConfig) -> np.ndarray:
    """P(next word) at the last position of ``ids`` (T,), stable softmax in float64 (V,)."""
    z = np.asarray(gpt_forward(params, ids, config)[0][-1], dtype=np.float64)  # (V,)
    return softmax_forward(z)[0]  # (V,)


@dataclass(frozen=True)
class StepState:
    """One step of size η: the loss and P(right word) before and after, and the straight-line prediction."""

    eta: float
    loss_before: float  # L(θ) = −log p_a
    loss_after: float  # L(θ − η g)
    predicted: float  # L(θ) − η |g|²
    p_before: float  # p_a at θ
    p_after: float  # p_a at θ − η g

    @property
    def verdict(self) -> str:
        """"downhill", "overshoot" or "no step", by the sign of the loss change."""
        return {1: "overshoot", 0: "no step", -1: "downhill"}[int(np.sign(self.loss_after - self.loss_before))]


def grad_norm2(grads: dict) -> float:
    """|g|², summed over every entry of every parameter."""
    return float(sum(np.sum(np.asarray(g, dtype=np.float64) ** 2) for g in grads.values()))


def step_state(params: dict, grads: dict, ids, a: int, config: GPTConfig, eta: float,
               p_before: float | None = None, g2: float | None = None) -> StepState:
    """Take one step of size η and measure; pass ``p_before`` and ``g2`` (precomputed) to need one forward only."""
    if p_before is None:
        p_before = float(final_probs(params, ids, config)[a])
    if g2 is None:
        g2 = grad_norm2(grads)
    p_after = float(final_probs(step(params, grads, eta), ids, config)[a])
    loss_before = -np.log(p_before)
    return StepState(float(eta), float(loss_before), float(-np.log(p_after)), float(loss_before - eta * g2),
                     float(p_before), p_after)


@dataclass(frozen=True)
class LineCurve:
    """The loss along the gradient direction: L(θ − η g) for a sweep of η."""

    etas: np.ndarray  # (n,) increasing, starting at 0
    loss: np.ndarray  # (n,)
    g2: float  # |g|²


def line_curve(params: dict, grads: dict, ids, a: int, config: GPTConfig, etas) -> LineCurve:
    """One forward per η in ``etas``."""
    etas = np.sort(np.asarray(etas, dtype=np.float64))
    loss = [-np.log(final_probs(step(params, grads, e), ids, config)[a]) for e in etas]
    return LineCurve(etas, np.array(loss), grad_norm2(grads))


def draw_step(fig, s: StepState, curve: LineCurve, word: str = "the right word"):
    """Left: loss against η with the straight line and the chosen step. Right: P(word) before and after.

    Returns ``update(state)``, which moves the step's point and the line under it, the "after" bar and both titles
    to another η and returns those artists (``byhand.live`` redraws only them). The limits hold the whole curve, so
    every η on it keeps the axes still.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1.3]})
    ax.plot(curve.etas, curve.loss, color="black", lw=1.6, label="loss after one step")
    line = s.loss_before - curve.etas * curve.g2
    keep = line > -0.5
    ax.plot(curve.etas[keep], line[keep], color="tab:blue", lw=1.0, ls="--",
            label=r"straight line $\mathcal{L} - \eta \|g\|^2$")
    ax.axhline(s.loss_before, color="gray", lw=0.8, ls=":", label="before the step", zorder=1)
    ax.set_xlim(ax.get_xlim())  # autoscaled to the curve, then kept for every η
    bottom, top = -0.05, curve.loss.max() * 1.1
    ax.set_ylim(bottom, top)
    (drop,) = ax.plot([], [], color="gray", lw=0.6)  # from the axis up to the step's point
    (point,) = ax.plot([], [], "o")
    lower = ax.plot([], [], "o", color="tab:green")[0]  # the colours the step's point takes, for the legend
    higher = ax.plot([], [], "o", color="tab:red")[0]
    ax.set_xlabel("learning rate η")
    ax.set_ylabel("loss −log p (nats)")
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles + [(lower, higher)], labels + ["the step: lower / higher"], fontsize=9, frameon=False,
              loc="upper left", handler_map={tuple: HandlerTuple(ndivide=None)})
    title = ax.set_title("", fontsize=9)
    before, after = ax2.bar(["before", "after"], [s.p_before, 0.0], color=["tab:gray", "tab:green"]).patches
    ax2.set_xlim(ax2.get_xlim())
    ax2.set_ylim(0, 1)
    ax2.set_ylabel(f"P({word})")
    title2 = ax2.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.86, wspace=0.4)

    def update(new: StepState) -> list:
        if new.p_before != s.p_before:
            raise ValueError("this state steps from another starting point than the figure was drawn for")
        change = int(np.sign(new.loss_after - new.loss_before))  # 0 at η = 0: no step, the loss stays exactly put
        drop.set_data([new.eta, new.eta], [bottom, min(new.loss_after, top)])
        point.set_data([new.eta], [new.loss_after])
        point.set_color({1: "tab:red", 0: "tab:gray", -1: "tab:green"}[change])
        verdict = {1: "overshoot", 0: "no step", -1: "downhill"}[change]
        title.set_text(f"η = {new.eta:.4f}: loss {new.loss_before:.3f} → {new.loss_after:.3f} ({verdict})")
        after.set_height(new.p_after)
        rise = int(np.sign(new.p_after - new.p_before))
        after.set_facecolor({1: "tab:green", 0: "tab:gray", -1: "tab:red"}[rise])  # green up, red down
        title2.set_text(f"{new.p_before:.3f} → {new.p_after:.3f}" + {1: " (up)", 0: "", -1: " (down)"}[rise])
        return [drop, point, title, after, title2]

    update(s)
    return update


def describe_step(s: StepState, word: str = "the right word") -> str:
    """The figure in words: the step's loss beside the straight line's, and P(word) before and after."""
    return (f"Left: the loss after one gradient step θ − η g against the learning rate η, with the straight line "
            f"ℒ − η‖g‖² it starts along; at η = {fmt(s.eta, '.4f')} the loss goes from {fmt(s.loss_before, '.3f')} to "
            f"{fmt(s.loss_after, '.3f')} ({s.verdict}), where the straight line predicts {fmt(s.predicted, '.3f')}. "
            f"Right: P({word}) goes from {fmt(s.p_before, '.3f')} before the step to {fmt(s.p_after, '.3f')} after it.")


def learning_view(params: dict, grads: dict, ids, a: int, config: GPTConfig, etas, word: str = "the right word"):
    """Return ``draw(fig, setting)``; the curve over ``etas``, |g|² and P before are computed once, here. ``draw``
    returns ``update(setting)`` for ``byhand.live``; the axes hold the curve over ``etas``, which should span the
    widget's range of η."""
    curve = line_curve(params, grads, ids, a, config, etas)
    p0 = float(final_probs(params, ids, config)[a])

    def state(setting: dict) -> StepState:
        return step_state(params, grads, ids, a, config, setting["eta"], p0, curve.g2)

    return make_view(state, draw_step, curve, word, describe=lambda s: describe_step(s, word))
