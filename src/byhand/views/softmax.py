"""The view behind Part I, "Softmax": nudge one logit or the temperature, and watch the probabilities move.

For logits z (V,), a chosen word w, a nudge Δ and a temperature τ > 0:

    z'   = z with z'_w = z_w + Δ                      (V,)
    p_i  = exp((z'_i − m) / τ) / Σ_j exp((z'_j − m) / τ),   m = max_j z'_j     (V,)

so p_i / p_j = exp((z'_i − z'_j) / τ): one point of logit is a factor e at τ = 1. ``softmax_state`` is the
widget callback (pure, well under a millisecond for V = 116); ``draw_softmax`` draws its bar chart.
"""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.patches import Patch

from ..checks import as_float, check_ndim
from ..softmax import softmax_forward
from . import fmt, make_view


def softmax_t(z, temperature: float = 1.0) -> np.ndarray:
    """Stable softmax of a vector ``z`` (V,) at temperature τ: the maximum is subtracted before exp."""
    z = as_float("z", z)
    check_ndim("z", z, (1,))
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    return softmax_forward(z / temperature)[0]  # (V,) byhand's stable form: the max is subtracted first


@dataclass(frozen=True)
class SoftmaxState:
    """Everything the softmax view shows for one setting of the controls."""

    word: str  # the nudged word
    nudge: float  # Δ added to its logit
    temperature: float  # τ
    logits: np.ndarray  # (V,) z' after the nudge
    probs: np.ndarray  # (V,) softmax(z' / τ)
    base: np.ndarray  # (V,) softmax(z) at Δ = 0, τ = 1: the reference bars
    shown: np.ndarray  # (k,) ids of the bars: the reference top k, plus the nudged word if it is not among them
    shown_words: tuple[str, ...]  # (k,) their words
    p_word: float  # probability of the nudged word now
    top_word: str  # the most likely word now
    rest: float  # probability of every word not shown

    @property
    def p_top(self) -> float:
        """The probability of the most likely word now."""
        return float(np.max(self.probs))


def word_logits(z, words, word: str) -> tuple[np.ndarray, tuple[str, ...], int]:
    """Check a vector of logits (V,) against its V words and find ``word``; returns (z, words, index of word).
    Shared by the softmax and logs views."""
    z = as_float("z", z)
    check_ndim("z", z, (1,))
    words = tuple(words)
    if len(words) != z.shape[0]:
        raise ValueError(f"{len(words)} words for {z.shape[0]} logits")
    if word not in words:
        raise ValueError(f"unknown word {word!r}")
    return z, words, words.index(word)


def softmax_state(z, words, word: str, nudge: float = 0.0, temperature: float = 1.0, top: int = 8) -> SoftmaxState:
    """Add ``nudge`` to the logit of ``word``, apply softmax at ``temperature``; return the numbers to show."""
    z, words, w = word_logits(z, words, word)
    if top < 1:
        raise ValueError(f"top must be at least 1, got {top}")
    z_new = z.copy()
    z_new[w] += nudge
    p = softmax_t(z_new, temperature)  # (V,)
    base = softmax_t(z)  # (V,)
    shown = np.argsort(-base, kind="stable")[:top]  # (min(top, V),)
    if w not in shown:
        shown = np.append(shown, w)
    return SoftmaxState(word, float(nudge), float(temperature), z_new, p, base, shown,
                        tuple(words[i] for i in shown), float(p[w]), words[int(np.argmax(p))],
                        float(1.0 - p[shown].sum()))


