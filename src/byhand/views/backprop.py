"""The view behind Part I, "Backpropagation": the gradient on the residual stream, layer by layer, at one position.

In a pre-LN block the stream passes two additions, res1 = x + attn(LN1(x)) and res2 = res1 + ffn(LN2(res1)).
Backward, an addition hands its incoming gradient to both inputs unchanged, so

    d res1 = d res2 + (ffn branch's part),      d x = d res1 + (attention branch's part)

and the gradient at the bottom of the stack is the gradient at the top plus every branch's part (a telescoping
sum). ``stream_grads`` reads the stream's gradients out of ``gpt_loss_and_grads``' trace once; ``stream_state``
is the widget callback (one position t: norms of the stream gradient and of each branch's part, microseconds);
``backprop_view`` returns ``draw(fig, setting)`` with ``setting = {"t": position}``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.colors import LogNorm

from . import fmt, make_view, set_bars


@dataclass(frozen=True)
class StreamGrads:
    """dloss/d(residual stream) at every stage from the top of the stack to x0, and each branch's part."""

    stages: tuple[str, ...]  # (S,) trace names, top first: "block{L-1}.res2", "block{L-1}.res1", ..., "x0"
    stream: np.ndarray  # (S, T, d_model) the gradient on the stream at each stage
    branch: np.ndarray  # (S - 1, T, d_model) stream[s + 1] − stream[s]: what the sublayer between them added


def stream_grads(gtrace: dict, n_layers: int) -> StreamGrads:
    """Collect the stream's gradients from a backward trace of an unbatched (T,) input."""
    names = []
    for i in reversed(range(n_layers)):
        names += [f"block{i}.res2", f"block{i}.res1"]
    names.append("x0")
    stream = np.stack([np.asarray(gtrace["d" + n], dtype=np.float64) for n in names])  # (S, T, d_model)
    if stream.ndim != 3:
        raise ValueError(f"expected an unbatched trace with (T, d_model) gradients, got {stream.shape[1:]}")
    return StreamGrads(tuple(names), stream, np.diff(stream, axis=0))


@dataclass(frozen=True)
class StreamState:
    """The norms at one position t."""

    t: int
    stream_norm: np.ndarray  # (S,) |d stream| at each stage, top first
    branch_norm: np.ndarray  # (S - 1,) |branch part| added between stage s and s + 1
    skip_share: float  # |d top| / |d x0| at t (0 where nothing arrives)

    @property
    def largest_branch(self) -> int:
        """The branch (between stage s and s + 1) that adds the largest part."""
        return int(np.argmax(self.branch_norm))


def stream_state(sg: StreamGrads, t: int) -> StreamState:
    """Norms of the stream gradient and of every branch's part at position ``t``."""
    T = sg.stream.shape[1]
    if not (0 <= int(t) < T):
        raise ValueError(f"t must be in [0, {T}), got {t!r}")
    t = int(t)
    s = np.linalg.norm(sg.stream[:, t], axis=-1)  # (S,)
    b = np.linalg.norm(sg.branch[:, t], axis=-1)  # (S - 1,)
    return StreamState(t, s, b, float(s[0] / s[-1]) if s[-1] > 0 else 0.0)


