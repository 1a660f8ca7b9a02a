"""The view behind Part III, "Adam and the warm-up schedule": move the step number along the 2017 learning-rate curve.

``warmup_state`` is the widget callback (pure, well under a millisecond): the schedule
lr(t) = d_model^-0.5 min(t^-0.5, t warmup^-1.5) over steps 1 .. t_max, its value at the chosen step, and
the distance a weight travels by then if every Adam step moves it by lr (Adam's step is lr * sign(g)
when the gradient never changes). ``draw_warmup`` draws the curve with steps 1, ``warmup`` and t marked, on
log-log axes fixed for every setting of the controls; a move of the widget redraws only the curves, the marks, the
legend and the title (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..optim import warmup_lr
from . import fmt, make_view


@dataclass(frozen=True)
class WarmupState:
    """Everything the view shows for one step number."""

    t: int  # the chosen step (1-based)
    d_model: int  # model width in the schedule
    warmup: int  # warm-up steps
    steps: np.ndarray  # (t_max,) 1 .. t_max
    lr: np.ndarray  # (t_max,) the schedule at each step
    lr_t: float  # lr at step t
    lr_1: float  # lr at step 1
    lr_peak: float  # lr at step warmup, the largest
    travelled: np.ndarray  # (t_max,) Σ_{s <= t} lr(s): how far steps of size lr add up to
    travelled_t: float  # that sum at step t


def warmup_state(t: int, d_model: int = 512, warmup: int = 4000, t_max: int = 20000) -> WarmupState:
    """The schedule over 1 .. t_max and its numbers at step ``t`` (ValueError if t is outside 1 .. t_max)."""
    if not 1 <= t <= t_max:
        raise ValueError(f"step t = {t} is outside 1..{t_max}")
    steps = np.arange(1, t_max + 1)  # (t_max,)
    # the formula vectorised; warmup_lr (scalar) is the reference and is called for the marked points
    lr = d_model**-0.5 * np.minimum(steps**-0.5, steps * warmup**-1.5)  # (t_max,)
    travelled = np.cumsum(lr)  # (t_max,)
    return WarmupState(t, d_model, warmup, steps, lr, warmup_lr(t, d_model, warmup), warmup_lr(1, d_model, warmup),
                       warmup_lr(warmup, d_model, warmup), travelled, float(travelled[t - 1]))


def draw_warmup(fig, state: WarmupState, limits: tuple[tuple[float, float], float] | None = None):
    """Left: lr against the step on log-log axes, steps 1, warmup and t marked. Right: Σ lr up to each step, on a
    log-log axes (the sum grows from one step's rate to a few units).

    On log-log axes the schedule is two straight lines, slope 1 (the linear ramp) and slope −1/2 (the 1/√t decay),
    meeting at the warm-up step; d_model shifts both up or down. The legend sits above the left panel, outside the
    data, and carries the current values; every text is 9 pt or more. ``limits`` is ``((lr_lo, lr_hi), sum_hi)``,
    a range that holds every setting of a widget (``warmup_limits``), so that the axes stay still; without it the
    axes fit this state. Returns ``update(state)``, which moves the curves, the marks, the line at the warm-up
    step, the legend and the title to another state and returns those artists (``byhand.live`` redraws only them).
    """
    if limits is None:
        limits = ((float(state.lr.min()), float(state.lr.max())), float(state.travelled[-1]))
    (lr_lo, lr_hi), sum_hi = limits
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1.0]})
    (curve,) = ax.loglog(state.steps, state.lr, color="tab:blue", lw=1.5)
    (first,) = ax.plot([1], [state.lr_1], "o", color="tab:gray", ms=5, label=" ")
    (peak,) = ax.plot([state.warmup], [state.lr_peak], "s", color="tab:orange", ms=5, label=" ")
    (mark,) = ax.plot([state.t], [state.lr_t], "o", color="black", ms=7, mfc="none", label=" ")
    ax.set_xlim(0.7, state.steps[-1] * 1.4)
    ax.set_ylim(lr_lo / 2.0, lr_hi * 2.0)
    at = ax.axvline(state.warmup, color="tab:orange", lw=0.6, ls=":")
    ax.set_xlabel("step t")
    ax.set_ylabel("learning rate")
    legend = ax.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=2,
                       handletextpad=0.3, columnspacing=0.8, borderaxespad=0.2)
    (total,) = ax2.plot(state.steps, state.travelled, color="tab:green", lw=1.5)
    (mark2,) = ax2.plot([state.t], [state.travelled_t], "o", color="black", ms=7, mfc="none")
    ax2.set_xscale("log")  # like the left panel: the sum runs from one step's rate (about 1e-7) to a few units
    ax2.set_yscale("log")
    ax2.set_xlim(0.7, state.steps[-1] * 1.4)
    ax2.set_ylim(lr_lo / 2.0, sum_hi * 2.0)
    ax2.set_xlabel("step t")
    ax2.set_ylabel(r"$\sum_{s \leq t} \eta_s$")
    title = ax2.set_title("", fontsize=9)
    for a in (ax, ax2):
        a.tick_params(labelsize=9)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.74, wspace=0.35)
    labels = legend.get_texts()

    def update(new: WarmupState) -> list:
        curve.set_ydata(new.lr)
        first.set_ydata([new.lr_1])
        peak.set_data([new.warmup], [new.lr_peak])
        mark.set_data([new.t], [new.lr_t])
        at.set_xdata([new.warmup, new.warmup])
        labels[0].set_text("step 1")
        labels[1].set_text(f"step {new.warmup}")
        labels[2].set_text(f"t = {new.t}: η = {new.lr_t:.3e}")
        total.set_ydata(new.travelled)
        mark2.set_data([new.t], [new.travelled_t])
        title.set_text(f"sum up to t: {new.travelled_t:.3g}")
        return [at, curve, first, peak, mark, legend, total, mark2, title]

    update(state)
    return update


def warmup_limits(t_max: int, d_models, warmups) -> tuple[tuple[float, float], float]:
    """``((lr_lo, lr_hi), sum_hi)``: the smallest and largest rate and the largest sum over every step up to
    ``t_max``, every d_model in ``d_models`` and every warm-up length in ``warmups``."""
    states = [warmup_state(1, d, w, t_max) for d in d_models for w in warmups]
    return ((min(float(s.lr.min()) for s in states), max(float(s.lr.max()) for s in states)),
            max(float(s.travelled[-1]) for s in states))


def describe_warmup(s: WarmupState) -> str:
    """The figure in words: the schedule's start, peak and value at t, and the sum of the rates up to t."""
    return (f"Left: the learning rate of the 2017 schedule for d_model = {s.d_model} and {s.warmup} warm-up steps "
            f"against the step, both axes logarithmic: it climbs from {fmt(s.lr_1, '.3e')} at step 1 to its peak "
            f"{fmt(s.lr_peak, '.3e')} at step {s.warmup}, then falls as 1/√t; at t = {s.t} it is {fmt(s.lr_t, '.3e')}. "
            f"Right: the sum of the rates up to each step, {fmt(s.travelled_t, '.4g')} at t = {s.t}"
            + ("" if s.t == s.steps[-1] else f" and {fmt(s.travelled[-1], '.4f')} at step {s.steps[-1]}") + ".")


def warmup_view(t_max: int = 20000, d_models=(64, 128, 256, 512, 1024), warmups=range(500, 8001, 500)):
    """Return ``draw(fig, setting)``; ``setting`` has keys t, d_model, warmup.

    The axes hold every setting with t in 1 .. t_max, d_model in ``d_models`` and warmup in ``warmups`` (the
    chapter's controls), so that a drag moves the curves and not the axes. ``draw`` returns ``update(setting)``
    for ``byhand.live``.
    """
    limits = warmup_limits(t_max, d_models, warmups)

    def state(setting: dict) -> WarmupState:
        return warmup_state(setting["t"], setting["d_model"], setting["warmup"], t_max)

    return make_view(state, draw_warmup, limits, describe=describe_warmup)
