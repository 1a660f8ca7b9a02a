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


__all__ = ["SLIPS", "INVARIANTS", "SlipRun", "slipped", "run", "loss_of", "invariants", "gradient_gap",
           "cross_weight"]
