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


def make_view(state, draw_state, *args, describe=None, table=None):
    """``draw(fig, setting)`` from a view's two halves: ``state(setting)``, the numbers for a setting of the controls,
    and ``draw_state(fig, state, *args)``, which draws them and returns ``update(state)``.

    ``draw`` returns ``update(setting)`` for ``byhand.live``: a move computes the new state and moves the artists.
    ``describe(state)`` says in words what the figure shows, with its numbers (the text alternative of the figure,
    of each static-slider frame and of the live image); ``table(state)`` gives the figure's data as
    ``(columns, rows)`` for a "Data of this figure" table (``byhand.figure``). They are ``draw.describe(setting)``
    (``draw.describe`` is None where the view has no description) and ``draw.table(setting)`` (None where the view
    has no table). The latest setting's state is kept, so that describing
    the frame just drawn computes nothing again.
    """
    last: list = [None, None]  # the latest setting, as a sorted tuple of its items, and its state

    def state_of(setting: dict):
        key = tuple(sorted(setting.items()))
        if last[0] != key:
            last[:] = [key, state(setting)]
        return last[1]

    def draw(fig, setting: dict):
        update = draw_state(fig, state_of(setting), *args)
        return None if update is None else (lambda new: update(state_of(new)))

    draw.describe = None if describe is None else (lambda setting: describe(state_of(setting)))
    draw.table = lambda setting: None if table is None else table(state_of(setting))
    return draw


def fmt(x: float, spec: int | str = 2) -> str:
    """A number as a description writes it: ``spec`` decimals (or a format spec such as ``".3g"``), a true minus
    sign in front of a negative number, and no negative zero."""
    spec = f".{spec}f" if isinstance(spec, int) else spec
    text = format(float(x) + 0.0, spec)
    if float(text) == 0:
        text = format(0.0, spec)
    return "−" + text[1:] if text.startswith("-") else text


def set_bars(bars, heights, colors=None) -> list:
    """Move bars in place: each bar gets its height (and its colour, when ``colors`` is given). Returns the bars, for
    the list of moving artists an ``update`` returns."""
    bars = list(bars)
    for k, (bar, height) in enumerate(zip(bars, heights)):
        bar.set_height(height)
        if colors is not None:
            bar.set_color(colors[k])
    return bars
