"""The view behind Part III, "Embeddings and sinusoidal positions": a shift of position is a rotation.

Column pair i of the sinusoidal table PE holds a sine and a cosine of one angle:

    theta_i(pos) = pos / 10000^(2i / d_model)
    (PE[pos, 2i], PE[pos, 2i+1]) = (sin theta_i, cos theta_i)         a point on the unit circle

One step along (pos -> pos + 1) turns the point of pair i by the fixed angle 1 / 10000^(2i / d_model), whatever pos
is. ``pe_rotation_state`` is the widget callback (pure, microseconds); ``draw_pe_rotation`` draws pairs 0 and 1 as
points on two unit circles, with the points of every earlier position, and prints the row PE[pos] above them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..embedding import sinusoidal_divisors, sinusoidal_positions
from . import fmt, make_view

N_PAIRS = 2  # the view draws column pairs 0 and 1


@dataclass(frozen=True)
class PERotationState:
    """Everything the rotation view shows for one position."""

    pos: int  # the position
    row: np.ndarray  # (d_model,) PE[pos]
    divisors: np.ndarray  # (2,) 10000^(2i / d_model) of pairs 0 and 1
    angles: np.ndarray  # (2,) theta_i(pos) = pos / divisor, radians
    steps: np.ndarray  # (2,) the angle one step of position turns each pair: 1 / divisor
    trail: np.ndarray  # (pos + 1, d_model) PE[0 .. pos], the rows of every position up to this one


def pe_rotation_state(pos: int, d_model: int = 4) -> PERotationState:
    """The row PE[pos] and the angles of its first two column pairs."""
    if pos < 0 or int(pos) != pos:
        raise ValueError(f"pos must be a whole number >= 0, got {pos!r}")
    if d_model < 2 * N_PAIRS or d_model % 2:
        raise ValueError(f"d_model must be even and at least {2 * N_PAIRS}, got {d_model}")
    pos = int(pos)
    trail = sinusoidal_positions(pos + 1, d_model)  # (pos + 1, d_model)
    div = sinusoidal_divisors(d_model)[:N_PAIRS]  # (2,)
    return PERotationState(pos, trail[pos], div, pos / div, 1.0 / div, trail)


def draw_pe_rotation(fig, state: PERotationState):
    """Two unit circles, pair 0 (left) and pair 1 (right): x = the pair's sine column, y = its cosine column.

    Returns ``update(state)``, which moves the points, the radii, the trails and the texts to another position;
    the circles and the axes stay still.
    """
    axes = fig.subplots(1, N_PAIRS)
    t = np.linspace(0, 2 * np.pi, 241)
    moving = []
    for i, ax in enumerate(axes):
        ax.plot(np.sin(t), np.cos(t), color="tab:gray", lw=0.8)
        ax.set_xlim(-1.25, 1.25)
        ax.set_ylim(-1.25, 1.25)
        ax.set_aspect("equal")
        ax.set_xlabel(f"column {2 * i}: sin(pos / {fmt(state.divisors[i], 0)})", fontsize=9)
        ax.set_ylabel(f"column {2 * i + 1}: cos(pos / {fmt(state.divisors[i], 0)})", fontsize=9)
        ax.set_xticks([-1, 0, 1])
        ax.set_yticks([-1, 0, 1])
        (trail,) = ax.plot([], [], "o", color="tab:blue", alpha=0.35, ms=4, label="positions 0 to pos − 1")
        (radius,) = ax.plot([], [], "-", color="tab:red", lw=1.2)
        (point,) = ax.plot([], [], "o", color="tab:red", ms=8, label="position pos")
        title = ax.set_title("", fontsize=9)
        moving.append((trail, radius, point, title))
    fig.legend(handles=[moving[0][0], moving[0][2]], fontsize=9, frameon=False, loc="upper center",
               bbox_to_anchor=(0.5, 0.91), ncol=2)
    row_text = fig.text(0.5, 0.98, "", ha="center", va="top", fontsize=10)
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.15, top=0.71, wspace=0.6)

    def update(new: PERotationState) -> list:
        artists = []
        for i, (trail, radius, point, title) in enumerate(moving):
            s, c = new.trail[:-1, 2 * i], new.trail[:-1, 2 * i + 1]
            trail.set_data(s, c)
            x, y = new.row[2 * i], new.row[2 * i + 1]
            radius.set_data([0.0, x], [0.0, y])
            point.set_data([x], [y])
            title.set_text(f"pair {i}: angle {fmt(new.angles[i], 2)} rad, {fmt(new.steps[i], 2)} rad per step")
            artists += [trail, radius, point, title]
        row_text.set_text(f"pos = {new.pos}:  PE[pos] = [" + ", ".join(fmt(v, 4) for v in new.row) + "]")
        return artists + [row_text]

    update(state)
    return update


def describe_pe_rotation(s: PERotationState) -> str:
    """The figure in words: the row, and where each pair's point sits on its circle."""
    pairs = "; ".join(
        f"pair {i} (columns {2 * i} and {2 * i + 1}) at angle {fmt(s.angles[i], 4)} rad, the point "
        f"({fmt(s.row[2 * i], 4)}, {fmt(s.row[2 * i + 1], 4)}), turned by {fmt(s.steps[i], 4)} rad per step"
        for i in range(N_PAIRS))
    return (f"Two unit circles for position {s.pos}, with the points of positions 0 to {s.pos} marked: {pairs}. "
            f"The row PE[{s.pos}] is [" + ", ".join(fmt(v, 4) for v in s.row) + "].")


def table_pe_rotation(s: PERotationState):
    """The figure's data: the first four columns of PE for every position drawn."""
    columns = ["pos"] + [f"PE column {j}" for j in range(2 * N_PAIRS)]
    rows = [[p] + [fmt(v, 4) for v in s.trail[p, :2 * N_PAIRS]] for p in range(s.pos + 1)]
    return columns, rows


def pe_rotation_view(d_model: int = 4):
    """Return ``draw(fig, setting)``; ``setting`` has the key pos. ``draw`` returns ``update(setting)`` for
    ``byhand.live``: every position keeps both circles and their axes still."""
    def state(setting: dict) -> PERotationState:
        return pe_rotation_state(setting["pos"], d_model)

    return make_view(state, draw_pe_rotation, describe=describe_pe_rotation, table=table_pe_rotation)
