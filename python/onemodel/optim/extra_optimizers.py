"""ASGD, Rprop and LBFGS: torch.optim's names, arguments, defaults, state
keys and single-tensor formulas.

ASGD and Rprop are stepped with exact element-wise NumPy arithmetic (the
rules of ``_elementwise``: one IEEE float32 operation at a time, scalars in
double rounded once to float32 where they meet a tensor). ASGD's
η = lr / (1 + λ·lr·t)^α uses ``det_pow`` (a fixed-order double log and
exp, no libm), so the scalars are the same bits everywhere.

LBFGS runs torch's algorithm (two-loop recursion, history, the stopping
tests) on onemodel tensors; its dot products are canonical GEMMs (one
float32 accumulator, increasing index) and its sums and maxima are the
library's reductions; ``line_search_fn='strong_wolfe'`` is torch's
line search (optim/line_search.py).
"""

from __future__ import annotations

from typing import Any

import math

import numpy as np

from ..grad_mode import enable_grad, no_grad
from ..tensor import Tensor
from . import _elementwise as E
from .elementwise_optimizers import _ElementwiseOptimizer, _full_like
from .optimizer import Optimizer, _check_non_negative, _refuse_differentiable, _zeros_like

__all__ = ["ASGD", "Rprop", "LBFGS"]

_LN2 = 0.6931471805599453


def det_log(x: float) -> float:
    """log(x) in double from IEEE operations in a fixed order: x = m·2^e
    (frexp, exact) with m in [√½, √2), log m = 2·atanh(s), s = (m − 1)/(m + 1),
    by its odd series to s^41 (|s| < 0.172: the terms fall below 2^-60)."""
    if x != x or x < 0:
        return math.nan
    if x == 0:
        return -math.inf
    if x == math.inf:
        return math.inf
    m, e = math.frexp(x)
    if m < 0.7071067811865476:
        m, e = m * 2.0, e - 1
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    acc = 1.0 / 41.0
    for k in range(39, 0, -2):
        acc = acc * s2 + 1.0 / k
    return 2.0 * s * acc + e * _LN2


def det_pow(x: float, a: float) -> float:
    """x^a = exp(a·log x) for x > 0 with det_log and E.det_exp."""
    if x == 1.0 or a == 0.0:
        return 1.0
    return E.det_exp(a * det_log(x))


class ASGD(_ElementwiseOptimizer):
    """torch.optim.ASGD (averaged SGD, Polyak–Juditsky)::

        g = −g (maximize);  g = g + wd·p (wd ≠ 0);  t = t + 1
        p = p·(1 − λ·η);  p = p + (−η)·g
        ax = ax + (p − ax)·μ   (μ ≠ 1, else ax = p)
        η = lr / (1 + λ·lr·t)^α;  μ = 1 / max(1, t − t0)   (float32 state)
    """

    _state_tensors = ("ax",)

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach=None, maximize: bool = False, differentiable: bool = False, capturable: bool = False) -> None:
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr", "weight_decay")
        _refuse_differentiable(group)

    def _init_state(self, group, p, state):
        state["step"] = 0.0
        state["eta"] = float(E.f32(group["lr"]))
        state["mu"] = 1.0
        state["ax"] = _zeros_like(p)

    @staticmethod
    def _count(step: float) -> float:
        return float(E.f32(step + 1.0))  # torch keeps ASGD's step in float32

    def _update(self, group, state, p, g):
        lambd, alpha, t0, lr, wd = group["lambd"], group["alpha"], group["t0"], group["lr"], group["weight_decay"]
        if wd != 0:
            g = E.add_scaled(g, wd, p)
        eta = state["eta"]
        p[...] = p * E.f32(1 - lambd * eta)
        p[...] = E.add_scaled(p, -eta, g)
        ax = E.view(state["ax"])
        if state["mu"] != 1:
            ax[...] = ax + (p - ax) * E.f32(state["mu"])
        else:
            ax[...] = p
        step = state["step"]
        state["eta"] = float(E.f32(lr / det_pow(1 + lambd * lr * step, alpha)))
        state["mu"] = float(E.f32(1 / max(1, step - t0)))


