"""Train the Part IV model: a 3-layer GPT on indirect-object sentences, with ``byhand`` alone, in float32.

Taught in Part IV, "Inside a model that learned something" (how the shipped weights were made). Every step is

    loss, g = objective(theta, batch)                   loss + lambda_IO loss_IO and every gradient
    g, norm = clip_grad_norm(g, clip)                   global L2 norm at most ``clip``
    lr      = cosine_lr(t, lr_max, warmup, steps, lr_min)
    theta   = adamw_step(theta, g, state, lr=lr)        decoupled decay on matrices and embeddings only

where loss is the mean next-token cross-entropy over every word and loss_IO that of the answer alone (the IO
after the final "to"). The extra weight on the answer (lambda_IO = 1) brings the task's phase change forward
from step ~1100 to ~230, and ignoring the target at the second mention of S (a coin flip between the two
names, ``mask_s2``) removes the pull towards heads that attend to both names alike: with both switches on, a
selective name-moving head grows. Batch t holds sentences (t-1)B .. tB-1 of one prefix-stable stream
(``byhand.ioi.generate``), so a run of 50 steps sees exactly the first 50 batches of the full run. Regenerate the shipped files with

    OPENBLAS_NUM_THREADS=1 python -m byhand.train_ioi --out src/byhand/data

One BLAS thread is what the shipped run used: the thread count can change float32 round-off. ``main`` raises
glibc's malloc thresholds (mallopt, the same as MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=268435456)
so that the per-step buffers are reused instead of being returned to the system and faulted back in.
"""
from __future__ import annotations

import argparse
import ctypes
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

import byhand
from byhand import ioi
from byhand.gpt import GPTConfig, gpt_backward, gpt_forward, init_gpt_params
from byhand.loss import cross_entropy_backward, cross_entropy_forward
from byhand.optim import AdamWConfig, adamw_step, clip_grad_norm, cosine_lr, init_state
from byhand.train_config import TrainConfig  # the recipe, shared with chapter 40 and its exercises

MID_TARGET = 0.68  # P(Mary) on ioi.EXAMPLE that the mid checkpoint aims at (GPT-2 small's reported 0.677, byhand.reported)


def decays(name: str) -> bool:
    """AdamW decays weight matrices and the embeddings E and P, not biases or layer-norm gains (as nanoGPT)."""
    leaf = name.rsplit(".", 1)[-1]
    return leaf in ("E", "P") or leaf.startswith("W_")


def answer_targets(ids, targets, sentences, vocab, mask_s2: bool):
    """(io_targets, targets): io_targets (N, T) keeps only the answer (the IO after the final "to"), -1 elsewhere;
    targets loses the second mention of S when ``mask_s2``."""
    n = (targets >= 0).sum(axis=1)  # (N,) counted positions; the last two targets are IO and <eos>
    rows = np.arange(len(targets))
    io_targets = np.full_like(targets, -1)  # (N, T)
    io_targets[rows, n - 2] = targets[rows, n - 2]
    if mask_s2:
        s_id = np.array([vocab.index[x.s] for x in sentences])  # (N,)
        is_s = targets == s_id[:, None]  # (N, T): the two mentions of S
        second = is_s & (np.cumsum(is_s, axis=1) == 2)  # (N, T)
        targets = np.where(second, -1, targets)
    return io_targets, targets


def objective(params, batch, io_targets, io_weight: float, config: GPTConfig):
    """(loss, loss_IO, grads) of the training objective loss + lambda_IO * loss_IO, with byhand's pieces.

    loss is the mean next-token cross-entropy over every counted position; loss_IO the mean cross-entropy of
    the answer alone. The two share one forward and one backward: dlogits is the sum of their fused p - q.
    """
    ids, targets = batch
    logits, cache = gpt_forward(params, ids, config)  # (B, T, V)
    loss, c_lm = cross_entropy_forward(logits, targets)
    loss_io, c_io = cross_entropy_forward(logits, io_targets)
    dlogits = cross_entropy_backward(1.0, c_lm)  # (B, T, V): (p - y) / n on counted positions
    if io_weight:
        dlogits = dlogits + cross_entropy_backward(io_weight, c_io)  # (B, T, V): plus lambda (p - y) / B at answers
    grads, _ = gpt_backward(dlogits, cache)
    return float(loss), float(loss_io), grads


