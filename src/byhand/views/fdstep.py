"""The view behind Part II, chapter "Checking every gradient": how the step h of a finite difference sets its error.

For one entry θ of one parameter, with g = ∂L/∂θ from the hand-written backward,

    forward difference   (L(θ + h) − L(θ)) / h            error ≈ ½ |L''| h          (truncation, O(h))
    central difference   (L(θ + h) − L(θ − h)) / (2h)     error ≈ |L'''| h² / 6      (truncation, O(h²))

and both also carry a round-off error of about ε_machine |L| / h, which grows as h shrinks. So the error of each is
V-shaped in h on a log-log plot; the central difference reaches the lower floor, near h ≈ 1e-5 .. 1e-6 in float64.
``fd_state`` is the widget callback (three forward passes and one backward, a few ms); ``fd_curve`` sweeps h once
for the figure; ``fd_view`` returns ``draw(fig, setting)`` with ``setting = {"log10_h": ...}``. A move of the widget
redraws only the markers, the line at h and the title (``byhand.live``); the title shows an error at rounding-noise
level as a bound (``error_text``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..bounds import below
from ..gpt import GPTConfig, gpt_loss_and_grads
from .nudge import entry_index, entry_label, nudged_loss
from . import make_view


@dataclass(frozen=True)
class FDState:
    """Both finite differences of one entry at one step h, beside the analytic gradient."""

    name: str  # the parameter
    index: tuple[int, ...]  # the entry, counted from 0
    h: float  # the step
    grad: float  # g from the backward pass
    forward: float  # (L(θ + h) − L(θ)) / h
    central: float  # (L(θ + h) − L(θ − h)) / (2h)
    forward_err: float  # |forward − g|
    central_err: float  # |central − g|
    loss: float  # L(θ), whose last digits set the round-off of both differences


def _differences(params, batch, config, idx_name, idx, loss, h):
    """(forward, central) differences at step h; ``loss`` is L(θ), computed once by the caller."""
    up = nudged_loss(params, batch, config, idx_name, idx, h)
    down = nudged_loss(params, batch, config, idx_name, idx, -h)
    return (up - loss) / h, (up - down) / (2.0 * h)


def fd_state(params: dict, batch, config: GPTConfig, name: str, index, h: float) -> FDState:
    """The forward and central differences of L with respect to ``params[name][index]`` at step ``h``, and g."""
    idx = entry_index(params, name, index)
    h = float(h)
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"the step h must be a positive finite number, got {h}")
    loss, grads, _ = gpt_loss_and_grads(params, batch, config)
    grad = float(grads[name][idx])
    forward, central = _differences(params, batch, config, name, idx, loss, h)
    return FDState(name, idx, h, grad, forward, central, abs(forward - grad), abs(central - grad), float(loss))


@dataclass(frozen=True)
class FDCurve:
    """Both errors along a sweep of h, for the figure."""

    hs: np.ndarray  # (n,) steps, increasing
    forward_err: np.ndarray  # (n,) |forward difference − g|
    central_err: np.ndarray  # (n,) |central difference − g|
    best: tuple[float, float] | None = None  # predicted best steps Δ* (forward, central), drawn as dashed lines


def fd_curve(params: dict, batch, config: GPTConfig, name: str, index, hs) -> FDCurve:
    """The errors of both differences for every step in ``hs`` (two forward passes per step)."""
    idx = entry_index(params, name, index)
    hs = np.sort(np.asarray(hs, dtype=np.float64))  # (n,)
    if hs.size < 2 or not np.all(hs > 0):
        raise ValueError("hs must hold at least 2 positive steps")
    loss, grads, _ = gpt_loss_and_grads(params, batch, config)
    grad = float(grads[name][idx])
    pairs = np.array([_differences(params, batch, config, name, idx, loss, h) for h in hs])  # (n, 2)
    return FDCurve(hs, np.abs(pairs[:, 0] - grad), np.abs(pairs[:, 1] - grad))


def round_off(h: float, loss: float) -> float:
    """The round-off of a difference quotient at step ``h``: one ulp-sized error of L divided by h, ε |L| / h."""
    return float(np.finfo(np.float64).eps) * max(abs(loss), 1.0) / h


def one_digit(x: float) -> str:
    """``x`` to one significant digit, written as the book writes steps: ``3e-7``, ``1e-6``."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def error_text(err: float, h: float, loss: float) -> str:
    """An error of a finite difference as the figure prints it: its digit when it is reproducible, else a bound.

    Rounding noise is about one ``round_off(h, loss)`` (under 1.3 of them in the sweep of chapter "Checking every
    gradient"), and its digits, even its power of ten, differ between CPUs. So an error is printed by how many
    round-offs it holds, and every bound is a power of ten made from h and the loss alone (``byhand.bounds.below``):

    - up to 10: noise, printed as the power of ten at or above 10 round-offs;
    - 10 to 100: truncation with noise that can still move its first digit, printed as the power of ten at or
      above 100 round-offs;
    - over 100: truncation, the same on every machine to a few percent, printed to one significant digit.
    """
    noise = round_off(h, loss)
    for k in (10.0, 100.0):
        if err <= k * noise:
            return str(below(err, 10.0 ** np.ceil(np.log10(k * noise)), "finite-difference error"))
    return one_digit(err)


