"""Check the printed book (`make pdf`): the PDFs under _build/pdf/<edition>/, with poppler's tools.

For each edition whose PDFs exist (the instructor edition must), and each PDF in it:

  pages      the page count lies in the range that tools/pdf_expected.json gives for that PDF
  size       the file is at least the size pdf_expected.json gives: a PDF that shrank suspiciously (frames, fonts
             or chapters gone missing) fails, as Jupyter Book's own PDF once fell from 21 MB to 852 kB unnoticed
  titles     every chapter title of the part (the first "# " heading of its book/*.md source) is in the text
  deeper     every deeper box (a dropdown that is not a solution) printed open: the first or the last six words of a
             run of plain words from its body, read off the built page, are in the text (a page's running head may
             split one of them; a closed box would print its title alone)
  outline    the bookmarks hold every part and every chapter title
  margin     no word runs past the right margin, or starts left of the left one (pdftotext's word boxes)
  solutions  the instructor edition gathers "Solutions to …" at the end of each part that has exercises; the student
             edition holds no solution heading and no pointer to one

When both sites are built, it also compares the student site with the instructor one: no worked solution, no
page sources, and the same answer boxes with the same data (so they still check).

It also renders a sample of pages (first, middle, last of every PDF) to PNG with pdftoppm, in
_build/pdf/<edition>/png/, and fails on a blank one. Run by `make check-pdf`.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from html import unescape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pdf import EDITIONS, read_toc  # noqa: E402  (the parts, read from _toc.yml as the PDFs were made)

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = Path(__file__).resolve().parent / "pdf_expected.json"
MM = 72 / 25.4
MARGIN_PT = 16 * MM  # print.css: 16 mm left and right
SLACK_PT = 1.0  # a word box may touch the margin line
SOLUTION_LINE = re.compile(r"^\s*Solutions?(?: to\b|:)", re.M)


def run(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def page_count(pdf: Path) -> int:
    m = re.search(r"^Pages:\s+(\d+)", run("pdfinfo", str(pdf)), re.M)
    if not m:
        raise ValueError(f"{pdf}: pdfinfo reports no page count")
    return int(m.group(1))


def chapter_title(md: Path) -> str:
    """The first level-1 heading of a chapter's source, with its Markdown and math marks taken off."""
    for line in md.read_text().splitlines():
        if line.startswith("# "):
            title = re.sub(r"[`*_]", "", line[2:]).strip()
            return re.sub(r"\$([^$]*)\$", r"\1", title)
    raise ValueError(f"{md} has no '# ' title")


def squash(text: str) -> str:
    """Text compared without its spacing, hyphenation at line ends and typographic quotes."""
    text = re.sub(r"-\n", "", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", "", text).lower()


def words_outside(bbox_html: str, margin: float = MARGIN_PT, slack: float = SLACK_PT) -> list[str]:
    """Words of `pdftotext -bbox` output that cross the left or right margin: "page 3: 'word' x 512.0-590.2"."""
    bad = []
    pages = re.split(r"<page ", bbox_html)[1:]
    for n, chunk in enumerate(pages, 1):
        width = float(re.search(r'width="([\d.]+)"', chunk).group(1))
        for x0, x1, word in re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">'
                                       r'([^<]*)</word>', chunk):
            x0, x1 = float(x0), float(x1)
            if x1 > width - margin + slack or x0 < margin - slack:
                bad.append(f"page {n}: {unescape(word)!r} x {x0:.1f}-{x1:.1f} of {width:.1f} pt")
    return bad


DROPDOWN = re.compile(r'<details class="[^"]*\bsd-dropdown\b[^"]*"[^>]*>\s*<summary[^>]*>(.*?)</summary>(.*?)</details>',
                      re.S)
WORDS = re.compile(r"[A-Za-z][A-Za-z'’]*(?:[ ,]+[A-Za-z][A-Za-z'’]*)+")


