"""Adam and AdamW (torch.optim's names, arguments and defaults) on one Rust
kernel, the one the crnn-v0 recognizer trainer uses too.

Per element, each operation rounded separately, in torch's single-tensor
order (see docs/optim.md for the derivation of every scalar)::

    g = -g                              (maximize)
    g = g + wd * p                      (Adam's L2 weight decay, wd != 0)
    p = p * f32(1 - lr*wd)              (AdamW's decoupled decay)
    m = m + f32(1 - b1) * (g - m)
    v = v * f32(b2) + f32(1 - b2) * (g * g)
    vmax = max(vmax, v)                 (amsgrad; the denominator uses vmax)
    p = p - f32(lr / (1 - b1^t)) * (m / (sqrt(v) / f32(sqrt(1 - b2^t)) + f32(eps)))

with b^t the running double product of the group's beta over the steps.
"""

from __future__ import annotations

from .. import _core
from .optimizer import Optimizer, _check_adam_options, _zeros_like

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma and Ba), torch's signature. ``weight_decay`` is the L2
    term added to the gradient unless ``decoupled_weight_decay=True`` (then
    it is AdamW). ``foreach``, ``fused`` and ``capturable`` are accepted and
    ignored: there is one implementation, a multi-tensor Rust kernel."""

    _decoupled_default = False

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach=None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
        decoupled_weight_decay: bool = False,
    ):
        defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        self._pows: dict = {}
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_adam_options(group)

    def _beta_pow(self, beta: float, t: int) -> float:
        """beta**t as the running double product: one multiplication per step
        from the cached previous power, a loop (in Rust) after a restart."""
        cache = self._pows
        key = (beta, t)
        value = cache.get(key)
        if value is None:
            prev = cache.get((beta, t - 1))
            value = prev * beta if prev is not None else _core.beta_power(beta, t)
            if len(cache) > 256:
                cache.clear()
            cache[key] = value
        return value

    def _step(self) -> None:
        for group in self.param_groups:
            amsgrad = bool(group["amsgrad"])
            params, grads, ms, vs, vmaxs, states = [], [], [], [], [], []
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0.0
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                if amsgrad:
                    if "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                    vmaxs.append(state["max_exp_avg_sq"])
                params.append(p)
                grads.append(g)
                ms.append(state["exp_avg"])
                vs.append(state["exp_avg_sq"])
                states.append(state)
            if not params:
                continue
            b1, b2 = (float(b) for b in group["betas"])
            # beta^t per parameter (the steps are usually all equal).
            pows: dict = {}
            p1, p2 = [], []
            for state in states:
                t = int(state["step"]) + 1
                pair = pows.get(t)
                if pair is None:
                    pair = pows[t] = (self._beta_pow(b1, t), self._beta_pow(b2, t))
                p1.append(pair[0])
                p2.append(pair[1])
            # One kernel call for the group: validates everything, then
            # updates p, m, v (and vmax) in place and bumps the versions.
            _core.adam_step(
                params,
                grads,
                ms,
                vs,
                vmaxs if amsgrad else None,
                p1,
                p2,
                lr=float(group["lr"]),
                beta1=b1,
                beta2=b2,
                eps=float(group["eps"]),
                weight_decay=float(group["weight_decay"]),
                decoupled=bool(group["decoupled_weight_decay"]),
                maximize=bool(group["maximize"]),
            )
            for state in states:
                state["step"] += 1.0


class AdamW(Adam):
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay
    ``p = p * (1 - lr*wd)``, torch's signature and defaults
    (``weight_decay=1e-2``). ``foreach``/``fused``/``capturable`` are
    accepted and ignored."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        capturable: bool = False,
        differentiable: bool = False,
        fused=None,
    ):
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
