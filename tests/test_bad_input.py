"""Bad input at every public entry point is a ValueError whose message names the problem.

One table, ``CASES``, sweeps the entry points against the kinds of bad input:

    type      a wrong Python type (a list for a params dict, a string for an array, a float for an id)
    shape     a wrong shape (a missing axis, a mismatched width, 3-D ids)
    empty     an empty sequence or array
    nonfinite NaN or inf in an array (or a number)
    id        a token id (or target) outside the vocabulary
    value     another value outside its range (eps < 0, lr < 0, an unknown option)
    long      a sequence longer than the context (T_max, max_len)

Each row asserts ``ValueError`` and a ``match=`` fragment that names the argument and the problem. A kind that
does not apply to an entry point (an out-of-range id for layer norm, a context for softmax) is left out, so
the table shows what each entry point can be given wrongly. ``test_every_public_entry_point_is_swept`` keeps
the table complete: a new public function of a swept module fails it until it has rows (or a reason below).

Entry points covered (module: functions):

    softmax     softmax_forward, softmax_backward, log_softmax_forward, log_softmax_backward
    layernorm   layernorm_forward, layernorm_backward, layernorm_jacobian
    linear      linear_forward, linear_backward, residual_forward, residual_backward
    embedding   embedding_forward, embedding_backward, positions_forward, positions_backward,
                sinusoidal_divisors, sinusoidal_positions
    activations gelu_forward, gelu_backward, relu_forward, relu_backward
    attention   causal_mask, padding_mask, attention_forward, attention_backward, attention_backward_traced
    mha         split_heads, merge_heads, mha_forward, mha_backward, mha_backward_traced
    gpt         GPTConfig, gpt_param_shapes, init_gpt_params, gpt_forward, gpt_backward, gpt_loss_and_grads
    encdec      EncDecConfig, encdec_param_shapes, init_encdec_params, encdec_forward, encdec_forward_embedded,
                encdec_backward, encdec_loss_and_grads
    loss        cross_entropy_forward, cross_entropy_backward, smoothed_target, smoothing_loss
    optim       SGDConfig, AdamConfig, AdamWConfig, init_state, sgd_step, adam_step, adamw_step, warmup_lr,
                cosine_lr, clip_grad_norm
    gradcheck   numerical_grads, gradcheck
    ioi         tokenize, Vocab, Vocab.encode, Vocab.decode, name_pairs, generate, encode_batch, evaluate,
                next_word_probs, load_model
    gpt2        config_from_hf, hf_param_shapes, params_from_hf, params_to_hf
    toy_gpt     tokenize, detokenize, toy_batch, toy_params, toy_loss_and_grads, param_table

Not swept, with the reason (``NOT_SWEPT``): records that take no input to check (OptState, GradcheckRow,
GradcheckReport, IOISentence, HFTokenizer), functions without arguments (build_vocab, default_gpt2_dir), and the
file and network functions, whose failures are FileNotFoundError or ImportError and are tested in test_gpt2.py
(load_gpt2, load_tokenizer, gpt2_files_present, download_gpt2). The backward functions take the cache of their
forward; only the gradient argument is swept, since a cache is not something a reader builds by hand.

The last tests check that the fixes for the listed problems keep ordinary inputs exact: softmax, log-softmax
and the loss stay finite for logits of ±1e4, and layer norm of rows near 1e154 normalises instead of
returning beta.
"""
import importlib
import inspect

import numpy as np
import pytest

from byhand import activations, attention, embedding, encdec, gpt, gpt2, gradcheck, ioi, layernorm, linear, loss, mha
from byhand import display, optim, softmax, toy_gpt

RNG = np.random.default_rng(0)
NAN, INF = np.nan, np.inf

# ---- small fixtures: one of each model, and the caches the backward functions take ------------------------------
CFG = gpt.GPTConfig(vocab_size=7, context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16)
P = gpt.init_gpt_params(CFG)
IDS, TARGETS = np.array([[1, 2, 3], [4, 5, 6]]), np.array([[2, 3, 4], [5, 6, -1]])
LOGITS, G_CACHE = gpt.gpt_forward(P, IDS, CFG)

ECFG = encdec.EncDecConfig(src_vocab=5, tgt_vocab=6, d_model=4, n_heads=2, d_ff=8, max_len=4)
EP = encdec.init_encdec_params(ECFG)
SRC, TGT_IN, TGT_OUT = np.array([[1, 2, 3]]), np.array([[0, 1, 2]]), np.array([[1, 2, 3]])
E_LOGITS, E_CACHE = encdec.encdec_forward(EP, SRC, TGT_IN, ECFG)
X_SRC, X_TGT = RNG.standard_normal((3, 4)), RNG.standard_normal((2, 4))

Z = RNG.standard_normal((2, 3))
_, SM_CACHE = softmax.softmax_forward(Z)
_, LSM_CACHE = softmax.log_softmax_forward(Z)
X = RNG.standard_normal((2, 3))
G3, B3 = np.ones(3), np.zeros(3)
_, LN_CACHE = layernorm.layernorm_forward(X, G3, B3)
W = RNG.standard_normal((3, 4))
_, LIN_CACHE = linear.linear_forward(X, W, np.zeros(4))
_, RES_CACHE = linear.residual_forward(X, X)
E = RNG.standard_normal((5, 3))
_, EMB_CACHE = embedding.embedding_forward(np.array([0, 1, 4]), E)
POS = RNG.standard_normal((4, 3))
_, POS_CACHE = embedding.positions_forward(3, POS)
_, GELU_CACHE = activations.gelu_forward(X)
_, RELU_CACHE = activations.relu_forward(X)
Q = RNG.standard_normal((2, 3, 4))  # (h, T, d_k)
_, ATT_CACHE = attention.attention_forward(Q, Q, Q)
XM = RNG.standard_normal((3, 4))  # (T, d_model)
WM = {w: RNG.standard_normal((4, 4)) for w in ("W_q", "W_k", "W_v", "W_o")}
_, MHA_CACHE = mha.mha_forward(XM, XM, *WM.values(), 2)
_, CE_CACHE = loss.cross_entropy_forward(Z, np.array([0, 2]))

OPT_P, OPT_G = {"W": np.ones((2, 2))}, {"W": np.full((2, 2), 0.5)}
OPT_S = optim.init_state(OPT_P)
SGD, ADAM, ADAMW = optim.SGDConfig(lr=0.1), optim.AdamConfig(), optim.AdamWConfig()


def _f(p):
    """A scalar function of params for the gradient checker."""
    return float(np.sum(p["W"] ** 2))


VOCAB = ioi.build_vocab()
ICFG = gpt.GPTConfig(vocab_size=len(VOCAB), context=12, d_model=8, n_heads=2, n_layers=1, d_ff=16)
IP = gpt.init_gpt_params(ICFG)
ICFG4 = gpt.GPTConfig(vocab_size=len(VOCAB), context=4, d_model=8, n_heads=2, n_layers=1, d_ff=16)
IP4 = gpt.init_gpt_params(ICFG4)
SENTENCES = ioi.generate(2, seed=0)
HF = gpt2.params_to_hf(P, CFG)
HF_CFG = {"model_type": "gpt2", "vocab_size": 7, "n_positions": 4, "n_embd": 8, "n_layer": 1, "n_head": 2}
TOY = toy_gpt.toy_params()


def _with(params: dict, name: str, value) -> dict:
    """params with one entry replaced."""
    return {**params, name: value}


