"""Live widgets: a view redrawn as fast as the reader drags, and never behind the hand.

``byhand.widgets.interactive_view`` delegates here. Three choices make a move's answer quick (measured in
``benchmarks/bench_widget_latency.py``; the numbers are in ``benchmarks/README.md``):

1. Only what moves is redrawn. A view's ``draw(fig, setting)`` (the call the static slider makes for each frame,
   ``byhand.slider``) builds the whole figure. It may return ``update(setting)``: a function that sets the view's
   moving artists (lines, bars, texts that change with the controls) to another setting and returns them, always
   the same list in drawing order. The static parts (axes, ticks, labels, reference curves) are then painted once
   and kept as a pixel background; a move calls ``update``, puts the background back and paints only the moving
   artists on it (matplotlib's "blitting"). A move costs about a fifth of a full draw, because the full draw's time
   goes into ticks and text. For this the view keeps everything else fixed: axis limits chosen for the controls'
   whole range, titles with numbers made moving texts. ``update`` returns None when a setting needs the whole
   figure drawn again, and a view that returns nothing from ``draw`` is drawn whole on every move.
   A whole draw goes on one canvas kept for the widget's life, in a fresh ``Figure``. Keeping the canvas keeps its
   Agg renderer and matplotlib's text-size cache, which is keyed on the renderer; a fresh figure is cheaper than
   ``fig.clear()`` (which clears every old Axes before it drops them) and carries nothing over from the last
   frame. No pyplot figure is made, so Jupyter's inline backend never shows or keeps one.
2. The pixels go out as PNG bytes in an ``ipywidgets.Image``: one comm message per frame. The canvas's RGBA
   buffer is encoded by Pillow at zlib level 1, without matplotlib's ``bbox_inches="tight"`` second pass.
3. Moves are coalesced. A move only records that a render is owed; the render runs on the kernel's event loop
   and reads the controls' latest values. Moves that arrive while a render is owed fold into it, and in a drag
   the render waits for the moves queued behind it (``Coalescer``), so a quick drag never queues stale frames.
   With no running event loop (a plain script, a test) the render runs at once.

Introduced with the first widget, in Part I, "Dot products".
"""
from __future__ import annotations

import asyncio
import gc
import html
import io
import time
import traceback
from typing import Callable

