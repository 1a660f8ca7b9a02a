"""byhand.optim against torch.optim: five steps on a fixed sequence of random gradients, float64, within 1e-12."""
import numpy as np
import pytest

from byhand.optim import (
    AdamConfig,
    AdamWConfig,
    SGDConfig,
    adam_step,
    adamw_step,
    clip_grad_norm,
    init_state,
    sgd_step,
    warmup_lr,
)

N_STEPS = 5
TOL = 1e-12

SHAPES = {"E": (5, 3), "block0.attn.W_q": (3, 3), "block0.attn.b_q": (3,), "ln_f.gamma": (3,)}


def _params():
    rng = np.random.default_rng(1)
    return {name: rng.standard_normal(shape) for name, shape in SHAPES.items()}


def _grad_sequence(scale=1.0):
    rng = np.random.default_rng(2)
    return [{name: scale * rng.standard_normal(shape) for name, shape in SHAPES.items()} for _ in range(N_STEPS)]


def _torch_params(torch, params):
    return {name: torch.tensor(a, requires_grad=True) for name, a in params.items()}


def _assert_params_close(ours, theirs, step):
    for name, a in ours.items():
        b = theirs[name].detach().numpy()
        err = np.max(np.abs(a - b))
        assert err <= TOL, f"step {step}: param {name} differs from torch by {err:.3e}"


def _run(torch, step_fn, config, make_torch_opt, grad_scale=1.0):
    """Drive byhand and torch side by side; compare every parameter after every step."""
    params = _params()
    tparams = _torch_params(torch, params)
    opt = make_torch_opt(tparams)
    state = init_state(params)
    for t, grads in enumerate(_grad_sequence(grad_scale), start=1):
        params, state, _ = step_fn(params, grads, state, config)
        for name, p in tparams.items():
            p.grad = torch.tensor(grads[name])
        opt.step()
        assert state.t == t
        _assert_params_close(params, tparams, t)


@pytest.mark.parametrize("momentum, weight_decay", [(0.0, 0.0), (0.9, 0.0), (0.9, 0.01), (0.0, 0.1)])
def test_sgd_matches_torch(torch, momentum, weight_decay):
    cfg = SGDConfig(lr=0.05, momentum=momentum, weight_decay=weight_decay)
    _run(torch, sgd_step, cfg,
         lambda tp: torch.optim.SGD(tp.values(), lr=0.05, momentum=momentum, weight_decay=weight_decay))


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_matches_torch(torch, weight_decay):
    cfg = AdamConfig(lr=0.01, beta1=0.8, beta2=0.95, eps=1e-6, weight_decay=weight_decay)
    _run(torch, adam_step, cfg,
         lambda tp: torch.optim.Adam(tp.values(), lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay))


def test_adam_small_gradients_where_eps_matters(torch):
    # gradients of size ~1e-7 make sqrt(v_hat) comparable to eps, so the eps placement is checked too
    cfg = AdamConfig(lr=0.01)
    _run(torch, adam_step, cfg, lambda tp: torch.optim.Adam(tp.values(), lr=0.01), grad_scale=1e-7)


def test_adamw_decay_on_some_params_only(torch):
    # GPT-2 practice: matrices decay, biases, gains and (here) nothing else does
    def decays(name):
        return name.split(".")[-1].startswith(("W", "E"))

    cfg = AdamWConfig(lr=0.01, weight_decay=0.1, decay=decays)

    def make(tp):
        groups = [{"params": [p for n, p in tp.items() if decays(n)], "weight_decay": 0.1},
                  {"params": [p for n, p in tp.items() if not decays(n)], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=0.01)

    _run(torch, adamw_step, cfg, make)


def test_adamw_default_all_params_decay(torch):
    cfg = AdamWConfig(lr=0.02, beta1=0.85, weight_decay=0.5)
    _run(torch, adamw_step, cfg,
         lambda tp: torch.optim.AdamW(tp.values(), lr=0.02, betas=(0.85, 0.999), weight_decay=0.5))


@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_then_adamw_matches_torch(torch, max_norm):
    params = _params()
    tparams = _torch_params(torch, params)
    opt = torch.optim.AdamW(tparams.values(), lr=0.01, weight_decay=0.1)
    cfg = AdamWConfig(lr=0.01, weight_decay=0.1)
    state = init_state(params)
    for t, grads in enumerate(_grad_sequence(), start=1):
        clipped, total = clip_grad_norm(grads, max_norm)
        for name, p in tparams.items():
            p.grad = torch.tensor(grads[name])
        total_torch = torch.nn.utils.clip_grad_norm_(list(tparams.values()), max_norm)
        assert abs(total - float(total_torch)) <= TOL * max(1.0, total)
        for name, p in tparams.items():
            err = np.max(np.abs(clipped[name] - p.grad.numpy()))
            assert err <= TOL, f"step {t}: clipped grad {name} differs from torch by {err:.3e}"
        params, state, _ = adamw_step(params, clipped, state, cfg)
        opt.step()
        _assert_params_close(params, tparams, t)


def test_warmup_lr_matches_lambdalr_driving_adam(torch):
    d_model, warmup, n_steps = 16, 3, 7  # crosses the peak at t = 3
    params = _params()
    tparams = _torch_params(torch, params)
    opt = torch.optim.Adam(tparams.values(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)  # the 2017 paper's betas and eps

    def lam(s):  # LambdaLR counts from s = 0; the paper's step is s + 1. Written here, not taken from byhand.
        step = s + 1
        return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lam)
    cfg = AdamConfig(lr=0.0, beta1=0.9, beta2=0.98, eps=1e-9)
    state = init_state(params)
    rng = np.random.default_rng(3)
    lrs = []
    for t in range(1, n_steps + 1):
        grads = {name: rng.standard_normal(shape) for name, shape in SHAPES.items()}
        lr_torch = opt.param_groups[0]["lr"]
        lr = warmup_lr(t, d_model, warmup)
        assert abs(lr - lr_torch) <= 1e-15, f"step {t}: lr {lr} vs torch {lr_torch}"
        lrs.append(lr)
        params, state, _ = adam_step(params, grads, state, cfg, lr=lr)
        for name, p in tparams.items():
            p.grad = torch.tensor(grads[name])
        opt.step()
        sched.step()
        _assert_params_close(params, tparams, t)
    assert int(np.argmax(lrs)) + 1 == warmup
