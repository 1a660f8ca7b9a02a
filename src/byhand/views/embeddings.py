"""The view behind Part II, "Embeddings and positions": nudge one entry of a token's embedding, watch attention move.

``nudge_trace`` reruns the toy forward with one parameter entry changed by Δ (a pure function: the
parameters passed in are not modified). ``embed_state`` uses it on E[token, j] and returns the attention
row of one query position in both heads, before and after. One forward of the toy takes about 2 ms.
``swap_change`` trades the tokens at two positions and measures how far each token's attention output moves,
with or without the learned positions: causal attention without positions sees which tokens precede a query,
not in what order. ``embed_view`` draws the nudged row of E beside the attention rows; a move redraws only the
bars (``byhand.live``). ``x0_row_state`` and ``x0_row_view`` (the chapter's widget) build one row of x0 from a chosen
token and position: E[token] + P[t], entry by entry.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..gpt import GPTConfig, gpt_forward
from ..toy_gpt import TOY_CONFIG, VOCAB, toy_batch
from . import fmt, make_view, set_bars, span


def nudge_trace(params: dict, name: str, index: tuple, delta: float, ids=None, config: GPTConfig = TOY_CONFIG) -> dict:
    """The forward trace with ``params[name][index] += delta`` (on a copy); ids default to the toy sentence."""
    if name not in params:
        raise ValueError(f"unknown parameter {name!r}")
    nudged = dict(params)
    nudged[name] = np.array(params[name], dtype=np.float64)  # a copy: the caller's array stays untouched
    try:
        nudged[name][index] += delta
    except IndexError as err:
        raise ValueError(f"index {index} is outside {name} of shape {nudged[name].shape}") from err
    ids = toy_batch()[0] if ids is None else ids
    return gpt_forward(nudged, ids, config)[1]["trace"]


@dataclass(frozen=True)
class EmbedState:
    """Attention rows of query ``t`` before and after E[token, j] += delta."""

    token: str  # the token whose embedding row is nudged
    j: int  # the nudged entry, counted from 0 as in Part II (0..d_model-1)
    delta: float  # the nudge
    t: int  # the query position whose attention rows are shown (0-based, as in the table of tokens)
    before: np.ndarray  # (h, T) attention rows of query t before the nudge
    after: np.ndarray  # (h, T) after
    x0_change: np.ndarray  # (T, d_model) change of x0 = E[ids] + P: nonzero only where the token sits


def embed_state(params: dict, token: str = "like", j: int = 0, delta: float = 0.0, t: int = 4) -> EmbedState:
    """Nudge E[token, j] by ``delta`` and rerun the toy; return the attention rows of query ``t``."""
    if token not in VOCAB:
        raise ValueError(f"unknown token {token!r}")
    d_model = np.shape(params["E"])[1]
    if not 0 <= j < d_model:
        raise ValueError(f"entry j = {j} is outside 0..{d_model - 1} (entries count from 0)")
    ids = toy_batch()[0]
    if not 0 <= t < len(ids):
        raise ValueError(f"query position t = {t} is outside 0..{len(ids) - 1}")
    base = nudge_trace(params, "E", (VOCAB.index(token), j), 0.0)
    new = nudge_trace(params, "E", (VOCAB.index(token), j), delta)
    A0, A1 = base["block0.attn.A"], new["block0.attn.A"]  # (h, T, T) attention weights A before and after
    return EmbedState(token, j, delta, t, A0[:, t, :], A1[:, t, :], new["x0"] - base["x0"])


def swap_change(params: dict, i: int, j: int, positions: bool = True, ids=None,
                config: GPTConfig = TOY_CONFIG) -> np.ndarray:
    """How far each token's attention output moves when the tokens at positions i and j trade places: (T,).

    Entry k is max |out'[k'] - out[k]| over the d_model columns, where out = "block0.attn.out" (T, d_model)
    and k' is where token k sits after the swap, so each token is compared with itself. With
    ``positions=False`` the position table P is zeroed first: then a token's output depends on the set of
    tokens at or before it, and tokens after both i and j move only by rounding. ids default to the toy
    sentence; ``params`` is not modified.
    """
    ids = toy_batch()[0] if ids is None else np.asarray(ids)
    T = len(ids)
    if not (0 <= i < T and 0 <= j < T) or i == j:
        raise ValueError(f"positions i = {i}, j = {j} must differ and lie in 0..{T - 1}")
    p = dict(params)
    if not positions:
        p["P"] = np.zeros_like(params["P"])  # no position rows: x0 = E[ids]
    perm = np.arange(T)  # (T,) new order: perm[k] is the old position of the token now at k
    perm[[i, j]] = perm[[j, i]]
    out = gpt_forward(p, ids, config)[1]["trace"]["block0.attn.out"]  # (T, d_model)
    out_swapped = gpt_forward(p, ids[perm], config)[1]["trace"]["block0.attn.out"]  # (T, d_model)
    return np.abs(out_swapped[perm] - out).max(axis=1)  # (T,) perm is its own inverse: row k is token k again


def draw_embed(fig, state: EmbedState, row, row_lim: tuple[float, float] | None = None):
    """Left: the embedding row E[token] with entry j marked (red) and nudged. Then one panel per head: the attention
    row of query t, before (black outline) and after the nudge (colour).

    ``row`` is E[token] before the nudge (d_model,). Returns ``update(state)``, which moves the marked entry, the
    attention bars and the left title to another state of the same token and query and returns those artists
    (``byhand.live`` redraws only them). The left panel's limits are ``row_lim`` when given (the widget passes the
    range of every setting, so the axes stay still); else they fit this state. Entry j shows even at Δ = 0.
    """
    row = np.asarray(row, dtype=np.float64)  # (d_model,)
    h, T = state.after.shape
    d = row.shape[0]
    labels = [VOCAB[i] for i in toy_batch()[0]]
    ax_e, *axes = fig.subplots(1, h + 1, gridspec_kw={"width_ratios": [0.75] + [1.0] * h})
    i = np.arange(d)  # entries counted from 0
    ax_e.axhline(0, color="gray", lw=0.6, zorder=1)
    entries = ax_e.bar(i, row, color="lightgray", width=0.7)  # (d,) patches; entry j turns red
    (was,) = ax_e.bar([0], [0.0], fill=False, edgecolor="black", width=0.7, lw=0.8)  # entry j before the nudge
    lo, hi = row_lim if row_lim is not None else span(row, row[state.j] + state.delta)
    ax_e.set_ylim(lo - 0.08 * (hi - lo), hi + 0.08 * (hi - lo))
    ax_e.set_xticks(np.arange(0, d, 5))
    ax_e.set_xlabel(f"entry j of E[{state.token}]")
    ax_e.set_ylabel("value")
    e_title = ax_e.set_title("", fontsize=9)
    x = np.arange(T)
    after, before = [], []
    for k, ax in enumerate(axes):
        ax.axhline(0, color="gray", lw=0.6, zorder=1)
        after.append(ax.bar(x, state.before[k], color="tab:blue", width=0.6, label="after"))
        before.append(ax.bar(x, state.before[k], fill=False, edgecolor="black", width=0.6, lw=1.0, label="before"))
        ax.set_xticks(x, labels, fontsize=9, rotation=30, ha="right", rotation_mode="anchor")
        ax.set_ylim(0, 1)
        ax.set_xlabel("key position (token)")
        ax.set_title(f"head {k}: query {state.t} ({labels[state.t]})", fontsize=9)
        if k > 0:
            ax.tick_params(labelleft=False)
    axes[0].set_ylabel("attention weight")
    axes[0].legend(fontsize=9, frameon=False, loc="upper left")
    fig.subplots_adjust(left=0.08, right=0.99, bottom=0.3, top=0.9, wspace=0.38)
    outlines = [bar for bars in before for bar in bars]  # still, but painted over the moving bars

    def update(new: EmbedState) -> list:
        nudged = row.copy()
        nudged[new.j] += new.delta
        set_bars(entries, nudged, ["tab:red" if k == new.j else "lightgray" for k in range(len(entries))])
        was.set_x(new.j - 0.35)
        was.set_height(row[new.j])
        e_title.set_text(f"E[{new.token}, {new.j}] += {new.delta:+.2f}")
        bars = [bar for k in range(h) for bar in set_bars(after[k], new.after[k])]
        return [*entries, was, e_title, *bars, *outlines]

    update(state)
    return update


def describe_embed(s: EmbedState, row) -> str:
    """The figure in words: the nudged entry, and in each head the weight of query t's largest key before and
    after, and the largest change."""
    labels = [VOCAB[i] for i in toy_batch()[0]]
    heads = []
    for k in range(s.after.shape[0]):
        u = int(np.argmax(s.after[k]))
        heads.append(f"head {k} puts its largest weight, {fmt(s.after[k, u], 3)}, on “{labels[u]}” (was "
                     f"{fmt(s.before[k, u], 3)})")
    change = np.abs(s.after - s.before)
    k, u = np.unravel_index(int(np.argmax(change)), change.shape)
    moved = (f"The largest change of a weight is {fmt(change[k, u], 3)}, in head {k} on “{labels[u]}”." if s.delta
             else "With no nudge, nothing changes.")
    return (f"Left: the {len(row)} entries of the embedding row E[{s.token}], entry {s.j} nudged by "
            f"{fmt(s.delta)} from {fmt(row[s.j], 3)} to {fmt(row[s.j] + s.delta, 3)}. Right: the attention of query "
            f"{s.t} (“{labels[s.t]}”) over the keys, before and after: {'; '.join(heads)}. {moved}")


def table_embed(s: EmbedState):
    """The figure's data: the attention of query t over each key, in each head, before and after."""
    labels = [VOCAB[i] for i in toy_batch()[0]]
    h, T = s.after.shape
    columns = ["key", "token"] + [f"head {k} {when}" for k in range(h) for when in ("before", "after")]
    return columns, [[u, labels[u], *[v for k in range(h) for v in (s.before[k, u], s.after[k, u])]]
                     for u in range(T)]


