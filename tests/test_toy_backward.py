"""The Part II toy's backward pass, checked without the book: every parameter tensor against central differences
(relative error <= 1e-6, or an absolute error <= 1e-9 for the key bias, whose gradient is exactly 0), and the
exact zeros the backward chapters show (ignored position, masked scores, unused tokens)."""
import numpy as np
import pytest

from byhand.attention import causal_mask
from byhand.gpt import gpt_forward, gpt_param_shapes
from byhand.gradcheck import gradcheck
from byhand.loss import cross_entropy_forward
from byhand.toy_gpt import TOY_CONFIG, VOCAB, toy_batch, toy_loss_and_grads, toy_params

ZERO_GRADIENT = {"block0.attn.b_k"}  # a key bias shifts every score of a row equally: the softmax ignores it


@pytest.fixture(scope="module")
def toy():
    params = toy_params()
    ids, targets = toy_batch()
    loss, grads, trace = toy_loss_and_grads(params)

    def loss_of(p):  # the forward pass only, with a log-sum-exp written here rather than byhand's loss
        logits, _ = gpt_forward(p, ids, TOY_CONFIG)
        z = logits[targets >= 0]  # (4, V)
        top = z.max(axis=1, keepdims=True)
        logZ = top[:, 0] + np.log(np.exp(z - top).sum(axis=1))
        return float(np.mean(logZ - z[np.arange(len(z)), targets[targets >= 0]]))

    return params, ids, targets, loss, grads, trace, loss_of


@pytest.fixture(scope="module")
def report(toy):
    params, _, _, _, grads, _, loss_of = toy
    return gradcheck(loss_of, params, grads, h=1e-6, rtol=1e-6, atol=1e-9)


def test_the_oracle_loss_is_the_models_loss(toy):
    params, ids, targets, loss, _, _, loss_of = toy
    assert loss_of(params) == pytest.approx(loss, abs=1e-14)
    logits, _ = gpt_forward(params, ids, TOY_CONFIG)
    assert cross_entropy_forward(logits, targets)[0] == pytest.approx(loss, abs=1e-15)


def test_every_parameter_tensor_is_checked(report):
    assert [r.name for r in report.rows] == list(gpt_param_shapes(TOY_CONFIG))


@pytest.mark.parametrize("name", list(gpt_param_shapes(TOY_CONFIG)))
def test_every_gradient_matches_central_differences(report, toy, name):
    row = next(r for r in report.rows if r.name == name)
    if name in ZERO_GRADIENT:
        grads = toy[4]
        assert np.abs(grads[name]).max() < 1e-15, "the analytic gradient of b_k must be zero"
        assert row.max_abs_err <= 1e-9, f"{name}: numeric gradient not zero, max abs err {row.max_abs_err:.2e}"
    else:
        assert row.rel_err <= 1e-6, f"{name}: relative error {row.rel_err:.2e} > 1e-6"
    assert row.passed


def test_ignored_position_gets_exactly_zero_gradient(toy):
    _, _, targets, _, grads, trace, _ = toy
    assert targets[-1] == -1
    for name in ("dlogits", "dln_f", "dblock0.res2", "dblock0.res1", "dx0"):
        assert np.all(trace[name][-1] == 0.0), name
    assert np.all(grads["P"][-1] == 0.0)


def test_logit_gradient_is_p_minus_y_over_four(toy):
    _, _, targets, _, _, trace, _ = toy
    Y = np.zeros_like(trace["p"])
    Y[np.arange(4), targets[:4]] = 1.0
    np.testing.assert_allclose(trace["dlogits"][:4], (trace["p"][:4] - Y[:4]) / 4, rtol=0, atol=1e-16)
    np.testing.assert_allclose(trace["dlogits"].sum(axis=1), 0.0, atol=1e-16)


def test_masked_scores_get_exactly_zero_gradient(toy):
    trace = toy[5]
    mask = causal_mask(len(toy[1]))
    assert np.all(trace["block0.attn.A"][:, mask == False] == 0)  # noqa: E712
    assert np.all(trace["dblock0.attn.S"][:, mask == False] == 0)  # noqa: E712
    assert np.any(trace["dblock0.attn.A"][:, mask == False] != 0)  # noqa: E712  (the mask acts in the softmax)


def test_unused_tokens_get_zero_rows_and_used_ones_the_position_gradient(toy):
    _, ids, _, _, grads, trace, _ = toy
    unused = ~np.isin(np.arange(len(VOCAB)), ids)
    assert unused.sum() == 5 and np.all(grads["E"][unused] == 0.0)
    for t, v in enumerate(ids):  # every token occurs once, so its row is that position's gradient
        np.testing.assert_array_equal(grads["E"][v], trace["dx0"][t])


def test_a_repeated_token_accumulates():
    from byhand.gpt import gpt_loss_and_grads

    params = toy_params()
    first, second = toy_batch(), toy_batch("I sat on")
    batch = (np.stack([first[0], second[0]]), np.stack([first[1], second[1]]))
    _, grads, trace = gpt_loss_and_grads(params, batch, TOY_CONFIG)
    i = VOCAB.index("I")
    np.testing.assert_allclose(grads["E"][i], trace["dx_tok"][0, 1] + trace["dx_tok"][1, 1], rtol=0, atol=1e-16)
