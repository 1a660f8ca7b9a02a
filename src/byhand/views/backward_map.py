"""The backward pass of the Part III toy as a map (chapter "The backward pass through the encoder–decoder").

The boxes are those of chapter 30's block diagram (``byhand.views.machine``), with the gradient of the loss with
respect to each box's output in place of its shape: its size (the Frobenius norm, the square root of the sum of the
squared entries) is read from the exact path's backward trace. One list, ``backward_map(trace)``, drives the figure,
its text alternative and its data table, in the order the chapter walks the path: down the decoder to the
cross-attention, across the fork into the encoder's memory and down the encoder, then down the rest of the decoder.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .machine import draw_box, finish_stacks, machine_boxes

# the chapter's walk: box names of byhand.views.machine, in the order the chapter takes them
WALK = ("p", "logits", "dec0.ln3", "dec0.ffn.out", "dec0.ffn.pre", "dec0.ln2", "dec0.cross.out",
        "enc0.ln2", "enc0.ffn.out", "enc0.ffn.pre", "enc0.ln1", "enc0.attn.out", "X_src",
        "dec0.ln1", "dec0.self.out", "X_tgt")


@dataclass(frozen=True)
class MapBox:
    order: int  # 1 for the first box the chapter walks through, and so on
    side: str  # "encoder" or "decoder"
    step: int  # the box's row in chapter 30's diagram, 0 at the bottom
    name: str  # the forward trace entry the box produces
    grad: str  # the backward trace entry holding dL/d(that output); "" for the loss box
    kind: str
    label: str
    norm: float  # the Frobenius norm of the gradient; nan for the loss box


def _grad_name(name: str) -> str:
    if name == "p":
        return ""  # the loss itself: the walk starts here
    return "dlogits" if name == "logits" else "d" + name


def backward_map(trace: dict) -> list[MapBox]:
    """Every box of the toy with the size of the loss's gradient at its output, in the chapter's walking order."""
    boxes = {b.name: b for b in machine_boxes(trace)}
    if sorted(WALK) != sorted(boxes):
        raise ValueError("the walk must visit every box of the machine diagram once")
    out = []
    for i, name in enumerate(WALK, start=1):
        b, g = boxes[name], _grad_name(name)
        if g and g not in trace:
            raise ValueError(f"the trace has no gradient {g!r}: pass the exact path's trace, backward included")
        norm = float(np.linalg.norm(trace[g])) if g else float("nan")
        out.append(MapBox(i, b.side, b.step, name, g, b.kind, b.label, norm))
    return out


def _before_relu(m: MapBox) -> bool:
    """The two "4 → 8, ReLU" boxes show the gradient at the pre-activation ã (before the ReLU), not after it."""
    return m.name.endswith("ffn.pre")


def _size(m: MapBox) -> str:
    if not m.grad:
        return "loss L"
    return f"‖∂L/∂{'ã' if _before_relu(m) else '·'}‖ = {m.norm:.4f}"


def _step_text(m: MapBox, size: str) -> str:
    where = " (before the ReLU, at ã)" if _before_relu(m) else ""
    return f"{m.order}. {m.side} {m.label}{where}: {size}"


def backward_map_describe(boxes: list[MapBox]) -> str:
    """The text alternative: the walk, box by box, with the size of the gradient at each box's output."""
    by = {m.name: m for m in boxes}
    steps = "; ".join(_step_text(m, _size(m)) for m in boxes)
    return (f"Block diagram of the backward pass of the toy, the boxes of the forward diagram with arrows pointing "
            f"down, numbered in the order the chapter walks them. {steps}. At the decoder's cross-attention the "
            f"gradient forks: one branch goes into the memory at the top of the encoder (red arrow, "
            f"{by['enc0.ln2'].norm:.4f}), the other continues down the decoder "
            f"({by['dec0.ln1'].norm:.4f} at its first Add & Norm).")


def backward_map_table(boxes: list[MapBox]) -> tuple[list[str], list[list]]:
    """The figure's data: one row per box, in walking order. Each size is the unrounded norm, so that the table
    (``byhand.figure.cell``, 4 decimals) prints the same digits as the figure and its text alternative."""
    return (["walk", "side", "box", "gradient entry", "size of the gradient"],
            [[m.order, m.side, m.label, m.grad or "(the loss)", "" if not m.grad else m.norm] for m in boxes])


