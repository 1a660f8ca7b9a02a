"""Tests for byhand.views.gelu: both forms against closed forms, and how close they are."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from byhand.views.gelu import gelu_state, gelu_view


@given(st.floats(-5, 5))
def test_both_forms_match_their_formulas(x):
    s = gelu_state(x)
    assert s.erf_at == pytest.approx(0.5 * x * (1 + math.erf(x / math.sqrt(2))), abs=1e-12)
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    assert s.tanh_at == pytest.approx(0.5 * x * (1 + math.tanh(inner)), abs=1e-12)


def test_the_forms_agree_to_a_few_ten_thousandths_on_the_grid():
    s = gelu_state(0.0)
    gap = np.abs(s.tanh - s.erf).max()
    assert 1e-5 < gap < 1e-3
    assert s.tanh_at == 0.0 == s.erf_at


def test_gelu_state_rejects_points_off_the_plot():
    with pytest.raises(ValueError, match="outside the plotted range"):
        gelu_state(5.5)


def test_gelu_view_draws_two_panels_with_samples():
    fig = plt.figure()
    gelu_view(np.array([-1.0, 0.5]))(fig, {"x": 1.0})
    assert len(fig.axes) == 2 and "GELU" in fig.axes[0].get_ylabel()
    plt.close(fig)
