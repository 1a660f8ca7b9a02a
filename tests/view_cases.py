"""The views with a live widget, as cases for tests/test_view_moves.py and tests/test_view_frames.py.

Each ``tests/test_views_<view>.py`` gives its case as ``live_case()``: the view's ``draw``, a few settings for the
live widget's moves (the controls' ends and some points between), and the settings of the chapter's static slider.
"""
import importlib

import pytest

VIEWS = ("adamw", "backprop", "derivatives", "dot", "embeddings", "fdstep", "ffn", "gelu", "head_removal", "heads", "inside", "layernorm", "ln_saturation",
         "learning", "ln_paths", "logits", "logs", "moments", "params", "pe_rotation", "qkv", "scores", "smoothing", "softmax", "softmax_backward",
         "warmup", "warmup_start")
CASES = [pytest.param(view, (), id=view) for view in VIEWS]
CASES += [pytest.param("nudge", (chapter,), id=f"nudge-chapter{chapter}") for chapter in (20, 21, 22, 23)]


def case(view: str, args: tuple):
    """``(draw, moves, static-slider settings)`` of one view."""
    return importlib.import_module(f"test_views_{view}").live_case(*args)
