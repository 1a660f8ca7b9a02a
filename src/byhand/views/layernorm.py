"""The view behind Part II, "Layer norm and residuals": layer norm undoes a row's scale and shift.

For a row x, LN(α x + b) = LN(x) for any α > 0 and any b, up to eps: the mean removes b and the
standard deviation removes α. Only when α^2 var(x) comes near eps does eps show, and the output shrinks:
y = gamma (x - mu) / sqrt(var + eps) + beta. ``ln_state`` scales and shifts one row and normalises it;
``draw_ln`` shows both, and a move redraws only the bars, the mean and the titles (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..layernorm import layernorm_forward
from . import fmt, make_view, set_bars, span


@dataclass(frozen=True)
class LNState:
    """One row, scaled and shifted, before and after layer norm."""

    scale: float  # α
    shift: float  # b
    x: np.ndarray  # (D,) α x_row + b
    y: np.ndarray  # (D,) LN of it
    y_ref: np.ndarray  # (D,) LN of the unscaled row, for comparison
    mean: float  # mean of x
    std: float  # sqrt(var(x) + eps), what LN divides by

    @property
    def gap(self) -> float:
        """The largest |LN(α x + b) − LN(x)| over the entries."""
        return float(np.max(np.abs(self.y - self.y_ref)))


def ln_state(x_row, gamma, beta, eps: float = 1e-5, scale: float = 1.0, shift: float = 0.0) -> LNState:
    """LN(scale x_row + shift) next to LN(x_row); x_row, gamma, beta (D,)."""
    x_row = as_float("x_row", x_row)
    check_ndim("x_row", x_row, (1,))
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    x = scale * x_row + shift  # (D,)
    y, cache = layernorm_forward(x, gamma, beta, eps)  # (D,)
    y_ref, _ = layernorm_forward(x_row, gamma, beta, eps)  # (D,)
    return LNState(float(scale), float(shift), x, y, y_ref, float(x.mean()), float(np.sqrt(x.var() + eps)))


def draw_ln(fig, state: LNState, xlim: tuple[float, float] | None = None):
    """Left: the scaled, shifted row and its mean (red). Right: its layer norm, with the unscaled row's layer norm
    outlined.

    Returns ``update(state)``, which moves the bars, the mean and the titles to another scale and shift of the same
    row and returns those artists (``byhand.live`` redraws only them). The left panel's limits are ``xlim`` (the
    range of the input values) when given; the widget passes the range of every setting it offers, so the axes
    stay still and a larger α shows as taller bars. Else they fit this state.
    """
    ax, ax2 = fig.subplots(1, 2)
    i = np.arange(state.x.shape[0])  # entries counted from 0
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    bars = ax.bar(i, state.x, color="tab:gray", width=0.7)
    mean = ax.axhline(state.mean, color="tab:red", lw=1)
    ax.set_xlabel(f"entry of the row (0 to {i[-1]})")
    ax.set_ylabel("input value")
    title = ax.set_title("", fontsize=9)
    lo, hi = xlim if xlim is not None else span(state.x)
    ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax2.axhline(0, color="gray", lw=0.6, zorder=1)
    after = ax2.bar(i, state.y, color="tab:blue", width=0.7)
    ref = ax2.bar(i, state.y_ref, fill=False, edgecolor="tab:orange", ls="--", width=0.7, lw=1.3, zorder=3)  # still, on top
    ax2.set_ylim(-3, 3)
    ax2.set_xlabel(f"entry of the row (0 to {i[-1]})")
    ax2.set_ylabel("layer-norm output")
    title2 = ax2.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.85, wspace=0.3)

    def update(new: LNState) -> list:
        set_bars(bars, new.x)
        mean.set_ydata([new.mean, new.mean])
        title.set_text(f"α·x + b, α = {new.scale:.3g}, b = {new.shift:g}; mean (red) {new.mean:.3f}")
        set_bars(after, new.y)
        title2.set_text(f"LN; dashed: LN(x). Largest gap {np.abs(new.y - new.y_ref).max():.4f}")
        return [*bars, mean, title, *after, *ref, title2]

    update(state)
    return update


def describe_ln(s: LNState) -> str:
    """The figure in words: the scaled row's mean and spread, and how far its layer norm is from the unscaled one's."""
    D = s.x.shape[0]
    return (f"Left: bar chart of the {D} entries of the row scaled by α = {fmt(s.scale, '.3g')} and shifted by "
            f"b = {fmt(s.shift, 'g')}, from {fmt(s.x.min(), 3)} to {fmt(s.x.max(), 3)}, with its mean {fmt(s.mean, 3)} "
            f"as a red line; layer norm divides by {fmt(s.std, '.3g')}. Right: its layer norm, from "
            f"{fmt(s.y.min(), 3)} to {fmt(s.y.max(), 3)}, over the layer norm of the unscaled row (dashed orange outline); the "
            f"largest gap between the two is {fmt(s.gap, '.4f')}.")


def table_ln(s: LNState):
    """The figure's data: each entry of the row, its layer norm and the unscaled row's layer norm."""
    return ["entry", "α·x + b", "LN(α·x + b)", "LN(x)"], [[i, *v] for i, v in enumerate(zip(s.x, s.y, s.y_ref))]


def ln_view(x_row, gamma, beta, eps: float = 1e-5, scale_range: tuple[float, float] = (1e-3, 10.0),
            shift_max: float = 5.0):
    """``draw(fig, setting)``; setting has keys "scale" and "shift".

    The left panel's limits hold every setting with α in ``scale_range`` and ``|b| <= shift_max`` (the widget's
    ranges): α x + b is linear in α and b, so the corners bound it. ``draw`` returns ``update(setting)`` for
    ``byhand.live``.
    """
    x_row = as_float("x_row", x_row)
    corners = [a * x_row + b for a in scale_range for b in (-abs(shift_max), abs(shift_max))]
    xlim = span(*corners)

    def state(setting: dict) -> LNState:
        return ln_state(x_row, gamma, beta, eps, setting["scale"], setting["shift"])

    return make_view(state, draw_ln, xlim, describe=describe_ln, table=table_ln)