# A move that arrives within this many seconds of the end of the last render is part of a drag: its render waits
# until no move has come for this long, so that the moves queued behind it (sent while the last frame was drawn,
# handled back to back) fold into one frame. 3 ms folded a 30-move burst into 2 frames; 10 ms did the same and
# added its 10 ms to every frame of a drag (benchmarks/README.md).
FOLD_S = 0.003
# zlib level for the PNG: for a figure of flat colours level 1 is both faster and smaller than the default 6
# (the dot products frame: 3.3 ms and 20.9 kB against 4.8 ms and 22.6 kB).
COMPRESS_LEVEL = 1
# Pixels per inch of a live figure: 9-pt text is 12 px tall, close to the book's other figures (100 dpi). At 72 dpi it
# was 9 px; 96 costs about 3 ms more a move (the dot products view: 10.6 -> 13.2 ms in process).
LIVE_DPI = 96


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running this call (a Jupyter kernel's), or None in a plain script."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LiveFigure:
    """A view drawn again and again on one Agg canvas; each ``render`` returns the PNG of the frame for a setting.

    ``fig`` is the latest frame's figure. No figure is registered with pyplot, so none needs closing. ``renders``
    counts frames and ``whole_draws`` the frames that drew the whole figure (the rest moved artists in place).
    """

    def __init__(self, draw: Callable, figsize: tuple[float, float] = (7.0, 3.0), dpi: int = LIVE_DPI,
                 compress_level: int = COMPRESS_LEVEL):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.draw = draw
        self.figsize, self.dpi = tuple(figsize), dpi
        self.compress_level = compress_level
        self.fig = Figure(figsize=self.figsize, dpi=dpi)
        self.canvas = FigureCanvasAgg(self.fig)  # kept: its renderer, and the text cache keyed on it, live on
        self.renders = 0  # how many frames were drawn
        self.whole_draws = 0  # how many of them drew the whole figure
        self.last_setting: dict | None = None  # the setting of the latest frame
        self._update: Callable | None = None  # the view's update(setting), if it returned one
        self._background = None  # the pixels of the figure without its moving artists

    def render(self, setting: dict) -> bytes:
        """Return the PNG of the whole figure at ``setting``: the moving artists redrawn in place when the view
        allows it, else a whole draw (``draw_whole``)."""
        moving = self._update(setting) if self._update is not None else None
        if moving is None:
            self.draw_whole(setting)
        else:
            self.canvas.restore_region(self._background)
            for artist in moving:
                self.fig.draw_artist(artist)
        self.renders += 1
        self.last_setting = dict(setting)
        return self._png()

    def draw_whole(self, setting: dict) -> None:
        """Draw ``setting`` into a fresh figure on the canvas; keep the view's ``update``, if any, for later moves.

        Python's cyclic garbage collector is paused while the frame is made, and the last frame's figure is
        collected first. A figure is thousands of objects in reference cycles. Left to the collector, a frame's
        objects moved to its oldest generation while the frame was drawn and died there, so every 10 to 20 frames a
        full collection over the whole kernel (90 to 145 ms with a chapter loaded) landed inside a frame. Made
        with the collector paused, they stay young, and collecting the young generations frees them in a few ms.
        """
        from matplotlib.figure import Figure

        self.fig = self.canvas.figure = None  # the last frame's figure is garbage from here
        self._update = self._background = None
        gc.collect(1)
        paused = gc.isenabled()
        gc.disable()
        try:
            self.fig = Figure(figsize=self.figsize, dpi=self.dpi)
            self.fig.set_canvas(self.canvas)
            self.canvas.figure = self.fig
            update = self.draw(self.fig, setting)
            moving = update(setting) if callable(update) else None
            if moving is None:
                self.canvas.draw()
            else:  # paint the still parts, keep them, then paint the moving artists over them
                for artist in moving:
                    artist.set_animated(True)
                self.canvas.draw()
                self._background = self.canvas.copy_from_bbox(self.fig.bbox)
                for artist in moving:
                    self.fig.draw_artist(artist)
                self._update = update
        finally:
            if paused:
                gc.enable()
        self.whole_draws += 1

    def _png(self) -> bytes:
        from PIL import Image  # a matplotlib dependency

        width, height = self.canvas.get_width_height()
        rgba = Image.frombuffer("RGBA", (width, height), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        rgba.save(buf, format="PNG", compress_level=self.compress_level)
        return buf.getvalue()


class Coalescer:
    """Run ``action()`` once for a run of ``request()`` calls that arrive while a run is owed.

    Inside a running event loop, ``request`` schedules the run and returns; requests that come before the run fold
    into it. After a quiet spell the run goes on the loop's next turn. A request within ``fold_s`` of the end of the
    previous run is part of a drag: its run waits until no request has come for ``fold_s`` (the moves queued while
    the last frame was drawn arrive back to back), but no longer than the last run took, so a steady stream of
    moves still gets frames. With no running loop, ``request`` runs at once.
    """

    def __init__(self, action: Callable[[], None], fold_s: float = FOLD_S, clock: Callable[[], float] = time.monotonic,
                 loop: Callable[[], asyncio.AbstractEventLoop | None] = _running_loop):
        """``clock`` gives seconds; ``loop`` gives the event loop to schedule runs on, or None to run at once (a
        test passes its own clock and a loop it turns by hand)."""
        self._action = action
        self.fold_s = fold_s
        self._clock = clock
        self._loop = loop
        self._handle: asyncio.Handle | asyncio.TimerHandle | None = None  # the scheduled run, if one is owed
        self._waits = False  # whether the owed run waits for the moves behind it (a drag)
        self._deadline = float("-inf")  # a run waiting for the moves behind it goes no later than this
        self._last_end = float("-inf")
        self._last_took = 0.0  # seconds the last run took
        self.requests = 0  # calls to request()
        self.runs = 0  # calls of action()

    @property
    def pending(self) -> bool:
        """True while a run is owed."""
        return self._handle is not None

    def request(self) -> None:
        self.requests += 1
        now = self._clock()
        if self._handle is not None:  # fold into the run already owed; if it waits for a drag, wait a bit longer
            if self._waits and now + self.fold_s < self._deadline:
                self._handle.cancel()
                self._handle = self._loop().call_later(self.fold_s, self._run)
            return
        loop = self._loop()
        if loop is None:
            self._run()
        elif now - self._last_end < self.fold_s:  # a drag under way
            self._deadline = now + max(self.fold_s, self._last_took)
            self._handle, self._waits = loop.call_later(self.fold_s, self._run), True
        else:
            self._handle, self._waits = loop.call_soon(self._run), False

    def flush(self) -> None:
        """Run now if a run is owed (e.g. before reading the result in the same cell)."""
        if self._handle is not None:
            self._handle.cancel()
            self._run()

    def _run(self) -> None:
        self._handle = None
        start = self._clock()
        try:
            self._action()
        finally:
            self.runs += 1
            self._last_end = self._clock()
            self._last_took = self._last_end - start


def live_view(draw: Callable, controls: dict, figsize: tuple[float, float] = (7.0, 3.0), dpi: int = LIVE_DPI,
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

    width, _ = live.canvas.get_width_height()
    # shown at its pixel size (a column box would otherwise stretch it to the page's width and blur it), and no
    # wider than the page
    image = widgets.Image(value=live.render(setting()), format="png",
                          layout=widgets.Layout(width=f"{width}px", max_width="100%", height="auto"))
    error = widgets.HTML()  # empty unless a render failed
    describe = getattr(draw, "describe", None)  # the view's text alternative (byhand.views.make_view), if any
    # The description of the frame on show, as a line of text under the image for every reader, which wraps. An
    # ipywidgets 8 Image has no alt, and its tooltip cannot stand in: the front end's Image view fails to render
    # when a tooltip is set (DOMWidgetView.updateTooltip reads a description an Image does not have). The line's
    # content element stays in place as the text changes, so a page script can make it a polite live region
    # (class byhand-live-alt).
    said = widgets.HTML(value="")
    said.add_class("byhand-live-alt")

    def tell() -> None:
        if describe is not None:
            said.value = html.escape(describe(live.last_setting))

    def show() -> None:
        try:
            image.value = live.render(setting())
            tell()
            error.value = ""
        except Exception:  # noqa: BLE001 - shown to the reader beside the figure instead of lost in a log
            error.value = f"<pre style='color:#b00'>{html.escape(traceback.format_exc(limit=-3))}</pre>"

    coalescer = Coalescer(show, fold_s=fold_s)
    for w in controls.values():
        w.observe(lambda _change: coalescer.request(), names="value")
    tell()
    box = widgets.VBox([widgets.HBox(list(controls.values())), image, *([said] if describe else []), error])
    box.image, box.live, box.coalescer, box.said = image, live, coalescer, said
    return box