def train(tc: TrainConfig, stop: int | None = None, progress: bool = False):
    """Run ``stop`` (default: all) steps of ``tc``; returns (params, mid_params, history).

    history is a dict of lists, one entry per step: "step", "lr", "loss" and "loss_io" (the batch's mean
    next-token loss and answer loss, before the update),
    "grad_norm" (before clipping), "p_mary" (P(Mary) after ioi.EXAMPLE, float32, after the update).
    mid_params is a copy of the weights at the step whose p_mary is closest to MID_TARGET, looking only at
    steps before p_mary first reaches 0.9 (so a late dip cannot be chosen); history["mid_step"] names it.
    """
    vocab = ioi.build_vocab()
    config = tc.model_config(len(vocab))
    n_steps = tc.steps if stop is None else stop
    sentences = ioi.generate(n_steps * tc.batch_size, seed=tc.seed + 1, split="train")
    ids, targets = ioi.encode_batch([s.text for s in sentences], vocab)  # (n_steps B, T) each
    io_targets, targets = answer_targets(ids, targets, sentences, vocab, tc.mask_s2)
    example = vocab.encode(ioi.EXAMPLE)  # (T_example,)
    mary = vocab.index["Mary"]
    params = init_gpt_params(config, seed=tc.seed, dtype=np.float32)
    state = init_state(params)
    opt = AdamWConfig(lr=tc.lr_max, beta2=tc.beta2, weight_decay=tc.weight_decay, decay=decays)
    history = {key: [] for key in ("step", "lr", "loss", "loss_io", "grad_norm", "p_mary")}
    mid, mid_gap, searching = dict(params), np.inf, True
    bar = _progress_bar(n_steps, progress)
    for t in range(1, n_steps + 1):
        t0 = time.perf_counter()
        rows = slice((t - 1) * tc.batch_size, t * tc.batch_size)
        batch = (ids[rows], targets[rows])  # (B, T) each
        loss, loss_io, grads = objective(params, batch, io_targets[rows], tc.io_weight, config)
        grads, norm = clip_grad_norm(grads, tc.clip)
        lr = cosine_lr(t, tc.lr_max, tc.warmup, tc.steps, tc.lr_min)
        params, state, _ = adamw_step(params, grads, state, opt, lr=lr)
        logits, _ = gpt_forward(params, example, config)  # (T_example, V), float32
        z = logits[-1].astype(np.float64)  # (V,)
        p_mary = float(np.exp(z[mary] - z.max()) / np.exp(z - z.max()).sum())
        for key, value in zip(history, (t, lr, loss, loss_io, norm, p_mary)):
            history[key].append(value)
        if searching and abs(p_mary - MID_TARGET) < mid_gap:
            mid, mid_gap, history["mid_step"] = dict(params), abs(p_mary - MID_TARGET), t
        searching = searching and p_mary < 0.9
        if bar is not None:
            tokens = int((batch[1] >= 0).sum())
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{tokens / (time.perf_counter() - t0):,.0f}", refresh=False)
            bar.update(1)
    if bar is not None:
        bar.close()
    return params, mid, history


def _progress_bar(total: int, on: bool):
    """A tqdm bar (imported here: reading the book needs no tqdm), or None."""
    if not on:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="train_ioi", unit="step", mininterval=0.5)


def checkpoint_metrics(params: dict, tc: TrainConfig) -> dict:
    """The recorded metrics of one checkpoint (float64 arithmetic, so they reload exactly).

    Held-out accuracy and mean P(IO), P(S); P(Mary) and P(John) after ioi.EXAMPLE; every head's mean
    attention from the final "to" to IO and to S (both mentions); the name-moving head = the head with the
    most attention on IO, its IO/S ratio and its attention row on the example.
    """
    vocab = ioi.build_vocab()
    config = tc.model_config(len(vocab))
    held = ioi.generate(tc.n_eval, seed=tc.eval_seed, split="heldout")
    m = ioi.evaluate(params, config, held, vocab)
    attn_io, attn_s = m["attn_io"].mean(axis=-1), m["attn_s"].mean(axis=-1)  # (L, h) each
    layer, head = np.unravel_index(int(np.argmax(attn_io)), attn_io.shape)
    probs = ioi.next_word_probs(params, config, vocab)
    example = ioi.IOISentence(ioi.EXAMPLE + " Mary", ioi.EXAMPLE, io="Mary", s="John", template=0, io_first=True)
    row = ioi.evaluate(params, config, [example], vocab)
    top = sorted(probs, key=probs.get, reverse=True)[:5]
    return {
        "heldout_accuracy": float(m["correct"].mean()),
        "heldout_correct": int(m["correct"].sum()),
        "heldout_n": len(held),
        "heldout_mean_p_io": float(m["p_io"].mean()),
        "heldout_mean_p_s": float(m["p_s"].mean()),
        "example_p_mary": probs["Mary"],
        "example_p_john": probs["John"],
        "example_top5": {w: probs[w] for w in top},
        "head_attn_io": attn_io.tolist(),
        "head_attn_s": attn_s.tolist(),
        "name_mover": {"layer": int(layer), "head": int(head), "attn_io": float(attn_io[layer, head]),
                       "attn_s": float(attn_s[layer, head]),
                       "ratio": float(attn_io[layer, head] / attn_s[layer, head]),
                       "example_attn_io": float(row["attn_io"][layer, head, 0]),
                       "example_attn_s": float(row["attn_s"][layer, head, 0])},
    }


