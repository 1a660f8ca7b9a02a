"""Tests for byhand.mha: head split/merge, multi-head attention forward and backward.

Oracles: a per-head loop over column slices of the weights (forward), central finite differences
(backward), and a deliberately wrong backward (W_o instead of W_o^T) that gradcheck must reject.
"""
import numpy as np
import pytest

import byhand.mha as mha
from byhand.attention import causal_mask, padding_mask
from byhand.gradcheck import gradcheck
from byhand.linear import linear_forward
from byhand.mha import merge_heads, mha_backward, mha_backward_traced, mha_forward, split_heads

BIASES = ("b_q", "b_k", "b_v", "b_o")


def _params(rng, d_model, biases=BIASES):
    p = {w: rng.normal(size=(d_model, d_model)) / np.sqrt(d_model) for w in ("W_q", "W_k", "W_v", "W_o")}
    p.update({b: rng.normal(size=d_model) * 0.5 for b in biases})
    return p


def _forward(p, x_q, x_kv, n_heads, mask=None):
    biases = {b: p[b] for b in BIASES if b in p}
    return mha_forward(x_q, x_kv, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, mask=mask, **biases)


def _softmax_rows(S, allowed):
    e = np.where(allowed, np.exp(S - S.max(axis=-1, keepdims=True)), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def test_split_heads_takes_column_blocks_and_merge_inverts():
    x = np.arange(2 * 3 * 6, dtype=float).reshape(2, 3, 6)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 3, 2)
    for j in range(3):
        np.testing.assert_array_equal(heads[:, j], x[..., 2 * j: 2 * j + 2])
    np.testing.assert_array_equal(merge_heads(heads), x)


@pytest.mark.parametrize("n_heads", [3, 0, 5])
def test_heads_must_divide_d_model(n_heads):
    rng = np.random.default_rng(0)
    p = _params(rng, 4)
    with pytest.raises(ValueError, match="does not divide d_model|positive integer"):
        _forward(p, np.ones((2, 4)), np.ones((2, 4)), n_heads)
    with pytest.raises(ValueError, match="does not divide d_model|positive integer"):
        split_heads(np.ones((2, 4)), n_heads)


def test_forward_matches_per_head_oracle():
    rng = np.random.default_rng(1)
    B, T_q, T_k, d_model, h = 2, 3, 4, 6, 2
    d_k = d_model // h
    p = _params(rng, d_model)
    x_q, x_kv = rng.normal(size=(B, T_q, d_model)), rng.normal(size=(B, T_k, d_model))
    valid = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], dtype=bool)
    out, cache = _forward(p, x_q, x_kv, h, mask=padding_mask(valid))
    for b in range(B):
        heads = []
        for j in range(h):
            cols = slice(j * d_k, (j + 1) * d_k)
            Q = x_q[b] @ p["W_q"][:, cols] + p["b_q"][cols]
            K = x_kv[b] @ p["W_k"][:, cols] + p["b_k"][cols]
            V = x_kv[b] @ p["W_v"][:, cols] + p["b_v"][cols]
            P = _softmax_rows(Q @ K.T / np.sqrt(d_k), valid[b][None, :])
            np.testing.assert_allclose(cache["A"][b, j], P, rtol=1e-12, atol=1e-15)
            np.testing.assert_allclose(cache["Q"][b, j], Q, rtol=1e-12)
            heads.append(P @ V)
        expected = np.concatenate(heads, axis=-1) @ p["W_o"] + p["b_o"]
        np.testing.assert_allclose(out[b], expected, rtol=1e-12, atol=1e-13)
    assert cache["O"].shape == (B, T_q, d_model) and cache["S"].shape == (B, h, T_q, T_k)
    assert cache["out"] is out


def _gradcheck_mha(p, x_q, x_kv, n_heads, mask, self_attention, backward=mha_backward):
    out, cache = _forward(p, x_q, x_kv, n_heads, mask)
    R = np.random.default_rng(7).normal(size=out.shape)
    g = backward(R, cache)
    if self_attention:
        params = dict(p, x=x_q)
        grads = dict(g, x=g["x_q"] + g["x_kv"])

        def f(q):
            return float(np.sum(_forward(q, q["x"], q["x"], n_heads, mask)[0] * R))
    else:
        params = dict(p, x_q=x_q, x_kv=x_kv)
        grads = g

        def f(q):
            return float(np.sum(_forward(q, q["x_q"], q["x_kv"], n_heads, mask)[0] * R))

    return g, gradcheck(f, params, grads)