def _nan_at(a) -> np.ndarray:
    """A float copy of ``a`` with its first entry NaN."""
    a = np.array(a, dtype=np.float64)
    a.flat[0] = NAN
    return a


CASES = []


def rows(entry: str, *table):
    """Add the rows of one entry point: each (kind, call, message fragment)."""
    for kind, call, match in table:
        n = sum(1 for c in CASES if c.id.startswith(f"{entry}-{kind}"))
        CASES.append(pytest.param(entry, kind, call, match, id=f"{entry}-{kind}" + (f"{n + 1}" if n else "")))


def gradient_rows(entry: str, backward, cache, grad, arg: str, wrong, shape_match: str, bad_type="abc"):
    """The three rows of a backward function: its gradient argument ``arg`` of a wrong type, of a wrong shape
    (``wrong``) and holding NaN (``grad`` with a NaN in it)."""
    rows(entry,
         ("type", lambda: backward(bad_type, cache), f"{arg} must be numeric"),
         ("shape", lambda: backward(wrong, cache), shape_match),
         ("nonfinite", lambda: backward(_nan_at(grad), cache), f"{arg} contains NaN or inf"))


# ---- softmax ------------------------------------------------------------------------------------------------------
rows("softmax_forward",
     ("type", lambda: softmax.softmax_forward("abc"), r"z must be numeric, got dtype <U3"),
     ("type", lambda: softmax.softmax_forward(Z, mask=np.ones((2, 3), dtype=int)), "mask must be a boolean array"),
     ("shape", lambda: softmax.softmax_forward(np.float64(1.0)), "at least one axis, got a scalar"),
     ("shape", lambda: softmax.softmax_forward(Z, mask=np.ones(4, bool)), r"mask of shape \(4,\) does not broadcast"),
     ("shape", lambda: softmax.softmax_forward(Z, axis=2), r"axis 2 is out of range for an array of shape \(2, 3\)"),
     ("empty", lambda: softmax.softmax_forward(np.zeros((2, 0))), "softmax over an empty axis"),
     ("nonfinite", lambda: softmax.softmax_forward([1.0, NAN]), r"z contains NaN or inf \(nan at index \(1,\)\)"),
     ("nonfinite", lambda: softmax.softmax_forward([1.0, -INF]), r"z contains NaN or inf \(-inf at index \(1,\)\): for masked positions pass mask="),
     ("value", lambda: softmax.softmax_forward(Z, mask=np.zeros((2, 3), bool)), "every entry masked"))
gradient_rows("softmax_backward", softmax.softmax_backward, SM_CACHE, Z, "dp", np.ones(3),
              r"dp must have the shape of p \(2, 3\)", bad_type=None)
rows("softmax_forward",
     ("type", lambda: softmax.softmax_forward(np.array([True, False])), "z must be numbers, got dtype bool"))
rows("softmax_backward",
     ("type", lambda: softmax.softmax_backward(Z, None),
      r"cache must be the cache softmax_forward returned \(a dict with p, axis\), got NoneType"))
rows("log_softmax_backward",
     ("type", lambda: softmax.log_softmax_backward(Z, {"p": Z}), "cache must be the cache log_softmax_forward returned"))
rows("log_softmax_forward",
     ("type", lambda: softmax.log_softmax_forward([["a", "b"]]), "z must be numeric"),
     ("shape", lambda: softmax.log_softmax_forward(3.0), "at least one axis"),
     ("empty", lambda: softmax.log_softmax_forward([]), "empty axis"),
     ("nonfinite", lambda: softmax.log_softmax_forward([0.0, INF]), r"z contains NaN or inf \(inf at index \(1,\)\)"))
gradient_rows("log_softmax_backward", softmax.log_softmax_backward, LSM_CACHE, Z, "dlogp", Z.T,
              r"dlogp must have the shape of logp \(2, 3\)")

# ---- layer norm ---------------------------------------------------------------------------------------------------
rows("layernorm_forward",
     ("type", lambda: layernorm.layernorm_forward("x", G3, B3), "x must be numeric"),
     ("type", lambda: layernorm.layernorm_forward(X, None, B3), "gamma must be numeric, got NoneType"),
     ("shape", lambda: layernorm.layernorm_forward(X, np.ones(4), B3), "gamma must have last dimension d_model = 3"),
     ("shape", lambda: layernorm.layernorm_forward(X, G3, np.zeros((1, 3))), "beta must have 1 dimensions"),
     ("empty", lambda: layernorm.layernorm_forward(np.zeros((2, 0)), [], []), "non-empty last axis"),
     ("nonfinite", lambda: layernorm.layernorm_forward(_nan_at(X), G3, B3), "x contains NaN or inf"),
     ("nonfinite", lambda: layernorm.layernorm_forward(X, [1.0, INF, 1.0], B3), "gamma contains NaN or inf"),
     ("type", lambda: layernorm.layernorm_forward(X, G3, None), "beta must be numeric, got NoneType"),
     ("type", lambda: layernorm.layernorm_forward(X, G3, B3, eps="1e-5"), "eps must be >= 0, got '1e-5'"),
     ("value", lambda: layernorm.layernorm_forward(X, G3, B3, eps=-1.0), "eps must be >= 0"),
     ("value", lambda: layernorm.layernorm_forward(np.ones((2, 3)), G3, B3, eps=0.0), "zero variance and eps = 0"))
gradient_rows("layernorm_backward", layernorm.layernorm_backward, LN_CACHE, X, "dy", np.ones(3), r"dy must have shape \(2, 3\)")
rows("layernorm_jacobian",
     ("type", lambda: layernorm.layernorm_jacobian(None, G3), "x_row must be numeric"),
     ("shape", lambda: layernorm.layernorm_jacobian(X, G3), "x_row must have 1 dimensions"),
     ("empty", lambda: layernorm.layernorm_jacobian([], []), "non-empty last axis"),
     ("nonfinite", lambda: layernorm.layernorm_jacobian([1.0, NAN, 2.0], G3), "x_row contains NaN or inf"),
     ("value", lambda: layernorm.layernorm_jacobian(X[0], G3, eps=NAN), "eps must be >= 0"))

# ---- linear and residual ------------------------------------------------------------------------------------------
rows("linear_forward",
     ("type", lambda: linear.linear_forward(X, "W"), "W must be numeric"),
     ("shape", lambda: linear.linear_forward(X, W.T), "x must have last dimension d_in = 4"),
     ("shape", lambda: linear.linear_forward(X, W, np.zeros(3)), "b must have last dimension d_out = 4"),
     ("empty", lambda: linear.linear_forward(np.zeros((2, 0)), np.zeros((0, 4))), r"W is empty, got shape \(0, 4\)"),
     ("nonfinite", lambda: linear.linear_forward(X, _nan_at(W)), "W contains NaN or inf"))
gradient_rows("linear_backward", linear.linear_backward, LIN_CACHE, np.ones((2, 4)), "dy", np.ones((2, 3)),
              r"dy must have shape \(2, 4\)", bad_type=[None])
rows("residual_forward",
     ("type", lambda: linear.residual_forward(X, "y"), "y must be numeric"),
     ("shape", lambda: linear.residual_forward(X, X[0]), r"residual inputs must have the same shape, got x \(2, 3\)"),
     ("nonfinite", lambda: linear.residual_forward(_nan_at(X), X), "x contains NaN or inf"))
gradient_rows("residual_backward", linear.residual_backward, RES_CACHE, X, "dout", X.T, r"dout must have shape \(2, 3\)")

