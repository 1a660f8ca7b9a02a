"""Browser check of the built book: every page, as a reader with no network sees it.

Serves _build/html on 127.0.0.1, opens every page in Debian's headless Chromium (through Playwright) with
every request off the loopback address blocked, and checks that:
  - no raw TeX is left in the visible text (MathJax typeset everything),
  - every <img> loaded,
  - the browser logged no JavaScript error and nothing tried to reach the network,
  - pages that saved widget state show rendered widget views,
  - the left navigation lists every chapter in _toc.yml,
  - static sliders move: setting a player's range input changes the image it shows,
  - the page, without the shared assets under _static/, weighs less than 2 MB.
It saves one screenshot per page under _build/screenshots/ and prints a line per page. Run by `make check-html`.
"""
from __future__ import annotations

import functools
import http.server
import os
import re
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")  # Debian's; any Chromium-family binary works
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
MAX_PAGE_BYTES = 2_000_000
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\begin\{|\\frac\{")
# pages Sphinx makes for itself, not chapters
SKIP = {"genindex.html", "search.html", "py-modindex.html"}


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


def page_weight(path: Path) -> int:
    """Bytes of the page and of the files it references outside _static/ (the vendored assets are shared)."""
    html = path.read_text(errors="replace")
    total = len(html.encode())
    for ref in set(re.findall(r'(?:src|href)="([^"#?]+)', html)):
        if ref.startswith(("http", "data:", "mailto:")) or "_static/" in ref or ref.endswith(".html"):
            continue
        target = (path.parent / ref).resolve()
        if target.is_file():
            total += target.stat().st_size
    return total


def check_page(page, base: str, rel: str, chapters: list[str], problems: list[str]) -> str:
    errors: list[str] = []
    blocked: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
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
    html = (SITE / rel).read_text(errors="replace")
    has_widgets = "application/vnd.jupyter.widget-state+json" in html
    if has_widgets:
        try:
            page.wait_for_selector(".jupyter-widgets, .widget-container, .lm-Widget", timeout=20000)
        except Exception:  # noqa: BLE001 - reported below
            pass
    page.wait_for_timeout(300)
    found = []

    # the reader's text: the article without code listings, where TeX source is legitimate
    text = page.evaluate("""() => {
        const root = (document.querySelector('article') || document.body).cloneNode(true);
        root.querySelectorAll('pre, code, .highlight, script, style').forEach(n => n.remove());
        return root.innerText; }""")
    tex = RAW_TEX.findall(text)
    if tex:
        found.append(f"raw TeX left in the text ({len(tex)}x, e.g. {tex[0]!r})")
    broken = page.evaluate("() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                           ".map(i => (i.getAttribute('src') || '').slice(0, 60))")
    if broken:
        found.append(f"{len(broken)} image(s) did not load: {broken[:3]}")
    if errors:
        found.append(f"JavaScript console errors: {errors[:3]}")
    if blocked:
        found.append(f"tried to reach the network: {sorted(set(blocked))[:3]}")
    n_widgets = page.evaluate("() => document.querySelectorAll('.jupyter-widgets, .widget-container').length")
    if has_widgets and n_widgets == 0:
        found.append("the page saved widget state but shows no widget view")
    nav = page.evaluate("() => [...document.querySelectorAll('nav.bd-links a, .bd-sidebar a')].map(a => a.href)")
    missing = [c for c in chapters if not any(h.split("#")[0].endswith(c) for h in nav)]
    if missing and rel != "index.html":
        found.append(f"the left navigation lacks {missing}")

    moved = ""
    sliders = page.query_selector_all("input.anim-slider, .animation input[type=range]")
    if sliders:
        img = page.evaluate("() => document.querySelector('.animation img').getAttribute('src')")
        slider = sliders[0]
        last = slider.get_attribute("max") or "1"
        slider.evaluate("(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }", last)
        page.wait_for_timeout(200)
        after = page.evaluate("() => document.querySelector('.animation img').getAttribute('src')")
        if after == img:
            found.append("moving the static slider did not change its frame")
        else:
            moved = f", {len(sliders)} static slider(s), moved"
        slider.evaluate("el => { el.value = 0; el.dispatchEvent(new Event('input')); }")

    weight = page_weight(SITE / rel)
    if weight > MAX_PAGE_BYTES:
        found.append(f"page weighs {weight / 1e6:.2f} MB (> 2 MB)")
    shot = SHOTS / (rel.replace("/", "__").removesuffix(".html") + ".png")
    page.screenshot(path=str(shot), full_page=True)
    for f in found:
        problems.append(f"{rel}: {f}")
    status = "ok" if not found else "FAIL"
    return f"{status:4} {rel}: {weight / 1e3:.0f} kB, {n_widgets} widget view(s){moved}"


def main() -> int:
    if not (SITE / "index.html").exists():
        print("no built book: run `make book` first")
        return 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    chapters = toc_pages()
    pages = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts and p.name not in SKIP
                   and 'http-equiv="Refresh"' not in p.read_text(errors="replace"))  # not the root redirect
    server, base = serve()
    problems: list[str] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            for rel in pages:
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                print(check_page(page, base, rel, chapters, problems), flush=True)
                context.close()
            browser.close()
    finally:
        server.shutdown()
    for p in problems:
        print("problem:", p)
    print(f"{len(pages)} pages checked, {len(problems)} problem(s); screenshots in {SHOTS.relative_to(ROOT)}/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
