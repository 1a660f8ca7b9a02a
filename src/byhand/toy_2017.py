"""The Part III toy: one training step of the 2017 encoder-decoder on "je suis -> i am", on two paths.

Taught in Part III, "The 2017 encoder-decoder, by hand" (every chapter of the part imports it). The
sizes and most weights come from the blog post that works one training step of the 2017 transformer
by hand (``onestep2017`` in references.bib, "the post" below): d_model 4, 2 heads, d_k 2, d_ff 8, one
layer each side, target vocabulary [<bos>, i, am, <eos>], layer-norm eps 0. Where the post is silent,
the choice is made here and written down.

Stated by the post, used as stated:
  * X_src = [[1,0,1,0],[0,1,0,1]] (je, suis) after its two roundings "for hand arithmetic".
  * Encoder attention: W_K = W_Q, so K = Q; both heads land identically; W_O = I.
  * Encoder FFN: W_1 = [I | I] (4 -> 8), W_2 = [I ; I] (8 -> 4), zero biases.
  * Every layer norm: gamma = 1, beta = 0, eps = 0. Output layer: W_out = I, b_out = 0.
  * Decoder self-attention: position 0 attends [1, 0], position 1 attends [0.5, 0.5]; after
    Add & Norm the rows are [1,1,-1,-1] and [-1,-1,1,1].
  * Cross-attention: K and V share one matrix; scaled scores +-sqrt(2) (weights 0.944 / 0.056).
  * Only the last position (input "i", target "am") is scored; label smoothing 0.1 spread as eps/V.

Filled in here (the post does not give them):
  * Source vocabulary [<pad>, je, suis, <eos>]; E_src, E_tgt are small non-integer tables whose
    rows, times sqrt(4) = 2 and rounded, then plus the sinusoidal positions and rounded again,
    give the post's X_src and the decoder input X_tgt = [[1,1,0,0],[0,0,1,1]] (<bos>, i).
    Rows never looked up are 0.
  * Encoder W_Q = W_K = W_V = I: head 0 reads columns 0:2, head 1 columns 2:4, and X repeats
    itself across the two halves, which is why the heads "land identically".
  * Decoder self-attention W_Q = W_K = 1/2 (every entry): each query and key is the token's row
    sum / 2 in every column; <bos> and i both sum to 2, so every score in a row is equal and the
    causal mask alone decides the weights [1, 0] and [0.5, 0.5]. W_V = W_O = I.
  * Cross-attention W_Q swaps columns 1 and 2 (it turns [1,1,-1,-1] into the memory's pattern
    [1,-1,1,-1]); W_K = W_V = I. W_O: head 0 writes (y - x) * [1,0,-1,0] ("<bos> up, am down"),
    head 1 writes x * [0,0,1,1] + y * [1,1,0,0] (against the decoder's own pattern: it
    shrinks it, which alone a layer norm undoes; with head 0 it lets head 0's push win).
  * Decoder FFN W_1 = [I | -I], W_2 = [I ; -I]: ReLU keeps the positive part in one half and the
    negative part in the other, W_2 adds them back, so FFN(x) = x and the final Add & Norm returns
    its input. (With the encoder's [I | I] here the scored row could not come near the post's.)

The two paths. Both start from the post's rounded X and agree through the cross-attention weights.
  * The ROUNDED PATH takes the scored row the post prints, h = [1, 0, -1, 0], and computes
    everything after it exactly: P(am) = 0.072, smoothed loss 2.5265, dL/dW_out[0,0] = 0.509.
    That row has variance 1/2, so no layer norm with gamma = 1 can output it; it is the exact row
    rounded to integers (or, read as a sum before the last norm, its exact norm is [1.414, 0, -1.414, 0]).
  * The EXACT PATH runs ``byhand.encdec`` on the same X and weights with nothing rounded. Its scored
    row is (1 - t) * [-1,-1,1,1] + 2t * [1,0,-1,0], normalised, with t = tanh(sqrt(2)) the
    cross-attention's weight margin: [1.411, -0.095, -1.411, 0.095], P(am) = 0.038. With t = 1 it
    would be exactly [sqrt 2, 0, -sqrt 2, 0].
Into the embeddings (chapter "The backward pass through the encoder-decoder"): a rounding has zero
derivative almost everywhere, so each rounding of the inputs is held as a constant shift R, and
X = sqrt(d_model) E[ids] + PE + R (``inputs_from_tables``). Then dE[v] = sqrt(d_model) * (sum of dX over
the positions holding v), PE and R pass the gradient through and take none (``embedding_grads``).
Adam (the paper's beta1 0.9, beta2 0.98, eps 1e-9, warm-up lr with d_model 512 and 4000 warm-up steps)
moves W_out[0,0] by almost exactly lr(t) on either path, because m_hat / sqrt(v_hat) = sign(g) when the
gradient is the same at every step: 1 - 1.747e-7 after step 1, and 0.999301 for the step at t = 4000.
``adam_at_step`` computes it with eps after the bias correction (PyTorch, Kingma & Ba's Algorithm 1) or
before it (TensorFlow's Adam, which the 2017 code used: eps-hat added to sqrt(v), correction in the step size).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from byhand.embedding import embedding_backward, embedding_forward, sinusoidal_positions
from byhand.encdec import EncDecConfig, encdec_backward, encdec_forward_embedded, encdec_param_shapes
from byhand.loss import cross_entropy_backward, cross_entropy_forward
from byhand.optim import AdamConfig, OptState, adam_step, warmup_lr

SRC_VOCAB = ("<pad>", "je", "suis", "<eos>")  # source vocabulary (the post names no source tokens but je, suis)
TGT_VOCAB = ("<bos>", "i", "am", "<eos>")  # target vocabulary, in the post's order
SOURCE = ("je", "suis")  # the encoder reads this
TARGET_IN = ("<bos>", "i")  # the decoder reads the target shifted right
TARGET_OUT = ("i", "am")  # and must predict this
SCORED = 1  # the one position the post scores: input "i", target "am"
LABEL_SMOOTHING = 0.1  # epsilon_ls of the paper, spread as eps / V over the vocabulary
ROUNDED_H = np.array([1.0, 0.0, -1.0, 0.0])  # the scored row the post prints (rounded path)
# Numbers as the post prints them, for side-by-side comparison in the chapters (never used to compute).
POST_PRINTED = {"P_am": 0.072, "loss": 2.53, "p_bos": 0.535, "dW_out00": 0.510, "W_out00_4000": 0.999301,
                "e_sqrt2": 4.10, "e_minus_sqrt2": 0.243, "cross_weights": (0.944, 0.056)}
# The base model of the paper, for the sizes table and the Adam step.
PAPER = {"d_model": 512, "n_heads": 8, "d_k": 64, "d_ff": 2048, "n_layers": 6, "vocab": 37000,
         "warmup": 4000, "beta1": 0.9, "beta2": 0.98, "eps": 1e-9, "label_smoothing": 0.1,
         "p_drop": 0.1,  # dropout on each sub-layer's output and on the embedding + position sums (section 5.4)
         "batch_tokens": 25000}  # about this many source and as many target tokens per batch (section 5.1)


def toy_config() -> EncDecConfig:
    """The toy's sizes: d_model 4, 2 heads (d_k 2), d_ff 8, one layer each side, vocabularies of 4, eps 0."""
    return EncDecConfig(src_vocab=len(SRC_VOCAB), tgt_vocab=len(TGT_VOCAB), d_model=4, n_heads=2, d_ff=8,
                        n_enc_layers=1, n_dec_layers=1, max_len=8, ln_eps=0.0)


