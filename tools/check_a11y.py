"""Accessibility check of the built book: axe-core's WCAG 2.1 A and AA rules on every page, as a reader meets it.

axe-core is vendored from the npm registry into _vendor/axe/ (`make vendor`), so nothing comes from a CDN. Each
page is checked in both colour modes (the theme's light and dark) at both widths (1400 px and 390 px), after
MathJax has typeset and the page's scripts have run: the rules that read colours in both modes, the others once
(COLOUR_RULES says why). Any violation is a finding, except the rules in ALLOWED,
each with its reason (none at present). The same visit also checks that every typeset formula carries what a
screen reader reads: MathJax's assistive MathML (MathJax 3 and 4) or its generated speech (MathJax 4).

`make check-html` (tools/check_html.py) calls ``page_findings`` in the page visits it already makes, once at
each width, and ``check_search`` on the search page; every violating element is a line of its report:
"<page>: [a11y] <mode> <width>px: <rule> (<impact>): <selector>: <what axe says>".

Run on its own, this script checks every page of _build/html (or the pages named) and prints a line per violated
rule per view, then the count per rule, as used to measure before and after a change:

    .venv/bin/python tools/check_a11y.py [--nodes] [PAGE ...]

``--nodes`` prints every violating element with axe's summary of what is wrong.
"""
from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

from browser import CHROMIUM, FLAGS, NARROW, WIDE, open_page, serve, toc_pages, until  # tools/browser.py

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "_vendor" / "axe" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
MODES = ("light", "dark")
# Rules switched off, each with the reason it is a false positive here. Keep this short.
ALLOWED: dict[str, str] = {}
# elements reported per rule and view; the count is always exact
MAX_NODES = 20
# the search that check_search runs: its results quote formulas from several chapters
SEARCH_QUERY = "projection"

# The rules that read colours run in both modes; the others once, in light mode: the page's elements, names and
# roles are the same in both (the theme switches colours only), and the contrast rule is most of axe's time. The
# colour rules leave MathJax's output out: its glyphs are CSS content, so axe finds no text to check in it (on
# chapter 22, the same 1317 elements pass with it or without it), and skipping its 12,000 elements saves a fifth.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]

RUN_AXE = """async ([rules, skip, exclude, tags]) => {
  const context = exclude.length ? {exclude: exclude.map(s => [s])} : document;
  const only = rules.length ? {type: 'rule', values: rules} : {type: 'tag', values: tags};
  const r = await axe.run(context, {runOnly: only, rules: Object.fromEntries(skip.map(id => [id, {enabled: false}])),
                                    resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
    nodes: v.nodes.map(n => ({target: n.target.join(' '),
                              summary: (n.failureSummary || '').replace(/\\s+/g, ' ').trim()}))}));
}"""

# Every typeset formula, and whether a screen reader has something to read in it: MathJax's assistive MathML (a
# hidden <math> copy, MathJax 3 and 4) or the speech that MathJax 4 writes into aria-label / data-semantic-speech.
MATH_JS = """() => {
  const all = [...document.querySelectorAll('mjx-container')];
  const mute = all.filter(c => !c.querySelector('mjx-assistive-mml math')
      && !(c.getAttribute('aria-label') || '').trim()
      && !c.querySelector('[data-semantic-speech]:not([data-semantic-speech=""])')
      && !(c.getAttribute('data-semantic-speech') || '').trim());
  return {count: all.length, mute: mute.length,
          example: mute.length ? (mute[0].closest('[id]') || {}).id || mute[0].outerHTML.slice(0, 80) : ''};
}"""


def set_mode(page, mode: str) -> None:
    """The theme's colour mode, as its switch sets it (the theme's CSS follows data-theme)."""
    page.evaluate("m => { document.documentElement.dataset.theme = m; document.documentElement.dataset.mode = m; }",
                  mode)
    # The theme fades some colours over 0.1 s. A fixed wait was too short on a loaded machine: axe once measured
    # the search field half-way from light to dark (#3e4550). So wait two frames, for the transitions to start,
    # then until none is running.
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    page.wait_for_function("() => !document.getAnimations().some(a => a instanceof CSSTransition"
                           " && a.playState === 'running')", timeout=10000)


