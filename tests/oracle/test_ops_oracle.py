"""Every byhand op against PyTorch autograd in float64: outputs and all gradients within 1e-9.

For each op: the same inputs go through byhand's forward and through torch (tensors with requires_grad);
one random upstream gradient goes through byhand's backward and through torch's ``backward(dout)``.
The tolerance is absolute for values of order 1 and relative where values are large.
"""
import math

import numpy as np
import pytest

from byhand.activations import gelu_backward, gelu_forward, relu_backward, relu_forward
from byhand.attention import attention_backward, attention_forward, causal_mask, padding_mask
from byhand.embedding import (
    embedding_backward,
    embedding_forward,
    positions_backward,
    positions_forward,
    sinusoidal_positions,
)
from byhand.layernorm import layernorm_backward, layernorm_forward, layernorm_jacobian
from byhand.linear import linear_backward, linear_forward, residual_backward, residual_forward
from byhand.loss import cross_entropy_backward, cross_entropy_forward
from byhand.mha import mha_backward, mha_forward
from byhand.softmax import log_softmax_backward, log_softmax_forward, softmax_backward, softmax_forward

TOL = 1e-9


def assert_close(ours, theirs, what):
    """max |ours - theirs| <= 1e-9 * max(1, max |theirs|), with the failing name and both values in the message."""
    a = np.asarray(ours, dtype=np.float64)
    b = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs, dtype=np.float64)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 0.0)
    assert err <= TOL * scale, f"{what}: max |byhand - torch| = {err:.3e} (scale {scale:.3g})\nbyhand {a}\ntorch  {b}"


def leaf(torch, a):
    return torch.tensor(a, requires_grad=True)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ---------------------------------------------------------------- linear, residual


@pytest.mark.parametrize("with_bias", [True, False])
def test_linear(torch, rng, with_bias):
    x, W, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)
    dy = rng.standard_normal((2, 3, 5))
    y, cache = linear_forward(x, W, b if with_bias else None)
    dx, dW, db = linear_backward(dy, cache)
    tx, tW, tb = leaf(torch, x), leaf(torch, W), leaf(torch, b)
    ty = tx @ tW + tb if with_bias else tx @ tW
    ty.backward(torch.tensor(dy))
    assert_close(y, ty, "linear y")
    assert_close(dx, tx.grad, "linear dx")
    assert_close(dW, tW.grad, "linear dW")
    if with_bias:
        assert_close(db, tb.grad, "linear db")
    else:
        assert db is None


def test_residual(torch, rng):
    x, y, dout = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    out, cache = residual_forward(x, y)
    dx, dy = residual_backward(dout, cache)
    tx, ty = leaf(torch, x), leaf(torch, y)
    tout = tx + ty
    tout.backward(torch.tensor(dout))
    assert_close(out, tout, "residual out")
    assert_close(dx, tx.grad, "residual dx")
    assert_close(dy, ty.grad, "residual dy")


# ---------------------------------------------------------------- embeddings and positions


def test_embedding_with_repeated_and_unused_tokens(torch, rng):
    V, d = 7, 4
    ids = np.array([[1, 3, 3, 0, 1], [3, 6, 1, 1, 0]])  # repeats accumulate; ids 2, 4, 5 are unused
    E = rng.standard_normal((V, d))
    dx = rng.standard_normal((2, 5, d))
    x, cache = embedding_forward(ids, E)
    dE = embedding_backward(dx, cache)
    tE = leaf(torch, E)
    tx = torch.nn.functional.embedding(torch.tensor(ids), tE)
    tx.backward(torch.tensor(dx))
    assert_close(x, tx, "embedding x")
    assert_close(dE, tE.grad, "embedding dE")


def test_learned_positions(torch, rng):
    T, T_max, d = 3, 6, 4
    P = rng.standard_normal((T_max, d))
    dpos = rng.standard_normal((2, T, d))  # a batch of 2: dP sums over it
    pos, cache = positions_forward(T, P)
    dP = positions_backward(dpos, cache)
    tP = leaf(torch, P)
    tpos = tP[:T].expand(2, T, d)
    tpos.backward(torch.tensor(dpos))
    assert_close(pos, tP[:T], "positions pos")
    assert_close(dP, tP.grad, "positions dP")


