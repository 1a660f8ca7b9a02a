"""The view behind Part II, "Through attention": the softmax's backward step for one query row, and the
diagonal-only slip.

For one query t of one head, with attention weights a = A_t (T,) and the gradient reaching them g = dA_t (T,):

    average   ḡ = Σ_k a_k g_k                       (the row's dA averaged with the attention weights)
    true      dS_j = a_j (g_j − ḡ)                  (= g J, J = diag(a) − aᵀa, the whole Jacobian)
    slip      dS_j ≈ a_j (1 − a_j) g_j              (only the diagonal of J: the coupling of the row dropped)

A shift c added to every g_j of the row (``shift``) moves ḡ by c too, so the true dS does not change (the weights
sum to 1, so the loss cannot tell); the slip's dS moves by c a_j (1 − a_j). ``softmax_back_state`` is the widget
callback (pure, microseconds); ``draw_softmax_back`` draws it, and a move redraws only the bars, the average line
and the values beside the legends (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars, span
from .nudge import legend_values, signed


@dataclass(frozen=True)
class SoftmaxBackState:
    """One query row's softmax backward: dA, its weighted average, the true dS and the diagonal-only one."""

    query: int  # the query position t
    shift: float  # c, added to every dA of the row
    a: np.ndarray  # (T,) the attention weights A_t; 0 at masked keys
    dA: np.ndarray  # (T,) the row of dA that reaches the softmax, shifted by c
    average: float  # Σ_k a_k dA_k
    dS: np.ndarray  # (T,) a ⊙ (dA − average): the whole Jacobian
    dS_diag: np.ndarray  # (T,) a ⊙ (1 − a) ⊙ dA: only its diagonal

    @property
    def miss(self) -> float:
        """The largest |diagonal-only − true| over the row's keys."""
        return float(np.max(np.abs(self.dS_diag - self.dS)))

    @property
    def seen(self) -> np.ndarray:
        """(T,) True at the keys the query may see (weight above 0)."""
        return self.a > 0


def softmax_back_state(A, dA, query: int, shift: float = 0.0) -> SoftmaxBackState:
    """Row ``query`` of one head's weights ``A`` (T, T) and gradient ``dA`` (T, T), its dA shifted by ``shift``."""
    A, dA = as_float("A", A), as_float("dA", dA)
    check_ndim("A", A, (2,))
    if dA.shape != A.shape:
        raise ValueError(f"dA has shape {dA.shape}, A has shape {A.shape}")
    if not (isinstance(query, (int, np.integer)) and 0 <= query < A.shape[0]):
        raise ValueError(f"query must be an integer from 0 to {A.shape[0] - 1}, got {query!r}")
    if not np.isfinite(shift):
        raise ValueError(f"shift must be a finite number, got {shift}")
    a = A[query]  # (T,)
    g = dA[query] + shift  # (T,)
    average = float(a @ g)
    return SoftmaxBackState(int(query), float(shift), a, g, average, a * (g - average), a * (1.0 - a) * g)


