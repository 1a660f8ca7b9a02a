"""The view behind Part II, "Feed-forward with GELU": the tanh form against the exact erf form.

GELU(x) = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); GPT-2 uses 0.5 x (1 + tanh(sqrt(2/pi)(x + 0.044715 x^3))).
``gelu_state(x)`` evaluates both forms (with ``byhand.activations``) at one point and along a grid, with
their difference; ``draw_gelu`` plots the curves and the difference, marking the toy's pre-activations; a move
redraws only the marked points and the titles (``byhand.live``).
``gap_peaks`` finds where the two forms part most: the local maxima of |GELU_tanh - GELU_erf|.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..activations import gelu_forward
from ..checks import as_float
from . import fmt, make_view


@dataclass(frozen=True)
class GeluState:
    """Both GELU forms at one input x and along a grid."""

    x: float  # the marked input
    tanh_at: float  # GELU_tanh(x)
    erf_at: float  # GELU_erf(x)
    grid: np.ndarray  # (n,) inputs of the curves
    tanh: np.ndarray  # (n,) GELU_tanh on the grid
    erf: np.ndarray  # (n,) GELU_erf on the grid
    samples: np.ndarray  # (m,) inputs to mark along the axis (the toy's pre-activations), may be empty

    @property
    def max_gap(self) -> float:
        """The largest |tanh form − erf form| on the grid."""
        return float(np.max(np.abs(self.tanh - self.erf)))


def gelu_state(x: float = 0.0, samples=(), lo: float = -5.0, hi: float = 5.0, n: int = 161) -> GeluState:
    """Evaluate GELU in both forms at ``x`` and on ``n`` points of [lo, hi]."""
    x = float(as_float("x", x))
    if not lo <= x <= hi:
        raise ValueError(f"x = {x} is outside the plotted range [{lo}, {hi}]")
    grid = np.linspace(lo, hi, n)  # (n,)
    both = np.append(grid, x)  # (n + 1,) the curve and the marked point in one call each
    tanh, _ = gelu_forward(both, approximate="tanh")
    erf, _ = gelu_forward(both, approximate="erf")
    return GeluState(x, float(tanh[-1]), float(erf[-1]), grid, tanh[:-1], erf[:-1],
                     np.asarray(samples, dtype=np.float64).ravel())


def gap_peaks(lo: float = -5.0, hi: float = 5.0, n: int = 100_001) -> tuple[np.ndarray, np.ndarray]:
    """Where the tanh and erf forms part most: (x, gap) at the local maxima of |GELU_tanh(x) - GELU_erf(x)|.

    Both forms are evaluated on ``n`` points of [lo, hi] (spacing 1e-4 by default, so each x is good to
    about that); a local maximum is a grid point larger than its left neighbour and at least its right
    one. The difference is even in x (both forms satisfy GELU(x) - GELU(-x) = x), so the peaks come in
    pairs ±x. Returns x (k,) in increasing order and the gap (k,) there.
    """
    if not (lo < hi and n >= 3):
        raise ValueError(f"need lo < hi and n >= 3, got lo = {lo}, hi = {hi}, n = {n}")
    grid = np.linspace(lo, hi, n)  # (n,)
    gap = np.abs(gelu_forward(grid, approximate="tanh")[0] - gelu_forward(grid, approximate="erf")[0])  # (n,)
    inner = gap[1:-1]  # (n - 2,) points with two neighbours
    peak = np.flatnonzero((inner > gap[:-2]) & (inner >= gap[2:])) + 1  # (k,) grid indices of local maxima
    return grid[peak], gap[peak]


def draw_gelu(fig, state: GeluState):
    """Left: both curves with the point x marked and ReLU for reference. Right: tanh form minus erf form.

    Returns ``update(state)``, which moves the two marked points and the titles to another x and returns those
    artists (``byhand.live`` redraws only them). The curves do not depend on x, and the limits are fixed by the
    curves before the points are placed, so the axes stay still.
    """
    ax, ax2 = fig.subplots(1, 2)
    ax.plot(state.grid, np.maximum(state.grid, 0), color="lightgray", lw=1, label="ReLU")
    ax.plot(state.grid, state.erf, color="tab:blue", lw=2.5, label="GELU, erf (exact)")
    ax.plot(state.grid, state.tanh, color="tab:orange", lw=1.2, ls="--", label="GELU, tanh (GPT-2)")
    if state.samples.size:
        ax.plot(state.samples, np.full(state.samples.shape, -0.4), "|", color="tab:green",
                ms=6, alpha=0.6, label="toy's pre-activations")
    ax.set_xlabel("input x")
    ax.set_ylabel("GELU(x)")
    title = ax.set_title("", fontsize=9)
    ax.legend(fontsize=9, frameon=False, loc="upper left")
    diff = state.tanh - state.erf
    ax2.plot(state.grid, diff * 1e4, color="tab:red", lw=1.2)
    ax2.axhline(0, color="gray", lw=0.6, zorder=1)
    ax2.set_xlabel("input x")
    ax2.set_ylabel("tanh form − erf form (× 10⁻⁴)")
    title2 = ax2.set_title("", fontsize=9)
    for a in (ax, ax2):  # fixed by the curves alone: the points lie on them
        a.autoscale_view()
        a.set_autoscale_on(False)
    (point,) = ax.plot([state.x], [state.tanh_at], "o", color="black", ms=4)
    (point2,) = ax2.plot([state.x], [(state.tanh_at - state.erf_at) * 1e4], "o", color="black", ms=4)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.17, top=0.85, wspace=0.35)

    def update(new: GeluState) -> list:
        gap = (new.tanh_at - new.erf_at) * 1e4
        point.set_data([new.x], [new.tanh_at])
        point2.set_data([new.x], [gap])
        title.set_text(f"x = {new.x:.2f}: GELU = {new.tanh_at:.4f}")
        title2.set_text(f"difference at x: {gap:+.3f} × 10⁻⁴")
        return [point, title, point2, title2]

    update(state)
    return update


def describe_gelu(s: GeluState) -> str:
    """The figure in words: GELU at x, and the gap between its two forms at x and at most."""
    return (f"Left: GELU(x) in its exact erf form and in GPT-2's tanh form, which lie on top of each other, with ReLU "
            f"for reference, marked at x = {fmt(s.x)}: GELU = {fmt(s.tanh_at, '.4f')}. Right: the tanh form minus the "
            f"erf form, at most {fmt(s.max_gap * 1e4, '.3f')} × 10⁻⁴ in size from {fmt(s.grid[0], 0)} to "
            f"{fmt(s.grid[-1], 0)}; at x = {fmt(s.x)} it is {fmt((s.tanh_at - s.erf_at) * 1e4, '+.3f')} × 10⁻⁴.")


def gelu_view(samples=()):
    """``draw(fig, setting)``; setting has key "x" (in [-5, 5], the plotted range). ``draw`` returns
    ``update(setting)`` for ``byhand.live``."""
    def state(setting: dict) -> GeluState:
        return gelu_state(setting["x"], samples)

    return make_view(state, draw_gelu, describe=describe_gelu)
