"""Make the readers' notebooks: `make outputs` (all chapters) or `make outputs CHAPTER=13` (one).

Each chapter's source of truth is its text source, ``book/NN_topic.md`` (a MyST Markdown notebook, read with
jupytext). The book builds from the sources. Readers who open a chapter in Binder, Colab, JupyterLab or GitHub's
viewer get ``notebooks/NN_topic.ipynb``, which this script generates: it executes the source, then writes its prose as
plain Markdown that reads right with no extension:

- ``{glue:text}`name:fmt``` becomes the number the notebook computed, formatted as the page formats it;
- ``{cite}`key``` becomes "[Author et al., year]", as on the page, linked to the bibliography notebook;
- ``{ref}`label``` becomes the title of the chapter or section it points to, linked;
- ``(label)=`` becomes an HTML anchor, a dropdown becomes ``<details>``, an admonition a quote with its title;
- a cell that computes an exercise's answer (``get(...).solve()``) moves below that exercise's solution (only
  Markdown lies between, so nothing runs in a different order), and every cell folded on the page is folded in the
  notebook for JupyterLab (``source_hidden``) and for Colab (``cellView: form``, which shows "Show code"): a reader
  in any of them, or in a viewer that folds nothing, meets the answer only past the solution;
- the Colab cell installs the library as of the commit that last changed it (``src/byhand``, ``pyproject.toml``),
  which is the library this notebook's outputs were made with; a comment in the cell names the library's content id.
  After committing a change to the library, ``make pin`` (``--pin``) writes the new commit into every notebook
  without executing anything, and ``make lint`` fails until it has;
- the book's TeX macros (``\\dmodel``, ``\\softmax``, …, defined for the site in ``_config.yml``) are written out in
  full, since JupyterLab, Colab and GitHub's viewer typeset with their own MathJax and cannot be given the book's
  configuration (a ``\\newcommand`` cell works in JupyterLab only once that cell has rendered, and not everywhere).

The result is deterministic, byte for byte: no execution timestamps, widget model ids numbered in order of
appearance, static sliders that hash their own ids (``byhand.slider``), PNGs without version metadata (the kernel
configuration in ``tools/kernel``). The pages ``intro``, ``notation`` and ``bibliography`` get readers' copies too,
so that every link from a notebook lands on something that reads right.

Usage: python tools/outputs.py [--jobs N] [CHAPTER ...]   (CHAPTER: "13", "13_scores" or "book/13_scores.md")
"""
from __future__ import annotations

import argparse
import codecs
import concurrent.futures
import copy
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import yaml
import latexcodec  # noqa: F401  (registers the "ulatex" codec used for author names and titles)
import nbformat
from myst_nb.core.variables import format_plain_text  # the page's own formatting of {glue:text}
from nbclient import NotebookClient
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"  # the sources
OUT = ROOT / "notebooks"  # the readers' notebooks, generated
TOC = ROOT / "_toc.yml"
BIB = ROOT / "references.bib"
PAGES = ("intro", "notation", "bibliography")  # Markdown pages that get a readers' copy too
HIDDEN_TAGS = {"hide-input", "hide-cell", "remove-input", "remove-cell"}

CODE = re.compile(r"(^`{3,}.*?^`{3,}[ \t]*$|`[^`\n]+`)", re.M | re.S)  # a fenced block or an inline code span
ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
LABEL = re.compile(r"^\(([A-Za-z0-9_.:-]+)\)=\s*$", re.M)
FENCE_OPEN = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[a-z-]+)\}[ \t]*(?P<arg>.*)$")
ADMONITIONS = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important", "hint": "Hint",
               "caution": "Caution", "attention": "Attention", "danger": "Danger", "error": "Error",
               "seealso": "See also"}


def tex_macros() -> dict[str, str]:
    """The book's TeX macros, name -> replacement, as ``_config.yml`` defines them for the site's MathJax."""
    config = yaml.safe_load(ROOT.joinpath("_config.yml").read_text())
    macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    for name, body in macros.items():
        if not isinstance(body, str) or "#" in body:
            raise RenderError(f"TeX macro \\{name} takes arguments or is not a plain string; expand it by hand here")
    return macros