def draw_softmax_back(fig, state: SoftmaxBackState, dA_lim: tuple[float, float], dS_lim: tuple[float, float]):
    """Left: the row's dA as bars (masked keys hatched) and its weighted average as a red line. Right: the true dS
    beside the diagonal-only dS, key by key.

    The limits are fixed (``dA_lim``, ``dS_lim``: the range over every setting the view offers), so a move changes
    bars and not axes. Returns ``update(state)``, which moves the bars, the average line and the values beside the
    legends and returns those artists (``byhand.live`` redraws only them).
    """
    T = state.a.shape[0]
    keys = np.arange(T)
    ax, ax2 = fig.subplots(1, 2)
    for a_ in (ax, ax2):
        a_.axhline(0, color="gray", lw=0.6, zorder=1)
    bars = ax.bar(keys, state.dA, width=0.6, color="tab:gray", edgecolor="0.3", lw=0.8)
    avg = ax.axhline(state.average, color="tab:red", lw=1.4, zorder=3)
    ax.set_ylim(*_padded(dA_lim))
    ax.set_xticks(keys, [str(k) for k in keys], fontsize=9)
    ax.set_xlabel("key j")
    ax.set_ylabel("dA of the row")
    handles = [Patch(facecolor="tab:gray", edgecolor="0.3", label="dA, key seen"),
               Patch(facecolor="white", edgecolor="0.3", hatch="///", label="dA, key masked"),
               avg]
    avg.set_label("weighted average = ")
    legend = ax.legend(handles=handles, fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0),
                       ncol=1, handlelength=1.8, handletextpad=0.4, borderpad=0.0, borderaxespad=0.4)
    values = legend_values(ax, legend, 3)[2:]  # only the average has a value
    true = ax2.bar(keys - 0.18, state.dS, width=0.36, color="tab:blue", label="true dS: A(dA − avg)")
    diag = ax2.bar(keys + 0.18, state.dS_diag, width=0.36, color="tab:orange", hatch="..", edgecolor="0.3", lw=0.6,
                   label="diagonal only: A(1−A)dA")
    ax2.set_ylim(*_padded(dS_lim))
    ax2.set_xticks(keys, [str(k) for k in keys], fontsize=9)
    ax2.set_xlabel("key j")
    ax2.set_ylabel("dS of the row")
    miss = Line2D([], [], color="none", label="its largest miss = ")  # a row of the legend with no mark
    legend2 = ax2.legend(handles=[true, diag, miss], fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=1,
                         handlelength=1.8, handletextpad=0.4, borderpad=0.0, borderaxespad=0.4)
    values += legend_values(ax2, legend2, 3)[2:]  # the largest miss
    for a_ in (ax, ax2):
        a_.tick_params(labelsize=9)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.7, wspace=0.35)

    def update(new: SoftmaxBackState) -> list:
        set_bars(bars, new.dA)
        for bar, seen in zip(bars, new.seen):
            bar.set_facecolor("tab:gray" if seen else "white")
            bar.set_hatch(None if seen else "///")
        avg.set_ydata([new.average, new.average])
        set_bars(true, new.dS)
        set_bars(diag, new.dS_diag)
        values[0].set_text(signed(new.average, 4))
        values[1].set_text(fmt(new.miss, 4))
        return [*bars, avg, *true, *diag, *values]

    update(state)
    return update


def _padded(lim: tuple[float, float]) -> tuple[float, float]:
    lo, hi = lim
    return lo - 0.08 * (hi - lo), hi + 0.08 * (hi - lo)


def describe_softmax_back(s: SoftmaxBackState) -> str:
    """The figure in words: the row's dA and its average, then the true and the diagonal-only dS."""
    seen = np.flatnonzero(s.seen)
    masked = np.flatnonzero(~s.seen)
    keys = ", ".join(f"key {j}: dA {fmt(s.dA[j], 4)}, true dS {fmt(s.dS[j], 4)}, diagonal-only {fmt(s.dS_diag[j], 4)}"
                     for j in seen)
    return (f"Left: bar chart of the row of dA for query {s.query}"
            + (f", every entry shifted by {fmt(s.shift, 2)}" if s.shift else "")
            + f", with its weighted average {fmt(s.average, 4)} as a red line"
            + (f"; {'key' if masked.size == 1 else 'keys'} {', '.join(map(str, masked))} "
               f"{'is' if masked.size == 1 else 'are'} masked (hatched)" if masked.size else "")
            + f". Right: the true dS beside the diagonal-only dS for each key: {keys}. The diagonal-only row misses "
            f"by up to {fmt(s.miss, 4)} and sums to {fmt(s.dS_diag.sum(), 4)}, where the true row sums to 0.")


def table_softmax_back(s: SoftmaxBackState):
    """The figure's data: each key's weight, dA, true dS and diagonal-only dS."""
    return (["key", "A", "dA", "true dS", "diagonal-only dS"],
            [[j, s.a[j], s.dA[j], s.dS[j], s.dS_diag[j]] for j in range(s.a.shape[0])])


def softmax_back_view(A, dA, shift_max: float = 0.2):
    """``draw(fig, setting)``; setting has keys "query" (0 to T − 1) and "shift" (|c| up to ``shift_max``).

    The limits hold every query row at both ends of the shift (dA and both dS are linear in c, so the ends bound
    them). ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    A, dA = as_float("A", A), as_float("dA", dA)
    ends = [softmax_back_state(A, dA, t, c) for t in range(A.shape[0]) for c in (-abs(shift_max), abs(shift_max))]
    dA_lim = span(*(s.dA for s in ends))
    dS_lim = span(*(s.dS for s in ends), *(s.dS_diag for s in ends))

    def state(setting: dict) -> SoftmaxBackState:
        return softmax_back_state(A, dA, setting["query"], setting["shift"])

    return make_view(state, draw_softmax_back, dA_lim, dS_lim, describe=describe_softmax_back,
                     table=table_softmax_back)
