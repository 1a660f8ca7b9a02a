"""Every pinned answer on the Part II toy ("plain forward" in ``PINNED``) recomputed from ``tests/plain_toy.py``.

The pins are literals to ten significant digits; here each is computed again, in a few lines, from a forward pass
that uses no byhand op, and from the exercise's task as the chapter words it (the settings in ``INPUTS``). A value
is a forward quantity (it must round to the pin's ten digits) or a slope by central differences (to 1e-6). This is how a new
toy exercise gets its pin: add a case here, run it, paste the digits.
"""
import math

import numpy as np
import pytest

import plain_toy as plain
from byhand.exercises.part2 import INPUTS
from byhand.toy_gpt import VOCAB, toy_params
from test_exercise_answers import PINNED

ID = {w: i for i, w in enumerate(VOCAB)}
IDS = np.array([ID[w] for w in ("<bos>", "I", "like", "transformers", "<eos>")])  # the toy sentence
TARGETS = np.append(IDS[1:], -1)  # each position predicts the next token; the last is not scored
PARAMS = {k: np.array(v, dtype=np.float64) for k, v in toy_params().items()}
BASE = plain.forward(PARAMS, IDS, TARGETS)
SLOPE_H = 1e-5


def slope_in(name, index, targets=TARGETS, params=PARAMS):
    """∂loss/∂(intermediate ``name`` at ``index``), by central differences."""
    def f(h):
        d = np.zeros_like(BASE[name])
        d[index] = h
        return plain.loss(params, IDS, targets, {name: d})
    return plain.central_difference(f, SLOPE_H)


def weight_slope(name, index, h=SLOPE_H):
    return plain.central_difference(lambda d: plain.loss(plain.nudged(PARAMS, name, index, d), IDS, TARGETS), h)


def embeddings_1():
    d = INPUTS["embeddings.1"]
    ids = np.array([ID["<bos>"]] + [ID[w] for w in d["text"].split()] + [ID["<eos>"]])
    return plain.forward(PARAMS, ids, np.append(ids[1:], -1))["x0"][d["t"], d["j"]]


def embeddings_2():
    d = INPUTS["embeddings.2"]
    after = plain.forward(plain.nudged(PARAMS, "P", (d["t"], d["j"]), d["delta"]), IDS, TARGETS)["A"]
    return np.abs(after[:, d["query"]] - BASE["A"][:, d["query"]]).max()


def qkv_2():
    d = INPUTS["qkv.2"]
    nudge = np.zeros_like(BASE["ln1"])
    nudge[d["t"], d["j"]] = d["delta"]
    Q = plain.forward(PARAMS, IDS, TARGETS, {"ln1": nudge})["Q"]
    head, c = divmod(d["col"], Q.shape[-1])
    return Q[head, d["t"], c] - BASE["Q"][head, d["t"], c]


def scores_1():
    d = INPUTS["scores.1"]
    return plain.softmax_rows(BASE["S"][d["head"], d["t"]])[d["s"]]  # all five keys, the future one too


def scores_2():
    d = INPUTS["scores.2"]
    nudge = np.zeros_like(BASE["S"])
    nudge[d["head"], d["t"], d["s"]] = d["delta"]
    return plain.forward(PARAMS, IDS, TARGETS, {"S": nudge})["A"][d["head"], d["t"], d["s"]]


def heads_1():
    d = INPUTS["heads.1"]
    d_k = BASE["O_heads"].shape[-1]
    return BASE["O_heads"][0, d["t"]] @ PARAMS["block0.attn.W_o"][:d_k, d["j"]] + PARAMS["block0.attn.b_o"][d["j"]]


def ffn_1():
    d = INPUTS["ffn.1"]
    return BASE["ffn_gelu"][d["t"], d["c"]]


def ffn_4():
    d = INPUTS["ffn.4"]
    u = d["scale"] * BASE["ln2"][d["t"]]
    W1, b1, W2, b2 = (PARAMS["block0.ffn." + k] for k in ("W_1", "b_1", "W_2", "b_2"))
    return ((u @ W1 + b1) @ W2 + b2)[d["j"]]  # the layer with GELU taken out


def layernorm_1():
    d = INPUTS["layernorm.1"]
    return BASE["ln2"][d["t"], d["j"]]


def layernorm_2():
    d = INPUTS["layernorm.2"]
    x, g, b = BASE["res1"][d["t"]], PARAMS["block0.ln2.gamma"], PARAMS["block0.ln2.beta"]
    return (plain.layer_norm(d["scale"] * x + d["shift"], g, b) / plain.layer_norm(x, g, b))[0]


