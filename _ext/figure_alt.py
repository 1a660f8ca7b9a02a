"""Every figure says what it shows: the text alternative a chapter computed becomes the image's alt.

`byhand.figure.show_figure` leaves the description of a figure in its output's metadata,
``{"image/png": {"alt": "Bar chart of …"}}``. myst-nb 1.x takes only ``width`` and ``height`` from there, and an
alt only from a cell's static ``mystnb: image: alt:`` option, so without this extension the page's ``<img>`` gets
its file name as alt. This extension wraps myst-nb's ``NbElementRenderer.render_image`` (a method of the public
renderer class, the one documented place that turns an image output into a node) and sets ``alt`` on the image node
it returns, from the output's metadata. It depends on two things of myst-nb's, both checked in
tests/test_figure_alt.py: that method's name and its argument, a ``MimeData`` with ``mime_type`` and
``output_metadata``.
"""
from __future__ import annotations

from docutils import nodes

KEY = "alt"  # byhand.figure.ALT_KEY (the extension does not import the book's library)


def alt_of(data) -> str | None:
    """The text alternative an image output carries in its metadata, or None."""
    meta = (getattr(data, "output_metadata", None) or {}).get(data.mime_type, {})
    alt = meta.get(KEY) if isinstance(meta, dict) else None
    if alt is None:
        return None
    return " ".join(str(alt).split()) or None


def with_alt(render_image):
    """``render_image`` that also puts the output's alt on every image node it returns."""
    if getattr(render_image, "byhand_alt", False):
        return render_image

    def wrapped(self, data):
        made = render_image(self, data)
        alt = alt_of(data)
        if alt:
            for node in made:
                for image in node.findall(nodes.image) if isinstance(node, nodes.Node) else ():
                    image["alt"] = alt
        return made

    wrapped.byhand_alt = True
    wrapped.__doc__ = render_image.__doc__
    return wrapped


def setup(app):
    from myst_nb.core.render import NbElementRenderer

    NbElementRenderer.render_image = with_alt(NbElementRenderer.render_image)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
