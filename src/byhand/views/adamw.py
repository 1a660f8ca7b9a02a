"""The view behind Part II, chapter "AdamW: three steps and their moments": the loss after one AdamW step, against the learning rate.

At the first step (t = 1, from zero moments) AdamW moves every weight by

    Δθ = −lr · m_hat / (sqrt(v_hat) + eps) − lr · λ · θ        m_hat = g,  v_hat = g²   (bias-corrected)
       ≈ −lr · sign(g) − lr · λ · θ

so the learning rate alone sets how far every weight moves. Without bias correction, m = (1 − β1) g and
v = (1 − β2) g², and the step is (1 − β1) / sqrt(1 − β2) ≈ 3.16 times larger. ``adamw_state`` is the widget
callback (one step and one forward pass, a few ms); ``adamw_curve`` sweeps the learning rate once for the figure;
``adamw_view`` returns ``draw(fig, setting)`` with ``setting = {"log10_lr": x, "bias_correction": bool}``. A move of
the widget redraws only the marked rate, the bars, their values and the titles (``byhand.live``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..gpt import GPTConfig, gpt_loss
from ..optim import AdamWConfig, adamw_step, init_state
from . import fmt, make_view


def first_step(params: dict, grads: dict, opt: AdamWConfig, lr: float, bias_correction: bool = True) -> dict:
    """The parameters after AdamW's first step (t = 1, zero moments) at learning rate ``lr``: ``byhand.optim``'s
    ``adamw_step``, with the moments bias-corrected or (``bias_correction=False``) used as they are."""
    if not (np.isfinite(lr) and lr >= 0):
        raise ValueError(f"lr must be a finite number >= 0, got {lr}")
    opt = replace(opt, bias_correction=bool(bias_correction))
    new_params, _, _ = adamw_step(params, grads, init_state(params), opt, lr=lr)
    return new_params


@dataclass(frozen=True)
class AdamWState:
    """One first step at one learning rate: the loss before and after, and what a straight line predicted."""

    lr: float  # the learning rate of the step
    bias_correction: bool  # whether m and v were bias-corrected
    loss_before: float  # L(θ)
    loss_after: float  # L(θ + Δθ)
    predicted: float  # L(θ) + Σ g·Δθ: the first-order prediction of the loss after the step
    max_move: float  # max |Δθ| over every entry of every parameter


def adamw_state(params: dict, grads: dict, batch, config: GPTConfig, opt: AdamWConfig, lr: float,
                bias_correction: bool = True) -> AdamWState:
    """Take AdamW's first step at ``lr`` and measure the loss before and after. Pure: inputs are not modified."""
    new_params = first_step(params, grads, opt, lr, bias_correction)
    moves = {name: new_params[name] - params[name] for name in params}  # Δθ per parameter
    first_order = float(sum(np.sum(grads[name] * moves[name]) for name in params))  # Σ g·Δθ
    before = gpt_loss(params, batch, config)
    return AdamWState(float(lr), bool(bias_correction), before, gpt_loss(new_params, batch, config),
                      before + first_order, float(max(np.abs(d).max() for d in moves.values())))


@dataclass(frozen=True)
class AdamWCurve:
    """The loss after one step along a sweep of learning rates, with and without bias correction."""

    lrs: np.ndarray  # (n,) learning rates, increasing
    corrected: np.ndarray  # (n,) loss after the bias-corrected step
    uncorrected: np.ndarray  # (n,) loss after the uncorrected step


def adamw_curve(params: dict, grads: dict, batch, config: GPTConfig, opt: AdamWConfig, lrs) -> AdamWCurve:
    """Loss after one step for every learning rate in ``lrs`` (two steps and two forward passes per rate)."""
    lrs = np.sort(np.asarray(lrs, dtype=np.float64))  # (n,)
    if lrs.size < 2 or not np.all(lrs > 0):
        raise ValueError("lrs must hold at least 2 positive learning rates")
    corrected = [gpt_loss(first_step(params, grads, opt, lr, True), batch, config) for lr in lrs]
    uncorrected = [gpt_loss(first_step(params, grads, opt, lr, False), batch, config) for lr in lrs]
    return AdamWCurve(lrs, np.array(corrected), np.array(uncorrected))


