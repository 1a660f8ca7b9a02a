"""Every exercise's right answer, pinned by something other than its own ``solve()``.

A numeric exercise's answer is pinned in ``PINNED`` by a closed form or by a value computed apart from byhand, each
with a one-line reason. The toy GPT's values (chapters 11-24, reasons starting "plain forward") come from
``tests/plain_toy.py``, a plain-NumPy forward of the toy's seeded weights with no byhand op, with central differences
for the gradients; they are kept here as literals to ten significant digits, and ``tests/test_plain_pins.py``
recomputes every one of them there. A code exercise's reference is pinned in ``REFERENCES`` by a second
implementation, written here in plain NumPy, that the checker must call right on every test input.

The tolerance rule is checked here too: the right answer rounded to the precision its task asks for (three
significant figures where the task names none) is accepted, and each known mistake at that precision still gets its
own hint.
"""
import math

import numpy as np
import pytest

from byhand.exercises import all_exercises, check, get

E, SQRT2 = math.e, math.sqrt(2)


def _logsoftmax(z):
    z = np.asarray(z, dtype=float)
    return z - z.max() - math.log(np.exp(z - z.max()).sum())


def _smoothed_loss(z, target, eps):
    """−Σ q log p with q = (1 − ε) one-hot + ε/V: the book's label smoothing, on one row of logits."""
    q = np.full(len(z), eps / len(z))
    q[target] += 1 - eps
    return float(-(q * _logsoftmax(z)).sum())


_H_ROUNDED, _AM = np.array([1.0, 0.0, -1.0, 0.0]), 2  # ch34-35's rounded path: h, and the target "am" of <bos> i am
_P_ROUNDED = np.exp(_logsoftmax(_H_ROUNDED))  # W_out = I, so the logits are h
_COS = 1e-4 + (2e-3 - 1e-4) * 0.5 * (1 + math.cos(math.pi * (1430 - 100) / (2000 - 100)))

def _ln_slope_00(g=(1.0, 2.0, 0.0, 0.0)):
    """∂(g·y)/∂x₀ of the last layer norm on chapter 35's scored row: a central difference of the plain formula
    (x − x̄)/std(x) (no byhand backward), on the residual row that byhand's forward computes."""
    from byhand import toy_2017 as toy

    x, h = toy.exact_path().trace["dec0.res3"][1], 1e-6
    gy = lambda v: np.dot(g, (v - v.mean()) / v.std())  # noqa: E731
    return (gy(x + [h, 0, 0, 0]) - gy(x - [h, 0, 0, 0])) / (2 * h)


def _double_beta_gap():
    """The gradient check's gap for y = γx̂ + 2β with the backward unchanged, from forward passes only: at β = 0 the
    slipped loss is the toy's loss at 2β, so its slope in β is 2s and the backward's is s, s the toy's slope (central
    differences); the gap is max |s| over every layer norm's β."""
    from byhand import toy_2017 as toy
    from byhand.encdec import encdec_forward_embedded
    from byhand.loss import cross_entropy_forward

    params, (X_src, X_tgt), h = toy.toy_params(), toy.toy_inputs(), 1e-6

    def loss(p):
        logits, _ = encdec_forward_embedded(p, X_src, X_tgt, toy.toy_config())
        return cross_entropy_forward(logits, toy.toy_targets(), label_smoothing=0.1)[0]

    gaps = []
    for name in (n for n in params if n.endswith(".beta")):
        for j in range(len(params[name])):
            d = h * np.eye(len(params[name]))[j]
            slipped = [loss({**params, name: 2 * (params[name] + e)}) for e in (d, -d)]  # the slipped model's loss
            gaps.append(abs((slipped[0] - slipped[1]) / (2 * h) / 2))  # |2s − s| = |s|
    return max(gaps)