# ---- embeddings and positions -------------------------------------------------------------------------------------
rows("embedding_forward",
     ("type", lambda: embedding.embedding_forward([0.0, 1.0], E), "ids must be integer token ids, got dtype float64"),
     ("type", lambda: embedding.embedding_forward([[0, 1], [2]], E), "ids must be a rectangular array"),
     ("shape", lambda: embedding.embedding_forward([0], E[0]), "E must have 2 dimensions"),
     ("empty", lambda: embedding.embedding_forward([], E), "ids is an empty sequence"),
     ("nonfinite", lambda: embedding.embedding_forward([0], _nan_at(E)), "E contains NaN or inf"),
     ("id", lambda: embedding.embedding_forward([0, 5], E), r"ids has token id 5 outside the vocabulary \[0, 5\)"),
     ("id", lambda: embedding.embedding_forward([-1], E), r"ids has token id -1 outside the vocabulary"))
gradient_rows("embedding_backward", embedding.embedding_backward, EMB_CACHE, np.ones((3, 3)), "dx", np.ones((2, 3)),
              r"dx must have shape \(3, 3\)")
rows("positions_forward",
     ("type", lambda: embedding.positions_forward(2.0, POS), "T must be an integer"),
     ("shape", lambda: embedding.positions_forward(2, POS[0]), "P must have 2 dimensions"),
     ("empty", lambda: embedding.positions_forward(0, POS), "T = 0: a sequence needs at least one token"),
     ("nonfinite", lambda: embedding.positions_forward(2, _nan_at(POS)), "P contains NaN or inf"),
     ("long", lambda: embedding.positions_forward(5, POS), "T = 5 tokens is longer than the T_max = 4"))
gradient_rows("positions_backward", embedding.positions_backward, POS_CACHE, np.ones((3, 3)), "dpos", np.ones((4, 3)),
              r"dpos must have shape \(\.\.\., 3, 3\)")
rows("sinusoidal_divisors",
     ("type", lambda: embedding.sinusoidal_divisors(4.0), "d_model must be a positive even integer"),
     ("value", lambda: embedding.sinusoidal_divisors(5), "d_model must be a positive even integer .*got 5"),
     ("nonfinite", lambda: embedding.sinusoidal_divisors(4, base=NAN), "base must be positive"))
rows("sinusoidal_positions",
     ("type", lambda: embedding.sinusoidal_positions("3", 4), "T must be a positive integer"),
     ("empty", lambda: embedding.sinusoidal_positions(0, 4), "T must be a positive integer .*got 0"),
     ("value", lambda: embedding.sinusoidal_positions(3, 3), "d_model must be a positive even integer"))

# ---- activations --------------------------------------------------------------------------------------------------
rows("gelu_forward",
     ("type", lambda: activations.gelu_forward({"x": 1}), "x must be numeric, got dict"),
     ("nonfinite", lambda: activations.gelu_forward([0.0, NAN]), "x contains NaN or inf"),
     ("value", lambda: activations.gelu_forward(X, approximate="none"), "unknown GELU form 'none'"))
gradient_rows("gelu_backward", activations.gelu_backward, GELU_CACHE, X, "dy", np.ones(3), r"dy must have shape \(2, 3\)")
rows("relu_forward",
     ("type", lambda: activations.relu_forward(None), "x must be numeric"),
     ("nonfinite", lambda: activations.relu_forward([INF]), "x contains NaN or inf"))
gradient_rows("relu_backward", activations.relu_backward, RELU_CACHE, X, "dy", np.ones(2), r"dy must have shape \(2, 3\)")

# ---- attention ----------------------------------------------------------------------------------------------------
rows("causal_mask",
     ("type", lambda: attention.causal_mask(3.0), "positive integer length T, got 3.0"),
     ("empty", lambda: attention.causal_mask(0), "positive integer length T, got 0"))
rows("padding_mask",
     ("type", lambda: attention.padding_mask([[0.5, 1.0]]), "valid must be a boolean or 0/1 array"),
     ("shape", lambda: attention.padding_mask([True, False]), r"valid must have 2 dimensions \(B, T_k\)"),
     ("empty", lambda: attention.padding_mask(np.zeros((1, 0), bool)), "valid is an empty sequence"),
     ("value", lambda: attention.padding_mask([[False, False]]), "no real token"))
rows("attention_forward",
     ("type", lambda: attention.attention_forward(Q, Q, "V"), "V must be numeric"),
     ("shape", lambda: attention.attention_forward(Q, Q[..., :2], Q), "Q and K must have the same width d_k"),
     ("shape", lambda: attention.attention_forward(Q[0, 0], Q, Q), "need at least 2 dimensions"),
     ("empty", lambda: attention.attention_forward(Q[:, :0], Q, Q), "attention over an empty sequence"),
     ("nonfinite", lambda: attention.attention_forward(_nan_at(Q), Q, Q), "Q contains NaN or inf"))
for name in ("attention_backward", "attention_backward_traced"):
    gradient_rows(name, getattr(attention, name), ATT_CACHE, Q, "dO", Q[0], r"dO must have shape \(2, 3, 4\)")

# ---- multi-head attention -----------------------------------------------------------------------------------------
rows("split_heads",
     ("type", lambda: mha.split_heads([["a", "b"]], 1), "x must be numeric"),
     ("shape", lambda: mha.split_heads(np.ones(4), 2), "split_heads needs"),
     ("value", lambda: mha.split_heads(XM, 3), "n_heads = 3 does not divide d_model = 4"),
     ("type", lambda: mha.split_heads(XM, 2.0), "n_heads must be a positive integer"))
rows("merge_heads",
     ("type", lambda: mha.merge_heads("abc"), "x must be numeric"),
     ("shape", lambda: mha.merge_heads(XM), "merge_heads needs"))
rows("mha_forward",
     ("type", lambda: mha.mha_forward(XM, XM, "W", *list(WM.values())[1:], 2), "W_q must have shape"),
     ("shape", lambda: mha.mha_forward(XM, XM[:, :2], *WM.values(), 2), "x_kv must have last dimension"),
     ("shape", lambda: mha.mha_forward(XM[0], XM, *WM.values(), 2), "x_q must have"),
     ("empty", lambda: mha.mha_forward(XM[:0], XM, *WM.values(), 2), "attention over an empty sequence"),
     ("nonfinite", lambda: mha.mha_forward(_nan_at(XM), XM, *WM.values(), 2), "x_q contains NaN or inf"),
     ("value", lambda: mha.mha_forward(XM, XM, *WM.values(), 3), "n_heads = 3 does not divide d_model = 4"))
for name in ("mha_backward", "mha_backward_traced"):
    gradient_rows(name, getattr(mha, name), MHA_CACHE, XM, "dout", np.ones((3, 3)), r"dout must have shape \(3, 4\)")

# ---- the GPT ------------------------------------------------------------------------------------------------------
rows("GPTConfig",
     ("type", lambda: gpt.GPTConfig(7, 4, "8", 2, 1, 16), "GPTConfig.d_model must be a positive integer"),
     ("value", lambda: gpt.GPTConfig(7, 4, 8, 3, 1, 16), "n_heads = 3 does not divide d_model = 8"),
     ("value", lambda: gpt.GPTConfig(0, 4, 8, 2, 1, 16), "GPTConfig.vocab_size must be a positive integer, got 0"),
     ("nonfinite", lambda: gpt.GPTConfig(7, 4, 8, 2, 1, 16, ln_eps=NAN), "ln_eps must be >= 0"))
rows("gpt_param_shapes",
     ("type", lambda: gpt.gpt_param_shapes({"vocab_size": 7}), "config must be a GPTConfig, got dict"))
