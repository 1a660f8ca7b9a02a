"""Tests for byhand.loss: the seed's worked numbers, closed forms, p - q, reductions, ignore_index, errors."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.gradcheck import gradcheck
from byhand.loss import cross_entropy_backward, cross_entropy_forward

seeds = st.integers(0, 2**32 - 1)
lead = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
smoothing = st.sampled_from([0.0, 0.1, 0.37, 0.9])


def _random_problem(rng, lead_shape, V, ignore_some=True):
    logits = rng.standard_normal(lead_shape + (V,)) * 2
    targets = rng.integers(0, V, size=lead_shape)
    if ignore_some:
        targets = np.where(rng.random(lead_shape) < 0.3, -1, targets)
        targets.reshape(-1)[0] = rng.integers(0, V)  # at least one counted position
    return logits, np.asarray(targets)


# ---------------------------------------------------------------- the worked example (seed 000)


def test_worked_example_label_smoothing():
    z = np.array([1.0, 0.0, -1.0, 0.0])
    eps, t = 0.1, 2
    loss, cache = cross_entropy_forward(z, np.array(t), label_smoothing=eps)
    # an independent one-liner: q . (logsumexp(z) - z)
    oracle = np.sum(((1 - eps) * np.eye(4)[t] + eps / 4) * (np.log(np.exp(z).sum()) - z))
    assert loss == pytest.approx(oracle, rel=1e-14)
    # the seed's rounded numbers
    np.testing.assert_allclose(cache["p"], [0.534, 0.197, 0.072, 0.197], atol=5e-4)
    assert loss == pytest.approx(2.5265, abs=5e-5)
    np.testing.assert_allclose(cache["q"], [0.025, 0.025, 0.925, 0.025], rtol=1e-15)
    assert cache["n"] == 1
    dz = cross_entropy_backward(1.0, cache)
    np.testing.assert_allclose(dz, np.exp(z) / np.exp(z).sum() - [0.025, 0.025, 0.925, 0.025], rtol=1e-14)


def test_without_smoothing_loss_is_minus_log_p_target():
    z = np.array([[2.0, -1.0, 0.5], [0.0, 0.0, 3.0]])
    t = np.array([0, 1])
    loss, _ = cross_entropy_forward(z, t)
    per_row = [np.log(np.exp(z[i]).sum()) - z[i, t[i]] for i in range(2)]
    assert loss == pytest.approx(np.mean(per_row), rel=1e-14)


@given(V=st.integers(1, 50), eps=st.floats(0.0, 0.999), c=st.floats(-100, 100), t=st.integers(0, 49))
def test_equal_logits_give_log_V_for_any_smoothing(V, eps, c, t):
    # p is uniform, so -sum q log(1/V) = log V whatever q is
    loss, cache = cross_entropy_forward(np.full(V, c), np.array(t % V), label_smoothing=eps)
    assert loss == pytest.approx(np.log(V), rel=1e-12, abs=1e-12)


@given(V=st.integers(2, 20), eps=st.floats(0.0, 0.999), t=st.integers(0, 19))
def test_smoothed_targets_closed_form(V, eps, t):
    _, cache = cross_entropy_forward(np.zeros(V), np.array(t % V), label_smoothing=eps)
    q = cache["q"]
    assert q[t % V] == pytest.approx(1 - eps + eps / V, rel=1e-14)
    assert np.allclose(np.delete(q, t % V), eps / V, rtol=1e-14)
    assert q.sum() == pytest.approx(1.0, rel=1e-14)


# ---------------------------------------------------------------- p - q, reductions, ignore_index


@given(seed=seeds, lead_shape=lead, V=st.integers(1, 6), eps=smoothing)
def test_p_minus_q_sums_to_zero_per_row(seed, lead_shape, V, eps):
    rng = np.random.default_rng(seed)
    logits, targets = _random_problem(rng, lead_shape, V, ignore_some=False)
    _, cache = cross_entropy_forward(logits, targets, label_smoothing=eps, reduction="sum")
    dlogits = cross_entropy_backward(1.0, cache)
    np.testing.assert_allclose(dlogits.sum(axis=-1), 0.0, atol=1e-14)
    np.testing.assert_allclose(dlogits, cache["p"] - cache["q"], rtol=1e-15)


@given(seed=seeds, lead_shape=lead, V=st.integers(1, 6), eps=smoothing)
def test_mean_and_sum_differ_by_the_count(seed, lead_shape, V, eps):
    rng = np.random.default_rng(seed)
    logits, targets = _random_problem(rng, lead_shape, V)
    n = int(np.sum(targets != -1))
    mean, cache_mean = cross_entropy_forward(logits, targets, label_smoothing=eps, reduction="mean")
    total, cache_sum = cross_entropy_forward(logits, targets, label_smoothing=eps, reduction="sum")
    assert cache_mean["n"] == n and cache_sum["n"] == n
    assert total == pytest.approx(n * mean, rel=1e-13)
    np.testing.assert_allclose(
        cross_entropy_backward(1.0, cache_sum), n * cross_entropy_backward(1.0, cache_mean), rtol=1e-13, atol=1e-16
    )


def test_ignored_positions_get_exactly_zero_gradient_and_do_not_change_the_loss():
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((2, 3, 5))
    targets = np.array([[1, -1, 4], [-1, 0, -1]])
    loss, cache = cross_entropy_forward(logits, targets, label_smoothing=0.1)
    dlogits = cross_entropy_backward(1.0, cache)
    ignored = targets == -1
    assert np.all(dlogits[ignored] == 0.0)
    assert not np.any(np.signbit(dlogits[ignored]))
    assert np.all(dlogits[~ignored] != 0.0)
    assert np.all(cache["losses"][ignored] == 0.0)
    assert cache["n"] == 3
    changed = logits.copy()
    changed[ignored] = 100 * rng.standard_normal((3, 5))
    assert cross_entropy_forward(changed, targets, label_smoothing=0.1)[0] == loss
    # the mean is over the three counted positions only
    counted_only = cross_entropy_forward(logits[~ignored], targets[~ignored], label_smoothing=0.1)[0]
    assert loss == pytest.approx(counted_only, rel=1e-14)


def test_custom_ignore_index():
    logits = np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])
    loss, cache = cross_entropy_forward(logits, np.array([0, 2]), ignore_index=0)
    assert cache["n"] == 1
    assert loss == pytest.approx(np.log(np.exp([2.0, 1.0, 0.0]).sum()) - 0.0, rel=1e-14)
    assert np.all(cross_entropy_backward(1.0, cache)[0] == 0.0)


# ---------------------------------------------------------------- gradients


@given(seed=seeds, lead_shape=lead, V=st.integers(1, 5), eps=smoothing,
       reduction=st.sampled_from(["mean", "sum"]), dloss=st.floats(-3, 3))
def test_backward_matches_finite_differences(seed, lead_shape, V, eps, reduction, dloss):
    rng = np.random.default_rng(seed)
    logits, targets = _random_problem(rng, lead_shape, V)
    _, cache = cross_entropy_forward(logits, targets, label_smoothing=eps, reduction=reduction)
    dlogits = cross_entropy_backward(dloss, cache)
    f = lambda p: dloss * cross_entropy_forward(p["z"], targets, label_smoothing=eps, reduction=reduction)[0]  # noqa: E731
    report = gradcheck(f, {"z": logits}, {"z": dlogits})
    assert report.passed, "\n" + report.to_markdown()


# ---------------------------------------------------------------- extremes and dtypes


def test_extreme_logits_are_finite():
    z = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    loss, cache = cross_entropy_forward(z, np.array([1, 2]), reduction="sum")
    assert np.isfinite(loss)
    assert loss == pytest.approx(2e4 + np.log(3), rel=1e-14)  # -log p = 2e4 for row 0; log 3 for row 1
    dz = cross_entropy_backward(1.0, cache)
    assert np.all(np.isfinite(dz))
    np.testing.assert_allclose(dz[0], [1.0, -1.0, 0.0], atol=1e-15)
    loss, _ = cross_entropy_forward(z, np.array([1, 2]), label_smoothing=0.2)
    assert np.isfinite(loss)


def test_float32_stays_float32():
    z = np.array([[0.5, -0.2, 0.1]], dtype=np.float32)
    loss, cache = cross_entropy_forward(z, np.array([2]), label_smoothing=0.1)
    assert loss.dtype == np.float32
    assert cache["p"].dtype == np.float32 and cache["q"].dtype == np.float32
    assert cross_entropy_backward(1.0, cache).dtype == np.float32


# ---------------------------------------------------------------- errors


def test_errors():
    z = np.zeros((2, 4))
    with pytest.raises(ValueError, match=r"target 4 is out of range \[0, 4\)"):
        cross_entropy_forward(z, np.array([0, 4]))
    with pytest.raises(ValueError, match=r"target -2 is out of range \[0, 4\)"):
        cross_entropy_forward(z, np.array([-2, 1]))
    with pytest.raises(ValueError, match="no counted positions"):
        cross_entropy_forward(z, np.array([-1, -1]))
    with pytest.raises(ValueError, match="no counted positions"):
        cross_entropy_forward(z, np.array([-1, -1]), reduction="sum")
    for eps in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"label_smoothing must be in \[0, 1\)"):
            cross_entropy_forward(z, np.array([0, 1]), label_smoothing=eps)
    with pytest.raises(ValueError, match="unknown reduction 'avg'"):
        cross_entropy_forward(z, np.array([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match=r"targets must have shape \(2,\)"):
        cross_entropy_forward(z, np.array([[0, 1]]))
    with pytest.raises(ValueError, match="targets must be integer class ids"):
        cross_entropy_forward(z, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="logits contains NaN or inf"):
        cross_entropy_forward(np.array([[0.0, np.nan]]), np.array([0]))
    _, cache = cross_entropy_forward(z, np.array([0, 1]))
    with pytest.raises(ValueError, match="needs \\(dloss, cache\\)"):
        cross_entropy_backward(cache)
    with pytest.raises(ValueError, match="dloss must be a scalar"):
        cross_entropy_backward(np.ones(2), cache)
