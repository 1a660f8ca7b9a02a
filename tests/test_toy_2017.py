"""Tests for byhand.toy_2017: the post's headline numbers come out, and the exact path is byhand.encdec's.

Oracles: closed forms written here (softmax of the printed row, sin/cos by hand, the Adam step
lr * g / (|g| + eps)), a plain-NumPy forward of the toy written independently of byhand, and central
finite differences through byhand.gradcheck.
"""
import math

import numpy as np
import pytest

from byhand.encdec import encdec_backward, encdec_forward_embedded, encdec_param_shapes
from byhand.gradcheck import gradcheck
from byhand.loss import SMOOTHING_CONVENTIONS, cross_entropy_forward, smoothed_target, smoothing_loss
from byhand.toy_2017 import (
    POST_PRINTED, ROUNDED_H, TGT_VOCAB, adam_at_step, embedding_grads, exact_path, inputs_from_tables,
    round_inputs, rounded_path, table_loss, toy_config, toy_inputs, toy_params, toy_targets,
)

AM = TGT_VOCAB.index("am")


def softmax(z):
    e = np.exp(z - z.max())
    return e / e.sum()


def smoothed_q(eps=0.1, V=4):
    q = np.full(V, eps / V)
    q[AM] += 1 - eps
    return q


def test_the_inputs_are_the_posts_rows():
    X_src, X_tgt = toy_inputs()
    np.testing.assert_array_equal(X_src, [[1, 0, 1, 0], [0, 1, 0, 1]])
    np.testing.assert_array_equal(X_tgt, [[1, 1, 0, 0], [0, 0, 1, 1]])


@pytest.mark.parametrize("side", ["src", "tgt"])
def test_the_two_roundings_use_the_paper_positions(side):
    r = round_inputs(side)
    # PE by hand for d_model 4: divisors 1 and 100
    pe = np.array([[math.sin(p), math.cos(p), math.sin(p / 100), math.cos(p / 100)] for p in (0, 1)])
    np.testing.assert_allclose(r.pos, pe, atol=1e-15)
    np.testing.assert_allclose(r.emb, 2 * toy_params()["E_" + side][r.ids])
    assert np.all(r.emb_rounded == np.round(r.emb)) and np.all(np.abs(r.emb - r.emb_rounded) < 0.5)
    np.testing.assert_allclose(r.sum_exact, r.emb_rounded + pe)
    assert np.all(np.abs(r.sum_exact - r.X) < 0.5) and np.all(r.X == np.round(r.X))
    np.testing.assert_allclose(r.unrounded, r.emb + pe)


def test_round_inputs_rejects_an_unknown_side():
    with pytest.raises(ValueError, match="side must be"):
        round_inputs("both")


def test_the_params_match_the_encdec_table_and_the_stated_weights():
    params, shapes = toy_params(), encdec_param_shapes(toy_config())
    assert list(params) == list(shapes)
    assert all(params[k].shape == shapes[k] for k in shapes)
    I4 = np.eye(4)
    np.testing.assert_array_equal(params["enc0.attn.W_k"], params["enc0.attn.W_q"])  # K = Q
    np.testing.assert_array_equal(params["enc0.attn.W_o"], I4)
    np.testing.assert_array_equal(params["enc0.ffn.W_1"], np.hstack([I4, I4]))
    np.testing.assert_array_equal(params["enc0.ffn.W_2"], np.vstack([I4, I4]))
    np.testing.assert_array_equal(params["dec0.cross.W_k"], params["dec0.cross.W_v"])  # one W_{K,V}
    np.testing.assert_array_equal(params["W_out"], I4)
    assert not params["b_out"].any() and toy_config().ln_eps == 0.0
    assert all(np.all(params[k] == 1) for k in params if k.endswith("gamma"))
    assert all(not params[k].any() for k in params if k.endswith("beta"))


def test_rounded_path_gives_the_posts_headline_numbers():
    r = rounded_path()
    p = softmax(ROUNDED_H)  # W_out = I, b = 0: the logits are h
    q = smoothed_q()
    np.testing.assert_allclose(r.p, p, rtol=1e-12)
    np.testing.assert_allclose(r.q, q, rtol=1e-12)
    assert round(r.p[AM], 3) == POST_PRINTED["P_am"] == 0.072
    np.testing.assert_allclose(np.round(r.p, 3), [0.534, 0.197, 0.072, 0.197])
    assert r.loss == pytest.approx(-(q * np.log(p)).sum(), rel=1e-12)
    assert round(r.loss, 4) == 2.5265 and round(r.loss, 2) == POST_PRINTED["loss"]
    assert r.dW_out[0, 0] == pytest.approx(ROUNDED_H[0] * (p[0] - q[0]), rel=1e-12)
    assert round(r.dW_out[0, 0], 3) == 0.509 and round(r.dW_out[0, 0], 2) == 0.51
    # the post's 0.510 is the same product with p_0 rounded to 0.535
    assert round(1.0 * (POST_PRINTED["p_bos"] - q[0]), 3) == POST_PRINTED["dW_out00"]
    np.testing.assert_allclose(r.dW_out, np.outer(ROUNDED_H, p - q), rtol=1e-12)
    assert r.grads is None and r.trace is None


