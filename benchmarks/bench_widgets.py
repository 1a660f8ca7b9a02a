"""How fast each widget responds: the state function (the callback's arithmetic) and the full redraw.

Every widget in the book calls a pure ``byhand.views`` state function and then draws a matplotlib figure. The book's
bar is that the callback responds in under 50 ms. This script times, for each widget, on the inputs its chapter uses:
  - ``state``: the state function alone (the numbers the widget shows), median of many calls;
  - ``redraw``: state + ``draw`` + rendering the figure to PNG, which is what a live widget does on each move.
It prints a table and exits 1 if any state function takes 50 ms or more. Run with `make bench` or directly:
    .venv/bin/python benchmarks/bench_widgets.py
"""
from __future__ import annotations

import io
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from byhand import ioi, toy_2017, toy_gpt  # noqa: E402
from byhand.attention import causal_mask  # noqa: E402
from byhand.gpt import gpt_forward, gpt_loss_and_grads  # noqa: E402
from byhand.optim import AdamWConfig  # noqa: E402
from byhand.views import backprop, derivatives, inside, learning, logs  # noqa: E402
from byhand.views import softmax as softmax_view  # noqa: E402
from byhand.views import (adamw, dot, embeddings, fdstep, gelu, heads, layernorm, logits, nudge,  # noqa: E402
                          params as params_view, qkv, scores, smoothing, warmup)

LIMIT_MS = 50.0


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def redraw_ms(draw, setting, repeats: int = 5) -> float:
    def once():
        fig = plt.figure(figsize=(7, 3), dpi=72)
        draw(fig, setting)
        fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
    return median_ms(once, repeats)


def cases():
    """(chapter, widget, state callable, draw(fig, setting), a setting) for every widget of the book."""
    rng = np.random.default_rng(0)
    q, r = rng.normal(size=64), rng.normal(size=64)
    P = toy_gpt.toy_params()
    ids, targets = toy_gpt.toy_batch()
    cfg = toy_gpt.TOY_CONFIG
    _, cache = gpt_forward(P, ids, cfg)
    tr = cache["trace"]
    loss, grads, _ = toy_gpt.toy_loss_and_grads(P)
    x_row = tr["block0.res1"][2]
    S = tr["block0.attn.S"][0]  # (T, T) head 1
    opt = AdamWConfig(lr=1e-2, weight_decay=0.01)
    z = toy_2017.rounded_path().logits  # (4,) the scored position's logits
    yield ("01 dot products", "turn k, nudge k_j", lambda: dot.dot_state(q, r, 30.0, 4, 0.5),
           dot.dot_view(q, r), {"theta": 30.0, "j": 4, "delta": 0.5})
    # Part I and IV: the trained model's mid checkpoint on the running example
    mp, mcfg, vocab, meta = ioi.load_model("mid")
    mids = vocab.encode(ioi.EXAMPLE)  # (T,)
    a = int(vocab.encode("Mary", bos=False)[0])
    words = [vocab.decode([i]) for i in range(mcfg.vocab_size)]
    mtargets = np.full(mids.shape, -1)
    mtargets[-1] = a  # score only the name
    _, mgrads, mtrace = gpt_loss_and_grads(mp, (mids, mtargets), mcfg)
    z = mtrace["logits"][-1]  # (V,) logits at the final "to"
    p0 = float(learning.final_probs(mp, mids, mcfg)[a])
    g2 = learning.grad_norm2(mgrads)
    sg = backprop.stream_grads(mtrace, mcfg.n_layers)
    nm = meta["final"]["name_mover"]
    held = ioi.generate(10, seed=0, split="heldout")
    runs = {"mid": inside.run_sentences(mp, mcfg, vocab, held, nm["layer"], nm["head"])}
    yield ("02 softmax", "nudge a logit, τ", lambda: softmax_view.softmax_state(z, words, "Mark", 1.0, 1.5), None, None)
    yield ("03 logs", "right answer", lambda: logs.logs_state(z, words, "John"), None, None)
    yield ("04 derivatives", "step h", lambda: derivatives.secant_state(z, a, a, 1e-3), None, None)
    yield ("05 backprop", "position", lambda: backprop.stream_state(sg, mids.size - 1), None, None)
    yield ("06 learning", "learning rate", lambda: learning.step_state(mp, mgrads, mids, a, mcfg, 1e-3, p0, g2),
           None, None)
    yield ("40 inside the model", "sentence", lambda: inside.inside_state(runs, "mid", 0), None, None)
    yield ("10 toy model", "d_model", lambda: params_view.param_state(32), None, None)
    yield ("11 embeddings", "token and position", lambda: embeddings.x0_row_state(P, "like", 3), None, None)
    yield ("12 qkv", "nudge x", lambda: qkv.qkv_state(tr["block0.ln1"], P["block0.attn.W_q"],
                                                        P["block0.attn.b_q"], 2, 1, 0, 0.5), None, None)
    yield ("13 scores", "nudge a score", lambda: scores.score_state(S, causal_mask(5), 3, 1, 0.5), None, None)
    yield ("14 multi-head", "head weight", lambda: heads.head_state(tr["block0.attn.O_heads"],
                                                                  P["block0.attn.W_o"], P["block0.attn.b_o"], 4, 0.5),
           None, None)
    yield ("15 feed-forward", "x", lambda: gelu.gelu_state(0.5), None, None)
    yield ("16 layer norm", "scale", lambda: layernorm.ln_state(x_row, np.ones(16), np.zeros(16), scale=2.0), None, None)
    yield ("17 logits", "nudge a logit", lambda: logits.logit_state(tr["logits"], targets, 1, 2, 0.5), None, None)
    yield ("20-23 backward", "nudge a weight", lambda: nudge.nudge_state(P, (ids, targets), cfg, "W_out", (3, 2), 0.1),
           None, None)
    yield ("24 gradient check", "step h", lambda: fdstep.fd_state(P, (ids, targets), cfg, "W_out", (3, 2), 1e-5),
           None, None)
    yield ("25 AdamW", "learning rate", lambda: adamw.adamw_state(P, grads, (ids, targets), cfg, opt, 1e-2),
           None, None)
    yield ("34 output and loss", "nudge a logit / ε", lambda: smoothing.smoothing_state(z, 2, 0.1, 0, 0.5), None, None)
    yield ("36 Adam warm-up", "step t", lambda: warmup.warmup_state(4000), None, None)


def main() -> int:
    print(f"{'chapter':22} {'widget':22} {'state ms':>9} {'redraw ms':>10}")
    slow = []
    for chapter, widget, state, draw, setting in cases():
        ms = median_ms(state, 50)
        redraw = f"{redraw_ms(draw, setting):10.1f}" if draw is not None else f"{'':>10}"
        print(f"{chapter:22} {widget:22} {ms:9.3f} {redraw}")
        if ms >= LIMIT_MS:
            slow.append(chapter)
    print(f"state functions at or over {LIMIT_MS:.0f} ms: {', '.join(slow) if slow else 'none'}")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
