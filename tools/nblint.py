"""Notebook hygiene for the book's chapters: `make lint`.

nbval checks that each notebook's outputs come back the same; this checks how the notebooks are kept, the things a
reader would trip over that no output comparison sees. One line per finding, exit 1 if there is any:

- every chapter in _toc.yml exists, every notebook in notebooks/ is a page of _toc.yml, each is valid nbformat 4;
- the readers' notebook (notebooks/NN_topic.ipynb) of each chapter source (book/NN_topic.md) exists and its code cells,
  with their tags, are exactly the source's: the two cannot drift (regenerate with `make outputs`);
- executed top to bottom in one fresh kernel (execution counts 1..n), no stored errors outside `raises-exception`
  cells, no cell tagged both `raises-exception` and `nbval-raises-exception`;
- the first code cell is the Colab guard, installing the library as it is at HEAD (its commit, written in by
  tools/outputs.py; `make pin` after committing a library change), and no cell edits sys.path or runs `pip` outside it;
- widget and static-slider cells are tagged `nbval-ignore-output` (their outputs are not comparable);
- no cell ends in a bare `glue(...)`, which prints the raw value on the page (a trailing ';' does not silence it
  when nbval runs the cell);
- no TeX command eaten by a Python escape (a tab or backspace before letters) in Markdown, LaTeX or HTML a cell writes;
- no object addresses, machine paths or over-long floats in outputs (print at most 5 decimals, or a bound);
- no internal nicknames on the page: sources are cited by title;
- no result typed into a chapter's prose: a decimal with three or more significant digits in a Markdown cell of
  `book/*.md`, outside math, code and glue roles, is a number that should come from a code cell through glue. A
  setting or threshold the text chooses (Δ = 0.25, "above 0.01", head 9.9) has at most two significant digits and is
  allowed; a constant with more belongs in math (`$\\beta_2 = 0.999$`), where definitions are written;
- no glued number in a dropdown's title: its popover link would sit inside the summary button (axe: nested-interactive).
"""
from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
NICKNAMES = re.compile(r"\b(the seed(?:'s|s)?\b|seeds?[ _/-]?00\d|the public (?:walkthrough|derivation)|"
                       r"the derivation\b)", re.IGNORECASE)
ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}")
MACHINE_PATH = re.compile(r"(/home/\w|/Users/\w|/root/|/tmp/|site-packages|\.venv/)")
# more than 6 decimals in printed text: noise digits that differ between CPUs (the sanitizer keeps 6)
# a TeX command eaten by a Python escape in a non-raw string: "\text" -> tab + "ext", "\beta" -> backspace + "eta"
EATEN_TEX = re.compile(r"[\t\b\f\v\a](?=[A-Za-z])")
LONG_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{7,}(?:e[+-]?\d+)?")
WIDGET = re.compile(r"\b(interactive_view|static_slider|interact|interactive_output|widgets\.)\b")
# prose with math, code, glue and other roles, link targets and HTML tags taken out: what a typed number hides in
PROSE_ONLY = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$|```.*?```|`[^`\n]*`|\{[a-z:]+\}`[^`]*`|\]\([^)]*\)|<[^>]+>", re.S)
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
PIP = re.compile(r"(^|\n)\s*[!%]pip\b|\bpip install\b")


def toc_notebooks() -> list[Path]:
    names = re.findall(r"^\s*(?:-\s*file|root):\s*(\S+)", (ROOT / "_toc.yml").read_text(), re.MULTILINE)
    return [ROOT / n for n in names]


def comment_text(src: str) -> str:
    """The parts of code a reader sees as prose: comments."""
    return "\n".join(line.split("#", 1)[1] for line in src.splitlines() if "#" in line)