def expand_macros(md: str, macros: dict[str, str]) -> str:
    """``md`` with every ``\\name`` of the book's macros written out (``\\dmodel`` -> ``d_{\\text{model}}``).

    A name followed by another letter is a different command (``\\Rightarrow`` is not ``\\R``), so it is left alone.
    A macro wrapped in braces keeps them, so ``\\dmodel^2`` stays one superscripted group.
    """
    if not macros:
        return md
    pattern = re.compile(r"\\(" + "|".join(sorted(map(re.escape, macros), key=len, reverse=True)) + r")(?![A-Za-z])")
    parts = CODE.split(md)  # code (fenced or inline) shows a macro's name, as the notation page does: left alone
    return "".join(part if k % 2 else pattern.sub(lambda m: "{" + macros[m.group(1)] + "}", part)
                   for k, part in enumerate(parts))


class RenderError(ValueError):
    """A piece of MyST markup this script does not know how to write as plain Markdown."""


# ------------------------------------------------------------------------------------------ what links point to
def chapters() -> list[Path]:
    """The chapter sources in the order of _toc.yml: the text sources that are notebooks."""
    found = []
    for stem in re.findall(r"^\s*-?\s*(?:file|root):\s*book/(\S+)\s*$", TOC.read_text(), re.M):
        path = BOOK / f"{stem}.md"
        if path.exists() and "kernelspec:" in path.read_text().split("\n---", 1)[0]:
            found.append(path)
    return found


def markdown_cells(path: Path) -> list[str]:
    """The Markdown of a source: its Markdown cells if it is a notebook, the whole file if it is a page."""
    if path.stem in PAGES:
        return [path.read_text()]
    return [c.source for c in jupytext.read(path).cells if c.cell_type == "markdown"]


def label_targets() -> dict[str, tuple[str, str]]:
    """label -> (notebook stem, title of the heading the label stands on), over every chapter and page."""
    targets = {}
    for path in chapters() + [BOOK / f"{p}.md" for p in PAGES]:
        first = re.search(r"^# +(.+)$", "\n".join(markdown_cells(path)), re.M)
        targets[f"doc:{path.stem}"] = (path.stem, first.group(1).strip() if first else path.stem)
        for md in markdown_cells(path):
            for m in LABEL.finditer(md):
                rest = md[m.end():].lstrip("\n").split("\n", 1)[0]
                title = re.sub(r"^#+\s*", "", rest).strip() if rest.startswith("#") else None
                if m.group(1) in targets:
                    raise RenderError(f"label {m.group(1)!r} is defined twice")
                targets[m.group(1)] = (path.stem, title)
    return targets


def _plain(tex: str) -> str:
    """A BibTeX field as plain text: LaTeX accents decoded, protective braces dropped."""
    return codecs.decode(tex, "ulatex").replace("{", "").replace("}", "")


def bibliography() -> dict[str, dict]:
    """key -> {"cite": "Vaswani et al., 2017", "entry": the full reference as Markdown}."""
    out = {}
    for key, e in parse_file(str(BIB)).entries.items():
        people = e.persons.get("author", [])
        last = [_plain(" ".join(p.last_names)) for p in people]
        title = _plain(e.fields.get("title", key))
        # by author and year, as the page cites; a work with no named author is cited by its title
        who = (title if not last else last[0] if len(last) == 1 else " and ".join(last) if len(last) == 2
               else f"{last[0]} et al.")
        year = e.fields.get("year", "n.d.")
        names = ", ".join(_plain(" ".join(p.first_names + p.middle_names + p.last_names)) for p in people) or title
        where = next((_plain(e.fields[f]) for f in ("booktitle", "journal", "institution", "howpublished",
                                                     "publisher") if f in e.fields), "")
        tail = "".join(f" {x}." for x in (where, _plain(e.fields.get("note", ""))) if x)
        url = e.fields.get("url")
        shown = f"[{title}]({url})" if url else title
        entry = f"{names} ({year}). *{shown}*.{tail}" if last else f"*{shown}* ({year}).{tail}"
        out[key] = {"cite": f"{who}, {year}", "entry": entry, "sort": (last or [title], year)}
    return out


