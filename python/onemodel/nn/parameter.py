"""Parameters: leaf tensors that a Module registers and optimizers update."""

from __future__ import annotations

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

    def __init__(self, *args, **kwargs):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (clone_contiguous(self.detach()), self.requires_grad))