# key -> (the right answer, why it is that). "plain forward" = the plain-NumPy forward of the toy described above.
PINNED = {
    "dot.1": (3 * 0.5 + (-2) * (-1.5) + 1 * (-2) + 0.5 * 4, "the four products of q = [3, −2, 1, 0.5] and k, added"),
    "dot.2": (3 * 0.5, "only the product q[0]·k[0] changes, by q[0]·Δ"),
    "softmax.1": (E**2 / (E**2 + E + 1 / E), "e² / (e² + e¹ + e⁻¹) for z = [2, 1, −1]"),
    "softmax.2": (1.0, "z[1] + 1 = z[0]: two equal logits have equal probabilities"),
    "dot.4": (16 / (5 * 5), "q·k = 2 + 2 − 4 + 16 = 16, and both lengths are √25 = 5"),
    "softmax.4": (2.0, "the spread of q·k is √d_k, and √(4 d_k) = 2 √d_k"),
    "logs.1": (math.log(E**2 + E + 1) - 1, "−log(e¹ / (e² + e + 1)) for z = [2, 1, 0], word 1"),
    "logs.2": (-math.log(0.5 * 0.25 * 0.8 * 0.1), "the sum of −log p is −log of the product, 0.01"),
    "logs.3": (math.log(2), "−log(p/2) = −log p + log 2, whatever p is"),
    "derivatives.1": (E / (E**2 + E + 1) - 1, "p₁ − 1 for z = [2, 1, 0]"),
    "derivatives.2": (3 * 2**2 + 3 * 2 * 0.1 + 0.1**2, "((x + h)³ − x³)/h = 3x² + 3xh + h² at x = 2, h = 0.1"),
    "backprop.1": (2 * (-1) + (-1) * 3, "column 1 of X, [2, −1], dotted with column 2 of dY, [−1, 3]"),
    "backprop.3": (1 + 1 * 0.5 + (-2) * (-1.5), "g[0] + g[0]·J[0, 0] + g[1]·J[1, 0] for g = [1, −2]"),
    "learning.1": (-1.0 - 0.5 * (-0.4), "θ₁ − η g₁ = −1 − 0.5 · (−0.4)"),
    "learning.2": (-0.5 * (0.2**2 + 0.4**2), "−η (0.2² + 0.4²)"),
    "tokens.1": (10 * 8 + 5 * 8 + 4 * 8 * 8 + 4 * 8 + 2 * 2 * 8 + 8 * 32 + 32 + 32 * 8 + 8 + 2 * 8 + 8 * 10,
                 "E, P, four attention matrices and biases, two layer norms, the FFN, ln_f and W_out at width 8"),
    "tokens.2": (math.log(20), "p = 1/20 at every position, so −log p = log 20"),
    "embeddings.1": (1.243764913, "plain forward: E[sat, 12] + P[2, 12]"),
    "embeddings.2": (0.07997583192, "plain forward, P[2, 12] + 1: position 4's largest weight change"),
    "qkv.1": (1 * 8 + 2, "head 1 owns columns 8 to 15; entry 2 of it is column 10"),
    "qkv.2": (0.1167011013, "Δ · W_Q[5, 12] with W_Q from the toy's weights: Q is linear in x̂"),
    "qkv.4": (math.sqrt(3.55 * 20.54) - 3.55, "Cauchy-Schwarz from the printed ‖q₃‖² = 3.55 and ‖q₁‖² = 20.54: "
              "q₃·q₁ − ‖q₃‖² ≤ ‖q₃‖ ‖q₁‖ − ‖q₃‖²"),
    "scores.1": (0.2930507834, "plain forward: softmax of head 1's five scores of row 3, none masked, at key 2"),
    "scores.2": (0.4823089192, "plain forward: a e / (1 + a(e − 1)) from the old weight a of key 1"),
    "heads.1": (0.8044572545, "plain forward: head 0's part of out[4, 0] plus b_O[0]"),
    "heads.2": (0.4651596772, "every O entry + 1 moves out[4, 0] by column 0 of W_O summed"),
    "ffn.1": (-0.1347881897, "plain forward: GELU (tanh form) of h[3, 1]"),
    "ffn.2": (16, "one input row changes one output row of 16: the layer works row by row"),
    "ffn.4": (-0.5685521129, "plain forward: (b₁W₂ + b₂)[13] − 2 (u[2] W₁W₂)[13], the layer without GELU at −2 u[2]"),
    "layernorm.1": (-0.8887543474, "plain forward: (r₁[3, 0] − μ) / √(σ² + ε)"),
    "layernorm.2": (0.3733173663, "plain forward: α √(σ² + ε) / √(α²σ² + ε) for row 4, α = 10⁻³"),
    "loss.1": (2.514666698, "plain forward: the mean of five −log p, position 4's target <eos>"),
    "loss.2": (-0.04559294208, "plain forward: the loss rerun with the target logit at position 0 + 0.2"),
    "dlogits.1": (-0.2021956645, "plain forward: (p[3, I] − 1) / 4"),
    "dlogits.2": (0.1358293354, "plain forward: the loss rerun with W_out[4, 3] + 0.25"),
    "dffn.1": (-0.005707837647, "plain forward: central difference of the loss in h[3, 62]"),
    "dffn.2": (0.0, "the final layer norm subtracts the row's mean, so a shift of the whole row never arrives"),
    "dattn.1": (-0.1531456015, "plain forward: −a₁a₂ of head 0's row 2"),
    "dattn.2": (0.05856359563, "plain forward: central difference of the loss in head 0's V[1, 0]"),
    "dembed.1": (4, "the, cat and mat never occur; <eos> sits only at the unscored last position"),
    "dembed.2": (0.1146774370, "plain forward: dE[I, 2] of one copy; the mean of two equal losses has its gradient"),
    "gradcheck.1": (0.1, "|4e-4 − 5e-4| / max(4e-4, 5e-4, 1e-3) = 1e-4 / 1e-3"),
    "gradcheck.2": (100.0, "plain forward: the error ratio at h = 1e-2 and 1e-3 is 100.001, h² grown tenfold"),
    "adamw.1": (0.5 - 1e-2 * 0.01 * 0.5 + 1e-2 * 0.2 / (0.2 + 1e-8), "m̂ = g, v̂ = g²: θ − ηλθ − η g/(|g| + ε)"),
    "adamw.2": (-1e-2 * 1e-5 / (1e-5 + 1e-8), "−η g/(|g| + ε): g cancels but for ε"),
    "adamw.4": (-((0.9 * 0.1 - 0.05) / 1.9) / (math.sqrt((0.999 * 0.01 + 0.0025) / 1.999) + 1e-8),
                "m̂₂ = (β₁g₁ + g₂)/(1 + β₁), v̂₂ = (β₂g₁² + g₂²)/(1 + β₂); step/η = −m̂₂/(√v̂₂ + ε)"),
    "encdec.1": (4 * 4 * 4 + 2 * 2 * 4 + 4 * 8 + 8 + 8 * 4 + 4, "four 4×4 attention matrices, two layer norms, the FFN"),
    "encdec.2": (4 * 512**2 + 2 * 2 * 512 + 2 * 512 * 2048 + 2048 + 512, "the same arrays at d = 512, d_ff = 2048"),
    "encdec.3": (1 / (1 + math.exp(-math.sqrt(2))), "y W_Q = [2, 1, 0, −3]; q = [2, 1] against keys [1, −1], "
                 "[−1, 1]: scores ±1/√2, so the weight on je is 1/(1 + e^−√2)"),
    "positions.1": (math.sin(2), "an even column holds sin(pos / 10000^0) = sin 2"),
    "positions.2": (100.0, "10000^(256/512) = √10000"),
    "positions.3": (-math.exp(-1 / math.sqrt(2)) / (math.exp(-1 / math.sqrt(2)) + math.exp(1 / math.sqrt(2)) + 1),
                    "place 0 holds suis: its head-0 query [−1, 0] against the keys [1, −1], [−1, 0], [0, 0] over √2; "
                    "only je's value has column 1, −1"),
    "positions.4": (0.5 / 0.35, "E_src[suis] = [−0.35, 0.15, −0.2, 0.1] (the book's table); its largest size, 0.35, "
                                "rounds away from 0 once s · 0.35 passes 1/2"),
    "encoder.1": (E / (E + 1), "je's unscaled scores are [1, 0] (W_Q = W_K = I on one-hot halves)"),
    "encoder.2": (math.sqrt(3), "μ = 2, σ² = (9 + 1 + 1 + 1)/4 = 3, so (5 − 2)/√3"),
    "decoder.1": (0.5, "two equal scores and no mask share the row evenly"),
    "decoder.2": (3 * math.tanh(SQRT2) - 1, "(1 − t)(−1) + 2t with t = tanh √2"),
    "smoothing.1": (_smoothed_loss(_H_ROUNDED, _AM, 0.2), "−Σ q log p at ε = 0.2 on the rounded logits [1, 0, −1, 0]"),
    "smoothing.2": (_smoothed_loss(_H_ROUNDED, _AM, 0.5), "the same at ε = 0.5"),
    "smoothing.4": (math.exp(5) / (math.exp(5) + E + 2) - (0.9 + 0.1 / 4),
                    "logits [1, 0, 5, 0]: p_am = e⁵/(e⁵ + e + 2), minus ỹ_am = 1 − ε + ε/V"),
    "encback.1": (-(_P_ROUNDED[0] - 0.2 / 4), "h[2] (p − q)[0] = −(p₀ − ε/V) at ε = 0.2"),
    "encback.2": (_smoothed_loss(_H_ROUNDED + [0.01, 0, 0, 0], _AM, 0.1) - _smoothed_loss(_H_ROUNDED, _AM, 0.1),
                  "W_out[0, 0] + 0.01 raises logit 0 by 0.01 · h[0]"),
    "encback.4": (3.0 + (-1.0), "column 2 is head 1's column 0: ∂L/∂K + ∂L/∂V there, 3 + (−1), as W_K = W_V = I"),
    "encback.5": (_ln_slope_00(), "central difference of [1, 2, 0, 0]·(x − x̄)/std(x) in x₀, on the scored residual row"),
    "adam.1": (512**-0.5 * min(100**-0.5, 100 * 4000**-1.5), "d^(−½) min(t^(−½), t · w^(−3/2))"),
    "adam.2": (0.1 / math.sqrt(0.02), "(1 − β₁)|g| / √(1 − β₂)|g| with β₁ = 0.9, β₂ = 0.98; ε = 1e-9 is negligible"),
    "invariants.1": (SQRT2, "the variance of [1, 0, −1, 0] is ½, so α = 1/√½"),
    "invariants.2": (0.5, "equal scores give [½, ½]; zeroing the future weight leaves row 0 summing to ½"),
    "invariants.3": (_double_beta_gap(), "forward passes only: half the slipped loss's central-difference slope in β"),
    "inside.1": (_COS, "η_min + (η_max − η_min)(1 + cos πs)/2 with s = 1330/1900 (2e-3, 1e-4, w = 100, N = 2000)"),
    "inside.2": (0.7835707289, "W_o rows 0-47 of layer 1 zeroed in one edit, scored by heldout_metrics"),
    "gpt.1": (math.exp((49.4 - 39.0) / 8), "softmax shares in the ratio e^(Δscore/√64), Δscore = 49.4 − 39.0"),
}


