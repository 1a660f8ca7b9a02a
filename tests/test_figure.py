"""Tests for byhand.figure: a figure's output carries its text alternative, and its data table is small and exact."""
import base64
import io

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from byhand.figure import FigureOutput, cell, data_table, figure_png, show_figure, with_true_minus


def small_figure():
    fig, ax = plt.subplots(figsize=(2, 1), dpi=50)
    ax.plot([0, 1], [0, 2])
    return fig


def test_the_output_is_a_png_whose_metadata_and_plain_text_carry_the_description():
    fig = small_figure()
    out = FigureOutput(figure_png(fig), "A line  from 0 to\n2.")
    plt.close(fig)
    data, meta = out._repr_mimebundle_()
    assert data["text/plain"] == "A line from 0 to 2." and meta == {"image/png": {"alt": "A line from 0 to 2."}}
    with Image.open(io.BytesIO(base64.b64decode(data["image/png"]))) as im:
        assert im.format == "PNG" and "Software" not in im.info  # no software version: the same bytes every run


def test_a_description_writes_a_minus_sign_where_python_wrote_a_hyphen():
    said = with_true_minus("from -4 to 4, lowest -0.170 (x = -.5), the nudge −2.00; 1e-8, W_out[0, 3], pre-activation, 0-5")
    assert said == "from −4 to 4, lowest −0.170 (x = −.5), the nudge −2.00; 1e-8, W_out[0, 3], pre-activation, 0-5"
    assert FigureOutput(b"", "Slope -0.323.").alt == "Slope −0.323."


@pytest.mark.parametrize("alt", ["", "   ", None])
def test_a_figure_without_a_description_is_refused(alt):
    with pytest.raises(ValueError, match="text alternative"):
        FigureOutput(b"", alt)


def test_the_data_table_writes_every_row_with_at_most_five_decimals():
    html = data_table(["entry", "value"], [[0, 1.234567], [1, -0.00001], [2, "x<y"]])
    assert html.startswith('<details class="byhand-figure-data">') and "<summary>Data of this figure</summary>" in html
    assert '<th scope="col" style="padding: 0.1em 0.6em;">entry</th>' in html and ">1.2346</td>" in html
    assert ">0.0000</td>" in html and "-0.0000" not in html  # no negative zero
    assert ">x&lt;y</td>" in html
    assert '<div role="region" tabindex="0" aria-label="Data of this figure" style="overflow: auto;' in html
    assert cell(3) == "3" and cell(2.5, 5) == "2.50000" and cell(True) == "True"
    with pytest.raises(ValueError, match="every row needs 2"):
        data_table(["a", "b"], [[1]])
    with pytest.raises(ValueError, match="decimals"):
        cell(1.0, 6)


def test_show_figure_displays_the_figure_then_its_table_and_closes_it(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    fig = small_figure()
    assert show_figure(fig, "A line.", (["x"], [[1.0]])) is None
    assert isinstance(shown[0], FigureOutput) and shown[0].alt == "A line."
    assert ">1.0000</td>" in shown[1].data
    assert not plt.fignum_exists(fig.number)
