"""The view behind Part III, "Output, softmax and label smoothing": nudge a logit or epsilon, watch q, p - q, the loss.

``smoothing_state`` is the widget callback (pure, microseconds): it adds Δ to one logit, smooths the
one-hot target with ε and returns p, q, p - q and the loss; ``draw_smoothing`` draws it. Equations:

    p = softmax(z),   q = (1 - ε) onehot(target) + ε / V,   L = -Σ q_i log p_i,   dL/dz = p - q.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import as_float, check_ndim
from ..softmax import log_softmax_forward


@dataclass(frozen=True)
class SmoothingState:
    """Everything the view shows for one setting of the controls (arrays are (V,))."""

    z: np.ndarray  # logits after the nudge
    p: np.ndarray  # softmax(z)
    q: np.ndarray  # smoothed target distribution
    grad: np.ndarray  # p - q, the gradient of the loss with respect to z
    loss: float  # -Σ q log p
    eps: float  # label smoothing ε
    j: int  # index of the nudged logit
    delta: float  # amount added to z[j]
    target: int  # index of the correct token
    eps_grid: np.ndarray  # (101,) ε from 0 to 0.5, for the loss curve
    loss_curve: np.ndarray  # (101,) the loss at each ε of eps_grid, same logits


def smoothing_state(logits, target: int, eps: float = 0.1, j: int = 0, delta: float = 0.0) -> SmoothingState:
    """Add ``delta`` to logit ``j``, then compute p, the ε-smoothed target q, p - q and the loss."""
    z = as_float("logits", logits).copy()
    check_ndim("logits", z, (1,))
    V = z.shape[0]
    if not 0 <= target < V:
        raise ValueError(f"target {target} is outside 0..{V - 1}")
    if not 0 <= j < V:
        raise ValueError(f"logit index j = {j} is outside 0..{V - 1}")
    if not 0.0 <= eps < 1.0:
        raise ValueError(f"eps must be in [0, 1), got {eps}")
    z[j] += delta
    logp, _ = log_softmax_forward(z)  # (V,)
    p = np.exp(logp)
    onehot = np.eye(V)[target]  # (V,)
    q = (1 - eps) * onehot + eps / V
    eps_grid = np.linspace(0.0, 0.5, 101)
    # L(ε) = -(1 - ε) log p_target - (ε / V) Σ log p: a straight line in ε
    loss_curve = -(1 - eps_grid) * logp[target] - eps_grid / V * logp.sum()  # (101,)
    return SmoothingState(z, p, q, p - q, float(-(q * logp).sum()), eps, j, delta, target, eps_grid, loss_curve)


def draw_smoothing(fig, state: SmoothingState, tokens) -> None:
    """Left: p and q per token. Middle: p - q. Right: the loss against ε, with the current ε marked.

    No legend: the left panel's title names the colours, so nothing covers the bars (text is 9 pt or more).
    """
    ax, ax2, ax3 = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.3, 1.1, 1.0]})
    x = np.arange(len(tokens))
    ax.bar(x - 0.2, state.p, width=0.4, color="tab:blue")
    ax.bar(x + 0.2, state.q, width=0.4, color="tab:orange")
    ax.set_xticks(x, tokens)
    ax.set_ylim(0, 1)
    ax.set_ylabel("probability")
    ax.set_title("p (blue), q (orange)", fontsize=9)
    colors = np.where(state.grad >= 0, "tab:blue", "tab:red")
    ax2.bar(x, state.grad, color=colors)
    ax2.axhline(0, color="gray", lw=0.6)
    ax2.set_xticks(x, tokens)
    ax2.set_ylim(-1, 1)
    ax2.set_ylabel(r"$\partial L / \partial z = p - q$")
    total = round(float(state.grad.sum()), 6) + 0.0  # 0 up to round-off; + 0.0 turns -0.0 into 0.0
    ax2.set_title(f"entries sum to {total:.4f}", fontsize=9)
    ax3.plot(state.eps_grid, state.loss_curve, color="tab:gray", lw=1.2)
    ax3.plot([state.eps], [state.loss], "o", color="black")
    ax3.set_xlabel("label smoothing ε")
    ax3.set_ylabel("loss (nats)")
    ax3.set_title(f"loss = {state.loss:.4f}", fontsize=9)
    for a in (ax, ax2, ax3):
        a.tick_params(labelsize=9)
    fig.subplots_adjust(left=0.09, right=0.98, bottom=0.17, top=0.88, wspace=0.6)


def smoothing_view(logits, target: int, tokens):
    """Return ``draw(fig, setting)`` for the widget and the static slider; ``setting`` has keys eps, j, delta."""
    def draw(fig, setting: dict) -> None:
        state = smoothing_state(logits, target, setting["eps"], setting["j"], setting["delta"])
        draw_smoothing(fig, state, tokens)

    return draw