def test_sinusoidal_positions(torch):
    T, d = 7, 6
    pos = torch.arange(T).unsqueeze(1)  # (T, 1)
    div = torch.pow(torch.tensor(10000.0), torch.arange(0, d, 2) / d)  # (d/2,) 10000^(2i/d)
    pe = torch.zeros(T, d)
    pe[:, 0::2] = torch.sin(pos / div)
    pe[:, 1::2] = torch.cos(pos / div)
    assert_close(sinusoidal_positions(T, d), pe, "sinusoidal PE")


# ---------------------------------------------------------------- softmax, log-softmax


@pytest.mark.parametrize("masked", [False, True])
def test_softmax(torch, rng, masked):
    z = rng.standard_normal((2, 4, 4)) * 3
    dp = rng.standard_normal((2, 4, 4))
    mask = causal_mask(4) if masked else None
    p, cache = softmax_forward(z, mask=mask)
    dz = softmax_backward(dp, cache)
    tz = leaf(torch, z)
    logits = tz.masked_fill(~torch.tensor(mask), float("-inf")) if masked else tz
    tp = torch.softmax(logits, dim=-1)
    tp.backward(torch.tensor(dp))
    assert_close(p, tp, "softmax p")
    assert_close(dz, tz.grad, "softmax dz")
    if masked:
        assert np.all(p[..., ~mask] == 0.0) and np.all(dz[..., ~mask] == 0.0)


def test_softmax_along_axis_0(torch, rng):
    z, dp = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    p, cache = softmax_forward(z, axis=0)
    dz = softmax_backward(dp, cache)
    tz = leaf(torch, z)
    tp = torch.softmax(tz, dim=0)
    tp.backward(torch.tensor(dp))
    assert_close(p, tp, "softmax(axis=0) p")
    assert_close(dz, tz.grad, "softmax(axis=0) dz")


@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_log_softmax(torch, rng, scale):
    z = rng.standard_normal((3, 6)) * scale
    dlogp = rng.standard_normal((3, 6))
    logp, cache = log_softmax_forward(z)
    dz = log_softmax_backward(dlogp, cache)
    tz = leaf(torch, z)
    tlogp = torch.nn.functional.log_softmax(tz, dim=-1)
    tlogp.backward(torch.tensor(dlogp))
    assert_close(logp, tlogp, f"log_softmax logp (scale {scale})")
    assert_close(dz, tz.grad, f"log_softmax dz (scale {scale})")


# ---------------------------------------------------------------- cross-entropy


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_cross_entropy(torch, rng, reduction, label_smoothing, scale):
    V = 5
    logits = rng.standard_normal((2, 4, V)) * scale
    targets = np.array([[0, 4, -1, 2], [-1, 1, 1, 3]])  # two ignored positions
    dloss = 0.7  # a non-unit upstream gradient checks the scaling too
    loss, cache = cross_entropy_forward(logits, targets, label_smoothing=label_smoothing, reduction=reduction)
    dlogits = cross_entropy_backward(dloss, cache)
    tl = leaf(torch, logits)
    tloss = torch.nn.functional.cross_entropy(
        tl.reshape(-1, V), torch.tensor(targets).reshape(-1),
        ignore_index=-1, label_smoothing=label_smoothing, reduction=reduction)
    tloss.backward(torch.tensor(dloss))
    assert_close(loss, tloss, f"cross_entropy loss ({reduction}, eps {label_smoothing})")
    assert_close(dlogits, tl.grad, f"cross_entropy dlogits ({reduction}, eps {label_smoothing})")
    assert np.all(dlogits[targets == -1] == 0.0)