def _swap_1_2() -> np.ndarray:
    """The permutation that swaps columns 1 and 2: [a, b, c, d] @ P = [a, c, b, d]."""
    return np.eye(4)[[0, 2, 1, 3]]  # (4, 4)


def toy_params() -> dict[str, np.ndarray]:
    """Every parameter of the toy (names of ``byhand.encdec``), float64. See the module docstring for why."""
    I4 = np.eye(4)
    ln = {"gamma": np.ones(4), "beta": np.zeros(4)}  # gamma = 1, beta = 0 everywhere
    p = {
        "E_src": np.array([[0.0, 0.0, 0.0, 0.0],  # <pad>, never looked up
                           [0.6, -0.4, 0.45, -0.55],  # je:   x2 -> [1.2, -0.8, 0.9, -1.1]
                           [-0.35, 0.15, -0.2, 0.1],  # suis: x2 -> [-0.7, 0.3, -0.4, 0.2]
                           [0.0, 0.0, 0.0, 0.0]]),  # <eos>, never looked up
        "E_tgt": np.array([[0.55, 0.1, -0.15, -0.45],  # <bos>: x2 -> [1.1, 0.2, -0.3, -0.9]
                           [-0.4, -0.6, 0.35, 0.05],  # i:     x2 -> [-0.8, -1.2, 0.7, 0.1]
                           [0.0, 0.0, 0.0, 0.0],  # am, only ever a target
                           [0.0, 0.0, 0.0, 0.0]]),  # <eos>, only ever a target
        "enc0.attn.W_q": I4.copy(), "enc0.attn.W_k": I4.copy(),  # W_K = W_Q, so K = Q
        "enc0.attn.W_v": I4.copy(), "enc0.attn.W_o": I4.copy(),
        "enc0.ffn.W_1": np.hstack([I4, I4]), "enc0.ffn.b_1": np.zeros(8),  # [I | I]: 4 -> 8
        "enc0.ffn.W_2": np.vstack([I4, I4]), "enc0.ffn.b_2": np.zeros(4),  # [I ; I]: 8 -> 4, adds pairs
        "dec0.self.W_q": np.full((4, 4), 0.5), "dec0.self.W_k": np.full((4, 4), 0.5),  # equal scores
        "dec0.self.W_v": I4.copy(), "dec0.self.W_o": I4.copy(),
        "dec0.cross.W_q": _swap_1_2(), "dec0.cross.W_k": I4.copy(), "dec0.cross.W_v": I4.copy(),
        "dec0.cross.W_o": np.array([[-1.0, 0, 1, 0],  # head 0: (y - x) [1, 0, -1, 0]
                                    [1.0, 0, -1, 0],
                                    [0.0, 0, 1, 1],  # head 1: x [0, 0, 1, 1] + y [1, 1, 0, 0]
                                    [1.0, 1, 0, 0]]),
        "dec0.ffn.W_1": np.hstack([I4, -I4]), "dec0.ffn.b_1": np.zeros(8),  # [I | -I]
        "dec0.ffn.W_2": np.vstack([I4, -I4]), "dec0.ffn.b_2": np.zeros(4),  # [I ; -I]: FFN(x) = x
        "W_out": I4.copy(), "b_out": np.zeros(4),
    }
    for pre in ("enc0.ln1", "enc0.ln2", "dec0.ln1", "dec0.ln2", "dec0.ln3"):
        p.update({f"{pre}.{k}": v.copy() for k, v in ln.items()})
    return {name: p[name] for name in encdec_param_shapes(toy_config())}  # the table's order