# Sorted by kind, so that collecting these tests calls no solve() (inside.2's is an ablation of several seconds):
# a "code" or "find the bug" exercise asks for a function, every other kind for a number.
# test_each_exercise_kind_says_what_its_answer_is checks the rule on every exercise.
CODE_KINDS = ("code", "find the bug")
NUMERIC = [e for e in all_exercises() if e.solve.__module__.startswith("byhand.exercises.part")
           and e.kind not in CODE_KINDS]


@pytest.mark.slow
def test_each_exercise_kind_says_what_its_answer_is():
    for e in all_exercises():
        assert callable(e.solve().answer) == (e.kind in CODE_KINDS), f"{e.key} ({e.kind})"


def test_every_numeric_exercise_is_pinned():
    assert sorted(PINNED) == sorted(e.key for e in NUMERIC)


@pytest.mark.parametrize("key", sorted(PINNED))
def test_the_right_answer_is_the_pinned_one(key):
    expected, reason = PINNED[key]
    got = float(get(key).solve().answer)
    assert got == pytest.approx(expected, rel=1e-7, abs=1e-12), f"{key}: {reason}"
    assert check(key, expected), f"{key}: the pinned answer is rejected ({reason})"


def _at_precision(e, value):
    return np.vectorize(e.rounded)(np.asarray(value, dtype=float)) if np.ndim(value) else e.rounded(float(value))


