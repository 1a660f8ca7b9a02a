"""Browser check of the built book: every page, as a reader with no network sees it.

Serves _build/html on 127.0.0.1 and opens every page in Debian's headless Chromium (through Playwright), with every
request off the loopback address blocked and with real scrollbars (Playwright's --hide-scrollbars is dropped, so a
scroll box shows its bar as it does on a desktop). Each page is checked at a 1400 px wide window, then at 390 px
(a phone). A finding is reported per page, in one of these categories; any finding fails the check:

  tex          raw TeX left in the visible text (MathJax typeset everything)
  image        an <img> that did not load
  console      a JavaScript error or warning in the console
  network      a request that tried to leave the machine
  widget       the page saved widget state but shows no widget view
  nav          the left navigation lacks a chapter listed in _toc.yml
  slider       a static slider whose frame (or its caption line) does not change when its range input moves
  live         a live control (slider, dropdown, button, box) that a reader could still move with no kernel; a
               widget without the note that points to the static slider; a drag that moved a readout
  answer       an exercise's answer box that the page's script did not enable, or that does not answer a typed
               number as it should: in a sample of boxes per page (first, middle, last) the right answer, typed to
               the fewest decimals the tolerance allows, must get "Right."; a known wrong answer its own hint; a
               number far off "too high"; text that is no number a request for a number
  weight       the page, without the shared assets under _static/, weighs 2 MB or more
  clip         at 1400 px, with every "Show all …" box open: a math display, table, code block, output, figure or
               widget wider than the box it is shown in, unless the reader can reach the rest in a box that visibly
               scrolls (see below) and that says so without its scrollbar: a named region (role, aria-label,
               tabindex 0) with the line "Continues to the right" under it (_theme/exercises.js), because phones
               and Macs draw no scrollbar until one scrolls
  math-scroll  at 1400 px: a math display outside a "Show all …" box (byhand.display's <details>) that only fits
               by scrolling: written-out arithmetic must fit the text column
  page-scroll  at 390 px: the page itself scrolls sideways (document.scrollingElement.scrollWidth > innerWidth)
  clip-390     at 390 px: as `clip`
  keys         on a few pages, the keyboard-only walk of tools/check_keyboard.py failed (Tab to an answer box, a
               static slider, a "Show all …" box, a box that scrolls, a phone figure's button; Enter, arrows)
  figure-alt   an image whose text alternative is empty or a file name, a figure whose description names no
               number, a static slider frame described by its label alone (tools/check_figures.py)
  a11y         axe-core's WCAG 2.1 A/AA rules, in light and dark mode at both widths: a line per violating element
               (mode, width, rule, selector); and, at 1400 px, a typeset formula with no assistive MathML or speech
               (tools/check_a11y.py)
  search       the search page, searched for a word whose results quote formulas: no result, raw TeX in a
               summary, or no formula typeset (its axe and console findings are reported as above)

"Visibly scrolls": the element, or the first ancestor that cuts its overflow, has computed overflow-x auto or
scroll, content wider than its box (scrollWidth > clientWidth), and a horizontal scrollbar that takes room
(offsetHeight − clientHeight − vertical borders ≥ 4 px). An ancestor with overflow-x hidden or clip that cuts the
content is clipping; content that spills past the right edge of the text column with nothing cutting it is
clipping too (it runs under the page's margin or off the screen).

What a page's HTML holds is checked on every page: axe at both widths, typesetting, images, figures' text
alternatives, navigation, what fits at 1400 and 390 px, console errors, network requests, page weight, every number's
provenance data, the answer boxes (typed answers, checked in the page). Behaviour that one script gives every page
(the popovers driven by hover, focus and Escape, the static sliders moved, the keyboard-only walk, the live widgets'
saved views) is driven on the representative chapters in SHOWN, which between them hold every kind of control.

Screenshots go to _build/screenshots/: the chapters in SHOWN at 1400 px, 390 px and in dark mode, and any page with a
finding at 1400 px. It prints a line per page, the findings, a count per category and the heaviest page.
Run by `make check-html`; pages are checked by WORKERS browsers at once (BYHAND_HTML_WORKERS, default 2). Waits are
on conditions (tools/browser.py: a new frame, a verdict, a box opened, two painted frames), never on the clock.

Why a script on Playwright's sync API rather than pytest-playwright and axe-playwright-python (considered for issue
30): a page here yields findings in a dozen categories, all reported together with a count per category, where a test
per page would stop at its first failed assert or need the same collecting inside it; two browsers take pages from one
queue, which pytest-xdist would do with a process and a server per worker; and axe-core is the copy vendored into
_vendor/axe/ by `make vendor` (pinned, offline), where axe-playwright-python bundles its own axe version, which would
move with that package's releases. The fixtures pytest-playwright gives (a browser, a page) are a few lines here.
"""
from __future__ import annotations

