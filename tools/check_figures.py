"""Browser check that every figure says what it shows (issue 22): the text alternatives of the built pages.

`check_page(page)` is called by tools/check_html.py for every page, with the page open at 1400 px (after its
widgets have rendered). It looks at every ``<img>`` (hidden ones too: a live widget's image is hidden on a page with
no kernel, but it is there in JupyterLab) and its text alternative: the ``alt``, or for a live widget's image,
whose ipywidgets ``Image`` can carry no alt, the line of text under it that byhand.live updates on each move
(class ``byhand-live-alt``; a ``title``, if some page script sets one, counts too).

- No image's name may be empty or a file name (``../_images/07ad5f….png``, what myst-nb writes when a chapter's
  figure carries no description).
- A figure (a cell's output image, a static slider's frame, a live widget's image) must name at least one number:
  a description computed from what it plots (byhand.figure.show_figure, a view's ``describe``).
- Every frame of a static slider must have a description that says more than its label (the setting alone), and
  the range input an ``aria-valuetext``.

Findings are (category, text) pairs, category "figure-alt". ``check_page`` also returns counts per kind of image
(``{kind: [images, passing]}``, kinds "figure", "slider", "live", "other"), for the before/after of issue 22.
Run alone: `python tools/check_figures.py [--site DIR] [page-substring ...]` (serves the site itself, prints the
counts and the findings).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

FILE_NAME = re.compile(r"(\.(png|jpe?g|gif|svg|webp)\b)|(^|/)_images/", re.IGNORECASE)
NUMBER = re.compile(r"\d")

IMAGES_JS = """() => [...document.images]
  .filter(i => !i.closest('.byhand-slider-strip'))  // the print strip repeats three frames, hidden on screen
  .map(i => ({
    alt: i.getAttribute('alt'), title: i.getAttribute('title'), src: (i.getAttribute('src') || '').slice(0, 50),
    kind: i.closest('.byhand-slider') ? 'slider'
        : i.closest('.jupyter-widgets, .widget-subarea') ? 'live'
        : i.closest('.cell_output, .output') ? 'figure' : 'other',
    said: ((i.closest('.widget-vbox') || i.parentElement).querySelector('.byhand-live-alt .widget-html-content')
           || {}).textContent || null}))"""

SLIDERS_JS = """() => [...document.querySelectorAll('.byhand-slider')].map(r => {
  const d = JSON.parse(r.querySelector('script.byhand-slider-data').textContent);
  const range = r.querySelector('input[type=range]');
  return {alts: d.alts, labels: d.labels, valuetext: range ? range.getAttribute('aria-valuetext') : null}; })"""


def name_problem(image: dict) -> str | None:
    """What is wrong with one image's accessible name, or None. ``image`` is a row of IMAGES_JS."""
    name = image["alt"] if image["alt"] else (image["title"] or image["said"] if image["kind"] == "live" else None)
    name = (name or "").strip()
    if not name:
        return f"{image['kind']} image {image['src']!r} has an empty text alternative"
    if FILE_NAME.search(name):
        return f"{image['kind']} image's text alternative is a file name ({name[:60]!r})"
    if image["kind"] != "other" and not NUMBER.search(name):
        return f"{image['kind']} image's text alternative names no number ({name[:60]!r})"
    return None


def slider_problems(k: int, slider: dict) -> list[str]:
    """What is wrong with the frames' descriptions of static slider ``k`` (a row of SLIDERS_JS)."""
    problems = []
    if not slider["valuetext"]:
        problems.append(f"static slider {k}'s range input has no aria-valuetext")
    bare = [j for j, (alt, label) in enumerate(zip(slider["alts"], slider["labels"]))
            if not alt or alt == label or not NUMBER.search(alt) or FILE_NAME.search(alt)]
    if bare:
        problems.append(f"static slider {k}: {len(bare)} of {len(slider['alts'])} frames have no description of "
                        f"their own (frame {bare[0]}: {slider['alts'][bare[0]]!r})")
    return problems


def check_page(page) -> tuple[list[tuple[str, str]], dict[str, list[int]]]:
    """Findings for the open page, and ``{kind: [images, passing]}``."""
    counts: dict[str, list[int]] = {}
    problems = []
    sliders = page.evaluate(SLIDERS_JS)
    slider_bad = {k: slider_problems(k, s) for k, s in enumerate(sliders)}
    seen_slider = 0
    for image in page.evaluate(IMAGES_JS):
        problem = name_problem(image)
        if image["kind"] == "slider":  # a slider's image passes if every frame of it does
            if problem is None and slider_bad.get(seen_slider):
                problem = slider_bad[seen_slider][0]
            seen_slider += 1
        tally = counts.setdefault(image["kind"], [0, 0])
        tally[0] += 1
        if problem is None:
            tally[1] += 1
        else:
            problems.append(problem)
    problems += [p for k, found in slider_bad.items() for p in found[1:]]
    shown = problems[:5] + ([f"… and {len(problems) - 5} more"] if len(problems) > 5 else [])
    return [("figure-alt", p) for p in shown], counts


def main() -> int:
    """Serve a built site, open every page (or those matching the arguments) and print counts and findings."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import browser as site_tools  # the server, the browser flags and the page opener (tools/browser.py)
    from playwright.sync_api import sync_playwright

    args = sys.argv[1:]
    if args[:1] == ["--site"]:
        site_tools.SITE = Path(args[1]).resolve()
        args = args[2:]
    site = site_tools.SITE
    pages = sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts and p.name not in site_tools.SKIP)
    pages = [p for p in pages if not args or any(a in p for a in args)]
    server, base = site_tools.serve()
    totals: dict[str, list[int]] = {}
    failed = 0
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=site_tools.CHROMIUM, args=site_tools.FLAGS)
            for rel in pages:
                context = browser.new_context(viewport={"width": site_tools.WIDE[0], "height": site_tools.WIDE[1]})
                page = context.new_page()
                site_tools.open_page(page, base, rel, [], [])
                found, counts = check_page(page)
                context.close()
                for kind, (n, ok) in counts.items():
                    totals.setdefault(kind, [0, 0])
                    totals[kind][0] += n
                    totals[kind][1] += ok
                failed += bool(found)
                print(f"{'ok' if not found else 'FAIL':4} {rel}: " + ", ".join(f"{kind} {ok}/{n}" for kind, (n, ok)
                                                                          in sorted(counts.items())))
                for _, text in found:
                    print(f"     {text}")
    finally:
        server.shutdown()
    print("images passing, per kind: " + ", ".join(f"{kind} {ok} of {n}" for kind, (n, ok) in sorted(totals.items())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
