"""The block diagram of the Part III toy at its own shapes (chapter "The 2017 machine and its toy").

One list of boxes, ``machine_boxes(trace)``, drives the figure, its text alternative and its data table, so the three
cannot disagree. Each box names the trace entry (``byhand.encdec``) whose array it produces and reads its shape from
the trace, so the diagram shows the shapes the toy really has.
"""
from __future__ import annotations

from dataclasses import dataclass

KINDS = {  # box kind -> (face colour, legend text)
    "input": ("#e6e6e6", "input rows (embeddings + positions)"),
    "attention": ("#fdd9a0", "attention sublayer"),
    "norm": ("#fff3b0", "Add & Norm (residual sum, then layer norm)"),
    "ffn": ("#bfdcf2", "feed-forward sublayer (ReLU)"),
    "output": ("#c8e6c0", "output layer, softmax and loss"),
}

_ENCODER = [("X_src", "input", "je suis: embed ×2, + PE"), ("enc0.attn.out", "attention", "self-attention, 2 heads"),
            ("enc0.ln1", "norm", "Add & Norm"), ("enc0.ffn.pre", "ffn", "FFN: 4 → 8, ReLU"),
            ("enc0.ffn.out", "ffn", "FFN: 8 → 4"), ("enc0.ln2", "norm", "Add & Norm = memory")]
_DECODER = [("X_tgt", "input", "<bos> i: embed ×2, + PE"), ("dec0.self.out", "attention", "masked self-attention"),
            ("dec0.ln1", "norm", "Add & Norm"), ("dec0.cross.out", "attention", "cross-attention (K, V: memory)"),
            ("dec0.ln2", "norm", "Add & Norm"), ("dec0.ffn.pre", "ffn", "FFN: 4 → 8, ReLU"),
            ("dec0.ffn.out", "ffn", "FFN: 8 → 4"), ("dec0.ln3", "norm", "Add & Norm = H"),
            ("logits", "output", "linear W_out: logits"), ("p", "output", "softmax p; loss at row 1")]


@dataclass(frozen=True)
class Box:
    side: str  # "encoder" or "decoder"
    step: int  # 0 at the bottom (the input), counting up
    name: str  # the trace entry this box produces
    kind: str  # a key of KINDS
    label: str  # what the box does
    shape: tuple[int, ...]  # the shape of the trace entry: (positions, columns)


def machine_boxes(trace: dict) -> list[Box]:
    """Every box of the toy's forward pass, encoder then decoder, bottom to top, with its shape from ``trace``."""
    missing = [n for n, _, _ in _ENCODER + _DECODER if n not in trace]
    if missing:
        raise ValueError(f"the trace has no entries {missing}: pass the exact path's trace")
    return [Box(side, i, n, kind, label, tuple(trace[n].shape))
            for side, rows in (("encoder", _ENCODER), ("decoder", _DECODER))
            for i, (n, kind, label) in enumerate(rows)]


def _shape(s: tuple[int, ...]) -> str:
    return " × ".join(map(str, s))


def machine_describe(boxes: list[Box]) -> str:
    """The text alternative: both stacks, bottom to top, with every shape, and where the memory goes."""
    enc = "; ".join(f"{b.label} ({_shape(b.shape)})" for b in boxes if b.side == "encoder")
    dec = "; ".join(f"{b.label} ({_shape(b.shape)})" for b in boxes if b.side == "decoder")
    mem = next(b for b in boxes if b.name == "enc0.ln2")
    return (f"Block diagram of the toy, read from the bottom up. Encoder: {enc}. Decoder: {dec}. An arrow carries "
            f"the memory ({_shape(mem.shape)}) from the top of the encoder into the decoder's cross-attention, "
            f"where it gives the keys and values.")


def machine_table(boxes: list[Box]) -> tuple[list[str], list[list]]:
    """The figure's data: one row per box."""
    return (["side", "box", "trace entry", "shape"], [[b.side, b.label, b.name, _shape(b.shape)] for b in boxes])


def machine_figure(boxes: list[Box]):
    """Draw the two stacks side by side, bottom to top, one box per entry, the memory's arrow into cross-attention."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch, Patch

    n_rows = max(b.step for b in boxes) + 1
    fig, ax = plt.subplots(figsize=(7.2, 0.55 * n_rows + 1.3), dpi=100)
    x_of = {"encoder": 0.0, "decoder": 1.15}
    w, h = 0.95, 0.62
    centre = {}
    for b in boxes:
        x, y = x_of[b.side], b.step
        ax.add_patch(FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0.02",
                                    fc=KINDS[b.kind][0], ec="0.3", lw=0.8))
        ax.text(x + 0.03, y, b.label, ha="left", va="center", fontsize=8)
        ax.text(x + w - 0.03, y, _shape(b.shape), ha="right", va="center", fontsize=8, family="monospace")
        centre[b.name] = (x, y)
        if b.step > 0:  # an arrow up from the box below
            ax.annotate("", (x + w / 2, y - h / 2), (x + w / 2, y - 1 + h / 2),
                        arrowprops=dict(arrowstyle="->", lw=0.8, color="0.3"))
    (mx, my), (cx, cy) = centre["enc0.ln2"], centre["dec0.cross.out"]
    ax.annotate("", (cx, cy), (mx + w, my),
                arrowprops=dict(arrowstyle="->", lw=1.2, color="tab:red", connectionstyle="arc3,rad=-0.25"))
    ax.text((mx + w + cx) / 2, my + h / 2 + 0.1, "memory", fontsize=8, color="tab:red", ha="center", va="bottom")
    for side, x in x_of.items():
        ax.text(x + w / 2, -0.75, side, ha="center", va="top", fontsize=9, weight="bold")
    ax.set_xlim(-0.05, x_of["decoder"] + w + 0.05)
    ax.set_ylim(-1.1, n_rows - 0.4)
    ax.axis("off")
    ax.legend(handles=[Patch(fc=c, ec="0.3", label=t) for c, t in KINDS.values()], loc="upper left",
              fontsize=7.5, frameon=False, bbox_to_anchor=(0.0, 1.0))
    fig.tight_layout()
    return fig
