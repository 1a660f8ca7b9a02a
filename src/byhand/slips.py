"""Deliberate slips in the Part III toy, for chapter "The invariants, checked": what each invariant catches.

Each slip is one plausible mistake in writing the forward or backward pass by hand. ``run(slip)`` runs the toy's
exact path (``byhand.toy_2017``) with that one mistake in place (``None``: no mistake) and returns the trace, the
loss and the gradients the mistaken code would produce; ``invariants(result)`` measures the post's five invariants on
it, and ``gradient_gap(slip)`` compares its gradients with central finite differences of its own loss.

The slips patch one function of ``byhand`` (in the module that calls it) for the duration of the run and restore it
afterwards; they are for this demonstration only. The loss here is the toy's: the smoothed cross-entropy of the one
scored position, computed directly so that a slip in the smoothed target can be injected.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from byhand import attention as _attention
from byhand import encdec as _encdec
from byhand import mha as _mha
from byhand import toy_2017 as toy
from byhand.softmax import softmax_forward

SLIPS = {  # key: what the mistaken code does
    "skip_before_norm": "the encoder's second skip path starts from the sum res₁, before its layer norm, not from LN₁",
    "softmax_wrong_axis": "the attention softmax taken over the queries (axis -2) in place of the keys",
    "mask_after_softmax": "the causal mask applied after the softmax, by zeroing weights",
    "no_mask": "the causal mask left out",
    "ln_by_variance": "the layer norm divides by the variance, not by its square root",
    "target_no_own_share": "the smoothed target gives the correct word 1 − ε_ls, without its own share ε_ls/n_vocab",
    "transposed_dW": "the output layer's weight gradient written (p − ỹ)ᵀ H₁, the transpose of H₁ᵀ (p − ỹ)",
    "no_sqrt_dk": "the scores not divided by √d_k, in the forward and the backward alike",
    "no_sqrt_dk_backward": "the forward divides the scores by √d_k, the backward forgets to",
}


@dataclass(frozen=True)
class SlipRun:
    """The toy's exact path with one slip in place."""

    slip: str | None
    loss: float
    trace: dict  # forward trace + "dlogits" + the backward trace, as ``toy.exact_path().trace``
    grads: dict  # every parameter except the embedding tables


def _attention_forward(slip):
    orig = _attention.attention_forward

    def forward(Q, K, V, mask=None):
        if slip in ("no_sqrt_dk", "no_sqrt_dk_backward"):
            O, c = orig(Q, K, V, mask)
            if slip == "no_sqrt_dk":  # S = Q K^T: the forward without the scale, and a backward that knows it
                S = Q @ np.swapaxes(K, -1, -2)
                A, sm = softmax_forward(S, axis=-1, mask=mask)
                return A @ V, dict(c, S=S, A=A, softmax=sm, scale=1.0)
            return O, dict(c, scale=1.0)  # the backward multiplies by 1 in place of 1/sqrt(d_k)
        if slip == "mask_after_softmax":
            O, c = orig(Q, K, V, None)
            if mask is None:
                return O, c
            A = c["A"] * np.broadcast_to(mask, c["A"].shape)  # weights zeroed, rows not renormalised
            return A @ V, dict(c, A=A, softmax={"p": A, "axis": -1})
        if slip == "softmax_wrong_axis":
            O, c = orig(Q, K, V, None)
            A, sm = softmax_forward(c["S"], axis=-2, mask=mask)  # normalised down each column
            return A @ V, dict(c, A=A, softmax=sm)
        return orig(Q, K, V, mask)

    return forward


