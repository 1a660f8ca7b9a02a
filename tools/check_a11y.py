"""Accessibility check of the built book: axe-core's WCAG 2.1 A and AA rules on every page, as a reader meets it.

axe-core is vendored from the npm registry into _vendor/axe/ (`make vendor`), so nothing comes from a CDN. For each
page it runs in both colour modes (the theme's light and dark) and at both widths (1400 px and 390 px), after
MathJax has typeset and the page's scripts have run. Any violation is a finding, except the few rules in ALLOWED,
each with its reason.

`make check-html` calls ``axe_findings`` on every page; run on its own, this script checks every page of
_build/html and prints the count of violations per rule (used to measure before and after a change):

    .venv/bin/python tools/check_a11y.py [PAGE ...]
"""
from __future__ import annotations

import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AXE = ROOT / "_vendor" / "axe" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# Rules switched off, each with the reason it is a false positive here. Keep this short.
ALLOWED: dict[str, str] = {}

RUN_AXE = """async (tags) => {
  const r = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 3), count: v.nodes.length}));
}"""


def set_mode(page, mode: str) -> None:
    """The theme's colour mode, as its switch sets it."""
    page.evaluate("m => { document.documentElement.dataset.theme = m; document.documentElement.dataset.mode = m; }",
                  mode)
    page.wait_for_timeout(100)


def axe_violations(page) -> list[dict]:
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return [v for v in page.evaluate(RUN_AXE, TAGS) if v["id"] not in ALLOWED]


def axe_findings(page, where: str) -> list[tuple[str, str]]:
    """One finding per violated rule on this page in its present mode and width: ("a11y", "<where>: ...")."""
    return [("a11y", f"{where}: {v['id']} ({v['impact']}, {v['count']} element(s)): {v['help']}; e.g. "
                     f"{', '.join(v['nodes'])}") for v in axe_violations(page)]


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(ROOT / "tools"))
    from check_html import CHROMIUM, FLAGS, NARROW, WIDE, open_page, serve, toc_pages
    from playwright.sync_api import sync_playwright

    pages = argv or toc_pages()
    server, base = serve()
    per_rule: collections.Counter = collections.Counter()
    elements: collections.Counter = collections.Counter()
    impact: dict[str, str] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
            for rel in pages:
                for width, height in (WIDE, NARROW):
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    open_page(page, base, rel, [], [])
                    for mode in ("light", "dark"):
                        set_mode(page, mode)
                        for v in axe_violations(page):
                            per_rule[v["id"]] += 1
                            elements[v["id"]] += v["count"]
                            impact[v["id"]] = v["impact"]
                            print(f"{rel} {width}px {mode}: {v['id']} ({v['impact']}) x{v['count']}: "
                                  f"{', '.join(v['nodes'][:2])}")
                    context.close()
            browser.close()
    finally:
        server.shutdown()
    for rule, n in per_rule.most_common():
        print(f"{rule:35} {impact[rule]:9} {n:4} page-views  {elements[rule]:5} elements")
    print(f"check-a11y: {len(pages)} pages x 2 widths x 2 modes, {sum(elements.values())} failing elements")
    return 1 if per_rule else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
