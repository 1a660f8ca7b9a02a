"""The view behind Part III, "Adam and the warm-up schedule": the first steps of training, for a warm-up length and an
optimizer.

For warm-up length W the 2017 rate is lr(t) = d_model^-0.5 min(t^-0.5, t W^-1.5) (``byhand.optim.warmup_lr``);
W = 1 is no warm-up at all (the rate starts at its peak, d_model^-0.5, and decays). ``start_run`` trains the toy from
its starting weights for a few steps with Adam (``adam_step``) or plain gradient descent (θ ← θ − lr g), and records
at each step the rate, the median size |Δθ| of the move over every entry of every parameter, and the loss after it.
Adam moves a typical weight by about lr (its step is lr · m_hat / (sqrt(v_hat) + eps)); gradient descent by lr |g|.
``warmup_start_view`` runs every (W, optimizer) pair of the widget once, up front, so that a move of the controls
only swaps curves (``byhand.live``): ``setting = {"warmup": W, "optimizer": "Adam" or "gradient descent"}``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..optim import AdamConfig, adam_step, init_state, warmup_lr
from . import fmt, make_view

OPTIMIZERS = ("Adam", "gradient descent")
COLORS = {"Adam": "tab:blue", "gradient descent": "tab:red"}


@dataclass(frozen=True)
class StartRun:
    """The first ``steps`` steps of one run: index k of ``lr`` and ``move`` is step k + 1; ``loss[0]`` is before."""

    warmup: int  # warm-up length W (1: none)
    optimizer: str  # "Adam" or "gradient descent"
    lr: np.ndarray  # (steps,) the rate at each step
    move: np.ndarray  # (steps,) the median |Δθ| over every entry of every parameter, at each step
    loss: np.ndarray  # (steps + 1,) the loss before step 1, then after each step


def start_run(loss_and_grads: Callable, params: dict, cfg: AdamConfig, d_model: int, warmup: int, optimizer: str,
              steps: int) -> StartRun:
    """Train from ``params`` for ``steps`` steps at the 2017 rate with warm-up ``warmup``. Pure: inputs unchanged.

    ``loss_and_grads(params) -> (loss, anything, grads)``, as ``byhand.toy_2017.loss_and_grads``.
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if warmup < 1 or steps < 1:
        raise ValueError(f"warmup and steps must be at least 1, got {warmup}, {steps}")
    theta, state = params, init_state(params)
    loss, _, grads = loss_and_grads(theta)
    rates, moves, losses = [], [], [float(loss)]
    for t in range(1, steps + 1):
        lr = warmup_lr(t, d_model, warmup)
        if optimizer == "Adam":
            new, state, _ = adam_step(theta, grads, state, cfg, lr=lr)
        else:  # plain gradient descent
            new = {n: theta[n] - lr * grads[n] for n in theta}
        moves.append(float(np.median(np.concatenate([np.abs(new[n] - theta[n]).ravel() for n in theta]))))
        rates.append(lr)
        theta = new
        loss, _, grads = loss_and_grads(theta)
        losses.append(float(loss))
    return StartRun(int(warmup), optimizer, np.array(rates), np.array(moves), np.array(losses))


