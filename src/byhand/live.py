"""Live widgets: a view redrawn as fast as the reader drags, and never behind the hand.

``byhand.widgets.interactive_view`` delegates here. Three choices keep a move's answer within one frame
(measured in ``benchmarks/bench_widget_latency.py``; the numbers are in ``benchmarks/README.md``):

1. One figure, redrawn in place: ``fig.clear()`` then the view's ``draw(fig, setting)``, the same call the
   static slider makes for each frame (``byhand.slider``). No pyplot figure is built per move.
2. The pixels go out as PNG bytes in an ``ipywidgets.Image``: one comm message per frame. The canvas's RGBA
   buffer is encoded by Pillow at zlib level 1, without matplotlib's ``bbox_inches="tight"`` second pass.
3. Moves are coalesced. A move only records that a render is owed; the render runs on the kernel's event loop
   and reads the controls' latest values. Moves that arrive while a render is owed fold into it, so a quick
   drag never queues stale frames. With no running event loop (a plain script, a test) the render runs at once.

Introduced with the first widget, in Part I, "Dot products".
"""
from __future__ import annotations

import asyncio
import html
import io
import time
import traceback
from typing import Callable

# A move that arrives within this many seconds of the end of the last render is part of a drag: its render waits
# this long, so that the moves queued behind it (sent while the last frame was drawn) fold into one frame.
FOLD_S = 0.010
# zlib level for the PNG: level 1 encodes several times faster than the default 6 and the frame is about as small
# (a figure is mostly flat colour).
COMPRESS_LEVEL = 1


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running this call (a Jupyter kernel's), or None in a plain script."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LiveFigure:
    """One matplotlib figure that a view draws into again and again; each ``render`` returns PNG bytes.

    The figure is not registered with pyplot, so Jupyter's inline backend never shows it by itself and it
    needs no closing.
    """

    def __init__(self, draw: Callable, figsize: tuple[float, float] = (7.0, 3.0), dpi: int = 72,
                 compress_level: int = COMPRESS_LEVEL):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.draw = draw
        self.compress_level = compress_level
        self.fig = Figure(figsize=figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)
        self.renders = 0  # how many frames were drawn
        self.last_setting: dict | None = None  # the setting of the latest frame

    def render(self, setting: dict) -> bytes:
        """Draw ``setting`` into the figure (cleared first) and return the PNG of the whole figure."""
        from PIL import Image  # a matplotlib dependency

        self.fig.clear()
        self.draw(self.fig, setting)
        self.canvas.draw()
        width, height = self.canvas.get_width_height()
        rgba = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        rgba.save(buf, format="PNG", compress_level=self.compress_level)
        self.renders += 1
        self.last_setting = dict(setting)
        return buf.getvalue()


class Coalescer:
    """Run ``action()`` once for a run of ``request()`` calls that arrive while a run is owed.

    Inside a running event loop, ``request`` schedules the run and returns; later requests before the run fold
    into it. A request that comes within ``fold_s`` of the end of the previous run (a drag under way) waits
    ``fold_s``, so that the moves queued behind it fold too. With no running loop, ``request`` runs at once.
    """

    def __init__(self, action: Callable[[], None], fold_s: float = FOLD_S, clock: Callable[[], float] = time.monotonic):
        self._action = action
        self.fold_s = fold_s
        self._clock = clock
        self._handle: asyncio.Handle | asyncio.TimerHandle | None = None  # the scheduled run, if one is owed
        self._last_end = float("-inf")
        self.requests = 0  # calls to request()
        self.runs = 0  # calls of action()

    @property
    def pending(self) -> bool:
        """True while a run is owed."""
        return self._handle is not None

    def request(self) -> None:
        self.requests += 1
        if self._handle is not None:
            return  # folded into the run already owed
        loop = _running_loop()
        if loop is None:
            self._run()
        elif self._clock() - self._last_end < self.fold_s:
            self._handle = loop.call_later(self.fold_s, self._run)
        else:
            self._handle = loop.call_soon(self._run)

    def flush(self) -> None:
        """Run now if a run is owed (e.g. before reading the result in the same cell)."""
        if self._handle is not None:
            self._handle.cancel()
            self._run()

    def _run(self) -> None:
        self._handle = None
        try:
            self._action()
        finally:
            self.runs += 1
            self._last_end = self._clock()


def live_view(draw: Callable, controls: dict, figsize: tuple[float, float] = (7.0, 3.0), dpi: int = 72,
              compress_level: int = COMPRESS_LEVEL, fold_s: float = FOLD_S):
    """Return a widget box: the ``controls`` (name -> ipywidget) above an image of ``draw(fig, values)``.

    The first frame is drawn before this returns, so it shows when the cell runs (and is saved with the widget
    state of an executed notebook); an error in it raises. A later frame's error is shown under the image.
    The box carries ``.image`` (the ``ipywidgets.Image``), ``.live`` (the ``LiveFigure``) and ``.coalescer``.
    """
    import ipywidgets as widgets  # here, not at module level, so that byhand itself does not need ipywidgets

    live = LiveFigure(draw, figsize, dpi, compress_level)

    def setting() -> dict:
        return {name: w.value for name, w in controls.items()}

    width, height = live.canvas.get_width_height()
    # shown at its pixel size (a column box would otherwise stretch it to the page's width and blur it), and no
    # wider than the page
    image = widgets.Image(value=live.render(setting()), format="png",
                          layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"))
    error = widgets.HTML()  # empty unless a render failed

    def show() -> None:
        try:
            image.value = live.render(setting())
            error.value = ""
        except Exception:  # noqa: BLE001 - shown to the reader beside the figure instead of lost in a log
            error.value = f"<pre style='color:#b00'>{html.escape(traceback.format_exc(limit=-3))}</pre>"

    coalescer = Coalescer(show, fold_s=fold_s)
    for w in controls.values():
        w.observe(lambda _change: coalescer.request(), names="value")
    box = widgets.VBox([widgets.HBox(list(controls.values())), image, error])
    box.image, box.live, box.coalescer = image, live, coalescer
    return box
