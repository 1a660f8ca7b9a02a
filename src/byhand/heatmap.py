"""Small heatmaps that can be read as numbers: each cell prints its value, and masked cells look masked.

``weights_heatmap(ax, W, mask, ...)`` draws a matrix of weights in [0, 1] (attention weights, probabilities) with
its value written in every allowed cell, and the cells where ``mask`` is False filled grey and hatched, so that a
masked cell is never mistaken for a weight near 0 (which the colormap draws almost white). ``masked_patch()`` is the
legend entry for those cells. Introduced in Part II, "Scores, mask, softmax".
"""
from __future__ import annotations

import numpy as np
from matplotlib.patches import Patch, Rectangle

MASK_FACE = "0.75"  # the grey of a masked cell
MASK_HATCH = "///"


def masked_patch(label: str = "masked (weight exactly 0)") -> Patch:
    """The legend entry of a masked cell: the same grey and hatch as ``weights_heatmap`` draws."""
    return Patch(facecolor=MASK_FACE, edgecolor="white", hatch=MASK_HATCH, label=label)


def weights_heatmap(ax, W, mask=None, xlabels=None, ylabels=None, digits: int = 2, cmap: str = "Blues",
                    fontsize: float = 7, vmin: float = 0.0, vmax: float = 1.0):
    """Draw ``W`` (m, n) on ``ax`` with its numbers in the cells; cells where ``mask`` (m, n, bool) is False are grey
    and hatched, without a number. Returns the image (for a colorbar).

    The numbers are written to ``digits`` decimals, white on the darker half of the colormap and black on the lighter.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be a matrix, got shape {W.shape}")
    mask = np.ones(W.shape, dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != W.shape:
        raise ValueError(f"mask has shape {mask.shape}, W has {W.shape}")
    im = ax.imshow(np.where(mask, W, np.nan), vmin=vmin, vmax=vmax, cmap=cmap)
    m, n = W.shape
    for i in range(m):
        for j in range(n):
            if not mask[i, j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=MASK_FACE, edgecolor="white",
                                       hatch=MASK_HATCH, lw=0))
                continue
            dark = (W[i, j] - vmin) / (vmax - vmin) > 0.55
            ax.text(j, i, f"{W[i, j]:.{digits}f}", ha="center", va="center", fontsize=fontsize,
                    color="white" if dark else "black")
    if xlabels is not None:
        ax.set_xticks(range(n), xlabels, fontsize=fontsize, rotation=30)
    if ylabels is not None:
        ax.set_yticks(range(m), ylabels, fontsize=fontsize)
    return im
