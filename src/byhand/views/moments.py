"""The view behind Part II, chapter "AdamW: three steps and their moments": how Adam's two moments follow a gradient.

For a fixed sequence of gradients g_1 .. g_T of one weight (the chapter records them from an AdamW run), Adam keeps

    m_t = β1 m_{t−1} + (1 − β1) g_t        v_t = β2 v_{t−1} + (1 − β2) g_t²        m_0 = v_0 = 0
    m_hat_t = m_t / (1 − β1^t)             v_hat_t = v_t / (1 − β2^t)

and steps by −η m_hat / (sqrt(v_hat) + ε), or by −η m / (sqrt(v) + ε) without the bias correction. ``moments_state``
computes all of it for one (β1, β2) (pure, microseconds); ``moments_view`` returns ``draw(fig, setting)`` with
``setting = {"beta1": β1, "beta2": β2}``: three panels, m next to g, sqrt(v) next to |g|, and the step in units of η,
each with and without the correction. The gradients do not change with β: the view shows what the averages make of
one fixed sequence, not a new training run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import fmt, make_view


@dataclass(frozen=True)
class MomentsState:
    """Adam's moments along one fixed gradient sequence; index k is step t = k + 1."""

    beta1: float
    beta2: float
    eps: float
    g: np.ndarray  # (T,) the gradients
    m: np.ndarray  # (T,) first moment: running mean of g, from 0
    v: np.ndarray  # (T,) second moment: running mean of g², from 0
    m_hat: np.ndarray  # (T,) m / (1 − β1^t)
    v_hat: np.ndarray  # (T,) v / (1 − β2^t)
    step: np.ndarray  # (T,) −m_hat / (sqrt(v_hat) + ε): the Adam step in units of η
    step_raw: np.ndarray  # (T,) −m / (sqrt(v) + ε): the same without the bias correction


def moments_state(g, beta1: float, beta2: float, eps: float = 1e-8) -> MomentsState:
    """Run Adam's moment updates over the gradients ``g`` (T,) from m_0 = v_0 = 0."""
    g = np.asarray(g, dtype=np.float64)
    if g.ndim != 1 or g.size == 0:
        raise ValueError("g must be a non-empty 1-d sequence of gradients")
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise ValueError(f"beta1 and beta2 must lie in [0, 1), got {beta1}, {beta2}")
    m, v, ms, vs = 0.0, 0.0, [], []
    for gt in g:
        m = beta1 * m + (1 - beta1) * gt
        v = beta2 * v + (1 - beta2) * gt * gt
        ms.append(m)
        vs.append(v)
    m, v = np.array(ms), np.array(vs)
    t = np.arange(1, g.size + 1)
    m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
    return MomentsState(float(beta1), float(beta2), float(eps), g, m, v, m_hat, v_hat,
                        -m_hat / (np.sqrt(v_hat) + eps), -m / (np.sqrt(v) + eps))