def draw_softmax(fig, state: SoftmaxState, top: int | None = None):
    """Bars of the shown words: grey the reference (Δ = 0, τ = 1), coloured now; the nudged word in orange.

    ``top`` is the number of reference words the view shows (``softmax_view``'s ``top``). With it, the word list,
    the ticks and the limits are the same for every word the view can nudge: one more place is laid out after the
    reference words, for a nudged word from outside them, and stays empty otherwise. Without it, the places are the
    words this state shows. Returns ``update(state)``, which moves the coloured bars, their value labels, the last
    place's grey bar and word, and the title to another state of the same logits and returns those artists
    (``byhand.live`` redraws only them).
    """
    V = state.probs.shape[0]
    n_ref = len(state.shown) if top is None else min(int(top), V)  # reference words: the same at every setting
    slots = n_ref + (top is not None and V > n_ref)  # and the place for a word from outside them
    ref = state.shown[:n_ref]  # (n_ref,)
    x = np.arange(slots)
    ax = fig.subplots()
    ax.bar(x[:n_ref] - 0.2, state.base[ref], width=0.4, color="lightgray", label="before (Δ = 0, τ = 1)")
    now = list(ax.bar(x + 0.2, np.zeros(slots), width=0.4, color="tab:blue", label="now").patches)
    labels = [ax.text(xi + 0.2, 0.0, "", ha="center", fontsize=9) for xi in x]
    ax.set_xticks(x[:n_ref], state.shown_words[:n_ref], fontsize=9)
    if slots > n_ref:  # the last place's grey bar and word, set by update
        extra_before = ax.bar([x[-1] - 0.2], [0.0], width=0.4, color="lightgray")[0]
        pad = matplotlib.rcParams["xtick.major.pad"] + matplotlib.rcParams["xtick.major.size"]  # as a tick label
        transform, va, ha = ax.get_xaxis_text1_transform(pad)
        extra_word = ax.text(x[-1], 0.0, "", transform=transform, va=va, ha=ha, fontsize=9)
        extra = [extra_before, extra_word]
    else:
        extra = []
    ax.set_xlim(-0.6, slots - 0.4)
    ax.set_ylim(0, 1.3)  # a bar reaches 1 at most; the band above it holds the legend
    ax.set_yticks([0.0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("next word (the most likely before any change)")
    ax.set_ylabel("probability")
    title = ax.set_title("", fontsize=9)
    chosen = Patch(color="tab:orange", label="now: the chosen word")  # the colour update gives the chosen word
    ax.legend(handles=ax.get_legend_handles_labels()[0] + [chosen], fontsize=9, frameon=False, loc="upper right",
              ncol=3)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.88)

    def update(new: SoftmaxState) -> list:
        used = len(new.shown)
        if used > slots or not np.array_equal(new.shown[:n_ref], ref):
            raise ValueError("this state shows other words than the figure was laid out for")
        p = new.probs[new.shown]  # (used,)
        for k in range(slots):
            now[k].set_visible(k < used)
            labels[k].set_visible(k < used)
            if k < used:
                now[k].set_height(p[k])
                now[k].set_facecolor("tab:orange" if new.shown_words[k] == new.word else "tab:blue")
                labels[k].set_position((x[k] + 0.2, p[k] + 0.02))
                labels[k].set_text(f"{p[k]:.2f}")
        if extra:  # the nudged word from outside the reference words, or nothing
            for artist in extra:
                artist.set_visible(used > n_ref)
            if used > n_ref:
                extra[0].set_height(new.base[new.shown[-1]])
                extra[1].set_text(new.shown_words[-1])
        title.set_text(f"z[{new.word}] + {new.nudge:.2f}, τ = {new.temperature:.2f}:  "
                       f"P({new.word}) = {new.p_word:.3f},  top word {new.top_word},  others {new.rest:.3f}")
        return [*extra[:1], *now, *labels, *extra[1:], title]

    update(state)
    return update


def describe_softmax(s: SoftmaxState) -> str:
    """The figure in words: the nudge, the nudged word's probability, the top word, what the others hold."""
    return (f"Bar chart of the probability of the next word for the {len(s.shown)} words shown, before any change "
            f"(grey) and now (colour), after adding {fmt(s.nudge)} to the logit of “{s.word}” at temperature "
            f"τ = {fmt(s.temperature)}: P({s.word}) = {fmt(s.p_word, 3)}; the top word is “{s.top_word}” with "
            f"P = {fmt(s.p_top, 3)}; the words not shown hold {fmt(s.rest, 3)}.")


def table_softmax(s: SoftmaxState):
    """The figure's data: each shown word's probability before and now."""
    return ["word", "before (Δ = 0, τ = 1)", "now"], [[w, s.base[i], s.probs[i]] for w, i in
                                                      zip(s.shown_words, s.shown)]


def softmax_view(z, words, top: int = 8):
    """Return ``draw(fig, setting)``; ``setting`` has keys word, nudge, temperature. ``draw`` returns
    ``update(setting)`` for ``byhand.live``: the axes, ticks and reference bars are the same for every setting."""
    def state(setting: dict) -> SoftmaxState:
        return softmax_state(z, words, setting["word"], setting["nudge"], setting["temperature"], top)

    return make_view(state, draw_softmax, top, describe=describe_softmax, table=table_softmax)