# ------------------------------------------------------------------------------------------ MyST -> Markdown
def _directives(md: str, where: str) -> str:
    """Write dropdowns as <details>, admonitions as quotes with their title, math blocks as $$ … $$."""
    lines, out, i = md.split("\n"), [], 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        fence, name, arg = m.group("fence"), m.group("name"), m.group("arg").strip()
        j = i + 1
        options = {}
        while j < len(lines) and re.match(r"^:[a-z-]+:", lines[j]):  # directive options such as :open:
            key, _, value = lines[j][1:].partition(":")
            options[key] = value.strip()
            j += 1
        k = j
        while k < len(lines) and lines[k].strip() != fence:
            k += 1
        if k == len(lines):
            raise RenderError(f"{where}: the {name} fence opened by {lines[i]!r} never closes")
        body = _directives("\n".join(lines[j:k]).strip("\n"), where)
        if name == "dropdown":
            title = arg or "Details"
            out += [f"<details{' open' if 'open' in options else ''}>", f"<summary>{title}</summary>", "", body, "",
                    "</details>"]
        elif name in ADMONITIONS or name == "admonition":
            title = arg if name == "admonition" else ADMONITIONS[name] + (f": {arg}" if arg else "")
            out += [f"> **{title}**", ">"] + [f"> {line}" if line else ">" for line in body.split("\n")]
        elif name == "math":
            out += ["$$", body, "$$"]
        else:
            raise RenderError(f"{where}: no plain-Markdown form for the {name!r} directive")
        i = k + 1
    return "\n".join(out)


class Renderer:
    """Writes one notebook's MyST Markdown as plain Markdown, with that notebook's glued values."""

    def __init__(self, stem: str, glued: dict[str, dict], targets: dict, bib: dict):
        self.stem, self.glued, self.targets, self.bib = stem, glued, targets, bib
        self.cited: set[str] = set()
        self.macros = tex_macros()

    def link(self, label: str) -> str:
        stem, _ = self.targets[label]
        if label.startswith("doc:"):  # a whole page
            return f"{stem}.ipynb"
        return f"#{label}" if stem == self.stem else f"{stem}.ipynb#{label}"

    def role(self, m: re.Match, where: str) -> str:
        name, text = m.group(1), m.group(2)
        if name == "glue:text":
            key, _, fmt = text.rpartition(":") if ":" in text else (text, "", "")
            if "::" in key:
                raise RenderError(f"{where}: glue from another notebook ({text!r}) is not supported here")
            if key not in self.glued:
                raise RenderError(f"{where}: {key!r} is not glued by this notebook")
            return format_plain_text(self.glued[key]["text/plain"], fmt or "s")
        if name == "cite":
            keys = [k.strip() for k in text.split(",")]
            unknown = [k for k in keys if k not in self.bib]
            if unknown:
                raise RenderError(f"{where}: no bibliography entry for {unknown}")
            self.cited.update(keys)
            # as the page cites: [Vaswani et al., 2017], the brackets shown, each name linked to its entry
            return "\\[" + "; ".join(f"[{self.bib[k]['cite']}](bibliography.ipynb#{k})" for k in keys) + "\\]"
        if name in ("ref", "doc"):
            explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", text, re.S)
            label = explicit.group(2) if explicit else text
            if name == "doc":
                label = "doc:" + Path(label).stem
            if label not in self.targets:
                raise RenderError(f"{where}: unknown label {label!r}")
            title = explicit.group(1) if explicit else self.targets[label][1]
            if not title:
                raise RenderError(f"{where}: {{ref}}`{label}` needs a title: the label is not on a heading")
            return f"[{self.inline(title, where)}]({self.link(label)})"
        raise RenderError(f"{where}: no plain-Markdown form for the {{{name}}} role")

    def inline(self, text: str, where: str) -> str:
        return ROLE.sub(lambda m: self.role(m, where), text)

    def output_links(self, md: str, where: str) -> str:
        """Markdown that a code cell wrote: its links to a label, ``[text](#label)`` (which MyST resolves across the
        book), point at the notebook the label is in. A MyST role there has no plain form: it is an error."""
        if m := ROLE.search(md):
            raise RenderError(f"{where}: a code cell's Markdown holds the role {m.group(0)!r}; write a link "
                              "[text](#label) instead")

        def point(m: re.Match) -> str:
            label = m.group(1)
            if label not in self.targets:
                raise RenderError(f"{where}: a code cell's Markdown links to the unknown label {label!r}")
            return f"]({self.link(label)})"

        return expand_macros(re.sub(r"\]\(#([A-Za-z0-9_.:-]+)\)", point, md), self.macros)

    def markdown(self, md: str, where: str) -> str:
        md = LABEL.sub(lambda m: f'<a id="{m.group(1)}"></a>\n', md)  # an anchor, then a blank line, then the heading
        md = _directives(md, where)
        return expand_macros(self.inline(md, where), self.macros)


