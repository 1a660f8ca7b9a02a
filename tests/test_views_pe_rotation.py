"""Tests for byhand.views.pe_rotation, checked against sines and cosines written out by hand."""
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from layout_check import check_layout
from byhand.views.pe_rotation import pe_rotation_state, pe_rotation_view
from byhand.widgets import sweep


@pytest.mark.parametrize("pos", [0, 1, 2, 7, 30])
def test_row_is_the_formula(pos):
    s = pe_rotation_state(pos, 4)
    by_hand = [math.sin(pos), math.cos(pos), math.sin(pos / 100), math.cos(pos / 100)]
    np.testing.assert_allclose(s.row, by_hand, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(s.angles, [pos, pos / 100], rtol=1e-14)
    np.testing.assert_allclose(s.steps, [1.0, 0.01], rtol=1e-14)
    assert s.trail.shape == (pos + 1, 4)


def test_every_point_is_on_the_unit_circle():
    s = pe_rotation_state(40, 4)
    for i in range(2):
        np.testing.assert_allclose(s.trail[:, 2 * i] ** 2 + s.trail[:, 2 * i + 1] ** 2, 1.0, rtol=1e-14)


@pytest.mark.parametrize("d_model", [4, 8, 512])
def test_one_step_is_the_same_rotation_at_every_position(d_model):
    s = pe_rotation_state(25, d_model)
    for i in range(2):
        a = s.steps[i]
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])  # row vector times Rot
        pair = s.trail[:, 2 * i:2 * i + 2]  # (26, 2)
        np.testing.assert_allclose(pair[:-1] @ rot, pair[1:], atol=1e-12)
        assert s.steps[i] == pytest.approx(1 / 10000 ** (2 * i / d_model), rel=1e-14)


@pytest.mark.parametrize("pos, d_model", [(-1, 4), (1.5, 4), (3, 2), (3, 5)])
def test_bad_settings_are_refused(pos, d_model):
    with pytest.raises(ValueError):
        pe_rotation_state(pos, d_model)


def test_describe_and_table_carry_the_row():
    draw = pe_rotation_view(4)
    text = draw.describe({"pos": 3})
    assert "[0.1411, −0.9900, 0.0300, 0.9996]" in text and "1.0000 rad per step" in text
    columns, rows = draw.table({"pos": 3})
    assert len(columns) == 5 and [r[0] for r in rows] == [0, 1, 2, 3] and rows[3][1] == "0.1411"


def test_the_view_draws():
    fig = plt.figure()
    pe_rotation_view(4)(fig, {"pos": 5})
    assert len(fig.axes) == 2
    plt.close(fig)


def live_case():
    """For tests/view_cases.py: the view, the live widget's moves, the chapter's static-slider settings."""
    draw = pe_rotation_view(4)
    moves = [{"pos": p} for p in (0, 30, 1, 12, 3)]  # the slider's ends and some points between
    return draw, moves, sweep({"pos": 0}, "pos", [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 15, 20, 30])


def test_every_position_keeps_the_axes_still():
    draw = pe_rotation_view(4)
    seen = set()
    for pos in range(31):  # every position the slider offers
        fig = Figure(figsize=(7, 3), dpi=72)
        FigureCanvasAgg(fig)
        draw(fig, {"pos": pos})
        seen.add(tuple((ax.get_xlim(), ax.get_ylim()) for ax in fig.axes))
    assert len(seen) == 1
    fig = Figure(figsize=(7, 3), dpi=72)
    FigureCanvasAgg(fig)
    draw(fig, {"pos": 30})
    check_layout(fig)