rows("init_gpt_params",
     ("type", lambda: gpt.init_gpt_params(ECFG), "config must be a GPTConfig, got EncDecConfig"),
     ("type", lambda: gpt.init_gpt_params(CFG, seed="0"), "seed must be an integer >= 0"),
     ("type", lambda: gpt.init_gpt_params(CFG, dtype="int"), "dtype must be float32 or float64"),
     ("nonfinite", lambda: gpt.init_gpt_params(CFG, std=NAN), r"std must be >= 0 \(a finite number\), got nan"))
rows("gpt_forward",
     ("type", lambda: gpt.gpt_forward(list(P.values()), IDS, CFG), "params must be a dict of name -> array, got list"),
     ("type", lambda: gpt.gpt_forward(P, IDS * 1.0, CFG), "ids must be integer token ids, got dtype float64"),
     ("type", lambda: gpt.gpt_forward(P, IDS, ECFG), "config must be a GPTConfig, got EncDecConfig"),
     ("shape", lambda: gpt.gpt_forward(P, np.ones((2, 2, 1), int), CFG),
      r"ids must have shape \(T,\) or \(B, T\), got \(2, 2, 1\)"),
     ("shape", lambda: gpt.gpt_forward(P, IDS[None], CFG), r"ids must have shape \(T,\) or \(B, T\)"),
     ("shape", lambda: gpt.gpt_forward(_with(P, "E", P["E"][:5]), IDS, CFG), r"parameter E must have shape \(7, 8\)"),
     ("empty", lambda: gpt.gpt_forward(P, [], CFG), r"ids is an empty sequence \(shape \(0,\)\)"),
     ("empty", lambda: gpt.gpt_forward(P, np.zeros((2, 0), int), CFG), "ids is an empty sequence"),
     ("nonfinite", lambda: gpt.gpt_forward(_with(P, "ln_f.gamma", _nan_at(P["ln_f.gamma"])), IDS, CFG),
      r"parameter ln_f.gamma contains NaN or inf \(nan at index \(0,\)\)"),
     ("id", lambda: gpt.gpt_forward(P, [1, 7], CFG), r"ids has token id 7 outside the vocabulary \[0, 7\)"),
     ("long", lambda: gpt.gpt_forward(P, np.arange(5), CFG), "ids has 5 tokens, longer than the context of 4"))
gradient_rows("gpt_backward", gpt.gpt_backward, G_CACHE, LOGITS, "dlogits", LOGITS[0],
              r"dlogits must have the shape of the logits \(2, 3, 7\)")
rows("gpt_loss",
     ("type", lambda: gpt.gpt_loss(P, IDS, CFG), r"batch must be a pair \(ids, targets\)"),
     ("shape", lambda: gpt.gpt_loss(P, (IDS, TARGETS[:, :2]), CFG), "targets must have the shape of ids"),
     ("empty", lambda: gpt.gpt_loss(P, (IDS, np.full_like(IDS, -1)), CFG), "no counted positions"),
     ("id", lambda: gpt.gpt_loss(P, (IDS, TARGETS + 2), CFG), r"target 7 is out of range \[0, 7\)"),
     ("long", lambda: gpt.gpt_loss(P, (np.ones((1, 5), int), np.ones((1, 5), int)), CFG), "longer than the context"),
     ("value", lambda: gpt.gpt_loss(P, (IDS, TARGETS), CFG, label_smoothing=1.0), r"label_smoothing must be in \[0, 1\)"))
rows("gpt_loss_and_grads",
     ("type", lambda: gpt.gpt_loss_and_grads(list(P.items()), (IDS, TARGETS), CFG), "params must be a dict"),
     ("type", lambda: gpt.gpt_loss_and_grads(P, IDS, CFG), r"batch must be a pair \(ids, targets\)"),
     ("type", lambda: gpt.gpt_loss_and_grads(P, (IDS, TARGETS * 1.0), CFG), "targets must be integer class ids"),
     ("shape", lambda: gpt.gpt_loss_and_grads(P, (IDS, TARGETS[:, :2]), CFG), "targets must have the shape of ids"),
     ("shape", lambda: gpt.gpt_loss_and_grads(P, (IDS[None], TARGETS[None]), CFG),
      r"ids must have shape \(T,\) or \(B, T\)"),
     ("empty", lambda: gpt.gpt_loss_and_grads(P, ([], []), CFG), "ids is an empty sequence"),
     ("empty", lambda: gpt.gpt_loss_and_grads(P, (IDS, np.full_like(IDS, -1)), CFG), "no counted positions"),
     ("nonfinite", lambda: gpt.gpt_loss_and_grads(_with(P, "P", _nan_at(P["P"])), (IDS, TARGETS), CFG),
      "parameter P contains NaN or inf"),
     ("id", lambda: gpt.gpt_loss_and_grads(P, (IDS, TARGETS + 2), CFG), r"target 7 is out of range \[0, 7\)"),
     ("id", lambda: gpt.gpt_loss_and_grads(P, (IDS + 2, TARGETS), CFG), "ids has token id 7 outside the vocabulary"),
     ("long", lambda: gpt.gpt_loss_and_grads(P, (np.ones((1, 5), int), np.ones((1, 5), int)), CFG),
      "ids has 5 tokens, longer than the context of 4"),
     ("value", lambda: gpt.gpt_loss_and_grads(P, (IDS, TARGETS), CFG, label_smoothing=1.0),
      r"label_smoothing must be in \[0, 1\)"))

# ---- the 2017 encoder-decoder -------------------------------------------------------------------------------------
rows("EncDecConfig",
     ("type", lambda: encdec.EncDecConfig(5, 6, 4.0, 2, 8), "EncDecConfig.d_model must be a positive integer"),
     ("value", lambda: encdec.EncDecConfig(5, 6, 4, 3, 8), "n_heads = 3 does not divide d_model = 4"),
     ("nonfinite", lambda: encdec.EncDecConfig(5, 6, 4, 2, 8, ln_eps=-INF), "ln_eps must be >= 0"))
rows("encdec_param_shapes",
     ("type", lambda: encdec.encdec_param_shapes(CFG), "config must be an EncDecConfig, got GPTConfig"))
rows("init_encdec_params",
     ("type", lambda: encdec.init_encdec_params(None), "config must be an EncDecConfig, got NoneType"),
     ("type", lambda: encdec.init_encdec_params(ECFG, seed=1.5), "seed must be an integer >= 0"),
     ("type", lambda: encdec.init_encdec_params(ECFG, dtype=np.int64), "dtype must be float32 or float64, got int64"))
rows("encdec_forward",
     ("type", lambda: encdec.encdec_forward(list(EP.values()), SRC, TGT_IN, ECFG), "params must be a dict"),
     ("type", lambda: encdec.encdec_forward(EP, SRC * 1.0, TGT_IN, ECFG), "src_ids must be integer token ids"),
     ("type", lambda: encdec.encdec_forward(EP, SRC, TGT_IN, CFG), "config must be an EncDecConfig, got GPTConfig"),
     ("shape", lambda: encdec.encdec_forward(EP, SRC.T, TGT_IN, ECFG), r"src_ids and tgt_ids must have the same batch size, got shapes \(3, 1\) and \(1, 3\)"),
     ("shape", lambda: encdec.encdec_forward(EP, SRC, TGT_IN[None], ECFG), r"tgt_ids must have shape \(T,\) or \(B, T\)"),
     ("shape", lambda: encdec.encdec_forward(EP, SRC, TGT_IN, ECFG, src_valid=[[True]]), "src_valid must have shape"),
     ("empty", lambda: encdec.encdec_forward(EP, [], TGT_IN, ECFG), "src_ids is an empty sequence"),
     ("nonfinite", lambda: encdec.encdec_forward(_with(EP, "b_out", _nan_at(EP["b_out"])), SRC, TGT_IN, ECFG),
      "parameter b_out contains NaN or inf"),
     ("id", lambda: encdec.encdec_forward(EP, SRC, TGT_IN + 4, ECFG), r"tgt_ids has token id 6 outside the vocabulary \[0, 6\)"),
     ("long", lambda: encdec.encdec_forward(EP, np.ones((1, 5), int), TGT_IN, ECFG),
      "src_ids has 5 tokens, longer than max_len = 4"))
