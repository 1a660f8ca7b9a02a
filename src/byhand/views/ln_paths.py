"""The view behind Part II, "Through the final layer norm and the feed-forward layer": the three paths of dx.

The gradient at a layer norm's input, one row, is the sum of three terms, one per path an input takes to the output:

    direct  rho * dxhat_j,   through the mean  -rho * mean(dxhat),   through the variance  -rho * xhat_j * mean(dxhat * xhat)

with dxhat = dy * gamma and rho = 1 / sqrt(var + eps). ``ln_paths_state`` moves one input x_j by ``move`` and adds
``shift`` to every entry of dy, and returns the three terms and their sum; ``draw_ln_paths`` draws them as bars with
the sum as diamonds, and a move redraws only the bars, the diamonds and the title (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars, span


@dataclass(frozen=True)
class LNPathsState:
    """One row of a layer norm's backward, split into its three paths."""

    j: int  # the input that is moved
    move: float  # added to x_j
    shift: float  # added to every entry of dy
    x: np.ndarray  # (D,) the row, entry j moved
    dy: np.ndarray  # (D,) the gradient at the output, shifted
    xhat: np.ndarray  # (D,) the normalized row
    rho: float  # 1 / sqrt(var + eps)
    direct: np.ndarray  # (D,) rho * dxhat
    via_mu: np.ndarray  # (D,) -rho * mean(dxhat), the same for every entry
    via_var: np.ndarray  # (D,) -rho * xhat * mean(dxhat * xhat)

    @property
    def dx(self) -> np.ndarray:
        """(D,) the gradient at the input: the three paths added."""
        return self.direct + self.via_mu + self.via_var


def ln_paths_state(x_row, dy_row, gamma, eps: float = 1e-5, j: int = 0, move: float = 0.0,
                   shift: float = 0.0) -> LNPathsState:
    """The three paths of dx for the row ``x_row`` with ``x_row[j] += move`` and ``dy_row + shift``; all (D,)."""
    x_row, dy_row, gamma = as_float("x_row", x_row), as_float("dy_row", dy_row), as_float("gamma", gamma)
    for name, a in (("x_row", x_row), ("dy_row", dy_row), ("gamma", gamma)):
        check_ndim(name, a, (1,))
    if not (dy_row.shape == gamma.shape == x_row.shape):
        raise ValueError(f"x_row, dy_row and gamma must have one shape, got {x_row.shape}, {dy_row.shape}, "
                         f"{gamma.shape}")
    if not 0 <= j < x_row.shape[0]:
        raise ValueError(f"j must be an entry of the row, 0 to {x_row.shape[0] - 1}, got {j}")
    x = x_row.copy()
    x[j] += move
    dy = dy_row + shift  # (D,)
    mu = x.mean()
    rho = 1.0 / np.sqrt(((x - mu) ** 2).mean() + eps)
    xhat = (x - mu) * rho  # (D,)
    dxhat = dy * gamma  # (D,)
    direct = rho * dxhat
    via_mu = np.full_like(x, -rho * dxhat.mean())
    via_var = -rho * xhat * (dxhat * xhat).mean()
    return LNPathsState(int(j), float(move), float(shift), x, dy, xhat, float(rho), direct, via_mu, via_var)


COLORS = {"direct": "tab:gray", "mu": "tab:green", "var": "tab:orange"}


