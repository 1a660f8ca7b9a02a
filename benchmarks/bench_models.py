"""Forward + backward of byhand's GPT decoder against the same model in eager PyTorch, in one process.

Both sides get the same weights and the same batch; one timed call is loss + every gradient
(byhand: ``gpt_loss_and_grads``; torch: logits, F.cross_entropy, ``loss.backward()``). Medians over
repeats after a warm-up, with time.perf_counter. Threads: torch and the NumPy BLAS both use every core.

    .venv/bin/python benchmarks/bench_models.py             # the table (what ``make bench`` runs)
    .venv/bin/python benchmarks/bench_models.py --profile   # plus cProfile of byhand at mid size, float32

Targets: byhand/torch <= 1.0x at the Part II toy size, <= 1.5x at mid size. Results: benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import os

N_CORES = os.cpu_count() or 1
# the BLAS reads these once, at import: set them before numpy loads (a script, so this is not library code)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, str(N_CORES))

import cProfile  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from byhand.gpt import GPTConfig, gpt_loss_and_grads, init_gpt_params  # noqa: E402

SIZES = {
    # name: (config, batch size B, tokens T, repeats, target ratio byhand/torch)
    "toy": (GPTConfig(vocab_size=10, context=8, d_model=16, n_heads=2, n_layers=1, d_ff=64), 1, 5, 300, 1.0),
    "mid": (GPTConfig(vocab_size=512, context=128, d_model=256, n_heads=4, n_layers=2, d_ff=1024), 16, 128, 9, 1.5),
}
WARMUP = 3


def torch_gpt_loss(tp: dict, ids, targets, cfg: GPTConfig):
    """The same pre-LN GPT in torch.nn.functional ops (GPT-2 arithmetic, tied or untied head)."""
    F = torch.nn.functional
    d, h = cfg.d_model, cfg.n_heads
    B, T = ids.shape
    x = tp["E"][ids] + tp["P"][:T]  # (B, T, d)

    def heads(y):  # (B, T, d) -> (B, h, T, d_k)
        return y.view(B, T, h, d // h).transpose(1, 2)

    for i in range(cfg.n_layers):
        p = f"block{i}."
        a = F.layer_norm(x, (d,), tp[p + "ln1.gamma"], tp[p + "ln1.beta"], eps=cfg.ln_eps)
        Q = heads(a @ tp[p + "attn.W_q"] + tp[p + "attn.b_q"])
        K = heads(a @ tp[p + "attn.W_k"] + tp[p + "attn.b_k"])
        V = heads(a @ tp[p + "attn.W_v"] + tp[p + "attn.b_v"])
        O = F.scaled_dot_product_attention(Q, K, V, is_causal=True).transpose(1, 2).reshape(B, T, d)
        x = x + O @ tp[p + "attn.W_o"] + tp[p + "attn.b_o"]
        a = F.layer_norm(x, (d,), tp[p + "ln2.gamma"], tp[p + "ln2.beta"], eps=cfg.ln_eps)
        g = F.gelu(a @ tp[p + "ffn.W_1"] + tp[p + "ffn.b_1"], approximate=cfg.gelu if cfg.gelu == "tanh" else "none")
        x = x + g @ tp[p + "ffn.W_2"] + tp[p + "ffn.b_2"]
    x = F.layer_norm(x, (d,), tp["ln_f.gamma"], tp["ln_f.beta"], eps=cfg.ln_eps)
    logits = x @ (tp["E"].T if cfg.tie_weights else tp["W_out"])
    return F.cross_entropy(logits.reshape(-1, cfg.vocab_size), targets.reshape(-1), ignore_index=-1)


def time_pair(fn_a, fn_b, repeats: int) -> tuple[list[float], list[float]]:
    """Wall times (ms) of fn_a() and fn_b(), alternating call by call after WARMUP untimed calls of each.

    Alternating means that a burst of load from another process slows both sides, not just one,
    so the ratio of the medians stays meaningful on a shared machine.
    """
    for _ in range(WARMUP):
        fn_a()
        fn_b()
    times_a, times_b = [], []
    for _ in range(repeats):
        for fn, times in ((fn_a, times_a), (fn_b, times_b)):
            t0 = time.perf_counter()
            fn()
            times.append(1e3 * (time.perf_counter() - t0))
    return times_a, times_b


def setup(size: str, dtype):
    """Weights, batch and the two zero-argument step functions for one size and dtype."""
    cfg, B, T, _, _ = SIZES[size]
    params = init_gpt_params(cfg, seed=0, dtype=dtype)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, cfg.vocab_size, size=(B, T))
    targets = rng.integers(0, cfg.vocab_size, size=(B, T))
    tdtype = torch.float32 if dtype == np.float32 else torch.float64
    tp = {n: torch.tensor(a, dtype=tdtype, requires_grad=True) for n, a in params.items()}
    t_ids, t_targets = torch.tensor(ids), torch.tensor(targets)

    def byhand_step():
        return gpt_loss_and_grads(params, (ids, targets), cfg)

    def torch_step():
        for p in tp.values():
            p.grad = None
        loss = torch_gpt_loss(tp, t_ids, t_targets, cfg)
        loss.backward()
        return loss

    # the two must compute the same thing before their speeds mean anything
    loss_b = byhand_step()[0]
    loss_t = float(torch_step().detach())
    assert math.isclose(loss_b, loss_t, rel_tol=1e-4 if dtype == np.float32 else 1e-10), (size, loss_b, loss_t)
    return byhand_step, torch_step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="cProfile byhand at mid and toy size, float32")
    parser.add_argument("--size", choices=list(SIZES), action="append", help="only this size (repeatable)")
    parser.add_argument("--dtype", choices=["float32", "float64"], action="append", help="only this dtype")
    args = parser.parse_args()
    torch.set_num_threads(N_CORES)
    print(f"machine: {platform.machine()}, {N_CORES} cores, Python {platform.python_version()}, "
          f"numpy {np.__version__}, torch {torch.__version__}, torch threads {torch.get_num_threads()}")
    print("median (min) milliseconds per forward + backward; ratio = median byhand / median torch")
    print(f"{'size':<5} {'dtype':<8} {'byhand ms':>18} {'torch ms':>18} {'ratio':>7} {'target':>7}  met")
    for size in args.size or list(SIZES):
        *_, repeats, target = SIZES[size]
        for dtype in [np.dtype(name).type for name in args.dtype or ["float32", "float64"]]:
            byhand_step, torch_step = setup(size, dtype)
            times_b, times_t = time_pair(byhand_step, torch_step, repeats)
            t_b, min_b = statistics.median(times_b), min(times_b)
            t_t, min_t = statistics.median(times_t), min(times_t)
            ratio = t_b / t_t
            met = "yes" if ratio <= target else "NO"
            b_col, t_col = f"{t_b:.3f} ({min_b:.3f})", f"{t_t:.3f} ({min_t:.3f})"
            print(f"{size:<5} {np.dtype(dtype).name:<8} {b_col:>18} {t_col:>18} {ratio:>6.2f}x {target:>6.1f}x  {met}",
                  flush=True)
    if args.profile:
        for size in ("mid", "toy"):
            byhand_step, _ = setup(size, np.float32)
            byhand_step()
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(5 if size == "mid" else 200):
                byhand_step()
            prof.disable()
            print(f"\ncProfile, byhand {size} float32:")
            pstats.Stats(prof).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