rows("encdec_forward_embedded",
     ("type", lambda: encdec.encdec_forward_embedded(EP, "X", X_TGT, ECFG), "X_src must be numeric"),
     ("type", lambda: encdec.encdec_forward_embedded(tuple(EP), X_SRC, X_TGT, ECFG), "params must be a dict of name -> array, got tuple"),
     ("shape", lambda: encdec.encdec_forward_embedded(EP, X_SRC, X_TGT[:, :3], ECFG), "X_tgt must have last dimension d_model = 4"),
     ("shape", lambda: encdec.encdec_forward_embedded(EP, X_SRC[None], X_TGT, ECFG), "X_src and X_tgt must have the same batch axes"),
     ("empty", lambda: encdec.encdec_forward_embedded(EP, X_SRC[:0], X_TGT, ECFG), "X_src is an empty sequence"),
     ("nonfinite", lambda: encdec.encdec_forward_embedded(EP, X_SRC, _nan_at(X_TGT), ECFG), "X_tgt contains NaN or inf"),
     ("long", lambda: encdec.encdec_forward_embedded(EP, np.ones((5, 4)), X_TGT, ECFG), "X_src has 5 tokens, longer than max_len = 4"))
gradient_rows("encdec_backward", encdec.encdec_backward, E_CACHE, E_LOGITS, "dlogits", E_LOGITS[0],
              r"dlogits must have the shape of the logits \(1, 3, 6\)", bad_type=None)
rows("encdec_loss_and_grads",
     ("type", lambda: encdec.encdec_loss_and_grads(list(EP.items()), (SRC, TGT_IN, TGT_OUT), ECFG), "params must be a dict"),
     ("type", lambda: encdec.encdec_loss_and_grads(EP, (SRC, TGT_IN), ECFG), "batch must be a triple"),
     ("shape", lambda: encdec.encdec_loss_and_grads(EP, (SRC, TGT_IN, TGT_OUT[:, :2]), ECFG),
      "tgt_out_ids must have the shape of tgt_in_ids"),
     ("empty", lambda: encdec.encdec_loss_and_grads(EP, (SRC, np.zeros((1, 0), int), np.zeros((1, 0), int)), ECFG),
      "tgt_ids is an empty sequence"),
     ("nonfinite", lambda: encdec.encdec_loss_and_grads(_with(EP, "E_src", _nan_at(EP["E_src"])), (SRC, TGT_IN, TGT_OUT), ECFG),
      "parameter E_src contains NaN or inf"),
     ("id", lambda: encdec.encdec_loss_and_grads(EP, (SRC, TGT_IN, TGT_OUT + 3), ECFG), r"target 6 is out of range \[0, 6\)"),
     ("long", lambda: encdec.encdec_loss_and_grads(EP, (SRC, np.ones((1, 5), int), np.ones((1, 5), int)), ECFG),
      "tgt_ids has 5 tokens, longer than max_len = 4"))

# ---- loss ---------------------------------------------------------------------------------------------------------
rows("cross_entropy_forward",
     ("type", lambda: loss.cross_entropy_forward(Z, [0.0, 1.0]), "targets must be integer class ids, got dtype float64"),
     ("type", lambda: loss.cross_entropy_forward("z", [0]), "logits must be numeric"),
     ("shape", lambda: loss.cross_entropy_forward(Z, [0, 1, 2]), r"targets must have shape \(2,\) \(logits without V\)"),
     ("empty", lambda: loss.cross_entropy_forward(np.zeros((2, 0)), [0, 1]), "logits must have a non-empty last axis V"),
     ("empty", lambda: loss.cross_entropy_forward(Z, [-1, -1]), "no counted positions"),
     ("nonfinite", lambda: loss.cross_entropy_forward(_nan_at(Z), [0, 1]), "logits contains NaN or inf"),
     ("id", lambda: loss.cross_entropy_forward(Z, [0, 3]), r"target 3 is out of range \[0, 3\)"),
     ("value", lambda: loss.cross_entropy_forward(Z, [0, 1], reduction="avg"), "unknown reduction 'avg'"),
     ("value", lambda: loss.cross_entropy_forward(Z, [0, 1], label_smoothing="0.1"), r"label_smoothing must be in \[0, 1\)"))
rows("smoothed_target",
     ("type", lambda: loss.smoothed_target("1", 4, 0.1), "target must be an integer >= 0, got '1'"),
     ("type", lambda: loss.smoothed_target(1, 4, "0.1"), "eps must be in"),
     ("nonfinite", lambda: loss.smoothed_target(1, 4, NAN), r"eps must be in \[0, 1\), got nan"),
     ("id", lambda: loss.smoothed_target(4, 4, 0.1), r"target 4 is out of range \[0, 4\)"),
     ("id", lambda: loss.smoothed_target(1, 4, 0.1, "annotated", pad=1), "'annotated' needs a padding column"),
     ("value", lambda: loss.smoothed_target(0, 1, 0.1, "tensor2tensor"), "V must be an integer >= 2, got 1"),
     ("value", lambda: loss.smoothed_target(0, 4, 0.1, "keras"), "unknown label-smoothing convention 'keras'"))
rows("smoothing_loss",
     ("type", lambda: loss.smoothing_loss("z", 1, 0.1), "logits must be numeric"),
     ("shape", lambda: loss.smoothing_loss(Z, 1, 0.1), r"logits must be one position's \(V,\) vector, got shape \(2, 3\)"),
     ("empty", lambda: loss.smoothing_loss([], 0, 0.1), "V must be an integer >= 2, got 0"),
     ("nonfinite", lambda: loss.smoothing_loss([0.0, INF, 1.0], 1, 0.1), "logits contains NaN or inf"),
     ("id", lambda: loss.smoothing_loss(Z[0], 3, 0.1), r"target 3 is out of range \[0, 3\)"),
     ("value", lambda: loss.smoothing_loss(Z[0], 1, 1.0), r"eps must be in \[0, 1\), got 1.0"))
rows("cross_entropy_backward",
     ("type", lambda: loss.cross_entropy_backward(CE_CACHE), r"needs \(dloss, cache\)"),
     ("shape", lambda: loss.cross_entropy_backward(np.ones(2), CE_CACHE), r"dloss must be a scalar, got shape \(2,\)"),
     ("nonfinite", lambda: loss.cross_entropy_backward(NAN, CE_CACHE), "dloss contains NaN or inf"))

# ---- optimizers and schedules -------------------------------------------------------------------------------------
rows("SGDConfig",
     ("type", lambda: optim.SGDConfig(lr="0.1"), "lr must be >= 0"),
     ("nonfinite", lambda: optim.SGDConfig(lr=INF), r"lr must be >= 0 \(a finite number\), got inf"),
     ("value", lambda: optim.SGDConfig(lr=0.1, momentum=-0.5), "momentum must be >= 0"))