def draw_stream(fig, st: StreamState, sg: StreamGrads, words=None, ymax: float | None = None):
    """Left: |d stream| down the stack at position t, with each branch's part. Right: |d stream| for every position.

    The left panel's height is ``ymax`` when given (``backprop_view`` passes the largest norm at any position, so
    that the axes stay still), else this position's largest norm. Returns ``update(state)``, which moves the line,
    the bars, the title and the marker of t on the right to another position and returns those artists
    (``byhand.live`` redraws only them).
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    S = len(sg.stages)
    (line,) = ax.plot(np.arange(S), np.zeros(S), "o-", color="black", lw=1.6, label="stream gradient")
    top = max(ymax if ymax is not None else max(st.stream_norm.max(), st.branch_norm.max()), 1e-12)
    floor = top * 1e-3  # the log axis's floor: bars stand on it, and a norm of exactly 0 is not drawn
    bars = list(ax.bar(np.arange(S - 1) + 0.5, np.zeros(S - 1), width=0.5, bottom=floor, color="tab:orange",
                       alpha=0.8, label="part added by the branch").patches)
    ax.set_xticks(np.arange(S))
    ax.set_xticklabels([n.replace("block", "b") for n in sg.stages], rotation=45, fontsize=9, ha="right")
    ax.set_xlim(-0.5, S - 0.5)
    ax.set_ylabel(r"length of $\partial\mathcal{L}/\partial$(stream) (log)")
    title = ax.set_title("", fontsize=9)
    ax.legend(fontsize=9, frameon=False, loc="upper left")
    # log scale, fixed over every position: norms that differ a hundredfold between positions all stay readable
    ax.set_yscale("log", nonpositive="mask")
    ax.set_ylim(floor, top * 60)  # the band above the largest norm holds the legend
    norms = np.linalg.norm(sg.stream, axis=-1)  # (S, T)
    shown = np.ma.masked_less_equal(norms, 0.0)  # no gradient at all: left blank
    im = ax2.imshow(shown, aspect="auto", cmap="viridis", norm=LogNorm(vmin=max(shown.max() * 1e-3, 1e-12),
                                                                     vmax=max(shown.max(), 1e-12)))
    fig.colorbar(im, ax=ax2, fraction=0.08, pad=0.03).ax.tick_params(labelsize=9)
    marker = ax2.axvline(0, color="white", lw=3.0)  # the chosen position, a bold white line
    ax2.set_yticks(np.arange(S))
    ax2.set_yticklabels([n.replace("block", "b") for n in sg.stages], fontsize=9)
    if words is not None:
        ax2.set_xticks(np.arange(norms.shape[1]))
        ax2.set_xticklabels([f"{t} {w}" for t, w in enumerate(words)], rotation=90, fontsize=9)
    ax2.set_xlabel("position t and its word", fontsize=9)
    ax2.set_title("length at every position (log colour)", fontsize=9)
    fig.subplots_adjust(left=0.1, right=0.91, bottom=0.33, top=0.88, wspace=0.45)  # right: the colour bar's labels

    def update(new: StreamState) -> list:
        line.set_ydata(np.where(new.stream_norm > 0, new.stream_norm, np.nan))  # 0: no gradient yet, not drawn
        set_bars(bars, np.clip(new.branch_norm - floor, 0.0, None))  # bars stand on the floor
        word = f" ({words[new.t]})" if words is not None else ""
        title.set_text(f"position t = {new.t}{word}")
        marker.set_xdata([new.t, new.t])
        return [*bars, line, marker, title]

    update(st)
    return update


def describe_stream(st: StreamState, sg: StreamGrads, words=None) -> str:
    """The figure in words: the gradient's norm at the top and at x0 for position t, and the largest branch part."""
    word = f" ({words[st.t]})" if words is not None else ""
    b = st.largest_branch
    stages = [n.replace("block", "b") for n in sg.stages]
    return (f"Left: the length of the loss gradient on the residual stream at position t = {st.t}{word}, down the "
            f"stack: {fmt(st.stream_norm[0], '.3g')} at {stages[0]} and {fmt(st.stream_norm[-1], '.3g')} at "
            f"{stages[-1]}; the largest part a branch adds is {fmt(st.branch_norm[b], '.3g')}, between {stages[b]} and "
            f"{stages[b + 1]}. Right: a heatmap of that length at every stage and position (log colour), position {st.t} "
            f"marked.")


def table_stream(st: StreamState, sg: StreamGrads):
    """The heatmap's data: the norm of the stream gradient at every stage (row) and position (column)."""
    norms = np.linalg.norm(sg.stream, axis=-1)  # (S, T), as the heatmap draws it
    return (["stage"] + [f"t = {t}" for t in range(norms.shape[1])],
            [[name.replace("block", "b"), *row] for name, row in zip(sg.stages, norms)])


def backprop_view(gtrace: dict, n_layers: int, words=None):
    """Return ``draw(fig, setting)``; the stream's gradients are collected once, here. ``draw`` returns
    ``update(setting)`` for ``byhand.live``: the left panel's height holds the largest norm at any position, so
    every position keeps the axes still."""
    sg = stream_grads(gtrace, n_layers)
    ymax = float(max(np.linalg.norm(sg.stream, axis=-1).max(), np.linalg.norm(sg.branch, axis=-1).max()))

    return make_view(lambda setting: stream_state(sg, setting["t"]), draw_stream, sg, words, ymax,
                     describe=lambda st: describe_stream(st, sg, words), table=lambda st: table_stream(st, sg))


