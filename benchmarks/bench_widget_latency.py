"""What the reader feels: how long each widget of the book takes to answer a move, through a real kernel.

For every chapter with a widget (a code cell that calls ``interactive_view(``), the script starts the venv's python3
kernel (jupyter_client) in a temporary copy of notebooks/, runs the chapter's code cells up to and including the widget
cell, and collects the widget models from the iopub ``comm_open`` messages. It then moves each of the widget's
controls whose moves change the figure (sliders first, then dropdowns and toggles; each from the defaults, one row
per control), the way a front end does, with a ``comm_msg``
``{"method": "update", "state": {"value": v}, "buffer_paths": []}`` on the control's comm, and times each move until
the new figure leaves the kernel on iopub: the ``comm_msg`` update that carries the image's new bytes (an
``ipywidgets.Image``), or the ``display_data`` with an image/png (an ``Output``).

  drag   about 30 moves, each sent after the previous move's figure arrived and the kernel went idle: median, p95.
  burst  the first control's 30 moves sent at once, without waiting. Checks coalescing: the figure sent last must be the figure
         of the last value (the script moves away and back to that value and compares the bytes), and far fewer
         than 30 frames should be drawn.

    .venv/bin/python benchmarks/bench_widget_latency.py                    # every widget, table on stdout
    .venv/bin/python benchmarks/bench_widget_latency.py --chapters 01 40   # some chapters
    .venv/bin/python benchmarks/bench_widget_latency.py --variant before   # the Output-based widget it replaced
    .venv/bin/python benchmarks/bench_widget_latency.py --readme           # also write the table into README.md
    .venv/bin/python benchmarks/bench_widget_latency.py --chapters 01 --compare before image-sync book --rounds 2
    .venv-floor/bin/python benchmarks/bench_widget_latency.py --moves 4 --answers-only --no-burst  # make test-floor

``--variant`` swaps ``byhand.widgets.interactive_view`` in the kernel before the chapter runs, to compare designs
(see VARIANTS); ``--compare`` drags one widget under several designs in turn, in one kernel, so that the load falls
on each alike. Next to the wall time from the move to the figure, the table gives the kernel's CPU time per move
(Linux schedstat): on a busy machine it moves far less than the wall time does.

The bar: median under 50 ms and p95 under 100 ms for every widget on a quiet 2-core machine. The load
average (/proc/loadavg) is printed with the numbers, because on 2 shared cores it moves them several-fold. Exits 1 if
a widget misses the bar, a figure never came, or the burst ended on a stale frame. ``--answers-only`` drops the bar:
it checks that every move of every control is answered with a new figure, which is what `make test-floor` asks of
the lowest supported versions (ipywidgets 7.7 among them), whose kernels this script drives when run by their python.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "notebooks"  # the readers' notebooks (make outputs), as readers run them
README = ROOT / "benchmarks" / "README.md"
MEDIAN_BAR_MS, P95_BAR_MS = 50.0, 100.0
MOVES = 30  # moves per drag (--moves)
SLIDERS = {"FloatSliderModel", "IntSliderModel", "FloatLogSliderModel"}
CHOICES = {"DropdownModel", "ToggleButtonsModel", "SelectModel", "RadioButtonsModel"}
MULTI = {"SelectMultipleModel"}  # its index is a list: a move picks one option, then the next, …

# Code run in the kernel before the chapter, replacing interactive_view by another design. "book" runs what
# byhand.widgets has. The others are the alternatives measured when the live design was chosen.
_SYNC = "import byhand.live as _live\n_live._running_loop = lambda: None  # no coalescing: render inside the move\n"
VARIANTS = {
    "book": "",
    # the widget before byhand.live: a new pyplot figure per move, shown through an Output (inline PNG, tight bbox)
    "before": """
import byhand.widgets as _w
import matplotlib.pyplot as _plt
def _before(draw, controls, figsize=(7.0, 3.0), dpi=72):
    import ipywidgets as widgets
    from IPython.display import display
    out = widgets.Output()
    def redraw(_change=None):
        values = {name: w.value for name, w in controls.items()}
        fig = _plt.figure(figsize=figsize, dpi=dpi)
        draw(fig, values)
        with out:
            out.clear_output(wait=True)
            display(fig)
        _plt.close(fig)
    for w in controls.values():
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values())), out])
_w.interactive_view = _before
""",
    # one figure and a level-1 PNG, but still shown through an Output (clear_output + display of the PNG)
    "output-reuse": """