rows("AdamConfig",
     ("type", lambda: optim.AdamConfig(beta1="0.9"), "beta1 must lie in"),
     ("nonfinite", lambda: optim.AdamConfig(weight_decay=NAN), "weight_decay must be >= 0"),
     ("value", lambda: optim.AdamConfig(beta2=1.0), r"beta2 must lie in \[0, 1\)"))
rows("AdamWConfig",
     ("type", lambda: optim.AdamWConfig(decay="W"), "decay must be None or a callable"),
     ("nonfinite", lambda: optim.AdamWConfig(lr=NAN), "lr must be >= 0"),
     ("value", lambda: optim.AdamWConfig(eps=0.0), "eps must be > 0"),
     ("type", lambda: optim.AdamWConfig(bias_correction="no"), "bias_correction must be True or False, got 'no'"))
rows("init_state",
     ("type", lambda: optim.init_state([np.ones(2)]), "params must be a dict of name -> array, got list"),
     ("nonfinite", lambda: optim.init_state({"W": _nan_at(np.ones(2))}), "param 'W' contains NaN or inf"),
     ("value", lambda: optim.init_state(OPT_P, buffers=("w",)), "unknown optimizer buffer"))
for name, config in (("sgd_step", SGD), ("adam_step", ADAM), ("adamw_step", ADAMW)):
    step = getattr(optim, name)
    rows(name,
         ("type", lambda s=step, c=config: s(list(OPT_P.values()), OPT_G, OPT_S, c), "params must be a dict of name -> array, got list"),
         ("type", lambda s=step, c=config: s(OPT_P, [OPT_G["W"]], OPT_S, c), "grads must be a dict of name -> array, got list"),
         ("type", lambda s=step, c=config: s(OPT_P, OPT_G, {"t": 0}, c), "state must be an OptState, got dict"),
         ("type", lambda s=step: s(OPT_P, OPT_G, OPT_S, {"lr": 0.1}), "config must be an? [A-Za-z]+Config, got dict"),
         ("shape", lambda s=step, c=config: s(OPT_P, {"W": np.ones(3)}, OPT_S, c), r"grad for 'W' has shape \(3,\)"),
         ("nonfinite", lambda s=step, c=config: s(OPT_P, {"W": _nan_at(OPT_G["W"])}, OPT_S, c), "grad for 'W' contains NaN"),
         ("value", lambda s=step, c=config: s(OPT_P, OPT_G, OPT_S, c, lr=-1.0), "lr must be >= 0"))
rows("warmup_lr",
     ("type", lambda: optim.warmup_lr("1", 512, 4000), "step t must be >= 1 .*got '1'"),
     ("value", lambda: optim.warmup_lr(0, 512, 4000), r"step t must be >= 1 \(t is 1-based\), got 0"),
     ("nonfinite", lambda: optim.warmup_lr(1, 512, INF), "warmup must be positive"))
rows("cosine_lr",
     ("type", lambda: optim.cosine_lr(1, "1e-3", 10, 100), "lr_max must be >= 0"),
     ("value", lambda: optim.cosine_lr(5, 1e-3, 10, 10), r"total \(10\) must be larger than warmup \(10\)"),
     ("nonfinite", lambda: optim.cosine_lr(1, 1e-3, 10, 100, lr_min=NAN), "lr_min must be >= 0"))
rows("clip_grad_norm",
     ("type", lambda: optim.clip_grad_norm([np.ones(2)], 1.0), "grads must be a dict of name -> array, got list"),
     ("nonfinite", lambda: optim.clip_grad_norm({"a": [INF]}, 1.0), "grad for 'a' contains NaN or inf"),
     ("value", lambda: optim.clip_grad_norm({"a": [1.0]}, 0.0), "max_norm must be positive"))

# ---- gradient checking --------------------------------------------------------------------------------------------
rows("numerical_grads",
     ("type", lambda: gradcheck.numerical_grads("f", OPT_P), "f must be a function params -> scalar, got str"),
     ("type", lambda: gradcheck.numerical_grads(_f, [np.ones(2)]), "params must be a dict"),
     ("type", lambda: gradcheck.numerical_grads(_f, OPT_P, names="W"), "names must be a list of parameter names"),
     ("shape", lambda: gradcheck.numerical_grads(lambda p: p["W"], OPT_P), r"f must return a scalar, got shape \(2, 2\)"),
     ("nonfinite", lambda: gradcheck.numerical_grads(lambda p: float("inf"), OPT_P), "f returned inf while perturbing 'W'"),
     ("nonfinite", lambda: gradcheck.numerical_grads(_f, {"W": _nan_at(np.ones(2))}), r"params\['W'\] contains NaN or inf"),
     ("value", lambda: gradcheck.numerical_grads(_f, OPT_P, h=0.0), "step h must be positive"),
     ("value", lambda: gradcheck.numerical_grads(_f, OPT_P, names=["V"]), "name 'V' is not in params"))
rows("gradcheck",
     ("type", lambda: gradcheck.gradcheck(_f, OPT_P, [np.ones((2, 2))]), "grads must be a dict"),
     ("shape", lambda: gradcheck.gradcheck(_f, OPT_P, {"W": np.ones(2)}), r"grads\['W'\] has shape \(2,\)"),
     ("nonfinite", lambda: gradcheck.gradcheck(_f, {"W": _nan_at(np.ones(2))}, {"W": np.ones(2)}), r"params\['W'\] contains NaN"),
     ("value", lambda: gradcheck.gradcheck(_f, OPT_P, {}), "grads has no gradient for parameter 'W'"))
rows("compare_grads",
     ("type", lambda: gradcheck.compare_grads([np.ones(2)], {"W": np.ones(2)}), "grads must be a dict"),
     ("type", lambda: gradcheck.compare_grads({"W": np.ones(2)}, {"W": np.ones(2)}, names="W"),
      "names must be a list of parameter names"),
     ("shape", lambda: gradcheck.compare_grads({"W": np.ones(2)}, {"W": np.ones(3)}), r"grads\['W'\] has shape \(2,\)"),
     ("nonfinite", lambda: gradcheck.compare_grads({"W": np.ones(2)}, {"W": _nan_at(np.ones(2))}),
      r"numeric\['W'\] contains NaN or inf"),
     ("value", lambda: gradcheck.compare_grads({}, {"W": np.ones(2)}), "no gradient for parameter 'W' in grads"))

# ---- the IOI task -------------------------------------------------------------------------------------------------
rows("ioi.tokenize",
     ("type", lambda: ioi.tokenize(["When"]), "text must be a string, got list"))
rows("Vocab",
     ("type", lambda: ioi.Vocab(["a", "b"]), "words must be a tuple of strings, got list"),
     ("empty", lambda: ioi.Vocab(()), "words is empty"),
     ("value", lambda: ioi.Vocab(("a", "a")), "vocabulary words must be unique"))
rows("Vocab.encode",
     ("type", lambda: VOCAB.encode(5), "text must be a string, got int"),
     ("id", lambda: VOCAB.encode("When Bob went"), "unknown word 'Bob'"))
rows("Vocab.decode",
     ("type", lambda: VOCAB.decode([1.5]), "ids must be integer token ids"),
     ("id", lambda: VOCAB.decode([-1]), rf"ids has token id -1 outside the vocabulary \[0, {len(VOCAB)}\)"))