def test_cross_entropy_other_ignore_index(torch, rng):
    V = 4
    logits = rng.standard_normal((6, V))
    targets = np.array([0, 3, 9, 1, 9, 2])  # 9 is the ignore value here, not a vocabulary id
    loss, cache = cross_entropy_forward(logits, targets, label_smoothing=0.2, ignore_index=9)
    dlogits = cross_entropy_backward(1.0, cache)
    tl = leaf(torch, logits)
    tloss = torch.nn.functional.cross_entropy(tl, torch.tensor(targets), ignore_index=9, label_smoothing=0.2)
    tloss.backward()
    assert_close(loss, tloss, "cross_entropy loss (ignore_index 9)")
    assert_close(dlogits, tl.grad, "cross_entropy dlogits (ignore_index 9)")


# ---------------------------------------------------------------- layer norm


@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_layernorm(torch, rng, eps):
    D = 6
    x = rng.standard_normal((2, 3, D)) * 2 + 1
    gamma, beta = rng.standard_normal(D), rng.standard_normal(D)
    dy = rng.standard_normal((2, 3, D))
    y, cache = layernorm_forward(x, gamma, beta, eps=eps)
    dx, dgamma, dbeta = layernorm_backward(dy, cache)
    tx, tg, tb = leaf(torch, x), leaf(torch, gamma), leaf(torch, beta)
    ty = torch.nn.functional.layer_norm(tx, (D,), tg, tb, eps=eps)
    ty.backward(torch.tensor(dy))
    assert_close(y, ty, f"layernorm y (eps {eps})")
    assert_close(dx, tx.grad, f"layernorm dx (eps {eps})")
    assert_close(dgamma, tg.grad, f"layernorm dgamma (eps {eps})")
    assert_close(dbeta, tb.grad, f"layernorm dbeta (eps {eps})")


def test_layernorm_jacobian(torch, rng):
    D = 5
    x_row, gamma = rng.standard_normal(D), rng.standard_normal(D)
    J = layernorm_jacobian(x_row, gamma, 1e-5)
    tJ = torch.autograd.functional.jacobian(
        lambda v: torch.nn.functional.layer_norm(v, (D,), torch.tensor(gamma), None, eps=1e-5), torch.tensor(x_row))
    assert_close(J, tJ, "layernorm Jacobian")  # J[i, j] = dy_i / dx_j


# ---------------------------------------------------------------- activations


@pytest.mark.parametrize("approximate, torch_name", [("tanh", "tanh"), ("erf", "none")])
def test_gelu(torch, rng, approximate, torch_name):
    x = np.concatenate([rng.standard_normal(20) * 3, [0.0, -10.0, 10.0, 1e-3]])
    dy = rng.standard_normal(x.shape)
    y, cache = gelu_forward(x, approximate=approximate)
    dx = gelu_backward(dy, cache)
    tx = leaf(torch, x)
    ty = torch.nn.functional.gelu(tx, approximate=torch_name)
    ty.backward(torch.tensor(dy))
    assert_close(y, ty, f"gelu y ({approximate})")
    assert_close(dx, tx.grad, f"gelu dx ({approximate})")


def test_relu(torch, rng):
    x = np.concatenate([rng.standard_normal(10), [0.0, -0.0]])  # torch also gives gradient 0 at x = 0
    dy = rng.standard_normal(x.shape)
    y, cache = relu_forward(x)
    dx = relu_backward(dy, cache)
    tx = leaf(torch, x)
    ty = torch.relu(tx)
    ty.backward(torch.tensor(dy))
    assert_close(y, ty, "relu y")
    assert_close(dx, tx.grad, "relu dx")


# ---------------------------------------------------------------- attention


