"""The view behind Part II's backward chapters: nudge one weight by Δ and compare the loss change with g·Δ.

Taught in Part II, chapters "Backward through loss and output layer", "Through FFN and layer norm",
"Through attention", "Into embeddings" and "Checking every gradient". For one entry θ of one parameter,
with g = ∂L/∂θ from the hand-written backward,

    actual     ΔL(Δ) = L(θ + Δ) − L(θ)           (two forward passes)
    predicted  g·Δ                              (the first-order Taylor term)
    gap        ΔL(Δ) − g·Δ ≈ ½ c Δ²             (c = ∂²L/∂θ², estimated by a second difference)

For small Δ the two agree; as Δ grows the curvature term parts them. ``nudge_state`` is the widget
callback (pure, one forward and backward plus one forward, a few ms); ``nudge_curve`` sweeps Δ once for
the figure; ``nudge_view`` returns ``draw(fig, setting)`` for the figure, the widget and the static slider. A move
of the widget redraws only the markers, the line at Δ and the values beside the legends (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import is_int
from ..gpt import GPTConfig, gpt_loss, gpt_loss_and_grads
from . import fmt, make_view


def entry_index(params: dict, name: str, index) -> tuple[int, ...]:
    """``index`` as a tuple that picks exactly one entry of ``params[name]``; ValueError naming what is wrong."""
    if name not in params:
        raise ValueError(f"unknown parameter {name!r}; the parameters are {', '.join(params)}")
    shape = np.shape(params[name])
    idx = (index,) if isinstance(index, (int, np.integer)) else tuple(index)
    if len(idx) != len(shape):
        raise ValueError(f"index {index!r} has {len(idx)} entries, but {name} has shape {shape}")
    for i, n in zip(idx, shape):
        if not is_int(i) or not 0 <= i < n:
            raise ValueError(f"index {index!r} is outside {name} of shape {shape}")
    return tuple(int(i) for i in idx)


def nudged_loss(params: dict, batch, config: GPTConfig, name: str, index, delta: float) -> float:
    """The loss with one entry moved: L(θ + Δ e_index), by a forward pass only. ``params`` is not modified."""
    idx = entry_index(params, name, index)
    moved = dict(params)  # a shallow copy: only the nudged array is replaced
    moved[name] = np.array(params[name], dtype=np.float64)  # (shape of the parameter) a fresh copy
    moved[name][idx] += delta
    return gpt_loss(moved, batch, config)


@dataclass(frozen=True)
class NudgeState:
    """One nudge of one weight: the actual loss change beside the first-order prediction."""

    name: str  # the parameter, e.g. "W_out"
    index: tuple[int, ...]  # the entry of that parameter, counted from 0 as in NumPy
    delta: float  # Δ, added to the entry
    theta: float  # the entry's value before the nudge
    loss: float  # L(θ)
    loss_nudged: float  # L(θ + Δ)
    grad: float  # g = ∂L/∂θ from the hand-written backward
    actual: float  # L(θ + Δ) − L(θ)
    predicted: float  # g·Δ
    gap: float  # actual − predicted: what the first-order term misses


def nudge_state(params: dict, batch, config: GPTConfig, name: str, index, delta: float) -> NudgeState:
    """Nudge ``params[name][index]`` by ``delta``: the loss change and its first-order prediction g·Δ.

    batch = (ids, targets) as for ``gpt_loss_and_grads``. One forward and backward give L and g, one more
    forward gives L(θ + Δ). Pure: ``params`` is not modified.
    """
    idx = entry_index(params, name, index)
    delta = float(delta)
    if not np.isfinite(delta):
        raise ValueError(f"delta must be a finite number, got {delta}")
    loss, grads, _ = gpt_loss_and_grads(params, batch, config)
    grad = float(grads[name][idx])
    loss_nudged = nudged_loss(params, batch, config, name, idx, delta)
    actual = loss_nudged - loss
    predicted = grad * delta
    return NudgeState(name, idx, delta, float(np.asarray(params[name])[idx]), loss, loss_nudged, grad,
                      actual, predicted, actual - predicted)


@dataclass(frozen=True)
class NudgeCurve:
    """The loss change along a sweep of Δ, for the figure (computed once per chosen weight)."""

    deltas: np.ndarray  # (n,) the Δ values, increasing
    actual: np.ndarray  # (n,) L(θ + Δ) − L(θ)
    predicted: np.ndarray  # (n,) g·Δ
    curvature: float  # c ≈ ∂²L/∂θ² from a central second difference, so gap ≈ ½ c Δ²


def nudge_curve(params: dict, batch, config: GPTConfig, name: str, index, span: float, n: int = 41,
                h: float = 1e-3) -> NudgeCurve:
    """Sweep Δ over ``n`` points of [−span, span]: actual ΔL, g·Δ and the curvature c (one forward per point)."""
    idx = entry_index(params, name, index)
    if not span > 0:
        raise ValueError(f"span must be positive, got {span}")
    if n < 3:
        raise ValueError(f"a curve needs at least 3 points, got n = {n}")
    loss, grads, _ = gpt_loss_and_grads(params, batch, config)
    grad = float(grads[name][idx])
    deltas = np.linspace(-span, span, n)  # (n,)
    actual = np.array([nudged_loss(params, batch, config, name, idx, d) for d in deltas]) - loss  # (n,)
    # second difference (L(+h) - 2 L + L(-h)) / h^2: O(h^2) truncation, round-off ~1e-16 / h^2 = 1e-10
    up = nudged_loss(params, batch, config, name, idx, h)
    down = nudged_loss(params, batch, config, name, idx, -h)
    curvature = (up - 2.0 * loss + down) / h**2
    return NudgeCurve(deltas, actual, grad * deltas, float(curvature))


def entry_label(name: str, index: tuple[int, ...]) -> str:
    """The entry as a reader types it into Python, counted from 0 like the whole book: ``W_out[0, 3]``."""
    return f"{name}[{', '.join(str(int(i)) for i in index)}]"


def signed(x: float, decimals: int) -> str:
    """``x`` with its sign always written, ``+`` or a true minus ``−`` (the two are equally wide, so a column of
    values does not jitter when the sign flips)."""
    return f"{x:+.{decimals}f}".replace("-", "−")


def legend_values(ax, legend, rows: int):
    """Moving texts, one per legend entry in ``range(rows)``, in a column just right of ``legend``.

    A legend whose labels carry the current values would be redrawn whole on every move, its static labels too;
    the values are cheaper as separate texts. Each sits level with its entry's label (``xycoords`` pairs the
    legend's right edge with the bottom of the label's box) and is drawn after the legend (higher zorder), so the label
    is placed before it is read. Build the legend with ``borderpad=0``: its box then ends where the values start.
    """
    labels = legend.get_texts()
    return [ax.annotate("", xy=(1.0, 0.0), xycoords=(legend, labels[k]), va="bottom", ha="left", fontsize=9,
                        zorder=legend.get_zorder() + 1, annotation_clip=False) for k in range(rows)]


def draw_nudge(fig, state: NudgeState, curve: NudgeCurve):
    """Left: actual ΔL and g·Δ against Δ, the current Δ marked. Right: their gap against Δ, with ½ c Δ².

    Each panel's legend sits above it, outside the data, with the current values beside it; every text is 9 pt or
    more. Returns ``update(state)``, which moves the dotted line at Δ, the three markers and the values to another Δ
    of the same weight and returns those artists (``byhand.live`` redraws only them). The curves do not depend on Δ
    and fix the limits before anything moving is placed, so the axes stay still over the sweep.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    ax.plot(curve.deltas, curve.actual, color="tab:blue", lw=1.8, label="actual ΔL = ")
    ax.plot(curve.deltas, curve.predicted, color="tab:orange", lw=1.4, ls="--", label="prediction g·Δ = ")
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    ax.set_xlabel(f"nudge Δ of {entry_label(state.name, state.index)}")
    ax.set_ylabel("change of the loss (nats)")
    gap = curve.actual - curve.predicted  # (n,)
    ax2.plot(curve.deltas, gap, color="tab:purple", lw=1.8, label="gap ΔL − g·Δ = ")
    ax2.plot(curve.deltas, 0.5 * curve.curvature * curve.deltas**2, color="black", lw=1.0, ls=":", label="½ c Δ²")
    ax2.axhline(0, color="gray", lw=0.6, zorder=1)
    ax2.set_xlabel("nudge Δ")
    ax2.set_ylabel("gap (nats)")
    values = []
    for a, rows in ((ax, 2), (ax2, 1)):
        a.autoscale_view()  # fixed by the swept curves alone: the markers of any Δ in the sweep lie on them
        a.set_autoscale_on(False)
        legend = a.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=1,
                          handlelength=1.8, handletextpad=0.4, borderpad=0.0, borderaxespad=0.6)
        values += legend_values(a, legend, rows)
        a.tick_params(labelsize=9)
    at = ax.axvline(state.delta, color="gray", lw=0.8, ls=":")
    (mark_actual,) = ax.plot([state.delta], [state.actual], "o", color="tab:blue")
    (mark_predicted,) = ax.plot([state.delta], [state.predicted], "s", color="tab:orange")
    (mark_gap,) = ax2.plot([state.delta], [state.gap], "o", color="tab:purple")
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.76, wspace=0.42)

    def update(new: NudgeState) -> list:
        at.set_xdata([new.delta, new.delta])
        mark_actual.set_data([new.delta], [new.actual])
        mark_predicted.set_data([new.delta], [new.predicted])
        mark_gap.set_data([new.delta], [new.gap])
        values[0].set_text(signed(new.actual, 4))
        values[1].set_text(signed(new.predicted, 4))
        values[2].set_text(signed(new.gap, 5))
        return [at, mark_actual, mark_predicted, mark_gap, *values]

    update(state)
    return update


