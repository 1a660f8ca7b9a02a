"""The view behind Part II, "Tokens, vocabulary and parameters": how the parameter count grows with d_model.

``param_counts(d_model)`` counts the toy GPT's parameters by group when its width is changed (d_ff kept at
4 d_model, everything else as in ``TOY_CONFIG``), from ``gpt_param_shapes`` alone: no arrays are made.
Equation (one block, untied head): V d + T d + 4 (d^2 + d) + (8 d^2 + 5 d) + 6 d + d V.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from matplotlib.ticker import PercentFormatter

from ..checks import is_int
from ..gpt import GPTConfig, gpt_param_shapes
from ..toy_gpt import TOY_CONFIG
from . import fmt, make_view

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
    if not is_int(d_model) or d_model < base.n_heads:
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


def draw_params(fig, state: ParamState, max_share: float | None = None):
    """Left: each group's share of the parameters at this width, labelled with its count. Right: the total against
    d_model, the width marked.

    The left panel's axis reaches ``max_share`` (``params_view`` passes the largest share at any width on the curve,
    so that the axes stay still), else this width's largest share. Returns ``update(state)``, which moves the bars,
    their labels, the point on the curve and the title to another width and returns those artists (``byhand.live``
    redraws only them).
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    bars = list(ax.barh(GROUPS, np.zeros(len(GROUPS)), color="tab:blue").patches)
    labels = [ax.text(0.0, k, "", va="center", fontsize=9) for k in range(len(GROUPS))]
    reach = max_share if max_share is not None else max(state.counts.values()) / state.total
    ax.set_xlim(0, reach * 1.35)  # room for the count after the longest bar
    ax.set_ylim(len(GROUPS) - 0.5, -0.5)  # the first group on top
    ax.xaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
    ax.set_xlabel("share of all parameters (bar), count (label)")
    title = ax.set_title("", fontsize=9)
    ax2.plot(state.widths, state.totals, color="tab:gray", lw=1.2)
    ax2.set_xlim(ax2.get_xlim())  # autoscaled to the curve, then kept for every width
    ax2.set_ylim(ax2.get_ylim())
    (point,) = ax2.plot([], [], "o", color="black")
    ax2.set_xlabel(r"width $d_{model}$")
    ax2.set_ylabel("total parameters")
    fig.subplots_adjust(left=0.17, right=0.98, bottom=0.17, top=0.88, wspace=0.45)

    def update(new: ParamState) -> list:
        for k, g in enumerate(GROUPS):
            share = new.counts[g] / new.total
            bars[k].set_width(share)
            labels[k].set_x(share)
            labels[k].set_text(f" {new.counts[g]}")
        point.set_data([new.d_model], [new.total])
        # plain text: a new mathtext title costs a parse of about 14 ms on every move
        title.set_text(f"width {new.d_model}, feed-forward width {4 * new.d_model}: total {new.total}")
        return [*bars, *labels, point, title]

    update(state)
    return update


def describe_params(s: ParamState) -> str:
    """The figure in words: every group's count at this width, and the total curve's ends."""
    groups = "; ".join(f"{g} {s.counts[g]}" for g in GROUPS)
    return (f"Left: bar chart of each group's share of the toy's {s.total} parameters at width "
            f"d_model = {s.d_model} (feed-forward width {4 * s.d_model}): {groups}. Right: the total number of "
            f"parameters against d_model, from {s.totals[0]} at {s.widths[0]} to {s.totals[-1]} at {s.widths[-1]}, "
            f"marked at {s.total}.")


def table_params(s: ParamState):
    """The figure's data: each group's count and share at this width."""
    return ["group", "parameters", "share"], [[g, s.counts[g], s.counts[g] / s.total] for g in GROUPS]


def params_view(base: GPTConfig = TOY_CONFIG):
    """``draw(fig, setting)`` for the widget and static slider; setting has key "d_model". ``draw`` returns
    ``update(setting)`` for ``byhand.live``; the axes hold every width on the curve (``param_state``'s widths, the
    widget's range), so a drag moves the bars and not the axes."""
    widths = param_state(base.n_heads, base).widths
    max_share = max(max(c.values()) / sum(c.values()) for c in (param_counts(int(w), base) for w in widths))

    state = lru_cache(maxsize=None)(lambda d_model: param_state(d_model, base))  # 33 counts each: kept per width

    return make_view(lambda setting: state(setting["d_model"]), draw_params, max_share, describe=describe_params,
                     table=table_params)