rows("name_pairs",
     ("value", lambda: ioi.name_pairs("test"), "split must be 'train' or 'heldout', got 'test'"))
rows("generate",
     ("type", lambda: ioi.generate(2.0, 0), "n must be a positive integer"),
     ("empty", lambda: ioi.generate(0, 0), "n must be a positive integer, got 0"),
     ("value", lambda: ioi.generate(2, 0, split="test"), "split must be"))
rows("encode_batch",
     ("type", lambda: ioi.encode_batch("When Mary went", VOCAB), "texts must be a list of strings, got str"),
     ("empty", lambda: ioi.encode_batch([], VOCAB), "texts is empty"),
     ("id", lambda: ioi.encode_batch(["When Bob went"], VOCAB), "unknown word 'Bob'"))
rows("evaluate",
     ("type", lambda: ioi.evaluate(list(IP.values()), ICFG, SENTENCES, VOCAB), "params must be a dict"),
     ("type", lambda: ioi.evaluate(IP, ICFG, [s.text for s in SENTENCES], VOCAB), "sentences must be IOISentence"),
     ("empty", lambda: ioi.evaluate(IP, ICFG, [], VOCAB), "sentences is empty"),
     ("nonfinite", lambda: ioi.evaluate(_with(IP, "E", _nan_at(IP["E"])), ICFG, SENTENCES, VOCAB),
      "parameter E contains NaN or inf"),
     ("long", lambda: ioi.evaluate(IP4, ICFG4, SENTENCES, VOCAB), "longer than the context of 4"))
rows("next_word_probs",
     ("type", lambda: ioi.next_word_probs(list(IP.values()), ICFG, VOCAB), "params must be a dict"),
     ("type", lambda: ioi.next_word_probs(IP, ICFG, VOCAB, prompt=None), "text must be a string, got NoneType"),
     ("nonfinite", lambda: ioi.next_word_probs(_with(IP, "P", _nan_at(IP["P"])), ICFG, VOCAB),
      "parameter P contains NaN or inf"),
     ("id", lambda: ioi.next_word_probs(IP, ICFG, VOCAB, prompt="When Zorro"), "unknown word 'Zorro'"),
     ("long", lambda: ioi.next_word_probs(IP, ICFG, VOCAB, prompt=ioi.EXAMPLE), "longer than the context of 12"))
rows("load_model",
     ("value", lambda: ioi.load_model("best"), "which must be 'final' or 'mid', got 'best'"))

# ---- GPT-2 checkpoints --------------------------------------------------------------------------------------------
rows("config_from_hf",
     ("type", lambda: gpt2.config_from_hf('{"model_type": "gpt2"}'), "config must be a dict .*got str"),
     ("empty", lambda: gpt2.config_from_hf({"model_type": "gpt2"}), "config.json lacks vocab_size"),
     ("value", lambda: gpt2.config_from_hf({**HF_CFG, "model_type": "bert"}), "unsupported model_type 'bert'"),
     ("value", lambda: gpt2.config_from_hf({**HF_CFG, "n_head": 3}), "n_heads = 3 does not divide d_model = 8"))
rows("hf_param_shapes",
     ("type", lambda: gpt2.hf_param_shapes(HF_CFG), "config must be a GPTConfig, got dict"))
rows("params_from_hf",
     ("type", lambda: gpt2.params_from_hf(list(HF.values()), CFG), "tensors must be a dict of name -> array, got list"),
     ("type", lambda: gpt2.params_from_hf(_with(HF, "wte.weight", np.full((7, 8), "a")), CFG),
      "tensor wte.weight must be numeric"),
     ("type", lambda: gpt2.params_from_hf(HF, CFG, dtype=np.float16), "dtype must be float32 or float64, got float16"),
     ("shape", lambda: gpt2.params_from_hf(_with(HF, "wpe.weight", np.ones((5, 8))), CFG),
      r"tensor wpe.weight must have shape \(4, 8\) for this config, got \(5, 8\)"),
     ("empty", lambda: gpt2.params_from_hf({}, CFG), "checkpoint is missing tensor"),
     ("nonfinite", lambda: gpt2.params_from_hf(_with(HF, "h.0.mlp.c_fc.weight", _nan_at(HF["h.0.mlp.c_fc.weight"])), CFG),
      r"tensor h.0.mlp.c_fc.weight contains NaN or inf \(nan at index \(0, 0\)\)"),
     ("nonfinite", lambda: gpt2.params_from_hf(_with(HF, "ln_f.bias", np.full(8, 1e300)), CFG, dtype=np.float32),
      "tensor ln_f.bias contains NaN or inf"))
rows("params_to_hf",
     ("type", lambda: gpt2.params_to_hf(list(P.values()), CFG), "params must be a dict"),
     ("shape", lambda: gpt2.params_to_hf(_with(P, "P", P["P"][:2]), CFG), r"parameter P must have shape \(4, 8\)"),
     ("nonfinite", lambda: gpt2.params_to_hf(_with(P, "E", _nan_at(P["E"])), CFG), "parameter E contains NaN or inf"))
rows("printed_tolerance",
     ("type", lambda: gpt2.printed_tolerance(0.3), "printed must be the figure as a string of digits, got float"),
     ("value", lambda: gpt2.printed_tolerance("around -93"), "printed 'around -93' is not a decimal numeral"),
     ("nonfinite", lambda: gpt2.printed_tolerance("inf"), "printed 'inf' is not finite"))
rows("sentence_countings",
     ("type", lambda: gpt2.sentence_countings(P, CFG, None, "a b"), "tokenizer must be a HFTokenizer, got NoneType"))

# ---- displays ----------------------------------------------------------------------------------------------------
rows("fmt",
     ("type", lambda: display.fmt("a", 2), "x must be a real number, got 'a'"),
     ("type", lambda: display.fmt(1.0, 2.0), r"digits must be between 0 and 5 \(the book prints at most 5 decimals\), got 2.0"),
     ("value", lambda: display.fmt(1.0, 6), "digits must be between 0 and 5"))
rows("dot_terms",  # at the call, not later when the terms are displayed
     ("type", lambda: display.dot_terms([1.0, 2.0], [3.0, 4.0], digits="2"), r"digits must be between 0 and 5 .*, got '2'"),
     ("value", lambda: display.dot_terms([1.0, 2.0], [3.0, 4.0], digits=9), "digits must be between 0 and 5"))

# ---- the Part II toy ----------------------------------------------------------------------------------------------
rows("toy_gpt.tokenize",
     ("type", lambda: toy_gpt.tokenize(["I"]), "text must be a string, got list"),
     ("id", lambda: toy_gpt.tokenize("I like dogs"), "unknown word 'dogs'"))
rows("detokenize",
     ("type", lambda: toy_gpt.detokenize([0.0, 2.0]), "ids must be integer token ids"),
     ("id", lambda: toy_gpt.detokenize([0, 10]), r"ids has token id 10 outside the vocabulary \[0, 10\)"))
rows("toy_batch",
     ("type", lambda: toy_gpt.toy_batch(None), "text must be a string"),
     ("id", lambda: toy_gpt.toy_batch("I like dogs"), "unknown word 'dogs'"),
     ("long", lambda: toy_gpt.toy_batch("the cat sat on the mat"), "more than the context of 5"))
rows("toy_params",
     ("type", lambda: toy_gpt.toy_params(seed="3"), "seed must be an integer >= 0"),
     ("type", lambda: toy_gpt.toy_params(dtype="int32"), "dtype must be float32 or float64, got int32"))