import collections
import json
import os
import queue
import re
import sys
import threading
from pathlib import Path

from playwright.sync_api import sync_playwright

import browser  # the served site, the browser's flags, the page opener, the waits (tools/browser.py)
from browser import CHROMIUM, FLAGS, NARROW, ROOT, SITE, SKIP, WIDE, open_page, serve, settled, toc_pages, until
from check_keyboard import check_page as check_keyboard  # the keyboard-only walk (tools/check_keyboard.py)
from check_a11y import check_search, page_findings as a11y_findings  # axe-core, MathML (tools/check_a11y.py)
from check_provenance import check_page as check_provenance  # the numbers' popovers (tools/check_provenance.py)
from check_figures import check_page as check_figures  # the figures' text alternatives (tools/check_figures.py)

SHOTS = ROOT / "_build" / "screenshots"
MAX_PAGE_BYTES = 2_000_000
# Browsers checking pages at once (one thread and one Chromium each): one browser left two cores two-thirds idle,
# waiting on page loads and on MathJax. BYHAND_HTML_WORKERS=1 checks one page at a time.
WORKERS = int(os.environ.get("BYHAND_HTML_WORKERS", "2"))
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$|\\begin\{|\\frac\{")
# representative chapters: their shared behaviour is driven, and they are photographed at both widths and in dark mode
# (01: a live widget, static sliders, answer boxes, folded cells; 13: heatmaps and a wide matrix; 22: a long backward
# page; 25: tables of updates; 40: the trained model's widgets and the largest page)
SHOWN = ("01_", "13_", "22_", "25_", "40_")

# The items whose width is checked, by category (inside the article only).
ITEMS = {
    "math": "div.math",
    "table": "table",
    "code": "div.highlight pre",
    "output": ".cell_output pre",
    "figure": ".cell_output img, .byhand-slider",
    "widget": ".widget-subarea",
}

# For every item: "fits", "scrolls" (in a box with a visible scrollbar) or "clipped: <why>"; see the module docstring.
FIT_JS = """(items) => {
  const article = document.querySelector('article.bd-article') || document.querySelector('article') || document.body;
  const edge = article.getBoundingClientRect().right - parseFloat(getComputedStyle(article).paddingRight);
  const bar = el => {
    const cs = getComputedStyle(el);
    return el.offsetHeight - el.clientHeight - parseFloat(cs.borderTopWidth) - parseFloat(cs.borderBottomWidth);
  };
  const label = el => {
    const t = (el.innerText || el.getAttribute('alt') || el.className || el.tagName).replace(/\\s+/g, ' ').trim();
    return t.slice(0, 70);
  };
  const out = [];
  for (const [kind, selector] of Object.entries(items)) {
    for (const el of article.querySelectorAll(selector)) {
      if (!el.getClientRects().length) continue;  // not displayed (a closed <details>, a hidden output)
      if (kind === 'math' && el.closest('details:not([open])')) continue;
      let status = null, box = null;
      // the item's content, or the box that holds it, may be cut by the item itself or by an ancestor
      for (let a = el; a && a !== article.parentElement; a = a.parentElement) {
        const cs = getComputedStyle(a);
        const inner = a === el ? el : a;
        const over = inner.scrollWidth > inner.clientWidth + 1;
        // MathJax's display box sits inside div.math: the display is the mjx-container
        if (a === el && kind === 'math') {
          const mjx = el.querySelector('mjx-container');
          if (mjx && mjx.scrollWidth > mjx.clientWidth + 1) {
            const mcs = getComputedStyle(mjx);
            status = (['auto', 'scroll'].includes(mcs.overflowX) && bar(mjx) >= 4) ? 'scrolls'
                   : 'clipped: the math is cut at ' + mjx.clientWidth + ' px of ' + mjx.scrollWidth + ' px';
            box = mjx;
            break;
          }
        }
        if (!over || a === document.body) continue;
        if (['auto', 'scroll'].includes(cs.overflowX)) {
          status = bar(a) >= 4 ? 'scrolls' : 'clipped: a scroll box with no visible scrollbar (' + a.className + ')';
          box = a;
          break;
        }
        if (['hidden', 'clip'].includes(cs.overflowX)) {
          status = 'clipped: cut at ' + a.clientWidth + ' px of ' + a.scrollWidth + ' px (' + (a.className || a.tagName) + ')';
          break;
        }
      }
      if (!status) {
        const r = el.getBoundingClientRect();
        status = r.right > edge + 1 ? 'clipped: runs ' + Math.round(r.right - edge) + ' px past the text column' : 'fits';
      }
      // a box that scrolls must say so where no scrollbar is drawn (phones, Macs): a named, focusable region with
      // the cue line under it (_theme/exercises.js)
      if (status === 'scrolls') {
        const cue = (box.closest('div.math') || box).nextElementSibling;
        const named = box.tabIndex >= 0 && box.getAttribute('role') && box.getAttribute('aria-label');
        const shown = cue && cue.classList.contains('byhand-scroll-cue') && cue.getClientRects().length > 0;
        if (!named) status = 'clipped: scrolls, but is not a named region that Tab reaches (' + (box.className || box.tagName) + ')';
        else if (!shown) status = 'clipped: scrolls, but no line under it says that it continues';
      }
      out.push({kind, status, label: label(el), inFull: !!el.closest('details.byhand-full')});
    }
  }
  return out;
}"""

# Every control inside a rendered widget that a reader could still use: visible and not disabled.
LIVE_JS = """() => {
  const live = [];
  for (const el of document.querySelectorAll('.widget-subarea input, .widget-subarea select, .widget-subarea button,'
      + ' .widget-subarea textarea, .widget-subarea [contenteditable="true"], .widget-subarea .noUi-handle')) {
    if (!el.getClientRects().length) continue;
    let enabled;
    if (el.classList.contains('noUi-handle')) enabled = !el.closest('.noUi-target').hasAttribute('disabled');
    else if (el.hasAttribute('contenteditable')) enabled = el.isContentEditable;
    else enabled = !el.disabled;
    if (enabled) live.push((el.closest('.widget-inline-hbox, .widget-box') || el).innerText.trim().slice(0, 40) || el.tagName);
  }
  const views = document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]').length;
  const notes = document.querySelectorAll('.byhand-kernel-note').length;
  return {live, views, notes};
}"""


def page_weight(path: Path) -> int:
    """Bytes of the page and of the files it references outside _static/ (the vendored assets are shared)."""
    html = path.read_text(errors="replace")
    total = len(html.encode())
    for ref in set(re.findall(r'(?:src|href)="([^"#?]+)', html)):
        # _sources/ holds the download menu's files (.md, .ipynb): fetched only when a reader asks for them
        if ref.startswith(("http", "data:", "mailto:")) or "_static/" in ref or "_sources/" in ref or \
                ref.endswith(".html"):
            continue
        target = (path.parent / ref).resolve()
        if target.is_file():
            total += target.stat().st_size
    return total


# Opens every closed "Show all …" box (byhand.display) and says how many it opened (they are closed again after).
OPEN_FULL_JS = """() => {
  const opened = [...document.querySelectorAll('details.byhand-full:not([open])')];
  opened.forEach(d => { d.open = true; });
  return opened.length;
}"""


def fit_findings(page, width: int) -> list[tuple[str, str]]:
    """(category, text) for each item that does not fit at this window width, with every "Show all …" box open:
    an item fits, or it scrolls in a box that is a named region Tab reaches, with a line under it that says so."""
    found = []
    if page.evaluate(OPEN_FULL_JS):
        settled(page)  # the page's script measures the boxes again, in the frame after one opens
    items = page.evaluate(FIT_JS, ITEMS)
    page.evaluate("() => document.querySelectorAll('details.byhand-full[open]').forEach(d => { d.open = false; })")
    for item in items:
        where = f"{item['kind']} “{item['label']}”"
        if item["status"].startswith("clipped"):
            found.append(("clip" if width == WIDE[0] else "clip-390", f"{where}: {item['status']}"))
        elif item["status"] == "scrolls" and width == WIDE[0] and item["kind"] == "math" and not item["inFull"]:
            found.append(("math-scroll", f"{where}: fits only by scrolling at {width} px"))
    return found


def check_sliders(page) -> tuple[list[tuple[str, str]], int]:
    """Move every static slider to its last frame: the image, its text alternative and the caption line above it
    must change; the Next button must step one frame from the start."""
    found, moved = [], 0
    for k, player in enumerate(page.query_selector_all(".byhand-slider")):
        slider = player.query_selector("input[type=range]")
        img = player.query_selector("img.byhand-slider-img")
        caption = player.query_selector(".byhand-frame-label")
        if slider is None or img is None or caption is None:
            found.append(("slider", f"static slider {k} has no range input, image or caption line"))
            continue
        before = (img.get_attribute("src"), img.get_attribute("alt"), caption.text_content())
        slider.evaluate("el => { el.value = el.max; el.dispatchEvent(new Event('input')); }")
        until(page, "([im, src]) => im.getAttribute('src') !== src", [img, before[0]], timeout=2000)
        after = (img.get_attribute("src"), img.get_attribute("alt"), caption.text_content())
        if after[0] == before[0]:
            found.append(("slider", f"moving static slider {k} did not change its frame"))
        elif after[2] == before[2]:
            found.append(("slider", f"moving static slider {k} did not change its caption line ({before[2]!r})"))
        elif not after[1]:
            found.append(("slider", f"static slider {k}'s last frame has no text alternative"))
        else:
            moved += 1
        slider.evaluate("el => { el.value = 0; el.dispatchEvent(new Event('input')); }")
        player.query_selector(".byhand-slider-next").click()
        if slider.evaluate("el => el.value") != "1":
            found.append(("slider", f"static slider {k}'s Next button did not step to frame 1"))
        slider.evaluate("el => { el.value = 0; el.dispatchEvent(new Event('input')); }")
    return found, moved


def typed(x: float, tol: float) -> str:
    """``x`` as a reader would type it: the fewest decimals (up to 10) that land within half the tolerance."""
    for d in range(11):
        if abs(round(x, d) - x) <= tol / 2:
            return f"{x:.{d}f}"
    return repr(x)


def check_answers(page) -> tuple[list[tuple[str, str]], int]:
    """Every answer box is enabled; in a sample of them, right, known-wrong, far-off and non-numbers get the right
    verdict. Returns the findings and how many boxes were tried."""
    found = []
    boxes = page.query_selector_all(".en-exercise")
    if not boxes:
        return found, 0
    idle = [b for b in boxes if b.get_attribute("data-ready") != "1"]
    if idle:
        found.append(("answer", f"{len(idle)} of {len(boxes)} answer box(es) were not enabled by the page's script"))
        return found, 0
    sample = sorted({0, len(boxes) // 2, len(boxes) - 1})
    for k in sample:
        box = boxes[k]
        data = json.loads(box.get_attribute("data-exercise"))
        key = data["key"]
        entry, button = box.query_selector("input"), box.query_selector("button")
        far = data["answer"] + 1000 * data["tol"] + abs(data["answer"]) + 1
        tries = [(typed(data["answer"], data["tol"]), "Right."),
                 (typed(far, data["tol"]), "Not yet: that is too high.")]
        # a known mistake is matched within its own tolerance where it carries one ([hint, value, tol])
        tries += [(typed(w[1], w[2] if len(w) > 2 else data["tol"]), "Not yet: " + w[0]) for w in data["wrong"][:2]]
        tries.append(("twelve", "Type a number"))
        for text, want in tries:
            entry.scroll_into_view_if_needed()
            entry.fill(text)
            button.click()
            got = box.query_selector(".en-feedback").inner_text()
            if not got.startswith(want):
                found.append(("answer", f"exercise {key}: typing {text!r} gave {got!r}, expected {want!r}…"))
        entry.fill("")
        page.evaluate("b => { b.classList.remove('en-right', 'en-wrong');"
                      " b.querySelector('.en-feedback').textContent = ''; }", box)
    return found, len(sample)


def check_live(page) -> tuple[list[tuple[str, str]], int]:
    """No control that needs a kernel may be usable; every widget has its note; a drag moves nothing."""
    found = []
    state = page.evaluate(LIVE_JS)
    if state["live"]:
        found.append(("live", f"{len(state['live'])} live control(s) usable with no kernel, e.g. {state['live'][:3]}"))
    if state["notes"] < state["views"]:
        found.append(("live", f"{state['views'] - state['notes']} widget(s) without the note that points to the "
                              "static slider"))
    handle = page.query_selector(".widget-subarea .noUi-handle")
    if handle is not None and handle.is_visible():
        readout = page.query_selector(".widget-subarea .widget-readout")
        text = readout.inner_text() if readout else None
        handle.scroll_into_view_if_needed()
        box = handle.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 120, box["y"] + box["height"] / 2, steps=5)
        page.mouse.up()
        settled(page)  # a readout that a drag changed has changed by the next frame
        page.evaluate("() => window.getSelection().removeAllRanges()")  # the drag selects text; not for the photo
        if readout is not None and readout.inner_text() != text:
            found.append(("live", f"dragging a slider with no kernel changed its readout ({text!r} → "
                                  f"{readout.inner_text()!r})"))
    return found, state["views"]


def shot_name(rel: str, suffix: str = "") -> Path:
    return SHOTS / (rel.replace("/", "__").removesuffix(".html") + suffix + ".png")


def full_shot(page, rel: str, suffix: str = "") -> None:
    """A screenshot of the whole page. Chromium's full-page capture leaves out the scrollbars of inner boxes, so the
    window is made as tall as the page instead, and photographed as it is."""
    width = page.viewport_size["width"]
    height = min(page.evaluate("() => document.documentElement.scrollHeight"), 32000)
    page.set_viewport_size({"width": width, "height": height})
    settled(page)
    page.screenshot(path=str(shot_name(rel, suffix)))


def check_page(browser, base: str, rel: str, chapters: list[str]) -> tuple[list[tuple[str, str]], str, int]:
    found: list[tuple[str, str]] = []
    errors: list[str] = []
    blocked: list[str] = []
    html = (SITE / rel).read_text(errors="replace")
    has_widgets = "application/vnd.jupyter.widget-state+json" in html
    drive = rel.split("/")[-1].startswith(SHOWN)  # drive the shared behaviour here (see the module docstring)

    # ---- 1400 px: everything
    context = browser.new_context(viewport={"width": WIDE[0], "height": WIDE[1]})
    page = context.new_page()
    open_page(page, base, rel, errors, blocked)
    found += a11y_findings(page, WIDE[0])  # first, before the checks below move sliders and open boxes
    # the reader's text: the article without code listings, where TeX source is legitimate
    text = page.evaluate("""() => {
        const root = (document.querySelector('article') || document.body).cloneNode(true);
        root.querySelectorAll('pre, code, .highlight, script, style').forEach(n => n.remove());
        return root.innerText; }""")
    tex = RAW_TEX.findall(text)
    if tex:
        found.append(("tex", f"raw TeX left in the text ({len(tex)}x, e.g. {tex[0]!r})"))
    broken = page.evaluate("() => [...document.images].filter(i => !(i.complete && i.naturalWidth > 0))"
                           ".map(i => (i.getAttribute('src') || '').slice(0, 60))")
    if broken:
        found.append(("image", f"{len(broken)} image(s) did not load: {broken[:3]}"))
    n_widgets = page.evaluate("() => document.querySelectorAll('.widget-subarea .jupyter-widgets').length")
    if has_widgets and n_widgets == 0:
        found.append(("widget", "the page saved widget state but shows no widget view"))
    nav = page.evaluate("() => [...document.querySelectorAll('nav.bd-links a, .bd-sidebar a')].map(a => a.href)")
    missing = [c for c in chapters if not any(h.split("#")[0].endswith(c) for h in nav)]
    if missing and rel != "index.html":
        found.append(("nav", f"the left navigation lacks {missing}"))
    found += fit_findings(page, WIDE[0])
    if drive:
        found += check_keyboard(page, rel, WIDE[0])
    slider_found, moved = check_sliders(page) if drive else ([], 0)
    found += slider_found
    live_found, views = check_live(page) if has_widgets and drive else ([], 0)
    found += live_found
    answer_found, answered = check_answers(page)
    found += answer_found
    figure_found, _ = check_figures(page)  # every image's text alternative: no file name; a figure names a number
    found += figure_found
    if drive or found:
        full_shot(page, rel)
    found += check_provenance(page, rel, SITE, drive=drive)  # after the photo: it opens cells and follows links
    context.close()

    # ---- 390 px: the page never scrolls sideways; wide things scroll in their own box
    context = browser.new_context(viewport={"width": NARROW[0], "height": NARROW[1]}, is_mobile=False)
    page = context.new_page()
    open_page(page, base, rel, errors, blocked)
    sideways = page.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
    if sideways[0] > sideways[1]:
        culprits = page.evaluate("""(w) => [...document.querySelectorAll('body *')]
            .filter(e => e.getClientRects().length && e.getBoundingClientRect().right > w + 1
                     && !e.closest('.bd-sidebar-primary, .bd-sidebar-secondary'))
            .slice(0, 3).map(e => e.tagName.toLowerCase() + '.' + String(e.className).split(' ')[0])""", NARROW[0])
        found.append(("page-scroll", f"the page scrolls sideways at {NARROW[0]} px ({sideways[0]} px wide; "
                                     f"e.g. {culprits})"))
    found += fit_findings(page, NARROW[0])
    found += a11y_findings(page, NARROW[0], math=False)  # before the walk opens boxes and moves sliders
    if drive:
        found += check_keyboard(page, rel, NARROW[0])
        full_shot(page, rel, "-390")
    context.close()

    # ---- dark mode, for the chapters in SHOWN
    if drive:
        context = browser.new_context(viewport={"width": WIDE[0], "height": WIDE[1]}, color_scheme="dark")
        context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
        page = context.new_page()
        open_page(page, base, rel, errors, blocked)
        full_shot(page, rel, "-dark")
        context.close()

    if errors:
        found.append(("console", f"JavaScript console errors or warnings: {sorted(set(errors))[:3]}"))
    if blocked:
        found.append(("network", f"tried to reach the network: {sorted(set(blocked))[:3]}"))
    weight = page_weight(SITE / rel)
    if weight >= MAX_PAGE_BYTES:
        found.append(("weight", f"page weighs {weight / 1e6:.2f} MB (≥ 2 MB)"))
    status = "ok" if not found else "FAIL"
    sliders = f", {moved} static slider(s) moved" if moved else ""
    answers = f", {answered} answer box(es) tried" if answered else ""
    return found, f"{status:4} {rel}: {weight / 1e3:.0f} kB, {views} widget view(s){sliders}{answers}", weight


def main() -> int:
    if not (SITE / "index.html").exists():
        print("no built book: run `make book` first")
        return 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    chapters = toc_pages()
    pages = sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts and p.name not in SKIP
                   and 'http-equiv="Refresh"' not in p.read_text(errors="replace"))  # not the root redirect
    pages.append("search.html")  # checked on its own terms (check_a11y.check_search), with a query
    only = sys.argv[1:]  # optional: check only pages whose path contains one of these strings
    if only:
        pages = [p for p in pages if any(o in p for o in only)]
    server, base = serve()
    results: dict[str, tuple[list[tuple[str, str]], str, int]] = {}
    todo = queue.SimpleQueue()
    for rel in pages:
        todo.put(rel)
    failures: list[BaseException] = []

    def worker() -> None:
        """One browser of its own (Playwright's sync API is one instance per thread), taking pages until none is
        left. A page's screenshots and findings depend only on that page, so the order pages go in does not matter."""
        try:
            with sync_playwright() as pw:
                # real scrollbars, as on a desktop: whether a box visibly scrolls is part of the check
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS,
                                             ignore_default_args=["--hide-scrollbars"])
                while True:
                    try:
                        rel = todo.get_nowait()
                    except queue.Empty:
                        break
                    results[rel] = (check_search(browser, base, RAW_TEX) if rel == "search.html"
                                    else check_page(browser, base, rel, chapters))
                    print(results[rel][1], flush=True)
                browser.close()
        except BaseException as e:  # noqa: BLE001 - raised again in the main thread, below
            failures.append(e)

    try:
        threads = [threading.Thread(target=worker) for _ in range(max(1, min(WORKERS, len(pages))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        server.shutdown()
    if failures:
        raise failures[0]
    problems = [(rel, cat, text) for rel in pages for cat, text in results[rel][0]]  # in page order
    weights = {rel: results[rel][2] for rel in pages}
    for rel, cat, text in problems:
        print(f"problem: {rel}: [{cat}] {text}")
    counts = collections.Counter(cat for _, cat, _ in problems)
    print("findings per category:", ", ".join(f"{c} {counts[c]}" for c in sorted(counts)) or "none")
    heaviest = max(weights, key=weights.get)
    print(f"heaviest page: {heaviest}, {weights[heaviest] / 1e6:.2f} MB")
    print(f"{len(pages)} pages checked, {len(problems)} problem(s); screenshots in {SHOTS.relative_to(ROOT)}/")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