@contextmanager
def slipped(slip: str | None):
    """Within the block, ``byhand``'s encoder-decoder runs with ``slip`` in place (None: unchanged)."""
    if slip is not None and slip not in SLIPS:
        raise ValueError(f"unknown slip {slip!r}; the slips are {', '.join(SLIPS)}")
    saved = {(_mha, "attention_forward"): _mha.attention_forward,
             (_encdec, "causal_mask"): _encdec.causal_mask,
             (_encdec, "_ffn_forward"): _encdec._ffn_forward,
             (_encdec, "layernorm_forward"): _encdec.layernorm_forward,
             (_encdec, "linear_backward"): _encdec.linear_backward}
    try:
        _mha.attention_forward = _attention_forward(slip)
        if slip == "no_mask":
            _encdec.causal_mask = lambda T: np.ones((T, T), dtype=bool)
        if slip == "skip_before_norm":
            orig_ffn = saved[(_encdec, "_ffn_forward")]

            def ffn(p, sub, x, config, trace, c):
                out = orig_ffn(p, sub, x, config, trace, c)
                if sub.name != "enc0.ffn":
                    return out
                res = trace["enc0.res1"] + trace[sub.name + ".out"]  # the wrong skip: the sum before LN1
                trace[sub.res] = res
                ln, c[sub.ln] = _encdec.layernorm_forward(res, p[sub.ln + ".gamma"], p[sub.ln + ".beta"],
                                                          config.ln_eps)
                trace[sub.ln] = ln
                return ln

            _encdec._ffn_forward = ffn
        if slip == "ln_by_variance":
            orig_ln = saved[(_encdec, "layernorm_forward")]

            def ln(x, gamma, beta, eps=1e-5):
                y, c = orig_ln(x, gamma, beta, eps)
                xc = x - x.mean(axis=-1, keepdims=True)
                return gamma * xc / ((xc * xc).mean(axis=-1, keepdims=True) + eps) + beta, c

            _encdec.layernorm_forward = ln
        if slip == "transposed_dW":
            orig_lb = saved[(_encdec, "linear_backward")]

            def lb(dy, cache):
                dx, dW, db = orig_lb(dy, cache)
                return dx, (dW.T if dW.shape[0] == dW.shape[1] else dW), db  # only the square output layer

            _encdec.linear_backward = lb
        yield
    finally:
        for (module, name), f in saved.items():
            setattr(module, name, f)


def _target(slip) -> np.ndarray:
    """The smoothed target of the scored position, (V,)."""
    V, eps = len(toy.TGT_VOCAB), toy.LABEL_SMOOTHING
    onehot = np.eye(V)[toy.TGT_VOCAB.index("am")]
    if slip == "target_no_own_share":
        return (1 - eps) * onehot + eps / V * (1 - onehot)  # sums to 1 - eps / V
    return (1 - eps) * onehot + eps / V


def _loss(logits, slip):
    """The smoothed cross-entropy of the scored row and its gradient as the code writes it, p - q."""
    s = toy.SCORED
    z = logits[s] - logits[s].max()
    p = np.exp(z) / np.exp(z).sum()
    q = _target(slip)
    dlogits = np.zeros_like(logits)
    dlogits[s] = p - q
    return float(-(q * np.log(p)).sum()), dlogits


def loss_of(params: dict, slip: str | None = None) -> float:
    """The toy's loss with ``slip`` in place, as a function of the parameters (the toy's inputs held fixed)."""
    X_src, X_tgt = toy.toy_inputs()
    with slipped(slip):
        logits, _ = _encdec.encdec_forward_embedded(params, X_src, X_tgt, toy.toy_config())
    return _loss(logits, slip)[0]


def run(slip: str | None = None) -> SlipRun:
    """The toy's exact path, forward and backward, with ``slip`` in place."""
    params = toy.toy_params()
    X_src, X_tgt = toy.toy_inputs()
    with slipped(slip):
        logits, cache = _encdec.encdec_forward_embedded(params, X_src, X_tgt, toy.toy_config())
        loss, dlogits = _loss(logits, slip)
        grads, gtrace = _encdec.encdec_backward(dlogits, cache)
    trace = dict(cache["trace"])
    trace.update(gtrace)
    return SlipRun(slip, loss, trace, {n: g for n, g in grads.items() if not n.startswith("E_")})


INVARIANTS = ("1. residual = input + sublayer", "2. attention rows sum to 1", "3. masked weight is 0",
              "3. masked score gradient is 0", "4. layer-norm rows: mean 0, variance 1", "5. p − ỹ sums to 0")


