"""Optimizers and learning-rate schedules: SGD, Adam, AdamW, the 2017 warm-up, cosine decay, gradient clipping.

Taught in Part II, chapter 'AdamW' (moments, bias correction, decoupled weight decay) and in Part III,
chapter 'Adam and the warm-up schedule' (step 1 and step 4000 of the 2017 paper).

Every step function has one signature, ``step(params, grads, state, config, lr=None) -> (new_params,
new_state, info)``, and is pure: it returns new dicts and leaves its inputs untouched. Hyperparameters live in
a frozen config, the moving parts (t, m, v, momentum buffers b) in an ``OptState``. The formulas are the ones
the PyTorch documentation gives for torch.optim.SGD, torch.optim.Adam and torch.optim.AdamW, in the same order
of operations, so the book's numbers agree with PyTorch to the last few bits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from byhand.checks import as_float, check_dict, check_instance, check_number, is_number


@dataclass(frozen=True)
class SGDConfig:
    """Hyperparameters of SGD with momentum and coupled (L2) weight decay, as torch.optim.SGD."""

    lr: float  # learning rate gamma
    momentum: float = 0.0  # mu; 0 means plain gradient descent
    weight_decay: float = 0.0  # lambda, added to the gradient: g <- g + lambda * theta
    bias_correction: bool = True  # m_hat = m / (1 - beta1^t), v_hat likewise; False uses m and v as they are

    def __post_init__(self):
        check_number("lr", self.lr)
        check_number("momentum", self.momentum)
        check_number("weight_decay", self.weight_decay)


@dataclass(frozen=True)
class AdamConfig:
    """Hyperparameters of Adam with coupled (L2) weight decay, as torch.optim.Adam."""

    lr: float = 1e-3  # learning rate gamma
    beta1: float = 0.9  # decay rate of the first moment m
    beta2: float = 0.999  # decay rate of the second moment v
    eps: float = 1e-8  # added to sqrt(v_hat) so the division never blows up
    weight_decay: float = 0.0  # lambda, added to the gradient: g <- g + lambda * theta
    bias_correction: bool = True  # m_hat = m / (1 - beta1^t), v_hat likewise; False uses m and v as they are

    def __post_init__(self):
        _check_adam_hyper(self)


@dataclass(frozen=True)
class AdamWConfig:
    """Hyperparameters of AdamW with decoupled weight decay, as torch.optim.AdamW."""

    lr: float = 1e-3  # learning rate gamma
    beta1: float = 0.9  # decay rate of the first moment m
    beta2: float = 0.999  # decay rate of the second moment v
    eps: float = 1e-8  # added to sqrt(v_hat) so the division never blows up
    weight_decay: float = 1e-2  # lambda, applied to theta directly: theta <- theta - lr * lambda * theta
    decay: Callable[[str], bool] | None = None  # which params decay (name -> bool); None means all of them
    bias_correction: bool = True  # m_hat = m / (1 - beta1^t), v_hat likewise; False uses m and v as they are

    def __post_init__(self):
        _check_adam_hyper(self)
        if self.decay is not None and not callable(self.decay):
            raise ValueError(f"decay must be None or a callable name -> bool, got {type(self.decay).__name__}")


@dataclass(frozen=True)
class OptState:
    """What an optimizer carries from one step to the next, kept apart from the hyperparameters."""

    t: int  # number of steps taken so far; 0 before the first step (t is 1-based inside a step)
    m: dict  # name -> first moment m (Adam, AdamW)
    v: dict  # name -> second moment v (Adam, AdamW)
    b: dict  # name -> momentum buffer b (SGD with momentum)


def init_state(params: dict, buffers: tuple[str, ...] = ("m", "v", "b")) -> OptState:
    """Fresh optimizer state for ``params``: t = 0 and zero buffers of each parameter's shape and dtype.

    ``buffers`` names the ones to allocate: all three by default; ("m", "v") is enough for Adam and AdamW,
    ("b",) for SGD with momentum and () for plain SGD, which saves memory on a large model.
    """
    unknown = sorted(set(buffers) - {"m", "v", "b"})
    if unknown:
        raise ValueError(f"unknown optimizer buffer(s) {unknown}; choose from 'm', 'v', 'b'")
    check_dict("params", params)
    zeros = {name: np.zeros_like(as_float(f"param {name!r}", p)) for name, p in params.items()}
    m, v, b = ({n: z.copy() for n, z in zeros.items()} if key in buffers else {} for key in ("m", "v", "b"))
    return OptState(t=0, m=m, v=v, b=b)


def sgd_step(params: dict, grads: dict, state: OptState, config: SGDConfig, lr: float | None = None):
    """One step of SGD (torch.optim.SGD, dampening 0, no Nesterov).

    g = grad + lambda * theta;  b = mu * b + g (b = g at t = 1);  theta <- theta - lr * b (theta - lr * g if mu = 0).
    info[name] holds ``g`` (the decayed gradient), ``b`` (when mu > 0) and ``update`` (= -lr * b, the change to theta).
    """
    check_instance("config", config, SGDConfig)
    lr = _resolve_lr(lr, config.lr)
    theta, g_raw = _check_step_inputs(params, grads, state, ("b",) if config.momentum else ())
    t = state.t + 1  # 1-based: the first step is t = 1
    new_params, new_b, info = {}, {}, {}
    for name in theta:
        g = g_raw[name] + config.weight_decay * theta[name] if config.weight_decay else g_raw[name]  # (shape of theta)
        row = {"g": g}
        if config.momentum:
            # torch starts the buffer at g itself on the first step, not at mu * 0 + g; with dampening 0 they agree
            b = g.copy() if t == 1 else config.momentum * state.b[name] + g  # (shape of theta)
            new_b[name] = b
            row["b"] = b
            g = b
        elif name in state.b:
            new_b[name] = state.b[name]  # unused without momentum; passed on unchanged
        row["update"] = -lr * g  # (shape of theta)
        new_params[name] = theta[name] - lr * g  # (shape of theta)
        info[name] = row
    return new_params, OptState(t=t, m=state.m, v=state.v, b=new_b), info


def adam_step(params: dict, grads: dict, state: OptState, config: AdamConfig, lr: float | None = None):
    """One step of Adam with coupled L2 decay (torch.optim.Adam).

    g = grad + lambda * theta;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
    m_hat = m / (1 - beta1^t);  v_hat = v / (1 - beta2^t);  theta <- theta - lr * m_hat / (sqrt(v_hat) + eps).
    info[name] holds ``g``, ``m``, ``v``, ``m_hat``, ``v_hat`` and ``update`` (= -lr * m_hat / (sqrt(v_hat) + eps)).
    """
    check_instance("config", config, AdamConfig)
    lr = _resolve_lr(lr, config.lr)
    theta, g_raw = _check_step_inputs(params, grads, state, ("m", "v"))
    t = state.t + 1  # incremented before the bias correction, so step 1 uses 1 - beta^1
    new_params, new_m, new_v, info = {}, {}, {}, {}
    for name in theta:
        g = g_raw[name] + config.weight_decay * theta[name] if config.weight_decay else g_raw[name]  # coupled L2
        row = _adam_moments(g, state.m[name], state.v[name], t, config, lr)
        new_params[name] = theta[name] + row["update"]  # (shape of theta)
        new_m[name], new_v[name], info[name] = row["m"], row["v"], row
    return new_params, OptState(t=t, m=new_m, v=new_v, b=state.b), info


def adamw_step(params: dict, grads: dict, state: OptState, config: AdamWConfig, lr: float | None = None):
    """One step of AdamW with decoupled weight decay (torch.optim.AdamW).

    theta <- theta - lr * lambda * theta (only for names where ``config.decay(name)`` is true, or all if None);
    then the Adam update with the raw gradient: theta <- theta - lr * m_hat / (sqrt(v_hat) + eps).
    info[name] holds ``g``, ``m``, ``v``, ``m_hat``, ``v_hat``, ``decay`` (= -lr * lambda * theta, or 0) and
    ``update`` (the Adam part, = -lr * m_hat / (sqrt(v_hat) + eps)).
    """
    check_instance("config", config, AdamWConfig)
    lr = _resolve_lr(lr, config.lr)
    theta, g_raw = _check_step_inputs(params, grads, state, ("m", "v"))
    t = state.t + 1  # incremented before the bias correction, so step 1 uses 1 - beta^1
    new_params, new_m, new_v, info = {}, {}, {}, {}
    for name in theta:
        decays = config.weight_decay != 0 and (config.decay is None or bool(config.decay(name)))
        # decoupled: shrink theta itself first; the gradient that feeds m and v carries no decay term
        shrunk = theta[name] * (1 - lr * config.weight_decay) if decays else theta[name]  # (shape of theta)
        row = _adam_moments(g_raw[name], state.m[name], state.v[name], t, config, lr)
        row["decay"] = -lr * config.weight_decay * theta[name] if decays else np.zeros_like(theta[name])
        new_params[name] = shrunk + row["update"]  # (shape of theta)
        new_m[name], new_v[name], info[name] = row["m"], row["v"], row
    return new_params, OptState(t=t, m=new_m, v=new_v, b=state.b), info


def _adam_moments(g, m_prev, v_prev, t, config, lr) -> dict:
    """The shared Adam core: moments, bias-corrected moments and the update -lr * m_hat / (sqrt(v_hat) + eps)."""
    m = config.beta1 * m_prev + (1 - config.beta1) * g  # (shape of theta) running mean of g
    v = config.beta2 * v_prev + (1 - config.beta2) * g * g  # (shape of theta) running mean of g^2
    if config.bias_correction:
        m_hat = m / (1 - config.beta1**t)  # (shape of theta) undoes the pull towards the zero start
        v_hat = v / (1 - config.beta2**t)  # (shape of theta)
    else:  # what the correction is for: at t = 1, m = (1 - beta1) g is 10 times too small
        m_hat, v_hat = m, v
    update = -lr * m_hat / (np.sqrt(v_hat) + config.eps)  # (shape of theta)
    return {"g": g, "m": m, "v": v, "m_hat": m_hat, "v_hat": v_hat, "update": update}


def warmup_lr(t: int, d_model: int, warmup: int) -> float:
    """The learning rate of 'Attention Is All You Need' (2017), section 5.3, at 1-based step ``t``.

    lr(t) = d_model^-0.5 * min(t^-0.5, t * warmup^-1.5): linear growth for ``warmup`` steps, peak
    d_model^-0.5 * warmup^-0.5 at t = warmup, then decay as 1/sqrt(t).
    """
    _check_step(t)
    check_number("d_model", d_model, positive=True)
    check_number("warmup", warmup, positive=True)
    return d_model**-0.5 * min(t**-0.5, t * warmup**-1.5)


def cosine_lr(t: int, lr_max: float, warmup: int, total: int, lr_min: float = 0.0) -> float:
    """Linear warm-up then cosine decay, at 1-based step ``t`` (used by the Part IV training script).

    lr = lr_max * t / warmup for t <= warmup; then, with s = (t - warmup) / (total - warmup),
    lr = lr_min + (lr_max - lr_min) * (1 + cos(pi * s)) / 2, which reaches lr_min at t = total and stays there.
    """
    _check_step(t)
    check_number("lr_max", lr_max)
    check_number("lr_min", lr_min)
    if not lr_min <= lr_max:
        raise ValueError(f"lr_min must lie in [0, lr_max = {lr_max}], got {lr_min}")
    check_number("warmup", warmup)
    check_number("total", total)
    if not total > warmup:
        raise ValueError(f"total ({total}) must be larger than warmup ({warmup})")
    if t <= warmup:
        return lr_max * t / warmup
    s = min(1.0, (t - warmup) / (total - warmup))  # fraction of the decay phase done, clamped after total
    return lr_min + (lr_max - lr_min) * 0.5 * (1.0 + math.cos(math.pi * s))


def clip_grad_norm(grads: dict, max_norm: float) -> tuple[dict, float]:
    """Scale all gradients together so their global L2 norm is at most ``max_norm`` (torch.nn.utils.clip_grad_norm_).

    total_norm = sqrt(sum over params of ||g||^2);  coef = max_norm / (total_norm + 1e-6);
    every g is multiplied by coef only when coef < 1. Returns new arrays and total_norm (before clipping).
    """
    check_number("max_norm", max_norm, positive=True)
    check_dict("grads", grads)
    g = {name: as_float(f"grad for {name!r}", a) for name, a in grads.items()}
    # the norm of the per-parameter norms, as torch computes it
    per_param = np.array([np.sqrt(np.sum(a.astype(np.float64) ** 2)) for a in g.values()])  # (n_params,)
    total_norm = float(np.sqrt(np.sum(per_param**2)))
    coef = max_norm / (total_norm + 1e-6)  # the 1e-6 keeps the division safe when every gradient is 0
    if coef < 1:
        return {name: a * coef for name, a in g.items()}, total_norm
    return {name: a.copy() for name, a in g.items()}, total_norm


def _check_step(t) -> None:
    """Raise unless the schedule's step ``t`` is a number >= 1 (steps count from 1)."""
    if not is_number(t) or not t >= 1:
        raise ValueError(f"step t must be >= 1 (t is 1-based), got {t!r}")