@dataclass(frozen=True)
class InputRounding:
    """The post's two roundings of one side's input, every stage kept (all (T, 4))."""

    ids: np.ndarray  # (T,) token ids
    emb: np.ndarray  # E[ids] * sqrt(d_model), exact
    emb_rounded: np.ndarray  # rounded to integers (the post's first rounding)
    pos: np.ndarray  # sinusoidal positions PE[0..T-1]
    sum_exact: np.ndarray  # emb_rounded + pos
    X: np.ndarray  # rounded again: what enters the model on both paths
    unrounded: np.ndarray  # emb + pos with no rounding at all (what encdec_forward would feed)


def _round(a: np.ndarray) -> np.ndarray:
    return np.round(a) + 0.0  # + 0.0 turns -0.0 into 0.0


def round_inputs(side: str) -> InputRounding:
    """Embed ``side`` ("src": je suis, or "tgt": <bos> i) the post's way: scale, round, add PE, round."""
    if side not in ("src", "tgt"):
        raise ValueError(f"side must be 'src' or 'tgt', got {side!r}")
    vocab, tokens, E = ((SRC_VOCAB, SOURCE, "E_src") if side == "src" else (TGT_VOCAB, TARGET_IN, "E_tgt"))
    ids = np.array([vocab.index(tok) for tok in tokens])  # (T,)
    d_model = toy_config().d_model
    emb = toy_params()[E][ids] * math.sqrt(d_model)  # (T, d_model)
    pos = sinusoidal_positions(len(ids), d_model)  # (T, d_model)
    emb_rounded = _round(emb)
    sum_exact = emb_rounded + pos
    return InputRounding(ids, emb, emb_rounded, pos, sum_exact, _round(sum_exact), emb + pos)


