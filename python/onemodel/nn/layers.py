"""Basic layers: Linear, Identity, ReLU, Unflatten (the containers live in
container.py and are re-exported here for older imports)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import functional as F
from ..creation import empty
from ..ops import views
from . import init
from .container import ModuleList, Sequential  # noqa: F401 - re-exported
from .module import Module
from .parameter import Parameter, optional_parameter

if TYPE_CHECKING:
    from ..tensor import Tensor


class Linear(Module):
    """y = x Wᵀ + b. Initialised as torch does (kaiming_uniform_(a=√5) for
    W, i.e. U(±1/√in), and U(±1/√in) for b), from onemodel's generator, so
    the values differ from torch's."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: feature counts must be non-negative, got {in_features}, {out_features}")
        _check_factory("Linear", device, dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features))
        optional_parameter(self, "bias", empty(out_features) if bias else None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight) if self.weight.numel() else (0, 0)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator=generator)

    def forward(self, input) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _check_factory(op: str, device, dtype) -> None:
    """torch's factory kwargs on layers: a CPU device and float32 only."""
    from .._device import as_device
    from ..tensor import as_dtype

    as_device(device, op)
    dt = as_dtype(dtype, op)
    if dt is not None and not dt.is_floating_point:
        raise TypeError(f"{op}: parameters must be floating point, got dtype={dt!r}")


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Identity(Module):
    """Returns its input; takes and ignores any arguments (torch's)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input) -> Any:
        return input


class Unflatten(Module):
    """Expand dimension ``dim`` into ``unflattened_size``."""

    def __init__(self, dim, unflattened_size) -> None:
        super().__init__()
        if isinstance(dim, str):
            raise ValueError("Unflatten: named dimensions are not supported (dim must be an int)")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input) -> Tensor:
        return unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def unflatten(input, dim: int, sizes) -> object:
    """torch.unflatten: dimension ``dim`` becomes ``sizes`` (one may be -1)."""
    from .._shape import norm_dim

    d = norm_dim("unflatten", dim, input.ndim)
    sizes = list(sizes)
    if sizes.count(-1) > 1:
        raise ValueError("unflatten: only one dimension can be inferred (-1)")
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if -1 in sizes:
        if known == 0 or input.shape[d] % known:
            raise ValueError(f"unflatten: sizes {tuple(sizes)} don't multiply up to the size of dim {dim} ({input.shape[d]}) in the input tensor")
        sizes[sizes.index(-1)] = input.shape[d] // known
    elif known != input.shape[d]:
        raise ValueError(f"unflatten: provided sizes {tuple(sizes)} don't multiply up to the size of dim {dim} ({input.shape[d]}) in the input tensor")
    return views.reshape(input, tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:]))