def draw_fd(fig, state: FDState, curve: FDCurve):
    """Log-log errors of both differences against h, with the current h marked and its errors in the title.

    Returns ``update(state)``, which moves the dotted line at h, the two markers and the title to another h of the
    same weight and returns those artists (``byhand.live`` redraws only them). The swept curves fix the limits
    before anything moving is placed, so the axes stay still. The title prints an error at rounding-noise level as
    a bound (``error_text``), never its noise digits.
    """
    ax = fig.subplots()
    floor = 1e-17  # an exact zero error would vanish from a log plot; show it at the floor instead
    ax.loglog(curve.hs, np.maximum(curve.forward_err, floor), "o-", ms=3, color="tab:orange",
              label="forward difference")
    ax.loglog(curve.hs, np.maximum(curve.central_err, floor), "o-", ms=3, color="tab:blue",
              label="central difference")
    ax.autoscale_view()  # fixed by the sweep: a marker at any h of the sweep lies on its curve
    ax.set_autoscale_on(False)
    if curve.best is not None:  # room under the curves for a legend of four lines
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo / 1e3, hi)
    if curve.best is not None:  # the predicted bottoms of the two V's, in the colours of their curves
        for h_star, colour, kind in zip(curve.best, ("tab:orange", "tab:blue"), ("forward", "central")):
            ax.axvline(h_star, color=colour, lw=1.0, ls="--", label=f"predicted best Δ*, {kind}: {one_digit(h_star)}")
    ax.set_xlabel(f"step Δ (nudge of {entry_label(state.name, state.index)})")
    ax.set_ylabel("|difference − analytic gradient|")
    title = ax.set_title("", fontsize=9)
    ax.legend(loc="lower left", fontsize=9, frameon=False)
    at = ax.axvline(state.h, color="gray", lw=0.8, ls=":")
    (mark_forward,) = ax.plot([state.h], [max(state.forward_err, floor)], "s", color="tab:orange")
    (mark_central,) = ax.plot([state.h], [max(state.central_err, floor)], "o", ms=7, color="tab:blue")
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.17, top=0.88)

    def update(new: FDState) -> list:
        at.set_xdata([new.h, new.h])
        mark_forward.set_data([new.h], [max(new.forward_err, floor)])
        mark_central.set_data([new.h], [max(new.central_err, floor)])
        title.set_text(f"Δ = {one_digit(new.h)}: forward error {error_text(new.forward_err, new.h, new.loss)}, "
                       f"central error {error_text(new.central_err, new.h, new.loss)}")
        return [at, mark_forward, mark_central, title]

    update(state)
    return update


def describe_fd(s: FDState, curve: FDCurve) -> str:
    """The figure in words: the step, and both errors as the title prints them (a bound at rounding-noise level)."""
    best = "" if curve.best is None else (f" Dashed lines mark the predicted best steps, Δ* = {one_digit(curve.best[0])} "
                                         f"for the forward difference and {one_digit(curve.best[1])} for the central one.")
    return (f"Log-log plot of the error of the forward and central differences of the loss in "
            f"{entry_label(s.name, s.index)} against the step Δ, from {one_digit(curve.hs[0])} to "
            f"{one_digit(curve.hs[-1])}, marked at Δ = {one_digit(s.h)}: forward error "
            f"{error_text(s.forward_err, s.h, s.loss)}, central error {error_text(s.central_err, s.h, s.loss)}.{best}")


def fd_view(params: dict, batch, config: GPTConfig, name: str, index, hs, best: tuple[float, float] | None = None):
    """Return ``draw(fig, setting)`` with ``setting = {"log10_h": x}`` (h = 10**x); the sweep over ``hs`` is done once.

    ``best`` (optional): the predicted best steps Δ* of the forward and the central difference, drawn as dashed
    vertical lines in the colours of their curves and named in the text alternative.

    The limits are those of the sweep (the chapter's slider moves h over the same steps), so a drag moves the
    markers and not the axes. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    curve = fd_curve(params, batch, config, name, index, hs)
    if best is not None:
        f_star, c_star = (float(b) for b in best)
        if not all(np.isfinite(b) and b > 0 for b in (f_star, c_star)):
            raise ValueError(f"best must hold two positive finite steps, got {best}")
        curve = replace(curve, best=(f_star, c_star))

    def state(setting: dict) -> FDState:
        return fd_state(params, batch, config, name, index, 10.0 ** setting["log10_h"])

    return make_view(state, draw_fd, curve, describe=lambda s: describe_fd(s, curve))
