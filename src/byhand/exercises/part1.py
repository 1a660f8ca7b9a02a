"""Exercises of Part I (chapters 01–06). Each ``solve`` computes its answer and the known wrong answers with ``byhand``.

The inputs are small, hand-friendly vectors, named here so that a chapter shows them from the same place the
checker reads them (``INPUTS["dot.1"]``), and no number is typed twice.
"""
from __future__ import annotations

import numpy as np

from ..display import dot_terms
from ..linear import linear_backward, linear_forward
from ..loss import cross_entropy_forward
from ..softmax import softmax_forward
from . import Solution, exercise

INPUTS = {
    "dot.1": {"q": np.array([3.0, -2.0, 1.0, 0.5]), "k": np.array([0.5, -1.5, -2.0, 4.0])},
    "dot.2": {"q": np.array([3.0, -2.0, 1.0, 0.5]), "k": np.array([0.5, -1.5, -2.0, 4.0]), "j": 0, "delta": 0.5},
    "softmax.1": {"z": np.array([2.0, 1.0, -1.0])},
    "softmax.2": {"z": np.array([2.0, 1.0, -1.0]), "j": 1, "bump": 1.0},
    "dot.4": {"q": np.array([1.0, 2.0, 2.0, 4.0]), "k": np.array([2.0, 1.0, -2.0, 4.0])},
    "softmax.4": {"d_k": 16, "factor": 4},
    "logs.1": {"z": np.array([2.0, 1.0, 0.0]), "target": 1},
    "logs.2": {"p": np.array([0.5, 0.25, 0.8, 0.1])},
    "logs.3": {"p": np.array([0.5, 0.25, 0.8, 0.1]), "i": 2, "factor": 0.5},
    "derivatives.1": {"z": np.array([2.0, 1.0, 0.0]), "target": 1},
    "derivatives.2": {"x": 2.0, "h": 0.1},
    "backprop.1": {"X": np.array([[1.0, 2.0], [3.0, -1.0]]), "W": np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]),
                   "dY": np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 3.0]]), "entry": (1, 2)},
    "backprop.3": {"g": np.array([1.0, -2.0]), "J": np.array([[0.5, 1.0], [-1.5, 2.0]]), "i": 0},
    "learning.1": {"theta": np.array([0.5, -1.0]), "g": np.array([0.2, -0.4]), "eta": 0.5, "i": 1},
    "learning.2": {"g": np.array([0.2, -0.4]), "eta": 0.5},
}


@exercise("dot.1", "01_dot_products", "by hand", 1, "Write out q·k for two 4-vectors and add it up", atol=1e-6)
def _dot_1():
    q, k = INPUTS["dot.1"]["q"], INPUTS["dot.1"]["k"]
    t = dot_terms(q, k)
    flipped = t.total - 2 * t.products[1]  # (−2)(−1.5) taken as −3
    return Solution(t.total, {"a negative times a negative is positive: check the second product.": flipped,
                              "that is the sum of the entries of q and k, not of their products.": q.sum() + k.sum()})


@exercise("dot.2", "01_dot_products", "predict", 2, "Predict how far q·k moves when one entry of k is nudged",
          atol=1e-6)
def _dot_2():
    d = INPUTS["dot.2"]
    q, k, j, delta = d["q"], d["k"], d["j"], d["delta"]
    k2 = k.copy()
    k2[j] += delta
    change = dot_terms(q, k2).total - dot_terms(q, k).total  # (q·k') − (q·k) = q_j Δ
    return Solution(change, {"that is k[j]·Δ: the nudge is multiplied by the entry of q it meets.": k[j] * delta,
                             "that is the new q·k; the question asks how far it moves.": dot_terms(q, k2).total})


@exercise("softmax.1", "02_softmax", "by hand", 1, "Turn three logits into probabilities; give p[0]", atol=5e-4,
          precision=("dp", 4))