def set_malloc_thresholds() -> bool:
    """Raise glibc's mmap and trim thresholds in this process (what the MALLOC_*_ env variables do)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc: nothing to tune
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's malloc.h
    return bool(libc.mallopt(M_MMAP_THRESHOLD, 64 << 20)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 256 << 20))


def write_run(out: Path, tc: TrainConfig, params: dict, mid: dict, history: dict, seconds: float) -> dict:
    """Write the weights, vocabulary, metadata, loss curve (CSV and PNG) into ``out``; return the metadata."""
    out.mkdir(parents=True, exist_ok=True)
    vocab = ioi.build_vocab()
    np.savez_compressed(out / "ioi_final.npz", **params)
    np.savez_compressed(out / "ioi_mid.npz", **mid)
    (out / "ioi_vocab.json").write_text(json.dumps(list(vocab.words), indent=0) + "\n")
    keys = ("step", "lr", "loss", "loss_io", "grad_norm", "p_mary")
    lines = [",".join(keys)] + [",".join(repr(v) for v in row) for row in zip(*(history[k] for k in keys))]
    (out / "ioi_loss.csv").write_text("\n".join(lines) + "\n")
    meta = {
        "byhand_version": byhand.__version__,
        "config": dataclasses.asdict(tc.model_config(len(vocab))),
        "train": dataclasses.asdict(tc),
        "seed": tc.seed,
        "steps": tc.steps,
        "mid_step": history["mid_step"],
        "final_loss": history["loss"][-1],
        "final_loss_mean_last_100": float(np.mean(history["loss"][-100:])),
        "train_seconds": round(seconds, 1),
        "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
        "final": checkpoint_metrics(params, tc),
        "mid": checkpoint_metrics(mid, tc),
    }
    (out / "ioi_meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    plot_loss(history, out / "ioi_loss.png")
    return meta


def plot_loss(history: dict, path: Path) -> None:
    """Training losses (log scale) and P(Mary) on the example against the step, saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")  # a file, no window
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(6.4, 5.0), sharex=True, dpi=100)
    ax1.semilogy(history["step"], history["loss"], lw=0.8, label="loss: every word")
    ax1.semilogy(history["step"], history["loss_io"], lw=0.6, alpha=0.7, label="loss_IO: the answer")
    ax1.set_ylabel("batch loss (nats per token)")
    ax1.legend(loc="upper right")
    ax2.plot(history["step"], history["p_mary"], lw=0.8, color="C1")
    ax2.axvline(history["mid_step"], color="grey", ls="--", lw=0.8, label=f"mid checkpoint (step {history['mid_step']})")
    ax2.set_ylabel("P(Mary | example)")
    ax2.set_xlabel("step")
    ax2.legend(loc="lower right")
    fig.suptitle("Training the IOI model with byhand")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> None:
    """Command line: train, then write the run into --out."""
    d = TrainConfig()
    ap = argparse.ArgumentParser(prog="python -m byhand.train_ioi", description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=d.seed, help="weights and data seed (default %(default)s)")
    ap.add_argument("--steps", type=int, default=d.steps, help="training steps (default %(default)s)")
    ap.add_argument("--batch-size", type=int, default=d.batch_size, help="sentences per step (default %(default)s)")
    ap.add_argument("--lr", type=float, default=d.lr_max, help="peak learning rate (default %(default)s)")
    ap.add_argument("--layers", type=int, default=d.n_layers, help="blocks (default %(default)s)")
    ap.add_argument("--out", type=Path, default=Path("ioi_run"), help="output folder (default %(default)s)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    tc = dataclasses.replace(d, seed=args.seed, steps=args.steps, batch_size=args.batch_size, lr_max=args.lr,
                             n_layers=args.layers)
    set_malloc_thresholds()
    t0 = time.perf_counter()
    params, mid, history = train(tc, progress=not args.no_progress)
    seconds = time.perf_counter() - t0
    meta = write_run(args.out, tc, params, mid, history, seconds)
    f, m = meta["final"], meta["mid"]
    print(f"trained {tc.steps} steps in {seconds:.0f} s; final loss {meta['final_loss']:.4f}")
    print(f"final: held-out accuracy {f['heldout_accuracy']:.4f}, P(Mary) {f['example_p_mary']:.4f}, "
          f"name mover {f['name_mover']}")
    print(f"mid (step {meta['mid_step']}): accuracy {m['heldout_accuracy']:.4f}, P(Mary) {m['example_p_mary']:.4f}")
    print(f"wrote {args.out}/ioi_final.npz, ioi_mid.npz, ioi_vocab.json, ioi_meta.json, ioi_loss.csv, ioi_loss.png")


if __name__ == "__main__":
    main()
