"""Figures that a cited source reports, kept as data so that a chapter glues them instead of typing them.

Part I tells its six ideas with the book's own trained model and shows, beside each computed value, the figure
that "The math inside a transformer" reports for GPT-2 small; the appendix "Running the book's code on GPT-2" recomputes
them from GPT-2's weights. The figures, their meaning and the citation live in ``data/gpt2_reported.json``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from types import MappingProxyType


@lru_cache(maxsize=1)
def _load() -> dict:
    with resources.files("byhand").joinpath("data/gpt2_reported.json").open(encoding="utf-8") as f:
        return json.load(f)


def gpt2_source() -> MappingProxyType:
    """Where the figures come from: ``bibkey`` (for ``{cite}``), ``title``, ``model``, ``prompt``, ``answer``, ``head``."""
    return MappingProxyType(_load()["source"])


def gpt2_reported() -> MappingProxyType:
    """Every reported figure by name, as a number: ``gpt2_reported()["P(answer)"] == 0.677``."""
    return MappingProxyType({k: v["value"] for k, v in _load()["figures"].items()})


def gpt2_reported_meaning(name: str) -> str:
    """What one reported figure measures, in words; a ``ValueError`` names the figures if ``name`` is unknown."""
    figures = _load()["figures"]
    if name not in figures:
        raise ValueError(f"no reported figure {name!r}; known: {', '.join(figures)}")
    return figures[name]["what"]
