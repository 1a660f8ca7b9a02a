"""Printable PDFs of the built book: one per part and one for the whole book, with no TeX toolchain.

Serves the built site (_build/html, or _build/student/html for the student edition) on 127.0.0.1 and opens every
chapter in headless Chromium (Playwright), with the network cut off, as `make check-html` does. Once MathJax has
typeset a chapter and its scripts have run (the static sliders' strips, the widgets' notes), the chapter's article
is taken out of the page, and the chapters of each part are printed as one document with Chromium's own print
(`page.pdf`), which applies the book's print CSS (_theme/print.css). On paper:

- a static slider is its strip of three frames (first, middle, last), each with its setting and description;
- a live widget is a one-line note that points to the strip;
- an answer box is a blank line, with the tolerance the box accepts;
- the worked solutions (instructor edition) are gathered at the end of each part, and each exercise points there;
- links show where they lead: a web address in full, another page of the site by its chapter title;
- math is MathJax's CHTML output, as on screen: its fonts are embedded, so the math stays text that a reader can
  search and copy. SVG output was measured against it (sample of four chapters, 2026-12-01): 3.93 MB against 3.08 MB,
  and its math drops out of the PDF's text;
- a display of math, a table or a figure wider than the text column is scaled down to fit it; code wraps;
- each page carries the chapter's title in its running head and a page number at its foot;
- the PDF has bookmarks: parts, chapters and their sections (the headings' outline).

Writes _build/pdf/<edition>/every-number.pdf and one PDF per part (part-1.pdf … appendices.pdf).
Run by `make pdf` (EDITION=student for the student edition); `make check-pdf` checks the result.
"""
from __future__ import annotations

import argparse
import functools
import html
import http.server
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
EDITIONS = ("instructor", "student")
# The width of the page the chapters are laid out in before printing: A4 less its margins, in CSS pixels.
PRINT_WIDTH_PX = 676
TIMEOUT_MS = 600_000  # for each step in the browser
MIN_SCALE = 0.5  # a display that would need more shrinking than this is reported (it would be unreadable)


@dataclass
class Part:
    caption: str
    slug: str  # the PDF's file name, without .pdf
    files: list[str] = field(default_factory=list)  # "book/02_softmax", in _toc.yml order