class Rprop(_ElementwiseOptimizer):
    """torch.optim.Rprop (resilient backpropagation)::

        s = sign(g·prev) → η+ where > 0, η− where < 0, 1 where 0
        step_size = clamp(step_size·s, step_min, step_max)
        g = 0 where s = η−;  p = p + (−1·sign(g))·step_size;  prev = g
    """

    _state_tensors = ("prev", "step_size")

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr")
        etaminus, etaplus = group["etas"]
        if not 0.0 < etaminus < 1.0 < etaplus:
            raise ValueError(f"Invalid eta values: {etaminus}, {etaplus}")
        _refuse_differentiable(group)

    def _init_state(self, group, p, state):
        state["step"] = 0.0
        state["prev"] = _zeros_like(p)
        state["step_size"] = _full_like(p, group["lr"])

    def _update(self, group, state, p, g):
        etaminus, etaplus = (E.f32(e) for e in group["etas"])
        lo, hi = (E.f32(s) for s in group["step_sizes"])
        prev, step_size = E.view(state["prev"]), E.view(state["step_size"])
        s = np.sign(g * prev)
        s = np.where(s > 0, etaplus, np.where(s < 0, etaminus, np.where(s == 0, E.F32(1.0), s))).astype(np.float32)
        step_size[...] = np.minimum(np.maximum(step_size * s, lo), hi)
        g = np.where(s == etaminus, E.F32(0.0), g).astype(np.float32)
        p[...] = p + (E.F32(-1.0) * np.sign(g)) * step_size
        prev[...] = g


class LBFGS(Optimizer):
    """torch.optim.LBFGS (line_search_fn None or 'strong_wolfe'): every
    parameter in one group, ``step(closure)`` required."""

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval=None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100, line_search_fn=None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= float(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn is not None and line_search_fn != "strong_wolfe":
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        from ..ops.join import cat

        parts = []
        for p in self._params:
            if p.grad is None:
                parts.append(p.detach().new_zeros(p.numel()))
            else:
                parts.append(p.grad.reshape(-1))
        return cat(parts, 0)

    def _add_grad(self, t, d: Tensor) -> None:
        offset = 0
        t = float(t.item()) if isinstance(t, Tensor) else float(t)
        for p in self._params:
            n = p.numel()
            p.add_(d[offset : offset + n].view_as(p), alpha=t)
            offset += n

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure) -> Any:  # noqa: C901 - torch's algorithm, kept in one piece to compare line by line
        if closure is None:
            raise RuntimeError("LBFGS.step requires a closure that reevaluates the model and returns the loss")
        from ..ops.products import dot

        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change, history_size = group["tolerance_grad"], group["tolerance_change"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        with no_grad():
            flat_grad = self._flat_grad()
            if float(flat_grad.abs().max()) <= tolerance_grad:
                return orig_loss
            d, t = state.get("d"), state.get("t")
            old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
            h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
            n_iter = 0
            while n_iter < max_iter:
                n_iter += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_stps, ro = [], [], []
                    h_diag = 1
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = dot(y, s)
                    if float(ys) > 1e-10:
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0)
                            old_stps.pop(0)
                            ro.pop(0)
                        old_dirs.append(y)
                        old_stps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / dot(y, y)
                    num_old = len(old_dirs)
                    if "al" not in state:
                        state["al"] = [None] * history_size
                    al = state["al"]
                    q = -flat_grad
                    for i in range(num_old - 1, -1, -1):
                        al[i] = dot(old_stps[i], q) * ro[i]
                        q = q - old_dirs[i] * al[i]
                    d = r = q * h_diag
                    for i in range(num_old):
                        be_i = dot(old_dirs[i], r) * ro[i]
                        r = r + old_stps[i] * (al[i] - be_i)
                    d = r
                prev_flat_grad = flat_grad.clone()
                prev_loss = loss
                if state["n_iter"] == 1:
                    inv = 1.0 / flat_grad.abs().sum()
                    t = (inv if float(inv) < 1.0 else 1.0) * lr
                else:
                    t = lr
                gtd = dot(flat_grad, d)
                if float(gtd) > -tolerance_change:
                    break
                ls_func_evals = 0
                if group["line_search_fn"] == "strong_wolfe":
                    from .line_search import strong_wolfe

                    x_init = [p.detach().clone() for p in self._params]
                    loss, flat_grad, t, ls_func_evals = strong_wolfe(
                        lambda x, step, direction: self._directional_evaluate(closure, x, step, direction), x_init, t, d, loss, flat_grad, gtd)
                    self._add_grad(t, d)
                    opt_cond = float(flat_grad.abs().max()) <= tolerance_grad
                elif n_iter != max_iter:
                    self._add_grad(t, d)
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = float(flat_grad.abs().max()) <= tolerance_grad
                    ls_func_evals = 1
                else:
                    self._add_grad(t, d)
                    opt_cond = False
                current_evals += ls_func_evals
                state["func_evals"] += ls_func_evals
                if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                    break
                if float((d * t).abs().max()) <= tolerance_change:
                    break
                if abs(loss - prev_loss) < tolerance_change:
                    break
            state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag, prev_flat_grad=prev_flat_grad,
                         prev_loss=prev_loss)
        return orig_loss
