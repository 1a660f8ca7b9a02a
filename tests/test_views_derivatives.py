"""Tests for byhand.views.derivatives: the loss as a function of one logit, its difference quotients and p − y."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from layout_check import check_layout
from byhand.views.derivatives import (balanced_steps, derivative_view, error_curve, exact_slope, loss_of_logit,
                                     rms_error_curve, secant_state)
from byhand.widgets import sweep

Z = np.array([2.0, -1.0, 0.5, 3.0, -2.5])
A = 3


def naive_loss(z, a):
    return float(np.log(np.sum(np.exp(z))) - z[a])


def test_loss_of_logit_matches_naive_formula():
    for j in range(Z.size):
        for x in (-3.0, 0.0, 1.7):
            z = Z.copy()
            z[j] = x
            assert loss_of_logit(Z, A, j, x) == pytest.approx(naive_loss(z, A), abs=1e-13)


def test_loss_of_logit_is_stable_for_huge_logits():
    z = Z + 1000.0
    assert loss_of_logit(z, A, 0, z[0]) == pytest.approx(naive_loss(Z, A), abs=1e-12)


def test_exact_slope_is_p_minus_y_and_sums_to_zero():
    p = np.exp(Z) / np.exp(Z).sum()
    y = np.eye(Z.size)[A]
    np.testing.assert_allclose(exact_slope(Z, A), p - y, atol=1e-15)
    assert exact_slope(Z, A).sum() == pytest.approx(0.0, abs=1e-15)


def test_quotients_converge_at_their_orders():
    for j in range(Z.size):
        s1, s2 = secant_state(Z, A, j, 1e-2), secant_state(Z, A, j, 1e-3)
        assert s1.central_error < 1e-5 and s1.forward_error < 1e-2
        # forward error ~ h (ratio ~10), central ~ h² (ratio ~100)
        assert 5 < s1.forward_error / s2.forward_error < 20
        assert 50 < s1.central_error / s2.central_error < 200


def test_state_fields_and_bad_h():
    s = secant_state(Z, A, 1, 0.5)
    assert s.loss_plus == pytest.approx(loss_of_logit(Z, A, 1, Z[1] + 0.5))
    assert s.forward == pytest.approx((s.loss_plus - s.loss0) / 0.5)
    with pytest.raises(ValueError):
        secant_state(Z, A, 1, 0.0)


def test_roundoff_makes_tiny_h_worse():
    c = error_curve(Z, A, A, np.logspace(-14, 0, 57))
    best = c.hs[np.argmin(c.forward)]
    assert 1e-10 < best < 1e-5  # round-off on the left, truncation on the right
    assert c.forward[0] > c.forward.min() * 100


def test_draw_runs():
    draw = derivative_view(Z, A, A, np.logspace(-12, 0, 25), word="Mary")
    fig = plt.figure()
    draw(fig, {"h": 1.0})
    assert len(fig.axes) == 2
    plt.close(fig)


def test_balanced_steps_follow_the_taylor_balance():
    p = np.exp(Z) / np.exp(Z).sum()
    loss = naive_loss(Z, A)
    eps = 2.0 ** -52
    for j in range(Z.size):
        b = balanced_steps(Z, A, j)
        d2, d3 = p[j] * (1 - p[j]), p[j] * (1 - p[j]) * abs(1 - 2 * p[j])
        scale = np.log(np.sum(np.exp(Z)))  # round-off sits at the size of log Σ e^z, the number L is subtracted from
        assert b.loss == pytest.approx(loss, rel=1e-12) and b.scale == pytest.approx(scale, rel=1e-12)
        assert b.forward == pytest.approx(2 * np.sqrt(eps * scale / d2), rel=1e-9)
        assert b.central == pytest.approx((3 * eps * scale / d3) ** (1 / 3), rel=1e-9)
        assert b.forward < b.central  # central can afford the larger nudge


def test_balanced_steps_refuse_a_logit_without_curvature():
    with pytest.raises(ValueError, match="does not apply"):
        balanced_steps(np.array([0.0, 0.0]), 0, 0)  # p = 1/2: L''' = 0


def test_rms_error_curve_of_one_point_is_the_plain_curve():
    hs = np.logspace(-12, 0, 13)
    one, plain = rms_error_curve(Z, A, 2, hs, n=1), error_curve(Z, A, 2, hs)
    np.testing.assert_array_equal(one.forward, plain.forward)
    np.testing.assert_array_equal(one.central, plain.central)
    with pytest.raises(ValueError):
        rms_error_curve(Z, A, 2, hs, n=0)


def test_rms_valley_lies_within_a_decade_of_the_balance():
    hs = np.logspace(-13, 0, 79)
    for j in (0, A):
        c, b = rms_error_curve(Z, A, j, hs), balanced_steps(Z, A, j)
        assert abs(np.log10(c.hs[np.argmin(c.forward)] / b.forward)) < 1
        assert abs(np.log10(c.hs[np.argmin(c.central)] / b.central)) < 1


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = derivative_view(Z, A, A, np.logspace(-13, 0.5, 55), word="Mary")
    # the chapter's slider: h from 1e-12 to 10^0.4 on a log scale
    settings = [{"h": h} for h in (2.0, 10 ** 0.4, 1e-12, 1e-6, 0.05)]
    moves = settings
    return draw, moves, sweep({"h": 2.0}, "h", [2.0, 1.0, 0.5, 0.2, 0.05, 1e-3, 1e-6, 1e-9, 1e-12])
    for s in settings[1:3]:
        fig = Figure(figsize=(7, 3), dpi=72)
        FigureCanvasAgg(fig)
        draw(fig, s)
        check_layout(fig, context=f"h = {s['h']}: ")


def test_step_table_bounds_only_where_roundoff_rules():
    from byhand.bounds import Below
    from byhand.views.derivatives import step_table

    z = np.array([1.0, 0.5, -0.3, 2.0])
    rows = step_table(z, 3, 3, 10.0 ** -np.arange(2, 13))
    assert not isinstance(rows[0].forward, Below) and not isinstance(rows[0].central, Below)  # Δ = 1e-2: measured
    assert isinstance(rows[-1].forward, Below) and isinstance(rows[-1].central, Below)  # Δ = 1e-12: bounds
    assert [r.roundoff for r in rows] == sorted(r.roundoff for r in rows)  # round-off grows as Δ shrinks
    scale = np.log(np.sum(np.exp(z)))  # the size of the two numbers whose difference is L
    assert all(r.roundoff == pytest.approx(2.0 ** -52 * scale / r.h, rel=1e-12) for r in rows)
    for r in rows:
        exact = secant_state(z, 3, 3, r.h)
        for shown, err in ((r.forward, exact.forward_error), (r.central, exact.central_error)):
            assert (err < shown.bound) if isinstance(shown, Below) else shown == err
    assert rows[0].cells()[0] == "1e-02" and rows[-1].cells()[1].startswith("< 1e-")