def draw_start(fig, run: StartRun, reference: StartRun, limits: tuple[float, float, float]):
    """Left: the median move and the rate at each step (log axis). Right: the loss after each step, beside the
    reference run (Adam with the paper's warm-up). ``limits`` = (move_lo, move_hi, loss_hi) holds every run of the
    widget, so the axes stay still. Returns ``update(run)`` (``byhand.live``)."""
    move_lo, move_hi, loss_hi = limits
    steps = np.arange(1, len(run.lr) + 1)
    ax, ax2 = fig.subplots(1, 2)
    (rate,) = ax.semilogy(steps, run.lr, ":", color="black", lw=1.2, label="rate $\\eta_t$")
    (move,) = ax.semilogy(steps, run.move, "-", color=COLORS[run.optimizer], lw=1.6, label="median |Δθ|")
    ax.set_ylim(move_lo, move_hi)
    ax.set_xlim(0, steps[-1] + 1)
    ax.set_xlabel("step t")
    ax.set_ylabel("size of the step")
    leg1 = ax.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=2,
                     borderaxespad=0.2)
    ax2.plot(np.arange(len(reference.loss)), reference.loss, "--", color="tab:gray", lw=1.2,
             label=f"Adam, warm-up {reference.warmup}")
    (loss,) = ax2.plot(np.arange(len(run.loss)), run.loss, "-", color=COLORS[run.optimizer], lw=1.6, label="this run")
    ax2.set_ylim(0, loss_hi)
    ax2.set_xlim(0, steps[-1] + 1)
    ax2.set_xlabel("step t")
    ax2.set_ylabel("loss after step t (nats)")
    leg2 = ax2.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.02, 1.0), ncol=2,
                      borderaxespad=0.2, handlelength=1.2, handletextpad=0.4, columnspacing=0.8)
    title = fig.suptitle("", fontsize=9, y=0.98)
    for a in (ax, ax2):
        a.tick_params(labelsize=9)
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.8, wspace=0.3)

    def update(new: StartRun) -> list:
        rate.set_ydata(new.lr)
        move.set_ydata(new.move)
        move.set_color(COLORS[new.optimizer])
        loss.set_ydata(new.loss)
        loss.set_color(COLORS[new.optimizer])
        leg1.legend_handles[1].set_color(COLORS[new.optimizer])  # the legend's key follows its line
        leg2.legend_handles[1].set_color(COLORS[new.optimizer])
        title.set_text(f"{new.optimizer}, warm-up {new.warmup}: step 1 moves a weight {new.move[0]:.1e}; "
                       f"loss after {len(new.lr)} steps {new.loss[-1]:.3f}")
        return [rate, move, loss, leg1, leg2, title]

    update(run)
    return update


def describe_start(pair) -> str:
    """The figure in words, with its key numbers."""
    run, reference = pair
    n = len(run.lr)
    return (f"Left: for {run.optimizer} with warm-up {run.warmup}, the median size of a weight's move at each of the "
            f"first {n} steps, {fmt(run.move[0], '.2e')} at step 1 and {fmt(run.move[-1], '.2e')} at step {n}, beside "
            f"the rate, {fmt(run.lr[0], '.2e')} at step 1 and {fmt(run.lr[-1], '.2e')} at step {n}. Right: the loss "
            f"after each step, from {fmt(run.loss[0], '.4f')} to {fmt(run.loss[-1], '.4f')}, beside Adam with "
            f"warm-up {reference.warmup}, which ends at {fmt(reference.loss[-1], '.4f')}.")


def table_start(pair):
    """The figure's data at a few steps: the rate, the median move and the loss."""
    run, _ = pair
    shown = [k for k in (1, 2, 5, 10, 20, 40, 80, 160) if k <= len(run.lr)]
    return (["step t", "rate", "median |Δθ|", "loss after"],
            [[str(k), fmt(run.lr[k - 1], ".2e"), fmt(run.move[k - 1], ".2e"), fmt(run.loss[k], ".4f")] for k in shown])


def warmup_start_view(loss_and_grads: Callable, params: dict, cfg: AdamConfig, d_model: int, warmups, steps: int,
                      reference_warmup: int):
    """Return ``draw(fig, setting)`` and the runs it draws, ``{(W, optimizer): StartRun}``, every one computed here.

    ``reference_warmup`` (the paper's) must be in ``warmups``; its Adam run is drawn grey in every setting.
    """
    if reference_warmup not in warmups:
        raise ValueError(f"the reference warm-up {reference_warmup} is not among {list(warmups)}")
    runs = {(w, o): start_run(loss_and_grads, params, cfg, d_model, w, o, steps) for o in OPTIMIZERS for w in warmups}
    reference = runs[(reference_warmup, "Adam")]
    positive = np.concatenate([r.move[r.move > 0] for r in runs.values()] + [r.lr for r in runs.values()])
    limits = (float(positive.min()) / 3, float(positive.max()) * 3, 1.05 * max(float(r.loss.max()) for r in runs.values()))

    def state(setting: dict):
        return runs[(setting["warmup"], setting["optimizer"])], reference

    def draw_pair(fig, pair):
        update = draw_start(fig, pair[0], pair[1], limits)
        return lambda new: update(new[0])

    return make_view(state, draw_pair, describe=describe_start, table=table_start), runs