# ------------------------------------------------------------------------------------------ determinism
def _renumber_widgets(nb, stem: str) -> None:
    """Give ipywidgets' random model ids stable names: numbered in order of appearance, salted by the chapter."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state")
    if not state:
        return
    order: list[str] = []

    def visit(mid: str) -> None:
        if mid in state and mid not in order:
            order.append(mid)
            for ref in re.findall(r"IPY_MODEL_([0-9a-f]{32})", json.dumps(state[mid], sort_keys=True)):
                visit(ref)

    for cell in nb.cells:
        for out in cell.get("outputs", []):
            view = out.get("data", {}).get("application/vnd.jupyter.widget-view+json")
            if view:
                visit(view["model_id"])
    for mid in sorted(state):  # models no view reaches (rare): sorted by content, so their order is stable too
        visit(mid)
    new = {mid: hashlib.sha1(f"{stem}:{k}".encode()).hexdigest()[:32] for k, mid in enumerate(order)}
    pattern = re.compile("|".join(map(re.escape, new)))

    def rename(obj):
        text = pattern.sub(lambda m: new[m.group(0)], json.dumps(obj))
        return json.loads(text)

    nb.metadata["widgets"] = rename(nb.metadata["widgets"])
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(o) for o in rename(cell.outputs)]


# ------------------------------------------------------------------------------------------ one notebook
def glued_values(nb) -> dict[str, dict]:
    """name -> mime bundle of every glue() output, read the way myst-nb reads them."""
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if out.get("output_type") == "display_data" and meta:
                prefix = len(meta.get("mime_prefix", ""))
                glued[meta["name"]] = {k[prefix:]: v for k, v in out["data"].items()}
    return glued


SOLUTION = "<summary>Solution</summary>"
PACKAGE = "byhand @ git+https://github.com/every-number/every-number"  # as the chapters' Colab cell writes it
LIBRARY = ("src/byhand", "pyproject.toml")  # what the Colab cell installs
# a pin, as pin_colab writes it: a comment line, and the commit as a string continuing the package's
PIN = re.compile(r'^[ \t]*# The library as of commit .*\n|\n[ \t]*"@[0-9a-f]{40}"', re.M)


def _git(*args: str) -> str | None:
    run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return run.stdout.strip() if run.returncode == 0 else None


def library_id(rev: str = "HEAD") -> str | None:
    """The library's content at a commit as one short id (from git's ids of src/byhand and pyproject.toml), or
    None where git cannot say (not a checkout, or the commit is not in this clone)."""
    ids = _git("rev-parse", *[f"{rev}:{p}" for p in LIBRARY])
    return hashlib.sha1(ids.encode()).hexdigest()[:12] if ids else None


def library_commit() -> str | None:
    """The last commit that changed the library (HEAD in a shallow clone whose history starts after it)."""
    return _git("log", "-1", "--format=%H", "--", *LIBRARY) or _git("rev-parse", "HEAD")


def pin_colab(source: str, commit: str, lib: str) -> str:
    """The Colab cell, installing the library as of `commit` (content id `lib`), with a line that says so."""
    source = PIN.sub("", source)
    at = source.find(f'"{PACKAGE}"')
    run = source.rfind("subprocess.run(", 0, at)
    if at < 0 or run < 0:
        raise RenderError(f"the Colab cell does not run pip on {PACKAGE!r}")
    run_line = source.rfind("\n", 0, run) + 1
    col = at - (source.rfind("\n", 0, at) + 1)  # the package string's column: the commit string goes under it
    end = at + len(PACKAGE) + 2
    note = (f"{source[run_line:run]}# The library as of commit {commit[:12]} (content {lib}), with which these "
            "outputs were made:\n")
    return source[:run_line] + note + source[run_line:end] + f'\n{" " * col}"@{commit}"' + source[end:]


def colab_cell(nb):
    """A notebook's first code cell: the Colab guard that installs the library (None if it has no code)."""
    return next((c for c in nb.cells if c.cell_type == "code"), None)


