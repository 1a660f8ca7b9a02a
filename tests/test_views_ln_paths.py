"""Tests for byhand.views.ln_paths: the three paths of a layer norm's backward, one row."""
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from byhand.layernorm import layernorm_backward, layernorm_forward
from byhand.views.ln_paths import ln_paths_state, ln_paths_view

RNG = np.random.default_rng(5)
X, DY, G = RNG.normal(size=16) * 2, RNG.normal(size=16) * 0.1, 1 + 0.1 * RNG.normal(size=16)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 15), st.floats(-3, 3), st.floats(-0.5, 0.5))
def test_the_three_paths_add_up_to_the_library_backward(j, move, shift):
    s = ln_paths_state(X, DY, G, 1e-5, j, move, shift)
    x = X.copy()
    x[j] += move
    _, cache = layernorm_forward(x, G, np.zeros(16), 1e-5)
    dx, _, _ = layernorm_backward(DY + shift, cache)
    np.testing.assert_allclose(s.dx, dx, rtol=0, atol=1e-13)


def test_the_paths_match_central_differences_path_by_path():
    # each path alone, as a finite difference of x̂ with only that path fed the nudged row, times dy * gamma
    eps, h = 1e-5, 1e-6
    s = ln_paths_state(X, DY, G, eps, 3, 0.7, 0.0)
    x = s.x

    def xhat(x_direct, x_mean, x_var):
        return (x_direct - x_mean.mean()) / np.sqrt(x_var.var() + eps)

    def grad(f):  # d(sum dy * gamma * f(x + n e_j)) / dn for every j
        return np.array([((DY * G) * (f(x + h * e) - f(x - h * e))).sum() / (2 * h) for e in np.eye(16)])

    np.testing.assert_allclose(s.direct, grad(lambda v: xhat(v, x, x)), rtol=0, atol=1e-8)
    np.testing.assert_allclose(s.via_mu, grad(lambda v: xhat(x, v, x)), rtol=0, atol=1e-8)
    np.testing.assert_allclose(s.via_var, grad(lambda v: xhat(x, x, v)), rtol=0, atol=1e-8)


def test_shifting_dy_moves_the_direct_and_mean_paths_but_not_dx():
    a, b = ln_paths_state(X, DY, G * 0 + 1, 1e-5, 0, 0.0, 0.0), ln_paths_state(X, DY, G * 0 + 1, 1e-5, 0, 0.0, 0.3)
    np.testing.assert_allclose(b.direct - a.direct, 0.3 * a.rho, rtol=1e-12)
    np.testing.assert_allclose(b.via_mu - a.via_mu, -0.3 * a.rho, rtol=1e-12)
    np.testing.assert_allclose(b.dx, a.dx, rtol=0, atol=1e-14)  # with gamma 1, a shift of dy changes nothing


def test_the_variance_path_of_the_moved_entry_vanishes_at_the_mean():
    j = int(np.argmin(X))
    others = np.delete(X, j).mean()  # x_j at the other entries' mean makes x̂_j = 0
    s = ln_paths_state(X, DY, G, 1e-5, j, others - X[j], 0.0)
    assert abs(s.xhat[j]) < 1e-12 and abs(s.via_var[j]) < 1e-12


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="entry of the row"):
        ln_paths_state(X, DY, G, 1e-5, 16)
    with pytest.raises(ValueError, match="one shape"):
        ln_paths_state(X, DY[:8], G, 1e-5, 0)


def test_the_view_draws_one_panel_that_holds_every_setting():
    draw = ln_paths_view(X, DY, G, 1e-5, j=2, move_range=(-2.0, 8.0), shift_max=0.1)
    fig = plt.figure()
    draw(fig, {"move": 0.0, "shift": 0.0})
    assert len(fig.axes) == 1
    lo, hi = fig.axes[0].get_ylim()
    for m in (-2.0, 8.0):
        for c in (-0.1, 0.1):
            s = ln_paths_state(X, DY, G, 1e-5, 2, m, c)
            for a in (s.direct, s.via_mu, s.via_var, s.dx):
                assert lo <= a.min() and a.max() <= hi
    assert "x̂_2" in draw.describe({"move": 1.0, "shift": 0.05})
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = ln_paths_view(X, DY, G, 1e-5, j=int(np.argmin(X)))  # the chapter's ranges: move -2..8, shift -0.1..0.1
    moves = [{"move": 4.0, "shift": 0.0}, {"move": 8.0, "shift": 0.1}, {"move": -2.0, "shift": -0.1},
             {"move": 0.0, "shift": 0.05}]
    frames = [{"move": 0.0, "shift": 0.0}, {"move": 2.0, "shift": 0.0}, {"move": 4.5, "shift": 0.0},
              {"move": 8.0, "shift": 0.0}, {"move": 0.0, "shift": -0.1}, {"move": 0.0, "shift": 0.1}]
    return draw, moves, frames
