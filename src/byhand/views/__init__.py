"""Views: the pure state functions and ``draw(fig, setting)`` functions behind each chapter's widget and static slider.

A state function turns control values into numbers (fast, tested, no drawing); a draw function turns those numbers
into a figure and returns ``update(state)``, which moves its artists to another state's numbers. ``make_view`` joins
the two into the ``draw(fig, setting)`` that the figure, the live widget (``byhand.live``) and the static slider
(``byhand.slider``) call. One module per chapter topic. Introduced with the first widget, Part I, "Dot products".
"""

import numpy as np


def span(*arrays) -> tuple[float, float]:
    """``(lo, hi)`` covering 0 and every value of the arrays, never of zero width: the fixed axis range of a view
    whose live widget moves its artists in place (``byhand.live``), computed over the controls' whole range."""
    lo = min(0.0, *(float(np.min(a)) for a in arrays))
    hi = max(0.0, *(float(np.max(a)) for a in arrays))
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)


def make_view(state, draw_state, *args):
    """``draw(fig, setting)`` from a view's two halves: ``state(setting)``, the numbers for a setting of the controls,
    and ``draw_state(fig, state, *args)``, which draws them and returns ``update(state)``.

    ``draw`` returns ``update(setting)`` for ``byhand.live``: a move computes the new state and moves the artists.
    """
    def draw(fig, setting: dict):
        update = draw_state(fig, state(setting), *args)
        return None if update is None else (lambda new: update(state(new)))

    return draw


def set_bars(bars, heights, colors=None) -> list:
    """Move bars in place: each bar gets its height (and its colour, when ``colors`` is given). Returns the bars, for
    the list of moving artists an ``update`` returns."""
    bars = list(bars)
    for k, (bar, height) in enumerate(zip(bars, heights)):
        bar.set_height(height)
        if colors is not None:
            bar.set_color(colors[k])
    return bars