import byhand.widgets as _w
from byhand.live import LiveFigure
def _output_reuse(draw, controls, figsize=(7.0, 3.0), dpi=72):
    import ipywidgets as widgets
    from IPython.display import Image, display
    out, live = widgets.Output(), LiveFigure(draw, figsize, dpi)
    def redraw(_change=None):
        png = live.render({name: w.value for name, w in controls.items()})
        with out:
            out.clear_output(wait=True)
            display(Image(png))
    for w in controls.values():
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values())), out])
_w.interactive_view = _output_reuse
""",
    # an Image widget, but a new figure per move, matplotlib's own savefig (zlib level 6), rendered inside the move
    "image-newfig": _SYNC + """
import io
from matplotlib.figure import Figure
class _NewFig(_live.LiveFigure):
    def render(self, setting):
        fig = Figure(figsize=self.fig.get_size_inches(), dpi=self.fig.dpi)
        self.draw(fig, setting)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        self.renders += 1
        return buf.getvalue()
_live.LiveFigure = _NewFig
""",
    # one figure and an Image widget; matplotlib's savefig at its default zlib level 6; rendered inside the move
    "image-savefig": _SYNC + """
import io
class _Savefig(_live.LiveFigure):
    def render(self, setting):
        self.fig.clear()
        self.draw(self.fig, setting)
        buf = io.BytesIO()
        self.fig.savefig(buf, format="png")
        self.renders += 1
        return buf.getvalue()
_live.LiveFigure = _Savefig
""",
    # one figure cleared with fig.clear() and redrawn, PNG through Pillow at zlib level 1; rendered inside the move
    "image-clear": _SYNC + """
