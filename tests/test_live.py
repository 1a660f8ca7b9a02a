"""Tests for byhand.live: the live widget draws what a fresh figure draws, and a quick drag folds into one frame."""
import asyncio
import gc
import io
import weakref

import numpy as np
import pytest
from matplotlib.figure import Figure
from PIL import Image

from byhand.live import Coalescer, LiveFigure, live_view
from byhand.widgets import interactive_view


def draw_line(fig, setting):
    ax = fig.add_subplot()
    x = np.linspace(0.0, 1.0, 20)
    ax.plot(x, setting["slope"] * x)
    ax.set_ylim(-3, 3)
    ax.set_title(f"slope {setting['slope']:.2f}")


def pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGBA"))


def fresh_png(draw, setting, figsize, dpi) -> bytes:
    """The oracle: matplotlib's own savefig of a figure made for this one setting."""
    fig = Figure(figsize=figsize, dpi=dpi)
    draw(fig, setting)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


@pytest.mark.pixel
def test_live_figure_draws_what_a_fresh_figure_draws_whatever_came_before():
    live = LiveFigure(draw_line, figsize=(3, 2), dpi=40)
    first = live.render({"slope": 1.0})
    assert pixels(first).shape == (80, 120, 4)  # the whole figure, (2·40, 3·40) pixels: no tight-bbox crop
    assert np.array_equal(pixels(first), pixels(fresh_png(draw_line, {"slope": 1.0}, (3, 2), 40)))
    other = live.render({"slope": -2.0})
    assert not np.array_equal(pixels(other), pixels(first))
    assert live.render({"slope": 1.0}) == first  # redrawing in place leaves nothing behind from the last frame
    assert live.renders == 3 and live.last_setting == {"slope": 1.0}


def test_the_next_frame_frees_the_last_frames_figure_and_leaves_the_collector_on():
    live = LiveFigure(draw_line, figsize=(3, 2), dpi=40)
    live.render({"slope": 1.0})
    last = weakref.ref(live.fig)
    live.render({"slope": 2.0})
    assert last() is None  # freed by the next frame itself, with no collection asked for by the caller
    assert gc.isenabled()  # the collector runs again after a frame


def test_the_collector_is_back_on_after_a_frame_that_raises():
    def broken(fig, setting):
        raise ValueError("no figure")

    with pytest.raises(ValueError, match="no figure"):
        LiveFigure(broken, figsize=(3, 2), dpi=40).render({"slope": 1.0})
    assert gc.isenabled()


class ManualLoop:
    """An event loop turned by hand against a fake clock: ``call_soon`` and ``call_later`` queue callbacks, and
    ``advance(dt)`` moves the clock on, running what falls due in order. No real time passes."""

    def __init__(self):
        self.now = 0.0
        self._queue = []  # [when, order, callback, cancelled]

    def clock(self) -> float:
        return self.now

    def call_later(self, delay, callback):
        item = [self.now + delay, len(self._queue), callback, False]
        self._queue.append(item)

        class Handle:
            def cancel(self):
                item[3] = True
        return Handle()

    def call_soon(self, callback):
        return self.call_later(0.0, callback)

    def advance(self, dt: float = 0.0) -> None:
        end = self.now + dt
        while True:
            due = sorted((i for i in self._queue if not i[3] and i[0] <= end), key=lambda i: (i[0], i[1]))
            if not due:
                break
            item = due[0]
            item[3] = True
            self.now = max(self.now, item[0])
            item[2]()
        self.now = end


def coalescer(action, loop: ManualLoop, fold_s: float) -> Coalescer:
    return Coalescer(action, fold_s=fold_s, clock=loop.clock, loop=lambda: loop)


def test_coalescer_without_an_event_loop_runs_at_once():
    runs = []
    c = Coalescer(lambda: runs.append(1), clock=lambda: 0.0, loop=lambda: None)
    c.request()
    c.request()
    assert runs == [1, 1] and not c.pending


def test_coalescer_folds_requests_that_arrive_while_a_run_is_owed():
    loop, seen, value = ManualLoop(), [], {"v": 0}
    c = coalescer(lambda: seen.append(value["v"]), loop, fold_s=0.02)
    for v in range(1, 31):  # 30 moves arrive before the loop gets a turn
        value["v"] = v
        c.request()
    assert c.pending and seen == []
    loop.advance(0.0)  # a quiet widget answers on the next turn of the loop, with no delay
    assert seen == [30] and c.requests == 30 and c.runs == 1
    loop.advance(0.001)
    c.request()  # a move right after a frame is part of a drag: it waits fold_s for the moves behind it
    value["v"] = 31
    c.request()
    loop.advance(0.0)
    assert seen == [30]
    loop.advance(0.019)
    assert seen == [30]  # still within fold_s of the last move
    loop.advance(0.002)
    assert seen == [30, 31] and c.runs == 2 and not c.pending


