"""Concatenation along one dimension (differentiable)."""

from __future__ import annotations

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, float32, int64
from .._kernels import clone_contiguous
from .views import apply_index


def _slice_view(t: Tensor, dim: int, start: int, stop: int) -> Tensor:
    spec = tuple(("slice", start, stop, 1) if d == dim else ("slice", 0, n, 1) for d, n in enumerate(t.shape))
    shape, strides, offset = apply_index(t.shape, t._strides, t._offset, spec)
    return t._view(shape, strides, offset)


class Cat(Function):
    def forward(self, dim, *tensors):
        self.dim = dim
        self.sizes = [t.shape[dim] for t in tensors]
        shape = list(tensors[0].shape)
        shape[dim] = sum(self.sizes)
        _shape.checked_numel("cat", shape, tensors[0].dtype.itemsize)
        out = Tensor._empty(tuple(shape), tensors[0].dtype)
        pos = 0
        for t, n in zip(tensors, self.sizes):
            _core.copy_(_slice_view(out, dim, pos, pos + n), t)
            pos += n
        return out

    def backward(self, g):
        grads = []
        pos = 0
        for n, need in zip(self.sizes, self.needs_input_grad):
            grads.append(clone_contiguous(_slice_view(g, self.dim, pos, pos + n)) if need else None)
            pos += n
        return tuple(grads)


def _tensor_list(op: str, tensors) -> list:
    """The joined tensors as a list: not empty, each a Tensor."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: expected a non-empty sequence of tensors")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    """torch.cat: tensors of equal shape but along `dim`."""
    tensors = _tensor_list("cat", tensors)
    # torch promotes mixed dtypes (float32 over int64 over bool), empty 1-D
    # tensors included, and skips those in the shape checks (the legacy
    # `out = torch.tensor([]); out = torch.cat([out, x])`).
    dt = _promoted(tensors)
    shaped = [t for t in tensors if tuple(t.shape) != (0,)]
    if not shaped:
        return Tensor._empty((0,), dt)
    tensors = [t if t.dtype is dt else t.to(dt) for t in shaped]
    first = tensors[0]
    d = _shape.norm_dim("cat", dim, first.ndim)
    for t in tensors[1:]:
        if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != d):
            raise ValueError(f"cat: shapes {[tuple(x.shape) for x in tensors]} differ outside dimension {dim}")
    return Cat.apply(d, *tensors)


def _promoted(tensors):
    dts = {t.dtype for t in tensors}
    for dt in (float32, int64):
        if dt in dts:
            return dt
    return next(iter(dts))


def stack(tensors, dim: int = 0) -> Tensor:
    tensors = _tensor_list("stack", tensors)
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise ValueError(f"stack: all tensors must have the same shape, got {sorted(shapes)}")
    d = _shape.norm_dim("stack", dim, tensors[0].ndim, extra=1)
    return cat([t.unsqueeze(d) for t in tensors], d)
