"""The Part II toy GPT's forward pass in plain NumPy, written apart from byhand: the independent side of the pins.

``tests/test_exercise_answers.py`` pins each exercise's right answer by something other than its own ``solve()``.
For the toy GPT of chapters 11-24 that something is this file: a forward pass written from the book's equations
(pre-LN block, causal softmax attention with 2 heads, tanh GELU, final layer norm, untied output layer, mean
cross-entropy over the scored positions), using no byhand op. Only the toy's data comes from byhand: its seeded
weights (``toy_params()``), its vocabulary and its sentence, which are inputs here, not arithmetic.

Gradients are central differences of ``loss``, in float64. ``forward(..., nudge={"name": delta})`` adds ``delta``
to the intermediate ``name`` (the names are the keys of the dictionary ``forward`` returns) as it is computed, so a
central difference in any intermediate is two calls. ``tests/test_plain_pins.py`` recomputes every pinned toy value
from here; to pin a new exercise on the toy, compute its answer here, in a few lines, and paste the digits into
``PINNED`` with that one-line reason.
"""
from __future__ import annotations

import math

import numpy as np

EPS = 1e-5  # the layer norms' epsilon (the book's notation page)
H = 2  # heads


def layer_norm(x, gamma, beta):
    """Each row to mean 0 and variance 1 (biased variance, plus EPS), then gamma * x_hat + beta."""
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + EPS) + beta


def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def forward(params: dict, ids, targets, nudge: dict | None = None) -> dict:
    """Every intermediate of the toy's forward pass, by name, and the mean loss as ``"loss"``.

    ``ids`` (T,) token ids; ``targets`` (T,), -1 where a position is not scored. ``nudge`` adds arrays (or numbers,
    broadcast) to named intermediates as they are made: ``{"ffn_pre": d}`` changes what GELU sees.
    """
    nudge = nudge or {}
    out = {}

    def keep(name, value):
        value = np.array(value, dtype=np.float64) + nudge.get(name, 0.0)
        out[name] = value
        return value

    a = "block0.attn."
    T = len(ids)
    x0 = keep("x0", params["E"][ids] + params["P"][:T])
    u1 = keep("ln1", layer_norm(x0, params["block0.ln1.gamma"], params["block0.ln1.beta"]))
    d = x0.shape[1]
    d_k = d // H
    split = lambda m: m.reshape(T, H, d_k).transpose(1, 0, 2)  # noqa: E731  (T, d) -> (H, T, d_k)
    Q = keep("Q", split(u1 @ params[a + "W_q"] + params[a + "b_q"]))
    K = keep("K", split(u1 @ params[a + "W_k"] + params[a + "b_k"]))
    V = keep("V", split(u1 @ params[a + "W_v"] + params[a + "b_v"]))
    S = keep("S", Q @ K.transpose(0, 2, 1) / math.sqrt(d_k))  # (H, T, T) scaled scores, before the mask
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    A = keep("A", softmax_rows(np.where(future, -np.inf, S)))
    O_heads = keep("O_heads", A @ V)  # (H, T, d_k)
    attn = keep("attn_out", O_heads.transpose(1, 0, 2).reshape(T, d) @ params[a + "W_o"] + params[a + "b_o"])
    r1 = keep("res1", x0 + attn)
    u2 = keep("ln2", layer_norm(r1, params["block0.ln2.gamma"], params["block0.ln2.beta"]))
    h = keep("ffn_pre", u2 @ params["block0.ffn.W_1"] + params["block0.ffn.b_1"])
    g = keep("ffn_gelu", gelu_tanh(h))
    r2 = keep("res2", r1 + g @ params["block0.ffn.W_2"] + params["block0.ffn.b_2"])
    uf = keep("ln_f", layer_norm(r2, params["ln_f.gamma"], params["ln_f.beta"]))
    Z = keep("logits", uf @ params["W_out"])
    logp = Z - Z.max(axis=-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=-1, keepdims=True))
    out["p"] = np.exp(logp)
    scored = np.asarray(targets) >= 0
    out["loss"] = float(-logp[scored, np.asarray(targets)[scored]].mean())
    return out


def loss(params, ids, targets, nudge=None) -> float:
    return forward(params, ids, targets, nudge)["loss"]


def central_difference(f, h: float) -> float:
    """(f(h) - f(-h)) / 2h, the slope of a function of one number."""
    return (f(h) - f(-h)) / (2 * h)


def nudged(params: dict, name: str, index, delta: float) -> dict:
    """A copy of ``params`` with ``params[name][index] += delta``."""
    new = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    new[name][index] += delta
    return new
