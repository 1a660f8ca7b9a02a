"""Browser check of the numbers' provenance popovers (_ext/provenance.py, _theme/provenance.js).

`check_page(page, rel)` is called by tools/check_html.py for every page, with the page open at 1400 px. For a
sample of the page's glued numbers (first, middle, last, and two between) it

- hovers the number: its popover must appear, inside the window, tied to it by aria-describedby;
- reads the popover's expression and checks it against the chapter's own source (book/NN_topic.md): the glue
  call for that name, found there by the name (or, for a name made in a loop, an f-string call whose pattern
  matches the name);
- checks the popover's value against the value myst-nb recorded when it ran the chapter
  (_build/jupyter_execute/book/NN_topic.glue.json), and that the number in the prose is that value rounded;
- focuses the number from the keyboard: the popover shows; Escape closes it and focus stays on the number; Tab
  moves on, never into the popover;
- follows the number's link: the element with that id must come into view, be highlighted, and hold the code that
  contains the glue call (a cell of the page, or its listing in "Numbers in this chapter"), with that line marked;
- measures the contrast of the popover's text (≥ 4.5:1) in light and in dark mode, and of the number on its tint;
- at 390 px, checks that an open popover fits in the window.

It also checks that every glued number of the page is a provenance anchor, and that the "Numbers in this chapter"
list has one row per glued name with myst-nb's value. Findings are (category, text) pairs, category "provenance".
Run alone: `python tools/check_provenance.py [--site DIR] [page-substring ...]` (serves the site itself).
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
MIN_CONTRAST = 4.5

ANCHORS_JS = """() => {
  const all = [...document.querySelectorAll('a.prov-num')];
  const bare = [...document.querySelectorAll('.pasted-text')].filter(s => !s.closest('a.prov-num')).length;
  const rows = [...document.querySelectorAll('.prov-table tbody tr')].map(r =>
      [r.cells[0].textContent.trim(), r.cells[1].textContent.trim(), r.querySelector('a').getAttribute('href')]);
  return {anchors: all.map((a, i) => { const t = document.getElementById(a.getAttribute('aria-describedby'));
            return {i, key: a.dataset.provKey, href: a.getAttribute('href'), tip: a.getAttribute('aria-describedby'),
                    text: a.textContent.trim(), shown: a.checkVisibility(),
                    expr: t && (t.querySelector('.prov-expr') || {}).textContent,
                    value: t && (t.querySelector('.prov-value') || {}).textContent}; }),
          bare, rows};
}"""

TIP_JS = """(id) => {
  const t = document.getElementById(id);
  if (!t) return null;
  const r = t.getBoundingClientRect();
  return {hidden: t.hidden, visible: !t.hidden && r.width > 0 && r.height > 0,
          left: r.left, right: r.right, top: r.top, bottom: r.bottom, vw: document.documentElement.clientWidth,
          vh: window.innerHeight, expr: (t.querySelector('.prov-expr') || {}).textContent,
          value: (t.querySelector('.prov-value') || {}).textContent, role: t.getAttribute('role')};
}"""

# contrast of the popover's pieces and of the number on its tint, colours composited with a canvas
CONTRAST_JS = """([anchorIndex, tipId]) => {
  const cv = document.createElement('canvas'); cv.width = cv.height = 1;
  const cx = cv.getContext('2d', {willReadFrequently: true});
  const rgb = (layers) => { cx.clearRect(0, 0, 1, 1);
    for (const c of layers) { cx.fillStyle = '#fff'; cx.fillStyle = c; cx.fillRect(0, 0, 1, 1); }
    return [...cx.getImageData(0, 0, 1, 1).data].slice(0, 3); };
  const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const firstStop = (img) => {  // the first colour of a linear-gradient(...), found by bracket depth
    const at = img.indexOf('linear-gradient('); if (at < 0) return null;
    let depth = 0, start = at + 'linear-gradient('.length;
    for (let k = start; k < img.length; k++) { const ch = img[k];
      if (ch === '(') depth++; else if (ch === ')') { if (depth === 0) return img.slice(start, k); depth--; }
      else if (ch === ',' && depth === 0) return img.slice(start, k); }
    return null; };
  const bgLayers = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const s = getComputedStyle(e);
      const img = firstStop(s.backgroundImage);
      if (img) layers.unshift(img);
      if (s.backgroundColor !== 'rgba(0, 0, 0, 0)') { layers.unshift(s.backgroundColor); break; } }
    layers.unshift('#fff'); return layers; };
  const out = [];
  const tip = document.getElementById(tipId);
  for (const el of [tip, ...tip.querySelectorAll('.prov-label, .prov-expr, .prov-value, .prov-go, .prov-hint')]) {
    const bg = bgLayers(el);
    out.push([el.className || 'popover', ratio(rgb([...bg, getComputedStyle(el).color]), rgb(bg))]); }
  const a = document.querySelectorAll('a.prov-num')[anchorIndex];
  const abg = bgLayers(a);
  out.push(['number on its tint', ratio(rgb([...abg, getComputedStyle(a).color]), rgb(abg))]);
  return out;
}"""

TARGET_JS = """(id) => {
  const t = document.getElementById(id);
  if (!t) return null;
  const r = t.getBoundingClientRect();
  return {inView: r.bottom > 0 && r.top < window.innerHeight && r.height > 0, flash: t.classList.contains('prov-flash'),
          code: [...t.querySelectorAll('pre')].map(p => p.textContent).join('\\n'),
          focused: document.activeElement === t, hash: location.hash, line: !!t.querySelector('.prov-line')};
}"""


def code_cells(md: Path) -> list[str]:
    """The code of every code cell of a chapter's MyST source."""
    import jupytext

    return [c.source for c in jupytext.read(md).cells if c.cell_type == "code"]


