"""Views, shape changes, splits and indexing (``t[index]``, ``t[index] = v``)."""

from __future__ import annotations

from .. import ops as _ops


class ShapeMethods:
    __slots__ = ()

    def reshape(self, *shape):
        return _ops.views.reshape(self, *shape)

    def view(self, *shape):
        return _ops.views.view(self, *shape)

    def permute(self, *dims):
        return _ops.views.permute(self, *dims)

    def transpose(self, dim0: int, dim1: int):
        return _ops.views.transpose(self, dim0, dim1)

    def t(self):
        return _ops.views.t(self)

    def expand(self, *sizes):
        return _ops.views.expand(self, *sizes)

    def broadcast_to(self, shape):
        return _ops.views.broadcast_to(self, shape)

    def unsqueeze(self, dim: int):
        return _ops.views.unsqueeze(self, dim)

    def squeeze(self, dim=None):
        return _ops.views.squeeze(self, dim)

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        return _ops.views.flatten(self, start_dim, end_dim)

    def contiguous(self, memory_format=None):
        return _ops.views.contiguous(self)

    def expand_as(self, other):
        return _ops.views.expand(self, other.shape)

    def reshape_as(self, other):
        return _ops.views.reshape(self, other.shape)

    def view_as(self, other):
        return _ops.views.view(self, other.shape)

    def split(self, split_size, dim: int = 0):
        return _ops.shape_ops.split(self, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0):
        return _ops.shape_ops.chunk(self, chunks, dim)

    @property
    def T(self):
        return _ops.views.permute(self, *reversed(range(self.ndim)))

    @property
    def mT(self):
        return _ops.views.transpose(self, -2, -1)

    def __getitem__(self, index):
        return _ops.views.getitem(self, index)

    def __setitem__(self, index, value) -> None:
        _ops.views.setitem(self, index, value)
