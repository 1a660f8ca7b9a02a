"""The view behind Part I, "Dot products": turn a key toward or away from a query and watch ``q·k``.

``turn(q, k, θ)`` keeps the key's length and sets its angle to the query to θ, inside the plane that ``q``
and ``k`` span. ``dot_state`` is the widget callback (pure, a few microseconds); ``draw_dot`` draws it.
Equation: ``q·k = Σ_i q_i k_i = |q| |k| cos θ``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D

from ..checks import as_float, check_ndim
from ..display import DotTerms, dot_terms
from . import fmt, make_view, span


def plane_basis(q, k) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal ``(q_hat, u_hat)`` spanning the plane of ``q`` and ``k`` (Gram–Schmidt: ``u = k − (k·q̂) q̂``)."""
    q = as_float("q", q)
    k = as_float("k", k)
    check_ndim("q", q, (1,))
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape, got {q.shape} and {k.shape}")
    q_norm = np.linalg.norm(q)
    if q_norm == 0:
        raise ValueError("q is the zero vector, which has no direction")
    q_hat = q / q_norm  # (n,)
    u = k - (k @ q_hat) * q_hat  # (n,) the part of k at right angles to q
    u_norm = np.linalg.norm(u)
    if u_norm <= 1e-12 * max(np.linalg.norm(k), 1.0):
        raise ValueError("k is parallel to q, so the two span no plane to turn in")
    return q_hat, u / u_norm


def turn(q, k, theta_deg: float) -> np.ndarray:
    """The key with ``|k|`` kept and its angle to ``q`` set to ``theta_deg``: ``|k|(cos θ q̂ + sin θ û)``."""
    q_hat, u_hat = plane_basis(q, k)
    theta = np.deg2rad(theta_deg)
    return np.linalg.norm(k) * (np.cos(theta) * q_hat + np.sin(theta) * u_hat)  # (n,)


@dataclass(frozen=True)
class DotState:
    """Everything the dot-product view shows for one setting of the controls."""

    theta_deg: float  # angle between q and the turned key, before the nudge
    j: int  # the entry of k that is nudged, counted from 0 as everywhere in the book (k[j])
    delta: float  # the nudge added to k[j]
    terms: DotTerms  # q·k written out, after the nudge
    before: float  # q·k before the nudge
    update: float  # q[j]·delta: what the nudge adds to the sum
    thetas: np.ndarray  # (181,) angles 0..180 degrees for the cosine curve
    curve: np.ndarray  # (181,) |q||k| cos θ along those angles

    @property
    def negative(self) -> int:
        """How many products are negative."""
        return int(np.sum(self.terms.products < 0))

    @property
    def largest(self) -> int:
        """The entry whose product is largest in size."""
        return int(np.argmax(np.abs(self.terms.products)))


def dot_state(q, k, theta_deg: float = 0.0, j: int = 0, delta: float = 0.0) -> DotState:
    """Turn ``k`` to angle ``theta_deg`` from ``q``, then add ``delta`` to entry ``j``; return the numbers to show.

    ``j`` counts from 0, like the book's ``k_0 … k_{n-1}``, the figure's axis and Python: ``j = 0`` is ``k[0]``.
    """
    q = as_float("q", q)
    if not 0.0 <= theta_deg <= 180.0:
        raise ValueError(f"theta_deg must be between 0 and 180 degrees, got {theta_deg}")
    if not 0 <= j < q.shape[0]:
        raise ValueError(f"entry j = {j} is outside 0..{q.shape[0] - 1} (entries count from 0)")
    k_theta = turn(q, k, theta_deg)  # (n,)
    before = float(q @ k_theta)
    k_nudged = k_theta.copy()
    k_nudged[j] += delta
    thetas = np.arange(181.0)
    curve = np.linalg.norm(q) * np.linalg.norm(k_theta) * np.cos(np.deg2rad(thetas))  # (181,)
    return DotState(theta_deg, j, delta, dot_terms(q, k_nudged), before, float(q[j] * delta), thetas, curve)


