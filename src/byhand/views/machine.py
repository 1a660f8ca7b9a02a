"""The block diagram of the Part III toy at its own shapes (chapter "The 2017 machine and its toy").

One list of boxes, ``machine_boxes(trace)``, drives the figure, its text alternative and its data table, so the three
cannot disagree. Each box names the trace entry (``byhand.encdec``) whose array it produces and reads its shape from
the trace, so the diagram shows the shapes the toy really has. Given the trace as ``values``, the figure, the text
alternative and the table also print each box's two rows, rounded to two decimals (``box_rows``), so a reader can
follow the toy's own numbers up the stacks.
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


SHOWN = {"enc0.ffn.pre": "enc0.ffn.relu", "dec0.ffn.pre": "dec0.ffn.relu"}  # the "4 → 8, ReLU" boxes: after ReLU
MAX_COLS = 4  # a row wider than this shows its first MAX_COLS entries and "…"


def _num(v: float) -> str:
    v = round(float(v), 2) + 0.0  # + 0.0: no "-0"
    return str(int(v)) if v == int(v) else f"{v:.2f}"


def box_rows(box: Box, values: dict) -> list[str]:
    """The rows of the array ``box`` produces, each as "[a b c d]" at two decimals, elided after MAX_COLS entries.

    The box labelled "FFN: 4 → 8, ReLU" shows its trace entry after the ReLU (``SHOWN``); every other box shows its
    own entry.
    """
    import numpy as np

    arr = np.atleast_2d(np.asarray(values[SHOWN.get(box.name, box.name)], float))
    out = []
    for row in arr:
        cells = [f"{_num(v):>5}" for v in row[:MAX_COLS]] + (["    …"] if len(row) > MAX_COLS else [])
        out.append("[" + " ".join(cells) + "]")
    return out


def _rows_text(box: Box, values: dict | None) -> str:
    return "" if values is None else ": " + " / ".join("[" + " ".join(r.strip("[]").split()) + "]" for r in box_rows(box, values))


def machine_describe(boxes: list[Box], values: dict | None = None) -> str:
    """The text alternative: both stacks, bottom to top, with every shape (and, given ``values``, every box's rows),
    and where the memory goes."""
    enc = "; ".join(f"{b.label} ({_shape(b.shape)}){_rows_text(b, values)}" for b in boxes if b.side == "encoder")
    dec = "; ".join(f"{b.label} ({_shape(b.shape)}){_rows_text(b, values)}" for b in boxes if b.side == "decoder")
    mem = next(b for b in boxes if b.name == "enc0.ln2")
    return (f"Block diagram of the toy, read from the bottom up. Encoder: {enc}. Decoder: {dec}. An arrow carries "
            f"the memory ({_shape(mem.shape)}) from the top of the encoder into the decoder's cross-attention, "
            f"where it gives the keys and values.")


def machine_table(boxes: list[Box], values: dict | None = None) -> tuple[list[str], list[list]]:
    """The figure's data: one row per box; given ``values``, with the full array the box produces."""
    if values is None:
        return (["side", "box", "trace entry", "shape"], [[b.side, b.label, b.name, _shape(b.shape)] for b in boxes])
    import numpy as np

    full = lambda b: np.array2string(np.asarray(values[SHOWN.get(b.name, b.name)]), precision=4, suppress_small=True,
                                     max_line_width=10_000).replace("\n", "")
    return (["side", "box", "trace entry shown", "shape", "array (4 decimals)"],
            [[b.side, b.label, SHOWN.get(b.name, b.name), _shape(b.shape), full(b)] for b in boxes])


def machine_figure(boxes: list[Box], values: dict | None = None):
    """Draw the two stacks side by side, bottom to top, one box per entry, the memory's arrow into cross-attention.

    Given ``values`` (the trace), each box also prints the rows of its array (``box_rows``)."""
    import matplotlib.pyplot as plt

    n_rows = max(b.step for b in boxes) + 1
    fs = 8 if values is None else 9
    fig, ax = plt.subplots(figsize=(7.2, (0.55 if values is None else 0.95) * n_rows + 1.3), dpi=100)
    x_of = {"encoder": 0.0, "decoder": 1.15}
    w, h = 0.95, (0.62 if values is None else 0.8)
    centre = {}
    for b in boxes:
        x, y = x_of[b.side], b.step
        draw_box(ax, x, y, w, h, b.kind)
        y_top = y if values is None else y + 0.24
        ax.text(x + 0.03, y_top, b.label, ha="left", va="center", fontsize=fs)
        ax.text(x + w - 0.03, y_top, _shape(b.shape), ha="right", va="center", fontsize=fs, family="monospace")
        if values is not None:
            for k, line in enumerate(box_rows(b, values)):
                ax.text(x + 0.03, y - 0.02 - 0.22 * k, f"{k}: {line}", ha="left", va="center", fontsize=fs,
                        family="monospace")
        centre[b.name] = (x, y)
        if b.step > 0:  # an arrow up from the box below
            ax.annotate("", (x + w / 2, y - h / 2), (x + w / 2, y - 1 + h / 2),
                        arrowprops=dict(arrowstyle="->", lw=0.8, color="0.3"))
    (mx, my), (cx, cy) = centre["enc0.ln2"], centre["dec0.cross.out"]
    cy_end = cy if values is None else cy + 0.24  # beside the box's label, clear of its printed rows
    ax.annotate("", (cx, cy_end), (mx + w, my),
                arrowprops=dict(arrowstyle="->", lw=1.2, color="tab:red", connectionstyle="arc3,rad=-0.25"))
    if values is None:
        ax.text((mx + w + cx) / 2, my + h / 2 + 0.1, "memory", fontsize=fs, color="tab:red", ha="center",
                va="bottom")
    else:  # above the memory box, clear of the wider boxes
        ax.text(mx + w, my + h / 2 + 0.1, "memory ↘", fontsize=fs, color="tab:red", ha="right", va="bottom")
    finish_stacks(fig, ax, x_of, w, n_rows, legend_fontsize=7.5 if values is None else fs)
    return fig


def draw_box(ax, x: float, y: float, w: float, h: float, kind: str) -> None:
    """One box of a block diagram: a rounded rectangle ``w`` wide and ``h`` high, its left edge at ``x`` and its
    centre at height ``y``, in the face colour of ``kind`` (a key of ``KINDS``). Shared with ``views.backward_map``."""
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0.02", fc=KINDS[kind][0], ec="0.3", lw=0.8))


def finish_stacks(fig, ax, x_of: dict, w: float, n_rows: int, legend_fontsize: float = 7.5) -> None:
    """How a two-stack block diagram ends (this one and ``views.backward_map``'s): each stack's name under it, the
    limits, no axes, the legend of ``KINDS``, and a tight layout. ``x_of`` maps "encoder"/"decoder" to a left edge."""
    from matplotlib.patches import Patch

    for side, x in x_of.items():
        ax.text(x + w / 2, -0.75, side, ha="center", va="top", fontsize=9, weight="bold")
    ax.set_xlim(-0.05, x_of["decoder"] + w + 0.05)
    ax.set_ylim(-1.1, n_rows - 0.4)
    ax.axis("off")
    ax.legend(handles=[Patch(fc=c, ec="0.3", label=t) for c, t in KINDS.values()], loc="upper left",
              fontsize=legend_fontsize, frameon=False, bbox_to_anchor=(0.0, 1.0))
    fig.tight_layout()