def _softmax_1():
    z = INPUTS["softmax.1"]["z"]
    p, _ = softmax_forward(z)
    # the logits sum to 2 = z[0], so dividing the logits themselves gives 1, a probability no softmax of three gives
    return Solution(p[0], {"that is e^z[0] before dividing by the sum of all three exponentials.": np.exp(z[0]),
                           "the sum has three terms: e^z[2] = e^(-1) counts too.": np.exp(z[0]) / np.exp(z[:2]).sum(),
                           "that divides the logits themselves, z[0] / (z[0] + z[1] + z[2]); exponentiate first. A "
                           "softmax never gives one word all of the probability.": z[0] / z.sum()})


@exercise("softmax.2", "02_softmax", "predict", 2,
          "Predict the ratio p[1]/p[0] after adding 1 to z[1]", atol=5e-3)
def _softmax_2():
    d = INPUTS["softmax.2"]
    z = d["z"].copy()
    z[d["j"]] += d["bump"]
    p, _ = softmax_forward(z)
    before, _ = softmax_forward(d["z"])
    return Solution(p[1] / p[0], {
        "that is the ratio before the bump; adding 1 to a logit multiplies its odds by e.": before[1] / before[0],
        "that is p[1] after the bump, not the ratio p[1]/p[0].": p[1],
        "e is the factor the bump multiplies the ratio by, not the new ratio: multiply it into the ratio before the "
        "bump, e^(z[1] − z[0]).": np.exp(d["bump"])})


@exercise("dot.4", "01_dot_products", "by hand", 2, "The cosine of the angle between two 4-vectors", atol=5e-3,
          precision=("dp", 2))
def _dot_4():
    q, k = INPUTS["dot.4"]["q"], INPUTS["dot.4"]["k"]
    qk, qq, kk = dot_terms(q, k).total, dot_terms(q, q).total, dot_terms(k, k).total
    cos = qk / np.sqrt(qq * kk)
    return Solution(cos, {"that is q·k itself; divide it by both lengths, ‖q‖ ‖k‖.": qk,
                          "that divides by q·q times k·k, the squared lengths; take the square root of each.":
                              qk / (qq * kk),
                          "that is the angle in degrees; the task asks for its cosine.": np.degrees(np.arccos(cos))})


@exercise("softmax.4", "02_softmax", "predict", 2,
          "d_k grows fourfold: by what factor does the spread of the unscaled scores q·k grow?", atol=5e-3)
def _softmax_4():
    d = INPUTS["softmax.4"]
    before, after = np.sqrt(d["d_k"]), np.sqrt(d["factor"] * d["d_k"])  # the standard deviation is √d_k
    return Solution(after / before, {
        "that is how the variance grows; the spread, the standard deviation, is its square root.": float(d["factor"]),
        "that is the spread after the division by √d_k, which stays near 1; the question asks about q·k unscaled.":
            1.0,
        "that is the factor squared; the variance grows in proportion to d_k, not to d_k².": float(d["factor"]) ** 2})


@exercise("logs.1", "03_logs", "by hand", 1, "The cross-entropy loss of three logits when the answer is word 1",
          atol=5e-4)
def _logs_1():
    d = INPUTS["logs.1"]
    loss, _ = cross_entropy_forward(d["z"][None, :], np.array([d["target"]]))
    p, _ = softmax_forward(d["z"])
    return Solution(loss, {"the loss is −log p: that has lost its minus sign.": np.log(p[d["target"]]),
                           "that uses log base 10; the book's logs are natural (base e).": -np.log10(p[d["target"]]),
                           "that is the loss of word 0, the most likely word, not of the answer.": -np.log(p[0])})


@exercise("logs.2", "03_logs", "by hand", 2, "The cost of a four-word sentence: add the −log p", atol=5e-4)
def _logs_2():
    p = INPUTS["logs.2"]["p"]
    cost = float(np.sum(-np.log(p)))
    return Solution(cost, {"that is the product of the probabilities; the cost is the sum of −log p.": np.prod(p),
                           "that uses log base 10; the book's logs are natural (base e).": float(np.sum(-np.log10(p)))})