def draw_dot(fig, state: DotState, ylim: tuple[float, float] | None = None,
             bar_lim: float | None = None):
    """Left: each product ``q_i k_i`` as a bar (left axis) and the running total as a line (right axis). Right:
    ``q·k`` against the angle, before the nudge (a dot) and after it (a ring, joined to the dot by a red stroke).

    The products are a few units each and the running total reaches tens, so each has its own axis, with the zeros
    of the two at the same height. Returns ``update(state)``, which moves the bars, the running total, the dot on the
    curve and the title to another state of the same ``q`` and ``k`` and returns those artists (``byhand.live``
    redraws only them). The running total's limits are ``ylim`` and the bars reach ``bar_lim`` when given (a widget
    passes the range of every setting, so the axes stay still); else they fit this state.
    """
    t = state.terms
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    axr = ax.twinx()  # the running total's axis, on the right of the left panel
    i = np.arange(len(t.products))  # entries counted from 0
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    bars = ax.vlines(i, 0, t.products, lw=3)  # one artist: fast to redraw
    (running,) = axr.plot(i, t.running, color="black", lw=1.5)
    ax.set_xlabel("entry i (from 0)")
    ax.set_ylabel(r"term $q_i k_i$ (bars)")
    axr.set_ylabel("running total (line)")
    title = ax.set_title("", fontsize=9)
    lo, hi = ylim if ylim is not None else span(t.products, t.running)
    lo, hi = lo - 0.05 * (hi - lo), hi + 0.3 * (hi - lo)  # a free band at the top for the legend
    axr.set_ylim(lo, hi)
    reach = bar_lim if bar_lim is not None else float(np.max(np.abs(t.products)))
    scale = reach / min(-lo, hi) if min(-lo, hi) > 0 else 1.0
    ax.set_ylim(lo * scale, hi * scale)  # the bars' zero at the height of the running total's zero
    handles = [Line2D([], [], color="tab:blue", lw=3, label=r"$q_i k_i > 0$"),
               Line2D([], [], color="tab:red", lw=3, label=r"$q_i k_i < 0$"),
               Line2D([], [], color="black", lw=1.5, label="running total")]
    ax.legend(handles=handles, loc="upper left", fontsize=9, frameon=False, ncol=3, handlelength=1.0,
              columnspacing=0.8, handletextpad=0.4)
    ax2.axhline(0, color="gray", lw=0.6, zorder=1)
    ax2.axvline(90, color="gray", lw=0.6, ls=":", zorder=1)
    ax2.plot(state.thetas, state.curve, color="tab:gray", lw=1.2)
    (dot,) = ax2.plot([state.theta_deg], [state.before], "o", color="black", label="before the nudge")
    (link,) = ax2.plot([state.theta_deg] * 2, [state.before, t.total], color="tab:red", lw=2)
    (after,) = ax2.plot([state.theta_deg], [t.total], "o", mfc="none", mec="tab:red", ms=8, mew=1.5,
                        label="after the nudge")
    ax2.legend(loc="upper right", fontsize=9, frameon=False, handletextpad=0.2)
    ax2.set_ylim(lo, hi)  # the running total's range: it holds the ring after any nudge the widget allows
    ax2.set_xlabel("angle φ between q, k (°)")
    ax2.set_ylabel("q·k")
    ax2.set_xticks([0, 45, 90, 135, 180])
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.88, wspace=0.6)

    def update(new: DotState) -> list:
        u = new.terms
        bars.set_segments([[(x, 0.0), (x, y)] for x, y in zip(i, u.products)])
        bars.set_colors(np.where(u.products >= 0, "tab:blue", "tab:red"))
        running.set_ydata(u.running)
        dot.set_data([new.theta_deg], [new.before])
        link.set_data([new.theta_deg] * 2, [new.before, u.total])  # the nudge's change, as a red stroke
        after.set_data([new.theta_deg], [u.total])
        nudge = new.update + 0.0  # + 0.0 turns -0.0 into 0.0: no "-0.00" in the title
        title.set_text(rf"$q \cdot k$ = {u.total:.2f}   (nudge adds $q_{{{new.j}}} \Delta$ = {nudge:.2f})")
        return [bars, running, dot, link, after, title]

    update(state)
    return update


def describe_dot(s: DotState) -> str:
    """The figure in words: the products, the running total's end, the largest term; the angle's curve."""
    p, k = s.terms.products, s.largest
    nudge = f", k_{s.j} nudged by {fmt(s.delta)}" if s.delta else ""
    return (f"Left: bar chart of the {len(p)} products q_i k_i at φ = {fmt(s.theta_deg, '.0f')}°{nudge}: "
            f"{len(p) - s.negative} positive, {s.negative} negative; the running total ends at "
            f"q·k = {fmt(s.terms.total)}, and the largest term in size is q_{k} k_{k} = {fmt(p[k])}. "
            f"Right: q·k against the angle φ, a cosine from {fmt(s.curve[0])} at 0° to {fmt(s.curve[-1])} at 180°, "
            f"marked at {fmt(s.before)} before the nudge"
            + (f" and at {fmt(s.terms.total)} after it." if s.delta else "."))


def table_dot(s: DotState):
    """The figure's data: each entry's product and the running total."""
    return ["entry i", "q_i k_i", "running total"], [[i, p, r] for i, (p, r) in
                                                    enumerate(zip(s.terms.products, s.terms.running))]


def dot_view(q, k, delta_max: float = 3.0):
    """Return ``draw(fig, setting)`` for the widget and the static slider; ``setting`` has keys theta, j, delta.

    The left panel's limits hold every setting with ``|delta| <= delta_max`` (the widget's range), so that a drag
    moves the bars and not the axes. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    q = as_float("q", q)
    unnudged = [dot_state(q, k, theta) for theta in np.arange(0.0, 181.0, 1.0)]
    lo, hi = span(*(s.terms.products for s in unnudged), *(s.terms.running for s in unnudged))
    reach = float(np.max(np.abs(q))) * abs(delta_max)  # a nudge moves one product and the totals after it by q_j·Δ
    ylim = (lo - reach, hi + reach)
    # the bars' axis holds every unnudged product; a large nudge may run one bar off it (the title gives its size)
    bar_lim = 1.1 * max(float(np.max(np.abs(s.terms.products))) for s in unnudged)

    def state(setting: dict) -> DotState:
        return dot_state(q, k, setting["theta"], setting["j"], setting["delta"])

    return make_view(state, draw_dot, ylim, bar_lim, describe=describe_dot, table=table_dot)