def backward_map_figure(boxes: list[MapBox]):
    """The two stacks of chapter 30's diagram with the arrows reversed, each box showing its gradient's size."""
    import matplotlib.pyplot as plt

    n_rows = max(m.step for m in boxes) + 1
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * n_rows + 1.3), dpi=100)
    _draw_map(fig, ax, boxes)
    return fig


BAR_DECADES = (-4, 1)  # the route player's bars: log10 of the gradient size at an empty and at a full bar


def _draw_map(fig, ax, boxes: list[MapBox], bars: bool = False, marked: tuple = ()) -> None:
    from matplotlib.patches import Rectangle

    n_rows = max(m.step for m in boxes) + 1
    x_of = {"encoder": 0.0, "decoder": 1.2}
    w, h = 0.95, 0.62
    at = {}
    for m in boxes:
        x, y = x_of[m.side], m.step
        draw_box(ax, x, y, w, h, m.kind)
        ax.text(x + 0.03, y + 0.13, f"{m.order}. {m.label}" + (" (I/σ)" if m.name in marked else ""), ha="left",
                va="center", fontsize=7.5, color="tab:red" if m.name in marked else "black")
        ax.text(x + w - 0.03, y - 0.15, _size(m), ha="right", va="center", fontsize=7.5, family="monospace")
        if bars and m.grad:  # a bar whose length is the gradient's size on a log scale, so frames can be compared
            lo, hi = BAR_DECADES
            frac = float(np.clip((np.log10(max(m.norm, 10.0**lo)) - lo) / (hi - lo), 0.0, 1.0))
            ax.add_patch(Rectangle((x + 0.03, y - 0.22), 0.42 * w, 0.14, fc="white", ec="0.5", lw=0.5))
            ax.add_patch(Rectangle((x + 0.03, y - 0.22), 0.42 * w * frac, 0.14, fc="0.25", ec="none"))
        at[m.name] = (x, y)
    for side in x_of:
        col = sorted((m for m in boxes if m.side == side), key=lambda m: m.step)
        for lo, hi in zip(col, col[1:]):  # the gradient flows down, from each box into the one below
            x = x_of[side] + w / 2
            ax.annotate("", (x, lo.step + h / 2), (x, hi.step - h / 2),
                        arrowprops=dict(arrowstyle="->", lw=0.8, color="0.3"))
    (mx, my), (cx, cy) = at["enc0.ln2"], at["dec0.cross.out"]
    ax.annotate("", (mx + w, my), (cx, cy),
                arrowprops=dict(arrowstyle="->", lw=1.2, color="tab:red", connectionstyle="arc3,rad=0.25"))
    ax.text((mx + w + cx) / 2, my + h / 2 + 0.1, "into the memory", fontsize=8, color="tab:red", ha="center",
            va="bottom")
    finish_stacks(fig, ax, x_of, w, n_rows)  # stack names, limits, legend: as chapter 30's diagram


# ---- the route map's player: let the first k layer norms on the way to the source take the shortcut ----------------

# the layer norms between the loss and the source embeddings, from the loss end (the decoder's first one, dec0.ln1,
# is not on that way and always keeps its full Jacobian)
SOURCE_LNS = ("dec0.ln3", "dec0.ln2", "enc0.ln2", "enc0.ln1")


@dataclass(frozen=True)
class RouteFrame:
    k: int  # how many layer norms of SOURCE_LNS, from the loss end, take the shortcut I/σ
    delta: float  # added to am's logit (through the output bias b_out[am])
    boxes: list  # the map's boxes, each with its gradient's size on this frame
    loss: float
    dlogit_am: float  # the am entry of p - ỹ (byhand's p - q) at the scored position
    fd_gap: float  # the largest |walked - finite difference| over the entries of dL/dX_src and dL/dX_tgt


def _direct_layernorm_backward(dy, cache):
    """The tempting shortcut: dx = gamma * dy / sigma, the direct path only (no mean, no variance path)."""
    from byhand.layernorm import layernorm_backward

    _, dgamma, dbeta = layernorm_backward(dy, cache)  # the parameters' gradients are unchanged
    return cache["rstd"] * dy * cache["gamma"], dgamma, dbeta


