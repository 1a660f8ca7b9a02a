"""Widgets: the live face of a view; ``byhand.slider`` is its static face.

A view is a pure ``draw(fig, setting)`` where ``setting`` is a dict of control values. ``interactive_view``
wires ipywidgets controls to it (a kernel is needed to move them); ``sweep`` lists the settings for the static
slider, default first. Both faces call the same ``draw``. Introduced in Part I, "Dot products".
"""
from __future__ import annotations

from typing import Callable, Sequence


def sweep(defaults: dict, name: str, values: Sequence) -> list[dict]:
    """Settings that vary control ``name`` over ``values`` with the other controls at their defaults.

    ``values[0]`` must be the default of ``name``, so that frame 0 of a static slider matches the widget's first view.
    """
    if name not in defaults:
        raise ValueError(f"unknown control {name!r}; the controls are {sorted(defaults)}")
    values = list(values)
    if not values or values[0] != defaults[name]:
        raise ValueError(f"the first value of {name!r} must be its default {defaults[name]!r}")
    return [{**defaults, name: v} for v in values]


def interactive_view(draw: Callable, controls: dict, figsize: tuple[float, float] = (7.0, 3.0), dpi: int | None = None):
    """Return a widget box: the ``controls`` (name -> ipywidget) above an image of ``draw(fig, values)``.

    The figure is redrawn whenever a control changes, in one figure kept for the widget, and a quick drag folds into
    the latest value (``byhand.live``). ipywidgets is imported there, at call time, so that ``byhand`` itself does
    not need it.
    """
    from .live import LIVE_DPI, live_view

    return live_view(draw, controls, figsize=figsize, dpi=dpi or LIVE_DPI)
