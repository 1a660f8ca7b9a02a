"""The view behind Part III, "Adam and the warm-up schedule": move the step number along the 2017 learning-rate curve.

``warmup_state`` is the widget callback (pure, well under a millisecond): the schedule
lr(t) = d_model^-0.5 min(t^-0.5, t warmup^-1.5) over steps 1 .. t_max, its value at the chosen step, and
the distance a weight travels by then if every Adam step moves it by lr (Adam's step is lr * sign(g)
when the gradient never changes). ``draw_warmup`` draws the curve with steps 1, ``warmup`` and t marked.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..optim import warmup_lr


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


def draw_warmup(fig, state: WarmupState) -> None:
    """Left: lr against the step, steps 1, warmup and t marked. Right: Σ lr up to each step.

    The legend sits above the left panel, outside the data; every text is 9 pt or more.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1.0]})
    ax.plot(state.steps, state.lr * 1e3, color="tab:blue", lw=1.5)
    ax.plot([1], [state.lr_1 * 1e3], "o", color="tab:gray", ms=5, label="step 1")
    ax.plot([state.warmup], [state.lr_peak * 1e3], "s", color="tab:orange", ms=5, label=f"step {state.warmup}")
    ax.plot([state.t], [state.lr_t * 1e3], "o", color="black", ms=7, mfc="none",
            label=f"t = {state.t}: lr = {state.lr_t:.3e}")
    ax.axvline(state.warmup, color="tab:orange", lw=0.6, ls=":")
    ax.set_xlabel("step t")
    ax.set_ylabel(r"learning rate ($10^{-3}$)")
    ax.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=2,
              handletextpad=0.3, columnspacing=0.8, borderaxespad=0.2)
    ax2.plot(state.steps, state.travelled, color="tab:green", lw=1.5)
    ax2.plot([state.t], [state.travelled_t], "o", color="black", ms=7, mfc="none")
    ax2.set_xlabel("step t")
    ax2.set_ylabel(r"$\sum_{s \leq t}$ lr(s)")
    ax2.set_title(f"sum to t = {state.travelled_t:.4f}", fontsize=9)
    for a in (ax, ax2):
        a.tick_params(labelsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.74, wspace=0.35)


def warmup_view(t_max: int = 20000):
    """Return ``draw(fig, setting)``; ``setting`` has keys t, d_model, warmup."""
    def draw(fig, setting: dict) -> None:
        draw_warmup(fig, warmup_state(setting["t"], setting["d_model"], setting["warmup"], t_max))

    return draw
