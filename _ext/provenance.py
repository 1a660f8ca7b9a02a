"""Every glued number says where it came from: a Sphinx extension over myst-nb's glue.

`byhand.glue` leaves, in each glue output's metadata (key `byhand_provenance`), the source text of the call that
glued the value, its line in the cell and the value's kind. This extension

1. notes, when myst-nb collects a notebook's glue data, which code cell each name was glued in; a name glued twice
   (by two cells, or twice by one cell), or glued with no recorded source, stops the build with a message that
   names the chapter, the name and the cells;
2. wraps every `{glue:text}` (and `{glue}`, `{glue:any}`) number in a link to that cell, followed by a popover
   (hidden until hover or focus, `_theme/provenance.js`) with the expression, the glued value to ten significant digits
   (a rounding-noise value is glued as its bound, so the bound is what shows), the kind or shape, and the cell;
3. ends each chapter with a collapsed "Numbers in this chapter" list: every glued name, its value, the expression
   and a link to its cell. The code of cells that the page does not show (`remove-cell`, `remove-input`) is listed
   there too, so that every link lands on the code that made the number.

The popover and the list are written as HTML here (not as document text), so the search index does not fill with
glue names. The rules are described in README.md, "Where every number comes from".
"""
from __future__ import annotations

import html

from docutils import nodes
from sphinx.errors import SphinxError

KEY = "byhand_provenance"  # byhand.glue.PROVENANCE_KEY (the extension does not import the book's library)
TEMP = "byhand_provenance"  # env.temp_data entry for the document being read


class ProvenanceError(SphinxError):
    category = "Glue provenance error"


class provenance_number(nodes.inline):
    """A glued number on the page; attributes are filled in when the document has been read."""


# ---- 1. which cell glued which name (run when myst-nb collects the glue data of a notebook)

def glue_table(notebook, source_map) -> tuple[dict, list[str]]:
    """Each glued name -> its cell, provenance and value; and the problems found (duplicates, unknown sources).

    ``notebook`` is the executed notebook (nbformat), ``source_map`` the line of each cell in the chapter's
    source, as myst-nb passes them. Works on the outputs as they are before myst-nb takes the glue outputs out.
    """
    numbers, problems = {}, []
    code_number = 0
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        code_number += 1
        for output in cell.get("outputs", []):
            meta = output.get("metadata", {})
            if "scrapbook" not in meta:
                continue
            name = meta["scrapbook"]["name"]
            prefix = meta["scrapbook"].get("mime_prefix", "")
            where = f"code cell {code_number} (line {source_map[index]})"
            prov = meta.get(KEY) or {}
            if name in numbers:
                problems.append(f"glue name {name!r} is glued twice: by {numbers[name]['where']} and by {where}; "
                                f"a name must be glued once (rename one of them)")
                continue
            if not prov.get("source"):
                problems.append(f"glue name {name!r} ({where}) has no recorded source: glue it with byhand.glue, "
                                f"called from the cell (myst_nb.glue records none)")
            tags = cell.get("metadata", {}).get("tags", [])
            numbers[name] = {
                "cell": index, "number": code_number, "where": where,
                "source": prov.get("source") or "", "line": prov.get("line"), "kind": prov.get("kind", ""),
                "shapes": list(prov.get("shapes", [])),
                "value": str(output.get("data", {}).get(prefix + "text/plain", "")),
                "shown": not ({"remove-cell", "remove_cell", "remove-input", "remove_input"} & set(tags)),
                "code": cell.source,
            }
    for name, entry in numbers.items():
        # the expression is the text of a call in this chapter: in the cell, or in a function a cell defined
        if entry["source"] and not any(entry["source"] in c.source for c in notebook.cells if c.cell_type == "code"):
            problems.append(f"glue name {name!r}: its recorded source {entry['source']!r} is in no code cell of "
                            f"this chapter")
    return numbers, problems


_current: dict = {}


def patch_glue_collection(app) -> None:
    """Run `glue_table` each time myst-nb collects a notebook's glue data (myst_nb.core.execute.base)."""
    from myst_nb.core.execute import base

    _current["app"] = app  # the Sphinx app of this build (a process may build more than one, as the tests do)
    original = base.extract_glue_data
    if getattr(original, "byhand_provenance", False):
        return

    def extract_glue_data(notebook, source_map, logger):
        numbers, problems = glue_table(notebook, source_map)
        env = _current["app"].env
        if problems:
            raise ProvenanceError(f"{env.doc2path(env.docname, False)}:\n  " + "\n  ".join(problems))
        env.temp_data[TEMP] = numbers
        return original(notebook, source_map, logger)

    extract_glue_data.byhand_provenance = True
    base.extract_glue_data = extract_glue_data


# ---- 2. the roles: the same as myst-nb's, with the result wrapped in a provenance_number

def glue_key(text: str, with_format: bool) -> str | None:
    """The glued name a role's text refers to (``key`` or ``key:.4f``); None for another page's (``doc::key``)."""
    if "::" in text:
        return None
    return text.rsplit(":", 1)[0] if with_format and ":" in text else text


def _role(parent, with_format: bool):
    class Role(parent):
        def run(self):
            made, messages = super().run()
            key = glue_key(self.text, with_format)
            if key is None or not made or not all(isinstance(n, nodes.Inline) for n in made):
                return made, messages  # another page's number (none in this book), or a failure myst-nb reported
            return [provenance_number("", "", *made, key=key)], messages
    Role.__name__ = "Provenance" + parent.__name__
    return Role


