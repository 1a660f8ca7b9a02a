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


# --- The chapter's widget: blend the keys' weights from W_q (tied) to W_k (separate), watch the raw scores. ---
#
# K(m) = x ((1 - m) W_q + m W_k) + (1 - m) b_q + m b_k, so at m = 0 every key is its own query and at m = 1 the keys
# are the model's own. The raw scores of one head, S[t, s] = q_t . k_s, are (1 - m) Q Q^T + m Q K^T: symmetric at
# m = 0, with a diagonal |q_t|^2 >= 0.

@dataclass(frozen=True)
class TieState:
    """One head's raw scores q_t . k_s with the keys' weights blended from the queries' to their own."""

    mix: float  # 0: W_K = W_Q and b_K = b_Q (tied); 1: the keys' own weights
    head: int  # the head shown
    S: np.ndarray  # (T, T) raw scores, row t the query, column s the key
    favourite: np.ndarray  # (T,) the key each query scores highest among s <= t

    @property
    def asymmetry(self) -> float:
        """The largest |S[t, s] - S[s, t]|: 0 (up to rounding) when tied."""
        return float(np.abs(self.S - self.S.T).max())


def tie_state(x, W_q, b_q, W_k, b_k, n_heads: int, head: int, mix: float = 1.0) -> TieState:
    """Raw scores of ``head`` with K made from ``(1 - mix) W_q + mix W_k`` (and the biases alike); x (T, d_model)."""
    x, W_q, b_q = as_float("x", x), as_float("W_q", W_q), as_float("b_q", b_q)
    W_k, b_k = as_float("W_k", W_k), as_float("b_k", b_k)
    check_ndim("x", x, (2,))
    T, d_model = x.shape
    for name, W, b in (("W_q", W_q, b_q), ("W_k", W_k, b_k)):
        if W.shape != (d_model, d_model) or b.shape != (d_model,):
            raise ValueError(f"{name} must be ({d_model}, {d_model}) with a bias ({d_model},), got {W.shape}, {b.shape}")
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"mix = {mix} is outside 0..1")
    if not 0 <= head < n_heads:
        raise ValueError(f"head = {head} is outside 0..{n_heads - 1}")
    d_k = d_model // n_heads
    cols = slice(head * d_k, (head + 1) * d_k)
    Q = (x @ W_q + b_q)[:, cols]  # (T, d_k)
    K = (x @ ((1.0 - mix) * W_q + mix * W_k) + (1.0 - mix) * b_q + mix * b_k)[:, cols]  # (T, d_k)
    S = Q @ K.T  # (T, T)
    causal = np.tril(np.ones((T, T), dtype=bool))
    favourite = np.where(causal, S, -np.inf).argmax(axis=1)  # (T,)
    return TieState(float(mix), head, S, favourite)


def _asym_text(s: TieState) -> str:
    return "< 1e-9 (symmetric)" if s.asymmetry < 1e-9 else fmt(s.asymmetry, 2)