def read_toc(toc: Path = ROOT / "_toc.yml") -> tuple[str, list[Part]]:
    """The root page and the parts of _toc.yml, each with its chapters in order."""
    data = yaml.safe_load(toc.read_text())
    parts, n = [], 0
    for p in data.get("parts", []):
        caption = p["caption"]
        if caption.lower().startswith("part"):
            n += 1
            slug = f"part-{n}"
        else:
            slug = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-")
        parts.append(Part(caption, slug, [c["file"] for c in p.get("chapters", [])]))
    if not parts:
        raise ValueError(f"{toc} lists no parts")
    return data["root"], parts


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(site: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


# Run in a chapter's page once its scripts are done. Prepares the article for paper and returns it with its title,
# the solutions it held (taken out of the article) and the styles that MathJax and the page added to <head>.
PREPARE_JS = r"""([chapterId, partTitle]) => {
  const article = document.querySelector('article.bd-article');
  const abs = (el, attr) => { if (el.hasAttribute(attr)) el.setAttribute(attr, el[attr]); };

  // A static slider's strip of three frames. Until the slider's own player writes it (byhand.slider), build it here
  // from the player: frames first, middle and last, with the caption line the player shows for each.
  for (const slider of article.querySelectorAll('.byhand-slider')) {
    if (slider.querySelector('.byhand-slider-strip figure')) continue;
    const img = slider.querySelector('img[id^="_anim_img"]');
    const uid = img && img.id.slice('_anim_img'.length);
    const anim = uid && window['anim' + uid];
    const caption = uid && document.getElementById('_anim_caption' + uid);
    if (!anim || !anim.frames || !anim.frames.length) continue;
    const strip = slider.querySelector('.byhand-slider-strip') || document.createElement('div');
    strip.className = 'byhand-slider-strip';
    const last = anim.frames.length - 1;
    for (const k of [...new Set([0, Math.floor(last / 2), last])]) {
      anim.set_frame(k);
      const fig = document.createElement('figure');
      fig.className = 'byhand-strip-frame';
      const im = document.createElement('img');
      im.src = anim.frames[k].src;
      im.alt = img.alt;
      const cap = document.createElement('figcaption');
      cap.textContent = caption ? caption.textContent : img.alt;
      fig.append(im, cap);
      strip.append(fig);
    }
    anim.set_frame(0);
    slider.append(strip);
  }

  // Answer boxes: a blank line and the tolerance the box accepts.
  for (const box of article.querySelectorAll('.en-exercise[data-exercise]')) {
    const data = JSON.parse(box.getAttribute('data-exercise'));
    const line = document.createElement('span');
    line.className = 'en-print';
    line.append('Your answer:');
    const blank = document.createElement('span');
    blank.className = 'en-blank';
    // two significant digits at most, written as JavaScript writes a number: 5e-4 -> "0.0005", 1e-6 -> "0.000001"
    const tol = String(Number(data.tol.toPrecision(2)));
    line.append(blank, '(counted right within \u00b1' + tol + ')');
    box.append(line);
  }

  // Worked solutions: out of the chapter, each exercise pointing to where its solution now is.
  const solutions = [];
  let current = null;
  const exerciseOf = el => {
    let sec = el.closest('section');
    const h = sec && sec.querySelector(':scope > h2, :scope > h3, :scope > h4');
    return {id: sec ? sec.id : '', title: h ? h.textContent.replace(/#$/, '').trim() : ''};
  };
  for (const el of article.querySelectorAll('details.sd-dropdown, .cell.tag_solution')) {
    if (el.matches('details')) {
      const summary = el.querySelector('summary');
      if (!summary || summary.textContent.trim() !== 'Solution') continue;
      const ex = exerciseOf(el);
      const body = el.querySelector('.sd-summary-content') || el;
      current = {id: chapterId + '--' + ex.id, title: ex.title, html: body.innerHTML};
      solutions.push(current);
      const note = document.createElement('p');
      note.className = 'byhand-print-solution-note';
      const a = document.createElement('a');
      a.href = '#sol-' + current.id;
      a.textContent = 'Solution: in \u201cSolutions to ' + partTitle + '\u201d, at the end of the part.';
      note.append(a);
      el.replaceWith(note);
    } else if (current) {  // a reference solution in code follows its exercise's dropdown
      el.classList.remove('tag_hide-cell');
      for (const d of el.querySelectorAll('details.hide')) {  // the collapsed cell, shown in full
        d.querySelector(':scope > summary')?.remove();
        d.replaceWith(...d.childNodes);
      }
      current.html += el.outerHTML;
      el.remove();
    }
  }

  // Deeper boxes (every dropdown that is not a solution): open on paper, where no one can click one open.
  for (const d of article.querySelectorAll('details.sd-dropdown')) d.open = true;

  // Live widgets: the page's note stays (print.css turns it into one line); the controls go.
  for (const area of article.querySelectorAll('.byhand-no-kernel')) {
    for (const child of [...area.children]) if (!child.matches('.byhand-kernel-note')) child.remove();
  }
  // Scripts have done their work; saved widget state and the players' frames are not needed on paper.
  for (const el of article.querySelectorAll('script, .byhand-slider > :not(.byhand-slider-strip)')) el.remove();
  for (const el of article.querySelectorAll('img')) abs(el, 'src');
  for (const el of article.querySelectorAll('a[href]')) {
    const href = el.getAttribute('href');
    if (href.startsWith('#') || /^[a-z]+:/i.test(href)) continue;
    el.setAttribute('href', el.href);  // absolute; the print document sorts out which are its own
  }

  const styles = [];
  for (const sheet of document.styleSheets) {
    if (sheet.href) { styles.push({href: sheet.href}); continue; }
    try { styles.push({text: [...sheet.cssRules].map(r => r.cssText).join('\n')}); } catch (e) { /* foreign */ }
  }
  const h1 = article.querySelector('h1');
  return {
    title: h1 ? h1.textContent.replace(/#$/, '').trim() : document.title,
    html: article.innerHTML,
    solutions,
    styles,
  };
}"""

# Run in the print document: links between its own chapters become links inside the PDF, links to pages left out
# name their chapter; anything wider than the text column is scaled down to fit it. Returns what could not fit.
FINISH_JS = r"""([pages, minScale]) => {
  const here = new Map(pages.filter(p => p.anchor).map(p => [p.url, p.anchor]));
  for (const a of document.querySelectorAll('a[href^="http"]')) {
    const url = new URL(a.href);
    const page = url.origin + url.pathname;
    if (!page.startsWith(location.origin)) continue;
    const anchor = here.get(page);
    if (anchor !== undefined) a.setAttribute('href', '#' + (url.hash ? anchor + '--' + url.hash.slice(1) : anchor));
    else {
      const target = pages.find(p => p.url === page) || {};
      // "Softmax, in Part I: …", or only the part where the link's own text is already the chapter's title
      const where = target.part ? 'in ' + target.part : 'in the online book';
      const named = target.title && a.textContent.trim() !== target.title ? '\u201c' + target.title + '\u201d, ' : '';
      a.setAttribute('data-print-target', named + where);
      a.removeAttribute('href');
    }
  }
  // measure everything first, then scale: a write between two reads would lay the whole document out again
  const items = [...document.querySelectorAll(
      'mjx-container[display="true"], .bd-article table, .byhand-slider-strip, .cell_output img')]
      .filter(el => el.getClientRects().length);  // not displayed on paper (a closed "Show all" box)
  const scales = items.map(el => el.parentElement.getBoundingClientRect().width / Math.max(el.scrollWidth, 1));
  const tooWide = [];
  items.forEach((el, i) => {
    const s = scales[i];
    if (s >= 0.999) return;
    el.style.zoom = s.toFixed(3);
    const what = (el.textContent || el.tagName).replace(/\s+/g, ' ').slice(0, 60);
    if (s < minScale) tooWide.push(what + ' (scale ' + s.toFixed(2) + ')');
  });
  return tooWide;
}"""


def _fulfil(doc: str):
    """A route handler that answers with the print document (Playwright passes a two-argument handler the
    request as well, so the document cannot be a default argument)."""
    return lambda route: route.fulfill(body=doc, content_type="text/html; charset=utf-8")


def open_chapter(page, base: str, rel: str) -> None:
    """Load a chapter with the network cut off, and wait for MathJax, the widgets' notes and the sliders."""
    page.goto(base + rel, wait_until="load")
    page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)")
    page.evaluate("() => (window.MathJax && MathJax.startup && MathJax.startup.promise) || null")
    page.evaluate("() => document.fonts.ready.then(() => null)")
    # the widget manager renders the saved views and tools/widgets-setup.js adds its notes after them
    page.wait_for_function("""() => [...document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]')].every(s => s.parentElement.querySelector(
        '.byhand-kernel-note'))""")


