"""Browser check of a live widget: JupyterLab, a real kernel, a slider moved by the keyboard.

Starts JupyterLab headless on 127.0.0.1 (no token; `--allow-root` as root) in a temporary copy of notebooks/, so nothing
under notebooks/ changes. Opens a widget chapter (01_dot_products.ipynb by default) in Debian's Chromium through
Playwright, with every request off the loopback address blocked, and runs all cells from the Run menu. Then:
  - the widget's figure appears, and it is the picture of the controls' defaults;
  - pressing the right arrow on the slider's handle moves the slider one step, its readout shows the new value, and
    the figure changes each time, within a bar;
  - after the last press, the figure is the picture of the new value: pixel for pixel the same as a fresh matplotlib
    figure drawn by the chapter's own ``draw`` for that setting (the oracle runs the chapter's set-up in this process,
    with the Agg backend), and unlike the picture of the value before.
First it opens every readers' notebook, unexecuted, and reads it as a reader meets it: each Markdown cell rendered
and typeset by JupyterLab's own MathJax, which knows none of the book's macros; it fails on a MathJax error, an
undefined macro (MathJax's red text), raw MyST, TeX left untypeset or an image not shown.
Before any cell of the widget chapter runs, it reads that chapter as a reader meets it: the rendered prose shows its glued numbers (the
first glued number of the source, formatted as the page formats it) and no raw MyST markup (a role, a label line, a
directive fence). The notebook is trusted as `make lab` trusts it, so the static slider's script runs; and the
project's JupyterLab settings (tools/lab/overrides.json) keep the news pop-up away.
Prints the time from each key press to the new figure in the page (median, max). Run by `make check-lab`.
"""
from __future__ import annotations

import argparse
import ast
import re
import base64
import contextlib
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the venv's bin, where `jupyter` lives
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's; never a downloaded browser
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
PRESSES = 6  # right-arrow presses, one slider step each
MOVE_BAR_MS = 1000.0  # a press whose figure takes longer than this fails the check (latency is benchmarked elsewhere)

# Runs in the page: note when a key goes down and when the widget's image shows a new picture.
WATCH_JS = """(img) => {
  window.__keys = []; window.__frames = [];
  document.addEventListener('keydown', () => window.__keys.push(performance.now()), true);
  img.addEventListener('load', () => window.__frames.push([performance.now(), img.src]));
}"""
# Runs in the page: the bytes of the picture the widget's image shows now, base64.
IMAGE_B64_JS = """async (img) => {
  const buf = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
  let s = ''; for (let i = 0; i < buf.length; i += 8192) s += String.fromCharCode(...buf.subarray(i, i + 8192));
  return btoa(s);
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# JupyterLab settings for the check: every cell kept in the page (no virtual scrolling, which detaches cells that are
# out of view). The news pop-up is left to the project's own settings, which the check then tests.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
RAW_MYST = re.compile(r"\{[a-z]+(?::[a-z]+)?\}`|^\([A-Za-z0-9_.:-]+\)=\s*$|^(?::{3,}|`{3,})\{[a-z-]+\}", re.M)


def first_glued_number(nb_path: Path) -> tuple[int, str]:
    """(index among Markdown cells, text) of the first {glue:text} number of the chapter's source, formatted with
    Python's format() from the value the notebook's glue output holds: what the rendered prose must show."""
    import jupytext

    cells = jupytext.read(ROOT / "book" / f"{nb_path.stem}.md").cells
    nb = json.loads(nb_path.read_text())
    glued = {o["metadata"]["scrapbook"]["name"]: "".join(o["data"]["application/papermill.record/text/plain"])
             for c in nb["cells"] for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}
    md = [c.source for c in cells if c.cell_type == "markdown"]
    for k, src in enumerate(md):
        m = re.search(r"\{glue:text\}`([A-Za-z_0-9]+):([^`]*[eEfFgG])`", src)
        if m:
            return k, format(float(glued[m.group(1)]), m.group(2))
    raise RuntimeError(f"{nb_path.name}'s source glues no number")


def start_lab(root: Path, port: int, home: Path, log) -> subprocess.Popen:
    for rel, value in LAB_SETTINGS.items():
        path = home / "settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1",
               JUPYTERLAB_SETTINGS_DIR=str(home / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(home / "runtime"))
    cmd = [str(BIN / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.token=", "--ServerApp.password=", f"--ServerApp.root_dir={root}",
           # nothing from the network: no news feed, no update check, no PyPI listing of extensions
           "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly",
           "--LabApp.expose_app_in_browser=True"]  # window.jupyterapp: the check opens notebook after notebook in one page
    if os.getuid() == 0:
        cmd.append("--allow-root")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {proc.returncode}; its log is {log.name}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2):
                return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"JupyterLab did not answer on port {port} within 120 s; its log is {log.name}")


def chapter_oracle(nb_path: Path):
    """Run the chapter's code up to its widget cell in this process (Agg backend); return (draw, controls, box)."""
    os.environ["MPLBACKEND"] = "Agg"
    nb = json.loads(nb_path.read_text())
    ns: dict = {"__name__": "__chapter__"}
    cwd = os.getcwd()
    os.chdir(nb_path.parent)  # the chapter runs from its folder, as under JupyterLab
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in nb["cells"]:
                src = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
                if "interactive_view(" in src:
                    tree = ast.parse(src)
                    last = tree.body[-1]
                    assert isinstance(last, ast.Expr), "the widget cell must end in the interactive_view(...) call"
                    tree.body[-1] = ast.copy_location(ast.Assign([ast.Name("__box", ast.Store())], last.value), last)
                    exec(compile(ast.fix_missing_locations(tree), nb_path.name, "exec"), ns)
                    return ns["draw"], ns["controls"], ns["__box"]
                if src and "raises-exception" not in cell.get("metadata", {}).get("tags", []):
                    exec(compile(src, nb_path.name, "exec"), ns)
    finally:
        os.chdir(cwd)
    raise ValueError(f"{nb_path.name} has no widget cell")


