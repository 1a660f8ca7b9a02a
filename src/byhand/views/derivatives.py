"""The view behind Part I, "Derivatives": nudge one logit by h and watch the secant turn into the tangent.

The loss of the right word a, seen as a function of one logit z_j with every other logit held fixed, is

    L(x) = log Σ_i exp(z_i) − z_a     with z_j replaced by x;     dL/dz_j = p_j − y_j

(y is 1 at a and 0 elsewhere). A nudge of size h gives the forward difference (L(x+h) − L(x)) / h, with an
error of order h, and the central difference (L(x+h) − L(x−h)) / 2h, with an error of order h². Below some h,
rounding in L divided by h takes over. L is computed as a difference, log Σ exp(z) − z_a, of two numbers much larger
than L itself (about 7.7 against 0.39 for the chapter's logits), so its rounding error is about eps |log Σ exp(z)|,
not eps |L|: the cancellation happens at the size of what is subtracted. ``secant_state`` is the widget callback (pure,
microseconds); ``error_curve`` sweeps h once for the right panel; ``derivative_view`` returns ``draw(fig, setting)``
with ``setting = {"h": h}``.

Where the two errors balance (eps = 2^-52, the spacing of float64 numbers near 1; lse = |log Σ exp(z)| and the
derivatives of L at the starting point):

    forward:  (h/2)|L''| = 2 eps lse / h    gives  h* = 2 sqrt(eps lse / |L''|)      (of order sqrt(eps))
    central:  (h^2/6)|L'''| = eps lse / h   gives  h* = (3 eps lse / |L'''|)^(1/3)   (of order eps^(1/3))

``balanced_steps`` computes both; ``rms_error_curve`` measures the typical error at each h over several nearby
starting points, so that the lucky zeros of one curve's round-off do not decide where its valley lies.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.ticker import LogLocator

from ..bounds import Below, below
from ..softmax import softmax_forward
from . import fmt, make_view


def loss_of_logit(z, a: int, j: int, x) -> np.ndarray:
    """L(x) = logsumexp(z with z_j = x) − (z with z_j = x)_a, for every entry of ``x`` (float64, stable)."""
    z = np.asarray(z, dtype=np.float64)  # (V,)
    x = np.asarray(x, dtype=np.float64)  # (...)
    if z.ndim != 1 or not (0 <= a < z.size and 0 <= j < z.size):
        raise ValueError("z must be 1-D and a, j valid indices into it")
    zz = np.broadcast_to(z, x.shape + z.shape).copy()  # (..., V)
    zz[..., j] = x
    # written out rather than byhand.softmax.log_softmax_forward: the chapter's round-off curve is measured on exactly
    # this sequence of float operations (max, exp, sum, log), and its tiny-h digits depend on it
    top = zz.max(axis=-1, keepdims=True)  # (..., 1) subtracted so that exp never overflows
    lse = top[..., 0] + np.log(np.exp(zz - top).sum(axis=-1))  # (...)
    return lse - zz[..., a]


def exact_slope(z, a: int) -> np.ndarray:
    """dL/dz = p − y for every logit at once (V,)."""
    z = np.asarray(z, dtype=np.float64)
    p = softmax_forward(z)[0].copy()  # (V,)
    p[a] -= 1.0  # p - y
    return p


@dataclass(frozen=True)
class SecantState:
    """One nudge of size h of logit j, and the slopes it gives."""

    h: float  # the nudge
    x0: float  # z_j before the nudge
    loss0: float  # L(x0)
    loss_plus: float  # L(x0 + h)
    loss_minus: float  # L(x0 − h)
    forward: float  # (L(x0 + h) − L(x0)) / h
    central: float  # (L(x0 + h) − L(x0 − h)) / 2h
    exact: float  # p_j − y_j

    @property
    def forward_error(self) -> float:
        return abs(self.forward - self.exact)

    @property
    def central_error(self) -> float:
        return abs(self.central - self.exact)


def secant_state(z, a: int, j: int, h: float) -> SecantState:
    """Nudge z_j by ±h and compute both difference quotients and the exact slope p_j − y_j."""
    if not (np.isfinite(h) and h > 0):
        raise ValueError(f"h must be a finite number > 0, got {h!r}")
    x0 = float(np.asarray(z, dtype=np.float64)[j])
    l0, lp, lm = loss_of_logit(z, a, j, [x0, x0 + h, x0 - h])
    return SecantState(float(h), x0, float(l0), float(lp), float(lm), float((lp - l0) / h),
                       float((lp - lm) / (2 * h)), float(exact_slope(z, a)[j]))


@dataclass(frozen=True)
class ErrorCurve:
    """|difference quotient − exact slope| over a sweep of h, for both quotients."""

    hs: np.ndarray  # (n,) nudges, increasing
    forward: np.ndarray  # (n,) error of the forward difference
    central: np.ndarray  # (n,) error of the central difference


def error_curve(z, a: int, j: int, hs) -> ErrorCurve:
    """The error of both quotients at every h in ``hs`` (sorted increasing)."""
    hs = np.sort(np.asarray(hs, dtype=np.float64))
    states = [secant_state(z, a, j, h) for h in hs]
    return ErrorCurve(hs, np.array([s.forward_error for s in states]), np.array([s.central_error for s in states]))


def rms_error_curve(z, a: int, j: int, hs, n: int = 16, spacing: float = 0.01) -> ErrorCurve:
    """Root mean square of both errors over ``n`` starting points z_j + spacing·(k − n//2), k = 0 … n−1.

    One curve's round-off is a pattern of lucky and unlucky digits that changes from CPU to CPU; averaged over
    nearby starting points it follows its typical size, so the bottom of the valley no longer depends on luck.
    """
    if not (isinstance(n, int) and n >= 1 and np.isfinite(spacing) and spacing > 0):
        raise ValueError(f"n must be an int >= 1 and spacing a finite number > 0, got {n!r} and {spacing!r}")
    z = np.asarray(z, dtype=np.float64)
    curves = []
    for k in range(n):
        zk = z.copy()
        zk[j] += spacing * (k - n // 2)  # a nearby starting point
        curves.append(error_curve(zk, a, j, hs))
    fwd = np.sqrt(np.mean([c.forward ** 2 for c in curves], axis=0))  # (len(hs),)
    cen = np.sqrt(np.mean([c.central ** 2 for c in curves], axis=0))  # (len(hs),)
    return ErrorCurve(curves[0].hs, fwd, cen)


@dataclass(frozen=True)
class BalancedSteps:
    """The nudges at which truncation and round-off errors balance, from the Taylor terms."""

    eps: float  # spacing of float64 numbers near 1, 2^-52: round-off in L is about eps |log Σ e^z|
    loss: float  # |L| at the starting point
    scale: float  # |log Σ e^z| at the starting point: the size of the two numbers whose difference is L
    d2: float  # |L''| = p_j (1 − p_j)
    d3: float  # |L'''| = p_j (1 − p_j) |1 − 2 p_j|
    forward: float  # 2 sqrt(eps scale / |L''|)
    central: float  # (3 eps scale / |L'''|)^(1/3)


def balanced_steps(z, a: int, j: int) -> BalancedSteps:
    """Where the forward and central differences of L(z_j) should do best, before any nudge is measured."""
    z = np.asarray(z, dtype=np.float64)
    p = float(softmax_forward(z)[0][j])
    loss = float(loss_of_logit(z, a, j, z[j]))
    scale = abs(loss + float(z[a]))  # log Σ e^z = L + z_a: the first of the two numbers L is the difference of
    d2 = p * (1.0 - p)  # the second derivative of log-sum-exp along z_j (the −z_a term is linear)
    d3 = p * (1.0 - p) * abs(1.0 - 2.0 * p)
    if not (d2 > 0 and d3 > 0 and loss > 0):
        raise ValueError("L is flat or zero along this logit (p_j is 0, 1/2 or 1): the estimate does not apply")
    eps = float(np.finfo(np.float64).eps)
    return BalancedSteps(eps, loss, scale, d2, d3, float(2.0 * np.sqrt(eps * scale / d2)),
                         float((3.0 * eps * scale / d3) ** (1.0 / 3.0)))


@dataclass(frozen=True)
class StepRow:
    """One row of the step-size table: the nudge, both errors, and the round-off scale eps |log Σ e^z| / h."""

    h: float
    forward: object  # float (the measured error) or byhand.bounds.Below (a bound, where round-off moves the digits)
    central: object
    roundoff: float  # eps |log Σ e^z| / h: the round-off of the subtraction, divided by h

    def cells(self) -> list:
        """The row as the table prints it: 2 significant digits, or the bound ``< 1e-k``."""
        show = lambda e: e.text if isinstance(e, Below) else f"{e:.1e}"  # noqa: E731
        return [f"{self.h:.0e}", show(self.forward), show(self.central), f"{self.roundoff:.0e}"]


def step_table(z, a: int, j: int, hs, margin: float = 50.0, spread: float = 1.5) -> list:
    """The forward and central error at each h in ``hs``, printable the same on every CPU.

    Round-off moves a quotient by up to about eps lse / h, lse = |log Σ e^z| (the size of the numbers subtracted), in
    digits that differ from CPU to CPU. An error is shown as measured only where its Taylor term, (h/2) |L''| or
    (h^2/6) |L'''|, is more than ``margin`` times that round-off scale; elsewhere it is shown as the power of ten just
    above Taylor term + ``spread`` eps lse / h, checked by ``byhand.bounds.below``. Which of the two a cell shows
    depends on the Taylor terms only, never on noise.
    """
    b = balanced_steps(z, a, j)
    rows = []
    for h in np.asarray(hs, dtype=np.float64):
        s = secant_state(z, a, j, float(h))
        r = b.eps * b.scale / h  # the round-off scale
        shown = []
        for err, taylor, name in ((s.forward_error, h / 2 * b.d2, "forward"),
                                  (s.central_error, h**2 / 6 * b.d3, "central")):
            if taylor > margin * r:
                shown.append(err)
            else:
                bound = 10.0 ** np.ceil(np.log10(taylor + spread * r))
                shown.append(below(err, float(bound), f"{name} error at h = {h:.0e}"))
        rows.append(StepRow(float(h), shown[0], shown[1], float(r)))
    return rows


def draw_secant(fig, s: SecantState, z, a: int, j: int, curve: ErrorCurve, word: str = "z_j"):
    """Left: L against z_j with the tangent and the forward secant. Right: error against h on log axes.

    Returns ``update(state)``, which moves the secant, its two points, the marker of h on the right and the title to
    another nudge of the same logit and returns those artists (``byhand.live`` redraws only them). The loss curve,
    the tangent, the error curves, the legends and the limits of both panels do not depend on h.
    """
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    xs = np.linspace(s.x0 - 2.5, s.x0 + 2.5, 201)  # (201,)
    lo = loss_of_logit(z, a, j, xs)  # (201,)
    ax.plot(xs, lo, color="black", lw=1.6, label=r"loss $\mathcal{L}$")
    ax.plot(xs, s.loss0 + s.exact * (xs - s.x0), color="tab:blue", lw=1.2, label=f"tangent, slope {s.exact:.4f}")
    (secant,) = ax.plot(xs, np.zeros_like(xs), color="tab:red", lw=1.2, ls="--", label="secant")
    (points,) = ax.plot([], [], "o", color="tab:red", ms=4)
    ax.set_xlabel(f"logit of {word}")  # a logit is a plain number: it has no unit
    ax.set_ylabel("loss (nats)")
    ax.set_xlim(xs[0] - 0.05 * (xs[-1] - xs[0]), xs[-1] + 0.05 * (xs[-1] - xs[0]))  # autoscale's margins
    ax.set_ylim(lo.min() - 0.3, lo.max() + 0.3)
    ax.legend(fontsize=9, frameon=False, loc="upper right")
    title = ax.set_title("", fontsize=9)
    ax2.loglog(curve.hs, curve.forward, color="tab:red", lw=1.2, label="forward")
    ax2.loglog(curve.hs, curve.central, color="tab:purple", lw=1.2, label="central")
    ax2.set_xlim(ax2.get_xlim())  # autoscaled to the error curves, then kept for every h
    ax2.set_ylim(ax2.get_ylim())
    marker = ax2.axvline(1.0, color="gray", lw=0.8, label="this Δ")
    ax2.set_xlabel("nudge Δ")
    ax2.set_ylabel("|error of the slope|")
    ax2.yaxis.set_major_locator(LogLocator(base=10.0, numticks=6))  # labels far enough apart to read
    ax2.legend(fontsize=9, frameon=False, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, handlelength=1.2,
               columnspacing=0.8, handletextpad=0.4, borderaxespad=0.2)  # above the panel, where no curve can be
    fig.subplots_adjust(left=0.1, right=0.98, bottom=0.17, top=0.84, wspace=0.35)

    def update(new: SecantState) -> list:
        if new.x0 != s.x0:
            raise ValueError("this state nudges another starting point than the figure was drawn for")
        secant.set_ydata(new.loss0 + new.forward * (xs - new.x0))
        points.set_data([new.x0, new.x0 + new.h], [new.loss0, new.loss_plus])
        marker.set_xdata([new.h, new.h])
        title.set_text(f"Δ = {new.h:.3g}: secant slope {new.forward:.4f}, off by {new.forward_error:.2g}")
        return [secant, points, marker, title]

    update(s)
    return update


def describe_secant(s: SecantState, word: str = "z_j") -> str:
    """The figure in words: the nudge Δ, the secant's slope beside the tangent's, and both errors."""
    return (f"Left: the loss against the logit of {word}, with its tangent of slope {fmt(s.exact, '.4f')} and the "
            f"secant over a nudge Δ = {fmt(s.h, '.3g')}, of slope {fmt(s.forward, '.4f')}: off by "
            f"{fmt(s.forward_error, '.2g')}. Right: the error of the forward and central differences against Δ, both "
            f"axes logarithmic, marked at Δ = {fmt(s.h, '.3g')}, where the central difference is off by "
            f"{fmt(s.central_error, '.2g')}.")


def derivative_view(z, a: int, j: int, hs, word: str = "z_j"):
    """Return ``draw(fig, setting)`` for logit j of ``z`` (right word a); the error curve over ``hs`` is swept once.
    ``draw`` returns ``update(setting)`` for ``byhand.live``: every h keeps both panels' axes still."""
    z = np.asarray(z, dtype=np.float64).copy()
    curve = error_curve(z, a, j, hs)

    def state(setting: dict) -> SecantState:
        return secant_state(z, a, j, setting["h"])

    return make_view(state, draw_secant, z, a, j, curve, word, describe=lambda s: describe_secant(s, word))
