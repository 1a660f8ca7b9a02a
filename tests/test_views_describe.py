"""Every view says what its figure shows: describe() holds the numbers of the state, computed here independently.

Each view's ``draw.describe(setting)`` is the text alternative of its default figure, of every static-slider frame
and of the live image. Here the expected numbers come from the view's inputs by plain NumPy (or from the arrays of
its state), never from describe itself, and are written with the same ``fmt`` a description uses.
"""
import math
import re

import numpy as np
import pytest

import test_views_dot as dot_t
import test_views_heads as heads_t
import test_views_layernorm as ln_t
import test_views_logits as logits_t
import test_views_params as params_t
import test_views_qkv as qkv_t
import test_views_scores as scores_t
import test_views_smoothing as smooth_t
import test_views_softmax as softmax_t
from byhand.views import fmt
from byhand.views.derivatives import derivative_view
from byhand.views.dot import dot_view, turn
from byhand.views.gelu import gelu_view
from byhand.views.heads import heads_view
from byhand.views.layernorm import ln_view
from byhand.views.logits import logits_view
from byhand.views.logs import logs_view
from byhand.views.params import params_view
from byhand.views.qkv import qkv_view
from byhand.views.scores import scores_view
from byhand.views.smoothing import smoothing_view
from byhand.views.softmax import softmax_view
from byhand.views.warmup import warmup_view
from view_cases import CASES, case

NUMBER = re.compile(r"\d+(\.\d+)?")


@pytest.mark.parametrize("view, args", CASES)
def test_every_view_describes_each_move_in_a_few_sentences_with_numbers(view, args):
    draw, moves, frames = case(view, args)
    assert callable(draw.describe), f"{view}: make_view(..., describe=...) is missing"
    said = [draw.describe(m) for m in moves]
    for text in said:
        assert NUMBER.search(text) and ".png" not in text and "_images" not in text
        assert 40 < len(text) < 700 and text.count(". ") <= 4  # a few plain sentences
    assert len(set(said)) > 1  # the description follows the controls
    assert draw.describe(frames[0]) == draw.describe(moves[0]) or frames[0] != moves[0]  # frame 0 is the default


def test_dot_names_the_total_the_signs_and_the_largest_term():
    q, k = dot_t.vectors(4, n=64)
    draw = dot_view(q, k)
    for theta in (0.0, 35.0, 120.0):
        products = q * turn(q, k, theta)  # (64,)
        big = int(np.argmax(np.abs(products)))
        text = draw.describe({"theta": theta, "j": 0, "delta": 0.0})
        assert f"φ = {theta:.0f}°" in text and f"q·k = {fmt(products.sum())}" in text
        assert f"{int((products < 0).sum())} negative" in text and f"q_{big} k_{big} = {fmt(products[big])}" in text
        columns, rows = draw.table({"theta": theta, "j": 0, "delta": 0.0})
        assert len(rows) == 64 and rows[-1][2] == pytest.approx(products.sum())


def test_softmax_names_the_nudged_words_probability_and_the_top_word():
    draw = softmax_view(softmax_t.Z, softmax_t.WORDS, top=2)
    for nudge, tau in ((0.0, 1.0), (2.0, 1.0), (1.0, 0.5)):
        z = softmax_t.Z.copy()
        z[3] += nudge
        p = softmax_t.by_hand(z, tau)
        text = draw.describe({"word": "d", "nudge": nudge, "temperature": tau})
        assert f"P(d) = {fmt(p[3], 3)}" in text and f"“{softmax_t.WORDS[int(np.argmax(p))]}”" in text
        assert f"hold {fmt(1 - p[0] - p[1] - p[3], 3)}" in text  # the words not shown: "c"


