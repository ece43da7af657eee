"""Parameters and buffers: leaf tensors that a Module registers."""

from __future__ import annotations

from typing import Any

from .._kernels import clone_contiguous
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor with requires_grad=True by default (torch.nn.Parameter).

    ``Parameter(t)`` shares t's storage, like torch."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor, got {type(data).__name__}")
        p = Tensor._make.__func__(cls, data._storage, data._shape, data._strides, data._offset, data._dtype)
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (clone_contiguous(self.detach()), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = Parameter(clone_contiguous(self.detach()), self.requires_grad)
        memo[id(self)] = out
        return out


class Buffer(Tensor):
    """A tensor to register as a module buffer by assignment
    (torch.nn.Buffer): ``self.mask = nn.Buffer(t, persistent=False)``. The
    module stores a plain tensor sharing ``t``'s storage."""

    __slots__ = ("persistent",)

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from ..creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        b = Tensor._make.__func__(cls, data._storage, data._shape, data._strides, data._offset, data._dtype)
        b.persistent = bool(persistent)
        return b

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def is_lazy(param) -> bool:
    """onemodel has no lazy modules."""
    return False


def optional_parameter(module, name: str, data: Tensor | None) -> None:
    """`data` as the parameter `name` of `module`, or, for None, the name
    registered without a tensor (torch's absent bias: ``module.bias`` is
    None and keeps its place in the parameters' order)."""
    module.register_parameter(name, None if data is None else Parameter(data))