def _id_prefix(html_text: str, prefix: str) -> str:
    """Give every id (and every #link to it) inside one chapter a prefix, so that chapters cannot collide."""
    html_text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}--{m.group(1)}"', html_text)
    return re.sub(r'\bhref="#([^"]+)"', lambda m: f'href="#{prefix}--{m.group(1)}"', html_text)


def _demote(html_text: str) -> str:
    """Chapter headings one level down (h1 -> h2 …), under the part's h1, so that the PDF's outline nests."""
    def sub(m):
        level = min(int(m.group(2)) + 1, 6)
        return f"<{m.group(1)}h{level}"
    return re.sub(r"<(/?)h([1-5])\b", sub, html_text)


def page_css(name: str, title: str) -> str:
    """A named page whose running head carries the chapter's title (Chromium's @page margin boxes)."""
    text = json.dumps(title, ensure_ascii=False)
    return (f"@page {name} {{ @top-left {{ content: {text}; font: italic 9pt sans-serif; color: #444; }} }}\n"
            f".print-{name} {{ page: {name}; }}")


def document(book_title: str, edition: str, parts: list[tuple[Part, list[dict]]], styles: list[dict],
             front: dict | None = None) -> str:
    """The print document of one or more parts: title page, then each part (its chapters, then its solutions)."""
    links, seen, css_text = [], set(), []
    for s in styles:
        key = s.get("href") or s.get("text")
        if key in seen:
            continue
        seen.add(key)
        if "href" in s:
            links.append(f'<link rel="stylesheet" href="{html.escape(s["href"])}">')
        else:
            css_text.append(s["text"])
    named, body = [], []
    covers = " and ".join(p.caption for p, _ in parts) if len(parts) < 3 else "the whole book"
    label = "Instructor edition, with worked solutions" if edition == "instructor" else \
        "Student edition, without worked solutions"
    body.append(f'<section class="print-cover print-front"><p class="print-book">{html.escape(book_title)}</p>'
                f'<p class="print-covers">{html.escape(covers)}</p><p class="print-edition">{label}</p></section>')
    named.append(page_css("front", book_title))
    if front:
        body.append(f'<section class="print-front print-intro" id="{front["anchor"]}">'
                    f'{_demote(_id_prefix(front["html"], front["anchor"]))}</section>')
    for i, (part, chapters) in enumerate(parts):
        named.append(page_css(f"part{i}", part.caption))
        body.append(f'<h1 class="print-part print-part{i}" id="part-{part.slug}">{html.escape(part.caption)}</h1>')
        sols = []
        for ch in chapters:
            name = "ch-" + ch["anchor"]
            named.append(page_css(name, ch["title"]))
            body.append(f'<section class="print-chapter print-{name}" id="{ch["anchor"]}">'
                        f'{_demote(_id_prefix(ch["html"], ch["anchor"]))}</section>')
            sols.extend(ch["solutions"])
        if sols:
            name = f"sol{i}"
            title = f"Solutions to {part.caption}"
            named.append(page_css(name, title))
            items = "".join(f'<section class="print-solution" id="sol-{html.escape(s["id"])}">'
                            f'<h3>{html.escape(s["title"])}</h3>{s["html"]}</section>' for s in sols)
            body.append(f'<section class="print-solutions print-{name}"><h2>{html.escape(title)}</h2>{items}'
                        f'</section>')
    return f"""<!DOCTYPE html>
<html lang="en" data-theme="light"><head><meta charset="utf-8"><title>{html.escape(book_title)}</title>
{''.join(links)}
<style>{''.join(css_text)}</style>
<style>
{chr(10).join(named)}
body {{ width: {PRINT_WIDTH_PX}px; margin: 0; }}
.print-cover {{ break-after: page; padding-top: 60mm; text-align: center; }}
.print-cover .print-book {{ font-size: 28pt; font-weight: 700; margin: 0 0 6mm; }}
.print-cover .print-covers {{ font-size: 14pt; margin: 0 0 4mm; }}
.print-intro, .print-chapter, .print-solutions {{ break-before: page; }}
h1.print-part {{ break-before: page; font-size: 22pt; padding-top: 50mm; text-align: center; }}
h1.print-part + section {{ break-before: page; }}
.print-solution {{ break-inside: auto; }}
.byhand-print-solution-note {{ font-size: 9pt; font-style: italic; }}
</style></head>
<body class="byhand-print"><main class="bd-main"><article class="bd-article" role="main">
{''.join(body)}
</article></main></body></html>"""