def glue_calls(cells: list[str]) -> list[tuple[str, str]]:
    """(name pattern, call text) for every glue(...) call in the cells; an f-string name becomes a regex."""
    calls = []
    for src in cells:
        try:
            tree = ast.parse(src)
        except SyntaxError:  # IPython syntax (magics): none in the book's code cells
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "glue" \
                    and node.args:
                name = node.args[0]
                if isinstance(name, ast.Constant) and isinstance(name.value, str):
                    pattern = re.escape(name.value)
                elif isinstance(name, ast.JoinedStr):
                    pattern = "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in name.values)
                else:
                    pattern = ".+"
                calls.append((pattern, ast.get_source_segment(src, node)))
    return calls


def matching_calls(key: str, calls) -> list[str]:
    exact = [text for pattern, text in calls if pattern == re.escape(key)]
    return exact or [text for pattern, text in calls if re.fullmatch(pattern, key)]


def rounds_to(shown: str, full: str) -> bool:
    """The prose shows the glued value rounded (or the value itself, for text)."""
    percent = shown.endswith("%")  # a `:.1%` format
    digits = shown.rstrip("%")
    try:
        s, f = float(digits.replace("−", "-").replace(",", "")), float(full)
    except ValueError:
        return shown.strip("'\"") in full or full.strip("'\"") in shown
    mantissa, _, exponent = digits.lower().partition("e")  # 5.15e-05: two decimals of the mantissa
    decimals = (len(mantissa.split(".")[1]) if "." in mantissa else 0) - int(exponent or 0)
    if percent:
        s, decimals = s / 100, decimals + 2
    return abs(s - f) <= 0.5 * 10.0 ** -decimals * (1 + 1e-9) + 1e-15


def until(page, js: str, arg, timeout: int = 4000) -> bool:
    """Wait until ``js(arg)`` is true in the page (the machine may be loaded: no fixed sleeps); False if it never is."""
    try:
        page.wait_for_function(js, arg=arg, timeout=timeout)
        return True
    except Exception:  # noqa: BLE001 - playwright's TimeoutError: the caller reports what did not happen
        return False


SHOWN_JS = "(id) => { const t = document.getElementById(id); return t && !t.hidden && t.getClientRects().length > 0; }"
HIDDEN_JS = "(id) => { const t = document.getElementById(id); return t && t.hidden; }"
# The highlight and the line mark last 2 s and 2.5 s. On a loaded machine a click, or the read after it, can take
# longer, so a watcher set on the target before the click records that each appeared, and the check reads that.
WATCH_JS = """(id) => {
  const t = document.getElementById(id);
  const seen = window.__provSeen = {flash: false, line: false};
  if (!t) return;
  if (window.__provWatch) window.__provWatch.disconnect();
  const note = () => { seen.flash ||= t.classList.contains('prov-flash'); seen.line ||= !!t.querySelector('.prov-line'); };
  window.__provWatch = new MutationObserver(note);
  window.__provWatch.observe(t, {attributes: true, attributeFilter: ['class'], childList: true, subtree: true});
}"""
LANDED_JS = "() => window.__provSeen && window.__provSeen.flash"
SEEN_JS = "() => window.__provSeen"


