"""The view behind Part I, "Softmax": nudge one logit or the temperature, and watch the probabilities move.

For logits z (V,), a chosen word w, a nudge Δ and a temperature τ > 0:

    z'   = z with z'_w = z_w + Δ                      (V,)
    p_i  = exp((z'_i − m) / τ) / Σ_j exp((z'_j − m) / τ),   m = max_j z'_j     (V,)

so p_i / p_j = exp((z'_i − z'_j) / τ): one point of logit is a factor e at τ = 1. ``softmax_state`` is the
widget callback (pure, well under a millisecond for V = 116); ``draw_softmax`` draws its bar chart.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..softmax import softmax_forward


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


def draw_softmax(fig, state: SoftmaxState) -> None:
    """Bars of the shown words: grey the reference (Δ = 0, τ = 1), coloured now; the nudged word in orange."""
    ax = fig.subplots()
    x = np.arange(len(state.shown))
    colors = ["tab:orange" if w == state.word else "tab:blue" for w in state.shown_words]
    ax.bar(x - 0.2, state.base[state.shown], width=0.4, color="lightgray", label="before (Δ = 0, τ = 1)")
    ax.bar(x + 0.2, state.probs[state.shown], width=0.4, color=colors, label="now")
    for xi, pi in zip(x, state.probs[state.shown]):
        ax.text(xi + 0.2, pi + 0.02, f"{pi:.2f}", ha="center", fontsize=9)
    ax.set_xticks(x, state.shown_words, fontsize=9)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("next word (the most likely before any change)")
    ax.set_ylabel("probability")
    ax.set_title(f"z[{state.word}] + {state.nudge:.2f}, τ = {state.temperature:.2f}:  "
                 f"P({state.word}) = {state.p_word:.3f},  top word {state.top_word},  "
                 f"others {state.rest:.3f}", fontsize=9)
    ax.legend(fontsize=9, frameon=False, loc="upper right")
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.84)


def softmax_view(z, words, top: int = 8):
    """Return ``draw(fig, setting)``; ``setting`` has keys word, nudge, temperature."""
    def draw(fig, setting: dict) -> None:
        draw_softmax(fig, softmax_state(z, words, setting["word"], setting["nudge"], setting["temperature"], top))

    return draw
