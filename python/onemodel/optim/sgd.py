"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD's
names and defaults) on a Rust kernel. Per element, each operation rounded
separately, in torch's single-tensor order::

    d = -g                                  (maximize)
    d = d + f32(wd) * p                     (wd != 0)
    buf = d                                 (first step with momentum)
    buf = buf * f32(momentum) + f32(1 - dampening) * d     (later steps)
    d = d + f32(momentum) * buf  if nesterov  else  buf
    p = p - f32(lr) * d
"""

from __future__ import annotations

from .. import _core
from .optimizer import Optimizer, _check_non_negative, _refuse_differentiable, _zeros_like

__all__ = ["SGD"]


class SGD(Optimizer):
    """torch.optim.SGD. ``foreach``/``fused`` are accepted and ignored."""

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach=None,
        differentiable: bool = False,
        fused=None,
    ):
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)

    def _check_options(self, group: dict, where: str) -> None:
        _check_non_negative(group, "lr", "momentum", "weight_decay")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _refuse_differentiable(group)

    def _step(self) -> None:
        for group in self.param_groups:
            momentum = float(group["momentum"])
            params, grads, bufs, first, fresh = [], [], [], [], []
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                params.append(p)
                grads.append(g)
                if momentum != 0.0:
                    buf = self.state[p].get("momentum_buffer")
                    is_first = buf is None
                    if is_first:
                        buf = _zeros_like(p)
                        fresh.append((p, buf))
                    first.append(is_first)
                    bufs.append(buf)
                else:
                    bufs.append(None)
                    first.append(False)
            if not params:
                continue
            _core.sgd_step(
                params,
                grads,
                bufs,
                first,
                lr=float(group["lr"]),
                momentum=momentum,
                dampening=float(group["dampening"]),
                weight_decay=float(group["weight_decay"]),
                nesterov=bool(group["nesterov"]),
                maximize=bool(group["maximize"]),
            )
            for p, buf in fresh:
                self.state[p]["momentum_buffer"] = buf