def _sdpa(torch, Q, K, V, mask):
    """Reference attention written with torch ops: softmax(Q K^T / sqrt(d_k), masked) V."""
    S = Q @ K.transpose(-1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        S = S.masked_fill(~torch.as_tensor(mask), float("-inf"))
    return torch.softmax(S, dim=-1) @ V


@pytest.mark.parametrize("kind", ["none", "causal", "padding"])
def test_attention(torch, rng, kind):
    B, h, T, d_k, d_v = 2, 3, 4, 5, 2
    Q, K = rng.standard_normal((B, h, T, d_k)), rng.standard_normal((B, h, T, d_k))
    V, dO = rng.standard_normal((B, h, T, d_v)), rng.standard_normal((B, h, T, d_v))
    mask = {"none": None, "causal": causal_mask(T),
            "padding": padding_mask(np.array([[1, 1, 1, 0], [1, 1, 0, 0]]))}[kind]
    O, cache = attention_forward(Q, K, V, mask=mask)
    dQ, dK, dV = attention_backward(dO, cache)
    tQ, tK, tV = leaf(torch, Q), leaf(torch, K), leaf(torch, V)
    tO = _sdpa(torch, tQ, tK, tV, mask)
    tO.backward(torch.tensor(dO))
    assert_close(O, tO, f"attention O ({kind})")
    assert_close(dQ, tQ.grad, f"attention dQ ({kind})")
    assert_close(dK, tK.grad, f"attention dK ({kind})")
    assert_close(dV, tV.grad, f"attention dV ({kind})")
    if kind == "causal":
        # a second, independent oracle: torch's own fused kernel
        ref = torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(Q), torch.tensor(K), torch.tensor(V), is_causal=True)
        assert_close(O, ref, "attention O vs scaled_dot_product_attention")


def _torch_mha(torch, x_q, x_kv, w, n_heads, mask):
    """Multi-head attention in torch ops: project, split heads, attend, merge, project."""
    def split(x):  # (B, T, d_model) -> (B, h, T, d_k)
        B, T, d = x.shape
        return x.reshape(B, T, n_heads, d // n_heads).transpose(1, 2)

    Q = split(x_q @ w["W_q"] + w["b_q"]) if "b_q" in w else split(x_q @ w["W_q"])
    K = split(x_kv @ w["W_k"] + w["b_k"]) if "b_k" in w else split(x_kv @ w["W_k"])
    V = split(x_kv @ w["W_v"] + w["b_v"]) if "b_v" in w else split(x_kv @ w["W_v"])
    O = _sdpa(torch, Q, K, V, mask)
    B, _, T_q, _ = O.shape
    O = O.transpose(1, 2).reshape(B, T_q, -1)
    return O @ w["W_o"] + w["b_o"] if "b_o" in w else O @ w["W_o"]


@pytest.mark.parametrize("kind", ["self_causal_bias", "cross_padding_nobias"])
def test_mha(torch, rng, kind):
    B, T_q, T_k, d, h = 2, 4, 3, 8, 2
    biases = kind.endswith("_bias")
    x_q = rng.standard_normal((B, T_q, d))
    x_kv = x_q if kind.startswith("self") else rng.standard_normal((B, T_k, d))
    mask = causal_mask(T_q) if kind.startswith("self") else padding_mask(np.array([[1, 1, 0], [1, 1, 1]]))
    w = {n: rng.standard_normal((d, d)) * 0.5 for n in ("W_q", "W_k", "W_v", "W_o")}
    if biases:
        w.update({n: rng.standard_normal(d) for n in ("b_q", "b_k", "b_v", "b_o")})
    dout = rng.standard_normal((B, T_q, d))
    out, cache = mha_forward(x_q, x_kv, n_heads=h, mask=mask, **w)
    grads = mha_backward(dout, cache)
    assert set(grads) == {"x_q", "x_kv"} | set(w)
    tw = {n: leaf(torch, a) for n, a in w.items()}
    tx_q = leaf(torch, x_q)
    tx_kv = tx_q if kind.startswith("self") else leaf(torch, x_kv)
    tout = _torch_mha(torch, tx_q, tx_kv, tw, h, mask)
    tout.backward(torch.tensor(dout))
    assert_close(out, tout, f"mha out ({kind})")
    for n in w:
        assert_close(grads[n], tw[n].grad, f"mha d{n} ({kind})")
    if kind.startswith("self"):  # the same x feeds queries, keys and values: its gradient is the sum
        assert_close(grads["x_q"] + grads["x_kv"], tx_q.grad, f"mha dx ({kind})")
    else:
        assert_close(grads["x_q"], tx_q.grad, f"mha dx_q ({kind})")
        assert_close(grads["x_kv"], tx_kv.grad, f"mha dx_kv ({kind})")
