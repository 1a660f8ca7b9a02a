"""The view behind Part II, "Multi-head and output projection": each head's share of the output row.

Concatenating the heads and multiplying by W_o is the same as giving each head its own block of rows
of W_o and adding the results:

    out_t = [o_t^(0), o_t^(1)] W_o + b_o = o_t^(0) W_o[0:d_k] + o_t^(1) W_o[d_k:2 d_k] + b_o.

Heads count from 0, as everywhere in the book. ``head_state`` scales the last head's share (head 1 of the
toy) by a ``factor`` (1: the model; 0: that head switched off) and returns
each term; ``draw_heads`` stacks them, and a move redraws only the last head's bars, the sum and the title
(``byhand.live``). ``heads_view`` can also show a readout of the whole model as a function of the factor (the
chapter passes the probability of the right next word at position t, from a rerun of the forward pass): a second
panel draws it over the widget's range, with a dot at the current factor. The view computes no model arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from matplotlib.ticker import MaxNLocator

from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars, span


@dataclass(frozen=True)
class HeadState:
    """The output row of position t as a sum of per-head terms, the last head's scaled by ``factor``."""

    t: int  # position
    factor: float  # what the last head's term is multiplied by (1 = the model)
    terms: np.ndarray  # (h, d_model) head k's term o_t^(k) W_o[k d_k:(k+1) d_k], the last one times factor
    b_o: np.ndarray  # (d_model,) the output bias
    out: np.ndarray  # (d_model,) sum of the terms plus b_o
    readout: float | None = None  # the view's readout at this factor (e.g. P of the right word), None if none

    @property
    def largest_out(self) -> int:
        """The entry of the output row largest in size."""
        return int(np.argmax(np.abs(self.out)))


def head_state(O_heads, W_o, b_o, t: int = 4, factor: float = 1.0) -> HeadState:
    """Split out_t = merge(O_heads)[t] W_o + b_o into per-head terms; O_heads (h, T, d_k), W_o (h d_k, d_model)."""
    O_heads, W_o, b_o = as_float("O_heads", O_heads), as_float("W_o", W_o), as_float("b_o", b_o)
    check_ndim("O_heads", O_heads, (3,))
    h, T, d_k = O_heads.shape
    if W_o.shape[0] != h * d_k or b_o.shape != (W_o.shape[1],):
        raise ValueError(f"W_o must have {h * d_k} rows and b_o {W_o.shape[1]} entries, got {W_o.shape}, {b_o.shape}")
    if not 0 <= t < T:
        raise ValueError(f"position t = {t} is outside 0..{T - 1}")
    blocks = W_o.reshape(h, d_k, -1)  # (h, d_k, d_model): head k's rows of W_o
    terms = np.einsum("hk,hkd->hd", O_heads[:, t, :], blocks)  # (h, d_model)
    terms[-1] *= factor
    return HeadState(t, float(factor), terms, b_o, terms.sum(0) + b_o)


