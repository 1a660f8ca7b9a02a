"""Views: the pure state functions and ``draw(fig, setting)`` functions behind each chapter's widget and static slider.

A state function turns control values into numbers (fast, tested, no drawing); a draw function turns those numbers
into a figure. One module per chapter topic.
"""

import numpy as np


def span(*arrays) -> tuple[float, float]:
    """``(lo, hi)`` covering 0 and every value of the arrays, never of zero width: the fixed axis range of a view
    whose live widget moves its artists in place (``byhand.live``), computed over the controls' whole range."""
    lo = min(0.0, *(float(np.min(a)) for a in arrays))
    hi = max(0.0, *(float(np.max(a)) for a in arrays))
    return (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)