def fresh_pixels(draw, setting: dict, figsize, dpi):
    """The oracle: a new live figure drawn whole for this one setting, in a new canvas. The widget in the page got
    there by moves, painting only the moving artists over the kept background; the unit tests check that the two
    paths agree pixel for pixel for every view, and this checks the page shows the same."""
    import numpy as np
    from PIL import Image

    from byhand.live import LiveFigure

    with Image.open(io.BytesIO(LiveFigure(draw, figsize, dpi).render(setting))) as im:
        return np.asarray(im.convert("RGBA"))


def png_pixels(b64: str):
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(b64))) as im:
        return np.asarray(im.convert("RGBA"))


def accept_kernel_dialog(page, wait_s: float = 15.0) -> None:
    """JupyterLab may ask which kernel to start (e.g. when the notebook names none): take the one it offers."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        button = page.query_selector(".jp-Dialog .jp-Dialog-button.jp-mod-accept")
        if button is not None:
            button.click()
            return
        idle = page.query_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        if idle and time.monotonic() > deadline - wait_s / 2:
            return  # the kernel is up and no dialog came
        page.wait_for_timeout(250)


# Runs in the page, once a notebook's Markdown has rendered: what a reader would see wrong in it.
READ_JS = """() => {
  const md = [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')];
  const texts = md.map(c => c.innerText);
  const maths = document.querySelectorAll('.jp-Notebook mjx-container').length;
  // MathJax marks a TeX error as <mjx-merror>, and an undefined macro as red text (mathcolor="red" in its MathML)
  const errors = [...document.querySelectorAll('.jp-Notebook mjx-merror')].map(e => e.textContent.slice(0, 60));
  const red = [...document.querySelectorAll('.jp-Notebook mjx-container [mathcolor="red"], '
      + '.jp-Notebook mjx-container mjx-mtext[style*="red"]')].map(e => e.textContent.slice(0, 60));
  const images = [...document.querySelectorAll('.jp-Notebook img')];
  const broken = images.filter(i => !(i.complete && i.naturalWidth > 0))
      .map(i => (i.getAttribute('alt') || i.getAttribute('src') || '').slice(0, 60));
  // an output JupyterLab cannot show (e.g. a glue record's private MIME type) reads "No renderer could be found"
  const norender = [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
      .filter(o => o.innerText.includes('No renderer could be found')).length;
  return {texts, maths, errors, red, images: images.length, broken, norender};
}"""
# Runs in the page: shut down every kernel (the notebooks are read, not run), with the page's XSRF cookie.
SHUT_KERNELS_JS = """async () => {
  const x = document.cookie.match(/_xsrf=([^;]+)/);
  const headers = x ? {'X-XSRFToken': decodeURIComponent(x[1])} : {};
  const kernels = await (await fetch('/api/kernels')).json();
  for (const k of kernels) await fetch('/api/kernels/' + k.id, {method: 'DELETE', headers});
  return kernels.length;
}"""
# TeX a reader's MathJax left as text: a $...$ span still holding a control sequence
UNTYPESET = re.compile(r"\$[^$\n]*\\[A-Za-z]+[^$\n]*\$")


def read_every_notebook(base: str, names: list[str], shots: Path, every_shot: bool = False
                        ) -> tuple[list[str], list[str]]:
    """Open each readers' notebook in JupyterLab, unexecuted, and read it as a reader meets it: every Markdown cell
    rendered and typeset by JupyterLab's own MathJax (which knows none of the book's macros). Returns (problems,
    one line per notebook)."""
    from playwright.sync_api import sync_playwright

    problems, lines = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((base, "data:", "blob:")) else r.abort())
        page.goto(f"{base}lab?reset", wait_until="domcontentloaded")  # JupyterLab loads once; each notebook opens in it
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands", timeout=120_000)
        page.evaluate("async () => { await window.jupyterapp.restored; }")  # every plugin's commands registered
        for name in names:
            panel = page.evaluate("async (path) => { if (window.__read) window.__read.dispose();"
                                  " window.__read = await window.jupyterapp.commands.execute('docmanager:open', {path});"
                                  " return window.__read.id; }", name)
            page.wait_for_selector(f"[id='{panel}'] .jp-MarkdownCell .jp-RenderedMarkdown", timeout=120_000)
            accept_kernel_dialog(page, wait_s=1.0)
            # typesetting is done when the count of typeset formulas stops growing
            count, still = -1, 0
            while still < 3:
                page.wait_for_timeout(400)
                now = page.evaluate("() => document.querySelectorAll('.jp-Notebook mjx-container').length")
                still, count = (still + 1, count) if now == count else (0, now)
            seen = page.evaluate(READ_JS)
            raw = [m.group(0) for t in seen["texts"] for m in [RAW_MYST.search(t)] if m]
            untypeset = [m.group(0)[:60] for t in seen["texts"] for m in [UNTYPESET.search(t)] if m]
            found = [f"{len(seen['errors'])} MathJax error(s): {seen['errors'][:2]}" if seen["errors"] else "",
                     f"{len(seen['red'])} undefined macro(s): {seen['red'][:3]}" if seen["red"] else "",
                     f"raw MyST: {raw[:2]}" if raw else "",
                     f"TeX left untypeset: {untypeset[:2]}" if untypeset else "",
                     f"{len(seen['broken'])} image(s) not shown: {seen['broken'][:2]}" if seen["broken"] else "",
                     f"{seen['norender']} output(s) JupyterLab cannot show" if seen["norender"] else ""]
            found = [f for f in found if f]
            problems += [f"{name}: {f}" for f in found]
            lines.append(f"  {'FAIL' if found else 'ok  '} {name}: {len(seen['texts'])} Markdown cells, "
                         f"{seen['maths']} formulas, {seen['images']} images")
            if found or every_shot:
                page.screenshot(path=str(shots / f"check_lab_read_{Path(name).stem}.png"), full_page=False)
            page.evaluate(SHUT_KERNELS_JS)  # no idle kernels pile up
        browser.close()
    return problems, lines


def drive(url: str, base: str, shots: Path, glued_at: tuple[int, str]) -> dict:
    """Open the notebook, run all cells, press the slider's right arrow; return what the page showed."""
    from playwright.sync_api import sync_playwright

    blocked, errors = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("pageerror", lambda e: errors.append(str(e)))

            def route(r):
                if r.request.url.startswith(base) or r.request.url.startswith(("data:", "blob:")):
                    r.continue_()
                else:
                    blocked.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(url, wait_until="domcontentloaded")
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
            accept_kernel_dialog(page)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
            page.wait_for_selector(".jp-MarkdownCell .jp-RenderedMarkdown", timeout=60_000)
            prose = page.evaluate("""() => [...document.querySelectorAll('.jp-MarkdownCell')]
                .map(c => (c.querySelector('.jp-RenderedMarkdown') || {innerText: ''}).innerText)""")
            strips = page.evaluate("() => document.querySelectorAll('.byhand-slider-strip figure').length")
            sliders = page.evaluate("() => document.querySelectorAll('.byhand-slider').length")
            page.screenshot(path=str(shots / "check_lab_prose.png"), full_page=False)
            t_run = time.monotonic()
            page.click(".lm-MenuBar-itemLabel:text-is('Run')")
            page.click(".lm-Menu-itemLabel:text-is('Run All Cells')")
            img = page.wait_for_selector(".jp-OutputArea-output img.widget-image", state="attached", timeout=600_000)
            # wait for the notebook to finish: every code cell numbered, the kernel idle
            page.wait_for_function("""() => {
                const busy = [...document.querySelectorAll('.jp-InputArea-prompt')]
                    .some(e => e.textContent.includes('*'));
                const ind = document.querySelector('.jp-Notebook-ExecutionIndicator');
                return !busy && ind && ind.dataset.status === 'idle'; }""", timeout=600_000, polling=500)
            run_s = time.monotonic() - t_run
            cell_errors = page.evaluate("""() => [...document.querySelectorAll(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")]
                .map(e => e.innerText.trim().split('\\n').at(-1)).filter(t => /Error|Exception/.test(t))""")
            img.scroll_into_view_if_needed()
            widget = img.evaluate_handle("el => el.closest('.widget-vbox')")
            handle = widget.as_element().query_selector(".widget-slider .noUi-handle")
            readout = widget.as_element().query_selector(".widget-slider .widget-readout")
            first = img.evaluate(IMAGE_B64_JS)
            readout_before = readout.inner_text()
            img.evaluate(WATCH_JS)
            handle.focus()
            latencies = []
            for _ in range(PRESSES):
                n = page.evaluate("() => window.__frames.length")
                page.keyboard.press("ArrowRight")
                try:
                    page.wait_for_function(f"() => window.__frames.length > {n}", timeout=30_000, polling="raf")
                except Exception:  # noqa: BLE001 - reported as a press without a new figure
                    latencies.append(float("inf"))
                    continue
                latencies.append(page.evaluate("() => window.__frames.at(-1)[0] - window.__keys.at(-1)"))
            page.wait_for_timeout(500)  # anything late would still land now
            last = img.evaluate(IMAGE_B64_JS)
            news = page.evaluate("""() => [...document.querySelectorAll('.jp-toast-message, .Toastify__toast')]
                .map(e => e.innerText).filter(t => /news/i.test(t))""")
            out = {"prose": prose, "strips": strips, "sliders": sliders, "news": news,
                   "run_s": run_s, "cell_errors": cell_errors, "first": first, "last": last, "latencies": latencies,
                   "readout_before": readout_before, "readout_after": readout.inner_text(),
                   "frames": page.evaluate("() => window.__frames.length")}
            page.screenshot(path=str(shots / "check_lab.png"), full_page=False)
        except Exception:
            page.screenshot(path=str(shots / "check_lab_failed.png"), full_page=False)
            print(f"check-lab: failed in the browser; screenshot in {shots / 'check_lab_failed.png'}", file=sys.stderr)
            raise
        finally:
            browser.close()
    out["blocked"], out["errors"] = sorted(set(blocked)), errors
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapter", default="01_dot_products.ipynb")
    ap.add_argument("--only", nargs="*", help="read only these notebooks (default: every readers' notebook)")
    ap.add_argument("--screenshots", action="store_true",
                    help="save each read notebook's first screen (else only those with a problem)")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}; `make check-lab` installs Debian's chromium", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="check-lab-") as tmp:
        tmp = Path(tmp)
        book = tmp / "notebooks"
        shutil.copytree(ROOT / "notebooks", book, ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
        shots = ROOT / "_build" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        port = free_port()
        base = f"http://127.0.0.1:{port}/"
        # trust the copy as `make lab` trusts the readers' notebooks (signatures in a data folder of the check's own)
        os.environ["JUPYTER_DATA_DIR"] = str(tmp / "data")
        subprocess.run([str(BIN / "jupyter"), "trust", str(book / args.chapter)], check=True, capture_output=True)
        glued_at = first_glued_number(ROOT / "notebooks" / args.chapter)
        with open(tmp / "lab.log", "w") as log:
            lab = start_lab(book, port, tmp, log)
            try:
                names = sorted(p.name for p in book.glob("*.ipynb")) if not args.only else args.only
                read_problems, read_lines = read_every_notebook(base, names, shots, args.screenshots)
                seen = drive(f"{base}lab/tree/{args.chapter}?reset", base, shots, glued_at)
            finally:
                lab.terminate()
                try:
                    lab.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    lab.kill()
            lab_log = (tmp / "lab.log").read_text()

        draw, controls, box = chapter_oracle(book / args.chapter)
        figsize, dpi = tuple(box.live.fig.get_size_inches()), box.live.fig.dpi
        name, slider = next((n, w) for n, w in controls.items() if hasattr(w, "step") and hasattr(w, "readout"))
        defaults = {n: w.value for n, w in controls.items()}
        moved = {**defaults, name: defaults[name] + PRESSES * slider.step}
        want_first = fresh_pixels(draw, defaults, figsize, dpi)
        want_last = fresh_pixels(draw, moved, figsize, dpi)

    problems = list(read_problems)
    print(f"check-lab: {len(read_lines)} readers' notebooks read in JupyterLab, unexecuted, as a reader opens them "
          f"(MathJax errors, undefined macros, raw MyST, untypeset TeX, images not shown):")
    print("\n".join(read_lines))
    lat = seen["latencies"]
    k, number = glued_at
    raw = [(i, m.group(0)) for i, text in enumerate(seen["prose"]) if (m := RAW_MYST.search(text))]
    if raw:
        problems.append(f"raw MyST markup in the rendered prose: {raw[:3]}")
    if k >= len(seen["prose"]) or number not in seen["prose"][k]:
        problems.append(f"Markdown cell {k} does not show the glued number {number}")
    if seen["sliders"] and seen["strips"] != 3 * seen["sliders"]:
        problems.append(f"the static sliders' script did not run ({seen['strips']} strip frames for "
                        f"{seen['sliders']} sliders): is the notebook trusted?")
    if seen["news"]:
        problems.append(f"JupyterLab's news pop-up showed: {seen['news'][:1]}")
    if seen["blocked"]:
        problems.append(f"the page tried to reach the network: {seen['blocked'][:3]}")
    if seen["errors"]:
        problems.append(f"JavaScript errors: {seen['errors'][:3]}")
    import numpy as np

    first, last = png_pixels(seen["first"]), png_pixels(seen["last"])
    if not np.array_equal(first, want_first):
        problems.append("the first figure is not the view at the controls' defaults")
    if not np.array_equal(last, want_last):
        problems.append(f"after {PRESSES} presses the figure is not the view at {name} = {moved[name]}")
    if np.array_equal(last, first) or np.array_equal(want_last, want_first):
        problems.append("the figure did not change (or the oracle cannot tell the two settings apart)")
    if float(seen["readout_after"]) != moved[name] or float(seen["readout_before"]) != defaults[name]:
        problems.append(f"the readout went {seen['readout_before']} -> {seen['readout_after']}, "
                        f"expected {defaults[name]} -> {moved[name]}")
    if any(ms > MOVE_BAR_MS for ms in lat):
        problems.append(f"a press took over {MOVE_BAR_MS:.0f} ms to show its figure (or never did): {lat}")
    if seen["cell_errors"]:
        problems.append(f"cells raised in JupyterLab: {seen['cell_errors'][:3]}")
    if "Traceback" in lab_log:
        problems.append("JupyterLab's log has a traceback")
    finite = [x for x in lat if x != float("inf")]
    print(f"check-lab: {args.chapter} as a reader opens it: {len(seen['prose'])} Markdown cells rendered, raw MyST "
          f"in {len(raw)}, glued number {number} shown in cell {k}: {number in seen['prose'][k]}; "
          f"{seen['sliders']} static slider(s) scripted (trusted)")
    print(f"check-lab: {args.chapter} ran all cells in {seen['run_s']:.0f} s; slider {name!r} moved "
          f"{seen['readout_before']} -> {seen['readout_after']} by {PRESSES} right-arrow presses, "
          f"{seen['frames']} new figures")
    if finite:
        print(f"  key press -> new figure in the page: median {statistics.median(finite):.0f} ms, "
              f"max {max(finite):.0f} ms ({', '.join(f'{x:.0f}' for x in lat)}); load average "
              f"{' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print(f"  figure after the presses equals the view drawn afresh at {name} = {moved[name]}: "
          f"{np.array_equal(last, want_last)}; differs from the first figure: {not np.array_equal(last, first)}")
    for msg in problems:
        print(f"FAIL {msg}")
    print("check-lab: passed" if not problems else f"check-lab: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