@pytest.mark.parametrize("e", NUMERIC, ids=[e.key for e in NUMERIC])
def test_an_answer_at_the_asked_precision_is_accepted_and_each_mistake_keeps_its_hint(e):
    expected = PINNED[e.key][0]
    typed = _at_precision(e, expected)
    v = check(e.key, typed)
    assert v, f"{e.key}: {typed!r}, the answer at precision {e.precision}, is rejected: {v.message}"
    for hint, wrong in e.solve().wrong.items():
        v = check(e.key, _at_precision(e, wrong))
        assert not v and hint in v.message, f"{e.key}: {wrong!r} at {e.precision} gives {v.message!r}, not {hint!r}"


# The toy's integer answers and a few precisions, checked against the tasks' own wording in the chapters.
def test_precisions_that_tasks_name():
    asked = {"softmax.1": ("dp", 4), "embeddings.1": ("dp", 2), "adamw.1": ("dp", 5), "adam.1": ("sf", 3),
             "adam.2": ("dp", 3), "decoder.2": ("dp", 4), "inside.1": ("sf", 3), "dembed.1": ("dp", 0),
             "inside.2": ("dp", 4)}
    assert {k: get(k).precision for k in asked} == asked
    assert check("adam.1", 1.75e-5) and check("derivatives.2", 12.6)  # the two that issue 24 found rejected
    assert get("derivatives.2").rounded(12.61) == 12.6 and get("adamw.1").rounded(0.50994999) == 0.50995