def invariants(r: SlipRun) -> dict[str, float]:
    """The largest deviation each of the post's five invariants finds in ``r`` (0 or round-off: it passes)."""
    tr = r.trace
    residuals = {"enc0.res1": ("X_src", "enc0.attn.out"), "enc0.res2": ("enc0.ln1", "enc0.ffn.out"),
                 "dec0.res1": ("X_tgt", "dec0.self.out"), "dec0.res2": ("dec0.ln1", "dec0.cross.out"),
                 "dec0.res3": ("dec0.ln2", "dec0.ffn.out")}
    future = ~_attention.causal_mask(tr["X_tgt"].shape[0])
    lns = [n for n in ("enc0.ln1", "enc0.ln2", "dec0.ln1", "dec0.ln2", "dec0.ln3")]
    return {
        INVARIANTS[0]: max(float(np.abs(tr[res] - tr[a] - tr[b]).max()) for res, (a, b) in residuals.items()),
        INVARIANTS[1]: max(float(np.abs(tr[n].sum(axis=-1) - 1).max())
                           for n in ("enc0.attn.A", "dec0.self.A", "dec0.cross.A")),
        INVARIANTS[2]: float(np.abs(tr["dec0.self.A"][:, future]).max()),
        INVARIANTS[3]: float(np.abs(tr["ddec0.self.S"][:, future]).max()),
        INVARIANTS[4]: max(max(float(np.abs(tr[n].mean(axis=-1)).max()), float(np.abs(tr[n].var(axis=-1) - 1).max()))
                           for n in lns),
        INVARIANTS[5]: float(np.abs(tr["dlogits"].sum(axis=-1)).max()),
    }


def gradient_gap(slip: str | None = None, h: float = 1e-6) -> float:
    """The largest |gradient the slipped code computes − central finite difference of its own loss|, over every
    entry of every parameter except the embedding tables (float64)."""
    r = run(slip)
    params = toy.toy_params()
    worst = 0.0
    for name, g in r.grads.items():
        base = params[name]
        for idx in np.ndindex(base.shape):
            plus, minus = dict(params), dict(params)
            plus[name], minus[name] = base.copy(), base.copy()
            plus[name][idx] += h
            minus[name][idx] -= h
            fd = (loss_of(plus, slip) - loss_of(minus, slip)) / (2 * h)
            worst = max(worst, abs(float(g[idx]) - fd))
    return worst


def cross_weight(r: SlipRun) -> float:
    """The cross-attention's weight on the matching memory row at the scored position (the post prints 0.944)."""
    return float(r.trace["dec0.cross.A"][0, toy.SCORED, toy.SCORED])


LINES = {  # key: (the line as it should read, the line as the slip writes it)
    "skip_before_norm": ("res₂ = LN₁ + FFN(LN₁)", "res₂ = res₁ + FFN(LN₁)"),
    "softmax_wrong_axis": ("A = softmax(S, axis=-1)", "A = softmax(S, axis=-2)"),
    "mask_after_softmax": ("A = softmax(S, mask=mask)", "A = softmax(S) * mask"),
    "no_mask": ("A = softmax(S, mask=mask)", "A = softmax(S)"),
    "ln_by_variance": ("y = (x − μ) / σ", "y = (x − μ) / σ²"),
    "target_no_own_share": ("ỹ = (1 − ε_ls)·onehot + ε_ls/n_vocab",
                            "ỹ = (1 − ε_ls)·onehot + ε_ls/n_vocab·(1 − onehot)"),
    "transposed_dW": ("dW_out = H₁ᵀ (p − ỹ)", "dW_out = (p − ỹ)ᵀ H₁"),
    "no_sqrt_dk": ("S = Q Kᵀ / √d_k, and dS / √d_k back", "S = Q Kᵀ, and dS back"),
    "no_sqrt_dk_backward": ("dQ = dS K / √d_k, dK = dSᵀ Q / √d_k", "dQ = dS K, dK = dSᵀ Q"),
}


@dataclass(frozen=True)
class SlipDiff:
    """What one slip changes, in numbers: one row of one array where a check looks, right and slipped, and the
    quantity that check measures on that row, right and slipped."""

    slip: str
    where: str  # the array and its row, e.g. "dec0.self.A[head 0, query 0]"
    right: np.ndarray  # the row (the wrong axis: the 2 x 2 head) without the slip; for a gradient, finite
    # differences of the slipped code's own loss
    slipped: np.ndarray  # the row the slipped code computes
    measure: str  # what the check computes on the row
    measure_right: float
    measure_slipped: float
    check: str  # the check that catches the slip: one of INVARIANTS, "gradient check" or "the post's weight"


