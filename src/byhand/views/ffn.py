"""The view behind Part II, "Feed-forward with GELU": the layer with GELU and the same layer without it.

With GELU the layer is f(x) = GELU(x W_1 + b_1) W_2 + b_2. Without it, it is (x W_1 + b_1) W_2 + b_2
= x (W_1 W_2) + (b_1 W_2 + b_2): one 16 x 16 matrix and a constant, so along any line x = alpha u through 0 each
output entry is a straight line in alpha. ``ffn_state(u, ..., alpha)`` evaluates both layers at alpha u (and along
the whole range of alpha); ``draw_ffn`` plots one output entry against alpha (a curve with GELU, a straight line
without) and all the output entries at alpha (bars with GELU, markers without). A move redraws only the marked
points, the bars, the markers and the title (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..activations import gelu_forward
from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars, span


def ffn_both(x, W_1, b_1, W_2, b_2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layer at the rows of x (..., d_model) with GELU (tanh form) and without: (with, without, pre-activation)."""
    pre = x @ W_1 + b_1  # (..., d_ff)
    return gelu_forward(pre, approximate="tanh")[0] @ W_2 + b_2, pre @ W_2 + b_2, pre


@dataclass(frozen=True)
class FfnState:
    """Both layers at the input alpha u, and one output entry along the whole range of alpha."""

    alpha: float  # the input is alpha times the row u
    j: int  # the output entry drawn against alpha
    grid: np.ndarray  # (n,) values of alpha
    curve_gelu: np.ndarray  # (n,) entry j with GELU along the grid
    curve_lin: np.ndarray  # (n,) entry j without GELU along the grid
    out_gelu: np.ndarray  # (d_model,) every entry with GELU at alpha
    out_lin: np.ndarray  # (d_model,) every entry without GELU at alpha
    n_on: int  # hidden units whose pre-activation is positive at alpha
    d_ff: int  # hidden units in all

    @property
    def largest_gap(self) -> int:
        """The output entry where the two layers differ most at alpha."""
        return int(np.argmax(np.abs(self.out_gelu - self.out_lin)))


def ffn_state(u, W_1, b_1, W_2, b_2, alpha: float = 1.0, j: int = 0, lo: float = -3.0, hi: float = 3.0,
              n: int = 121) -> FfnState:
    """Evaluate the layer with and without GELU at ``alpha * u`` and along ``n`` values of alpha in [lo, hi]."""
    u, W_1, b_1 = as_float("u", u), as_float("W_1", W_1), as_float("b_1", b_1)
    W_2, b_2 = as_float("W_2", W_2), as_float("b_2", b_2)
    check_ndim("u", u, (1,))
    if W_1.shape != (u.shape[0], b_1.shape[0]) or W_2.shape != (b_1.shape[0], b_2.shape[0]):
        raise ValueError(f"shapes do not chain: u {u.shape}, W_1 {W_1.shape}, b_1 {b_1.shape}, W_2 {W_2.shape}, "
                         f"b_2 {b_2.shape}")
    alpha = float(as_float("alpha", alpha))
    if not lo <= alpha <= hi:
        raise ValueError(f"alpha = {alpha} is outside the plotted range [{lo}, {hi}]")
    if not 0 <= j < b_2.shape[0]:
        raise ValueError(f"output entry j = {j} is outside 0..{b_2.shape[0] - 1}")
    grid = np.linspace(lo, hi, n)  # (n,)
    xs = np.append(grid, alpha)[:, None] * u  # (n + 1, d_model): the grid's inputs and alpha's
    with_g, without, pre = ffn_both(xs, W_1, b_1, W_2, b_2)  # (n + 1, d_model) each, pre (n + 1, d_ff)
    return FfnState(alpha, j, grid, with_g[:-1, j], without[:-1, j], with_g[-1], without[-1],
                    int((pre[-1] > 0).sum()), b_1.shape[0])


