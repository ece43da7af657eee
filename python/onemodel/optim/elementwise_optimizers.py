"""Adadelta, Adagrad, RMSprop, Adamax, NAdam and RAdam: torch.optim's
names, arguments, defaults, state keys and single-tensor formulas, stepped
with exact element-wise NumPy arithmetic (see ``_elementwise`` for the
rounding rules; docs/optim.md for the formulas and the measured distance
from torch)."""

from __future__ import annotations

import math

import numpy as np

from .. import scope
from ..tensor import Tensor, float32
from . import _elementwise as E
from .optimizer import Optimizer, _check_adam_options, _check_non_negative, _refuse_differentiable, _zeros_like

__all__ = ["Adadelta", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam"]


def _full_like(p: Tensor, value: float) -> Tensor:
    with scope.suspend():
        t = Tensor._empty(p.shape, float32, zeroed=True)
    if value:
        E.view(t)[...] = np.float32(value)
    return t


class _ElementwiseOptimizer(Optimizer):
    """Steps each parameter with ``_update`` on NumPy views of the
    parameter, its gradient and its state; bumps the versions of what it
    wrote (so a graph saved before the step refuses to run backward)."""

    _state_tensors: tuple = ()

    def _init_state(self, group: dict, p: Tensor, state: dict) -> None:
        """torch's fresh state: ``step`` 0, then zeros for each state tensor
        in ``_state_tensors`` order (the state dict keeps that order)."""
        state["step"] = 0.0
        for key in self._state_tensors:
            state[key] = _zeros_like(p)

    @staticmethod
    def _count(step: float) -> float:
        """``state["step"]`` after one more step."""
        return step + 1.0

    def _update(self, group: dict, state: dict, p: np.ndarray, g: np.ndarray) -> None:  # pragma: no cover - abstract
        """One step of `p` (written in place) from `g` (already negated
        under maximize); ``state["step"]`` already counts this step."""
        raise NotImplementedError

    def _step(self) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if grad.shape != p.shape:
                    raise ValueError(f"{type(self).__name__}.step: gradient of shape {grad.shape} for a parameter of shape {p.shape}")
                state = self.state[p]
                if not state:
                    self._init_state(group, p, state)
                pa, ga = E.view(p), E.view(grad)
                if np.shares_memory(pa, ga):
                    raise ValueError(f"{type(self).__name__}.step: a gradient shares memory with its parameter")
                # The versions first: a KeyboardInterrupt may arrive between
                # any two NumPy statements of the update, and a write the
                # version does not count would leave a stale saved copy
                # looking fresh.
                p._bump()
                for key in self._state_tensors:
                    t = state.get(key)
                    if isinstance(t, Tensor):
                        t._bump()
                # The step count and the sign of torch's maximize, common to
                # every update here (g is only read: every step is out of place).
                state["step"] = self._count(state["step"])
                self._update(group, state, pa, -ga if group["maximize"] else ga)


class Adadelta(_ElementwiseOptimizer):
    """torch.optim.Adadelta (Zeiler): per element, with t the step::

        g = −g (maximize);  g = g + wd·p (wd ≠ 0)
        v = v·ρ + ((1 − ρ)·g)·g
        δ = (sqrt(u + ε) / sqrt(v + ε))·g
        u = u·ρ + ((1 − ρ)·δ)·δ
        p = p + (−lr)·δ
    """

    _state_tensors = ("square_avg", "acc_delta")

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0, foreach=None, *,
                 capturable: bool = False, maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, capturable=capturable,
                        foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr")
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        _check_non_negative(group, "eps", "weight_decay")
        _refuse_differentiable(group)

    def _update(self, group, state, p, g):
        rho, eps, lr, wd = group["rho"], group["eps"], group["lr"], group["weight_decay"]
        if wd != 0:
            g = E.add_scaled(g, wd, p)
        v, u = E.view(state["square_avg"]), E.view(state["acc_delta"])
        v[...] = E.addcmul(v * E.f32(rho), 1 - rho, g, g)
        std = np.sqrt(v + E.f32(eps))
        delta = (np.sqrt(u + E.f32(eps)) / std) * g
        u[...] = E.addcmul(u * E.f32(rho), 1 - rho, delta, delta)
        p[...] = E.add_scaled(p, -lr, delta)


class Adagrad(_ElementwiseOptimizer):
    """torch.optim.Adagrad (Duchi et al.)::

        g = −g (maximize);  g = g + wd·p (wd ≠ 0)
        clr = lr / (1 + (t − 1)·lr_decay)          (double)
        s = s + (1·g)·g
        p = p + ((−clr)·g) / (sqrt(s) + ε)

    As torch's, the state (``sum`` = initial_accumulator_value, ``step`` =
    0) exists from construction."""

    _state_tensors = ("sum",)

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach=None, *, maximize: bool = False, differentiable: bool = False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay, initial_accumulator_value=initial_accumulator_value,
                        foreach=foreach, maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(group, p, self.state[p])

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps")
        if group.get("fused"):
            raise RuntimeError("`fused` is not supported (onemodel has one implementation)")
        _refuse_differentiable(group)

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self._init_state(group, p, self.state[p])

    def _init_state(self, group, p, state):
        state["step"] = 0.0
        state["sum"] = _full_like(p, group["initial_accumulator_value"])

    def _update(self, group, state, p, g):
        lr, lr_decay, eps, wd = group["lr"], group["lr_decay"], group["eps"], group["weight_decay"]
        step = state["step"]
        if wd != 0:
            g = E.add_scaled(g, wd, p)
        clr = lr / (1 + (step - 1) * lr_decay)
        s = E.view(state["sum"])
        s[...] = E.addcmul(s, 1, g, g)
        std = np.sqrt(s) + E.f32(eps)
        p[...] = E.addcdiv(p, -clr, g, std)


class RMSprop(_ElementwiseOptimizer):
    """torch.optim.RMSprop (Hinton)::

        g = −g (maximize);  g = g + wd·p (wd ≠ 0)
        v = v·α + ((1 − α)·g)·g
        centered: a = lerp(a, g, 1 − α); d = sqrt(v + (−1·a)·a) + ε
        else:     d = sqrt(v) + ε
        momentum > 0: b = b·μ + (1·g)/d; p = p + (−lr)·b
        else:         p = p + ((−lr)·g)/d
    """

    _state_tensors = ("square_avg", "momentum_buffer", "grad_avg")

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach=None, maximize: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered, weight_decay=weight_decay,
                        capturable=capturable, foreach=foreach, maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr", "eps", "momentum", "weight_decay", "alpha")
        _refuse_differentiable(group)

    def _init_state(self, group, p, state):
        state["step"] = 0.0
        state["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    def _update(self, group, state, p, g):
        lr, alpha, eps, wd, momentum = group["lr"], group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if wd != 0:
            g = E.add_scaled(g, wd, p)
        v = E.view(state["square_avg"])
        v[...] = E.addcmul(v * E.f32(alpha), 1 - alpha, g, g)
        if group["centered"]:
            a = E.view(state["grad_avg"])
            a[...] = E.lerp(a, g, 1 - alpha)
            avg = np.sqrt(E.addcmul(v, -1, a, a))
        else:
            avg = np.sqrt(v)
        avg = avg + E.f32(eps)
        if momentum > 0:
            b = E.view(state["momentum_buffer"])
            b[...] = E.addcdiv(b * E.f32(momentum), 1, g, avg)
            p[...] = E.add_scaled(p, -lr, b)
        else:
            p[...] = E.addcdiv(p, -lr, g, avg)


class Adamax(_ElementwiseOptimizer):
    """torch.optim.Adamax (Kingma and Ba, the infinity-norm Adam)::

        g = −g (maximize);  g = g + wd·p (wd ≠ 0)
        m = lerp(m, g, 1 − β1)
        u = max(u·β2, |g| + ε)
        p = p + ((−lr / (1 − β1^t))·m) / u
    """

    _state_tensors = ("exp_avg", "exp_inf")

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0, foreach=None, *,
                 maximize: bool = False, differentiable: bool = False, capturable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_adam_options(group)

    def _update(self, group, state, p, g):
        (b1, b2), lr, eps, wd = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        if wd != 0:
            g = E.add_scaled(g, wd, p)
        m, u = E.view(state["exp_avg"]), E.view(state["exp_inf"])
        m[...] = E.lerp(m, g, 1 - b1)
        u[...] = np.maximum(u * E.f32(b2), np.abs(g) + E.f32(eps))
        clr = lr / (1 - E.beta_power(b1, int(state["step"])))
        p[...] = E.addcdiv(p, -clr, m, u)


class NAdam(_ElementwiseOptimizer):
    """torch.optim.NAdam (Dozat) with torch's momentum schedule::

        μ_t = β1·(1 − 0.5·0.96^(t·ψ)),  μ_{t+1} likewise   (double)
        Π = f32(Π·μ_t)                                      (a float32, as torch's state)
        g = −g (maximize);  decoupled: p = p·(1 − lr·wd), else g = g + wd·p
        m = lerp(m, g, 1 − β1);  v = v·β2 + ((1 − β2)·g)·g
        d = sqrt(v / (1 − β2^t)) + ε
        p = p + ((−lr·(1 − μ_t)/(1 − Π))·g)/d
        p = p + ((−lr·μ_{t+1}/(1 − Π·μ_{t+1}))·m)/d
    """

    _state_tensors = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_adam_options(group)
        _check_non_negative(group, "momentum_decay")

    def _init_state(self, group, p, state):
        state["step"] = 0.0
        state["mu_product"] = 1.0
        state["exp_avg"] = _zeros_like(p)
        state["exp_avg_sq"] = _zeros_like(p)

    def _update(self, group, state, p, g):
        (b1, b2), lr, eps, wd, psi = group["betas"], group["lr"], group["eps"], group["weight_decay"], group["momentum_decay"]
        step = state["step"]
        bias_correction2 = 1 - E.beta_power(b2, int(step))
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p[...] = p * E.f32(1 - lr * wd)
            else:
                g = E.add_scaled(g, wd, p)
        mu = b1 * (1.0 - 0.5 * E.det_exp(step * psi * E.LN_0_96))
        mu_next = b1 * (1.0 - 0.5 * E.det_exp((step + 1) * psi * E.LN_0_96))
        mu_product = float(np.float32(state["mu_product"]) * E.f32(mu))
        state["mu_product"] = mu_product
        m, v = E.view(state["exp_avg"]), E.view(state["exp_avg_sq"])
        m[...] = E.lerp(m, g, 1 - b1)
        v[...] = E.addcmul(v * E.f32(b2), 1 - b2, g, g)
        denom = np.sqrt(v / E.f32(bias_correction2)) + E.f32(eps)
        mu_product_next = mu_product * mu_next
        p[...] = E.addcdiv(p, -lr * (1.0 - mu) / (1.0 - mu_product), g, denom)
        p[...] = E.addcdiv(p, (-lr * mu_next) / (1.0 - mu_product_next), m, denom)

    def _export_state(self, s: dict) -> dict:
        from ..creation import tensor as make_tensor

        out = super()._export_state(s)
        if "mu_product" in out and not isinstance(out["mu_product"], Tensor):
            with scope.suspend():
                out["mu_product"] = make_tensor(np.float32(out["mu_product"]))
        return out

    def _import_state(self, value: dict, p: Tensor, key) -> dict:
        value = dict(value)
        mu = value.pop("mu_product", None)
        out = super()._import_state(value, p, key)
        if mu is not None:
            out["mu_product"] = float(np.float32(mu.item() if isinstance(mu, Tensor) else np.asarray(mu).item()))
        return out


class RAdam(_ElementwiseOptimizer):
    """torch.optim.RAdam (Liu et al., rectified Adam)::

        g = −g (maximize);  decoupled: p = p·(1 − lr·wd), else g = g + wd·p
        m = lerp(m, g, 1 − β1);  v = v·β2 + ((1 − β2)·g)·g
        m̂ = m / (1 − β1^t)
        ρ∞ = 2/(1 − β2) − 1;  ρ_t = ρ∞ − 2t·β2^t/(1 − β2^t)          (double)
        ρ_t > 5: r = sqrt((ρ_t − 4)(ρ_t − 2)ρ∞ / ((ρ∞ − 4)(ρ∞ − 2)ρ_t))
                 p = p − ((m̂·lr)·(sqrt(1 − β2^t) / (sqrt(v) + ε)))·r
        else:    p = p − m̂·lr
    """

    _state_tensors = ("exp_avg", "exp_avg_sq")

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_adam_options(group)

    def _update(self, group, state, p, g):
        (b1, b2), lr, eps, wd = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        step = state["step"]
        if wd != 0:
            if group["decoupled_weight_decay"]:
                p[...] = p * E.f32(1 - lr * wd)
            else:
                g = E.add_scaled(g, wd, p)
        m, v = E.view(state["exp_avg"]), E.view(state["exp_avg_sq"])
        m[...] = E.lerp(m, g, 1 - b1)
        v[...] = E.addcmul(v * E.f32(b2), 1 - b2, g, g)
        pow2 = E.beta_power(b2, int(step))
        bias_correction1 = 1 - E.beta_power(b1, int(step))
        bias_correction2 = 1 - pow2
        corrected = m / E.f32(bias_correction1)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * pow2 / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = E.f32(math.sqrt(bias_correction2)) / (np.sqrt(v) + E.f32(eps))
            update = ((corrected * E.f32(lr)) * adaptive) * E.f32(rect)
        else:
            update = corrected * E.f32(lr)
        p[...] = E.add_scaled(p, -1.0, update)