def draw_ln_paths(fig, state: LNPathsState, ylim: tuple[float, float] | None = None):
    """Bars: the three paths at each entry (gray direct, green through the mean, orange through the variance);
    black diamonds: their sum dx. The moved entry j is shaded.

    Returns ``update(state)``, which moves the bars, the diamonds and the title to another setting of the same row.
    The limits are ``ylim`` when given (the widget passes the range of every setting it offers, so the axes stay
    still); else they fit this state.
    """
    ax = fig.subplots()
    D = state.x.shape[0]
    i, w = np.arange(D), 0.27
    ax.axvspan(state.j - 0.5, state.j + 0.5, color="gold", alpha=0.25, lw=0, zorder=0)
    ax.axhline(0, color="black", lw=0.6)
    direct = ax.bar(i - w, state.direct, w, color=COLORS["direct"], label=r"direct: $\rho\, d\hat x_j$")
    via_mu = ax.bar(i, state.via_mu, w, color=COLORS["mu"], label=r"through $\mu$")
    via_var = ax.bar(i + w, state.via_var, w, color=COLORS["var"], label=r"through $\sigma^2$")
    (dx,) = ax.plot(i, state.dx, "D", color="black", ms=5, label="$dx_j$, the sum")
    ax.set_xticks(i)
    ax.set_xlabel(f"entry j of the row (shaded: entry {state.j}, the one moved)")
    ax.set_ylabel("gradient")
    lo, hi = ylim if ylim is not None else span(state.direct, state.via_mu, state.via_var, state.dx)
    ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_xlim(-0.7, D - 0.3)
    ax.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 0.99), ncol=4, columnspacing=1.2)
    title = fig.text(0.5, 0.985, "", ha="center", va="top", fontsize=9)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.78)

    def update(new: LNPathsState) -> list:
        set_bars(direct, new.direct)
        set_bars(via_mu, new.via_mu)
        set_bars(via_var, new.via_var)
        dx.set_ydata(new.dx)
        k = new.j
        title.set_text(f"x_{k} moved by {fmt(new.move, '+.1f')} (x̂_{k} = {fmt(new.xhat[k], 2)}), dy shifted by "
                       f"{fmt(new.shift, '+.2f')}.  Entry {k}: direct {fmt(new.direct[k], 3)}, "
                       f"σ² path {fmt(new.via_var[k], 3)}, dx {fmt(new.dx[k], 3)}")
        return [*direct, *via_mu, *via_var, dx, title]

    update(state)
    return update


def describe_ln_paths(s: LNPathsState) -> str:
    """The figure in words: the setting, each path's range, and the moved entry's three terms and sum."""
    k, D = s.j, s.x.shape[0]
    return (f"Bar chart of the three terms of dx for the {D} entries of a row, input {k} moved by "
            f"{fmt(s.move, '+.2f')} (x̂_{k} = {fmt(s.xhat[k], 3)}) and every entry of dy shifted by "
            f"{fmt(s.shift, '+.2f')}: the direct term runs from {fmt(s.direct.min(), 4)} to {fmt(s.direct.max(), 4)}; "
            f"the mean's term is {fmt(s.via_mu[0], 5)} for every entry; the variance's term runs from "
            f"{fmt(s.via_var.min(), 4)} to {fmt(s.via_var.max(), 4)}. Black diamonds mark the sums dx, from "
            f"{fmt(s.dx.min(), 4)} to {fmt(s.dx.max(), 4)}. At entry {k} the direct term is {fmt(s.direct[k], 4)}, "
            f"the variance's term {fmt(s.via_var[k], 4)}, and dx is {fmt(s.dx[k], 4)}.")


def table_ln_paths(s: LNPathsState):
    """The figure's data: each entry's x̂, its three terms and their sum."""
    return (["entry", "x̂", "direct", "through μ", "through σ²", "dx"],
            [[i, *v] for i, v in enumerate(zip(s.xhat, s.direct, s.via_mu, s.via_var, s.dx))])


def ln_paths_view(x_row, dy_row, gamma, eps: float = 1e-5, j: int = 0, move_range: tuple[float, float] = (-2.0, 8.0),
                  shift_max: float = 0.1, n: int = 21):
    """``draw(fig, setting)``; setting has keys "move" (added to x_j) and "shift" (added to every dy_i).

    The limits hold every setting on an ``n`` × ``n`` grid of ``move_range`` and ``[-shift_max, shift_max]`` (the
    widget's ranges; the terms are smooth in both, so the grid, padded by 5 %, holds the settings between).
    ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    grid = [ln_paths_state(x_row, dy_row, gamma, eps, j, m, c)
            for m in np.linspace(*move_range, n) for c in np.linspace(-shift_max, shift_max, n)]
    lo, hi = span(*(a for s in grid for a in (s.direct, s.via_mu, s.via_var, s.dx)))
    ylim = (lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))

    def state(setting: dict) -> LNPathsState:
        return ln_paths_state(x_row, dy_row, gamma, eps, j, setting["move"], setting["shift"])

    return make_view(state, draw_ln_paths, ylim, describe=describe_ln_paths, table=table_ln_paths)
