"""The shipped IOI model (byhand/data): it loads in one call, it learned the task, and its record is reproducible."""
import csv
import dataclasses
from importlib import resources

import numpy as np
import pytest

import byhand
from byhand import ioi
from byhand.gpt import gpt_param_shapes
from byhand.train_ioi import MID_TARGET, TrainConfig, checkpoint_metrics, train

DATA = resources.files("byhand") / "data"


@pytest.fixture(scope="module")
def final():
    return ioi.load_model("final")


@pytest.fixture(scope="module")
def mid():
    return ioi.load_model("mid")


@pytest.fixture(scope="module")
def recomputed(final, mid):
    """The metrics of both shipped checkpoints, computed afresh from the shipped files."""
    tc = TrainConfig(**final[3]["train"])
    return {"final": checkpoint_metrics(final[0], tc), "mid": checkpoint_metrics(mid[0], tc)}


def _curve():
    with (DATA / "ioi_loss.csv").open() as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def test_files_are_small_and_the_loader_gives_everything_in_one_call(final, mid):
    for name in ("ioi_final.npz", "ioi_mid.npz"):
        assert (DATA / name).stat().st_size <= 2 * 2**20, name
    for params, config, vocab, meta in (final, mid):
        assert {k: v.shape for k, v in params.items()} == gpt_param_shapes(config)
        assert all(v.dtype == np.float32 for v in params.values())
        assert vocab.words == ioi.build_vocab().words  # the shipped vocabulary is the generator's
        assert config == TrainConfig(**meta["train"]).model_config(len(vocab))
        assert (config.n_layers, config.n_heads, config.d_model) == (3, 4, 64) and config.context >= 24
    meta = final[3]
    assert meta["byhand_version"] == byhand.__version__
    assert meta["seed"] == meta["train"]["seed"] and meta["steps"] == meta["train"]["steps"]
    assert 0 < meta["mid_step"] < meta["steps"]


@pytest.mark.parametrize("which", ["final", "mid"])
def test_shipped_weights_reproduce_the_recorded_metrics(recomputed, final, which):
    """Same float32 weights, same float64 evaluation: the record is reproduced (floats to 1e-12, see below)."""
    recorded = final[3][which]
    ours = recomputed[which]
    assert ours.keys() == recorded.keys()
    # counts and the chosen head are exact; the floats may differ in the last bits when the BLAS splits its
    # float64 sums differently (thread count, CPU kernel), which is ~1e-16 relative, far inside 1e-12
    assert ours["heldout_correct"] == recorded["heldout_correct"]
    assert ours["name_mover"]["layer"] == recorded["name_mover"]["layer"]
    assert ours["name_mover"]["head"] == recorded["name_mover"]["head"]
    assert list(ours["example_top5"]) == list(recorded["example_top5"])
    assert _approx_equal(ours, recorded)


def _approx_equal(a, b, rel=1e-12):
    """Nested dicts/lists of numbers equal to ``rel`` (numbers), exactly (everything else)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_approx_equal(a[k], b[k], rel) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_approx_equal(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, float):
        return a == pytest.approx(b, rel=rel, abs=1e-300)
    return a == b


def test_final_model_learned_the_task(recomputed):
    m = recomputed["final"]
    assert m["heldout_n"] >= 1000
    assert m["heldout_accuracy"] >= 0.99  # IO has the top probability on held-out name pairs
    assert m["example_p_mary"] >= 0.9  # "When Mary and John went to the store, John gave a drink to" -> Mary
    assert m["example_p_mary"] > 10 * m["example_p_john"]


def test_mid_checkpoint_is_unsure_but_right(recomputed):
    m = recomputed["mid"]
    assert abs(m["example_p_mary"] - MID_TARGET) <= 0.03  # near GPT-2 small's reported 0.677: room for p - y to show
    assert max(m["example_top5"].values()) == m["example_p_mary"]


def test_name_mover_head_is_selective(recomputed):
    """The head whose query at the final "to" puts the most weight on IO attends to IO >= 3x as much as to S."""
    nm = recomputed["final"]["name_mover"]
    io = np.array(recomputed["final"]["head_attn_io"])  # (layers, heads) mean attention to the IO name
    assert (nm["layer"], nm["head"]) == np.unravel_index(np.argmax(io), io.shape)
    assert nm["attn_io"] >= 3 * nm["attn_s"]  # S counts both of its mentions
    assert nm["attn_io"] >= 0.5
    assert nm["example_attn_io"] >= 3 * nm["example_attn_s"]


def test_recorded_curve_matches_the_record():
    curve = _curve()
    meta = ioi.load_model("final")[3]
    assert [int(r["step"]) for r in curve] == list(range(1, meta["steps"] + 1))
    assert curve[-1]["loss"] == meta["final_loss"]
    assert all(r["loss"] > 0 and r["loss_io"] >= 0 for r in curve)
    assert curve[meta["mid_step"] - 1]["p_mary"] == pytest.approx(meta["mid"]["example_p_mary"], abs=1e-4)


def test_short_retrain_follows_the_recorded_loss_curve(final):
    """50 steps from the recorded seed and config retrace the shipped curve.

    Tolerance 1e-4 on each batch loss (losses are 3 to 5 nats here). The run is deterministic for a fixed BLAS,
    so on the machine that trained the model the losses agree bit for bit. Another BLAS thread count or CPU
    kernel changes float32 round-off (~1e-7 relative per op); measured: 1 vs 2 OpenBLAS threads differ by at most
    5e-7 over these 50 steps, 200x inside the tolerance. A real change to the data stream, the initialisation,
    the schedule or a gradient moves the first 50 losses by 1e-2 or more.
    """
    tc = TrainConfig(**final[3]["train"])
    _, _, history = train(tc, stop=50)
    recorded = _curve()[:50]
    np.testing.assert_allclose(history["loss"], [r["loss"] for r in recorded], rtol=0, atol=1e-4)
    np.testing.assert_allclose(history["lr"], [r["lr"] for r in recorded], rtol=1e-15)
    assert dataclasses.asdict(tc) == final[3]["train"]