def pinned(nb) -> tuple[str, str] | None:
    """(commit, content id) that a readers' notebook's Colab cell installs, or None."""
    code = colab_cell(nb)
    m = code and re.search(r'"@([0-9a-f]{40})"', code.source)
    n = code and re.search(r"# The library as of commit .*\(content ([0-9a-f]{12})\)", code.source)
    return (m.group(1), n.group(1)) if m and n else None


def pin_problems(paths: list[Path]) -> list[str]:
    """Each readers' notebook whose Colab cell does not install the library as it is at HEAD."""
    head = library_id()
    if head is None:
        return []  # not a git checkout: nothing to compare with
    found = []
    for path in paths:
        pin = pinned(nbformat.read(path, as_version=4))
        if pin is None:
            found.append(f"notebooks/{path.name}: the Colab cell pins no commit (make outputs)")
        elif pin[1] != head or library_id(pin[0]) not in (None, head):
            found.append(f"notebooks/{path.name}: the Colab cell installs the library as of {pin[0][:12]}, which "
                         f"is not the library at HEAD: commit, then `make pin`")
    return found


def pin_all() -> int:
    """Write the library's last commit into every readers' notebook's Colab cell; execute nothing."""
    commit, lib = library_commit(), library_id()
    if not (commit and lib):
        raise SystemExit("make pin needs a git checkout")
    if _git("status", "--porcelain", "--", *LIBRARY):
        raise SystemExit("the library has uncommitted changes: commit them first, then `make pin`")
    changed = 0
    for path in sorted(OUT.glob("[0-9]*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        code = colab_cell(nb)
        new = pin_colab(code.source, commit, lib)
        if new != code.source:
            code.source, changed = new, changed + 1
            write(nb, path)
    print(f"make pin: {changed} notebook(s) now install the library as of {commit[:12]} (content {lib})")
    return 0


def answers_below_solutions(cells: list) -> list:
    """Move each code cell that computes an exercise's answer (``.solve()``) below the exercise's solution: past the
    Markdown cells that follow it, up to and including the last one holding a solution. Only Markdown is passed over,
    so the code cells run in the same order."""
    cells = list(cells)
    i = 0
    while i < len(cells):
        cell = cells[i]
        if cell.cell_type == "code" and ".solve()" in cell.source:
            j = i + 1
            while j < len(cells) and cells[j].cell_type == "markdown":
                j += 1
            last = max((k for k in range(i + 1, j) if SOLUTION in cells[k].source), default=None)
            if last is not None:
                cells.insert(last, cells.pop(i))
                i = last  # the moved cell's new place; the cell now at i was the one after it
        i += 1
    return cells


def render(nb, stem: str, glued: dict, targets: dict, bib: dict):
    """The readers' copy of an executed notebook (a new object; ``nb`` is left as it is)."""
    nb = copy.deepcopy(nb)
    r = Renderer(stem, glued, targets, bib)
    for k, cell in enumerate(nb.cells):
        cell.metadata.pop("execution", None)
        if cell.cell_type == "markdown":
            cell.source = r.markdown(cell.source, f"{stem}.md, Markdown cell {k}")
        else:
            tags = set(cell.metadata.get("tags", []))
            if HIDDEN_TAGS & tags:
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True  # collapsed, as on the page
                cell.metadata["cellView"] = "form"  # Colab's folded code ("Show code")
            if tags & {"hide-cell", "hide-output"} and cell.outputs:  # the page folds these outputs too
                cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True
            for out in cell.outputs:
                if "text/markdown" in out.get("data", {}):
                    out["data"]["text/markdown"] = r.output_links(out["data"]["text/markdown"],
                                                                  f"{stem}.md, code cell {k}")
    nb.cells = answers_below_solutions(nb.cells)
    commit, lib = library_commit(), library_id()
    if commit and lib:
        first = colab_cell(nb)
        first.source = pin_colab(first.source, commit, lib)
    if r.cited:  # the works this chapter cites, where the reader is
        refs = sorted(r.cited, key=lambda k: bib[k]["sort"])
        nb.cells.append(nbformat.v4.new_markdown_cell(
            "### Works cited\n\n" + "\n".join(f"- {bib[k]['entry']} [Bibliography](bibliography.ipynb#{k})"
                                             for k in refs)))
    nb.metadata = {k: nb.metadata[k] for k in ("kernelspec", "language_info", "widgets") if k in nb.metadata}
    _renumber_widgets(nb, stem)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for k, cell in enumerate(nb.cells):  # stable cell ids, made from the chapter and the position
        cell["id"] = hashlib.sha1(f"{stem}:{k}".encode()).hexdigest()[:8]
    return nb


def execute(path: Path):
    nb = jupytext.read(path)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(OUT)}})  # run where readers run them
    client.execute()
    return nb


