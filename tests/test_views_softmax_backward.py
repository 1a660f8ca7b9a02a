"""Tests for byhand.views.softmax_backward: one query row's softmax backward, the true dS against the whole
Jacobian and against central differences, the diagonal-only slip against the Jacobian's diagonal, and a shift of dA
that moves the slip but not the true dS."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.softmax_backward import softmax_back_state, softmax_back_view
from byhand.widgets import sweep

T = 5
MASK = np.tril(np.ones((T, T), dtype=bool))  # (T, T) causal: query t sees keys 0..t


def masked_softmax(s_row, t):
    """The oracle softmax of one row, written out: masked keys get weight 0."""
    e = np.where(MASK[t], np.exp(s_row - s_row[MASK[t]].max()), 0.0)
    return e / e.sum()


def setup(seed=0):
    rng = np.random.default_rng(seed)
    S = rng.normal(size=(T, T))  # (T, T) scores
    A = np.stack([masked_softmax(S[t], t) for t in range(T)])  # (T, T)
    dA = rng.normal(size=(T, T)) * 0.3  # (T, T)
    return S, A, dA


@pytest.mark.parametrize("t", range(T))
def test_true_ds_is_the_jacobian_product_and_the_central_difference(t):
    S, A, dA = setup()
    s = softmax_back_state(A, dA, t)
    a = A[t]
    J = np.diag(a) - np.outer(a, a)  # (T, T)
    np.testing.assert_allclose(s.dS, dA[t] @ J, atol=1e-15)
    h = 1e-6  # the loss dA_t · A_t(S_t): its slope along each score, by central differences
    numeric = np.array([(dA[t] @ masked_softmax(S[t] + h * e, t) - dA[t] @ masked_softmax(S[t] - h * e, t)) / (2 * h)
                        for e in np.eye(T)])
    np.testing.assert_allclose(s.dS, numeric, atol=1e-9)
    assert s.dS.sum() == pytest.approx(0.0, abs=1e-15)
    assert np.all(s.dS[~MASK[t]] == 0.0) and np.all(s.dS_diag[~MASK[t]] == 0.0)


def test_the_slip_uses_only_the_diagonal_and_misses():
    _, A, dA = setup(1)
    s = softmax_back_state(A, dA, 3)
    a = A[3]
    J = np.diag(a) - np.outer(a, a)
    np.testing.assert_allclose(s.dS_diag, np.diag(J) * dA[3], atol=1e-16)
    assert s.average == pytest.approx(a @ dA[3], abs=1e-15)
    assert s.miss == pytest.approx(np.abs(s.dS_diag - dA[3] @ J).max(), abs=1e-15) and s.miss > 1e-3


@given(st.integers(0, T - 1), st.floats(-1.0, 1.0))
def test_a_shift_moves_the_slip_and_not_the_true_ds(t, c):
    _, A, dA = setup(2)
    s0, s = softmax_back_state(A, dA, t), softmax_back_state(A, dA, t, c)
    np.testing.assert_allclose(s.dS, s0.dS, atol=1e-14)
    np.testing.assert_allclose(s.dS_diag - s0.dS_diag, c * A[t] * (1 - A[t]), atol=1e-14)


def test_the_first_query_has_nothing_to_learn():
    _, A, dA = setup(3)
    s = softmax_back_state(A, dA, 0, 0.4)
    assert np.all(s.dS == 0.0) and np.all(s.dS_diag == 0.0) and s.miss == 0.0


@pytest.mark.parametrize("kwargs, match", [({"query": 5}, "query must be"), ({"query": 1.0}, "query must be"),
                                           ({"query": 1, "shift": np.nan}, "shift must be")])
def test_bad_input_is_named(kwargs, match):
    _, A, dA = setup()
    with pytest.raises(ValueError, match=match):
        softmax_back_state(A, dA, **kwargs)


def test_the_view_draws_two_panels_and_describes_them():
    _, A, dA = setup()
    draw = softmax_back_view(A, dA)
    fig = plt.figure(figsize=(7, 3))
    draw(fig, {"query": 3, "shift": 0.0})
    assert len(fig.axes) == 2
    text = draw.describe({"query": 3, "shift": 0.0})
    assert "query 3" in text and "key 4 is masked" in text
    columns, rows = draw.table({"query": 3, "shift": 0.0})
    assert len(columns) == 5 and len(rows) == T
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    _, A, dA = setup()
    draw = softmax_back_view(A, dA)  # the chapter's ranges: query 0..4, shift -0.2..0.2
    moves = [{"query": 3, "shift": 0.0}, {"query": 0, "shift": -0.2}, {"query": 4, "shift": 0.2},
             {"query": 1, "shift": 0.2}, {"query": 2, "shift": -0.2}, {"query": 3, "shift": 0.1}]
    return draw, moves, (sweep({"query": 3, "shift": 0.0}, "query", [3, 0, 1, 2, 4])
                         + sweep({"query": 3, "shift": 0.0}, "shift", [0.0, -0.2, -0.1, 0.1, 0.2]))