@exercise("logs.3", "03_logs", "predict", 1,
          "Predict how much the sentence's cost rises when one word's probability is halved", atol=5e-4)
def _logs_4():
    d = INPUTS["logs.3"]
    p2 = d["p"].copy()
    p2[d["i"]] *= d["factor"]
    rise = float(np.sum(-np.log(p2)) - np.sum(-np.log(d["p"])))  # −log(f p) = −log p − log f: a rise of −log f
    return Solution(rise, {
        "that uses log base 10; the book's logs are natural (base e).": -np.log10(d["factor"]),
        "that is the new cost of the whole sentence; the question asks how much it rises.":
            rise + float(np.sum(-np.log(d["p"]))),
        "the cost is a sum of −log p, so halving one probability adds the same amount whatever p was, not half "
        "of that word's cost.": 0.5 * -np.log(d["p"][d["i"]])})


@exercise("derivatives.1", "04_derivatives", "by hand", 1, "∂loss/∂z[1] when the answer is word 1", atol=5e-4)
def _derivatives_1():
    d = INPUTS["derivatives.1"]
    p, _ = softmax_forward(d["z"])
    y = np.eye(p.size)[d["target"]]
    return Solution((p - y)[d["target"]], {"that is p[1]: the slope is p − y, so subtract 1 at the answer.": p[1],
                                           "that is y − p: the sign is the other way round.": (y - p)[d["target"]],
                                           "that is −p[1]: the minus sign of the loss is already in the formula; at "
                                           "the answer y = 1, so the slope is p[1] − 1.": -p[d["target"]]})


@exercise("derivatives.2", "04_derivatives", "predict", 2,
          "Forward and central differences of x³ at x = 2: give the forward one", atol=5e-4)
def _derivatives_2():
    x, h = INPUTS["derivatives.2"]["x"], INPUTS["derivatives.2"]["h"]
    f = lambda u: u ** 3  # noqa: E731  (the function of the exercise)
    forward = (f(x + h) - f(x)) / h
    central = (f(x + h) - f(x - h)) / (2 * h)
    assert abs(central - 3 * x ** 2) < 0.05  # the central difference is h² = 0.01 off: at 3 figures both read 12.0
    return Solution(forward, {
        "that is the exact slope 3x², or the central difference, which lands within Δ² of it; the forward one only "
        "steps to x + Δ, and is off by about 3xΔ.": central,
        "that is the backward difference (f(x) − f(x − Δ))/Δ, which steps to x − Δ and lands below the exact slope; "
        "the forward one steps to x + Δ.": (f(x) - f(x - h)) / h})


@exercise("backprop.1", "05_backprop", "by hand", 2, "One entry of dW = Xᵀ·dY for a 2×2 by 2×3 layer", atol=1e-6)
def _backprop_1():
    d = INPUTS["backprop.1"]
    X, dY, (i, j) = d["X"], d["dY"], d["entry"]
    _, cache = linear_forward(X, d["W"])
    dW = linear_backward(dY, cache)[1]  # (2, 3) Xᵀ·dY
    return Solution(dW[i, j], {"that is (X·dY)[i, j]: dW needs X transposed, pairing column i of X with column j "
                               "of dY.": (X @ dY)[i, j],
                               "dW[i, j] sums over every row of X and dY; that used only the last row.":
                               X[-1, i] * dY[-1, j],
                               "dW[i, j] sums over every row of X and dY; that used only the first row.":
                               X[0, i] * dY[0, j]})


@exercise("backprop.2", "05_backprop", "code", 2, "Complete a linear layer's backward: return dX and dW for Y = XW",
          atol=1e-9)
