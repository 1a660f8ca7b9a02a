"""Tests for byhand.heatmap: every allowed cell prints its number, every masked cell is a grey hatched patch."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from byhand.heatmap import MASK_FACE, masked_patch, weights_heatmap


def test_numbers_in_allowed_cells_and_hatched_masked_cells():
    W = np.array([[1.0, 0.0], [0.012, 0.988]])
    mask = np.tril(np.ones((2, 2), dtype=bool))
    fig, ax = plt.subplots()
    weights_heatmap(ax, W, mask, xlabels=["a", "b"], ylabels=["a", "b"])
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == ["0.01", "0.99", "1.00"]  # a small weight is printed, the masked cell is not
    patches = [p for p in ax.patches if p.get_hatch()]
    assert len(patches) == 1 and patches[0].get_xy() == (0.5, -0.5)  # the cell (0, 1)
    assert masked_patch().get_hatch() == patches[0].get_hatch()
    assert np.allclose(masked_patch().get_facecolor(), patches[0].get_facecolor())
    assert MASK_FACE == "0.75"
    plt.close(fig)


def test_text_colour_follows_the_cell():
    fig, ax = plt.subplots()
    weights_heatmap(ax, np.array([[0.9, 0.1]]))
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours == {"0.90": "white", "0.10": "black"}
    plt.close(fig)


def test_shapes_are_checked():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="mask has shape"):
        weights_heatmap(ax, np.zeros((2, 2)), np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="must be a matrix"):
        weights_heatmap(ax, np.zeros(3))
    plt.close(fig)