def draw_moments(fig, state: MomentsState, limits: float):
    """Three panels against the step t: g with m (dashed) and m_hat (solid); |g| with sqrt(v) and sqrt(v_hat); the
    step / η with and without the correction, on a symlog axis (linear within ±1, where the corrected steps live;
    logarithmic beyond, where uncorrected ones can go). ``limits`` is the largest |step / η| over every setting of
    the widget, so that the axes stay still. Returns ``update(state)`` (``byhand.live``)."""
    t = np.arange(1, state.g.size + 1)
    top = 1.15 * float(np.abs(state.g).max())
    ax1, ax2, ax3 = fig.subplots(1, 3)
    ax1.plot(t, state.g, "o", color="tab:gray", ms=4, label="$g_t$")
    (m,) = ax1.plot(t, state.m, "--", color="tab:blue", lw=1.2, label="$m_t$")
    (mh,) = ax1.plot(t, state.m_hat, "-", color="tab:blue", lw=1.8, label=r"$\hat m_t$")
    ax1.axhline(0, color="black", lw=0.6)
    ax1.set_ylim(-top, top)
    ax2.plot(t, np.abs(state.g), "o", color="tab:gray", ms=4, label="$|g_t|$")
    (v,) = ax2.plot(t, np.sqrt(state.v), "--", color="tab:orange", lw=1.2, label=r"$\sqrt{v_t}$")
    (vh,) = ax2.plot(t, np.sqrt(state.v_hat), "-", color="tab:orange", lw=1.8, label=r"$\sqrt{\hat v_t}$")
    ax2.set_ylim(0, top)
    (s,) = ax3.plot(t, state.step, "-", color="tab:green", lw=1.8, marker="o", ms=3, label=r"$-\hat m/\sqrt{\hat v}$")
    (sr,) = ax3.plot(t, state.step_raw, "--", color="tab:green", lw=1.2, label=r"$-m/\sqrt{v}$")
    ax3.set_yscale("symlog", linthresh=1.0)
    ax3.set_ylim(-1.3 * limits, 1.3 * limits)
    ticks = [y for y in (-30, -10, -3, -1, 0, 1, 3, 10, 30) if abs(y) <= 1.3 * limits]
    ax3.set_yticks(ticks, [fmt(y, 0) for y in ticks])
    for y in (-1, 1):
        ax3.axhline(y, color="tab:gray", lw=0.6, ls=":")
    ax3.axhline(0, color="black", lw=0.6)
    for ax, ylabel in ((ax1, "gradient and first moment"), (ax2, "size: |g| and √(second moment)"),
                       (ax3, "Adam step / η")):
        ax.set_xlabel("step t")
        ax.set_ylabel(ylabel, fontsize=9)
        ax.set_xticks(t[::3] if t.size > 6 else t)
        ax.tick_params(labelsize=9)
        ax.legend(fontsize=9, frameon=False, loc="lower left", bbox_to_anchor=(-0.03, 1.0), ncol=3,
                  handlelength=1.2, handletextpad=0.3, columnspacing=0.6, borderaxespad=0.1)
    title = fig.suptitle("", fontsize=9, y=0.99)
    fig.subplots_adjust(left=0.09, right=0.99, bottom=0.16, top=0.78, wspace=0.45)

    def update(new: MomentsState) -> list:
        m.set_ydata(new.m)
        mh.set_ydata(new.m_hat)
        v.set_ydata(np.sqrt(new.v))
        vh.set_ydata(np.sqrt(new.v_hat))
        s.set_ydata(new.step)
        sr.set_ydata(new.step_raw)
        title.set_text(f"β₁ = {new.beta1:g}, β₂ = {new.beta2:g}: step 1 is {fmt(new.step[0], 3)} η with the bias "
                       f"correction, {fmt(new.step_raw[0], 3)} η without it")
        return [m, mh, v, vh, s, sr, title]

    update(state)
    return update


def describe_moments(s: MomentsState) -> str:
    """The figure in words, with its key numbers."""
    n = s.g.size
    return (f"Three panels over {n} steps with β₁ = {s.beta1:g} and β₂ = {s.beta2:g}. Left: the gradients g_t, from "
            f"{fmt(s.g[0], '.4f')} at step 1 to {fmt(s.g[-1], '.4f')} at step {n}, with the first moment m_t (dashed), "
            f"{fmt(s.m[0], '.4f')} at step 1, and its bias-corrected m̂_t (solid), {fmt(s.m_hat[0], '.4f')} at step 1 "
            f"and {fmt(s.m_hat[-1], '.4f')} at step {n}. Middle: |g_t| with √v_t, {fmt(np.sqrt(s.v[0]), '.4f')} at "
            f"step 1 and {fmt(np.sqrt(s.v[-1]), '.4f')} at step {n}, and √v̂_t, {fmt(np.sqrt(s.v_hat[0]), '.4f')} and "
            f"{fmt(np.sqrt(s.v_hat[-1]), '.4f')}. Right: the Adam step in units of η, corrected "
            + ", ".join(fmt(x, '.3f') for x in s.step) + "; uncorrected " + ", ".join(fmt(x, '.3f') for x in s.step_raw)
            + ".")


def table_moments(s: MomentsState):
    """The figure's data, one row per step."""
    return (["t", "g", "m", "m̂", "√v", "√v̂", "step / η", "uncorrected / η"],
            [[str(k + 1), *(fmt(x, ".4f") for x in (s.g[k], s.m[k], s.m_hat[k], np.sqrt(s.v[k]), np.sqrt(s.v_hat[k]),
                                                     s.step[k], s.step_raw[k]))] for k in range(s.g.size)])


def moments_view(g, beta1s, beta2s, eps: float = 1e-8):
    """Return ``draw(fig, setting)`` over the gradients ``g``; the axes hold every (β1, β2) in the widget's
    ``beta1s`` × ``beta2s``."""
    limits = max(max(float(np.abs(st.step).max()), float(np.abs(st.step_raw).max()))
                 for st in (moments_state(g, b1, b2, eps) for b1 in beta1s for b2 in beta2s))

    def state(setting: dict) -> MomentsState:
        return moments_state(g, setting["beta1"], setting["beta2"], eps)

    return make_view(state, draw_moments, limits, describe=describe_moments, table=table_moments)