def test_printed_row_cannot_be_a_layer_norm_output():
    assert ROUNDED_H.var() == 0.5  # a normalised row with gamma = 1 has variance 1
    exact_ln = (ROUNDED_H - ROUNDED_H.mean()) / ROUNDED_H.std()
    np.testing.assert_allclose(exact_ln, [math.sqrt(2), 0, -math.sqrt(2), 0], atol=1e-15)
    assert round(softmax(exact_ln)[AM], 3) == 0.038


def plain_forward(params, X_src, X_tgt):
    """The toy's forward written out with NumPy only (no byhand), for two heads of width 2."""
    def ln(x):
        return (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True)  # eps = 0, gamma 1, beta 0

    def attn(xq, xkv, pre, causal):
        Q, K, V = xq @ params[pre + "W_q"], xkv @ params[pre + "W_k"], xkv @ params[pre + "W_v"]
        heads = []
        for h in range(2):
            c = slice(2 * h, 2 * h + 2)
            S = Q[:, c] @ K[:, c].T / math.sqrt(2)
            if causal:
                S = np.where(np.tril(np.ones_like(S)) > 0, S, -np.inf)
            P = np.exp(S - S.max(1, keepdims=True))
            heads.append((P / P.sum(1, keepdims=True)) @ V[:, c])
        return np.hstack(heads) @ params[pre + "W_o"]

    def ffn(x, pre):
        return np.maximum(x @ params[pre + "W_1"] + params[pre + "b_1"], 0) @ params[pre + "W_2"] + params[pre + "b_2"]

    x = ln(X_src + attn(X_src, X_src, "enc0.attn.", False))
    memory = ln(x + ffn(x, "enc0.ffn."))
    y = ln(X_tgt + attn(X_tgt, X_tgt, "dec0.self.", True))
    y = ln(y + attn(y, memory, "dec0.cross.", False))
    y = ln(y + ffn(y, "dec0.ffn."))
    return y @ params["W_out"] + params["b_out"], memory, y


def test_exact_path_is_byhands_encdec_and_an_independent_forward():
    e = exact_path()
    params, X_src, X_tgt = toy_params(), *toy_inputs()
    logits, cache = encdec_forward_embedded(params, X_src, X_tgt, toy_config())
    plain_logits, memory, y = plain_forward(params, X_src, X_tgt)
    np.testing.assert_allclose(logits, plain_logits, atol=1e-12)
    np.testing.assert_allclose(e.logits, logits[1], rtol=0, atol=0)
    np.testing.assert_allclose(memory, [[1, -1, 1, -1], [-1, 1, -1, 1]], atol=1e-12)
    np.testing.assert_allclose(cache["trace"]["dec0.ln1"], [[1, 1, -1, -1], [-1, -1, 1, 1]], atol=1e-12)
    np.testing.assert_allclose(e.h, y[1], atol=1e-12)
    grads, _ = encdec_backward(e.trace["dlogits"], cache)
    for name in grads:
        np.testing.assert_array_equal(e.grads[name], grads[name])


def test_exact_row_in_closed_form_and_its_headline_numbers():
    t = math.tanh(math.sqrt(2))  # cross-attention weight margin 0.944 - 0.056
    d = np.array([-1.0, -1, 1, 1])
    pattern = np.array([1.0, 0, -1, 0])
    res = (1 - t) * d + 2 * t * pattern
    e = exact_path()
    np.testing.assert_allclose(e.h, (res - res.mean()) / res.std(), atol=1e-12)
    np.testing.assert_allclose(np.round(e.h, 3), [1.411, -0.095, -1.411, 0.095])
    np.testing.assert_array_equal(np.round(e.h) + 0.0, ROUNDED_H)  # rounded to integers: the post's row
    assert round(e.p[AM], 3) == 0.038
    np.testing.assert_allclose(e.p, softmax(e.h), rtol=1e-12)
    assert e.dW_out[0, 0] == pytest.approx(e.h[0] * (e.p[0] - 0.025), rel=1e-12)
    np.testing.assert_allclose(np.round(e.trace["dec0.cross.A"][0, 0], 3), [0.944, 0.056])


