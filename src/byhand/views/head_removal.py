"""The view behind Part IV's "Removing heads together": choose which heads of one layer to remove, see P(IO) move.

``head_removal_runs`` does the slow part once: for every set of heads of one layer (all 2^4 of them for four heads),
it zero-ablates those heads (``byhand.ablation.ablate``, applied once per head, each time to the weights the last
call returned) and scores the model on the held-out sentences (``byhand.ablation.heldout_metrics``). It keeps, per
set, each sentence's P(IO) and P(S) and whether IO was the top word. ``head_removal_state`` is the widget callback:
it only picks one set's numbers (no model arithmetic). ``draw_head_removal`` draws, on the left, mean P(IO), mean
P(S) and accuracy with the set removed as bars, the intact model's as black marks; on the right, every sentence's
P(IO), sorted, with the set removed and intact, so that a drop shows as the sentences it falls on.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..ablation import Component, ablate, heldout_metrics
from ..gpt import GPTConfig
from ..ioi import Vocab
from . import fmt, make_view


@dataclass(frozen=True)
class HeadRemovalRuns:
    """Per-sentence scores of the model with each set of heads of ``layer`` zero-ablated."""

    layer: int  # the block whose heads are removed, counted from 0
    n_heads: int  # heads in that block
    p_io: dict  # removed (a sorted tuple of head indices) -> (B,) P(IO) of each sentence
    p_s: dict  # removed -> (B,) P(S)
    correct: dict  # removed -> (B,) bool, IO is the most likely next word


def without(params: dict, config: GPTConfig, layer: int, heads) -> dict:
    """The weights with heads ``layer.j`` (j in heads) zero-ablated: ``ablate`` once per head, each time on the
    weights the last call returned, so that the removals add up."""
    for j in heads:
        params = ablate(params, config, Component("head", layer, j))
    return params


def head_removal_runs(params: dict, config: GPTConfig, vocab: Vocab, sentences, layer: int) -> HeadRemovalRuns:
    """Score every set of heads of ``layer`` removed (the empty set is the intact model) on ``sentences``."""
    if not 0 <= layer < config.n_layers:
        raise ValueError(f"layer {layer} is outside the model's {config.n_layers} layers")
    sentences = list(sentences)
    p_io, p_s, correct = {}, {}, {}
    for k in range(config.n_heads + 1):
        for removed in combinations(range(config.n_heads), k):
            m = heldout_metrics(without(params, config, layer, removed), config, vocab, sentences)
            p_io[removed], p_s[removed], correct[removed] = m["p_io"], m["p_s"], m["correct"]
    return HeadRemovalRuns(int(layer), int(config.n_heads), p_io, p_s, correct)


@dataclass(frozen=True)
class HeadRemovalState:
    """What the view shows for one set of removed heads."""

    layer: int
    removed: tuple  # the removed heads, sorted
    p_io: np.ndarray  # (B,) each sentence's P(IO), set removed
    p_io_intact: np.ndarray  # (B,) the same, intact model
    mean_p_io: float
    mean_p_s: float
    accuracy: float
    intact: tuple  # (mean P(IO), mean P(S), accuracy) of the intact model


def head_removal_state(runs: HeadRemovalRuns, removed) -> HeadRemovalState:
    """Pick the numbers of the set ``removed`` (any iterable of head indices, in any order)."""
    key = tuple(sorted(set(int(j) for j in removed)))
    if key not in runs.p_io:
        raise ValueError(f"heads {key} are not all heads of layer {runs.layer} (0..{runs.n_heads - 1})")
    intact = (float(runs.p_io[()].mean()), float(runs.p_s[()].mean()), float(runs.correct[()].mean()))
    return HeadRemovalState(runs.layer, key, runs.p_io[key], runs.p_io[()], float(runs.p_io[key].mean()),
                            float(runs.p_s[key].mean()), float(runs.correct[key].mean()), intact)


def removed_label(s: HeadRemovalState) -> str:
    """"nothing removed" or "heads 0.1, 0.3 removed"."""
    if not s.removed:
        return "nothing removed"
    names = ", ".join(f"{s.layer}.{j}" for j in s.removed)
    return f"head{'s' if len(s.removed) > 1 else ''} {names} removed"


def draw_head_removal(fig, s: HeadRemovalState):
    """Left: mean P(IO), mean P(S) and accuracy as bars, the intact model's as black marks. Right: every sentence's
    P(IO), sorted, with the set removed (blue) and intact (grey). Both panels keep their ranges, with room above 1 for the legends.

    Returns ``update(state)``, which moves the bars, their numbers, the blue curve and the title (which names the heads)
    to another set of heads and returns those artists (``byhand.live`` redraws only them).
    """
    ax_m, ax_s = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.6]})
    x = np.arange(3)
    bars = ax_m.bar(x, np.zeros(3), color=["tab:blue", "tab:red", "tab:purple"], width=0.6)
    ax_m.scatter(x, s.intact, marker="_", s=500, color="black", linewidths=2, zorder=3, label="intact model")
    numbers = [ax_m.text(xi, 0, "", ha="center", va="bottom", fontsize=9) for xi in x]
    ax_m.set_xticks(x, ["mean\nP(IO)", "mean\nP(S)", "accuracy"], fontsize=9)
    ax_m.set_ylim(0, 1.4)
    ax_m.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax_m.tick_params(axis="y", labelsize=9)
    ax_m.legend(fontsize=9, frameon=False, loc="upper right")
    rank = np.arange(1, len(s.p_io) + 1)
    ax_s.plot(rank, np.sort(s.p_io_intact), color="tab:gray", lw=1.5, label="intact model")
    (curve,) = ax_s.plot(rank, np.sort(s.p_io), color="tab:blue", lw=1.5, label="chosen heads removed")
    ax_s.axhline(0.5, color="0.6", lw=0.6, ls=":")
    ax_s.set_ylim(0, 1.3)
    ax_s.set_yticks([0, 0.25, 0.5, 0.75, 1])
    ax_s.set_xlabel("held-out sentence, sorted by P(IO)", fontsize=9)
    ax_s.set_ylabel("P(IO)", fontsize=9)
    ax_s.tick_params(labelsize=9)
    ax_s.legend(fontsize=9, frameon=False, loc="upper center", ncol=2)  # above the curves
    title = fig.suptitle("", fontsize=9)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.2, top=0.86, wspace=0.28)

    def update(new: HeadRemovalState) -> list:
        values = (new.mean_p_io, new.mean_p_s, new.accuracy)
        for bar, text, xi, v in zip(bars, numbers, x, values):
            bar.set_height(v)
            text.set_position((xi, v + 0.02))
            text.set_text(f"{v:.3f}")
        curve.set_ydata(np.sort(new.p_io))
        title.set_text(f"layer {new.layer}: {removed_label(new)}")
        return [*bars, *numbers, curve, title]

    update(s)
    return update


def describe_head_removal(s: HeadRemovalState) -> str:
    """The figure in words, with its numbers."""
    below_half = int((s.p_io < 0.5).sum())
    return (f"Layer {s.layer}, {removed_label(s)}. Left: mean P(IO) {fmt(s.mean_p_io, 3)} (intact "
            f"{fmt(s.intact[0], 3)}), mean P(S) {fmt(s.mean_p_s, 3)} (intact {fmt(s.intact[1], 3)}), accuracy "
            f"{fmt(s.accuracy, 3)} (intact {fmt(s.intact[2], 3)}). Right: the {len(s.p_io)} held-out sentences' "
            f"P(IO), sorted; {below_half} of them fall below 0.5 (intact: {int((s.p_io_intact < 0.5).sum())}).")


def table_head_removal(s: HeadRemovalState):
    """The figure's data: the three means, removed and intact."""
    return (["measure", "set removed", "intact"],
            [["mean P(IO)", s.mean_p_io, s.intact[0]], ["mean P(S)", s.mean_p_s, s.intact[1]],
             ["accuracy", s.accuracy, s.intact[2]]])


def head_removal_view(runs: HeadRemovalRuns):
    """Return ``draw(fig, setting)``; ``setting`` has the key "removed", a tuple of head indices of ``runs.layer``."""

    def state(setting: dict) -> HeadRemovalState:
        return head_removal_state(runs, setting["removed"])

    return make_view(state, draw_head_removal, describe=describe_head_removal, table=table_head_removal)
