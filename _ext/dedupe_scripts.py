"""A Sphinx extension that drops repeated <script> entries from each page.

Jupyter Book 1 sets up sphinx-thebe and sphinx-togglebutton in a way that adds their inline scripts twice. The
second `const THEBE_JS_URL = …` is a JavaScript error in every page's console, which the browser check
(`make check-html`) rightly reports. Keeping the first copy of each identical script removes it.
"""


def _key(js):
    attrs = getattr(js, "attributes", {}) or {}
    name = getattr(js, "filename", js) or ""  # an inline script has filename None or "" (both are seen)
    return str(name), tuple(sorted((k, str(v)) for k, v in attrs.items()))


def dedupe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        key = _key(js)
        if key not in seen:
            seen.add(key)
            kept.append(js)
    scripts[:] = kept  # in place: handlers that run later add to this same list


def setup(app):
    # 'html-page-context' stops at the first handler that returns a value (the theme's), so run early; the repeated
    # scripts are added long before, when the documents are read.
    app.connect("html-page-context", dedupe, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
