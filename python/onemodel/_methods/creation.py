"""New tensors shaped or typed like this one (``new_zeros`` …) and the
in-place random fills (``normal_``, ``uniform_``, ``bernoulli_`` …)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


class CreationMethods:
    __slots__ = ()

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from ..creation import zeros

        return zeros(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from ..creation import ones

        return ones(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from ..creation import empty

        return empty(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from ..creation import full

        return full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
        from ..creation import tensor

        return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new(self, *args) -> Tensor:
        """torch's legacy form: ``new(size...)`` uninitialised, ``new(data)``
        a copy, ``new()`` empty; always this tensor's dtype."""
        from ..creation import empty, tensor

        from .._shape import Size

        # As torch: one tuple or list is data (x.new((0, 2)) is [0., 2.]); only a Size is a shape.
        if len(args) == 1 and not isinstance(args[0], (int, Size)):
            return tensor(args[0], dtype=self.dtype)
        return empty(_size(args) if args else (0,), dtype=self.dtype)

    # -- random fills ------------------------------------------------------------
    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
        return _ops.random.normal_(self, mean, std, generator=generator)

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
        return _ops.random.uniform_(self, from_, to, generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
        return _ops.random.bernoulli_(self, p, generator=generator)

    def exponential_(self, lambd: float = 1.0, *, generator=None) -> Tensor:
        return _ops.random.exponential_(self, lambd, generator=generator)

    def random_(self, from_=0, to=None, *, generator=None) -> Tensor:
        return _ops.random.random_(self, from_, to, generator=generator)

    def bernoulli(self, p=None, *, generator=None) -> Tensor:
        return _ops.random.bernoulli(self, p, generator=generator)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
        return _ops.random.multinomial(self, num_samples, replacement, generator=generator)
