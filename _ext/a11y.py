"""Accessibility fixes to the HTML that the theme and the other extensions write (WCAG 2.1 AA; issue 22).

axe-core (`make check-html`, tools/check_a11y.py) found these in every built page; each is fixed where it is made,
in the body of each page as Sphinx hands it to the theme:

1. myst-nb's collapsed "Show code cell content" boxes have ``<summary aria-label="Toggle hidden content">``, so a
   speech-input user who says what they see ("click Show code cell content") reaches nothing (WCAG 2.5.3, Label in
   Name). Without the aria-label the summary is named by its visible line, which changes with the box's state.
2. sphinxcontrib-bibtex's bibliography is a ``role="list"`` whose entries have the DPUB role ``doc-biblioentry``:
   ARIA 1.3 deprecates that role, and a list must hold list items. Each entry becomes a ``listitem`` (the list
   keeps its name and the page's heading says what it is).

3. The search page loads MathJax, so that _theme/a11y.js can typeset the formulas that the results quote.

The theme's own buttons (search, colour mode) are fixed by the templates in _templates/, and what only exists once
the page's scripts have run (the live widgets' sliders, the search results) by _theme/a11y.js.
"""
from __future__ import annotations

import re

# (what, pattern, replacement); each replacement is idempotent, so a page processed twice is unchanged
FIXES = [
    ("hide-cell summary named unlike its text", re.compile(r'<summary aria-label="Toggle hidden content">'),
     "<summary>"),
    ("bibliography entry with a deprecated role",
     re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"'), r'\1 role="listitem"'),
]


def fix_body(body: str) -> tuple[str, dict[str, int]]:
    """The page body with every fix applied, and how many times each applied."""
    counts = {}
    for what, pattern, replacement in FIXES:
        body, n = pattern.subn(replacement, body)
        counts[what] = n
    return body, counts


def on_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"], _ = fix_body(context["body"])
    if pagename == "search":
        # Sphinx loads MathJax only on pages with math; the search results quote formulas from every chapter, and
        # _theme/a11y.js typesets them. Sphinx's own handler (sphinx.ext.mathjax, priority 500) adds the scripts.
        app.env.get_domain("math").data["has_equations"][pagename] = True


def setup(app):
    # before the themes' handlers: the first handler that returns a value ends html-page-context
    app.connect("html-page-context", on_page, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