def _check_adam_hyper(config) -> None:
    """Raise for Adam hyperparameters outside their ranges: lr, lambda >= 0, betas in [0, 1), eps > 0."""
    check_number("lr", config.lr)
    check_number("weight_decay", config.weight_decay)
    for name in ("beta1", "beta2"):
        beta = getattr(config, name)
        if not (isinstance(beta, (int, float, np.floating)) and 0 <= beta < 1):
            raise ValueError(f"{name} must lie in [0, 1), got {beta!r}")
    if not (isinstance(config.eps, (int, float, np.floating)) and config.eps > 0):
        raise ValueError(f"eps must be > 0, got {config.eps!r}")
    if not isinstance(config.bias_correction, (bool, np.bool_)):
        raise ValueError(f"bias_correction must be True or False, got {config.bias_correction!r}")


def _resolve_lr(lr, default: float) -> float:
    """The learning rate for this step: the override (a schedule's value) if given, else the config's."""
    if lr is None:
        return default
    check_number("lr", lr)
    return lr


def _check_step_inputs(params: dict, grads: dict, state: OptState, needed: tuple[str, ...]) -> tuple[dict, dict]:
    """Validate params, grads and the ``needed`` state buffers against each other; return float params and grads."""
    check_dict("params", params)
    check_dict("grads", grads)
    check_instance("state", state, OptState)
    for name in params:
        if name not in grads:
            raise ValueError(f"grads is missing the parameter {name!r}")
    for name in grads:
        if name not in params:
            raise ValueError(f"grads has key {name!r} that is not a parameter")
    theta = {name: as_float(f"param {name!r}", p) for name, p in params.items()}
    g = {name: as_float(f"grad for {name!r}", grads[name]) for name in params}
    for name in theta:
        g[name] = g[name].astype(theta[name].dtype, copy=False)  # the step keeps each param's dtype
        if g[name].shape != theta[name].shape:
            raise ValueError(f"grad for {name!r} has shape {g[name].shape}, but the param has {theta[name].shape}")
        for buf_name in needed:
            buf = getattr(state, buf_name)
            if name not in buf or np.shape(buf[name]) != theta[name].shape:
                raise ValueError(f"optimizer state {buf_name} does not match param {name!r}; use init_state(params)")
    if not isinstance(state.t, (int, np.integer)) or state.t < 0:
        raise ValueError(f"state.t must be an integer >= 0, got {state.t!r}")
    return theta, g