def draw_tie(fig, state: TieState, labels=None, vmax: float | None = None):
    """The raw scores as a heatmap with a number in every cell; a black box on each query's favourite key among
    s <= t. Returns ``update(state)``, which recolours the cells, rewrites their numbers, moves the boxes and the
    title (``byhand.live`` redraws only them). The colour range is ``±vmax`` (the widget passes the largest |score|
    over every mix, so the colours keep their meaning); else it fits this state."""
    from matplotlib.patches import Rectangle

    T = state.S.shape[0]
    labels = [str(k) for k in range(T)] if labels is None else list(labels)
    vmax = float(np.abs(state.S).max()) if vmax is None else float(vmax)
    ax = fig.add_axes((0.17, 0.2, 0.42, 0.67))
    im = ax.imshow(state.S, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
    texts = [[ax.text(s, t, "", ha="center", va="center", fontsize=9) for s in range(T)] for t in range(T)]
    boxes = [Rectangle((-0.5, t - 0.5), 1, 1, fill=False, edgecolor="black", lw=2) for t in range(T)]
    for box in boxes:
        ax.add_patch(box)
    ax.set_xticks(range(T), [str(k) for k in range(T)], fontsize=9)
    ax.set_yticks(range(T), [f"{k}: {w}" for k, w in enumerate(labels)], fontsize=9)
    ax.set_xlabel("key s (the same tokens as the rows)", fontsize=9, labelpad=2)
    ax.set_ylabel("query t", fontsize=9)
    cax = fig.add_axes((0.55, 0.2, 0.015, 0.67))
    bar = fig.colorbar(im, cax=cax)
    bar.ax.tick_params(labelsize=9)
    bar.set_label("raw score", fontsize=9)
    fig.legend(handles=[Rectangle((0, 0), 1, 1, fill=False, edgecolor="black", lw=2,
                                  label="the key query t scores\nhighest among s ≤ t")],
               loc="center left", bbox_to_anchor=(0.67, 0.66), fontsize=9, frameon=False)
    info = fig.text(0.685, 0.42, "", fontsize=9, va="top")
    title = fig.text(0.5, 0.985, "", fontsize=9, ha="center", va="top")

    def update(new: TieState) -> list:
        im.set_data(new.S)
        for t in range(T):
            for s in range(T):
                v = new.S[t, s]
                texts[t][s].set_text(fmt(v, 1))
                texts[t][s].set_color("white" if abs(v) / vmax > 0.55 else "black")
            boxes[t].set_xy((new.favourite[t] - 0.5, t - 0.5))
        title.set_text(rf"head {new.head}: raw scores $q_t \cdot k_s$, the keys' weights mixed {new.mix:.2f} of the "
                       "way from $W_Q$ (tied) to $W_K$")
        info.set_text(f"largest |S[t,s] − S[s,t]|:\n{_asym_text(new)}")
        return [im, *[x for row in texts for x in row], *boxes, title, info]

    update(state)
    return update


def describe_tie(s: TieState, labels=None) -> str:
    """The figure in words: the mix, how far from symmetric, one mirrored pair, the favourites."""
    T = s.S.shape[0]
    labels = [str(k) for k in range(T)] if labels is None else list(labels)
    fav = ", ".join(f"{t} → {int(f)}" for t, f in enumerate(s.favourite))
    return (f"Heatmap of the {T} × {T} raw scores q_t · k_s of head {s.head}, the keys' weights blended "
            f"{fmt(s.mix)} of the way from W_Q to W_K. The largest gap between a score and its mirror image across "
            f"the diagonal is {_asym_text(s)}; for example S[2, 1] = {fmt(s.S[2, 1], 2)} and S[1, 2] = "
            f"{fmt(s.S[1, 2], 2)}. The diagonal runs " + ", ".join(fmt(v, 2) for v in np.diag(s.S)) +
            f". Each query's favourite key among s ≤ t (query → key): {fav}.")


def table_tie(s: TieState, labels=None):
    """The figure's data: the raw scores, one row per query, and its favourite key."""
    T = s.S.shape[0]
    labels = [str(k) for k in range(T)] if labels is None else list(labels)
    return ["query t", "token", *[f"key {k}" for k in range(T)], "favourite s ≤ t"], [
        [t, labels[t], *s.S[t], int(s.favourite[t])] for t in range(T)]


def tie_view(x, W_q, b_q, W_k, b_k, n_heads: int, head: int, labels=None):
    """``draw(fig, setting)``; setting has the key "mix" in 0..1. The colours hold every mix: the scores are linear in
    the mix, so the largest |score| is at mix 0 or 1. ``draw`` returns ``update(setting)`` for ``byhand.live``."""
    ends = [tie_state(x, W_q, b_q, W_k, b_k, n_heads, head, m).S for m in (0.0, 1.0)]
    vmax = max(float(np.abs(S).max()) for S in ends)

    def state(setting: dict) -> TieState:
        return tie_state(x, W_q, b_q, W_k, b_k, n_heads, head, setting["mix"])

    return make_view(state, draw_tie, labels, vmax,
                     describe=lambda s: describe_tie(s, labels), table=lambda s: table_tie(s, labels))
