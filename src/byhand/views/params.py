"""The view behind Part II, "Tokens, vocabulary and parameters": how the parameter count grows with d_model.

``param_counts(d_model)`` counts the toy GPT's parameters by group when its width is changed (d_ff kept at
4 d_model, everything else as in ``TOY_CONFIG``), from ``gpt_param_shapes`` alone: no arrays are made.
Equation (one block, untied head): V d + T d + 4 (d^2 + d) + (8 d^2 + 5 d) + 6 d + d V.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..gpt import GPTConfig, gpt_param_shapes
from ..toy_gpt import TOY_CONFIG

GROUPS = ("embeddings", "attention", "feed-forward", "layer norms", "output")


def group_of(name: str) -> str:
    """The group a parameter name belongs to: "E"/"P" embeddings, attn.* attention, ffn.*, ln*, W_out."""
    if name in ("E", "P"):
        return "embeddings"
    if ".attn." in name:
        return "attention"
    if ".ffn." in name:
        return "feed-forward"
    if name.startswith("ln_") or ".ln" in name:
        return "layer norms"
    if name == "W_out":
        return "output"
    raise ValueError(f"parameter {name!r} belongs to no group")


def config_for(d_model: int, base: GPTConfig = TOY_CONFIG) -> GPTConfig:
    """``base`` with width d_model and d_ff = 4 d_model (the 4x expansion of GPT-2)."""
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model < base.n_heads:
        raise ValueError(f"d_model must be an integer >= n_heads = {base.n_heads}, got {d_model!r}")
    if d_model % base.n_heads:
        raise ValueError(f"n_heads = {base.n_heads} does not divide d_model = {d_model}")
    return replace(base, d_model=int(d_model), d_ff=4 * int(d_model))


def param_counts(d_model: int, base: GPTConfig = TOY_CONFIG) -> dict[str, int]:
    """Parameters per group (``GROUPS`` order) of ``base`` widened to ``d_model``."""
    counts = dict.fromkeys(GROUPS, 0)
    for name, shape in gpt_param_shapes(config_for(d_model, base)).items():
        counts[group_of(name)] += int(np.prod(shape))
    return counts


@dataclass(frozen=True)
class ParamState:
    """What the parameter-count view shows for one width."""

    d_model: int  # the chosen width
    counts: dict  # group -> parameters at this width
    total: int  # sum of the counts
    widths: np.ndarray  # (n,) widths for the curve
    totals: np.ndarray  # (n,) total parameters at each width


def param_state(d_model: int = 16, base: GPTConfig = TOY_CONFIG) -> ParamState:
    """Counts at ``d_model`` and the total along even widths 2..64 for the curve."""
    counts = param_counts(d_model, base)
    widths = np.arange(base.n_heads, 65, base.n_heads)  # (n,)
    totals = np.array([sum(param_counts(int(w), base).values()) for w in widths])  # (n,)
    return ParamState(int(d_model), counts, sum(counts.values()), widths, totals)


def draw_params(fig, state: ParamState) -> None:
    """Left: parameters per group at this width. Right: the total against d_model, the width marked."""
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    values = [state.counts[g] for g in GROUPS]
    ax.barh(GROUPS, values, color="tab:blue")
    for k, v in enumerate(values):
        ax.text(v, k, f" {v}", va="center", fontsize=9)
    ax.set_xlim(0, max(values) * 1.35)
    ax.invert_yaxis()
    ax.set_xlabel("parameters (count)")
    ax.set_title(rf"$d_{{model}}$ = {state.d_model}, $d_{{ff}}$ = {4 * state.d_model}: total {state.total}", fontsize=9)
    ax2.plot(state.widths, state.totals, color="tab:gray", lw=1.2)
    ax2.plot([state.d_model], [state.total], "o", color="black")
    ax2.set_xlabel(r"width $d_{model}$")
    ax2.set_ylabel("total parameters")
    fig.subplots_adjust(left=0.17, right=0.98, bottom=0.17, top=0.88, wspace=0.45)


def params_view(base: GPTConfig = TOY_CONFIG):
    """``draw(fig, setting)`` for the widget and static slider; setting has key "d_model"."""
    def draw(fig, setting: dict) -> None:
        draw_params(fig, param_state(setting["d_model"], base))

    return draw