def sample(n: int) -> list[int]:
    return sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1}) if n else []


def check_page(page, rel: str, site: Path = SITE, drive: bool = True) -> list[tuple[str, str]]:
    """Findings for one page, open at 1400 px (see the module docstring).

    Every number's popover data (expression, value, rounding) is checked on every page; with ``drive`` false, the
    popover's behaviour (hover, focus, Escape, Tab, contrast, the link to its cell) is not driven: it is the same
    script on every page, and `make check-html` drives it on a few representative pages only.
    """
    md = site.parent.parent / Path(rel).with_suffix(".md")
    glue_json = site.parent / "jupyter_execute" / Path(rel).with_suffix(".glue.json")
    info = page.evaluate(ANCHORS_JS)
    found = []
    if info["bare"]:
        found.append(("provenance", f"{info['bare']} glued number(s) are not provenance anchors"))
    if not info["anchors"] and not info["rows"]:
        return found
    if not md.is_file() or not glue_json.is_file():
        return found + [("provenance", f"no source {md.name} or no glue record {glue_json.name} for the page")]
    recorded = {k: v["data"].get("text/plain", "") for k, v in json.loads(glue_json.read_text()).items()}
    calls = glue_calls(code_cells(md))
    if sorted(r[0] for r in info["rows"]) != sorted(recorded):
        found.append(("provenance", f"'Numbers in this chapter' lists {len(info['rows'])} names, "
                                    f"myst-nb recorded {len(recorded)}"))
    for name, value, _ in info["rows"]:
        if recorded.get(name) != value:
            found.append(("provenance", f"list: {name} shows {value!r}, myst-nb recorded {recorded.get(name)!r}"))
    anchors = info["anchors"]
    for a in anchors:  # every number: its popover's text against the chapter's source and myst-nb's record
        say = lambda text, a=a: found.append(("provenance", f"number {a['key']} ({a['text']}): {text}"))  # noqa: E731
        if a["expr"] is None:
            say("has no popover")
            continue
        if a["expr"] not in matching_calls(a["key"], calls):
            say(f"popover expression {a['expr']!r} is not the glue call of {a['key']!r} in {md.name}")
        if a["value"] != recorded.get(a["key"]):
            say(f"popover value {a['value']!r}, myst-nb recorded {recorded.get(a['key'])!r}")
        if not rounds_to(a["text"], a["value"]):
            say(f"the prose shows {a['text']!r}, which is not {a['value']} rounded")
    shown = [a for a in anchors if a["shown"]]  # numbers in a closed <details> (an exercise's answer) are not hovered
    for a in (shown[k] for k in (sample(len(shown)) if drive else [])):
        i = a["i"]
        loc = page.locator("a.prov-num").nth(i)
        say = lambda text, a=a: found.append(("provenance", f"number {a['key']} ({a['text']}): {text}"))  # noqa: E731
        # hover
        loc.scroll_into_view_if_needed()
        loc.hover()
        until(page, SHOWN_JS, a["tip"])
        tip = page.evaluate(TIP_JS, a["tip"])
        if not tip or not tip["visible"]:
            say("hovering shows no popover")
            continue
        if tip["left"] < 0 or tip["right"] > tip["vw"] + 0.5 or tip["top"] < 0 or tip["bottom"] > tip["vh"] + 0.5:
            say(f"the popover leaves the window ({tip['left']:.0f}..{tip['right']:.0f} of {tip['vw']} px)")
        # contrast, light and dark
        for mode in ("light", "dark"):
            page.evaluate("(m) => { document.documentElement.dataset.theme = m; }", mode)
            for what, ratio in page.evaluate(CONTRAST_JS, [i, a["tip"]]):
                if ratio < MIN_CONTRAST:
                    say(f"{mode} mode: {what} contrast {ratio:.2f}:1 (< {MIN_CONTRAST}:1)")
        page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")
        page.mouse.move(0, 0)
        if not until(page, HIDDEN_JS, a["tip"]):
            say("the popover stays open after the pointer leaves")
        # keyboard: focus shows, Escape hides, focus stays, Tab moves on and not into the popover
        loc.focus()
        if not until(page, SHOWN_JS, a["tip"]):
            say("keyboard focus shows no popover")
        page.keyboard.press("Escape")
        if not until(page, HIDDEN_JS, a["tip"]):
            say("Escape does not close the popover")
        if page.evaluate("(i) => document.activeElement === document.querySelectorAll('a.prov-num')[i]", i) is False:
            say("Escape moved the focus")
        page.keyboard.press("Tab")
        if page.evaluate("(id) => document.getElementById(id).contains(document.activeElement)", a["tip"]):
            say("Tab moves the focus into the popover")
        # the link lands on the cell that holds the call
        loc.scroll_into_view_if_needed()
        page.evaluate(WATCH_JS, a["href"].lstrip("#"))
        loc.click()
        until(page, LANDED_JS, None)
        target = page.evaluate(TARGET_JS, a["href"].lstrip("#"))
        if target is None:
            say(f"its link {a['href']} has no target")
        else:
            seen = page.evaluate(SEEN_JS) or {}
            target["flash"] = target["flash"] or bool(seen.get("flash"))
            target["line"] = target["line"] or bool(seen.get("line"))
            if not (target["inView"] and target["flash"] and target["focused"]):
                say(f"following {a['href']}: in view {target['inView']}, highlighted {target['flash']}, "
                    f"focused {target['focused']}")
            if tip["expr"] and tip["expr"] not in target["code"] and not any(
                    tip["expr"] in c and c.strip() in target["code"] for c in code_cells(md)):
                say(f"{a['href']} does not show the code {tip['expr']!r}")
            elif tip["expr"] and tip["expr"].split("\n")[0].strip() in target["code"] and not target["line"]:
                say(f"following {a['href']}: the line of {tip['expr']!r} is not marked")
    # 390 px: an open popover fits the window
    if shown:
        a = shown[len(shown) // 2]
        narrow = page.context.browser.new_context(viewport={"width": 390, "height": 844})
        p2 = narrow.new_page()
        p2.goto(page.url.split("#")[0], wait_until="load")
        loc = p2.locator("a.prov-num").nth(a["i"])
        loc.scroll_into_view_if_needed()
        loc.focus()
        until(p2, SHOWN_JS, a["tip"])
        tip = p2.evaluate(TIP_JS, a["tip"])
        if not tip["visible"] or tip["left"] < 0 or tip["right"] > tip["vw"] + 0.5:
            found.append(("provenance", f"at 390 px the popover of {a['key']} does not fit "
                                        f"({tip['left']:.0f}..{tip['right']:.0f} of {tip['vw']} px)"))
        narrow.close()
    return found


def main() -> int:
    """Check built chapter pages on their own: `check_provenance.py [--site DIR] [page-substring ...]`.

    check_html.py runs the same check within its own; this serves DIR (default _build/html) itself.
    """
    import functools
    import http.server
    import os
    import threading

    from playwright.sync_api import sync_playwright

    args = sys.argv[1:]
    site = SITE
    if args[:1] == ["--site"]:
        site, args = Path(args[1]).resolve(), args[2:]
    pages = sorted(str(p.relative_to(site)) for p in (site / "book").glob("*.html"))
    if args:
        pages = [p for p in pages if any(o in p for o in args)]
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    problems, numbers = [], 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                         args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            for rel in pages:
                context = browser.new_context(viewport={"width": 1400, "height": 900})
                page = context.new_page()
                page.goto(base + rel, wait_until="load")
                n = page.evaluate("() => document.querySelectorAll('a.prov-num').length")
                numbers += n
                found = check_page(page, rel, site)
                print(f"{'ok' if not found else 'FAIL':4} {rel}: {n} glued number(s) on the page, "
                      f"{len(sample(n))} tried", flush=True)
                problems += [(rel, text) for _, text in found]
                context.close()
            browser.close()
    finally:
        server.shutdown()
    for rel, text in problems:
        print(f"problem: {rel}: [provenance] {text}")
    print(f"{len(pages)} pages, {numbers} glued numbers on them, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