def axe_violations(page, rules: list[str] | None = None, skip: list[str] | None = None,
                   exclude: list[str] | None = None) -> list[dict]:
    """axe's violations on the page as it is: every WCAG 2.1 A/AA rule but ``skip``, or only ``rules``; on the whole
    document, or without the elements that match ``exclude``."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return [v for v in page.evaluate(RUN_AXE, [rules or [], skip or [], exclude or [], TAGS])
            if v["id"] not in ALLOWED]


def axe_views(page, width: int) -> list[tuple[str, dict]]:
    """(mode, violation) for both colour modes of the page as it is; leaves the page in light mode."""
    out = []
    for mode in MODES:
        set_mode(page, mode)
        if mode == MODES[0]:
            out += [(mode, v) for v in axe_violations(page, skip=COLOUR_RULES)]
        out += [(mode, v) for v in axe_violations(page, rules=COLOUR_RULES, exclude=["mjx-container"])]
    set_mode(page, "light")
    return out


def violation_lines(mode: str, width: int, v: dict) -> list[str]:
    lines = [f"{mode} {width}px: {v['id']} ({v['impact']}): {n['target']}: {n['summary'][:160]}"
             for n in v["nodes"][:MAX_NODES]]
    if v["count"] > MAX_NODES:
        lines.append(f"{mode} {width}px: {v['id']} ({v['impact']}): and {v['count'] - MAX_NODES} more element(s)")
    return lines


def math_findings(page) -> list[tuple[str, str]]:
    """Every typeset formula has assistive MathML or speech (the page has waited for MathJax already)."""
    state = page.evaluate(MATH_JS)
    if state["mute"]:
        return [("a11y", f"{state['mute']} of {state['count']} typeset formula(s) have neither assistive MathML nor "
                         f"speech for a screen reader (e.g. in #{state['example']})")]
    return []


def page_findings(page, width: int, math: bool = True) -> list[tuple[str, str]]:
    """What check_html reports for one page at one width: every axe violation in light and dark mode, and (once
    per page, ``math``) formulas a screen reader cannot read."""
    found = [("a11y", line) for mode, v in axe_views(page, width) for line in violation_lines(mode, width, v)]
    return found + (math_findings(page) if math else [])


SEARCH_JS = """() => {
  const summaries = [...document.querySelectorAll('#search-results p.context')];
  const text = summaries.map(p => {
    const c = p.cloneNode(true);
    c.querySelectorAll('mjx-container').forEach(m => m.remove());
    return c.textContent; }).join('\\n');
  return {results: document.querySelectorAll('#search-results li').length, summaries: summaries.length,
          math: document.querySelectorAll('#search-results mjx-container').length, text};
}"""


def check_search(browser, base: str, raw_tex) -> tuple[list[tuple[str, str]], str, int]:
    """The search page, with a query whose results quote formulas: results come, no raw TeX is left in their
    summaries, the formulas are typeset, and axe finds nothing, in both modes and at both widths. Returns what
    check_html.check_page returns."""

    found: list[tuple[str, str]] = []
    errors: list[str] = []
    blocked: list[str] = []
    rel = f"search.html?q={SEARCH_QUERY}"
    for width, height in (WIDE, NARROW):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        open_page(page, base, "search.html", errors, blocked)  # listeners and the offline route, then the query
        page.goto(base + rel, wait_until="load")
        try:
            page.wait_for_function("() => /Search finished|did not match/.test("
                                   "(document.querySelector('#search-progress') || {}).textContent || '')",
                                   timeout=20000)
            page.wait_for_function("() => document.querySelectorAll('#search-results li').length"
                                   " === document.querySelectorAll('#search-results p.context').length",
                                   timeout=20000)
            page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
            # the summaries are typeset as they come: wait for a typeset formula among them (none is a finding)
            until(page, "() => { const r = document.querySelector('#search-results'); return !!r"
                        " && !!r.querySelector('mjx-container') && !/\\\\[(\\[]|\\$\\$/.test(r.innerText); }",
                  timeout=5000)
        except Exception:  # noqa: BLE001 - reported below
            pass
        state = page.evaluate(SEARCH_JS)
        if width == WIDE[0]:
            if not state["results"]:
                found.append(("search", f"searching for {SEARCH_QUERY!r} found nothing"))
            tex = raw_tex.findall(state["text"])
            if tex:
                found.append(("search", f"raw TeX in the search results' summaries ({len(tex)}x, e.g. {tex[0]!r})"))
            if not state["math"]:
                found.append(("search", f"no typeset formula in the results for {SEARCH_QUERY!r}"))
        found += page_findings(page, width, math=width == WIDE[0])
        context.close()
    if errors:
        found.append(("console", f"JavaScript console errors or warnings: {sorted(set(errors))[:3]}"))
    if blocked:
        found.append(("network", f"tried to reach the network: {sorted(set(blocked))[:3]}"))
    status = "ok" if not found else "FAIL"
    return found, f"{status:4} {rel}: {state['results']} result(s), {state['math']} formula(s) typeset", 0


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    from playwright.sync_api import sync_playwright

    nodes = "--nodes" in argv
    pages = [a for a in argv if a != "--nodes"] or toc_pages()
    server, base = serve()
    per_rule: collections.Counter = collections.Counter()
    elements: collections.Counter = collections.Counter()
    impact: dict[str, str] = {}
    seconds = 0.0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            for rel in pages:
                for width, height in (WIDE, NARROW):
                    context = browser.new_context(viewport={"width": width, "height": height})
                    context.set_default_navigation_timeout(120_000)  # a long page on a busy machine
                    page = context.new_page()
                    try:
                        open_page(page, base, rel, [], [])
                    except Exception:  # noqa: BLE001 - a page load timed out on a busy machine: once more
                        page.close()
                        page = context.new_page()
                        open_page(page, base, rel, [], [])
                    start = time.monotonic()
                    views = axe_views(page, width)
                    seconds += time.monotonic() - start
                    for mode, v in views:
                        per_rule[v["id"]] += 1
                        elements[v["id"]] += v["count"]
                        impact[v["id"]] = v["impact"]
                        print(f"{rel} {width}px {mode}: {v['id']} ({v['impact']}) x{v['count']}: "
                              f"{', '.join(n['target'] for n in v['nodes'][:2])}")
                        if nodes:
                            for line in violation_lines(mode, width, v):
                                print("   ", line)
                    if width == WIDE[0]:
                        for _, text in math_findings(page):
                            print(f"{rel}: {text}")
                    context.close()
            browser.close()
    finally:
        server.shutdown()
    for rule, n in per_rule.most_common():
        print(f"{rule:35} {impact[rule]:9} {n:4} page-views  {elements[rule]:5} elements")
    print(f"check-a11y: {len(pages)} pages x 2 widths x 2 modes, {sum(elements.values())} failing elements; "
          f"axe took {seconds:.0f} s")
    return 1 if per_rule else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