def _backprop_2():
    rng = np.random.default_rng(5)
    cases = tuple((rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), rng.normal(size=(3, 4))) for _ in range(3))

    def reference(X, W, dY):
        _, cache = linear_forward(X, W)
        dX, dW = linear_backward(dY, cache)[:2]
        return dX, dW

    def w_not_transposed(X, W, dY):
        return dY @ W, X.T @ dY

    def dw_transposed(X, W, dY):
        return dY @ W.T, dY.T @ X

    return Solution(reference, {"dX is dY·Wᵀ: W must be transposed on the way back.": w_not_transposed,
                                "dW is Xᵀ·dY, shaped like W; dYᵀ·X is its transpose.": dw_transposed}, cases)


@exercise("backprop.3", "05_backprop", "by hand", 2, "Back through an addition: one entry of dL/dr₁ for r₂ = r₁ + F(r₁)",
          atol=1e-6)
def _backprop_3():
    d = INPUTS["backprop.3"]
    g, J, i = d["g"], d["J"], d["i"]  # g = dL/dr2, J[n, i] = dF_n/dr1_i
    through_f = g @ J  # (2,) sum over n of g[n] J[n, i]
    return Solution(g[i] + through_f[i], {
        "that is only the part through F: the addition also hands dL/dr₂ straight down, so add g[i].": through_f[i],
        "that is only the skip term: add what comes back through F, the sum over n of g[n]·J[n, i].": g[i],
        "that sums along row i of J; the path from r₁[i] to F[n] has slope J[n, i], a column of J.": g[i] + (J @ g)[i]})


@exercise("learning.1", "06_learning", "by hand", 1, "One gradient step: the new θ[1]", atol=1e-6)
def _learning_1():
    d = INPUTS["learning.1"]
    new = d["theta"] - d["eta"] * d["g"]
    return Solution(new[d["i"]], {"that is θ + ηg: a step with the gradient climbs the loss.":
                                  (d["theta"] + d["eta"] * d["g"])[d["i"]],
                                  "that is θ − g: the step is scaled by η.": (d["theta"] - d["g"])[d["i"]],
                                  "that is the new θ[0]; θ[1] is the second entry (counted from 0).":
                                  (d["theta"] - d["eta"] * d["g"])[0]})


@exercise("learning.2", "06_learning", "predict", 2,
          "Predict the first-order change of the loss for that step, −η‖g‖²", atol=5e-4)
def _learning_2():
    d = INPUTS["learning.2"]
    g, eta = d["g"], d["eta"]
    return Solution(-eta * float(g @ g), {"the loss goes down along −g: that has the wrong sign.": eta * float(g @ g),
                                          "that is −η‖g‖ (the length), not −η‖g‖² (the length squared).":
                                          -eta * float(np.linalg.norm(g)),
                                          "that is −‖g‖², the change for η = 1: multiply by η.": -float(g @ g)})


# --- code exercises: each completes one function and is checked against byhand on a few inputs --------------------

def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@exercise("dot.3", "01_dot_products", "code", 1, "Complete dot(q, k) with a loop: multiply matching entries, add up",
          atol=1e-9)
def _dot_3():
    r = _rng(1)
    d = INPUTS["dot.1"]
    cases = ((d["q"], d["k"]), (r.normal(size=16), r.normal(size=16)), (r.normal(size=64), r.normal(size=64)))

    def reference(q, k):
        return dot_terms(q, k).total

    def products(q, k):
        return np.asarray(q) * np.asarray(k)

    def sums(q, k):
        return float(np.sum(q) + np.sum(k))

    return Solution(reference, {"that returns the list of products; add them up into one number.": products,
                                "that adds the entries of q and k; multiply matching entries first.": sums}, cases)


@exercise("softmax.3", "02_softmax", "code", 2, "Complete softmax(Z): each row of logits into probabilities",
          atol=1e-9)