def draw_heads(fig, state: HeadState, ylim: tuple[float, float] | None = None, curve=None):
    """Each head's term as side-by-side bars for the 16 output entries, and their sum with b_o as a line.

    ``curve`` = (factors, values, label), when given, adds a narrow panel on the right: the readout over the
    factors as a line, and a dot at ``state.factor``, ``state.readout``.

    Returns ``update(state)``, which moves the last head's bars, the sum line and the title to another factor and returns
    those artists (``byhand.live`` redraws only them; the other heads' bars do not depend on the factor). The limits are
    ``ylim`` when given (the widget passes the range of every factor it offers, so the axes stay still); else they fit
    this state.
    """
    if curve is None:
        ax = fig.subplots()
    else:
        ax, ax_r = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3.2, 1]})
    h, d = state.terms.shape
    i = np.arange(d)  # entries counted from 0
    w = 0.8 / h
    ax.axhline(0, color="gray", lw=0.6, zorder=1)
    bars = []
    for k in range(h):
        label = f"head {k}" + (" × factor" if k == h - 1 else "")
        bars.append(ax.bar(i + (k - (h - 1) / 2) * w, state.terms[k], width=w, label=label))
    (out,) = ax.plot(i, state.out, "o-", color="black", ms=3, lw=1, label=r"out = sum + $b_O$")
    lo, hi = ylim if ylim is not None else span(state.terms, state.out)
    ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
    ax.set_xticks(i)
    ax.set_xlabel(f"entry of the output row (0 to {d - 1})")
    ax.set_ylabel("value")
    title = ax.set_title("", fontsize=9)
    ax.legend(fontsize=9, frameon=False, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.3))  # below the axis
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.36, top=0.9)
    moving = []
    if curve is not None:
        factors, values, label = curve
        ax_r.plot(factors, values, color="gray", lw=1)
        (dot,) = ax_r.plot([state.factor], [state.readout], "o", color="C1", ms=5)
        lo_r, hi_r = float(np.min(values)), float(np.max(values))
        ax_r.set_ylim(lo_r - 0.1 * (hi_r - lo_r), hi_r + 0.1 * (hi_r - lo_r))
        ax_r.set_xlabel(f"head {h - 1} factor")
        ax_r.tick_params(labelsize=9)
        ax_r.yaxis.set_major_locator(MaxNLocator(4))
        title_r = ax_r.set_title("", fontsize=9, loc="right")  # may reach left into the gap between the panels
        fig.subplots_adjust(left=0.1, right=0.98, wspace=0.45)

    def update(new: HeadState) -> list:
        set_bars(bars[-1], new.terms[-1])
        out.set_ydata(new.out)
        title.set_text(f"output row of position {new.t}, head {h - 1} times {new.factor:.2f}")
        if curve is not None:
            dot.set_data([new.factor], [new.readout])
            title_r.set_text(f"{label} = {new.readout:.4f}")
            moving[:] = [dot, title_r]
        return [*bars[-1], out, title, *moving]

    update(state)
    return update


def describe_heads(s: HeadState, readout_label: str = "readout") -> str:
    """The figure in words: each head's largest term, the output row's range and its largest entry."""
    h, d = s.terms.shape
    c = s.largest_out
    text = (f"Bar chart of each of the {h} heads' terms in the {d} entries of the output row of position {s.t}, "
            f"head {h - 1} multiplied by {fmt(s.factor)}, and their sum plus b_O as a line: it runs from "
            f"{fmt(s.out.min(), 3)} to {fmt(s.out.max(), 3)}, and its largest entry in size is out[{c}] = "
            f"{fmt(s.out[c], 3)}, of which head {h - 1} gives {fmt(s.terms[-1, c], 3)}.")
    if s.readout is not None:
        text += f" Beside it, {readout_label} = {fmt(s.readout, 4)} at this factor."
    return text


def table_heads(s: HeadState):
    """The figure's data: each head's term, the bias and the output at every entry."""
    h = s.terms.shape[0]
    columns = ["entry"] + [f"head {k}" + (" × factor" if k == h - 1 else "") for k in range(h)] + ["b_O", "out"]
    return columns, [[c, *s.terms[:, c], s.b_o[c], s.out[c]] for c in range(s.out.shape[0])]


def heads_view(O_heads, W_o, b_o, t: int = 4, factor_range: tuple[float, float] = (0.0, 2.0), readout=None,
               readout_label: str = "readout"):
    """``draw(fig, setting)``; setting has key "factor".

    The limits hold every factor in ``factor_range`` (the widget's range): the terms and their sum are linear in
    it, so the two ends bound them. ``draw`` returns ``update(setting)`` for ``byhand.live``. ``readout(factor)``,
    when given, is a number the caller computes for a factor (the view only draws it), titled ``readout_label``.
    """
    ends = [head_state(O_heads, W_o, b_o, t, a) for a in factor_range]
    ylim = span(*(s.terms for s in ends), *(s.out for s in ends))
    curve = None
    if readout is not None:
        factors = np.linspace(*factor_range, 41)  # (41,) the readout's line over the widget's range
        curve = (factors, np.array([float(readout(a)) for a in factors]), readout_label)

    def state(setting: dict) -> HeadState:
        s = head_state(O_heads, W_o, b_o, t, setting["factor"])
        return s if readout is None else replace(s, readout=float(readout(setting["factor"])))

    return make_view(state, draw_heads, ylim, curve, describe=lambda s: describe_heads(s, readout_label),
                     table=table_heads)