def test_logs_names_the_probability_the_loss_and_the_rank():
    z = np.array([2.0, 1.0, 0.0, -1.0, 0.5])
    words = tuple("abcde")
    draw = logs_view(z, words)
    p = np.exp(z) / np.exp(z).sum()
    for a in range(5):
        text = draw.describe({"answer": words[a]})
        rank = 1 + int((p > p[a]).sum())
        assert f"p = {fmt(p[a], '.3g')}" in text and f"loss = {fmt(-math.log(p[a]))} nats" in text
        assert f"at rank {rank}, so {rank - 1} of the 5 words" in text


def test_derivatives_names_the_tangent_and_the_secant():
    z, a = np.array([2.0, -1.0, 0.5, 3.0, -2.5]), 3
    draw = derivative_view(z, a, a, np.logspace(-6, 0, 7), word="Mary")
    p = np.exp(z) / np.exp(z).sum()
    loss = lambda x: math.log(np.exp(np.r_[z[:3], x, z[4:]]).sum()) - x  # noqa: E731
    for h in (1.0, 0.1):
        text = draw.describe({"h": h})
        assert f"slope {fmt(p[a] - 1, '.4f')}" in text and f"Δ = {fmt(h, '.3g')}" in text
        assert f"of slope {fmt((loss(z[a] + h) - loss(z[a])) / h, '.4f')}" in text


def test_params_names_every_groups_count():
    draw = params_view()
    for d in (2, 16, 40):
        counts = params_t.closed_form(d)
        text = draw.describe({"d_model": d})
        assert f"toy's {sum(counts.values())} parameters at width d_model = {d}" in text
        for group, n in counts.items():
            assert f"{group} {n}" in text
        columns, rows = draw.table({"d_model": d})
        assert sum(r[2] for r in rows) == pytest.approx(1.0)


def test_qkv_names_the_largest_change_as_delta_times_a_row_of_W_q():
    draw = qkv_view(qkv_t.X, qkv_t.W, qkv_t.B, 2, t=2)
    for j, delta in ((5, 1.5), (0, -2.0)):
        change = delta * qkv_t.W[j]  # (16,) the linear map's change, exactly
        c = int(np.argmax(np.abs(change)))
        before = qkv_t.X[2] @ qkv_t.W + qkv_t.B
        text = draw.describe({"j": j, "delta": delta})
        assert f"largest change is {fmt(change[c], 3)}, at entry {c}" in text
        assert f"from {fmt(before[c], 3)} to {fmt(before[c] + change[c], 3)}" in text
    assert "not nudged" in draw.describe({"j": 3, "delta": 0.0})


def test_scores_names_the_nudged_weight_and_the_masked_keys():
    labels = list("abcde")
    draw = scores_view(scores_t.S, scores_t.MASK, 3, labels=labels)
    row = scores_t.S[3, :4].copy()  # keys 0..3 are allowed for query 3
    for s, delta in ((1, 2.0), (0, -4.0)):
        nudged = row.copy()
        nudged[s] += delta
        w0, w1 = np.exp(row) / np.exp(row).sum(), np.exp(nudged) / np.exp(nudged).sum()
        text = draw.describe({"s": s, "delta": delta})
        assert "1 later key is masked" in text
        assert f"from {fmt(w0[s], 3)} to {fmt(w1[s], 3)}" in text
        assert f"largest weight is {fmt(w1.max(), 3)}, on key {int(np.argmax(w1))}" in text
    assert "is masked, so its weight stays 0" in draw.describe({"s": 4, "delta": 3.0})


def test_heads_names_the_output_rows_range_and_its_largest_entry():
    from byhand.mha import merge_heads

    draw = heads_view(heads_t.O, heads_t.W_o, heads_t.b_o, t=4)
    out = merge_heads(heads_t.O)[4] @ heads_t.W_o + heads_t.b_o  # factor 1: the model's own output row
    c = int(np.argmax(np.abs(out)))
    text = draw.describe({"factor": 1.0})
    assert f"from {fmt(out.min(), 3)} to {fmt(out.max(), 3)}" in text and f"out[{c}] = {fmt(out[c], 3)}" in text