def build(site: Path, out: Path, edition: str, toc: Path = ROOT / "_toc.yml", log=print,
          only: tuple[str, ...] = ()) -> list[Path]:
    """Print every part and the whole book to out/ (or only the PDFs named, e.g. "part-2"); returns them."""
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}: one of {', '.join(EDITIONS)}")
    root, parts = read_toc(toc)
    if not (site / f"{root}.html").is_file():
        raise ValueError(f"{site} holds no built book ({root}.html is missing): run `make book` first")
    out.mkdir(parents=True, exist_ok=True)
    server, base = serve(site)
    written, chapters, styles = [], {}, []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": PRINT_WIDTH_PX + 40, "height": 1000})
            # a whole part is one long document: on a busy machine it takes minutes to lay out, not seconds
            page.set_default_timeout(TIMEOUT_MS)
            page.set_default_navigation_timeout(TIMEOUT_MS)
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
            if os.environ.get("BYHAND_PDF_DEBUG"):
                page.on("request", lambda r: log(f"    request {r.url[:100]}"))
                page.on("requestfinished", lambda r: log(f"    done {r.url[:100]}"))
                page.on("requestfailed", lambda r: log(f"    failed {r.url[:100]}"))
            page.emulate_media(media="print")  # lay the chapter out as it will print
            t0 = time.monotonic()
            every = [(None, root)] + [(part, f) for part in parts for f in part.files]
            for part, f in every:
                open_chapter(page, base, f + ".html")
                anchor = Path(f).name
                got = page.evaluate(PREPARE_JS, [anchor, part.caption if part else ""])
                got.update(anchor=anchor, url=base + f + ".html")
                chapters[f] = got
                styles.extend(got.pop("styles"))
                log(f"  read {f}: {got['title']} ({len(got['solutions'])} solutions)")
            log(f"read {len(every)} pages in {time.monotonic() - t0:.1f} s")
            book_title = chapters[root]["title"]
            jobs = [(part.slug, [part], None) for part in parts] + [("every-number", parts, chapters[root])]
            jobs = [j for j in jobs if not only or j[0] in only]
            part_of = {f: part.caption for part in parts for f in part.files}
            pages = [{"url": c["url"], "anchor": c["anchor"], "title": c["title"], "part": part_of.get(f, "")}
                     for f, c in chapters.items()]
            for slug, these, front in jobs:
                t0 = time.monotonic()
                doc = document(book_title, edition, [(pt, [chapters[f] for f in pt.files]) for pt in these],
                               styles, front)
                url = base + f"__print__/{slug}.html"
                page.route(url, _fulfil(doc))
                page.goto(url, wait_until="domcontentloaded")
                page.wait_for_load_state("load")
                page.evaluate("() => document.fonts.ready.then(() => null)")
                t_load = time.monotonic() - t0
                inside = {c["url"] for pt in these for c in (chapters[f] for f in pt.files)}
                if front:
                    inside.add(front["url"])
                # pages printed in this document keep their anchor; the others are named by their title
                known = [dict(q, anchor=q["anchor"] if q["url"] in inside else None) for q in pages]
                too_wide = page.evaluate(FINISH_JS, [known, MIN_SCALE])
                for what in too_wide:
                    log(f"  {slug}: shrunk below {MIN_SCALE:.0%} to fit: {what}")
                if os.environ.get("BYHAND_PDF_DEBUG"):  # the print document as printed, to look at
                    (out / f"{slug}.html").write_text(page.content())
                t_fit = time.monotonic() - t0 - t_load
                target = out / f"{slug}.pdf"
                page.pdf(path=str(target), prefer_css_page_size=True, print_background=True, outline=True,
                         tagged=True)
                written.append(target)
                log(f"wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target} "
                    f"({target.stat().st_size / 1e6:.2f} MB; {t_load:.1f} s to load, {t_fit:.1f} s to fit, "
                    f"{time.monotonic() - t0 - t_load - t_fit:.1f} s to print)")
            browser.close()
    finally:
        server.shutdown()
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edition", default=os.environ.get("BYHAND_EDITION") or "instructor", choices=EDITIONS)
    ap.add_argument("--site", type=Path, help="the built HTML (default: _build/html, or _build/student/html)")
    ap.add_argument("--out", type=Path, help="where the PDFs go (default: _build/pdf/<edition>)")
    ap.add_argument("--toc", type=Path, default=ROOT / "_toc.yml")
    ap.add_argument("--only", nargs="*", default=(), help="only these PDFs, e.g. part-2 every-number")
    args = ap.parse_args(argv)
    site = args.site or (ROOT / "_build" / ("html" if args.edition == "instructor" else "student/html"))
    out = args.out or ROOT / "_build" / "pdf" / args.edition
    try:
        build(site, out, args.edition, args.toc, only=tuple(args.only))
    except ValueError as e:
        print(f"pdf: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