def deeper_probes(html: str, min_words: int = 5) -> list[tuple[str, str]]:
    """(title, words) for each deeper box of a built page: a dropdown whose title is not "Solution", with the longest
    run of plain words (letters, spaces and commas: no math, number or code) from its body. A box whose body has no
    run of `min_words` words gives none."""
    probes = []
    for summary, body in DROPDOWN.findall(html):
        summary = re.sub(r'<div class="sd-summary-(?:up|down)[^"]*">.*?</div>', "", summary, flags=re.S)  # arrows
        title = " ".join(unescape(re.sub(r"<[^>]+>", " ", summary)).split())
        if title == "Solution":
            continue
        body = re.sub(r'<(span|div) class="math[^"]*"[^>]*>.*?</\1>', " … ", body, flags=re.S)  # TeX source
        body = re.sub(r"<(script|style|pre|code)\b.*?</\1>", " … ", body, flags=re.S)
        text = " ".join(unescape(re.sub(r"<[^>]+>", " … ", body)).split())
        text = re.sub(r"\s*…(\s*…)*\s*", " … ", text)  # an element's edge breaks a run of words
        runs = [r.strip(" ,") for r in WORDS.findall(text.replace(" … ", "\n"))]
        best = max(runs, key=lambda r: len(r.split()), default="")
        if len(best.split()) >= min_words:
            probes.append((title, best))
    return probes


def outline_titles(pdf: Path) -> list[str]:
    """The PDF's bookmarks, as pdftohtml lists them."""
    with tempfile.TemporaryDirectory() as tmp:
        run("pdftohtml", "-xml", "-i", "-q", "-f", "1", "-l", "1", str(pdf), str(Path(tmp) / "o"))
        xml = (Path(tmp) / "o.xml").read_text(errors="replace")
    return [unescape(re.sub(r"<[^>]+>", "", t)).strip() for t in re.findall(r"<item[^>]*>(.*?)</item>", xml, re.S)]


def blank_png(png: Path) -> bool:
    from PIL import Image  # matplotlib's dependency, in the venv

    with Image.open(png) as im:
        lo, hi = im.convert("L").getextrema()
    return lo > 250  # nothing darker than near-white on the page