def test_coalescer_in_a_drag_waits_for_the_queue_to_drain_but_never_starves():
    loop, seen, value = ManualLoop(), [], {"v": 0}

    def slow_frame():  # a frame that takes 90 ms to draw
        loop.now += 0.09
        seen.append(value["v"])

    c = coalescer(slow_frame, loop, fold_s=0.03)
    c.request()
    loop.advance(0.0)  # the first frame, drawn at once
    for v in range(1, 61):  # then a move every 2 ms, much closer together than fold_s
        value["v"] = v
        c.request()
        loop.advance(0.002)
    loop.advance(0.3)
    assert seen[0] == 0 and seen[-1] == 60  # the last frame shows the last move
    assert any(0 < v < 60 for v in seen)  # a frame came during the drag: a wait is capped by the last frame's time
    assert len(seen) <= 15 and c.runs == len(seen) and c.requests == 61  # far fewer frames than moves
    assert not c.pending


def test_coalescer_flush_runs_what_is_owed_and_only_once():
    loop, runs = ManualLoop(), []
    c = coalescer(lambda: runs.append(1), loop, fold_s=0.01)
    c.request()
    c.flush()
    assert runs == [1] and not c.pending
    loop.advance(1.0)
    assert runs == [1]  # the cancelled scheduled run does not run again


def test_coalescer_on_a_real_event_loop_runs_on_its_next_turn():
    seen = []

    async def go():
        c = Coalescer(lambda: seen.append(1), clock=lambda: 0.0)  # the running loop, a clock that never moves
        c.request()
        c.request()
        assert seen == [] and c.pending
        await asyncio.sleep(0)
        assert seen == [1] and not c.pending

    asyncio.run(go())


@pytest.mark.pixel
def test_live_view_shows_the_first_frame_at_once_and_the_latest_value_after_a_drag():
    import ipywidgets as widgets

    slider = widgets.FloatSlider(value=1.0, min=-3, max=3, step=0.1)
    box = live_view(draw_line, {"slope": slider}, figsize=(3, 2), dpi=40)
    assert box.children[0].children[0] is slider and box.children[1] is box.image
    assert np.array_equal(pixels(box.image.value), pixels(fresh_png(draw_line, {"slope": 1.0}, (3, 2), 40)))

    async def drag():
        for v in np.linspace(-3, 3, 30):
            slider.value = float(v)
        assert box.live.renders == 1  # nothing drawn yet: the moves wait for the loop
        await asyncio.sleep(0)  # its next turn

    asyncio.run(drag())
    assert box.live.renders == 2 and box.live.last_setting == {"slope": 3.0}  # one frame, of the last value
    assert np.array_equal(pixels(box.image.value), pixels(fresh_png(draw_line, {"slope": 3.0}, (3, 2), 40)))
    slider.value = -0.5  # no running loop (a script, nbconvert between cells): drawn at once
    assert box.live.last_setting == {"slope": -0.5}


def test_live_view_raises_on_a_broken_first_frame_and_shows_a_later_error():
    import ipywidgets as widgets

    def fragile(fig, setting):
        if setting["slope"] < 0:
            raise ValueError("slope must be >= 0")
        draw_line(fig, setting)

    with pytest.raises(ValueError, match="slope must be"):
        live_view(fragile, {"slope": widgets.FloatSlider(value=-1.0, min=-3, max=3)})
    slider = widgets.FloatSlider(value=1.0, min=-3, max=3)
    box = live_view(fragile, {"slope": slider}, figsize=(2, 2), dpi=30)
    before = box.image.value
    slider.value = -1.0
    assert "slope must be" in box.children[2].value and box.image.value == before  # the last good frame stays
    slider.value = 2.0
    assert box.children[2].value == "" and box.image.value != before


@pytest.mark.pixel
def test_interactive_view_is_the_live_view():
    import ipywidgets as widgets

    slider = widgets.FloatSlider(value=0.5, min=-3, max=3)
    box = interactive_view(draw_line, {"slope": slider}, figsize=(2, 2), dpi=30)
    assert isinstance(box.image, widgets.Image) and box.image.format == "png"
    assert pixels(box.image.value).shape == (60, 60, 4)


def described_line():
    """A view made with make_view: its describe says the slope it draws."""
    from byhand.views import make_view

    def draw_state(fig, slope):
        draw_line(fig, {"slope": slope})

    return make_view(lambda setting: setting["slope"], draw_state, describe=lambda slope: f"A line of slope {slope:.2f}.")


def test_the_line_under_the_live_image_says_what_it_shows_and_says_it_again_after_each_move():
    import ipywidgets as widgets

    slider = widgets.FloatSlider(value=1.0, min=-3, max=3, step=0.25)
    box = live_view(described_line(), {"slope": slider}, figsize=(2, 2), dpi=30)
    assert box.said.value == "A line of slope 1.00."
    assert box.children[2] is box.said and "byhand-live-alt" in box.said._dom_classes  # under the image
    assert box.image.tooltip is None  # a tooltip on an Image stops ipywidgets 8 from rendering it
    slider.value = -2.25  # no running loop: drawn and described at once
    assert box.said.value == "A line of slope -2.25."
    box.coalescer.flush()
    assert box.live.renders == 2  # describing the frame drew nothing more


def test_a_view_without_a_description_shows_no_text_line():
    import ipywidgets as widgets

    box = live_view(draw_line, {"slope": widgets.FloatSlider(value=1.0)}, figsize=(2, 2), dpi=30)
    assert len(box.children) == 3  # controls, image, error