def test_gelu_names_the_value_at_x_and_the_largest_gap():
    draw = gelu_view()
    for x in (-1.0, 0.5, 2.0):
        exact = 0.5 * x * (1 + math.erf(x / math.sqrt(2)))
        tanh = 0.5 * x * (1 + math.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
        text = draw.describe({"x": x})
        assert f"GELU = {fmt(tanh, '.4f')}" in text and f"{fmt((tanh - exact) * 1e4, '+.3f')} × 10⁻⁴" in text


def test_layernorm_names_the_mean_and_the_spread_of_the_scaled_row():
    draw = ln_view(ln_t.X, ln_t.G, ln_t.B)
    for c, b in ((1.0, 1.0), (10.0, -5.0)):
        x = c * ln_t.X + b
        text = draw.describe({"scale": c, "shift": b})
        assert f"mean {fmt(x.mean(), 3)}" in text and f"from {fmt(x.min(), 3)} to {fmt(x.max(), 3)}" in text
        assert f"divides by {fmt(math.sqrt(x.var() + 1e-5), '.3g')}" in text


def test_logits_names_the_target_the_nudged_token_and_the_loss():
    vocab = [f"w{k}" for k in range(10)]
    draw = logits_view(logits_t.Z, logits_t.TARGETS, vocab, t=0)
    for v, delta in ((0, -3.0), (2, 1.0)):
        z = logits_t.Z.copy()
        z[0, v] += delta
        p = np.exp(z[0]) / np.exp(z[0]).sum()
        text = draw.describe({"v": v, "delta": delta})
        assert f"“w{v}” has p = {fmt(p[v], 3)}" in text and f"the target “w2” has p = {fmt(p[2], 3)}" in text
        assert f"from {fmt(logits_t.mean_loss(logits_t.Z), '.3f')} to {fmt(logits_t.mean_loss(z), '.3f')}" in text


def test_smoothing_names_the_targets_p_and_smoothed_target_and_the_loss():
    draw = smoothing_view(smooth_t.Z, 2, smooth_t.TOKENS)
    for eps in (0.0, 0.1, 0.4):
        p = np.exp(smooth_t.Z) / np.exp(smooth_t.Z).sum()
        q = np.full(4, eps / 4)
        q[2] += 1 - eps
        text = draw.describe({"eps": eps, "j": 0, "delta": 0.0})
        assert f"p = {fmt(p[2], 3)} and ỹ = {fmt(q[2], 3)}" in text
        assert f"loss = {fmt(-(q * np.log(p)).sum(), '.4f')}" in text


def test_warmup_names_the_start_the_peak_and_the_rate_at_t():
    draw = warmup_view()
    lr = lambda t, d=512, w=4000: d**-0.5 * min(t**-0.5, t * w**-1.5)  # noqa: E731 - the 2017 paper's formula
    for t in (1, 4000, 12000):
        text = draw.describe({"t": t, "d_model": 512, "warmup": 4000})
        assert f"from {fmt(lr(1), '.3e')} at step 1" in text and f"peak {fmt(lr(4000), '.3e')} at step 4000" in text
        assert f"at t = {t} it is {fmt(lr(t), '.3e')}" in text
        assert f"{fmt(sum(lr(s) for s in range(1, t + 1)), '.4g')} at t = {t}" in text
        assert text.endswith(f" and {fmt(sum(lr(s) for s in range(1, 20001)), '.4f')} at step 20000.")
    assert draw.describe({"t": 20000, "d_model": 512, "warmup": 4000}).endswith(" at t = 20000.")  # said once


def test_fmt_writes_a_true_minus_and_no_negative_zero():
    assert fmt(-1.234) == "−1.23" and fmt(-0.0001) == "0.00" and fmt(2.5, ".3g") == "2.5"
    assert fmt(-1.5e-7, ".3e") == "−1.500e-07" and fmt(0.0, "+.3f") == "+0.000"
