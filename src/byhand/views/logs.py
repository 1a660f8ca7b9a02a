"""The view behind Part I, "Logs": pick the right answer, read the loss −log p.

For logits z (V,) and a chosen right answer a:

    p    = softmax(z)                     (V,)
    loss = −log p_a                       the cross-entropy against the one-hot target y = e_a

``logs_state`` is the widget callback (pure, well under a millisecond for V = 116); ``draw_logs`` shows the
curve −log p with the answer's point on it (left) and every word's probability sorted on a log axis (right).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..softmax import log_softmax_forward
from .softmax import word_logits
from . import fmt, make_view


@dataclass(frozen=True)
class LogsState:
    """Everything the logs view shows for one choice of the right answer."""

    answer: str  # the word called right
    answer_id: int  # its id a
    probs: np.ndarray  # (V,) softmax(z)
    p: float  # p_a
    loss: float  # −log p_a, computed from the log-softmax (finite even where p_a underflows)
    rank: int  # an ordinal, not an index: 1 for the most likely word, V for the least (1 + the words above it)
    order: np.ndarray  # (V,) ids from most to least likely
    curve_p: np.ndarray  # (n,) probabilities on a log grid for the curve
    curve_loss: np.ndarray  # (n,) −log of them


def logs_state(z, words, answer: str) -> LogsState:
    """Call ``answer`` the right word; return its probability, its loss −log p and its rank."""
    z, words, a = word_logits(z, words, answer)
    logp, _ = log_softmax_forward(z)  # (V,)
    probs = np.exp(logp)  # (V,)
    order = np.argsort(-logp, kind="stable")  # (V,)
    rank = int(np.flatnonzero(order == a)[0]) + 1
    curve_p = np.logspace(-8, 0, 161)  # (161,)
    return LogsState(answer, a, probs, float(probs[a]), float(-logp[a]), rank, order, curve_p, -np.log(curve_p))


def draw_logs(fig, state: LogsState):
    """Left: loss −log p against p, the answer's point marked. Right: all probabilities sorted, log axis.

    Returns ``update(state)``, which moves the two points and the two titles to another right word of the same
    logits and returns those artists (``byhand.live`` redraws only them). Nothing else depends on the right word:
    the curve, the sorted probabilities and the limits of both panels are the same for every choice.
    """
    ax, ax2 = fig.subplots(1, 2)
    ax.plot(state.curve_p, state.curve_loss, color="tab:gray", lw=1.2)
    ax.set_xscale("log")
    ax.set_xlim(1e-8, 1.5)
    ax.set_ylim(0, 19)
    ax.set_xlabel("probability of the right word p (log axis)")
    ax.set_ylabel("loss −log p (nats)")
    V = state.probs.shape[0]
    ranks, sorted_p = np.arange(1, V + 1), state.probs[state.order]  # (V,) (V,)
    ax2.semilogy(ranks, sorted_p, ".", color="tab:blue", ms=3)
    ax2.set_xlim(*_autoscale_lim(ranks, log=False))
    ax2.set_ylim(*_autoscale_lim(sorted_p[sorted_p > 0], log=True))
    ax2.set_xlabel("rank of the word (1 = most likely)")
    ax2.set_ylabel("probability (log axis)")
    (point,) = ax.plot([], [], "o", color="tab:red")
    (point2,) = ax2.plot([], [], "o", color="tab:red", ms=6)
    ax.legend([ax.lines[0], point], ["−log p", "the right word"], fontsize=9, frameon=False, loc="upper right")
    ax2.legend([ax2.lines[0], point2], ["every word", "the right word"], fontsize=9, frameon=False,
               loc="upper right", markerscale=1.5)
    title = ax.set_title("", fontsize=9)
    title2 = ax2.set_title("", fontsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.86, wspace=0.35)

    def update(new: LogsState) -> list:
        point.set_data([new.p], [new.loss])
        point2.set_data([new.rank], [new.p])
        title.set_text(f"right word {new.answer}: p = {new.p:.3g}, loss = {new.loss:.2f}")
        title2.set_text(f"{new.rank - 1} of the {V} words are more likely")
        return [point, point2, title, title2]

    update(state)
    return update


def _autoscale_lim(values, log: bool) -> tuple[float, float]:
    """The limits matplotlib's autoscale gives ``values`` (a 5 % margin, in log space on a log axis), fixed here so
    that they hold whichever point is marked."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if log:
        lo, hi = np.log10(lo), np.log10(hi)
    m = 0.05 * (hi - lo) if hi > lo else 0.5
    lo, hi = lo - m, hi + m
    return (10.0 ** lo, 10.0 ** hi) if log else (lo, hi)


def describe_logs(s: LogsState) -> str:
    """The figure in words: the right word's probability, its loss and its rank."""
    V = s.probs.shape[0]
    return (f"Left: the loss −log p against the probability p of the right word (log axis), marked at "
            f"“{s.answer}”: p = {fmt(s.p, '.3g')}, loss = {fmt(s.loss)} nats. Right: the probabilities of all {V} "
            f"words, sorted, on a log axis; “{s.answer}” is at rank {s.rank}, so {s.rank - 1} of the {V} words are "
            f"more likely.")


def logs_view(z, words):
    """Return ``draw(fig, setting)``; ``setting`` has the key answer. ``draw`` returns ``update(setting)`` for
    ``byhand.live``: every choice of the right word keeps both panels' axes still."""
    def state(setting: dict) -> LogsState:
        return logs_state(z, words, setting["answer"])

    return make_view(state, draw_logs, describe=describe_logs)