def toy_inputs() -> tuple[np.ndarray, np.ndarray]:
    """The hand-picked inputs (X_src, X_tgt), each (2, 4): the post's rounded embeddings plus positions."""
    return round_inputs("src").X, round_inputs("tgt").X


def toy_targets() -> np.ndarray:
    """Target ids per decoder position, -1 where unscored: (2,) = [-1, id(am)]."""
    out = np.full(len(TARGET_OUT), -1)
    out[SCORED] = TGT_VOCAB.index(TARGET_OUT[SCORED])
    return out


@dataclass(frozen=True)
class ToyPath:
    """One path's numbers from the scored row on. Arrays are (V,) = (4,) unless noted."""

    name: str  # "rounded" (the post's printed row) or "exact" (byhand.encdec)
    h: np.ndarray  # the decoder's output at the scored position
    logits: np.ndarray  # h W_out + b_out
    p: np.ndarray  # softmax(logits)
    q: np.ndarray  # smoothed target (1 - eps) onehot(am) + eps / V
    loss: float  # -sum q log p
    dlogits: np.ndarray  # p - q (one scored position, so the mean divides by 1)
    dW_out: np.ndarray  # (4, 4) outer(h, p - q)
    grads: dict | None  # exact path: every parameter's gradient; rounded path: None
    trace: dict | None  # exact path: forward trace + p, q + backward trace; rounded path: None


def _loss_part(logits, label_smoothing):
    """Loss, p, q and p - q for the (T, V) logits with only the scored position counted."""
    loss, c = cross_entropy_forward(logits, toy_targets(), label_smoothing=label_smoothing)
    return float(loss), c, cross_entropy_backward(1.0, c)  # dlogits (T, V)


def rounded_path(label_smoothing: float = LABEL_SMOOTHING) -> ToyPath:
    """The rounded path: the post's printed scored row h = [1, 0, -1, 0], then output layer, loss and gradient exactly."""
    params = toy_params()
    h = ROUNDED_H.copy()
    H = np.zeros((len(TARGET_IN), 4))  # (T, d_model); the unscored row is never counted
    H[SCORED] = h
    logits = H @ params["W_out"] + params["b_out"]  # (T, V)
    loss, c, dlogits = _loss_part(logits, label_smoothing)
    dW_out = H.T @ dlogits  # (d_model, V), only the scored row contributes
    s = SCORED
    return ToyPath("rounded", h, logits[s], c["p"][s], c["q"][s], loss, dlogits[s], dW_out, None, None)


def exact_path(label_smoothing: float = LABEL_SMOOTHING) -> ToyPath:
    """The exact path: ``byhand.encdec`` forward and backward on the toy's X and weights, nothing rounded."""
    params, config = toy_params(), toy_config()
    X_src, X_tgt = toy_inputs()
    logits, cache = encdec_forward_embedded(params, X_src, X_tgt, config)  # (T_t, V)
    loss, c, dlogits = _loss_part(logits, label_smoothing)
    grads, gtrace = encdec_backward(dlogits, cache)
    trace = dict(cache["trace"])
    trace.update({"p": c["p"], "q": c["q"]})
    trace.update(gtrace)
    s = SCORED
    h = trace["dec0.ln3"][s]  # (d_model,)
    return ToyPath("exact", h, logits[s], c["p"][s], c["q"][s], loss, dlogits[s], grads["W_out"], grads, trace)


