"""Every view with a live widget: moving its artists in place draws what a whole draw draws (``live_helpers``), over
a few settings per view (``view_cases``). Its own file, so that ``--dist loadfile`` gives it a worker of its own."""
import pytest

from live_helpers import assert_moves_in_place
from view_cases import CASES, case


@pytest.mark.pixel
@pytest.mark.parametrize("view, args", CASES)
def test_a_move_draws_what_a_whole_draw_draws(view, args):
    draw, moves, _ = case(view, args)
    assert_moves_in_place(draw, moves)