def test_exact_gradients_match_finite_differences():
    params, X_src, X_tgt = toy_params(), *toy_inputs()
    config = toy_config()

    def loss(p):
        logits, _ = encdec_forward_embedded(p, X_src, X_tgt, config)
        return cross_entropy_forward(logits, toy_targets(), label_smoothing=0.1)[0]

    names = [n for n in params if not n.startswith("E_")]  # embedded inputs: the tables are not used
    report = gradcheck(loss, params, exact_path().grads, names=names)
    assert report.passed, report.to_markdown()
    assert loss(params) == pytest.approx(exact_path().loss, rel=1e-14)


def test_masked_positions_get_zero_probability_and_zero_gradient():
    tr = exact_path().trace
    assert np.all(tr["dec0.self.A"][..., 0, 1] == 0.0)
    assert np.all(tr["ddec0.self.S"][..., 0, 1] == 0.0)
    for name in ("enc0.attn.A", "dec0.self.A", "dec0.cross.A"):
        np.testing.assert_allclose(tr[name].sum(-1), 1.0, atol=1e-15)


def test_adam_step_1_and_step_4000_closed_form():
    lr1 = 512**-0.5 * 4000**-1.5  # t * warmup^-1.5 with t = 1
    lr4000 = 512**-0.5 * 4000**-0.5
    for g in (rounded_path().dW_out[0, 0], exact_path().dW_out[0, 0], POST_PRINTED["dW_out00"]):
        W1, info, lr = adam_at_step(np.array(1.0), np.array(g), 1)
        assert lr == pytest.approx(lr1, rel=1e-12)
        assert W1 == pytest.approx(1 - lr1 * g / (abs(g) + 1e-9), rel=1e-15)
        assert info["m_hat"] == pytest.approx(g) and info["v_hat"] == pytest.approx(g * g)
        W4000, info, lr = adam_at_step(np.array(1.0), np.array(g), 4000)
        assert lr == pytest.approx(lr4000, rel=1e-12)
        assert info["m_hat"] == pytest.approx(g, rel=1e-12) and info["v_hat"] == pytest.approx(g * g, rel=1e-12)
        assert round(float(W4000), 6) == POST_PRINTED["W_out00_4000"] == 0.999301


def test_adam_at_step_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="same shape"):
        adam_at_step(np.ones(2), np.ones(3), 1)


def test_toy_targets_score_only_the_last_position():
    np.testing.assert_array_equal(toy_targets(), [-1, AM])


def test_adam_eps_before_the_correction_is_eps_over_sqrt_of_the_correction():
    # TensorFlow's form: lr_t = lr sqrt(1 - b2^t) / (1 - b1^t), W - lr_t m / (sqrt(v) + eps); closed form at step 1:
    # m = 0.1 g, v = 0.02 g^2, so the step is lr g / (|g| + eps / sqrt(0.02))
    lr1 = 512**-0.5 * 4000**-1.5
    for g in (rounded_path().dW_out[0, 0], -3e-9, 1e-12):
        W1, info, lr = adam_at_step(np.array(1.0), np.array(g), 1, eps_placement="before_correction")
        assert lr == pytest.approx(lr1, rel=1e-12)
        assert info["eps_eff"] == pytest.approx(1e-9 / math.sqrt(0.02), rel=1e-12)
        assert float(info["update"]) == pytest.approx(-lr1 * g / (abs(g) + 1e-9 / math.sqrt(0.02)), rel=1e-12)
        W1_pt, _, _ = adam_at_step(np.array(1.0), np.array(g), 1)
        step_pt, step_tf = 1.0 - float(W1_pt), 1.0 - float(W1)
        assert abs(step_tf) <= abs(step_pt)  # a larger effective eps: a shorter step
    # after many equal steps the correction is ~1 and the two forms agree
    _, info, _ = adam_at_step(np.array(1.0), np.array(0.5), 4000, eps_placement="before_correction")
    assert info["eps_eff"] == pytest.approx(1e-9, rel=1e-12)
    with pytest.raises(ValueError, match="eps_placement"):
        adam_at_step(np.array(1.0), np.array(0.5), 1, eps_placement="inside")