def draw_skips(fig, with_skips, without_skips, stages, label: str = "no skip at any link") -> None:
    """The gradient's length at each stage, top first, with every skip kept and with none (log axis, numbers labelled).

    ``with_skips`` and ``without_skips`` are (S,) lengths that share their first entry (the top); ``stages`` names
    the S stages (trace names such as "block2.res2" ... "x0")."""
    w, wo = np.asarray(with_skips, dtype=float), np.asarray(without_skips, dtype=float)
    if w.shape != wo.shape or w.shape != (len(stages),) or np.any(w <= 0) or np.any(wo <= 0):
        raise ValueError("need two positive length profiles, one entry per stage")
    ax = fig.subplots()
    s = np.arange(len(stages))
    ax.plot(s, w, "o-", color="black", lw=1.6, label="with the skips (the model)")
    ax.plot(s, wo, "s--", color="tab:red", lw=1.6, label=label)
    for x, v in zip(s, w):
        ax.annotate(fmt(v, ".3g"), (x, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    for x, v in zip(s[1:], wo[1:]):
        ax.annotate(fmt(v, ".2g"), (x, v), textcoords="offset points", xytext=(0, -13), ha="center", fontsize=8,
                    color="tab:red")
    ax.set_yscale("log")
    ax.set_ylim(min(w.min(), wo.min()) / 8, max(w.max(), wo.max()) * 8)
    ax.set_xticks(s)
    ax.set_xticklabels([n.replace("block", "b") for n in stages], fontsize=9)
    ax.set_xlim(-0.4, len(stages) - 0.6)
    ax.set_xlabel("stage of the stream, top (left) to x0 (right)", fontsize=9)
    ax.set_ylabel(r"length of $\partial\mathcal{L}/\partial$(stream) (log)", fontsize=9)
    ax.legend(fontsize=9, frameon=False, loc="lower left")
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.95)


def describe_skips(with_skips, without_skips, stages) -> str:
    """The skip figure in words: the two lengths at the top and at the bottom, and their ratio at the bottom."""
    names = [n.replace("block", "b") for n in stages]
    return (f"The length of the loss gradient on the stream at the last position, at each of {len(stages)} stages from "
            f"{names[0]} down to {names[-1]}, on a log axis. With the skips (black) it starts at "
            f"{fmt(with_skips[0], '.4g')} and ends at {fmt(with_skips[-1], '.4g')}; with no skip at any link (red) it "
            f"starts at the same value and ends at {fmt(without_skips[-1], '.2g')}, "
            f"{with_skips[-1] / without_skips[-1]:,.0f} times shorter.")


def table_skips(with_skips, without_skips, stages):
    """The skip figure's data: one row per stage."""
    return (["stage", "with the skips", "no skip"],
            [[n.replace("block", "b"), float(a), float(b)] for n, a, b in zip(stages, with_skips, without_skips)])


def skip_lengths(top, Js, keep) -> np.ndarray:
    """The gradient's length at each stage, top first, with the skip at link k kept where ``keep[k]`` and removed
    elsewhere: link k hands on ``g @ Js[k]`` (the branch's part), plus ``g`` itself only if its skip is kept.
    Products only: ``Js`` are the branches' measured slopes, top first, and they stay the same in every case."""
    if len(keep) != len(Js):
        raise ValueError("need one keep flag per link")
    g = np.asarray(top, dtype=float)
    out = [np.linalg.norm(g)]
    for k, J in zip(keep, Js):
        g = g @ J + (g if k else 0.0)
        out.append(np.linalg.norm(g))
    return np.array(out)


@dataclass(frozen=True)
class SkipState:
    """One frame of the skip slider: ``drop`` = 0 keeps every skip, ``drop`` = k removes the skip at link k alone."""

    drop: int
    model: np.ndarray  # (S,) lengths with every skip kept
    frame: np.ndarray  # (S,) lengths with the skip at link ``drop`` removed


def _drop_label(st: SkipState, links) -> str:
    return "every skip kept" if st.drop == 0 else f"skip at link {st.drop} ({links[st.drop - 1]}) removed"


def draw_dropped(fig, st: SkipState, stages, links, floor: float | None = None) -> object:
    """One frame of the skip slider: black, every skip kept; red, this frame's skips; the length at x0 in the title.

    Returns ``update(state)``, which moves the red curve, its numbers and the title in place (``byhand.live``); the
    log axis runs from ``floor`` (the smallest length of any frame, so that it stays fixed) to above the largest."""
    w, s = np.asarray(st.model, float), np.arange(len(stages))
    lo = float(floor) if floor is not None else float(min(w.min(), np.min(st.frame)))
    ax = fig.subplots()
    ax.plot(s, w, "o-", color="black", lw=1.6, label="every skip kept (the model)")
    (red,) = ax.plot(s, st.frame, "s--", color="tab:red", lw=1.6, label="this frame")
    for x, v in zip(s, w):
        ax.annotate(fmt(v, ".3g"), (x, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=9)
    marks = [ax.annotate("", (x, w[0]), textcoords="offset points", xytext=(0, -14), ha="center", fontsize=9,
                         color="tab:red") for x in s[1:]]
    ax.set_yscale("log")
    ax.set_ylim(lo / 8, w.max() * 8)
    ax.set_xticks(s)
    ax.set_xticklabels([n.replace("block", "b") for n in stages], fontsize=9)
    ax.set_xlim(-0.4, len(stages) - 0.6)
    ax.set_xlabel("stage of the stream, top (left) to x0 (right)", fontsize=9)
    ax.set_ylabel(r"length of $\partial\mathcal{L}/\partial$(stream) (log)", fontsize=9)
    ax.legend(fontsize=9, frameon=False, loc="upper left")  # the red curve can fall to the lower left
    title = ax.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.12, right=0.97, bottom=0.2, top=0.89)

    def update(new: SkipState) -> list:
        red.set_ydata(new.frame)
        for m, x, v in zip(marks, s[1:], new.frame[1:]):
            m.set_text("" if np.isclose(v, w[x]) else fmt(v, ".2g"))  # only where red leaves black
            m.xy = (x, v)
        title.set_text(f"{_drop_label(new, links)}: length at x0 = {fmt(new.frame[-1], '.3g')} "
                       f"(every skip: {fmt(new.model[-1], '.3g')})")
        return [red, *marks, title]

    update(st)
    return update


def skips_view(top, Js, stages, links):
    """Return ``draw(fig, setting)`` with ``setting = {"drop": k}``: k = 0 keeps every skip, k = 1 … len(Js) removes
    the skip at link k and keeps the others. ``links`` names the links, top first (e.g. "block 2 feed-forward")."""
    if not len(Js) == len(links) == len(stages) - 1:
        raise ValueError("need one J and one name per link, and one stage more than links")
    model = skip_lengths(top, Js, [True] * len(Js))

    def state(setting):
        k = int(setting["drop"])
        return SkipState(k, model, skip_lengths(top, Js, [j != k - 1 for j in range(len(Js))]))

    def describe(st):
        return (f"{_drop_label(st, links)}. The length of the loss gradient on the stream at the last position, from "
                f"{stages[0].replace('block', 'b')} down to x0, on a log axis: with every skip (black) it ends at "
                f"{fmt(st.model[-1], '.3g')}; in this frame (red) it ends at {fmt(st.frame[-1], '.3g')}.")

    def table(st):
        return (["stage", "every skip kept", "this frame"],
                [[n.replace("block", "b"), float(a), float(b)] for n, a, b in zip(stages, st.model, st.frame)])

    floor = min(skip_lengths(top, Js, [j != k for j in range(len(Js))]).min() for k in range(len(Js)))
    return make_view(state, draw_dropped, stages, links, min(floor, model.min()), describe=describe, table=table)


def draw_branch(fig, arriving, through, branch: str = "F: layer norm, W₁, GELU, W₂") -> None:
    """A block diagram of one residual link, r2 = r1 + F(r1), with its backward pass and its numbers.

    Forward (black, left to right): r1 feeds two places, the skip straight to the addition and the branch F, whose
    output f joins it there. Backward (red, dashed, right to left): the gradient ``arriving`` on r2 goes down both
    paths (the addition's slope is 1 for each input), comes back through F as ``through`` (= arriving J_F), and the
    two add where r1 forked. Each red label gives the vector's length and its entry 0, so the sum can be checked."""
    arriving, through = np.asarray(arriving, float), np.asarray(through, float)
    total = arriving + through
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 4.6)
    ax.axis("off")
    black = dict(arrowstyle="-|>", color="black", lw=1.4, mutation_scale=12)
    red = dict(arrowstyle="-|>", color="tab:red", lw=1.4, ls="--", mutation_scale=12)
    y0, y1 = 2.3, 3.5  # the skip's height and the branch's height
    xf, xp = 1.9, 8.3  # the fork (where r1 feeds two places) and the addition
    ax.text(0.75, y0, "r₁", ha="center", va="center", fontsize=12, bbox=dict(boxstyle="round", fc="white"))
    ax.text(9.35, y0, "r₂", ha="center", va="center", fontsize=12, bbox=dict(boxstyle="round", fc="white"))
    ax.plot([1.1, xf], [y0, y0], color="black", lw=1.4)
    ax.plot([xf], [y0], "o", color="black", ms=5)
    ax.annotate("", (xp - 0.22, y0), (xf, y0), arrowprops=black)  # the skip
    ax.plot([xf, xf, xp], [y0, y1, y1], color="black", lw=1.4, zorder=1)  # up into the branch and out of it
    ax.annotate("", (3.2, y1), (xf, y1), arrowprops=black)
    ax.text(5.0, y1, branch, ha="center", va="center", fontsize=10, zorder=3,
            bbox=dict(boxstyle="square", fc="#eeeeee"))
    ax.annotate("", (xp, y0 + 0.22), (xp, y1), arrowprops=black)  # f joins the addition
    ax.text(xp + 0.12, (y0 + y1) / 2, "f", ha="left", va="center", fontsize=10)
    ax.text(xp, y0, "+", ha="center", va="center", fontsize=13, bbox=dict(boxstyle="circle", fc="white"))
    ax.annotate("", (8.55, y0), (9.0, y0), arrowprops=black)
    ax.text(5.0, y0 + 0.12, "skip", ha="center", va="bottom", fontsize=10)

    def said(v):
        return f"length {fmt(np.linalg.norm(v), 3)}, entry 0 = {fmt(v[0], 4)}"

    ax.annotate("", (xf + 0.1, y0 - 0.45), (xp, y0 - 0.45), arrowprops=red)  # the skip, backward
    ax.text(5.0, y0 - 0.55, f"skip hands on ∂L/∂r₂ whole: {said(arriving)}", ha="center", va="top", fontsize=9,
            color="tab:red")
    ax.annotate("", (xf + 0.1, y1 + 0.45), (xp, y1 + 0.45), arrowprops=red)  # the branch, backward
    ax.text(5.0, y1 + 0.55, f"back through F, ∂L/∂r₂ J_F: {said(through)}", ha="center", va="bottom", fontsize=9,
            color="tab:red")
    ax.text(9.35, y0 - 0.45, f"∂L/∂r₂\narrives", ha="center", va="top", fontsize=9, color="tab:red")
    ax.text(0.15, 0.75, f"where r₁ fed two places the gradients add: ∂L/∂r₁ = {fmt(arriving[0], 4)} + "
            f"{fmt(through[0], 4)} = {fmt(total[0], 4)} in entry 0; length {fmt(np.linalg.norm(total), 3)}",
            ha="left", va="center", fontsize=9, color="tab:red")
    handles = [plt_line("black", "-", "forward: values"), plt_line("tab:red", "--", "backward: gradients")]
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 0.0), fontsize=9, frameon=False, ncol=2)