def embed_view(params: dict, token: str = "like", t: int = 4, delta_max: float = 3.0):
    """``draw(fig, setting)``; setting has keys "j" (entry, from 0) and "delta"; ``token`` and ``t`` are fixed.

    The embedding panel's limits hold every entry nudged by up to ``|delta| <= delta_max`` (the widget's range), so
    that a drag moves the bars and not the axes. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    if token not in VOCAB:
        raise ValueError(f"unknown token {token!r}")
    row = np.array(params["E"][VOCAB.index(token)], dtype=np.float64)  # (d_model,) E[token] before any nudge
    row_lim = span(row - abs(delta_max), row + abs(delta_max))

    def state(setting: dict) -> EmbedState:
        return embed_state(params, token, setting["j"], setting["delta"], t)

    return make_view(state, draw_embed, row, row_lim, describe=lambda s: describe_embed(s, row), table=table_embed)


@dataclass(frozen=True)
class X0RowState:
    """One row of x0 built from a chosen token and position: E[token] + P[t]."""

    token: str  # the chosen token
    t: int  # the chosen position (0-based)
    e_row: np.ndarray  # (d_model,) E[token], the token part
    p_row: np.ndarray  # (d_model,) P[t], the position part
    x_row: np.ndarray  # (d_model,) e_row + p_row, the row of x0 this token would get at position t
    at_t: str  # the token that stands at position t in the toy sentence


def x0_row_state(params: dict, token: str = "like", t: int = 2) -> X0RowState:
    """The row of x0 that ``token`` gets at position ``t``: E[token] + P[t] (the toy sentence's x0 row t when the
    sentence has ``token`` at ``t``)."""
    if token not in VOCAB:
        raise ValueError(f"unknown token {token!r}")
    P = np.asarray(params["P"], dtype=np.float64)  # (T_max, d_model)
    if not 0 <= t < P.shape[0]:
        raise ValueError(f"position t = {t} is outside 0..{P.shape[0] - 1}")
    e_row = np.array(params["E"][VOCAB.index(token)], dtype=np.float64)  # (d_model,)
    p_row = P[t].copy()  # (d_model,)
    return X0RowState(token, t, e_row, p_row, e_row + p_row, VOCAB[toy_batch()[0][t]])


def draw_x0_row(fig, state: X0RowState, lim: tuple[float, float]):
    """Two panels over the entries j. Top: the token row E[token] (blue) beside the position row P[t] (orange).
    Bottom: their sum, the row of x0 (purple), with the token row alone outlined in black, so the position's push
    shows as the gap between outline and bar. ``lim`` is the y-range of every setting (the axes stay still while the
    controls move). Returns ``update(state)``, which moves the bars and the titles."""
    d = state.x_row.shape[0]
    j = np.arange(d)
    axes = fig.subplots(2, 1, sharex=True)
    lo, hi = lim
    zeros = np.zeros(d)
    e_bars = axes[0].bar(j - 0.19, zeros, color="tab:blue", width=0.38, label="token row")
    p_bars = axes[0].bar(j + 0.19, zeros, color="tab:orange", width=0.38, label="position row")
    x_bars = axes[1].bar(j, zeros, color="tab:purple", width=0.7, label="their sum")
    outline = axes[1].bar(j, zeros, fill=False, edgecolor="black", width=0.7, lw=0.8, label="token row\nalone")
    titles = []
    for ax in axes:
        ax.axhline(0, color="gray", lw=0.6, zorder=1)
        ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
        ax.set_ylabel("value")
        ax.legend(fontsize=9, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
        titles.append(ax.set_title("", fontsize=9, loc="left"))
    axes[1].set_xticks(np.arange(0, d, 5))
    axes[1].set_xlabel("entry j")
    fig.subplots_adjust(left=0.09, right=0.80, bottom=0.15, top=0.91, hspace=0.45)

    def update(s: X0RowState) -> list:
        moved = [*set_bars(e_bars, s.e_row), *set_bars(p_bars, s.p_row), *set_bars(x_bars, s.x_row),
                 *set_bars(outline, s.e_row)]
        ours = f"row {s.t} of our x₀" if s.at_t == s.token else f"not in our x₀ (“{s.at_t}” is at {s.t})"
        titles[0].set_text(f"E[{s.token}] (id {VOCAB.index(s.token)}), length {fmt(np.linalg.norm(s.e_row))};  "
                           f"P[{s.t}], length {fmt(np.linalg.norm(s.p_row))}")
        titles[1].set_text(f"E[{s.token}] + P[{s.t}], length {fmt(np.linalg.norm(s.x_row))}: {ours}")
        return [*moved, *titles]

    update(state)
    return update


def describe_x0_row(s: X0RowState) -> str:
    """The figure in words: the three rows' lengths, the entry the position moves most, and whether this is a row of
    the toy sentence's x0."""
    k = int(np.argmax(np.abs(s.p_row)))
    ours = (f"This is row {s.t} of the toy sentence's x_0." if s.at_t == s.token
            else f"The toy sentence has “{s.at_t}” at position {s.t}, so this row is not in its x_0.")
    return (f"Bar charts over the {len(s.x_row)} entries: the token row E[{s.token}] (length "
            f"{fmt(np.linalg.norm(s.e_row))}), the position row P[{s.t}] (length {fmt(np.linalg.norm(s.p_row))}) and "
            f"their sum (length {fmt(np.linalg.norm(s.x_row))}). The position moves entry {k} most, from "
            f"{fmt(s.e_row[k], 3)} to {fmt(s.x_row[k], 3)}. {ours}")


def table_x0_row(s: X0RowState):
    """The figure's data: each entry of the token row, the position row and their sum."""
    return (["entry j", f"E[{s.token}, j]", f"P[{s.t}, j]", "sum"],
            [[k, s.e_row[k], s.p_row[k], s.x_row[k]] for k in range(len(s.x_row))])


def x0_row_view(params: dict):
    """``draw(fig, setting)``; setting has keys "token" (a word of the vocabulary) and "t" (a position).

    The y-range holds every token row, every position row and every sum, so that the axes stay still while the
    controls move. ``draw`` returns ``update(setting)`` for ``byhand.live``."""
    E = np.asarray(params["E"], dtype=np.float64)  # (V, d_model)
    P = np.asarray(params["P"], dtype=np.float64)  # (T_max, d_model)
    lim = span(E, P, E[:, None, :] + P[None, :, :])

    def state(setting: dict) -> X0RowState:
        return x0_row_state(params, setting["token"], setting["t"])

    return make_view(state, draw_x0_row, lim, describe=describe_x0_row, table=table_x0_row)
