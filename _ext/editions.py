"""A Sphinx extension for the book's two editions: the instructor edition (the default) and the student edition.

The student edition is the same site without the worked solutions: every ``:::{dropdown} Solution`` box, and every
code cell tagged ``solution`` (a reference solution that runs right after an exercise), is taken out of the page
after the chapter has executed, so the notebook still runs every cell and every glued number still resolves. The
answer boxes stay: they check a typed number in the browser with the data the page carries (README, "Editions",
says what a determined student can still find there).

Which edition: the environment variable ``BYHAND_EDITION`` (``make book EDITION=student`` sets it), or the
configuration value ``byhand_edition``; the environment wins. Pages can also test it: the edition's name is a
Sphinx tag, so ``{only} instructor`` and ``{only} student`` blocks work. The student edition does not copy the
pages' sources into the site either (``html_copy_source``), and its download menu offers no source or notebook, since
those hold the solutions.
"""
from __future__ import annotations

import os

from docutils import nodes

EDITIONS = ("instructor", "student")
SOLUTION_TITLE = "Solution"  # the title of every worked-solution dropdown in book/*.md
SOLUTION_TAG = "solution"  # the tag of a reference-solution code cell


def edition_of(config_value: str | None, environ=os.environ) -> str:
    """The edition to build: $BYHAND_EDITION if set, else the configuration value, else the instructor edition."""
    name = (environ.get("BYHAND_EDITION") or config_value or "instructor").strip().lower()
    if name not in EDITIONS:
        raise ValueError(f"unknown edition {name!r}: BYHAND_EDITION or byhand_edition must be one of "
                         f"{', '.join(EDITIONS)}")
    return name


def is_solution_dropdown(node: nodes.Node) -> bool:
    """A sphinx-design dropdown whose title is exactly "Solution"."""
    if not (isinstance(node, nodes.container) and node.get("design_component") == "dropdown"):
        return False
    title = next((c for c in node.children if isinstance(c, nodes.rubric)), None)
    return title is not None and title.astext().strip() == SOLUTION_TITLE


def is_solution_cell(node: nodes.Node) -> bool:
    """A myst-nb code cell tagged ``solution``."""
    if not (isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"):
        return False
    tags = (node.get("cell_metadata") or {}).get("tags", [])
    return SOLUTION_TAG in tags or f"tag_{SOLUTION_TAG}" in node.get("classes", [])


def strip_solutions(doctree: nodes.Node) -> int:
    """Remove every worked solution from a document; returns how many were removed."""
    found = [n for n in doctree.findall(nodes.container) if is_solution_dropdown(n) or is_solution_cell(n)]
    for node in found:
        node.parent.remove(node)
    return len(found)


def _config_inited(app, config) -> None:
    config.byhand_edition = edition_of(config.byhand_edition)
    app.tags.add(config.byhand_edition)
    if config.byhand_edition == "student":
        config.html_copy_source = False  # _sources/ would hand out every solution
        config.html_show_sourcelink = False
        config.html_context = {**(config.html_context or {}), "byhand_edition": "student"}


def _doctree_read(app, doctree) -> None:
    if app.config.byhand_edition == "student":
        strip_solutions(doctree)


def _drop_source_buttons(app, pagename, templatename, context, doctree) -> None:
    """The student edition's download menu keeps "print", not the page's source or notebook (both hold the
    solutions, and the student edition does not copy them into the site)."""
    if app.config.byhand_edition != "student":
        return
    for button in context.get("header_buttons") or []:
        if button.get("type") == "group" and button.get("label") == "download-buttons":
            button["buttons"] = [b for b in button["buttons"]
                                 if b.get("label") not in ("download-source-button", "download-notebook-button")]


def setup(app):
    app.add_config_value("byhand_edition", "instructor", "env", [str])
    app.connect("config-inited", _config_inited)
    app.connect("doctree-read", _doctree_read)
    # right after the theme adds its buttons (priority 501): later handlers may never run, since the first that
    # returns a value ends html-page-context
    app.connect("html-page-context", _drop_source_buttons, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
