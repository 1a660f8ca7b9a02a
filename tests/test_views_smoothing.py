"""Tests for byhand.views.smoothing: q, p - q and the loss against closed forms and finite differences."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.smoothing import loss_range, smoothing_state, smoothing_view
from byhand.widgets import sweep

Z = np.array([1.0, 0.0, -1.0, 0.0])


def loss_of(z, target, eps):
    p = np.exp(z) / np.exp(z).sum()
    q = np.full(len(z), eps / len(z))
    q[target] += 1 - eps
    return -(q * np.log(p)).sum()


@given(st.floats(0.0, 0.9), st.integers(0, 3), st.floats(-3.0, 3.0))
def test_q_sums_to_one_and_p_minus_q_to_zero(eps, j, delta):
    s = smoothing_state(Z, 2, eps, j, delta)
    assert s.q.sum() == pytest.approx(1.0) and s.p.sum() == pytest.approx(1.0)
    assert s.grad.sum() == pytest.approx(0.0, abs=1e-12)
    assert s.q[2] == pytest.approx(1 - eps + eps / 4) and s.q[0] == pytest.approx(eps / 4)


@given(st.floats(0.0, 0.5), st.integers(0, 3), st.floats(-3.0, 3.0))
def test_p_minus_q_is_the_finite_difference_gradient(eps, j, delta):
    s = smoothing_state(Z, 2, eps, j, delta)
    h = 1e-6
    num = [(loss_of(s.z + h * np.eye(4)[k], 2, eps) - loss_of(s.z - h * np.eye(4)[k], 2, eps)) / (2 * h)
           for k in range(4)]
    np.testing.assert_allclose(s.grad, num, atol=1e-8)
    assert s.loss == pytest.approx(loss_of(s.z, 2, eps), rel=1e-12)


def test_the_nudge_moves_one_logit_and_the_loss_curve_passes_through_the_state():
    s = smoothing_state(Z, 2, 0.1, 2, 1.5)
    np.testing.assert_allclose(s.z, [1.0, 0.0, 0.5, 0.0])
    k = int(np.argmin(np.abs(s.eps_grid - 0.1)))
    assert s.loss_curve[k] == pytest.approx(s.loss, rel=1e-12)
    assert s.loss_curve[0] == pytest.approx(loss_of(s.z, 2, 0.0), rel=1e-12)


@pytest.mark.parametrize("kwargs, message", [({"eps": 1.0}, "eps must be"), ({"j": 4}, "outside 0..3"),
                                             ({"target": -1}, "target -1")])
def test_bad_controls_are_rejected(kwargs, message):
    args = {"target": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        smoothing_state(Z, **args)


def test_the_view_draws_three_labelled_panels():
    fig = plt.figure(figsize=(7, 3), dpi=96)  # the size the chapter, the widget and the static slider use
    smoothing_view(Z, 2, ["<bos>", "i", "am", "<eos>"])(fig, {"eps": 0.1, "j": 2, "delta": 0.0})
    a, b, c = fig.axes
    assert a.get_ylabel() == "probability" and "ỹ (orange)" in a.get_title()
    assert "epsilon_{ls}" in c.get_xlabel() and c.get_title() == "loss = 2.5265"
    assert not fig.legends and all(ax.get_legend() is None for ax in fig.axes)  # nothing covers the bars
    from layout_check import layout_problems
    assert layout_problems(fig) == []
    plt.close(fig)


TOKENS = ["<bos>", "i", "am", "<eos>"]  # the chapter's target vocabulary; Z and target 2 ("am") are its logits


def test_the_loss_range_holds_every_setting_of_the_widget():
    lo, hi = loss_range(Z, 2, (-4.0, 4.0))
    seen = [smoothing_state(Z, 2, eps, j, d).loss_curve for eps in (0.0, 0.5) for j in range(4)
            for d in np.arange(-4.0, 4.01, 0.25)]
    assert lo == pytest.approx(min(c.min() for c in seen), abs=1e-9)
    assert hi == pytest.approx(max(c.max() for c in seen), abs=1e-9)
    # the chapter's static slider nudges "am" up to 6, past the widget: its line stays inside the panel
    fig = plt.figure(figsize=(7, 3), dpi=96)
    draw = smoothing_view(Z, 2, TOKENS)
    for d in np.arange(0.0, 6.01, 0.75):
        fig.clear()
        draw(fig, {"eps": 0.1, "j": 2, "delta": d})
        bottom, top = fig.axes[2].get_ylim()
        line = fig.axes[2].get_lines()[0].get_ydata()
        assert bottom < line.min() and line.max() < top
    plt.close(fig)



def test_given_loss_limits_replace_the_widget_range_and_token_names_do_not_collide():
    lo, hi = 2.1, 2.7  # about the default line's own range: its slope is visible
    fig = plt.figure(figsize=(7, 3), dpi=96)
    smoothing_view(Z, 2, TOKENS, loss_limits=(lo, hi))(fig, {"eps": 0.1, "j": 2, "delta": 0.0})
    bottom, top = fig.axes[2].get_ylim()
    assert bottom < lo < hi < top and top - bottom < 1.0  # not the widget's range of several nats
    assert all(t.get_rotation() > 0 for t in fig.axes[0].get_xticklabels())  # tilted token names
    from layout_check import layout_problems
    assert layout_problems(fig) == []
    plt.close(fig)

def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = smoothing_view(Z, 2, TOKENS)
    # the chapter's controls: ε from 0 to 0.5, the nudged logit j (any token), Δ from -4 to 4; default (0.1, am, 0)
    moves = [{"eps": 0.1, "j": 2, "delta": 0.0}, {"eps": 0.0, "j": 2, "delta": 0.0},
             {"eps": 0.5, "j": 2, "delta": 4.0}, {"eps": 0.5, "j": 0, "delta": 4.0},
             {"eps": 0.25, "j": 1, "delta": -4.0}, {"eps": 0.0, "j": 3, "delta": 2.5}]
    return draw, moves, sweep({"eps": 0.1, "j": 2, "delta": 0.0}, "delta", np.arange(0.0, 6.01, 0.75))
