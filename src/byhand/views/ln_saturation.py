"""The view behind Part II, "Layer norm and residuals": a larger stream, read by attention with layer norm and without.

The stream's rows grow as sublayers add to them. Scale the stream x by alpha and let one attention row read it twice:
through layer norm, which undoes alpha, and directly. With layer norm the row's weights stay where they are; without
it the scores spread apart about as alpha^2 and the softmax puts nearly all the weight on one key, where a nudge to
that key's score hardly moves its weight any more. ``saturation_state(x, alpha, normalise, attend)`` computes both
rows of weights and those nudges; ``draw_saturation`` draws the two rows as bars over each one's row at alpha = 1 (dashed),
and a move redraws only the bars and the titles (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..checks import as_float, check_ndim
from . import fmt, make_view, set_bars


def nudge_gain(scores, nudge: float = 0.1) -> float:
    """How far the largest softmax weight of ``scores`` (n,) moves when its score goes up by ``nudge``."""
    scores = as_float("scores", scores)
    check_ndim("scores", scores, (1,))

    def top(z):
        e = np.exp(z - z.max())
        return e / e.sum()

    p = top(scores)
    z = scores.copy()
    z[p.argmax()] += nudge
    return float(top(z)[p.argmax()] - p.max())


@dataclass(frozen=True)
class SaturationState:
    """One attention row when the stream is alpha times larger: read through layer norm, and read directly."""

    alpha: float  # the stream is alpha times the model's own
    w_ln: np.ndarray  # (n,) weights over the keys, with layer norm
    w_raw: np.ndarray  # (n,) weights over the keys, without
    ref_ln: np.ndarray  # (n,) weights at alpha = 1, with layer norm
    ref_raw: np.ndarray  # (n,) weights at alpha = 1, without
    gain_ln: float  # how far the favourite's weight moves for a nudge of the favourite's score, with layer norm
    gain_raw: float  # the same without
    spread_raw: float  # largest minus smallest score, without layer norm
    spread_ln: float  # the same with
    nudge: float  # the nudge of the score


def saturation_state(x, alpha: float, normalise: Callable, attend: Callable, nudge: float = 0.1) -> SaturationState:
    """``attend(y)`` -> (scores (n,), weights (n,)) of one attention row reading the stream y (T, D); ``normalise(y)``
    is the layer norm in front of it. Both read alpha * x, and x itself for the reference row."""
    x = as_float("x", x)
    check_ndim("x", x, (2,))
    alpha = float(as_float("alpha", alpha))
    if not alpha > 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    s_ln, w_ln = attend(normalise(alpha * x))
    s_raw, w_raw = attend(alpha * x)
    _, ref_ln = attend(normalise(x))
    _, ref_raw = attend(x)
    return SaturationState(alpha, np.asarray(w_ln), np.asarray(w_raw), np.asarray(ref_ln), np.asarray(ref_raw),
                           nudge_gain(s_ln, nudge),
                           nudge_gain(s_raw, nudge), float(np.ptp(s_raw)), float(np.ptp(s_ln)), float(nudge))


def draw_saturation(fig, state: SaturationState, labels, names):
    """Left: the row's weights with layer norm; right: without. Each over the weights at alpha = 1 (dashed).

    ``labels`` name the keys, ``names`` = (with, without) the two panels. Returns ``update(state)``, which moves the
    bars and the titles.
    """
    axes = fig.subplots(1, 2, sharey=True)
    i = np.arange(state.w_ln.shape[0])
    bars, titles = [], []
    for ax, w, ref, name in zip(axes, (state.w_ln, state.w_raw), (state.ref_ln, state.ref_raw), names):
        bars.append(ax.bar(i, w, width=0.6, color="tab:blue" if ax is axes[0] else "tab:red"))
        ax.bar(i, ref, width=0.6, fill=False, edgecolor="black", ls="--", lw=1.1, zorder=3)
        ax.set_xticks(i, [("\n" if k % 2 else "") + lab for k, lab in enumerate(labels)], fontsize=9)  # staggered
        ax.set_ylim(0, 1.12)
        ax.set_xlabel("key", labelpad=1)
        titles.append(ax.set_title("", fontsize=9))
    axes[0].set_ylabel("attention weight")
    fig.legend(handles=[bars[0][0], bars[1][0], axes[0].patches[-1]],
               labels=[f"{names[0]}, at this α", f"{names[1]}, at this α", "each at α = 1 (dashed)"],
               fontsize=9, frameon=False, ncol=3, loc="lower center")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.33, top=0.82, wspace=0.12)

    def update(new: SaturationState) -> list:
        set_bars(bars[0], new.w_ln)
        set_bars(bars[1], new.w_raw)
        for title, name, w, gain in zip(titles, names, (new.w_ln, new.w_raw), (new.gain_ln, new.gain_raw)):
            title.set_text(f"{name}, α = {fmt(new.alpha, '.3g')}: largest {fmt(w.max(), 3)}\n"
                           f"its score + {fmt(new.nudge, 1)} moves it by {fmt(gain, '.1e')}")
        return [*bars[0], *bars[1], *titles]

    update(state)
    return update


def describe_saturation(s: SaturationState, labels, names) -> str:
    """The figure in words: the largest weight with and without layer norm, and how far a nudge still moves it."""
    k = int(s.w_raw.argmax())
    return (f"Two bar charts of one attention row's {s.w_ln.shape[0]} weights when the stream is α = "
            f"{fmt(s.alpha, '.3g')} times larger, over the row at α = 1 (dashed outlines). Left, {names[0]}: the "
            f"largest weight is {fmt(s.w_ln.max(), 3)}, as at α = 1, and a nudge of {fmt(s.nudge, 1)} to its score "
            f"moves it by {fmt(s.gain_ln, '.1e')}. Right, {names[1]}: the largest weight is {fmt(s.w_raw.max(), 3)} "
            f"on key {labels[k]} (at α = 1 it was {fmt(s.ref_raw.max(), 3)}), and the same nudge moves it by "
            f"{fmt(s.gain_raw, '.1e')}.")


def table_saturation(s: SaturationState, labels, names):
    """The figure's data: each key's weight with and without layer norm at alpha, and at alpha = 1."""
    return (["key", names[0], names[1], f"{names[1]}, at α = 1"],
            [[lab, a, b, c] for lab, a, b, c in zip(labels, s.w_ln, s.w_raw, s.ref_raw)])


def saturation_view(x, normalise: Callable, attend: Callable, labels, names=("with LN", "without LN"),
                    nudge: float = 0.1):
    """``draw(fig, setting)``; setting has key "alpha" (> 0), the factor the stream ``x`` (T, D) is scaled by.
    ``draw`` returns ``update(setting)`` for ``byhand.live``; the axes (weights 0 to 1) hold every alpha."""
    labels, names = list(labels), tuple(names)

    def state(setting: dict) -> SaturationState:
        return saturation_state(x, setting["alpha"], normalise, attend, nudge)

    return make_view(state, draw_saturation, labels, names,
                     describe=lambda s: describe_saturation(s, labels, names),
                     table=lambda s: table_saturation(s, labels, names))
