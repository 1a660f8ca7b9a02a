"""The view behind Part II, "Queries, keys and values": nudge one input entry, watch a query row move.

A query row is q_t = x_t W_q + b_q with x_t the layer-normed row of token t (16 entries). Adding Δ to
x_t[j] adds Δ times row j of W_q to q_t, exactly, because the map is linear:  q_t' - q_t = Δ W_q[j, :].
``qkv_state`` computes both sides of that equation; ``draw_qkv`` shows q_t split into its two heads, and a move
redraws only its bars and title (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars, span


@dataclass(frozen=True)
class QKVState:
    """A query row before and after x_t[j] += delta."""

    t: int  # the token position (0-based)
    j: int  # the nudged input entry, counted from 0 as in Part II
    delta: float  # the nudge
    before: np.ndarray  # (d_model,) q_t
    after: np.ndarray  # (d_model,) q_t after the nudge, recomputed from the nudged x
    predicted: np.ndarray  # (d_model,) delta * W_q[j]: the change the linear map predicts
    n_heads: int  # heads, to split the row into blocks of d_k

    @property
    def largest_change(self) -> int:
        """The entry of the query that the nudge moves most."""
        return int(np.argmax(np.abs(self.after - self.before)))


def qkv_state(x, W_q, b_q, n_heads: int, t: int = 0, j: int = 0, delta: float = 0.0) -> QKVState:
    """q_t = x[t] W_q + b_q before and after x[t, j] += delta; x (T, d_model), W_q (d_model, d_model)."""
    x, W_q, b_q = as_float("x", x), as_float("W_q", W_q), as_float("b_q", b_q)
    check_ndim("x", x, (2,))
    T, d_model = x.shape
    if W_q.shape != (d_model, d_model) or b_q.shape != (d_model,):
        raise ValueError(f"W_q must be ({d_model}, {d_model}) and b_q ({d_model},), got {W_q.shape}, {b_q.shape}")
    if not 0 <= t < T:
        raise ValueError(f"position t = {t} is outside 0..{T - 1}")
    if not 0 <= j < d_model:
        raise ValueError(f"entry j = {j} is outside 0..{d_model - 1} (entries count from 0)")
    row = x[t].copy()  # (d_model,)
    before = row @ W_q + b_q  # (d_model,)
    row[j] += delta
    after = row @ W_q + b_q  # (d_model,)
    return QKVState(t, j, delta, before, after, delta * W_q[j], n_heads)


def draw_qkv(fig, state: QKVState, ylim: tuple[float, float] | None = None):
    """The query row as bars (after, in colour; before, outlined), a line between the heads.

    Returns ``update(state)``, which moves the bars and the title to another state of the same row and returns those
    artists (``byhand.live`` redraws only them). The limits are ``ylim`` when given (the widget passes the range of
    every setting, so the axes stay still); else they fit this state.
    """
    ax = fig.subplots()
    d = state.after.shape[0]
    i = np.arange(d)
    colors = np.where(i < d // state.n_heads, "tab:blue", "tab:orange")
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    after = ax.bar(i, state.before, color=colors, width=0.7)
    before = ax.bar(i, state.before, fill=False, edgecolor="black", width=0.7, lw=0.8)  # still, painted on top
    for k in range(1, state.n_heads):
        ax.axvline(k * d // state.n_heads - 0.5, color="gray", ls=":", lw=1, zorder=1)
    lo, hi = ylim if ylim is not None else span(state.before, state.after)
    ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_xticks(i)
    d_k = d // state.n_heads
    ax.set_xlabel(f"entry of the query (columns 0:{d_k} head 0, blue; {d_k}:{d} head 1, orange)")
    ax.set_ylabel("value")
    title = ax.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.85)

    def update(new: QKVState) -> list:
        set_bars(after, new.after)
        change = np.abs(new.after - new.before).max()
        title.set_text(rf"$q_{{{new.t}}}$ after $\hat x[{new.t}, {new.j}]$ += {new.delta:.2f} "
                       f"(outline: before; largest change {change:.3f})")
        return [*after, *before, title]

    update(state)
    return update


def describe_qkv(s: QKVState) -> str:
    """The figure in words: the nudge, the query's largest change and where, and the linear map's prediction."""
    d = s.after.shape[0]
    c = s.largest_change
    change = s.after[c] - s.before[c]
    if s.delta == 0:
        return (f"Bar chart of the {d} entries of the query q_{s.t} ({d // s.n_heads} per head), from "
                f"{fmt(s.after.min(), 3)} to {fmt(s.after.max(), 3)}; entry {s.j} of x̂[{s.t}] is not nudged, so "
                f"the bars fill their outlines.")
    return (f"Bar chart of the {d} entries of the query q_{s.t} ({d // s.n_heads} per head) after x̂[{s.t}, {s.j}] "
            f"is nudged by {fmt(s.delta)}, its values before outlined. The largest change is {fmt(change, 3)}, at "
            f"entry {c} (head {c // (d // s.n_heads)}), from {fmt(s.before[c], 3)} to {fmt(s.after[c], 3)}: "
            f"Δ times W_q[{s.j}, {c}], as the linear map predicts ({fmt(s.predicted[c], 3)}).")


def table_qkv(s: QKVState):
    """The figure's data: each entry of the query before and after, and the change the linear map predicts."""
    return ["entry", "before", "after", "predicted change Δ W_q[j]"], [
        [c, b, a, p] for c, (b, a, p) in enumerate(zip(s.before, s.after, s.predicted))]


def qkv_view(x, W_q, b_q, n_heads: int, t: int = 0, delta_max: float = 3.0):
    """``draw(fig, setting)``; setting has keys "j" (entry, from 0) and "delta".

    The limits hold every setting with ``|delta| <= delta_max`` (the widget's range): entry c of the row moves by at
    most ``delta_max * max_j |W_q[j, c]|``. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    before = qkv_state(x, W_q, b_q, n_heads, t).before  # (d_model,)
    reach = abs(delta_max) * np.abs(as_float("W_q", W_q)).max(axis=0)  # (d_model,) the largest move of each entry
    ylim = span(before - reach, before + reach)

    def state(setting: dict) -> QKVState:
        return qkv_state(x, W_q, b_q, n_heads, t, setting["j"], setting["delta"])

    return make_view(state, draw_qkv, ylim, describe=describe_qkv, table=table_qkv)
