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


def _size(m: MapBox) -> str:
    return "loss L" if not m.grad else f"‖∂L/∂·‖ = {m.norm:.4f}"


def backward_map_describe(boxes: list[MapBox]) -> str:
    """The text alternative: the walk, box by box, with the size of the gradient at each box's output."""
    by = {m.name: m for m in boxes}
    steps = "; ".join(f"{m.order}. {m.side} {m.label}: {_size(m)}" for m in boxes)
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
    x_of = {"encoder": 0.0, "decoder": 1.2}
    w, h = 0.95, 0.62
    at = {}
    for m in boxes:
        x, y = x_of[m.side], m.step
        draw_box(ax, x, y, w, h, m.kind)
        ax.text(x + 0.03, y + 0.13, f"{m.order}. {m.label}", ha="left", va="center", fontsize=7.5)
        ax.text(x + w - 0.03, y - 0.15, _size(m), ha="right", va="center", fontsize=7.5, family="monospace")
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
    return fig
