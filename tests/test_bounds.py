"""byhand.bounds: a noise-level value prints as its bound, and a value above the bound fails."""
import numpy as np
import pytest

from byhand.bounds import BoundExceeded, below


def test_prints_the_bound_not_the_value():
    b = below(6.429187e-11, 1e-9, "gap")
    assert str(b) == "< 1e-9" and repr(b) == "< 1e-9" and f"{b}" == "< 1e-9"
    assert b.tex == "< 10^{-9}"
    assert b.value == pytest.approx(6.429187e-11)


def test_two_machines_with_different_noise_print_the_same():
    assert str(below(6.429187e-11, 1e-9)) == str(below(5.121669e-11, 1e-9))


def test_array_uses_the_largest_entry():
    assert below(np.array([1e-12, -3e-8, 2e-10]), 1e-7).value == pytest.approx(3e-8)
    with pytest.raises(BoundExceeded, match=r"err = 2\.000e-07 is not below 1e-07"):
        below(np.array([1e-12, -2e-7]), 1e-7, "err")


def test_value_at_the_bound_fails_and_is_an_assertion():
    with pytest.raises(AssertionError):
        below(1e-9, 1e-9)


@pytest.mark.parametrize("bad", [0, -1e-9, 3e-9, float("nan"), "1e-9", True])
def test_bound_must_be_a_positive_power_of_ten(bad):
    with pytest.raises(ValueError, match="bound"):
        below(1e-12, bad)


@pytest.mark.parametrize("x", [np.nan, np.inf, np.array([0.0, -np.inf])])
def test_nonfinite_value_is_refused(x):
    with pytest.raises(ValueError, match="NaN or inf"):
        below(x, 1e-9, "gap")


def test_empty_is_refused():
    with pytest.raises(ValueError, match="empty"):
        below(np.array([]), 1e-9, "gap")
