"""One training step of the Part IV model: byhand vs the same model in eager PyTorch (CPU), in one process.

A step is what ``byhand.train_ioi`` does: forward, the objective (loss + lambda_IO loss_IO), backward,
global-norm clipping, AdamW with a decay and a no-decay group. Both sides get the same float32 weights and the same batch of 32 IOI sentences; medians over
interleaved repeats (byhand, torch, byhand, ...) after a warm-up, so that load from other processes hits both.

    .venv/bin/python benchmarks/bench_train.py                 # step times and the ratio, 1 thread
    .venv/bin/python benchmarks/bench_train.py --threads 2     # both sides on 2 threads
    .venv/bin/python benchmarks/bench_train.py --train         # plus the wall time of the full 2000-step run
    .venv/bin/python benchmarks/bench_train.py --profile       # plus cProfile of one byhand step

Results: benchmarks/README.md, section "Training the Part IV model".
"""
from __future__ import annotations

import argparse
import os
import sys

if __name__ == "__main__":  # the BLAS reads its thread count once, at import: set it before numpy loads
    _threads = sys.argv[sys.argv.index("--threads") + 1] if "--threads" in sys.argv else "1"
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _threads

import cProfile  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from byhand import ioi  # noqa: E402
from byhand.gpt import init_gpt_params  # noqa: E402
from byhand.optim import AdamWConfig, adamw_step, clip_grad_norm, init_state  # noqa: E402
from byhand.train_ioi import TrainConfig, answer_targets, decays, objective, set_malloc_thresholds, train  # noqa: E402


def torch_gpt_logits(tp: dict, ids, cfg):
    """byhand.gpt's pre-LN GPT in torch ops: tied head, GELU (tanh), biases on Q, K, V, O, causal attention."""
    F = torch.nn.functional
    B, T = ids.shape
    d, h = cfg.d_model, cfg.n_heads
    x = tp["E"][ids] + tp["P"][:T]  # (B, T, d)
    for i in range(cfg.n_layers):
        p = f"block{i}."
        a = F.layer_norm(x, (d,), tp[p + "ln1.gamma"], tp[p + "ln1.beta"], eps=cfg.ln_eps)
        q, k, v = ((a @ tp[p + f"attn.W_{n}"] + tp[p + f"attn.b_{n}"]).view(B, T, h, d // h).transpose(1, 2)
                   for n in "qkv")  # (B, h, T, d_k) each
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, d)
        x = x + o @ tp[p + "attn.W_o"] + tp[p + "attn.b_o"]
        a = F.layer_norm(x, (d,), tp[p + "ln2.gamma"], tp[p + "ln2.beta"], eps=cfg.ln_eps)
        x = x + F.gelu(a @ tp[p + "ffn.W_1"] + tp[p + "ffn.b_1"], approximate="tanh") @ tp[p + "ffn.W_2"] + tp[p + "ffn.b_2"]
    x = F.layer_norm(x, (d,), tp["ln_f.gamma"], tp["ln_f.beta"], eps=cfg.ln_eps)
    return x @ tp["E"].T  # (B, T, V)


def make_steps(tc: TrainConfig):
    """The two zero-argument step functions, on the same weights and the first training batch of ``tc``."""
    vocab = ioi.build_vocab()
    cfg = tc.model_config(len(vocab))
    sentences = ioi.generate(tc.batch_size, seed=tc.seed + 1)
    ids, targets = ioi.encode_batch([s.text for s in sentences], vocab)
    io_targets, targets = answer_targets(ids, targets, sentences, vocab, tc.mask_s2)
    params = init_gpt_params(cfg, seed=tc.seed, dtype=np.float32)
    opt = AdamWConfig(lr=tc.lr_max, weight_decay=tc.weight_decay, decay=decays)
    box = {"params": params, "state": init_state(params)}  # the byhand side carries its state from step to step

    def byhand_step():
        loss, _, grads = objective(box["params"], (ids, targets), io_targets, tc.io_weight, cfg)
        grads, _ = clip_grad_norm(grads, tc.clip)
        box["params"], box["state"], _ = adamw_step(box["params"], grads, box["state"], opt, lr=tc.lr_max)
        return loss

    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}  # float32, as byhand
    groups = [{"params": [tp[k] for k in tp if decays(k)], "weight_decay": tc.weight_decay},
              {"params": [tp[k] for k in tp if not decays(k)], "weight_decay": 0.0}]
    topt = torch.optim.AdamW(groups, lr=tc.lr_max)
    t_ids, t_targets, t_io = torch.tensor(ids), torch.tensor(targets).reshape(-1), torch.tensor(io_targets).reshape(-1)

    def torch_step():
        topt.zero_grad()
        logits = torch_gpt_logits(tp, t_ids, cfg).reshape(-1, cfg.vocab_size)
        loss = torch.nn.functional.cross_entropy(logits, t_targets, ignore_index=-1)
        loss_io = torch.nn.functional.cross_entropy(logits, t_io, ignore_index=-1)
        (loss + tc.io_weight * loss_io).backward()
        torch.nn.utils.clip_grad_norm_(list(tp.values()), tc.clip)
        topt.step()
        return float(loss.detach())

    # the same computation first, then the speeds
    first_b, first_t = byhand_step(), torch_step()
    assert math.isclose(first_b, first_t, rel_tol=1e-4), (first_b, first_t)
    return byhand_step, torch_step, int((targets >= 0).sum())


def time_interleaved(fa, fb, repeats: int, warmup: int = 5):
    """Lists of wall times (ms) of fa and fb, called alternately."""
    for _ in range(warmup):
        fa(), fb()
    ta, tb = [], []
    for _ in range(repeats):
        for f, out in ((fa, ta), (fb, tb)):
            t0 = time.perf_counter()
            f()
            out.append(1e3 * (time.perf_counter() - t0))
    return ta, tb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1, as the training)")
    ap.add_argument("--repeats", type=int, default=60, help="timed steps per side (default %(default)s)")
    ap.add_argument("--train", action="store_true", help="also time the full training run (no progress bar)")
    ap.add_argument("--profile", action="store_true", help="also cProfile 20 byhand steps")
    ap.add_argument("--no-mallopt", action="store_true", help="keep glibc's default malloc thresholds")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    tuned = False if args.no_mallopt else set_malloc_thresholds()
    tc = TrainConfig()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
          f"{np.__version__}, torch {torch.__version__}; threads {args.threads}; malloc thresholds raised: {tuned}")
    byhand_step, torch_step, tokens = make_steps(tc)
    tb, tt = time_interleaved(byhand_step, torch_step, args.repeats)
    mb, mt = statistics.median(tb), statistics.median(tt)
    print(f"one training step, B = {tc.batch_size} sentences ({tokens} target tokens), float32, "
          f"median (min) of {args.repeats}:")
    print(f"  byhand {mb:7.2f} ms ({min(tb):.2f})   {tokens / mb * 1e3:8,.0f} tokens/s")
    print(f"  torch  {mt:7.2f} ms ({min(tt):.2f})   {tokens / mt * 1e3:8,.0f} tokens/s")
    print(f"  ratio byhand / torch = {mb / mt:.2f}x")
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20):
            byhand_step()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    if args.train:
        t0 = time.perf_counter()
        train(tc)
        print(f"full training run ({tc.steps} steps, byhand): {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
