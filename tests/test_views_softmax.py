"""Tests for byhand.views.softmax, checked against probabilities written out by hand, not against byhand.softmax."""
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
from byhand.views.softmax import softmax_state, softmax_t, softmax_view
from live_helpers import assert_moves_in_place

WORDS = ("a", "b", "c", "d")
Z = np.array([2.0, 1.0, 0.0, -1.0])


def by_hand(z, tau=1.0):
    e = [math.exp(v / tau) for v in z]  # small logits: the plain formula is safe here
    return np.array([x / sum(e) for x in e])


def test_default_matches_the_plain_formula_and_sums_to_one():
    s = softmax_state(Z, WORDS, "b")
    np.testing.assert_allclose(s.probs, by_hand(Z), rtol=1e-14)
    assert s.probs.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(s.base, s.probs)
    assert s.top_word == "a" and s.p_word == pytest.approx(by_hand(Z)[1])


@given(st.floats(-5, 5), st.floats(0.2, 5.0), st.integers(0, 3))
def test_ratio_of_two_probabilities_is_exp_of_the_logit_gap_over_tau(nudge, tau, w):
    s = softmax_state(Z, WORDS, WORDS[w], nudge, tau)
    z = Z.copy()
    z[w] += nudge
    for i in range(4):
        for j in range(4):
            assert s.probs[i] / s.probs[j] == pytest.approx(math.exp((z[i] - z[j]) / tau), rel=1e-9)


def test_one_point_higher_is_e_times_as_likely():
    s = softmax_state(Z, WORDS, "b", nudge=1.0)  # b now ties a
    assert s.probs[0] == pytest.approx(s.probs[1], rel=1e-14)
    assert s.probs[1] / s.probs[2] == pytest.approx(math.e ** 2, rel=1e-12)


def test_temperature_flattens_and_sharpens():
    hot = softmax_state(Z, WORDS, "a", temperature=1000.0).probs
    np.testing.assert_allclose(hot, 0.25, atol=1e-3)
    cold = softmax_state(Z, WORDS, "a", temperature=0.01).probs
    assert cold[0] == pytest.approx(1.0, abs=1e-12)


def test_large_logits_do_not_overflow():
    p = softmax_t(Z + 1e4)  # exp(1e4) is inf; the stable form never computes it
    np.testing.assert_allclose(p, by_hand(Z), rtol=1e-12)
    p32 = softmax_t((Z + 200.0).astype(np.float32))  # exp(200) overflows float32
    assert np.all(np.isfinite(p32)) and p32.dtype == np.float32
    np.testing.assert_allclose(p32, by_hand(Z), rtol=1e-5)


def test_shown_bars_add_the_nudged_word_when_it_is_not_in_the_top():
    z = np.arange(12.0)[::-1]  # word 0 most likely
    words = tuple(f"w{i}" for i in range(12))
    s = softmax_state(z, words, "w11", 0.0, 1.0, top=8)
    assert list(s.shown) == list(range(8)) + [11]
    assert s.rest == pytest.approx(1.0 - s.probs[s.shown].sum())
    assert s.rest == pytest.approx(s.probs[8:11].sum())


@pytest.mark.parametrize("kwargs, message", [({"word": "zz"}, "unknown word"), ({"temperature": 0.0}, "> 0"),
                                             ({"top": 0}, "top must")])
def test_bad_controls_are_refused(kwargs, message):
    args = {"word": "a", "nudge": 0.0, "temperature": 1.0, "top": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        softmax_state(Z, WORDS, **args)


def test_the_state_is_fast_and_the_view_draws():
    rng = np.random.default_rng(0)
    z = rng.normal(size=116) * 3
    words = tuple(f"w{i}" for i in range(116))
    start = time.perf_counter()
    for _ in range(20):
        softmax_state(z, words, "w7", 1.5, 0.7)
    assert (time.perf_counter() - start) / 20 < 0.05
    fig = plt.figure()
    softmax_view(z, words)(fig, {"word": "w7", "nudge": 1.0, "temperature": 2.0})
    assert len(fig.axes) == 1
    plt.close(fig)


def test_the_live_widget_moves_bars_labels_and_title_in_place():
    rng = np.random.default_rng(1)
    z = rng.normal(size=116) * 3
    words = tuple(f"w{i}" for i in range(116))
    by_p = [words[i] for i in np.argsort(-z, kind="stable")]
    draw = softmax_view(z, words)
    # every control at its ends: a word among the top 8 (first, last), from outside them (the 9th place fills and
    # empties), nudge −5..5, temperature 0.25..4
    assert_moves_in_place(draw, [{"word": by_p[1], "nudge": 0.0, "temperature": 1.0},
                                 {"word": by_p[1], "nudge": 5.0, "temperature": 0.25},
                                 {"word": by_p[115], "nudge": 5.0, "temperature": 0.25},
                                 {"word": by_p[0], "nudge": -5.0, "temperature": 4.0},
                                 {"word": by_p[40], "nudge": -5.0, "temperature": 4.0},
                                 {"word": by_p[7], "nudge": 2.5, "temperature": 1.75}])


def test_the_axes_and_the_word_list_are_the_same_for_every_word():
    rng = np.random.default_rng(2)
    z = rng.normal(size=40) * 3
    words = tuple(f"w{i}" for i in range(40))
    draw = softmax_view(z, words)
    seen = set()
    for word in words:
        for nudge, tau in ((5.0, 0.25), (-5.0, 4.0)):
            fig = Figure(figsize=(7, 3), dpi=72)
            FigureCanvasAgg(fig)
            draw(fig, {"word": word, "nudge": nudge, "temperature": tau})
            (ax,) = fig.axes
            seen.add((ax.get_xlim(), ax.get_ylim(), tuple(t.get_text() for t in ax.get_xticklabels())))
            if word in (words[0], words[-1]):
                check_layout(fig, context=f"{word}, Δ = {nudge}, τ = {tau}: ")
    assert len(seen) == 1
