"""The Part IV training loop against PyTorch: clipping, the warm-up + cosine schedule, and whole training steps.

torch's own machinery is the oracle: torch.nn.utils.clip_grad_norm_, the LinearLR and CosineAnnealingLR
schedulers, and torch.optim.AdamW with two parameter groups, driving the same GPT written in torch ops.
"""
import dataclasses
import math

import numpy as np
import pytest

from byhand import ioi
from byhand.optim import clip_grad_norm, cosine_lr
from byhand.train_ioi import TrainConfig, answer_targets, decays, train
from byhand.gpt import init_gpt_params


@pytest.mark.parametrize("max_norm", [0.05, 1.0, 1e3])
def test_clip_grad_norm_matches_torch(torch, max_norm):
    rng = np.random.default_rng(0)
    grads = {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal(5) * 0.1, "c": np.zeros((2, 2))}
    ours, total = clip_grad_norm(grads, max_norm)
    tensors = {k: torch.zeros(v.shape, requires_grad=True) for k, v in grads.items()}
    for k, t in tensors.items():
        t.grad = torch.tensor(grads[k])
    theirs = torch.nn.utils.clip_grad_norm_(list(tensors.values()), max_norm)
    assert total == pytest.approx(float(theirs), rel=1e-14)
    for k in grads:
        np.testing.assert_allclose(ours[k], tensors[k].grad.numpy(), rtol=1e-14, atol=0, err_msg=k)
    clipped_norm = math.sqrt(sum(float(np.sum(g**2)) for g in ours.values()))
    assert clipped_norm <= max_norm * (1 + 1e-12)


@pytest.mark.parametrize("warmup,total,lr_min", [(10, 50, 0.0), (100, 2000, 1e-4), (1, 7, 3e-4)])
def test_cosine_lr_matches_linear_then_cosine_annealing(torch, warmup, total, lr_min):
    """Warm-up: cosine_lr(t) is LinearLR at its step t - 1. Decay: cosine_lr(warmup + j) is CosineAnnealingLR at j."""
    lr_max = 2e-3
    w = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([w], lr=lr_max)
    if warmup > 1:
        linear = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / warmup, end_factor=1.0, total_iters=warmup - 1)
        for t in range(1, warmup + 1):
            assert cosine_lr(t, lr_max, warmup, total, lr_min) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12), t
            opt.step()
            linear.step()
    opt = torch.optim.SGD([w], lr=lr_max)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=lr_min)
    for j in range(total - warmup + 1):
        want = opt.param_groups[0]["lr"]
        assert cosine_lr(warmup + j, lr_max, warmup, total, lr_min) == pytest.approx(want, rel=1e-9, abs=1e-15), j
        opt.step()
        cosine.step()