def draw_adamw(fig, state: AdamWState, curve: AdamWCurve):
    """Left: loss after one step against lr (log axis). Right: the loss before, after, and the straight-line guess.

    Both panels' vertical range is fixed by the loss before the step, which no control changes: 0 to twice it, since a
    loss cannot be negative (a diverging step, or a straight line that predicts a negative loss, runs off the panel;
    each bar carries its value, so a cut bar, or one below 0, still shows its number). Returns
    ``update(state)``, which moves the line at lr, the dot, the three bars, their values and both titles to another
    setting and returns those artists (``byhand.live`` redraws only them).
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    ax.semilogx(curve.lrs, curve.corrected, color="tab:blue", lw=1.8, label="with bias correction")
    ax.semilogx(curve.lrs, curve.uncorrected, color="tab:red", lw=1.2, ls="--", label="without")
    ax.autoscale_view()  # the learning rates of the sweep fix the horizontal range
    ax.set_autoscale_on(False)
    ax.axhline(state.loss_before, color="gray", lw=0.8, ls=":", label="before the step")
    ax.set_xlabel("learning rate η")
    ax.set_ylabel("loss after one step (nats)")
    ax.set_ylim(0.0, 2.0 * state.loss_before)  # a diverging step would squash the interesting part of the curve
    title = ax.set_title("", fontsize=9)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    at = ax.axvline(state.lr, color="gray", lw=0.8)
    (dot,) = ax.plot([state.lr], [state.loss_after], "o")
    labels = ["before", "after", "straight line\nL + Σ g·Δθ"]
    bars = ax2.bar(labels, [state.loss_before] * 3, color=["tab:gray", "tab:blue", "tab:orange"])
    lo, hi = 0.0, 2.0 * state.loss_before  # a loss is never below 0; a straight line's guess can be, and says so
    ax2.set_ylim(lo, hi)
    ax2.axhline(0, color="black", lw=0.6, zorder=0.5)  # under the bars, as in a moved frame
    ax2.set_ylabel("loss (nats)")
    title2 = ax2.set_title("", fontsize=9)
    ax2.tick_params(axis="x", labelsize=9)
    values = [ax2.text(k, 0.0, "", ha="center", fontsize=9) for k in range(3)]
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.2, top=0.88, wspace=0.35)
    margin, room = 0.02 * (hi - lo), 0.12 * (hi - lo)  # room: a value's height above a bar

    def update(new: AdamWState) -> list:
        at.set_xdata([new.lr, new.lr])
        dot.set_data([new.lr], [new.loss_after])
        dot.set_color("tab:blue" if new.bias_correction else "tab:red")
        title.set_text(f"η = {new.lr:.3g}: loss {new.loss_before:.4f} → {new.loss_after:.4f}")
        for bar, text, v in zip(bars, values, (new.loss_before, new.loss_after, new.predicted)):
            bar.set_height(v)
            if v < 0:  # a bar below 0, out of the panel: its value just above the zero line
                y, va, color = margin, "bottom", "black"
            elif v > hi - room:  # a bar that reaches the top, or runs off it: the value inside, at its end, in white
                y, va, color = min(v, hi) - margin, "top", "white"
            else:  # above the bar
                y, va, color = v + margin, "bottom", "black"
            text.set_position((bar.get_x() + bar.get_width() / 2, y))
            text.set_verticalalignment(va)
            text.set_color(color)
            text.set_text(f"{v:.3f}".replace("-", "−"))
        title2.set_text(f"largest move of a weight: {new.max_move:.3g}")
        return [at, dot, title, *bars, *values, title2]

    update(state)
    return update


def describe_adamw(s: AdamWState) -> str:
    """The figure in words: the learning rate, the loss before and after, the straight line, the largest move."""
    which = "with" if s.bias_correction else "without"
    return (f"Left: the loss after AdamW's first step against the learning rate (log axis), with and without bias "
            f"correction, marked at η = {fmt(s.lr, '.3g')} ({which}): the loss goes from {fmt(s.loss_before, '.4f')} "
            f"to {fmt(s.loss_after, '.4f')}. Right: bars of the loss before ({fmt(s.loss_before, '.3f')}), after "
            f"({fmt(s.loss_after, '.3f')}) and the straight-line guess ℒ + Σ g·Δθ ({fmt(s.predicted, '.3f')}); the "
            f"largest move of a weight is {fmt(s.max_move, '.3g')}.")


def adamw_view(params: dict, grads: dict, batch, config: GPTConfig, opt: AdamWConfig, lrs):
    """Return ``draw(fig, setting)``; the sweep over ``lrs`` is computed once, here.

    ``lrs`` should span the widget's learning rates (the chapter sweeps 1e-4 … 1, the slider's range): the
    horizontal axis is the sweep's. ``draw`` returns ``update(setting)`` for ``byhand.live``.
    """
    curve = adamw_curve(params, grads, batch, config, opt, lrs)

    def state(setting: dict) -> AdamWState:
        return adamw_state(params, grads, batch, config, opt, 10.0 ** setting["log10_lr"], setting["bias_correction"])

    return make_view(state, draw_adamw, curve, describe=describe_adamw)