def output_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if "text" in out:
            parts.append(out["text"])
        for mime in ("text/plain", "text/markdown", "text/latex"):
            if mime in out.get("data", {}):
                parts.append(out["data"][mime])
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def lint_notebook(path: Path) -> list[str]:
    rel = path.relative_to(ROOT)
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # any parse or schema failure is one finding
        return [f"{rel}: not a valid notebook ({type(exc).__name__}: {exc})"]
    found = []
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    counts = [c.get("execution_count") for _, c in code]
    if counts != list(range(1, len(code) + 1)):
        found.append(f"{rel}: execution counts are {counts[:6]}…, not 1..{len(code)}: run it top to bottom "
                     "in a fresh kernel (make outputs)")
    if code and "google.colab" not in code[0][1].source:
        found.append(f"{rel}: the first code cell is not the Colab guard")
    for i, cell in enumerate(nb.cells):
        where = f"{rel} cell {i}"
        tags = set(cell.metadata.get("tags", []))
        src = cell.source
        shown = src if cell.cell_type == "markdown" else comment_text(src) + "\n" + output_text(cell)
        if "remove-cell" not in tags and (m := NICKNAMES.search(shown)):
            found.append(f"{where}: internal name {m.group(0)!r} on the page; cite the source by title")
        if cell.cell_type != "code":
            continue
        if "sys.path" in src:
            found.append(f"{where}: edits sys.path; install byhand instead (pip install -e .)")
        if PIP.search(src) and "google.colab" not in src:
            found.append(f"{where}: installs packages outside the Colab guard")
        if {"raises-exception", "nbval-raises-exception"} <= tags:
            found.append(f"{where}: tagged both raises-exception and nbval-raises-exception; keep raises-exception")
        if WIDGET.search(src) and not tags & {"nbval-ignore-output", "nbval-skip"}:
            found.append(f"{where}: builds a widget or static slider but is not tagged nbval-ignore-output")
        lines = [ln for ln in src.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if lines and re.match(r"\s*glue\(", lines[-1]):  # a ';' does not silence it under nbval
            found.append(f"{where}: ends in glue(...), which prints the raw value; assign it (`_ = glue(...)`)")
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and "raises-exception" not in tags:
                found.append(f"{where}: stored error ({out.get('ename')}) in a cell not tagged raises-exception")
        if "nbval-ignore-output" in tags:
            continue
        text = output_text(cell)
        if ADDRESS.search(text):
            found.append(f"{where}: an object address in the output; show a value instead")
        if MACHINE_PATH.search(text):
            found.append(f"{where}: a path of this machine in the output")
        if m := LONG_FLOAT.search(text):
            found.append(f"{where}: {m.group(0)!r} in the output: print at most 5 decimals, or a bound (byhand.bounds)")
        written = "\n".join("".join(out.get("data", {}).get(mime, "")) for out in cell.get("outputs", [])
                            for mime in ("text/markdown", "text/latex", "text/html"))
        if m := EATEN_TEX.search(written):
            found.append(f"{where}: a control character before {written[m.end():m.end() + 6]!r} in written Markdown: "
                         "a TeX command in a non-raw Python string (write r\"...\")")
    return found


def typed_numbers(source: Path) -> list[str]:
    """Findings for results typed into a chapter's prose (see the module docstring)."""
    found = []
    cells = [c.source for c in jupytext.read(source).cells if c.cell_type == "markdown"]
    for k, md in enumerate(cells):
        if re.search(r"^:{3,}\{dropdown\}[^\n]*\{glue", md, re.M):
            found.append(f"book/{source.name}: Markdown cell {k}: a glued number in a dropdown's title is a link inside "
                         "its summary button (nested-interactive): put the number in the dropdown's body")
        for m in DECIMAL.finditer(PROSE_ONLY.sub(" ", md)):
            if len(m.group(0).replace(".", "").lstrip("0")) >= 3:
                found.append(f"book/{source.name}: Markdown cell {k}: {m.group(0)!r} is typed into the prose: glue it "
                             "from the cell that computes it ({glue:text})")
    return found


def drift(source: Path) -> list[str]:
    """Findings where a chapter's readers' notebook no longer matches its text source."""
    made = ROOT / "notebooks" / f"{source.stem}.ipynb"
    rel = made.relative_to(ROOT)
    if not made.exists():
        return [f"{rel}: missing; generate it from {source.name} with `make outputs CHAPTER={source.stem}`"]
    want = [(c.source, c.metadata.get("tags", [])) for c in jupytext.read(source).cells if c.cell_type == "code"]
    have = [(outputs_tool().PIN.sub("", c.source), c.metadata.get("tags", []))
            for c in nbformat.read(made, as_version=4).cells
            if c.cell_type == "code"]  # the Colab cell's pin is the readers' notebook's own (tools/outputs.py)
    if len(want) != len(have):
        return [f"{rel}: {len(have)} code cells, its source {source.name} has {len(want)}: run "
                f"`make outputs CHAPTER={source.stem}`"]
    return [f"{rel}: code cell {k} differs from {source.name} ({'tags' if w[0] == h[0] else 'source'}): run "
            f"`make outputs CHAPTER={source.stem}`" for k, (w, h) in enumerate(zip(want, have)) if w != h][:3]


@functools.lru_cache(maxsize=None)
def outputs_tool():
    """tools/outputs.py, which writes the readers' notebooks (and their Colab pins), loaded once."""
    spec = importlib.util.spec_from_file_location("outputs_tool", ROOT / "tools" / "outputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def colab_pins(paths: list[Path]) -> list[str]:
    """The Colab cell of each chapter's notebook installs the library as it is at HEAD (tools/outputs.py pins it)."""
    return outputs_tool().pin_problems(paths)


def main() -> int:
    listed = toc_notebooks()
    found = [f"_toc.yml: {p.relative_to(ROOT)}.md does not exist" for p in listed if not p.with_suffix(".md").exists()]
    names = {p.with_suffix("").name for p in listed}
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    found += [f"{p.relative_to(ROOT)}: not in _toc.yml" for p in notebooks if p.stem not in names]
    for p in notebooks:
        found += lint_notebook(p)
    sources = [p.with_suffix(".md") for p in listed if p.with_suffix(".md").exists()]
    for src in sources:
        if "kernelspec:" in src.read_text().split("\n---", 1)[0]:  # a notebook's source, not a plain page
            found += drift(src)
            found += typed_numbers(src)
        elif not (ROOT / "notebooks" / f"{src.stem}.ipynb").exists():
            found.append(f"notebooks/{src.stem}.ipynb: the readers' copy of {src.name} is missing "
                         "(make outputs)")
    found += colab_pins([p for p in notebooks if p.stem[:2].isdigit()])
    for line in found:
        print(line)
    print(f"nblint: {len(notebooks)} notebooks, {len(found)} finding(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
