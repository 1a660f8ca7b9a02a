"""Tests for byhand.views.logs, checked against −log of probabilities written out by hand."""
import math
import time

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from layout_check import check_layout
from byhand.views.logs import logs_state, logs_view
from live_helpers import assert_moves_in_place

WORDS = ("a", "b", "c", "d")
Z = np.array([2.0, 1.0, 0.0, -1.0])


def p_by_hand(z):
    e = [math.exp(v) for v in z]
    return [x / sum(e) for x in e]


@pytest.mark.parametrize("answer, rank", [("a", 1), ("b", 2), ("c", 3), ("d", 4)])
def test_loss_is_minus_log_p_of_the_answer(answer, rank):
    s = logs_state(Z, WORDS, answer)
    p = p_by_hand(Z)[WORDS.index(answer)]
    assert s.p == pytest.approx(p, rel=1e-14)
    assert s.loss == pytest.approx(-math.log(p), rel=1e-13)
    assert s.rank == rank
    assert list(s.order) == [0, 1, 2, 3]


@given(st.lists(st.floats(-20, 20), min_size=2, max_size=30), st.data())
def test_loss_is_log_sum_exp_minus_the_answer_logit(z, data):
    z = np.array(z)
    a = data.draw(st.integers(0, len(z) - 1))
    words = tuple(f"w{i}" for i in range(len(z)))
    s = logs_state(z, words, words[a])
    lse = max(z) + math.log(sum(math.exp(v - max(z)) for v in z))
    assert s.loss == pytest.approx(lse - z[a], rel=1e-9, abs=1e-9)
    assert s.loss >= 0 and s.probs.sum() == pytest.approx(1.0)


def test_loss_stays_finite_when_p_underflows():
    s = logs_state(np.array([0.0, -1000.0]), ("a", "b"), "b")  # p_b = e^-1000 is 0.0 in float64
    assert s.p == 0.0
    assert s.loss == pytest.approx(1000.0, rel=1e-12)


def test_curve_is_minus_log_p():
    s = logs_state(Z, WORDS, "a")
    np.testing.assert_allclose(s.curve_loss, [-math.log(p) for p in s.curve_p], rtol=1e-12)
    assert s.curve_p[-1] == 1.0 and s.curve_loss[-1] == 0.0


def test_unknown_answer_is_refused():
    with pytest.raises(ValueError, match="unknown word"):
        logs_state(Z, WORDS, "zz")


def test_the_state_is_fast_and_the_view_draws():
    rng = np.random.default_rng(0)
    z = rng.normal(size=116) * 3
    words = tuple(f"w{i}" for i in range(116))
    start = time.perf_counter()
    for _ in range(20):
        logs_state(z, words, "w9")
    assert (time.perf_counter() - start) / 20 < 0.05
    fig = plt.figure()
    logs_view(z, words)(fig, {"answer": "w9"})
    assert len(fig.axes) == 2
    plt.close(fig)


def test_the_live_widget_moves_the_points_and_titles_in_place():
    rng = np.random.default_rng(1)
    z = rng.normal(size=116) * 3
    words = tuple(f"w{i}" for i in range(116))
    by_p = [words[i] for i in np.argsort(-z, kind="stable")]
    draw = logs_view(z, words)
    # the dropdown's ends and between: the most likely word, the least likely, and some in the middle
    assert_moves_in_place(draw, [{"answer": by_p[k]} for k in (0, 115, 1, 20, 70)])


def test_every_right_word_keeps_the_axes_still():
    rng = np.random.default_rng(2)
    z = rng.normal(size=116) * 3
    words = tuple(f"w{i}" for i in range(116))
    draw = logs_view(z, words)
    seen = set()
    for word in words:  # every choice the dropdown offers
        fig = Figure(figsize=(7, 3), dpi=72)
        FigureCanvasAgg(fig)
        draw(fig, {"answer": word})
        seen.add(tuple((ax.get_xlim(), ax.get_ylim(), ax.get_xscale(), ax.get_yscale()) for ax in fig.axes))
    assert len(seen) == 1
    fig = Figure(figsize=(7, 3), dpi=72)
    FigureCanvasAgg(fig)
    draw(fig, {"answer": words[int(np.argmin(z))]})  # the point at the far end of both panels
    check_layout(fig)