# --- code exercises: a second implementation of each reference, in plain NumPy --------------------------------------

def _softmax_rows(Z):
    Z = np.asarray(Z, dtype=float)
    e = np.exp(Z - Z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _mean_ce(Z, targets):
    keep = np.asarray(targets) >= 0
    Z = np.asarray(Z, dtype=float)
    logp = Z - Z.max(axis=-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=-1, keepdims=True))  # log-softmax, finite for logits in the thousands
    return float(-logp[keep, np.asarray(targets)[keep]].mean())


def _causal_weights(Q, K):
    T = Q.shape[-2]
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    return _softmax_rows(np.where(np.tril(np.ones((T, T), dtype=bool)), S, -np.inf))


def _split(M, h):
    T, d = M.shape
    return np.stack([M[:, j * (d // h):(j + 1) * (d // h)] for j in range(h)])


def _ln_dx_jacobian(dy, x, gamma, eps):
    """Row by row, dx = Jᵀ dy with J[i, j] = γᵢ (δᵢⱼ − 1/D − x̂ᵢ x̂ⱼ / D) / σ: the Jacobian, not the short form."""
    out = np.empty_like(np.asarray(x, dtype=float))
    for r in np.ndindex(x.shape[:-1]):
        row, D = x[r], x.shape[-1]
        sd = math.sqrt(row.var() + eps)
        xh = (row - row.mean()) / sd
        J = gamma[:, None] * (np.eye(D) - 1 / D - np.outer(xh, xh) / D) / sd
        out[r] = J.T @ dy[r]
    return out


def _adam(theta, g, m, v, t, lr, b1, b2, eps, decay):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    step = lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return theta * (1 - lr * decay) - step, m, v


def _central(f, x, h):
    g = np.zeros_like(x, dtype=float)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        g[k] = (f(up) - f(down)) / (2 * h)
    return g


def _clip(grads, c):
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
    coef = c / (norm + 1e-6)  # torch's clip_grad_norm_: the 1e-6 included, scaling only when coef < 1
    return [g * coef if coef < 1 else g.copy() for g in grads], norm


def _smoothed_target(target, V, eps):
    q = np.full(V, eps / V)
    q[target] += 1 - eps
    return q


def _descend(theta, grad, eta, n):
    for _ in range(n):
        theta = theta - eta * grad(theta)
    return theta


def _scatter_rows(ids, dx, V):
    dE = np.zeros((V, dx.shape[-1]))
    for i, row in zip(np.ravel(ids), dx.reshape(-1, dx.shape[-1])):
        dE[i] += row
    return dE


# key -> (a second implementation, what it does)
REFERENCES = {
    "dot.3": (lambda q, k: float(np.dot(q, k)), "np.dot"),
    "softmax.3": (_softmax_rows, "row-wise stable softmax"),
    "logs.4": (_mean_ce, "the mean of −log softmax at the targets"),
    "derivatives.3": (lambda f, x, h: (f(x + h) - f(x - h)) / (2 * h), "(f(x + h) − f(x − h)) / 2h"),
    "backprop.2": (lambda X, W, dY: (dY @ W.T, X.T @ dY), "dX = dY Wᵀ, dW = Xᵀ dY"),
    "learning.3": (_descend, "θ ← θ − η grad(θ), n times"),
    "tokens.3": (lambda ids: np.append(np.asarray(ids)[1:], -1), "the ids shifted left, −1 at the end"),
    "embeddings.3": (lambda ids, E_, P_: E_[ids] + P_[:len(ids)], "E[ids] + P[:T]"),
    "qkv.3": (_split, "head j takes columns j·d_k to (j + 1)·d_k − 1"),
    "scores.3": (_causal_weights, "softmax of QKᵀ/√d_k with the upper triangle hidden"),
    "heads.3": (lambda A, V, W_o, b_o: np.concatenate(list(A @ V), axis=-1) @ W_o + b_o, "heads side by side, W_O, b_O"),
    "ffn.3": (lambda x, W1, b1, W2, b2: _gelu(x @ W1 + b1) @ W2 + b2, "widen, GELU (tanh form), narrow"),
    "layernorm.3": (lambda x, g, b, eps: g * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
                    + b, "the biased variance, ε under the root"),
    "loss.3": (_mean_ce, "the mean over the scored positions"),
    "dlogits.3": (lambda p, t: np.where((t >= 0)[:, None], p - np.eye(p.shape[1])[np.maximum(t, 0)], 0) / (t >= 0).sum(),
                  "(p − Y)/N with zero rows where the target is −1"),
    "dffn.3": (_ln_dx_jacobian, "the layer norm's Jacobian, row by row"),
    "dattn.3": (lambda dout, A, W_o, h: np.swapaxes(A, -1, -2) @ _split(dout @ W_o.T, h), "dV = Aᵀ split(dout W_Oᵀ)"),
    "dembed.3": (_scatter_rows, "a loop that adds each row of dx into dE"),
    "gradcheck.3": (_central, "a loop over the entries, both sides moved"),
    "adamw.3": (lambda th, g, m, v, t, lr, wd: _adam(th, g, m, v, t, lr, 0.9, 0.999, 1e-8, wd), "AdamW, as in torch"),
    "decoder.3": (lambda Y, Wq, Wk, Wv: _causal_weights(Y @ Wq, Y @ Wk) @ (Y @ Wv), "causal one-head attention"),
    "smoothing.3": (_smoothed_target, "ε/V on every word, 1 − ε more on the target"),
    "encback.3": (lambda a, g: a * (g - a @ g), "a ⊙ (g − Σ aⱼgⱼ)"),
    "adam.3": (lambda W, g, m, v, t, lr: _adam(W, g, m, v, t, lr, 0.9, 0.98, 1e-9, 0.0), "the paper's Adam"),
    "inside.3": (_clip, "one factor for every array, from the global norm"),
}

CODE = [e for e in all_exercises() if e.solve.__module__.startswith("byhand.exercises.part") and e.kind in CODE_KINDS]


def test_every_code_exercise_has_a_second_implementation():
    assert sorted(REFERENCES) == sorted(e.key for e in CODE)


@pytest.mark.parametrize("key", sorted(REFERENCES))
def test_the_reference_agrees_with_a_second_implementation(key):
    fn, what = REFERENCES[key]
    v = check(key, fn)
    assert v, f"{key}: {what}: {v.message}"
