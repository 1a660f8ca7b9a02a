"""Tests for _ext/figure_alt.py: an image output's alt from its metadata reaches the image node."""
import dataclasses
import sys
from pathlib import Path
from types import SimpleNamespace

from docutils import nodes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import figure_alt  # noqa: E402


def image_output(meta):
    return SimpleNamespace(mime_type="image/png", output_metadata=meta)


def test_the_alt_in_the_output_metadata_goes_on_the_image_node():
    render = figure_alt.with_alt(lambda self, data: [nodes.image(uri="_images/abc.png")])
    made = render(None, image_output({"image/png": {"alt": "Bar chart of 4\nproducts."}}))
    assert made[0]["alt"] == "Bar chart of 4 products."


def test_an_output_without_an_alt_is_left_as_myst_nb_made_it():
    render = figure_alt.with_alt(lambda self, data: [nodes.image(uri="_images/abc.png")])
    assert "alt" not in render(None, image_output({}))[0]
    assert "alt" not in render(None, image_output({"image/png": {"width": 300}}))[0]
    assert figure_alt.with_alt(render) is render  # wrapped once, however often Sphinx sets the extension up


def test_myst_nb_still_has_what_the_extension_relies_on():
    from myst_nb.core.render import MimeData, NbElementRenderer

    assert callable(NbElementRenderer.render_image)
    fields = {f.name for f in dataclasses.fields(MimeData)}
    assert {"mime_type", "output_metadata"} <= fields
