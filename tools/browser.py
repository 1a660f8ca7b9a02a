"""What the browser checks share: the built site served on 127.0.0.1, Chromium's flags, the page opener, the waits.

tools/check_html.py, check_a11y.py and check_figures.py import from here, and this module imports none of them, so
tools/ has no import circle. ``SITE`` is the folder served (check_figures.py may point it at another).

Waits are on conditions, not on the clock: ``until(page, js, arg)`` waits until the JavaScript predicate ``js`` (a
function of ``arg``) is true in the page and says whether it became true within ``timeout`` ms; the caller reports
what did not happen, so a timeout is a finding, not an exception. ``settled(page)`` waits for the page to paint
twice: what a script queued for the next frame (measuring boxes, resizing after the window did) has run by then.
"""
from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's; any Chromium-family binary works
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
WIDE, NARROW = (1400, 900), (390, 844)
# pages Sphinx makes for itself, not chapters
SKIP = {"genindex.html", "search.html", "py-modindex.html"}
TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"


def until(page, js: str, arg=None, timeout: int = 3000) -> bool:
    try:
        page.wait_for_function(js, arg=arg, timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 - playwright's TimeoutError; the caller reports what did not happen
        return False


def settled(page) -> None:
    page.evaluate(TWO_FRAMES)


def toc_pages() -> list[str]:
    """The HTML path of every file listed in _toc.yml, in order."""
    names = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)", (ROOT / "_toc.yml").read_text(), re.M)
    return [f"{n}.html" for n in names]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the report
        pass


def serve() -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def open_page(page, base: str, rel: str, errors: list[str], blocked: list[str]) -> None:
    """Load a page with the network cut off, and wait for MathJax and the widget manager."""
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        try:
            if r.request.url.startswith(base):
                r.continue_()
            else:
                blocked.append(r.request.url)
                r.abort()
        except Exception:  # noqa: BLE001 - the page navigated away while the request was pending
            pass

    page.route("**/*", route)
    page.goto(base + rel, wait_until="load")
    # MathJax typesets after load; wait for it when the page has math
    page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)", timeout=20000)
    page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
    if "application/vnd.jupyter.widget-state+json" in (SITE / rel).read_text(errors="replace"):
        try:
            page.wait_for_selector(".widget-subarea .jupyter-widgets", timeout=20000)
        except Exception:  # noqa: BLE001 - reported by the caller
            pass
    settled(page)