def plt_line(color: str, ls: str, label: str):
    """A legend entry: a line of this colour and style."""
    from matplotlib.lines import Line2D

    return Line2D([], [], color=color, ls=ls, lw=1.4, label=label)


def describe_branch(arriving, through) -> str:
    """The diagram in words, with its numbers."""
    arriving, through = np.asarray(arriving, float), np.asarray(through, float)
    total = arriving + through
    return (f"Block diagram of one residual link, r2 = r1 + F(r1). Forward, r1 feeds two places: the skip goes "
            f"straight to the addition, and the branch F computes f, which joins it there. Backward, the gradient on "
            f"r2 (length {fmt(np.linalg.norm(arriving), 3)}, entry 0 = {fmt(arriving[0], 4)}) goes down both paths: "
            f"the skip hands it on whole, and through F it becomes dL/dr2 J_F (length "
            f"{fmt(np.linalg.norm(through), 3)}, entry 0 = {fmt(through[0], 4)}). At r1 the two add: entry 0 is "
            f"{fmt(total[0], 4)}, and the sum has length {fmt(np.linalg.norm(total), 3)}.")


def table_branch(arriving, through):
    """The diagram's numbers: the three gradients, entry 0 and length."""
    rows = [("dL/dr2, down the skip", arriving), ("dL/dr2 J_F, back through F", through),
            ("dL/dr1, their sum", np.asarray(arriving, float) + np.asarray(through, float))]
    return ["gradient", "entry 0", "length"], [[n, float(v[0]), float(np.linalg.norm(v))] for n, v in rows]