def check_pdf(pdf: Path, expected: dict, titles: list[str], part_captions: list[str], edition: str,
              png_dir: Path, probes: list[tuple[str, str]] = ()) -> list[str]:
    """Every finding for one PDF, as lines to print."""
    name = pdf.name
    problems = []
    exp = expected.get(name)
    if exp is None:
        return [f"{name}: not in the expected sizes ({EXPECTED.name}); add its page range and minimum size"]
    pages, size = page_count(pdf), pdf.stat().st_size
    lo, hi = exp["pages"]
    if not lo <= pages <= hi:
        problems.append(f"{name}: {pages} pages, expected {lo}-{hi}")
    if size < exp["min_bytes"]:
        problems.append(f"{name}: {size} bytes, below the {exp['min_bytes']} expected: it shrank suspiciously")
    text = run("pdftotext", "-layout", str(pdf), "-")
    flat = squash(text)
    for t in titles:
        if squash(t) not in flat:
            problems.append(f"{name}: chapter title missing from the text: {t!r}")
    for title, words in probes:
        w = words.split()
        if not any(squash(" ".join(part)) in flat for part in (w[:6], w[-6:])):  # a page break may split one
            problems.append(f"{name}: the deeper box {title!r} printed closed, or its text is missing: {words!r}")
    marks = outline_titles(pdf)
    flat_marks = {squash(m) for m in marks}
    for t in titles + part_captions:
        if squash(t) not in flat_marks:
            problems.append(f"{name}: no bookmark for {t!r}")
    outside = words_outside(run("pdftotext", "-bbox", str(pdf), "-"))
    problems += [f"{name}: past the margin, {w}" for w in outside[:10]]
    if len(outside) > 10:
        problems.append(f"{name}: … and {len(outside) - 10} more words past the margin")
    has_solutions = bool(SOLUTION_LINE.search(text))
    if edition == "student" and has_solutions:
        line = SOLUTION_LINE.search(text)
        heading = line.group(0).strip() + text[line.end():].split("\n", 1)[0]
        problems.append(f"{name}: the student edition holds a solution heading: {heading.strip()!r}")
    if edition == "instructor" and exp.get("solutions") and not has_solutions:
        problems.append(f"{name}: the instructor edition has no \"Solutions to …\" section")
    for k in sorted({1, (pages + 1) // 2, pages}):
        stem = png_dir / f"{pdf.stem}-{k}"
        run("pdftoppm", "-png", "-r", "60", "-f", str(k), "-l", str(k), "-singlefile", str(pdf), str(stem))
        if blank_png(stem.with_suffix(".png")):
            problems.append(f"{name}: page {k} renders blank")
    print(f"  {name}: {pages} pages, {size / 1e6:.2f} MB, {len(marks)} bookmarks, "
          f"{len(probes)} deeper boxes open, {'solutions' if has_solutions else 'no solutions'}, "
          f"{len(outside)} words past the margin")
    return problems


def check_edition(edition: str, folder: Path, toc: Path = ROOT / "_toc.yml", expected_file: Path = EXPECTED,
                  site: Path | None = None) -> list[str]:
    expected = json.loads(expected_file.read_text())[edition]  # {"part-1.pdf": {"pages": [lo, hi], …}, …}
    root, parts = read_toc(toc)
    png_dir = folder / "png"
    png_dir.mkdir(parents=True, exist_ok=True)
    problems = []
    jobs = [(p.slug, [p]) for p in parts] + [("every-number", parts)]
    for slug, these in jobs:
        pdf = folder / f"{slug}.pdf"
        if not pdf.is_file():
            how = "make pdf" + ("" if edition == "instructor" else " EDITION=student")
            problems.append(f"{pdf.name}: missing (run `{how}`)")
            continue
        titles = [chapter_title(ROOT / f"{f}.md") for p in these for f in p.files]
        pages = [site / f"{f}.html" for p in these for f in p.files] if site else []
        probes = [pr for page in pages if page.is_file() for pr in deeper_probes(page.read_text(errors="replace"))]
        problems += check_pdf(pdf, expected, titles, [p.caption for p in these], edition, png_dir, probes)
    return problems


SOLUTION_BOX = re.compile(r'<summary[^>]*>\s*(?:<span[^>]*>)?\s*Solution\s*<')  # sphinx-design's dropdown title


def check_sites(instructor: Path, student: Path, toc: Path = ROOT / "_toc.yml") -> list[str]:
    """The student site against the instructor one, page by page: no worked solution (no "Solution" box, no cell
    tagged solution), no page sources, and the same answer boxes with the same data, so that they still check."""
    root, parts = read_toc(toc)
    problems, boxes, solutions = [], 0, 0
    for f in [root] + [f for p in parts for f in p.files]:
        a, b = (site / f"{f}.html" for site in (instructor, student))
        if not b.is_file():
            problems.append(f"student site: {f}.html missing")
            continue
        ta, tb = a.read_text(errors="replace"), b.read_text(errors="replace")
        solutions += len(SOLUTION_BOX.findall(ta))
        if SOLUTION_BOX.search(tb) or "tag_solution" in tb:
            problems.append(f"student site: {f}.html still shows a worked solution")
        box_a, box_b = (re.findall(r'class="en-exercise" data-exercise="([^"]*)"', t) for t in (ta, tb))
        boxes += len(box_b)
        if box_a != box_b:
            problems.append(f"student site: {f}.html has {len(box_b)} answer boxes, the instructor's {len(box_a)}, "
                            f"or their data differ")
    if (student / "_sources").exists():
        problems.append("student site: _sources/ is there, and the sources hold the solutions")
    if solutions == 0:
        problems.append("instructor site: no worked solution at all")
    print(f"  sites: {boxes} answer boxes in both editions; {solutions} worked solutions in the instructor's only")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pdf-root", type=Path, default=ROOT / "_build" / "pdf")
    ap.add_argument("--toc", type=Path, default=ROOT / "_toc.yml")
    ap.add_argument("--expected", type=Path, default=EXPECTED, help="page ranges and minimum sizes (JSON)")
    args = ap.parse_args(argv)
    problems = []
    sites = [ROOT / "_build" / "html", ROOT / "_build" / "student" / "html"]
    if all((s / "index.html").is_file() for s in sites):
        print("sites:")
        problems += check_sites(*sites, args.toc)
    for edition in EDITIONS:
        folder = args.pdf_root / edition
        if edition == "student" and not folder.is_dir():
            print("student edition: no PDFs (make book pdf EDITION=student), not checked")
            continue
        print(f"{edition} edition:")
        site = sites[EDITIONS.index(edition)]
        problems += check_edition(edition, folder, args.toc, args.expected, site if site.is_dir() else None)
    for p in problems:
        print("FAIL", p)
    print(f"check-pdf: {len(problems)} finding(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
