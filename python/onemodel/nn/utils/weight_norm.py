"""torch.nn.utils.weight_norm / remove_weight_norm (the hook API): the
weight becomes ``g · v / ‖v‖`` with ‖v‖ over every dim but ``dim`` (all
dims for ``dim=None``), recomputed by a forward pre-hook from the
parameters ``<name>_g`` and ``<name>_v``. The norm is the library's vector
norm (a double sum of squares, rounded once)."""

from __future__ import annotations

from typing import Any

from ...grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter
from ._param_hooks import refuse_second, remove_hook


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002 - torch's name
    """‖v‖ over every dim but `dim`, kept as size-1 dims (dim = -1: all)."""
    from ...ops.reduce import vector_norm

    if dim == -1:
        return vector_norm(v, pow)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    return vector_norm(v, pow, others, keepdim=True) if others else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name: str, dim) -> Any:
        refuse_second(module, WeightNorm, name, "weight_norm")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if not isinstance(weight, Parameter):
            raise TypeError(f"weight_norm: {name} of {type(module).__name__} is not a Parameter")
        del module._parameters[name]
        with no_grad():
            g = norm_except_dim(weight.detach(), 2, fn.dim).clone()
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module).clone()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0) -> Any:
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight") -> Any:
    return remove_hook(module, WeightNorm, name, "weight_norm")