# ---- 3. when the document has been read: fill in the numbers, mark the cells, add the list

def link_target(entry) -> str:
    return f"prov-cell-{entry['cell']}" if entry["shown"] else f"prov-code-{entry['cell']}"


def on_doctree_read(app, doctree) -> None:
    numbers = app.env.temp_data.pop(TEMP, None)
    if numbers is None:
        return
    docname = app.env.docname
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") == "cell_code":
            cell["ids"].append(f"prov-cell-{cell['cell_index']}")
    for serial, node in enumerate(doctree.findall(provenance_number)):
        entry = numbers.get(node["key"])
        if entry is None:  # cannot happen: myst-nb pasted a value, so it was glued in this document
            raise ProvenanceError(f"{docname}: number {node['key']!r} has no glue data")
        node["serial"] = serial
        for k in ("source", "kind", "value", "number", "shapes"):  # prefixed: docutils gives "source" a meaning
            node["prov_" + k] = entry[k]
        node["target"] = link_target(entry)
    if numbers:
        doctree.append(nodes.raw("", numbers_html(app, numbers), format="html"))


def _highlight(app, code: str) -> str:
    highlighter = getattr(app.builder, "highlighter", None)
    if highlighter is None:
        return f"<pre>{html.escape(code)}</pre>"
    return highlighter.highlight_block(code, "ipython3")


def numbers_html(app, numbers: dict) -> str:
    """The collapsed list at the end of a chapter: name, value, expression, cell; then the code of unseen cells."""
    rows = []
    for name, e in numbers.items():
        rows.append(
            f'<tr id="prov-row-{html.escape(name)}"><td><code>{html.escape(name)}</code></td>'
            f'<td class="prov-value">{html.escape(e["value"])}</td>'
            f'<td><code class="prov-expr">{html.escape(e["source"])}</code></td>'
            f'<td><a class="prov-cell-link" href="#{link_target(e)}">cell {e["number"]}</a></td></tr>')
    unseen = {}
    for e in numbers.values():
        if not e["shown"]:
            unseen.setdefault(e["cell"], e)
    code = "".join(
        f'<div class="prov-code" id="prov-code-{cell}"><p class="prov-code-title">Code cell {e["number"]} '
        f'(not shown above)</p>{_highlight(app, e["code"])}</div>' for cell, e in sorted(unseen.items()))
    code_part = (f'<p>The cells below compute numbers of this page but are not shown in it; here is their code.'
                 f'</p>{code}') if unseen else ""
    return (
        f'<details class="prov-numbers" id="numbers-in-this-chapter"><summary>Numbers in this chapter '
        f'({len(numbers)})</summary>'
        f'<p>Every number the text of this page shows is computed by a code cell. The value is the one the cell '
        f'glued, to ten significant digits; the expression is the call that glued it.</p>'
        f'<div class="prov-scroll" tabindex="0" role="region" aria-label="Numbers in this chapter">'
        f'<table class="prov-table"><thead><tr><th scope="col">Name</th><th scope="col">Value</th>'
        f'<th scope="col">Made by</th><th scope="col">Cell</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
        f'</div>{code_part}</details>\n')


# ---- HTML for a number: a link to its cell, then its popover (hidden until hover or focus)

def visit_number(self, node) -> None:
    tip = f"prov-tip-{node['serial']}"
    self.body.append(f'<a class="prov-num" href="#{node["target"]}" aria-describedby="{tip}" '
                     f'data-prov-key="{html.escape(node["key"])}">')


def depart_number(self, node) -> None:
    shapes = ", read from " + html.escape(", ".join(node["prov_shapes"])) if node["prov_shapes"] else ""
    self.body.append(
        f'</a><span class="prov-tip" id="prov-tip-{node["serial"]}" hidden>'
        f'<span class="prov-row"><span class="prov-label">Made by</span> '
        f'<code class="prov-expr">{html.escape(node["prov_source"])}</code></span>'
        f'<span class="prov-row"><span class="prov-label">Value</span> '
        f'<span class="prov-value">{html.escape(node["prov_value"])}</span></span>'
        f'<span class="prov-row"><span class="prov-label">Kind</span> {html.escape(node["prov_kind"])}{shapes}</span>'
        f'<span class="prov-row"><a class="prov-go" href="#{node["target"]}" tabindex="-1">Go to code cell '
        f'{node["prov_number"]}</a> <span class="prov-hint">(or select the number)</span></span></span>')


def skip(self, node) -> None:
    """Other builders show the number as it is."""


def setup(app):
    from myst_nb.ext.glue.roles import PasteRoleAny, PasteTextRole

    app.setup_extension("myst_nb")  # its glue domain must exist before its roles are replaced
    patch_glue_collection(app)
    app.add_node(provenance_number, html=(visit_number, depart_number),
                 latex=(skip, skip), text=(skip, skip), man=(skip, skip), texinfo=(skip, skip))
    app.add_role("glue", _role(PasteRoleAny, False)(), override=True)
    for name, parent, with_format in (("", PasteRoleAny, False), ("any", PasteRoleAny, False),
                                      ("text", PasteTextRole, True)):
        app.add_role_to_domain("glue", name, _role(parent, with_format)(), override=True)
    app.connect("doctree-read", on_doctree_read)
    return {"parallel_read_safe": False, "parallel_write_safe": True}