@pytest.mark.parametrize("biases", [BIASES, (), ("b_q", "b_o")])
@pytest.mark.parametrize("kind", ["self", "self_causal", "cross", "cross_padding"])
def test_gradcheck_every_input_and_parameter(kind, biases):
    rng = np.random.default_rng(2)
    B, T_q, T_k, d_model, h = 2, 3, 4, 6, 3
    p = _params(rng, d_model, biases)
    x_q = rng.normal(size=(B, T_q, d_model))
    self_attention = kind.startswith("self")
    x_kv = x_q if self_attention else rng.normal(size=(B, T_k, d_model))
    mask = {
        "self": None,
        "self_causal": causal_mask(T_q),
        "cross": None,
        "cross_padding": padding_mask(np.array([[1, 0, 1, 0], [1, 1, 1, 1]], dtype=bool)),
    }[kind]
    g, report = _gradcheck_mha(p, x_q, x_kv, h, mask, self_attention)
    assert report.passed, report.to_markdown()
    assert set(g) == {"x_q", "x_kv", "W_q", "W_k", "W_v", "W_o", *biases}


def test_gradcheck_unbatched():
    rng = np.random.default_rng(3)
    p = _params(rng, 4)
    x = rng.normal(size=(5, 4))
    _, report = _gradcheck_mha(p, x, x, 2, causal_mask(5), self_attention=True)
    assert report.passed, report.to_markdown()


def _buggy_backward(dout, cache):
    """The public hand-derivation's bug: the gradient reaching O uses W_o instead of W_o^T.

    A linear cache whose W is W_o^T makes linear_backward return dO = dout (W_o^T)^T = dout W_o;
    its dW (= O^T dout) does not read W, so W_o's own gradient stays right.
    """
    lin_o = cache["lin_o"]
    _, wrong = linear_forward(cache["O"], lin_o["W"].T, np.zeros(lin_o["W"].shape[1]) if lin_o["has_b"] else None)
    return mha_backward(dout, dict(cache, lin_o=wrong))


def test_gradcheck_rejects_W_o_instead_of_its_transpose():
    rng = np.random.default_rng(4)
    p = _params(rng, 4)
    assert not np.allclose(p["W_o"], p["W_o"].T)
    x_q, x_kv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    _, report = _gradcheck_mha(p, x_q, x_kv, 2, None, False, backward=_buggy_backward)
    failed = {row.name for row in report.failures()}
    # everything upstream of O fails; b_k's true gradient is 0 (q . b_k shifts a whole score row,
    # which softmax ignores), so the bug cannot show there
    assert failed == {"x_q", "x_kv", "W_q", "W_k", "W_v", "b_q", "b_v"}
    assert not report.passed
    # the correct backward passes on the same inputs, so the failure is the bug's
    _, good = _gradcheck_mha(p, x_q, x_kv, 2, None, False)
    assert good.passed


def test_traced_backward_names_and_masked_zero_gradient():
    rng = np.random.default_rng(5)
    p = _params(rng, 4)
    x = rng.normal(size=(2, 4, 4))
    out, cache = _forward(p, x, x, 2, causal_mask(4))
    grads, trace = mha_backward_traced(rng.normal(size=out.shape), cache)
    assert list(trace) == ["O", "O_heads", "A", "V", "S", "Q", "K"]
    for name in ("A", "S", "Q", "K", "V", "O_heads"):
        assert trace[name].shape == cache[name].shape
    upper = np.broadcast_to(~causal_mask(4), cache["A"].shape)
    assert np.all(cache["A"][upper] == 0.0) and np.all(trace["S"][upper] == 0.0)
    np.testing.assert_allclose(cache["A"].sum(axis=-1), 1.0, atol=1e-15)


def test_rejects_bad_inputs():
    rng = np.random.default_rng(6)
    p = _params(rng, 4)
    x = rng.normal(size=(3, 4))
    with pytest.raises(ValueError, match="W_k must have shape"):
        mha_forward(x, x, p["W_q"], np.ones((4, 3)), p["W_v"], p["W_o"], 2)
    with pytest.raises(ValueError, match="x_kv must have last dimension"):
        mha_forward(x, np.ones((3, 5)), p["W_q"], p["W_k"], p["W_v"], p["W_o"], 2)
    with pytest.raises(ValueError, match="share leading axes"):
        mha_forward(np.ones((2, 3, 4)), np.ones((1, 3, 4)), p["W_q"], p["W_k"], p["W_v"], p["W_o"], 2)
    with pytest.raises(ValueError, match="NaN or inf"):
        mha_forward(np.full((3, 4), np.inf), x, p["W_q"], p["W_k"], p["W_v"], p["W_o"], 2)


def test_heads_are_one_batched_attention_call(monkeypatch):
    # heads are split by reshape + transpose: the forward makes one attention call over (B, h)
    calls = []
    real = mha.attention_forward

    def spy(Q, K, V, mask=None):
        calls.append(Q.shape)
        return real(Q, K, V, mask)

    monkeypatch.setattr(mha, "attention_forward", spy)
    _forward(_params(np.random.default_rng(0), 6), np.ones((2, 3, 6)), np.ones((2, 3, 6)), 3)
    assert calls == [(2, 3, 3, 2)]