def _fd_row(slip, name, row, h=1e-6):
    """Central finite differences of the slipped code's own loss, one row of parameter ``name``."""
    params = toy.toy_params()
    out = np.zeros(params[name].shape[1])
    for j in range(out.size):
        plus, minus = dict(params), dict(params)
        plus[name], minus[name] = params[name].copy(), params[name].copy()
        plus[name][row, j] += h
        minus[name][row, j] -= h
        out[j] = (loss_of(plus, slip) - loss_of(minus, slip)) / (2 * h)
    return out


def diff(slip: str) -> SlipDiff:
    """The row where ``slip`` shows, without and with it, and what the check that catches it measures there."""
    if slip not in SLIPS:
        raise ValueError(f"unknown slip {slip!r}; the slips are {', '.join(SLIPS)}")
    c, r = run(None), run(slip)
    ct, rt = c.trace, r.trace
    if slip == "skip_before_norm":
        off = lambda t: np.abs(t["enc0.res2"][0] - t["enc0.ln1"][0] - t["enc0.ffn.out"][0]).max()  # noqa: E731
        return SlipDiff(slip, "enc0.res2[0]", ct["enc0.res2"][0], rt["enc0.res2"][0],
                        "largest entry of res₂ − (LN₁ + FFN)", off(ct), off(rt), INVARIANTS[0])
    if slip in ("softmax_wrong_axis", "mask_after_softmax", "no_mask"):
        row = 0 if slip != "softmax_wrong_axis" else slice(None)  # the wrong axis: both rows of the head
        where = "dec0.self.A[head 0, query 0]" if slip != "softmax_wrong_axis" else "dec0.self.A[head 0]"
        a, b = ct["dec0.self.A"][0][row], rt["dec0.self.A"][0][row]
        if slip == "no_mask":
            return SlipDiff(slip, where, a, b, "masked weight A[0, 1]", ct["dec0.self.A"][0, 0, 1],
                            rt["dec0.self.A"][0, 0, 1], INVARIANTS[2])
        dev = lambda t: np.abs(t["dec0.self.A"][0].sum(axis=-1) - 1).max()  # noqa: E731
        return SlipDiff(slip, where, a, b, "largest gap of a row sum from 1", dev(ct), dev(rt), INVARIANTS[1])
    if slip == "ln_by_variance":
        row = int(np.abs(rt["dec0.ln1"].var(axis=-1) - 1).argmax())
        return SlipDiff(slip, f"dec0.ln1[{row}]", ct["dec0.ln1"][row], rt["dec0.ln1"][row], "variance of the row",
                        ct["dec0.ln1"][row].var(), rt["dec0.ln1"][row].var(), INVARIANTS[4])
    if slip == "target_no_own_share":
        s = toy.SCORED
        return SlipDiff(slip, f"p − ỹ at position {s}", ct["dlogits"][s], rt["dlogits"][s], "sum of p − ỹ",
                        ct["dlogits"][s].sum(), rt["dlogits"][s].sum(), INVARIANTS[5])
    if slip == "no_sqrt_dk":
        s = toy.SCORED
        return SlipDiff(slip, f"dec0.cross.A[head 0, query {s}]", ct["dec0.cross.A"][0, s], rt["dec0.cross.A"][0, s],
                        "the weight the post prints", cross_weight(c), cross_weight(r), "the post's weight")
    # the two backward slips: a row of the gradient that changes most, against finite differences of its own loss
    name = max(r.grads, key=lambda n: np.abs(r.grads[n] - c.grads[n]).max())
    row = int(np.abs(r.grads[name] - c.grads[name]).max(axis=1).argmax())
    fd = _fd_row(slip, name, row)
    return SlipDiff(slip, f"∂L/∂{name}[{row}]", fd, r.grads[name][row], "largest gap, code to finite differences",
                    np.abs(c.grads[name][row] - fd).max(), np.abs(r.grads[name][row] - fd).max(), "gradient check")


__all__ = ["SLIPS", "LINES", "SlipDiff", "diff", "INVARIANTS", "SlipRun", "slipped", "run", "loss_of", "invariants",
           "gradient_gap", "cross_weight"]
