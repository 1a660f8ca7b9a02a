"""byhand.slips (chapter "The invariants, checked") and toy_2017.loss_and_grads (chapter "Adam and the warm-up")."""
import numpy as np
import pytest

from byhand import attention, encdec, mha, slips
from byhand import toy_2017 as toy
from byhand.gradcheck import numerical_grads


def test_no_slip_is_the_exact_path():
    exact, clean = toy.exact_path(), slips.run(None)
    assert clean.loss == pytest.approx(exact.loss, rel=1e-15)
    for name, g in clean.grads.items():
        np.testing.assert_allclose(g, exact.grads[name], atol=1e-15)
    found = slips.invariants(clean)
    assert list(found) == list(slips.INVARIANTS) and max(found.values()) < 1e-12


@pytest.mark.parametrize("slip", list(slips.SLIPS))
def test_each_slip_is_undone_after_its_run(slip):
    before = (mha.attention_forward, encdec.causal_mask, encdec._ffn_forward, encdec.layernorm_forward,
              encdec.linear_backward)
    r = slips.run(slip)
    after = (mha.attention_forward, encdec.causal_mask, encdec._ffn_forward, encdec.layernorm_forward,
             encdec.linear_backward)
    assert before == after and mha.attention_forward is attention.attention_forward
    assert np.isfinite(r.loss)
    assert toy.exact_path().loss == pytest.approx(slips.run(None).loss, rel=1e-15)  # nothing leaks


def test_what_the_slips_break():
    found = {k: slips.invariants(slips.run(k)) for k in ("mask_after_softmax", "no_mask", "target_no_own_share")}
    assert found["mask_after_softmax"]["2. attention rows sum to 1"] == 0.5
    assert found["no_mask"]["3. masked weight is 0"] == 0.5
    assert found["no_mask"]["3. masked score gradient is 0"] == 0.0  # cannot fail in this toy
    assert found["target_no_own_share"]["5. p − ỹ sums to 0"] == pytest.approx(0.1 / 4)
    assert slips.cross_weight(slips.run("no_sqrt_dk")) > slips.cross_weight(slips.run(None))


def test_unknown_slip():
    with pytest.raises(ValueError, match="unknown slip"):
        slips.run("typo")
    with pytest.raises(ValueError, match="unknown slip"):
        slips.diff("typo")


@pytest.mark.parametrize("slip", list(slips.SLIPS))
def test_each_diff_shows_the_slip_where_its_check_looks(slip):
    d = slips.diff(slip)
    assert set(slips.LINES) == set(slips.SLIPS) and slips.LINES[slip][0] != slips.LINES[slip][1]
    assert d.right.shape == d.slipped.shape and np.abs(d.right - d.slipped).max() > 1e-3  # the row changes
    assert d.check in (*slips.INVARIANTS, "gradient check", "the post's weight")
    assert abs(d.measure_slipped - d.measure_right) > 1e-3  # and so does what the check measures
    if d.check == "gradient check":  # right = finite differences of the slipped code's own loss
        name = d.where.removeprefix("∂L/∂").split("[")[0]
        row = int(d.where.split("[")[1].rstrip("]"))
        fd = numerical_grads(lambda p: slips.loss_of({**toy.toy_params(), name: p["W"]}, slip),
                             {"W": toy.toy_params()[name]})["W"]
        np.testing.assert_allclose(d.right, fd[row], atol=1e-8)
        assert d.measure_right < 1e-8


def test_loss_and_grads_is_the_exact_path_with_tables():
    exact = toy.exact_path()
    loss, p, grads = toy.loss_and_grads(toy.toy_params())
    assert loss == exact.loss
    np.testing.assert_array_equal(p, exact.p)
    for name, g in exact.grads.items():
        if not name.startswith("E_"):
            np.testing.assert_array_equal(grads[name], g)
    emb = toy.embedding_grads(exact)
    for E in ("E_src", "E_tgt"):
        np.testing.assert_allclose(grads[E], emb[E], atol=1e-15)


def test_loss_and_grads_against_finite_differences_away_from_the_toy():
    rng = np.random.default_rng(37)
    params = {n: v + 0.05 * rng.normal(size=v.shape) for n, v in toy.toy_params().items()}
    _, _, grads = toy.loss_and_grads(params)
    fd = numerical_grads(lambda q: toy.loss_and_grads(q)[0], params)
    for name in params:
        np.testing.assert_allclose(grads[name], fd[name], atol=1e-8)
