"""Tests for byhand.views.ln_saturation: a larger stream saturates an attention row read directly, not through LN."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.views import fmt
from byhand.views.ln_saturation import nudge_gain, saturation_state, saturation_view
from byhand.widgets import sweep

rng = np.random.default_rng(11)
X = rng.normal(size=(5, 8)) + 0.3  # (T, D) a stream
W_Q, W_K = rng.normal(size=(8, 4)), rng.normal(size=(8, 4))
LABELS = ["a", "b", "c", "d", "e"]


def layer_norm(x):
    """Independent oracle: each row to mean 0 and variance 1 (eps 1e-5), no gain or shift."""
    return np.array([[(v - r.mean()) / math.sqrt(r.var() + 1e-5) for v in r] for r in x])


def attend(x):
    """Row 4's scores and softmax weights, by plain loops."""
    q = x[4] @ W_Q
    s = np.array([q @ (x[t] @ W_K) / 2.0 for t in range(5)])
    e = [math.exp(v - s.max()) for v in s]
    return s, np.array(e) / sum(e)


def test_nudge_gain_matches_a_hand_softmax():
    s = np.array([0.5, 2.0, -1.0])
    e = np.exp(s)
    p = e / e.sum()
    e2 = np.exp(s + np.array([0.0, 0.1, 0.0]))
    assert nudge_gain(s, 0.1) == pytest.approx(e2[1] / e2.sum() - p[1], abs=1e-15)


@pytest.mark.parametrize("alpha", [1.0, 2.0, 8.0])
def test_layer_norm_undoes_the_scale_and_the_direct_read_does_not(alpha):
    st = saturation_state(X, alpha, layer_norm, attend)
    _, w1 = attend(layer_norm(X))
    np.testing.assert_allclose(st.w_ln, w1, atol=1e-6)  # the scale is undone (up to eps)
    np.testing.assert_allclose(st.ref_ln, w1, atol=1e-12)
    np.testing.assert_allclose(st.w_raw, attend(alpha * X)[1], atol=1e-12)
    np.testing.assert_allclose(st.ref_raw, attend(X)[1], atol=1e-12)
    assert st.spread_raw == pytest.approx(alpha**2 * np.ptp(attend(X)[0]))  # scores scale as alpha^2 here (no biases)


def test_the_direct_read_saturates_as_alpha_grows():
    tops = [saturation_state(X, a, layer_norm, attend).w_raw.max() for a in (1.0, 2.0, 4.0, 8.0)]
    gains = [saturation_state(X, a, layer_norm, attend).gain_raw for a in (1.0, 8.0)]
    assert np.all(np.diff(tops) > 0) and tops[-1] > 0.99
    assert gains[1] < gains[0] / 10


def test_bad_alpha_is_refused():
    with pytest.raises(ValueError, match="positive"):
        saturation_state(X, 0.0, layer_norm, attend)


def test_view_draws_two_panels_and_describes_its_numbers():
    draw = saturation_view(X, layer_norm, attend, LABELS, names=("with LN", "without LN"))
    fig = plt.figure()
    draw(fig, {"alpha": 4.0})
    assert len(fig.axes) == 2 and fig.legends
    st = saturation_state(X, 4.0, layer_norm, attend)
    text = draw.describe({"alpha": 4.0})
    assert fmt(st.w_raw.max(), 3) in text and fmt(st.w_ln.max(), 3) in text and LABELS[int(st.w_raw.argmax())] in text
    cols, rows = draw.table({"alpha": 4.0})
    assert len(rows) == 5 and rows[0][1] == st.w_ln[0]
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = saturation_view(X, layer_norm, attend, LABELS, names=("with LN₁", "without LN₁"))
    moves = [{"alpha": 6.0}, {"alpha": 1.0}, {"alpha": 8.0}, {"alpha": 2.5}]
    return draw, moves, sweep({"alpha": 6.0}, "alpha", [6.0, 1.0, 1.5, 2.0, 3.0, 4.0, 8.0])