def _softmax_3():
    r = _rng(2)
    cases = ((INPUTS["softmax.1"]["z"][None, :],), (r.normal(size=(3, 5)),), (4.0 * r.normal(size=(4, 6)),))

    def reference(Z):
        return softmax_forward(Z, axis=-1)[0]

    def no_division(Z):
        Z = np.asarray(Z)
        return np.exp(Z - Z.max(axis=-1, keepdims=True))

    def columns(Z):
        Z = np.asarray(Z)
        e = np.exp(Z - Z.max(axis=0, keepdims=True))
        return e / e.sum(axis=0, keepdims=True)

    def whole(Z):
        Z = np.asarray(Z)
        e = np.exp(Z - Z.max())
        return e / e.sum()

    return Solution(reference, {
        "each row must sum to 1: divide the exponentials by their sum.": no_division,
        "that normalises each column; a row of logits belongs to one position, so sum along axis=-1.": columns,
        "that divides by the sum of the whole array; each row is its own distribution (keepdims=True helps).":
            whole}, cases)


@exercise("logs.4", "03_logs", "code", 2, "Complete cross_entropy(Z, targets): the mean −log p of the right words",
          atol=1e-9)
def _logs_3():
    r = _rng(3)
    d = INPUTS["logs.1"]
    cases = ((d["z"][None, :], np.array([d["target"]])), (r.normal(size=(4, 5)), np.array([0, 4, 2, 2])),
             (3.0 * r.normal(size=(6, 7)), np.array([6, 0, 1, 5, 3, 3])))

    def reference(Z, targets):
        return cross_entropy_forward(Z, targets)[0]

    def _p(Z, targets):
        p = softmax_forward(Z, axis=-1)[0]
        return p[np.arange(len(targets)), targets]

    def no_minus(Z, targets):
        return float(np.mean(np.log(_p(Z, targets))))

    def summed(Z, targets):
        return float(np.sum(-np.log(_p(Z, targets))))

    def of_logits(Z, targets):
        return float(np.mean(-np.asarray(Z)[np.arange(len(targets)), targets]))

    return Solution(reference, {
        "the loss is −log p: that has lost its minus sign.": no_minus,
        "that is the sum over the rows; the loss is their mean.": summed,
        "that takes −z of the right word; turn the logits into probabilities with softmax first.": of_logits},
        cases)


@exercise("derivatives.3", "04_derivatives", "code", 1, "Complete central(f, x, delta): the central-difference slope",
          atol=1e-9)
def _derivatives_3():
    d = INPUTS["derivatives.2"]
    cases = ((lambda u: u ** 3, d["x"], d["h"]), (np.exp, 0.5, 1e-2), (np.sin, 1.0, 0.25))

    def reference(f, x, h):
        return (f(x + h) - f(x - h)) / (2 * h)

    def forward(f, x, h):
        return (f(x + h) - f(x)) / h

    def over_h(f, x, h):
        return (f(x + h) - f(x - h)) / h

    return Solution(reference, {
        "that is the forward difference; the central one steps to both x + Δ and x − Δ.": forward,
        "the two points lie 2Δ apart: divide by 2Δ, not Δ.": over_h}, cases)


@exercise("learning.3", "06_learning", "code", 2, "Complete descend: n steps of gradient descent", atol=1e-9)
def _learning_3():
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    grad_q = lambda th: A @ th  # noqa: E731  (the gradient of the bowl θᵀAθ / 2)
    grad_s = lambda th: np.cos(th)  # noqa: E731  (the gradient of Σ sin θ)
    theta0 = INPUTS["learning.1"]["theta"]
    cases = ((theta0, grad_q, 0.5, 10), (theta0, grad_s, 0.1, 5), (np.array([1.0, 2.0, -3.0]), grad_s, 0.3, 1))

    def reference(theta, grad, eta, n):
        for _ in range(n):
            theta = theta - eta * grad(theta)  # θ ← θ − η g, the gradient taken afresh at every step
        return theta

    def uphill(theta, grad, eta, n):
        for _ in range(n):
            theta = theta + eta * grad(theta)
        return theta

    def stale(theta, grad, eta, n):
        return theta - n * eta * grad(theta)

    return Solution(reference, {
        "that climbs: a step along +g raises the loss, so subtract η g.": uphill,
        "that reuses the first gradient n times; take the gradient afresh at every new θ.": stale}, cases)