def describe_nudge(s: NudgeState, curve: NudgeCurve) -> str:
    """The figure in words: the nudge, the actual change beside its prediction, and the gap beside ½ c Δ²."""
    return (f"Left: the change of the loss and its first-order prediction g·Δ (g = {fmt(s.grad, '.4f')}) against the "
            f"nudge Δ of {entry_label(s.name, s.index)}, from {fmt(curve.deltas[0])} to {fmt(curve.deltas[-1])}, "
            f"marked at Δ = {fmt(s.delta)}: actual {signed(s.actual, 4)}, predicted {signed(s.predicted, 4)}. Right: "
            f"their gap, {signed(s.gap, 5)}, beside ½ c Δ² with curvature c = {fmt(curve.curvature, '.4f')}.")


def nudge_view(params: dict, batch, config: GPTConfig, name: str, index, span: float, n: int = 41):
    """Return ``draw(fig, setting)`` with ``setting = {"delta": Δ}``; the Δ sweep is computed once, here.

    The limits are those of the sweep over [−span, span] (the chapters' sliders reach the same range), so a drag
    moves the markers and not the axes. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    curve = nudge_curve(params, batch, config, name, index, span, n)

    def state(setting: dict) -> NudgeState:
        return nudge_state(params, batch, config, name, index, setting["delta"])

    return make_view(state, draw_nudge, curve, describe=lambda s: describe_nudge(s, curve))