def test_embedding_grads_match_finite_differences_of_the_tables():
    params = toy_params()
    X_src, X_tgt = inputs_from_tables(params["E_src"], params["E_tgt"])
    np.testing.assert_allclose(X_src, toy_inputs()[0], atol=1e-15)  # the toy's point, to the last bit
    np.testing.assert_allclose(X_tgt, toy_inputs()[1], atol=1e-15)
    assert table_loss(params["E_src"], params["E_tgt"]) == pytest.approx(exact_path().loss, rel=1e-14)
    grads = embedding_grads()
    tables = {"E_src": params["E_src"], "E_tgt": params["E_tgt"]}
    report = gradcheck(lambda t: table_loss(t["E_src"], t["E_tgt"]), tables, grads)
    assert report.passed, report.to_markdown()
    # rows never looked up get exactly 0; used rows get sqrt(4) = 2 times their position's dX
    tr = exact_path().trace
    np.testing.assert_array_equal(grads["E_src"][[0, 3]], 0.0)
    np.testing.assert_array_equal(grads["E_tgt"][[2, 3]], 0.0)
    np.testing.assert_allclose(grads["E_src"][[1, 2]], 2 * tr["dX_src"], rtol=1e-15)
    np.testing.assert_allclose(grads["E_tgt"][[0, 1]], 2 * tr["dX_tgt"], rtol=1e-15)
    assert np.abs(grads["E_tgt"]).max() > 0.1 and np.abs(grads["E_src"]).max() > 0.01
    with pytest.raises(ValueError, match="exact path"):
        embedding_grads(rounded_path())


def test_label_smoothing_conventions_on_the_rounded_logits():
    z = ROUNDED_H  # W_out = I: the logits of the rounded path
    p = softmax(z)
    ce, q = smoothing_loss(z, AM, 0.1, "pytorch")
    np.testing.assert_allclose(q, smoothed_q())
    assert ce == pytest.approx(-(q * np.log(p)).sum(), rel=1e-14) and round(ce, 4) == 2.5265
    assert ce == pytest.approx(float(cross_entropy_forward(z[None], np.array([AM]), label_smoothing=0.1)[0]), rel=1e-14)
    kl, q2 = smoothing_loss(z, AM, 0.1, "tensor2tensor")
    np.testing.assert_allclose(q2, [0.1 / 3, 0.1 / 3, 0.9, 0.1 / 3])
    assert kl == pytest.approx((q2 * np.log(q2 / p)).sum(), rel=1e-14) and round(kl, 2) == 2.06
    kla, q3 = smoothing_loss(z, AM, 0.1, "annotated", pad=0)
    np.testing.assert_allclose(q3, [0.0, 0.05, 0.9, 0.05])
    assert kla == pytest.approx((q3[1:] * np.log(q3[1:] / p[1:])).sum(), rel=1e-14) and round(kla, 2) == 2.13
    for conv in SMOOTHING_CONVENTIONS:
        q = smoothed_target(AM, 4, 0.1, conv, pad=0)
        assert q.sum() == pytest.approx(1.0) and q[AM] == pytest.approx(1 - 0.1 + (0.1 / 4 if conv == "pytorch" else 0))
        at_q = np.log(np.where(q > 0, q, 1e-300))  # logits whose softmax is q (a zero entry: a very negative logit)
        best, _ = smoothing_loss(at_q, AM, 0.1, conv, pad=0)
        entropy = -(q[q > 0] * np.log(q[q > 0])).sum()
        assert best == pytest.approx(entropy if conv == "pytorch" else 0.0, abs=1e-12)


def test_label_smoothing_conventions_refuse_bad_input():
    with pytest.raises(ValueError, match="convention"):
        smoothed_target(2, 4, 0.1, "fairseq")
    with pytest.raises(ValueError, match="padding column"):
        smoothed_target(2, 4, 0.1, "annotated")
    with pytest.raises(ValueError, match="padding column"):
        smoothed_target(2, 4, 0.1, "annotated", pad=2)
    with pytest.raises(ValueError, match="out of range"):
        smoothed_target(4, 4, 0.1)
    with pytest.raises(ValueError, match="eps"):
        smoothing_loss(np.zeros(4), 2, 1.0)
    with pytest.raises(ValueError, match=r"\(V,\)"):
        smoothing_loss(np.zeros((2, 4)), 2, 0.1)


@pytest.mark.parametrize("conv", SMOOTHING_CONVENTIONS)
def test_every_smoothing_convention_has_gradient_p_minus_q(conv):
    from byhand.gradcheck import numerical_grads

    z = np.array([1.4, -0.1, -1.4, 0.1])
    num = numerical_grads(lambda d: smoothing_loss(d["z"], AM, 0.1, conv, pad=0)[0], {"z": z})["z"]
    q = smoothed_target(AM, 4, 0.1, conv, pad=0)
    np.testing.assert_allclose(num, softmax(z) - q, atol=1e-9)