def adam_2017() -> AdamConfig:
    """Adam with the paper's hyperparameters: beta1 = 0.9, beta2 = 0.98, eps = 1e-9 (lr comes from the schedule)."""
    return AdamConfig(lr=0.0, beta1=PAPER["beta1"], beta2=PAPER["beta2"], eps=PAPER["eps"])


def adam_at_step(W, g, t: int, d_model: int = PAPER["d_model"], warmup: int = PAPER["warmup"],
                 eps_placement: str = "after_correction"):
    """One Adam step number ``t`` on weight ``W`` with gradient ``g``, as the post frames it.

    The history is "the same gradient g at each of the steps 1 .. t-1", so the moments going in are
    m = (1 - beta1^(t-1)) g and v = (1 - beta2^(t-1)) g^2, and after the step m_hat = g, v_hat = g^2
    exactly. The learning rate is ``warmup_lr(t, d_model, warmup)``. W is the value before the step
    (the post keeps W_out[0,0] = 1). Returns (W_new, info, lr).

    ``eps_placement`` says where eps enters (the references disagree):
      * "after_correction" (default; PyTorch's torch.optim.Adam, Kingma & Ba's Algorithm 1):
        W - lr * m_hat / (sqrt(v_hat) + eps), by ``byhand.optim.adam_step``; info is its row.
      * "before_correction" (TensorFlow's Adam, used by the 2017 code; Kingma & Ba's "efficient version"):
        lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t),  W - lr_t * m / (sqrt(v) + eps). This equals the
        first form with eps replaced by eps / sqrt(1 - beta2^t). info has m, v, lr_t, eps_eff, update.
    """
    if eps_placement not in ("after_correction", "before_correction"):
        raise ValueError(f"eps_placement must be 'after_correction' or 'before_correction', got {eps_placement!r}")
    config = adam_2017()
    W = np.asarray(W, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    if W.shape != g.shape:
        raise ValueError(f"W and g must have the same shape, got {W.shape} and {g.shape}")
    lr = warmup_lr(t, d_model, warmup)
    m = (1 - config.beta1 ** (t - 1)) * g  # the running mean of a constant g after t-1 steps
    v = (1 - config.beta2 ** (t - 1)) * g * g
    if eps_placement == "after_correction":
        state = OptState(t=t - 1, m={"W": m}, v={"W": v}, b={"W": np.zeros_like(W)})
        new, _, info = adam_step({"W": W}, {"W": g}, state, config, lr=lr)
        return new["W"], info["W"], lr
    m = config.beta1 * m + (1 - config.beta1) * g  # the same moments as above, not bias-corrected
    v = config.beta2 * v + (1 - config.beta2) * g * g
    lr_t = lr * math.sqrt(1 - config.beta2**t) / (1 - config.beta1**t)  # the bias correction, in the step size
    update = -lr_t * m / (np.sqrt(v) + config.eps)  # eps-hat: added before the correction
    eps_eff = config.eps / math.sqrt(1 - config.beta2**t)  # the eps of the first form that gives the same step
    return W + update, {"m": m, "v": v, "lr_t": lr_t, "eps_eff": eps_eff, "update": update}, lr


def _rounding_offsets() -> dict[str, np.ndarray]:
    """R = X - (sqrt(d_model) E[ids] + PE) per side, (T, d_model): what the two roundings added, held constant."""
    return {side: round_inputs(side).X - round_inputs(side).unrounded for side in ("src", "tgt")}


def inputs_from_tables(E_src, E_tgt) -> tuple[np.ndarray, np.ndarray]:
    """(X_src, X_tgt) = sqrt(d_model) E[ids] + PE + R from embedding tables, R the roundings as constant shifts.

    At the toy's tables this gives ``toy_inputs()`` (to the last bit or so); moving a table moves X by
    sqrt(d_model) times the move, which is what a training step without rounding sees.
    """
    d_model = toy_config().d_model
    R = _rounding_offsets()
    out = []
    for side, E in (("src", E_src), ("tgt", E_tgt)):
        ids = round_inputs(side).ids  # (T,)
        x, _ = embedding_forward(ids, E)  # (T, d_model)
        out.append(x * math.sqrt(d_model) + sinusoidal_positions(len(ids), d_model) + R[side])  # (T, d_model)
    return out[0], out[1]


def table_loss(E_src, E_tgt, label_smoothing: float = LABEL_SMOOTHING) -> float:
    """The exact path's loss as a function of the two embedding tables (every other weight the toy's)."""
    X_src, X_tgt = inputs_from_tables(E_src, E_tgt)
    logits, _ = encdec_forward_embedded(toy_params(), X_src, X_tgt, toy_config())
    return float(cross_entropy_forward(logits, toy_targets(), label_smoothing=label_smoothing)[0])


def embedding_grads(path: ToyPath | None = None) -> dict[str, np.ndarray]:
    """dL/dE_src and dL/dE_tgt, each (4, d_model), from the exact path's dX_src and dX_tgt.

    X = sqrt(d_model) E[ids] + PE + R: PE and R have no parameters and pass dX through unchanged; the
    scale multiplies it by sqrt(d_model); the lookup scatters each row back to its token's row of E.
    """
    path = exact_path() if path is None else path
    if path.trace is None:
        raise ValueError("embedding_grads needs the exact path (the rounded path has no network below h)")
    scale = math.sqrt(toy_config().d_model)
    params = toy_params()
    grads = {}
    for side, E in (("src", "E_src"), ("tgt", "E_tgt")):
        _, cache = embedding_forward(round_inputs(side).ids, params[E])
        grads[E] = embedding_backward(path.trace[f"dX_{side}"] * scale, cache)  # (V, d_model)
    return grads


@dataclass(frozen=True)
class WeightEntry:
    """One distinct value of the toy's weights, with every parameter that holds it (chapter "The 2017 machine")."""

    names: tuple[str, ...]  # the parameters (names of ``byhand.encdec``) that hold exactly this value
    tex: str  # how the chapter names them, in TeX
    value: np.ndarray  # the value they all hold
    source: str  # "post" (stated by the post) or "book" (the book's reconstruction: the post is silent)
    why: str  # the reason for the value, in one or two sentences

    @property
    def digits(self) -> int:
        """Decimals that show the value exactly: 0 for whole numbers, else 2 (the toy's tables have two)."""
        return 0 if np.array_equal(self.value, np.round(self.value)) else 2


def weight_sheet() -> list[WeightEntry]:
    """Every parameter of the toy once, grouped by value, with where each value comes from and why.

    The groups cover ``toy_params()`` exactly (each name once); each value equals every named parameter.
    """
    p = toy_params()
    ln = [f"{pre}.{k}" for pre in ("enc0.ln1", "enc0.ln2", "dec0.ln1", "dec0.ln2", "dec0.ln3") for k in ("gamma",)]
    lnb = [n.replace("gamma", "beta") for n in ln]
    biases = ["enc0.ffn.b_2", "dec0.ffn.b_2", "b_out"]
    rows = [
        (("E_src",), r"E_{\text{src}}", "book",
         "Rows for *je* and *suis* that, scaled by 2 and rounded, plus the positions and rounded again, give the post's "
         "encoder input; the post gives only that input. Rows never looked up are 0."),
        (("E_tgt",), r"E_{\text{tgt}}", "book",
         "The same for `<bos>` and `i`, chosen to give the decoder input [1, 1, 0, 0], [0, 0, 1, 1], whose sums are equal: "
         "the decoder's W_Q = W_K has every entry 1/2, so equal sums give equal queries and keys, and equal scores."),
        (("enc0.attn.W_q", "enc0.attn.W_k", "enc0.attn.W_v", "enc0.attn.W_o", "dec0.self.W_v", "dec0.self.W_o",
          "dec0.cross.W_k", "dec0.cross.W_v", "W_out"),
         r"I_4", "post and book",
         "The post states W_K = W_Q and W_O = I in the encoder, one shared matrix for the cross-attention's keys and "
         "values, and W_out = I; the book takes I for every one of them (the encoder's W_Q, W_K, W_V, W_O; the decoder's "
         "self-attention W_V, W_O; the cross-attention's W_K = W_V; W_out), so that each passes its input on."),
        (("enc0.ffn.W_1",), r"W_1^{\text{enc}} = [I_4 \mid I_4]", "post",
         "Stated: the 4 inputs are copied into the 8 hidden units."),
        (("enc0.ffn.W_2",), r"W_2^{\text{enc}} = [I_4 ; I_4]", "post",
         "Stated: each output adds its two hidden copies back up."),
        (("dec0.self.W_q", "dec0.self.W_k"), r"W_Q^{\text{self}} = W_K^{\text{self}}", "book",
         "Every entry 1/2, so every query and key is [1, 1, 1, 1] and all scores in a row are equal: the causal mask "
         "alone gives the post's weights [1, 0] and [0.5, 0.5]."),
        (("dec0.cross.W_q",), r"W_Q^{\text{cross}}", "book",
         "Swaps columns 1 and 2, which turns the decoder's pattern into the memory's, so that each query meets one "
         "memory row with the post's scores of plus and minus the square root of 2."),
        (("dec0.cross.W_o",), r"W_O^{\text{cross}}", "book",
         "Head 0 writes along [1, 0, −1, 0], `<bos>` against `am`: at the scored row 1 it pushes `<bos>` up and `am` down "
         "(at row 0, the other way); head 1 writes against the decoder's own pattern, shrinking it. It makes the model confidently "
         "wrong, as the post's printed row is, so that the training step has something to fix."),
        (("dec0.ffn.W_1",), r"W_1^{\text{dec}} = [I_4 \mid -I_4]", "book",
         "Holds x in one half and -x in the other, so that the ReLU keeps each entry's positive part in one half "
         "and its negative part in the other."),
        (("dec0.ffn.W_2",), r"W_2^{\text{dec}} = [I_4 ; -I_4]", "book",
         "Takes the first half minus the second, which gives x back: this network passes its input through, so the "
         "scored row stays close to the post's."),
        (tuple(ln), r"\gamma \text{ of all five layer norms}", "post", "Stated: γ = 1 (and ε = 0)."),
        (tuple(lnb), r"\beta \text{ of all five layer norms}", "post", "Stated: β = 0."),
        (("enc0.ffn.b_1", "dec0.ffn.b_1"), r"b_1 \text{ of both FFNs}", "post and book",
         "0: stated for the encoder's network; the book keeps it for the decoder's."),
        (tuple(biases), r"b_2 \text{ of both FFNs}, b_{\text{out}}", "post and book",
         "0: stated for the encoder's network and the output layer; the book keeps it for the decoder's."),
    ]
    return [WeightEntry(names, tex, p[names[0]].copy(), source, why) for names, tex, source, why in rows]


def loss_and_grads(params: dict, label_smoothing: float = LABEL_SMOOTHING):
    """The exact path as a function of all 34 parameters, embedding tables included, for a training step.

    X = sqrt(d_model) E[ids] + PE + R from ``params["E_src"]`` and ``params["E_tgt"]`` (``inputs_from_tables``),
    then ``byhand.encdec`` forward and backward. Returns (loss, p, grads): the smoothed loss, the scored row's
    probabilities (V,), and every parameter's gradient, the tables' as in ``embedding_grads``. At ``toy_params()``
    it gives the exact path's loss, p and gradients.
    """
    config = toy_config()
    X_src, X_tgt = inputs_from_tables(params["E_src"], params["E_tgt"])
    logits, cache = encdec_forward_embedded(params, X_src, X_tgt, config)  # (T_t, V)
    loss, c, dlogits = _loss_part(logits, label_smoothing)
    grads, gtrace = encdec_backward(dlogits, cache)
    scale = math.sqrt(config.d_model)
    for side, E in (("src", "E_src"), ("tgt", "E_tgt")):
        _, emb_cache = embedding_forward(round_inputs(side).ids, params[E])
        grads[E] = embedding_backward(gtrace[f"dX_{side}"] * scale, emb_cache)  # (V, d_model)
    return loss, c["p"][SCORED], grads
