"""Tests for byhand.gradcheck: it must accept correct gradients and reject wrong ones, loudly and by name."""
import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.gradcheck import GradcheckReport, GradcheckRow, compare_grads, gradcheck, numerical_grads
from byhand.linear import linear_backward, linear_forward

seeds = st.integers(0, 2**32 - 1)
dims = st.integers(1, 4)
lead = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def _linear_setup(rng, lead_shape, d_in, d_out):
    """Random x, W, b and a random linear functional of y: f = sum(dy * y)."""
    params = {
        "x": rng.standard_normal(lead_shape + (d_in,)),
        "W": rng.standard_normal((d_in, d_out)),
        "b": rng.standard_normal(d_out),
    }
    dy = rng.standard_normal(lead_shape + (d_out,))

    def f(p):
        return np.sum(dy * linear_forward(p["x"], p["W"], p["b"])[0])

    return params, dy, f


# ---------------------------------------------------------------- numerical_grads against closed forms


@given(seed=seeds, shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
def test_numerical_grads_match_closed_form_of_polynomial(seed, shape):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    x = rng.standard_normal(shape)
    c = rng.standard_normal()

    def f(p):  # f = sum(a x^3) + c sum(x) ; df/dx = 3 a x^2 + c
        return np.sum(a * p["x"] ** 3) + c * np.sum(p["x"])

    g = numerical_grads(f, {"x": x})["x"]
    assert g.shape == shape
    np.testing.assert_allclose(g, 3 * a * x**2 + c, rtol=1e-7, atol=1e-8)


def test_numerical_grads_of_matrix_product_is_outer_product():
    rng = np.random.default_rng(0)
    u, v = rng.standard_normal(3), rng.standard_normal(4)
    A = rng.standard_normal((3, 4))
    # f = u^T A v, so df/dA = u v^T, df/du = A v, df/dv = A^T u
    g = numerical_grads(lambda p: p["u"] @ p["A"] @ p["v"], {"u": u, "A": A, "v": v})
    np.testing.assert_allclose(g["A"], np.outer(u, v), rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(g["u"], A @ v, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(g["v"], A.T @ u, rtol=1e-8, atol=1e-9)


def test_numerical_grads_leaves_params_unchanged():
    rng = np.random.default_rng(1)
    x64 = rng.standard_normal((2, 3))
    x32 = rng.standard_normal(4).astype(np.float32)
    ids = np.array([2, 0, 1])
    params = {"x64": x64, "x32": x32, "ids": ids}
    before = {k: v.copy() for k, v in params.items()}
    objects = {k: id(v) for k, v in params.items()}
    seen_dtypes = set()

    def f(p):
        seen_dtypes.add(p["x32"].dtype)
        return np.sum(np.sin(p["x64"])) + np.sum(p["x32"] ** 2) + p["x64"][0, p["ids"][0]]

    numerical_grads(f, params)
    assert set(params) == set(before)
    for k in params:
        assert id(params[k]) == objects[k], k  # same objects ...
        assert params[k].dtype == before[k].dtype, k  # ... same dtypes ...
        np.testing.assert_array_equal(params[k], before[k])  # ... bit-for-bit the same values
    assert seen_dtypes == {np.dtype(np.float64)}  # f saw float64 copies, even of the float32 array


def test_numerical_grads_skips_integer_entries_by_default_and_honours_names():
    params = {"x": np.array([1.0, 2.0]), "y": np.array([3.0]), "ids": np.array([0, 1])}
    f = lambda p: np.sum(p["x"] ** 2) + 5 * p["y"][0] + p["x"][p["ids"]].sum()  # noqa: E731
    assert set(numerical_grads(f, params)) == {"x", "y"}
    only_y = numerical_grads(f, params, names=["y"])
    assert set(only_y) == {"y"}
    np.testing.assert_allclose(only_y["y"], [5.0], rtol=1e-8)


def test_numerical_grads_errors():
    params = {"x": np.zeros(3)}
    with pytest.raises(ValueError, match="must return a scalar"):
        numerical_grads(lambda p: p["x"] * 2, params)
    with pytest.raises(ValueError, match="'w' is not in params"):
        numerical_grads(lambda p: p["x"].sum(), params, names=["w"])
    with pytest.raises(ValueError, match="h must be positive"):
        numerical_grads(lambda p: p["x"].sum(), params, h=0.0)
    with pytest.raises(ValueError, match="f returned inf while perturbing 'x'"):
        numerical_grads(lambda p: p["x"].sum() + np.inf, params)


# ---------------------------------------------------------------- gradcheck accepts correct backwards


@given(seed=seeds, lead_shape=lead, d_in=dims, d_out=dims)
def test_gradcheck_passes_correct_linear_backward(seed, lead_shape, d_in, d_out):
    rng = np.random.default_rng(seed)
    params, dy, f = _linear_setup(rng, lead_shape, d_in, d_out)
    dx, dW, db = linear_backward(dy, linear_forward(params["x"], params["W"], params["b"])[1])
    report = gradcheck(f, params, {"x": dx, "W": dW, "b": db})
    assert report.passed, report.to_markdown()
    assert [row.name for row in report.rows] == ["x", "W", "b"]
    assert report.failures() == []
    for row in report.rows:
        assert row.rel_err <= 1e-6
        assert row.shape == params[row.name].shape


def test_gradcheck_absolute_tolerance_covers_zero_gradients():
    # f does not depend on z at all: analytic and numeric gradient are both exactly 0
    params = {"x": np.array([0.5, -1.0]), "z": np.array([2.0, 3.0])}
    f = lambda p: np.sum(p["x"] ** 2)  # noqa: E731
    report = gradcheck(f, params, {"x": 2 * params["x"], "z": np.zeros(2)})
    assert report.passed
    assert report.rows[1].max_abs_err == 0.0 and report.rows[1].rel_err == 0.0
    # an analytic gradient off by 1e-12 from an exact 0 fails the relative test but passes atol
    report = gradcheck(f, params, {"x": 2 * params["x"], "z": np.array([1e-12, 0.0])})
    assert report.rows[1].rel_err == pytest.approx(1.0)
    assert report.rows[1].passed
    # ... and fails once atol is tightened below the error
    report = gradcheck(f, params, {"x": 2 * params["x"], "z": np.array([1e-12, 0.0])}, atol=1e-13)
    assert not report.rows[1].passed


def test_compare_grads_on_numeric_gradients_is_gradcheck():
    # gradcheck is numerical_grads followed by compare_grads: the same report, row for row
    rng = np.random.default_rng(3)
    params, dy, f = _linear_setup(rng, (2,), 3, 4)
    dx, dW, db = linear_backward(dy, linear_forward(params["x"], params["W"], params["b"])[1])
    grads = {"x": dx, "W": 2 * dW, "b": db}  # one wrong tensor, so that a failing row is compared too
    numeric = numerical_grads(f, params)
    assert compare_grads(grads, numeric) == gradcheck(f, params, grads)
    assert [r.name for r in compare_grads(grads, numeric, names=["b"]).rows] == ["b"]
    with pytest.raises(ValueError, match="no gradient for parameter 'z' in grads"):
        compare_grads(grads, {**numeric, "z": np.zeros(2)})
    with pytest.raises(ValueError, match="has shape"):
        compare_grads({**grads, "b": np.zeros(7)}, numeric)


# ---------------------------------------------------------------- gradcheck rejects wrong backwards


def _wrong_linear_backward_uses_W_not_WT(dy, cache):
    """The classic slip from the public derivation: dx = dy W instead of dy W^T."""
    dx, dW, db = linear_backward(dy, cache)
    return dy @ cache["W"], dW, db


@given(seed=seeds, lead_shape=lead, d=st.integers(2, 4))
def test_gradcheck_rejects_W_instead_of_W_transpose(seed, lead_shape, d):
    rng = np.random.default_rng(seed)
    params, dy, f = _linear_setup(rng, lead_shape, d, d)  # square W, so the wrong shape cannot give it away
    dx_wrong, dW, db = _wrong_linear_backward_uses_W_not_WT(dy, linear_forward(params["x"], params["W"], params["b"])[1])
    report = gradcheck(f, params, {"x": dx_wrong, "W": dW, "b": db})
    assert not report.passed
    assert [row.name for row in report.failures()] == ["x"]  # exactly the parameter that is wrong
    bad = report.failures()[0]
    assert bad.rel_err > 1e-3 and bad.max_abs_err > 1e-6
    # the independent oracle: the true error is |dy (W - W^T)|
    true_err = np.abs(dy @ params["W"] - dy @ params["W"].T).max()
    assert bad.max_abs_err == pytest.approx(true_err, rel=1e-6, abs=1e-9)


def test_gradcheck_rejects_a_sign_flip_and_the_table_shows_both_errors():
    rng = np.random.default_rng(3)
    params, dy, f = _linear_setup(rng, (2, 3), 4, 5)
    dx, dW, db = linear_backward(dy, linear_forward(params["x"], params["W"], params["b"])[1])
    report = gradcheck(f, params, {"x": dx, "W": dW, "b": -db})
    assert not report.passed
    (bad,) = report.failures()
    assert bad.name == "b" and bad.shape == (5,)
    assert bad.rel_err == pytest.approx(2.0, rel=1e-6)  # |-g - g| / |g| = 2
    assert bad.max_abs_err == pytest.approx(2 * np.abs(db).max(), rel=1e-6)
    table = report.to_markdown()
    b_line = [line for line in table.splitlines() if line.startswith("| b ")][0]
    assert f"{bad.max_abs_err:.2e}" in b_line and f"{bad.rel_err:.2e}" in b_line
    assert b_line.endswith("| NO |")
    x_line = [line for line in table.splitlines() if line.startswith("| x ")][0]
    assert x_line.endswith("| yes |")


def test_gradcheck_rejects_a_gradient_off_by_a_factor_two():
    params = {"x": np.array([[1.0, -2.0], [0.5, 3.0]])}
    f = lambda p: np.sum(p["x"] ** 2)  # noqa: E731
    report = gradcheck(f, params, {"x": 4 * params["x"]})  # correct is 2x
    assert not report.passed
    assert report.rows[0].rel_err == pytest.approx(0.5, rel=1e-6)  # |4x - 2x| / |4x|


def test_gradcheck_nan_gradient_fails():
    params = {"x": np.array([1.0, 2.0])}
    report = gradcheck(lambda p: np.sum(p["x"]), params, {"x": np.array([1.0, np.nan])})
    assert not report.passed


# ---------------------------------------------------------------- errors


def test_gradcheck_missing_gradient_names_the_parameter():
    params = {"x": np.ones(2), "W_q": np.ones((2, 2))}
    f = lambda p: np.sum(p["x"] @ p["W_q"])  # noqa: E731
    with pytest.raises(ValueError, match="no gradient for parameter 'W_q'"):
        gradcheck(f, params, {"x": np.ones(2)})
    with pytest.raises(ValueError, match="no gradient for parameter 'W_q'"):
        gradcheck(f, params, {"x": np.ones(2), "W_q": None})
    with pytest.raises(ValueError, match=r"grads\['W_q'\] has shape \(2,\), but the parameter has shape \(2, 2\)"):
        gradcheck(f, params, {"x": np.ones(2), "W_q": np.ones(2)})


# ---------------------------------------------------------------- report formatting


def test_report_markdown_table_format():
    rows = (
        GradcheckRow("W_q", (2, 3), 1.234e-10, 5.6e-9, True),
        GradcheckRow("b", (3,), 0.5, 2.0, False),
    )
    report = GradcheckReport(rows=rows)
    assert report.to_markdown() == (
        "| parameter | shape | max abs error | relative error | passed |\n"
        "|---|---|---:|---:|:---:|\n"
        "| W_q | (2, 3) | 1.23e-10 | 5.60e-09 | yes |\n"
        "| b | (3,) | 5.00e-01 | 2.00e+00 | NO |"
    )
    assert "| W_q | (2, 3) | 1.2340e-10 | 5.6000e-09 | yes |" in report.to_markdown(digits=4)
    assert report._repr_markdown_() == report.to_markdown()
    assert not report.passed
    assert report.failures() == [rows[1]]


def test_report_is_frozen():
    report = GradcheckReport(rows=(GradcheckRow("x", (1,), 0.0, 0.0, True),))
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.rows = ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.rows[0].passed = False
    assert report.passed