def draw_ffn(fig, state: FfnState, ylims):
    """Left: output entry j against alpha, with GELU (curve) and without (straight line), alpha marked. Right: every
    output entry at alpha, with GELU (bars) and without (markers).

    ``ylims`` = (left, right) axis ranges over the whole range of alpha (the view computes them), so the axes stay
    still. Returns ``update(state)``, which moves the two points, the bars, the markers and the title.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    ax.axvline(0, color="gray", lw=0.6, zorder=1)
    (c_gelu,) = ax.plot(state.grid, state.curve_gelu, color="tab:blue", lw=2)
    (c_lin,) = ax.plot(state.grid, state.curve_lin, color="tab:orange", lw=1.5, ls="--")
    ax.set_xlim(state.grid[0], state.grid[-1])
    ax.set_ylim(*ylims[0])
    ax.set_xlabel("input scale α (input = α · u)")
    ax.set_ylabel(f"output entry f[{state.j}]")
    (p_gelu,) = ax.plot([state.alpha], [state.out_gelu[state.j]], "o", color="tab:blue", ms=5)
    (p_lin,) = ax.plot([state.alpha], [state.out_lin[state.j]], "o", color="tab:orange", ms=5)
    d = state.out_gelu.shape[0]
    i = np.arange(d)
    ax2.axhline(0, color="gray", lw=0.6, zorder=1)
    bars = ax2.bar(i, state.out_gelu, width=0.7, color="tab:blue")
    (marks,) = ax2.plot(i, state.out_lin, "_", color="tab:orange", ms=9, mew=2.5)
    ax2.set_xlim(-0.7, d - 0.3)
    ax2.set_ylim(*ylims[1])
    ax2.set_xticks(i[::3])
    ax2.set_xlabel(f"output entry (0 to {d - 1})")
    ax2.set_ylabel("value at α")
    fig.legend(handles=[c_gelu, c_lin], labels=["with GELU (curve, bars)", "without GELU (line, dashes)"], fontsize=9,
               frameon=False, ncol=2, loc="lower center")  # one legend for both panels, below them, off the data
    title = fig.suptitle("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.3, top=0.9, wspace=0.3)

    def update(new: FfnState) -> list:
        p_gelu.set_data([new.alpha], [new.out_gelu[new.j]])
        p_lin.set_data([new.alpha], [new.out_lin[new.j]])
        set_bars(bars, new.out_gelu)
        marks.set_ydata(new.out_lin)
        title.set_text(f"α = {fmt(new.alpha, '+.2f')}: {new.n_on} of {new.d_ff} hidden units positive")  # short: fast
        return [p_gelu, p_lin, *bars, marks, title]

    update(state)
    return update


def describe_ffn(s: FfnState) -> str:
    """The figure in words: entry j with and without GELU at alpha, and where the two layers differ most."""
    c = s.largest_gap
    return (f"Left: output entry f[{s.j}] as the input row is scaled by α from {fmt(s.grid[0], 0)} to "
            f"{fmt(s.grid[-1], 0)}: without GELU a straight line, with GELU a bent curve. At α = {fmt(s.alpha)} it is "
            f"{fmt(s.out_gelu[s.j], 3)} with GELU and {fmt(s.out_lin[s.j], 3)} without, and {s.n_on} of the {s.d_ff} "
            f"hidden units are positive. Right: all {s.out_gelu.shape[0]} output entries at α = {fmt(s.alpha)}; "
            f"the two layers differ most at f[{c}]: {fmt(s.out_gelu[c], 3)} with GELU, {fmt(s.out_lin[c], 3)} "
            f"without.")


def table_ffn(s: FfnState):
    """The figure's data: every output entry at alpha, with and without GELU."""
    return (["entry", "with GELU", "without GELU"],
            [[c, s.out_gelu[c], s.out_lin[c]] for c in range(s.out_gelu.shape[0])])


def ffn_view(u, W_1, b_1, W_2, b_2, j: int = 0, alpha_range: tuple[float, float] = (-3.0, 3.0)):
    """``draw(fig, setting)``; setting has key "alpha" (in ``alpha_range``, the plotted range). ``draw`` returns
    ``update(setting)`` for ``byhand.live``; the axes hold every alpha of the range."""
    lo, hi = alpha_range
    whole = ffn_state(u, W_1, b_1, W_2, b_2, lo, j, lo, hi)
    grid_all = whole.grid[:, None] * np.asarray(u, dtype=np.float64)  # (n, d_model) every input of the range
    with_g, without, _ = ffn_both(grid_all, W_1, b_1, W_2, b_2)

    def pad(lo_hi):
        a, b = lo_hi
        return a - 0.05 * (b - a), b + 0.05 * (b - a)

    ylims = (pad(span(whole.curve_gelu, whole.curve_lin)), pad(span(with_g, without)))

    def state(setting: dict) -> FfnState:
        return ffn_state(u, W_1, b_1, W_2, b_2, setting["alpha"], j, lo, hi)

    return make_view(state, draw_ffn, ylims, describe=describe_ffn, table=table_ffn)
