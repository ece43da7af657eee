"""Views, shape changes, splits and indexing (``t[index]``, ``t[index] = v``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ops as _ops

if TYPE_CHECKING:
    from ..tensor import Tensor


class ShapeMethods:
    __slots__ = ()

    def resize_(self, *sizes, memory_format=None) -> Tensor:
        return _ops.shape_ops.resize_(self, *sizes, memory_format=memory_format)

    def resize_as_(self, the_template, *, memory_format=None) -> Tensor:
        return _ops.shape_ops.resize_as_(self, the_template, memory_format=memory_format)

    def reshape(self, *shape) -> Tensor:
        return _ops.views.reshape(self, *shape)

    def view(self, *shape) -> Tensor:
        return _ops.views.view(self, *shape)

    def permute(self, *dims) -> Tensor:
        return _ops.views.permute(self, *dims)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _ops.views.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _ops.views.t(self)

    def expand(self, *sizes) -> Tensor:
        return _ops.views.expand(self, *sizes)

    def broadcast_to(self, shape) -> Tensor:
        return _ops.views.broadcast_to(self, shape)

    def unsqueeze(self, dim: int) -> Tensor:
        return _ops.views.unsqueeze(self, dim)

    def squeeze(self, dim=None) -> Tensor:
        return _ops.views.squeeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        return _ops.views.flatten(self, start_dim, end_dim)

    def contiguous(self, memory_format=None) -> Tensor:
        return _ops.views.contiguous(self)

    def expand_as(self, other) -> Tensor:
        from ..tensor import Tensor
        from .. import _shape
        if not isinstance(other, Tensor):
            raise _shape.not_a_tensor("expand_as", other, "other")
        return _ops.views.expand(self, other.shape)

    def reshape_as(self, other) -> Tensor:
        from ..tensor import Tensor
        from .. import _shape
        if not isinstance(other, Tensor):
            raise _shape.not_a_tensor("reshape_as", other, "other")
        return _ops.views.reshape(self, other.shape)

    def view_as(self, other) -> Tensor:
        from ..tensor import Tensor
        from .. import _shape
        if not isinstance(other, Tensor):
            raise _shape.not_a_tensor("view_as", other, "other")
        return _ops.views.view(self, other.shape)

    def split(self, split_size, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.shape_ops.split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.shape_ops.chunk(self, chunks, dim)

    @property
    def T(self) -> Tensor:
        return _ops.views.permute(self, *reversed(range(self.ndim)))

    @property
    def mT(self) -> Tensor:
        return _ops.views.transpose(self, -2, -1)

    def narrow(self, dim: int, start, length: int) -> Tensor:
        return _ops.rearrange.narrow(self, dim, start, length)

    def select(self, dim: int, index) -> Tensor:
        return _ops.rearrange.select(self, dim, index)

    def unbind(self, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.rearrange.unbind(self, dim)

    def movedim(self, source, destination) -> Tensor:
        return _ops.rearrange.movedim(self, source, destination)

    moveaxis = movedim

    def swapaxes(self, axis0: int, axis1: int) -> Tensor:
        return _ops.views.transpose(self, axis0, axis1)

    swapdims = swapaxes

    def unflatten(self, dim: int, sizes) -> Tensor:
        return _ops.rearrange.unflatten(self, dim, sizes)

    def flip(self, *dims) -> Tensor:
        return _ops.rearrange.flip(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def fliplr(self) -> Tensor:
        return _ops.rearrange.fliplr(self)

    def flipud(self) -> Tensor:
        return _ops.rearrange.flipud(self)

    def roll(self, shifts, dims=None) -> Tensor:
        return _ops.rearrange.roll(self, shifts, dims)

    def repeat(self, *sizes) -> Tensor:
        return _ops.rearrange.repeat(self, *sizes)

    def tile(self, *dims) -> Tensor:
        return _ops.rearrange.tile(self, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None) -> Tensor:
        return _ops.rearrange.repeat_interleave(self, repeats, dim)

    # -- indexing -----------------------------------------------------------------
    def __getitem__(self, index) -> Tensor:
        return _ops.index.getitem(self, index)

    def __setitem__(self, index, value) -> None:
        _ops.index.setitem(self, index, value)

    def gather(self, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
        return _ops.index.gather(self, dim, index)

    def take_along_dim(self, indices, dim=None) -> Tensor:
        return _ops.index.take_along_dim(self, indices, dim)

    def index_select(self, dim: int, index) -> Tensor:
        return _ops.index.index_select(self, dim, index)

    def masked_select(self, mask) -> Tensor:
        return _ops.index.masked_select(self, mask)

    def masked_scatter(self, mask, source) -> Tensor:
        return _ops.index.masked_scatter(self, mask, source)

    def masked_scatter_(self, mask, source) -> Tensor:
        return _ops.index.masked_scatter_(self, mask, source)

    def nonzero(self, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
        return _ops.index.nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Tensor:
        return _ops.index.argwhere(self)

    def scatter(self, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
        return _ops.index.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
        return _ops.index.scatter_(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index, src) -> Tensor:
        return _ops.index.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim: int, index, src) -> Tensor:
        return _ops.index.scatter_add_(self, dim, index, src)

    def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
        return _ops.index.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
        return _ops.index.scatter_reduce_(self, dim, index, src, reduce, include_self=include_self)

    def index_add(self, dim: int, index, source, *, alpha=1) -> Tensor:
        return _ops.index.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index, source, *, alpha=1) -> Tensor:
        return _ops.index.index_add_(self, dim, index, source, alpha=alpha)

    def index_copy(self, dim: int, index, source) -> Tensor:
        return _ops.index.index_copy(self, dim, index, source)

    def index_copy_(self, dim: int, index, source) -> Tensor:
        return _ops.index.index_copy_(self, dim, index, source)

    def index_fill(self, dim: int, index, value) -> Tensor:
        return _ops.index.index_fill(self, dim, index, value)

    def index_fill_(self, dim: int, index, value) -> Tensor:
        return _ops.index.index_fill_(self, dim, index, value)

    def index_put(self, indices, values, accumulate: bool = False) -> Tensor:
        return _ops.index.index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
        return _ops.index.index_put_(self, indices, values, accumulate)
