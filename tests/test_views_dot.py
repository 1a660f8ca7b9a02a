"""Tests for byhand.views.dot: turning a key sets its angle and keeps its length; a nudge adds q_j·Δ."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.dot import dot_state, dot_view, plane_basis, turn
from byhand.widgets import sweep


def vectors(seed, n=16):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), rng.normal(size=n)


@given(st.integers(0, 10_000), st.floats(0.0, 180.0))
def test_turn_sets_the_angle_and_keeps_the_length(seed, theta):
    q, k = vectors(seed)
    k_t = turn(q, k, theta)
    assert np.linalg.norm(k_t) == pytest.approx(np.linalg.norm(k), rel=1e-12)
    cos = (q @ k_t) / (np.linalg.norm(q) * np.linalg.norm(k_t))
    assert cos == pytest.approx(np.cos(np.deg2rad(theta)), abs=1e-12)


def test_turn_stays_in_the_plane_of_q_and_k():
    q, k = vectors(1)
    k_t = turn(q, k, 70.0)
    coef, *_ = np.linalg.lstsq(np.stack([q, k], axis=1), k_t, rcond=None)
    np.testing.assert_allclose(np.stack([q, k], axis=1) @ coef, k_t, atol=1e-12)


def test_the_right_angle_makes_the_dot_product_zero():
    q, k = vectors(2)
    assert q @ turn(q, k, 90.0) == pytest.approx(0.0, abs=1e-12)


def test_plane_basis_is_orthonormal_and_rejects_parallel_vectors():
    q, k = vectors(3)
    q_hat, u_hat = plane_basis(q, k)
    assert q_hat @ u_hat == pytest.approx(0.0, abs=1e-14)
    assert np.linalg.norm(q_hat) == pytest.approx(1.0) and np.linalg.norm(u_hat) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="parallel"):
        plane_basis(q, 3 * q)
    with pytest.raises(ValueError, match="zero vector"):
        plane_basis(np.zeros(4), np.ones(4))


@given(st.integers(0, 10_000), st.floats(0.0, 180.0), st.integers(0, 15), st.floats(-3.0, 3.0))
def test_a_nudge_of_k_j_changes_the_sum_by_q_j_delta(seed, theta, j, delta):
    q, k = vectors(seed)
    s = dot_state(q, k, theta, j, delta)
    assert s.terms.total - s.before == pytest.approx(q[j] * delta, abs=1e-9)
    assert s.update == pytest.approx(q[j] * delta)
    assert s.curve[int(round(theta))] == pytest.approx(
        np.linalg.norm(q) * np.linalg.norm(k) * np.cos(np.deg2rad(round(theta))), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("kwargs, message", [({"theta_deg": 200.0}, "between 0 and 180"),
                                             ({"j": -1}, "outside 0..15"), ({"j": 16}, "outside 0..15")])
def test_dot_state_rejects_bad_controls(kwargs, message):
    q, k = vectors(4)
    with pytest.raises(ValueError, match=message):
        dot_state(q, k, **kwargs)


def test_entry_j_counts_from_0_like_python():
    q, k = vectors(6)
    s = dot_state(q, k, 30.0, 0, 1.0)  # entry 0 is q[0], k[0]
    assert s.update == pytest.approx(q[0])
    s = dot_state(q, k, 30.0, 15, 1.0)  # the last entry of 16
    assert s.update == pytest.approx(q[15])


def test_dot_view_draws_two_labelled_panels():
    q, k = vectors(5)
    fig = plt.figure()
    dot_view(q, k)(fig, {"theta": 45.0, "j": 2, "delta": 1.0})
    left, right, total = fig.axes  # the running total has its own axis, on the left panel
    assert left.get_xlabel() == "entry i (from 0)" and "angle" in right.get_xlabel()
    assert "running total" in total.get_ylabel() and left.get_ylim()[0] < 0 < left.get_ylim()[1]
    lo, hi = left.get_ylim()
    tlo, thi = total.get_ylim()
    assert np.isclose(lo / hi, tlo / thi)  # the two zeros at the same height
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert any("> 0" in t for t in labels) and any("< 0" in t for t in labels)  # both bar colours in the legend
    assert r"$q \cdot k$ = " in left.get_title() and r"$q_{2} \Delta$" in left.get_title()
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    q, k = vectors(4, n=64)
    draw = dot_view(q, k)
    moves = [{"theta": 0.0, "j": 0, "delta": 0.0}, {"theta": 35.0, "j": 0, "delta": 0.0},
             {"theta": 180.0, "j": 5, "delta": -3.0}, {"theta": 90.0, "j": 63, "delta": 3.0}]
    return draw, moves, sweep({"theta": 0.0, "j": 0, "delta": 0.0}, "theta", np.arange(0.0, 181.0, 15.0))
