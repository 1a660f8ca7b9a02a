"""The view behind Part II, "Layer norm and residuals": layer norm undoes a row's scale and shift.

For a row x, LN(c x + b) = LN(x) for any c > 0 and any b, up to eps: the mean removes b and the
standard deviation removes c. Only when c^2 var(x) comes near eps does eps show, and the output shrinks:
y = gamma (x - mu) / sqrt(var + eps) + beta. ``ln_state`` scales and shifts one row and normalises it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..layernorm import layernorm_forward


@dataclass(frozen=True)
class LNState:
    """One row, scaled and shifted, before and after layer norm."""

    scale: float  # c
    shift: float  # b
    x: np.ndarray  # (D,) c x_row + b
    y: np.ndarray  # (D,) LN of it
    y_ref: np.ndarray  # (D,) LN of the unscaled row, for comparison
    mean: float  # mean of x
    std: float  # sqrt(var(x) + eps), what LN divides by


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


def draw_ln(fig, state: LNState) -> None:
    """Left: the scaled, shifted row. Right: its layer norm, with the unscaled row's layer norm outlined."""
    ax, ax2 = fig.subplots(1, 2)
    i = np.arange(state.x.shape[0])  # entries counted from 0
    ax.bar(i, state.x, color="tab:gray", width=0.7)
    ax.axhline(state.mean, color="tab:red", lw=1, label=f"mean {state.mean:.3f}")
    ax.set_xlabel(f"entry of the row (0 to {i[-1]})")
    ax.set_ylabel("input value")
    ax.set_title(f"c·x + b, c = {state.scale:g}, b = {state.shift:g}", fontsize=9)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi + 0.3 * (hi - lo))  # a free band at the top for the legend, above the bars
    ax.legend(fontsize=9, frameon=False, loc="upper left")
    ax2.bar(i, state.y, color="tab:blue", width=0.7)
    ax2.bar(i, state.y_ref, fill=False, edgecolor="black", width=0.7, lw=0.8)
    ax2.axhline(0, color="gray", lw=0.6)
    ax2.set_ylim(-3, 3)
    ax2.set_xlabel(f"entry of the row (0 to {i[-1]})")
    ax2.set_ylabel("layer-norm output")
    ax2.set_title(f"LN; outline: LN(x). Largest gap {np.abs(state.y - state.y_ref).max():.4f}", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.85, wspace=0.3)


def ln_view(x_row, gamma, beta, eps: float = 1e-5):
    """``draw(fig, setting)``; setting has keys "scale" and "shift"."""
    def draw(fig, setting: dict) -> None:
        draw_ln(fig, ln_state(x_row, gamma, beta, eps, setting["scale"], setting["shift"]))

    return draw