def loss_1():
    d = INPUTS["loss.1"]
    targets = TARGETS.copy()
    targets[d["t"]] = ID[d["target"]]
    return plain.loss(PARAMS, IDS, targets)


def loss_2():
    d = INPUTS["loss.2"]
    nudge = np.zeros_like(BASE["logits"])
    nudge[d["t"], TARGETS[d["t"]]] = d["delta"]
    return plain.loss(PARAMS, IDS, TARGETS, {"logits": nudge}) - BASE["loss"]


def dlogits_1():
    d = INPUTS["dlogits.1"]
    targets = TARGETS.copy()
    targets[d["t"]] = ID[d["target"]]
    return slope_in("logits", (d["t"], ID[d["target"]]), targets)


def dlogits_2():
    d = INPUTS["dlogits.2"]
    return plain.loss(plain.nudged(PARAMS, "W_out", d["entry"], d["delta"]), IDS, TARGETS) - BASE["loss"]


def dffn_1():
    d = INPUTS["dffn.1"]
    return slope_in("ffn_pre", (d["t"], d["c"]))


def dattn_1():
    """∂a_i/∂s_j of head 0's row t: the attention weight i moved by a nudge of score j, by central differences."""
    d = INPUTS["dattn.1"]

    def weight(h):
        nudge = np.zeros_like(BASE["S"])
        nudge[d["head"], d["t"], d["j"]] = h
        return plain.forward(PARAMS, IDS, TARGETS, {"S": nudge})["A"][d["head"], d["t"], d["i"]]
    return plain.central_difference(weight, SLOPE_H)


def dattn_2():
    d = INPUTS["dattn.2"]
    return slope_in("V", (d["head"], d["s"], d["c"]))


def dembed_2():
    d = INPUTS["dembed.2"]
    return weight_slope("E", (ID[d["token"]], d["j"]))  # two copies of the sentence have the mean loss of one


def gradcheck_2():
    """The central difference's error at h_large over its error at h_small, against a Richardson-extrapolated slope."""
    d = INPUTS["gradcheck.2"]
    name, index = d["name"], d["index"]
    s1, s2 = weight_slope(name, index, 2e-4), weight_slope(name, index, 1e-4)
    exact = (4 * s2 - s1) / 3  # the h² terms cancel
    err = lambda h: abs(weight_slope(name, index, h) - exact)  # noqa: E731
    return float(f"{err(d['h_large']) / err(d['h_small']):.3g}")  # the task asks for three digits


FORWARD = {"embeddings.1": embeddings_1, "embeddings.2": embeddings_2, "qkv.2": qkv_2, "scores.1": scores_1,
           "scores.2": scores_2, "heads.1": heads_1, "ffn.1": ffn_1, "ffn.4": ffn_4, "layernorm.1": layernorm_1,
           "layernorm.2": layernorm_2, "loss.1": loss_1, "loss.2": loss_2, "dlogits.2": dlogits_2,
           "gradcheck.2": gradcheck_2}
SLOPES = {"dlogits.1": dlogits_1, "dffn.1": dffn_1, "dattn.1": dattn_1, "dattn.2": dattn_2, "dembed.2": dembed_2}


def test_every_plain_forward_pin_has_a_case_here():
    plain_pins = {k for k, (_, why) in PINNED.items() if why.startswith("plain forward")}
    assert plain_pins <= set(FORWARD) | set(SLOPES), sorted(plain_pins - set(FORWARD) - set(SLOPES))


def test_the_plain_forward_reproduces_the_toy_loss_of_chapter_17():
    """The sentence's loss is the mean of four −log p; the plain forward's p sums to 1 in every row."""
    assert np.allclose(BASE["p"].sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert BASE["loss"] == pytest.approx(-np.mean(np.log(BASE["p"][np.arange(4), TARGETS[:4]])), rel=1e-12)


@pytest.mark.parametrize("key", sorted(FORWARD))
def test_a_forward_pin_is_the_plain_forward_value(key):
    """The pin is the plain value rounded to ten significant digits, digit for digit."""
    assert float(f"{FORWARD[key]():.10g}") == PINNED[key][0]


@pytest.mark.parametrize("key", sorted(SLOPES))
def test_a_slope_pin_is_the_plain_central_difference(key):
    assert SLOPES[key]() == pytest.approx(PINNED[key][0], rel=1e-6, abs=1e-10)


def test_the_plain_forward_is_not_byhands():
    """The independent side must stay independent: the plain forward imports nothing but math and NumPy."""
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(plain))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "math", "numpy"}, imported