def write(nb, path: Path) -> None:
    nbformat.validate(nb)
    text = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
    path.write_text(text)


def make_chapter(path: Path) -> str:
    start = time.monotonic()
    targets, bib = label_targets(), bibliography()
    nb = execute(path)
    made = OUT / f"{path.stem}.ipynb"
    write(render(nb, path.stem, glued_values(nb), targets, bib), made)
    return f"{made.relative_to(ROOT)}  ({time.monotonic() - start:.0f} s)"


def make_page(stem: str) -> str:
    """A readers' copy of a Markdown page: one Markdown cell (the bibliography page lists every entry)."""
    targets, bib = label_targets(), bibliography()
    r = Renderer(stem, {}, targets, bib)
    if stem == "bibliography":
        text = BOOK.joinpath("bibliography.md").read_text().split("```{bibliography}")[0].rstrip()
        entries = sorted(bib, key=lambda k: bib[k]["sort"])
        text = r.markdown(text, "bibliography.md") + "\n\n" + "\n\n".join(
            f'<a id="{k}"></a>\n\n{bib[k]["entry"]}' for k in entries)
    else:
        text = r.markdown(BOOK.joinpath(f"{stem}.md").read_text(), f"{stem}.md")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nb.cells[0]["id"] = hashlib.sha1(f"{stem}:0".encode()).hexdigest()[:8]
    write(nb, OUT / f"{stem}.ipynb")
    return f"notebooks/{stem}.ipynb"


def resolve(names: list[str]) -> list[Path]:
    all_chapters = chapters()
    if not names:
        return all_chapters
    picked = []
    for name in names:
        stem = Path(name).stem
        hits = [p for p in all_chapters if p.stem == stem or p.stem.split("_", 1)[0] == stem]
        if len(hits) != 1:
            raise SystemExit(f"no single chapter matches {name!r} (chapters: {', '.join(p.stem for p in all_chapters)})")
        picked += hits
    return picked


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("chapters", nargs="*", help='e.g. "13", "13_scores" or a page ("notation"); all if none')
    ap.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    ap.add_argument("--pin", action="store_true", help="only pin every notebook's Colab cell to the library's "
                    "last commit (after committing a change to src/byhand); executes nothing")
    args = ap.parse_args(argv)
    if args.pin:
        return pin_all()
    if _git("status", "--porcelain", "--", *LIBRARY):
        print("note: src/byhand or pyproject.toml has uncommitted changes; the Colab cells pin the library's last "
              "commit. Commit, then run `make pin`.", flush=True)
    pages = [n for n in args.chapters if n in PAGES]  # `make outputs CHAPTER=notation`: a page, nothing executed
    todo = resolve([n for n in args.chapters if n not in PAGES]) if len(pages) < len(args.chapters) or not pages \
        else []
    label_targets(), bibliography()  # fail early on a duplicate label or a broken bibliography
    for stem in (PAGES if not args.chapters else pages):
        print(make_page(stem), flush=True)
    failed = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(make_chapter, p): p for p in todo}
        for fut in concurrent.futures.as_completed(futures):
            try:
                print(fut.result(), flush=True)
            except Exception as exc:  # report every failing chapter, then fail
                failed.append(futures[fut])
                print(f"FAILED {futures[fut].relative_to(ROOT)}: {type(exc).__name__}: {exc}"[:3000], flush=True)
    if failed:
        print(f"{len(failed)} chapter(s) failed: {', '.join(p.stem for p in failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