import io
from PIL import Image
class _Clear(_live.LiveFigure):
    def render(self, setting):
        self.fig.clear()
        self.draw(self.fig, setting)
        self.canvas.draw()
        rgba = Image.frombuffer("RGBA", self.canvas.get_width_height(), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        buf = io.BytesIO()
        rgba.save(buf, format="PNG", compress_level=1)
        self.renders += 1
        return buf.getvalue()
_live.LiveFigure = _Clear
""",
    # the book's design without coalescing: every move renders inside its own comm message
    "image-sync": _SYNC,
    # the book's design with fold_s = 0: renders scheduled with call_soon only
    "fold0": "import byhand.live as _live, byhand.widgets as _w, functools as _f\n"
             "_w.interactive_view = _f.partial(_live.live_view, fold_s=0.0)\n",
    # the book's design with a 10 ms wait for the moves queued behind a drag's move
    "fold10": "import byhand.live as _live, byhand.widgets as _w, functools as _f\n"
              "_w.interactive_view = _f.partial(_live.live_view, fold_s=0.010)\n",
}


def widget_chapters() -> list[Path]:
    """Every notebook under notebooks/ with a widget cell, in file order."""
    return [p for p in sorted(BOOK.glob("*.ipynb")) if "interactive_view(" in p.read_text()]


def widget_count(nb_path: Path) -> int:
    """How many widget cells the chapter has."""
    return sum("interactive_view(" in "".join(c["source"]) for c in json.loads(nb_path.read_text())["cells"]
               if c["cell_type"] == "code")


def setup_cells(nb_path: Path, which: int = 0) -> list[tuple[str, bool]]:
    """(source, may_raise) of the code cells up to and including the chapter's widget cell number ``which``."""
    nb = json.loads(nb_path.read_text())
    cells, seen = [], 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        cells.append((src, "raises-exception" in cell.get("metadata", {}).get("tags", [])))
        if "interactive_view(" in src:
            if seen == which:
                return cells
            seen += 1
    raise ValueError(f"{nb_path.name} has no widget cell")


def figure_in(msg: dict, image_comm: str | None) -> bytes | None:
    """The PNG a message carries to the widget's figure, or None."""
    kind, content = msg["msg_type"], msg["content"]
    if kind in ("display_data", "execute_result", "update_display_data"):
        png = content.get("data", {}).get("image/png")
        return png.encode() if png else None
    if kind == "comm_msg" and content.get("comm_id") == image_comm:
        data = content.get("data", {})
        if data.get("method") == "update" and ["value"] in data.get("buffer_paths", []):
            return bytes(msg["buffers"][data["buffer_paths"].index(["value"])])
        for out in data.get("state", {}).get("outputs", []) or []:  # an Output that syncs its outputs
            if "image/png" in out.get("data", {}):
                return out["data"]["image/png"].encode()
    return None


@dataclass
class Widget:
    control: str  # comm id of the control that is moved
    kind: str  # its model name
    label: str  # its description
    image: str | None  # comm id of the Image (or Output) that shows the figure
    moves: list[dict] = field(default_factory=list)  # the states sent, in order
    home: dict = field(default_factory=dict)  # the state it started in


class Kernel:
    """The venv's python3 kernel, driven as a front end drives it."""

    def __init__(self, cwd: Path, prelude: str):
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
        env.pop("MPLBACKEND", None)  # the kernel's own inline backend, as a reader gets it
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.pid = self.km.provisioner.process.pid
        self.comms: dict[str, dict] = {}  # comm id -> widget state at comm_open
        self.result: dict | None = None
        if prelude:
            self.run(prelude)

    def run(self, code: str, may_raise: bool = False) -> None:
        def hook(msg):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open" and content.get("target_name") == "jupyter.widget":
                self.comms[content["comm_id"]] = content["data"]["state"]
            elif kind == "execute_result" or (  # ipywidgets 7 shows a returned widget as display_data
                    kind == "display_data" and "application/vnd.jupyter.widget-view+json" in content["data"]):
                self.result = content["data"]
            elif kind == "error" and not may_raise:
                raise RuntimeError("cell failed: " + "\n".join(content["traceback"])[-2000:])

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=900, allow_stdin=False)
        if reply["content"]["status"] != "ok" and not may_raise:
            raise RuntimeError(f"cell failed: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")

    def cpu_ms(self) -> float:
        """CPU time the kernel's threads have had so far (Linux schedstat, ns resolution), in ms.

        Unlike the wall time, this hardly depends on what else the machine runs, so it estimates a quiet machine's
        latency from a busy one."""
        total = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError):
                pass  # a thread that ended meanwhile
        return total / 1e6

    def send(self, comm_id: str, state: dict) -> str:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {
            "method": "update", "state": state, "buffer_paths": []}})
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def iopub(self, timeout: float) -> dict | None:
        try:
            return self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self, quiet: float = 0.3) -> None:
        while self.iopub(quiet) is not None:
            pass

    def stop(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def find_widgets(k: Kernel) -> list[Widget]:
    """The controls that could be moved (sliders first, then choices), each with the figure's model, from the box
    the widget cell returned."""
    view = (k.result or {}).get("application/vnd.jupyter.widget-view+json")
    if not view:
        raise RuntimeError("the widget cell did not return a widget")
    ids = lambda state, key: [c.removeprefix("IPY_MODEL_") for c in state.get(key, [])]  # noqa: E731
    box = k.comms[view["model_id"]]
    row, *rest = ids(box, "children")
    controls = ids(k.comms[row], "children")
    image = next((c for c in rest if k.comms[c]["_model_name"] in ("ImageModel", "OutputModel")), None)
    kinds = [k.comms[c]["_model_name"] for c in controls]
    picks = ([c for c, m in zip(controls, kinds) if m in SLIDERS]
             + [c for c, m in zip(controls, kinds) if m in CHOICES | MULTI])
    return [Widget(c, k.comms[c]["_model_name"], k.comms[c].get("description", ""), image, drag(k.comms[c], MOVES),
                   home(k.comms[c])) for c in picks]


def home(state: dict) -> dict:
    """The state a control starts in, as a move would send it."""
    return {"index": state["index"]} if state["_model_name"] in CHOICES | MULTI else {"value": state["value"]}


def drag(state: dict, n: int = 30) -> list[dict]:
    """``n`` moves of a control, as a hand drags it: from its value toward the far end, bouncing at the ends."""
    kind = state["_model_name"]
    if kind in MULTI:  # one option picked at a time, then none, round and round
        grid = [{"index": [i]} for i in range(len(state["_options_labels"]))] + [{"index": []}]
        return [grid[i % len(grid)] for i in range(n)]
    if kind in CHOICES:
        grid = [{"index": i} for i in range(len(state["_options_labels"]))]
        start = state["index"]
    else:
        lo, hi, step = state["min"], state["max"], state["step"]
        count = int(round((hi - lo) / step)) + 1
        exps = [lo + i * step for i in range(count)]
        if kind == "FloatLogSliderModel":
            values = [state["base"] ** e for e in exps]
        elif kind == "IntSliderModel":
            values = [int(round(e)) for e in exps]
        else:
            values = [round(e, 10) for e in exps]
        grid = [{"value": v} for v in values]
        start = min(range(count), key=lambda i: abs(values[i] - state["value"]))
    stride = max(1, round((len(grid) - 1) / n))
    i, direction, moves = start, (1 if start < len(grid) / 2 else -1), []
    while len(moves) < n:
        if not 0 <= i + direction * stride < len(grid):
            direction = -direction
        i += direction * stride
        moves.append(grid[i])
    return moves


def move(k: Kernel, w: Widget, state: dict, timeout: float = 30.0, after_idle: float = 5.0,
         ) -> tuple[float | None, bytes | None, float]:
    """Send one move; once its figure came and the kernel is idle again, return (ms until the figure left the
    kernel, the figure, the kernel's CPU ms for the move). A figure that is byte for byte the last one is not sent
    again, so a move that changes nothing on screen gets (None, None, …) ``after_idle`` s after the kernel idled."""
    cpu0 = k.cpu_ms()
    t0 = time.perf_counter()
    msg_id = k.send(w.control, state)
    ms, png, idle = None, None, False
    while png is None or not idle:
        msg = k.iopub(after_idle if idle else timeout)
        if msg is None:
            break
        got = figure_in(msg, w.image)
        if got is not None and png is None:
            ms, png = (time.perf_counter() - t0) * 1e3, got
        if msg["msg_type"] == "status" and msg["parent_header"].get("msg_id") == msg_id:
            idle = msg["content"]["execution_state"] == "idle"
    return ms, png, k.cpu_ms() - cpu0


def burst(k: Kernel, w: Widget, settle: float = 2.0) -> dict:
    """Send every move at once; count the frames and check that the last one shows the last value."""
    t0 = time.perf_counter()
    for state in w.moves:
        k.send(w.control, state)
    frames, last_at = [], None
    while True:
        msg = k.iopub(settle)
        if msg is None:
            break
        got = figure_in(msg, w.image)
        if got is not None:
            frames.append(got)
            last_at = time.perf_counter()
    settled_ms = (last_at - t0) * 1e3 if last_at else float("nan")
    # the figure of the last value, drawn on its own: move away, then back
    move(k, w, w.moves[-2])
    _, reference, _ = move(k, w, w.moves[-1])
    return {"frames": len(frames), "last_ok": bool(frames) and frames[-1] == reference, "settled_ms": settled_ms}


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[-1] if len(xs) > 1 else xs[0]


@contextlib.contextmanager
def chapter_kernel(nb: Path, prelude: str = "", which: int = 0):
    """A kernel in a temporary copy of notebooks/ that has run ``prelude`` and the chapter's cells before its widget
    cell number ``which``; yields (kernel, the widget cell's source, seconds the set-up took)."""
    *before, (widget_src, _) = setup_cells(nb, which)
    with tempfile.TemporaryDirectory(prefix="bench-widgets-") as tmp:
        cwd = Path(tmp) / "book"
        shutil.copytree(BOOK, cwd, ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
        k = Kernel(cwd, prelude)
        try:
            t0 = time.perf_counter()
            for src, may_raise in before:
                k.run(src, may_raise)
            yield k, widget_src, time.perf_counter() - t0
        finally:
            k.stop()


def show_widgets(k: Kernel, widget_src: str, name: str) -> tuple[list[Widget], list[str]]:
    """Run the widget cell; return its controls whose moves change the figure (two probe moves each, sliders
    first) and the labels of those whose probe moves changed nothing on screen."""
    k.result = None
    k.run(widget_src)
    candidates = find_widgets(k)
    k.drain()
    moving, still = [], []
    for w in candidates:
        probes = [move(k, w, state)[1] is not None for state in w.moves[:2]]
        (moving if all(probes) else still).append(w)
        move(k, w, w.home)  # back to its first value, so that the next control is probed from the defaults
    if not moving:
        raise RuntimeError(f"{name}: no control changes the figure")
    return moving, [w.label or w.kind for w in still]


def show_widget(k: Kernel, widget_src: str, name: str) -> Widget:
    """Run the widget cell; return its first control whose moves change the figure."""
    return show_widgets(k, widget_src, name)[0][0]


def drag_series(k: Kernel, w: Widget) -> dict:
    """The drag: each move after the last one's figure came. Returns the per-move numbers and the figures."""
    times, frames, cpu = [], [], []
    for state in w.moves:
        ms, png, cpu_ms = move(k, w, state)
        if ms is not None:
            times.append(ms)
            frames.append(png)
            cpu.append(cpu_ms)
    return {"times": times, "frames": frames, "cpu": cpu}


def summary(times: list[float], cpu: list[float]) -> dict:
    nan = float("nan")
    return {"median_ms": statistics.median(times) if times else nan, "p95_ms": p95(times) if times else nan,
            "min_ms": min(times, default=nan), "cpu_median_ms": statistics.median(cpu) if cpu else nan,
            "cpu_p95_ms": p95(cpu) if cpu else nan}


def measure(nb: Path, variant: str, with_burst: bool) -> list[dict]:
    """One row per control that changes the figure: a drag of it from the defaults (the others at their first
    values); the burst for the first control only."""
    rows = []
    for which in range(widget_count(nb)):
        rows += measure_widget(nb, variant, with_burst, which)
    return rows


def measure_widget(nb: Path, variant: str, with_burst: bool, which: int) -> list[dict]:
    rows = []
    with chapter_kernel(nb, VARIANTS[variant], which) as (k, widget_src, setup_s):
        controls, still = show_widgets(k, widget_src, nb.name)
        for n, w in enumerate(controls):
            d = drag_series(k, w)
            row = {"chapter": nb.stem, "control": f"{w.label or w.kind} ({w.kind.removesuffix('Model')})",
                   "moves": len(w.moves), "answered": len(d["times"]), "setup_s": setup_s, "still": still,
                   **summary(d["times"], d["cpu"]),
                   "png_kb": statistics.median(len(f) for f in d["frames"]) / 1e3 if d["frames"] else float("nan")}
            if with_burst and n == 0:
                k.drain()
                row.update(burst(k, w))
            move(k, w, w.home)
            rows.append(row)
    return rows


# Between designs in one kernel: the modules again as they are on disk, then the next design's patch.
RESET = ("import importlib, byhand.live, byhand.widgets\n"
         "importlib.reload(byhand.live)\nimportlib.reload(byhand.widgets)\n")


def compare(nb: Path, variants: list[str], rounds: int) -> dict:
    """Drag the widget under each design in turn, ``rounds`` times, in one kernel, so that the machine's load falls
    on every design alike. Returns variant -> summary of all its moves."""
    got = {v: {"times": [], "cpu": [], "kb": []} for v in variants}
    with chapter_kernel(nb) as (k, widget_src, _):
        for _ in range(rounds):
            for v in variants:
                k.run(RESET + VARIANTS[v])
                d = drag_series(k, show_widget(k, widget_src, nb.name))
                got[v]["times"] += d["times"]
                got[v]["cpu"] += d["cpu"]
                got[v]["kb"] += [len(f) / 1e3 for f in d["frames"]]
    return {v: {**summary(g["times"], g["cpu"]), "moves": len(g["times"]),
                "png_kb": statistics.median(g["kb"]) if g["kb"] else float("nan")} for v, g in got.items()}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def table(rows: list[dict], with_burst: bool) -> str:
    head = "| chapter | control moved | median ms | p95 ms | min ms | kernel CPU ms, median (p95) | PNG kB |"
    rule = "|---|---|---|---|---|---|---|"
    if with_burst:
        head += " burst: frames for 30 moves | last frame is the last value | settled ms |"
        rule += "---|---|---|"
    lines = [head, rule]
    for r in rows:
        ok = r["answered"] == r["moves"] and r["median_ms"] < MEDIAN_BAR_MS and r["p95_ms"] < P95_BAR_MS
        line = (f"| {r['chapter']} | {r['control']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f}{'' if ok else ' ✗'} "
                f"| {r['min_ms']:.1f} | {r['cpu_median_ms']:.1f} ({r['cpu_p95_ms']:.1f}) | {r['png_kb']:.0f} |")
        if with_burst and "frames" in r:
            line += f" {r['frames']} | {'yes' if r['last_ok'] else 'NO'} | {r['settled_ms']:.0f} |"
        elif with_burst:
            line += " | | |"
        lines.append(line)
    return "\n".join(lines)


def write_readme(text: str) -> None:
    """Replace the section between the two markers in benchmarks/README.md (added at the end the first time)."""
    begin, end = "<!-- bench_widget_latency: begin -->", "<!-- bench_widget_latency: end -->"
    readme = README.read_text()
    block = f"{begin}\n{text}\n{end}"
    if begin in readme:
        readme = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _m: block, readme, flags=re.S)
    else:
        readme = readme.rstrip("\n") + "\n\n" + block + "\n"
    README.write_text(readme)


def main_compare(nbs: list[Path], variants: list[str], rounds: int) -> int:
    print(f"load average before: {loadavg()}")
    print("| chapter | design | moves | median ms | p95 ms | min ms | kernel CPU ms, median (p95) | PNG kB |")
    print("|---|---|---|---|---|---|---|---|")
    for nb in nbs:
        for v, r in compare(nb, variants, rounds).items():
            print(f"| {nb.stem} | {v} | {r['moves']} | {r['median_ms']:.1f} | {r['p95_ms']:.1f} | {r['min_ms']:.1f} "
                  f"| {r['cpu_median_ms']:.1f} ({r['cpu_p95_ms']:.1f}) | {r['png_kb']:.0f} |", flush=True)
    print(f"load average after: {loadavg()}")
    return 0


def main() -> int:
    global MOVES
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapters", nargs="*", help="chapter numbers or names (default: every widget chapter)")
    ap.add_argument("--variant", default="book", choices=sorted(VARIANTS))
    ap.add_argument("--no-burst", action="store_true", help="skip the burst")
    ap.add_argument("--readme", action="store_true", help="write the table into benchmarks/README.md")
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--compare", nargs="+", choices=sorted(VARIANTS), metavar="VARIANT",
                    help="drag each chapter's widget under these designs in turn, in one kernel, and compare")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --compare (default 3)")
    ap.add_argument("--moves", type=int, default=30, help="moves per drag (default 30)")
    ap.add_argument("--answers-only", action="store_true",
                    help="fail only on a move not answered (or a stale burst), not on the time bar")
    args = ap.parse_args()
    MOVES = args.moves
    nbs = widget_chapters()
    if args.chapters:
        nbs = [p for p in nbs if any(p.stem.startswith(c) for c in args.chapters)]
    if args.compare:
        return main_compare(nbs, args.compare, args.rounds)
    with_burst = not args.no_burst
    load_before = loadavg()
    rows = []
    for nb in nbs:
        for row in measure(nb, args.variant, with_burst):
            rows.append(row)
            print(f"{row['chapter']:28} {row['control'][:24]:24} median {row['median_ms']:6.1f} ms  "
                  f"p95 {row['p95_ms']:6.1f} ms  min {row['min_ms']:6.1f}  "
                  f"CPU {row['cpu_median_ms']:5.1f}/{row['cpu_p95_ms']:5.1f}  "
                  f"({row['answered']}/{row['moves']} answered, set-up {row['setup_s']:.0f} s"
                  + (f"; burst {row['frames']} frames, last {'ok' if row['last_ok'] else 'STALE'})"
                     if "frames" in row else ")"), flush=True)
    still = sorted({f"{r['chapter']}: {', '.join(r['still'])}" for r in rows if r["still"]})
    load_after = loadavg()
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    text = (f"Measured {when}, variant `{args.variant}`, {os.cpu_count()} cores" + "; load average (1, 5, 15 min) "
            f"{load_before} before and {load_after} after the run. Every control whose moves change the figure is "
            "dragged from the defaults; the burst is sent to each widget's first control."
            + (f" Controls whose first moves from the defaults change nothing on screen: {'; '.join(still)}."
               if still else "") + "\n\n" + table(rows, with_burst))
    print()
    print(text)
    if args.readme:
        write_readme(text)
    if args.json:
        args.json.write_text(json.dumps({"load": [load_before, load_after], "variant": args.variant, "rows": rows},
                                        indent=1))
    bad = [f"{r['chapter']} {r['control']}" for r in rows if r["answered"] < r["moves"]
           or (not args.answers_only and not (r["median_ms"] < MEDIAN_BAR_MS and r["p95_ms"] < P95_BAR_MS))
           or (with_burst and "frames" in r and not r["last_ok"])]
    print(f"\nwidgets over the bar ({MEDIAN_BAR_MS:.0f} ms median, {P95_BAR_MS:.0f} ms p95), unanswered or stale: "
          f"{', '.join(bad) if bad else 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