def route_frame(k: int = 0, delta: float = 0.0) -> RouteFrame:
    """The exact path's backward pass with the first ``k`` layer norms of ``SOURCE_LNS`` (from the loss end) walked
    with the shortcut γ/σ times the upstream gradient and the others with their full backward (``k=0`` is
    ``byhand.encdec`` as it is), ``delta`` added to am's logit; and its inputs' gradients against central finite
    differences."""
    import byhand.encdec as encdec
    from byhand import toy_2017 as toy
    from byhand.gradcheck import numerical_grads
    from byhand.layernorm import layernorm_backward
    from byhand.loss import cross_entropy_backward, cross_entropy_forward

    if k not in range(len(SOURCE_LNS) + 1):
        raise ValueError(f"k must be 0 to {len(SOURCE_LNS)}, got {k!r}")
    params, config = toy.toy_params(), toy.toy_config()
    params["b_out"] = params["b_out"].copy()
    params["b_out"][toy.TGT_VOCAB.index("am")] += delta
    X_src, X_tgt = toy.toy_inputs()

    def loss_of(X):
        logits, _ = encdec.encdec_forward_embedded(params, X["X_src"], X["X_tgt"], config)
        return float(cross_entropy_forward(logits, toy.toy_targets(), label_smoothing=toy.LABEL_SMOOTHING)[0])

    logits, cache = encdec.encdec_forward_embedded(params, X_src, X_tgt, config)
    loss, c = cross_entropy_forward(logits, toy.toy_targets(), label_smoothing=toy.LABEL_SMOOTHING)
    dlogits = cross_entropy_backward(1.0, c)
    cut = [cache[name] for name in SOURCE_LNS[:k]]  # the forward caches of the layer norms that take the shortcut

    def some_layernorm_backward(dy, ln_cache):  # the shortcut for the chosen layer norms, the full backward elsewhere
        if any(ln_cache is x for x in cut):
            return _direct_layernorm_backward(dy, ln_cache)
        return layernorm_backward(dy, ln_cache)

    saved = encdec.layernorm_backward
    encdec.layernorm_backward = some_layernorm_backward
    try:
        _, gtrace = encdec.encdec_backward(dlogits, cache)
    finally:
        encdec.layernorm_backward = saved
    trace = {**cache["trace"], "p": c["p"], "q": c["q"], **gtrace}
    fd = numerical_grads(loss_of, {"X_src": X_src, "X_tgt": X_tgt})
    gap = max(float(np.abs(gtrace["d" + n] - fd[n]).max()) for n in ("X_src", "X_tgt"))
    return RouteFrame(k, float(delta), backward_map(trace), float(loss),
                      float(dlogits[toy.SCORED, toy.TGT_VOCAB.index("am")]), gap)


def _shortcut_text(k: int) -> str:
    if k == 0:
        return "the full Jacobian in every layer norm"
    return (f"the shortcut I/σ in {k} layer norm{'s' if k > 1 else ''} ({', '.join(SOURCE_LNS[:k])}), "
            "the full Jacobian in the others")


def route_frame_label(f: RouteFrame) -> str:
    return f"k = {f.k}: {_shortcut_text(f.k)}"


def _gap_text(gap: float) -> str:
    return "below 1e-8" if gap < 1e-8 else f"{gap:.4f}"


def route_frame_describe(f: RouteFrame) -> str:
    sizes = "; ".join(_step_text(m, f"{m.norm:.4f}") for m in f.boxes[1:])
    return (f"The backward map with {_shortcut_text(f.k)}. Gradient sizes: {sizes}. Largest gap "
            f"between the walked gradient of the inputs X_src, X_tgt and finite differences: {_gap_text(f.fd_gap)}.")


def draw_route_frame(fig, f: RouteFrame) -> None:
    """``static_slider``'s draw: the map of one frame, with the shortcut's layer norms and the check in the title."""
    ax = fig.add_subplot(1, 1, 1)
    ax.set_title(f"k = {f.k} layer norms take I/σ   box 13, ‖∂L/∂X_src‖ = "
                 f"{next(m.norm for m in f.boxes if m.name == 'X_src'):.4f}   inputs' gradient vs finite "
                 f"differences: gap {_gap_text(f.fd_gap)}", fontsize=8,
                 color="tab:red" if f.fd_gap >= 1e-8 else "black")
    _draw_map(fig, ax, f.boxes, bars=True, marked=SOURCE_LNS[:f.k])  # its tight layout makes room for the title
    lo, hi = BAR_DECADES
    ax.text(0.01, 0.72, f"dark bar in a box: its gradient size on a log scale,\nempty at 1e{lo}, full at 1e+{hi};"
            f"\nred label: a layer norm that takes I/σ", fontsize=7.5, ha="left", va="top", color="0.25",
            transform=ax.transAxes)