rows("toy_loss_and_grads",
     ("type", lambda: toy_gpt.toy_loss_and_grads(list(TOY.values())), "params must be a dict"),
     ("shape", lambda: toy_gpt.toy_loss_and_grads(_with(TOY, "W_out", TOY["W_out"].T)), r"parameter W_out must have shape \(16, 10\)"),
     ("nonfinite", lambda: toy_gpt.toy_loss_and_grads(_with(TOY, "W_out", _nan_at(TOY["W_out"]))), "parameter W_out contains NaN"))
rows("param_table",
     ("type", lambda: toy_gpt.param_table(list(TOY.values()), toy_gpt.TOY_CONFIG), "params must be a dict"),
     ("type", lambda: toy_gpt.param_table(TOY, None), "config must be a GPTConfig, got NoneType"),
     ("shape", lambda: toy_gpt.param_table(_with(TOY, "E", TOY["E"][:3]), toy_gpt.TOY_CONFIG), r"parameter E must have shape \(10, 16\)"))


@pytest.mark.parametrize("entry, kind, call, match", CASES)
def test_bad_input_raises_a_value_error_naming_it(entry, kind, call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ---- the table stays complete -------------------------------------------------------------------------------------
SWEPT_MODULES = ("softmax", "layernorm", "linear", "embedding", "activations", "attention", "mha", "gpt", "encdec",
                 "loss", "optim", "gradcheck", "ioi", "gpt2", "toy_gpt")
NOT_SWEPT = {
    "OptState": "a record; init_state builds it and every step checks it",
    "GradcheckRow": "a result record", "GradcheckReport": "a result record", "IOISentence": "a result record",
    "HFTokenizer": "a wrapper made by load_tokenizer",
    "build_vocab": "no arguments", "default_gpt2_dir": "no arguments",
    "load_gpt2": "file errors (FileNotFoundError); its checks are config_from_hf and params_from_hf, swept above",
    "load_tokenizer": "file errors (FileNotFoundError), tested in test_gpt2.py",
    "gpt2_files_present": "returns False for any folder without the files",
    "download_gpt2": "network; ImportError without huggingface_hub, tested in test_gpt2.py",
    "reported_as_printed": "no arguments", "Figure": "a result record", "GPT2Figures": "a result record",
    "gpt2_figures": "file errors (FileNotFoundError) through load_gpt2, whose checks are swept above",
}
# names that two modules share are written module.name in the table
QUALIFIED = {"ioi.tokenize", "toy_gpt.tokenize"}


def test_every_public_entry_point_is_swept():
    swept = {entry for entry, *_ in (c.values for c in CASES)}
    for module in SWEPT_MODULES:
        mod = importlib.import_module(f"byhand.{module}")
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            key = f"{module}.{name}" if f"{module}.{name}" in QUALIFIED else name
            assert key in swept or name in NOT_SWEPT, f"byhand.{module}.{name} has no row in CASES and no reason"


def test_table_coverage_counts():
    """The sweep's size, so a shrinking table is noticed: entry points and rows per kind."""
    entries = {c.values[0] for c in CASES}
    kinds = {}
    for c in CASES:
        kinds[c.values[1]] = kinds.get(c.values[1], 0) + 1
    assert set(kinds) == {"type", "shape", "empty", "nonfinite", "id", "value", "long"}


# ---- the numerical fixes keep their promises ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softmax_log_softmax_and_loss_stay_finite_for_logits_of_1e4(dtype):
    z = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4], [1e4, 1e4, -1e4]], dtype=dtype)
    p, cache = softmax.softmax_forward(z)
    logp, lcache = softmax.log_softmax_forward(z)
    assert np.all(np.isfinite(p)) and np.all(np.isfinite(logp))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-6)
    # closed forms: row 0 puts all mass on entry 0; row 1 is uniform; row 2 splits between entries 0 and 1
    np.testing.assert_allclose(logp[0], [0.0, -2e4, -1e4], rtol=1e-6)
    np.testing.assert_allclose(logp[1], np.log(1 / 3), rtol=1e-6)
    np.testing.assert_allclose(logp[2, :2], np.log(0.5), rtol=1e-6)
    targets = np.array([1, 0, 2])  # the least likely entry of each row: the loss is large, not inf
    total, ce = loss.cross_entropy_forward(z, targets, reduction="sum")
    np.testing.assert_allclose(total, 2e4 - np.log(1 / 3) + 2e4 - np.log(0.5), rtol=1e-6)
    for grad in (softmax.softmax_backward(np.ones_like(z), cache), softmax.log_softmax_backward(np.ones_like(z), lcache),
                 loss.cross_entropy_backward(1.0, ce)):
        assert np.all(np.isfinite(grad))


def test_layernorm_of_rows_near_1e154_normalises_instead_of_returning_beta():
    rng = np.random.default_rng(1)
    base = rng.standard_normal((3, 6))  # (3, 6)
    gamma, beta = rng.standard_normal(6), rng.standard_normal(6)
    x = base.copy()
    x[0] *= 1e154  # var = mean((x - mu)^2) overflows float64
    x[2] *= 1e300
    y, cache = layernorm.layernorm_forward(x, gamma, beta, eps=1e-5)
    reference, _ = layernorm.layernorm_forward(base, gamma, beta, eps=0.0)  # scale invariance: eps / s^2 ~ 0
    np.testing.assert_allclose(y[[0, 2]], reference[[0, 2]], rtol=1e-12, atol=1e-12)
    assert not np.allclose(y[0], beta)
    # the ordinary row in the same batch is computed exactly as it would be alone
    alone, _ = layernorm.layernorm_forward(base[1:2], gamma, beta, eps=1e-5)
    assert np.array_equal(y[1:2], alone)
    # rows near the float32 limit too
    y32, _ = layernorm.layernorm_forward((base * 1e19).astype(np.float32), gamma, beta, eps=1e-5)
    np.testing.assert_allclose(y32, reference, rtol=1e-4, atol=1e-4)
    # the backward and the Jacobian scale as 1/s: checked against the unscaled row
    dy = rng.standard_normal((3, 6))
    dx, dgamma, _ = layernorm.layernorm_backward(dy, cache)
    _, ref_cache = layernorm.layernorm_forward(base, gamma, beta, eps=0.0)
    ref_dx, _, _ = layernorm.layernorm_backward(dy, ref_cache)
    np.testing.assert_allclose(dx[0] * 1e154, ref_dx[0], rtol=1e-10, atol=1e-12)
    _, row1_cache = layernorm.layernorm_forward(base[1:2], gamma, beta, eps=1e-5)  # row 1 was not rescaled
    _, big_cache = layernorm.layernorm_forward(base[[0, 2]], gamma, beta, eps=0.0)  # rows 0, 2: eps / s^2 ~ 0
    ref_dgamma = layernorm.layernorm_backward(dy[1:2], row1_cache)[1] + layernorm.layernorm_backward(dy[[0, 2]], big_cache)[1]
    np.testing.assert_allclose(dgamma, ref_dgamma, rtol=1e-12, atol=1e-14)
    J = layernorm.layernorm_jacobian(x[0], gamma, eps=1e-5)
    np.testing.assert_allclose(J * 1e154, layernorm.layernorm_jacobian(base[0], gamma, eps=0.0), rtol=1e-10, atol=1e-12)


def test_ordinary_layernorm_input_takes_the_plain_path():
    x = np.random.default_rng(2).standard_normal((2, 5))
    _, cache = layernorm.layernorm_forward(x, np.ones(5), np.zeros(5))
    assert "scale" not in cache and cache["x"] is x