def _torch_gpt_logits(torch, tp, ids, cfg):
    """The pre-LN GPT of byhand.gpt in torch ops: tied head, GELU (tanh), biases on Q, K, V, O."""
    F = torch.nn.functional
    B, T = ids.shape
    d, h = cfg.d_model, cfg.n_heads
    x = tp["E"][ids] + tp["P"][:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    for i in range(cfg.n_layers):
        p = f"block{i}."
        a = F.layer_norm(x, (d,), tp[p + "ln1.gamma"], tp[p + "ln1.beta"], eps=cfg.ln_eps)
        q, k, v = ((a @ tp[p + f"attn.W_{n}"] + tp[p + f"attn.b_{n}"]).view(B, T, h, d // h).transpose(1, 2)
                   for n in "qkv")
        s = (q @ k.transpose(-1, -2) / math.sqrt(d // h)).masked_fill(~causal, -math.inf)
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d)
        x = x + o @ tp[p + "attn.W_o"] + tp[p + "attn.b_o"]
        a = F.layer_norm(x, (d,), tp[p + "ln2.gamma"], tp[p + "ln2.beta"], eps=cfg.ln_eps)
        x = x + F.gelu(a @ tp[p + "ffn.W_1"] + tp[p + "ffn.b_1"], approximate="tanh") @ tp[p + "ffn.W_2"] + tp[p + "ffn.b_2"]
    x = F.layer_norm(x, (d,), tp["ln_f.gamma"], tp["ln_f.beta"], eps=cfg.ln_eps)
    return (x @ tp["E"].T).reshape(B * T, cfg.vocab_size)


def test_training_steps_match_torch_adamw_clip_and_schedule(torch):
    """train() for 8 steps (float32) against the same loop in torch (float64): the objective
    loss + lambda_IO loss_IO, AdamW with a no-decay group, clip_grad_norm_, LinearLR then CosineAnnealingLR.
    Clipping is active (max norm 0.5) on every step. The shipped run's switches (io_weight, mask_s2) are used."""
    shipped = TrainConfig()
    tc = TrainConfig(seed=3, steps=8, batch_size=4, lr_max=3e-3, lr_min=1e-4, warmup=3, weight_decay=0.1, clip=0.5,
                     n_layers=2, n_heads=2, d_model=16, d_ff=32, io_weight=shipped.io_weight, mask_s2=shipped.mask_s2)
    params, _, history = train(tc)
    vocab = ioi.build_vocab()
    cfg = tc.model_config(len(vocab))
    init = init_gpt_params(cfg, seed=tc.seed, dtype=np.float32)
    tp = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in init.items()}
    groups = [{"params": [tp[k] for k in tp if decays(k)], "weight_decay": tc.weight_decay},
              {"params": [tp[k] for k in tp if not decays(k)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=tc.lr_max, betas=(0.9, 0.999), eps=1e-8)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [
        torch.optim.lr_scheduler.LinearLR(opt, start_factor=1 / tc.warmup, end_factor=1.0, total_iters=tc.warmup - 1),
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=tc.steps - tc.warmup, eta_min=tc.lr_min)],
        milestones=[tc.warmup - 1])  # step t is torch's step t - 1; the cosine starts at t = warmup
    sentences = ioi.generate(tc.steps * tc.batch_size, seed=tc.seed + 1)
    ids, targets = ioi.encode_batch([s.text for s in sentences], vocab)
    io_targets, targets = answer_targets(ids, targets, sentences, vocab, tc.mask_s2)
    F = torch.nn.functional
    for t in range(1, tc.steps + 1):
        rows = slice((t - 1) * tc.batch_size, t * tc.batch_size)
        opt.zero_grad()
        logits = _torch_gpt_logits(torch, tp, torch.tensor(ids[rows]), cfg)
        loss = F.cross_entropy(logits, torch.tensor(targets[rows]).reshape(-1), ignore_index=-1)
        loss_io = F.cross_entropy(logits, torch.tensor(io_targets[rows]).reshape(-1), ignore_index=-1)
        (loss + tc.io_weight * loss_io).backward()
        norm = torch.nn.utils.clip_grad_norm_(list(tp.values()), tc.clip)
        assert history["lr"][t - 1] == pytest.approx(opt.param_groups[0]["lr"], rel=1e-9), t
        assert history["loss"][t - 1] == pytest.approx(loss.item(), rel=1e-5), t
        assert history["loss_io"][t - 1] == pytest.approx(loss_io.item(), rel=1e-5), t
        assert history["grad_norm"][t - 1] == pytest.approx(float(norm), rel=1e-4), t
        assert float(norm) > tc.clip  # the clip did act
        opt.step()
        sched.step()
    for k, v in params.items():
        np.testing.assert_allclose(v, tp[k].detach().numpy(), rtol=0, atol=2e-5, err_msg=k)


def test_decay_groups_are_matrices_and_embeddings():
    assert decays("E") and decays("P") and decays("block0.attn.W_q") and decays("block2.ffn.W_2")
    assert not any(decays(k) for k in ("block0.attn.b_q", "block1.ln1.gamma", "ln_f.beta", "block0.ffn.b_1"))
    assert dataclasses.is_dataclass(TrainConfig)
