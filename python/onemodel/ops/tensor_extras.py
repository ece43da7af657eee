"""Tensor operations of torch's surface that are views or index writes:
Tensor.unfold (overlapping windows, a view), as_strided, put/put_,
index_reduce, the in-place view changes (squeeze_, unsqueeze_, t_,
transpose_, swapdims_) and the random fills geometric_, cauchy_,
log_normal_.

unfold and as_strided are views whose backward sums the gradient of an
element shown more than once as the indexing scatter-add (docs/tensor.md, "Indexing"; ops/strided.py).
"""

from __future__ import annotations

import numpy as np

from .. import _shape
from ..grad_mode import is_grad_enabled
from ..tensor import Tensor, float32, int64
from . import views
from .strided import strided_view


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """torch.Tensor.unfold: the windows of `size` elements every `step`
    along `dimension`, as a new last dim (a view)."""
    nd = max(input.ndim, 1)
    d = _shape.norm_dim("unfold", dimension, nd)
    n = input.shape[d] if input.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")

    def geometry(shape, strides, off) -> tuple:
        if not shape:
            return (size,), (1,), off
        count = (shape[d] - size) // step + 1
        new_shape = shape[:d] + (count,) + shape[d + 1 :] + (size,)
        new_strides = strides[:d] + (strides[d] * step,) + strides[d + 1 :] + (strides[d],)
        return new_shape, new_strides, off

    return strided_view(input, geometry)


def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """torch.as_strided: a view of `input`'s memory with the given geometry
    (offset and strides in elements of the storage). Its gradient maps back
    through `input`'s own geometry (input must be contiguous for that)."""
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} and {len(stride)}")
    if any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: negative sizes or strides are not supported, got size {size} stride {stride}")
    off = input._offset if storage_offset is None else int(storage_offset)
    if _shape.numel(size):
        last = off + sum((n - 1) * s for n, s in zip(size, stride))
        if off < 0 or last >= input._storage.numel:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off} require a storage of "
                f"{last + 1} elements, but it has {input._storage.numel}"
            )
    if input.requires_grad and not input.is_contiguous():
        raise RuntimeError("as_strided: the backward through a non-contiguous input is not supported; call .contiguous() first")
    base_off = input._offset

    def geometry(shape, strides, o) -> tuple:
        # Relative to the input's first element (the backward's buffer is
        # the contiguous input at offset 0).
        return size, stride, o + off - base_off

    return strided_view(input, geometry)


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """torch.put: the flattened input with `source` written at `index`."""
    from .index import index_put

    if not isinstance(index, Tensor) or index.dtype is not int64:
        raise RuntimeError("put(): Expected a long tensor for index")
    if not isinstance(source, Tensor) or source.numel() != index.numel():
        raise RuntimeError(
            f"put(): Expected source and index to have the same number of elements, but got source.numel() = "
            f"{getattr(source, 'numel', lambda: '?')()}, index.numel() = {index.numel()}"
        )
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put(): self ({input.dtype.name}) and source ({source.dtype.name}) must have the same scalar type")
    n = input.numel()
    ix = index.numpy(force=True)
    if ix.size and (ix.min() < -n or ix.max() >= n):
        bad = int(ix[(ix < -n) | (ix >= n)].ravel()[0])
        raise IndexError(f"put(): index {bad} is out of bounds for a tensor of {n} elements")
    flat = views.reshape(input, (-1,))
    out = index_put(flat, (views.reshape(index, (-1,)),), views.reshape(source, (-1,)), accumulate)
    return views.reshape(out, tuple(input.shape))


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    from .inplace import assign_result

    put(input.detach(), index, source.detach() if isinstance(source, Tensor) else source, accumulate)  # checks first
    return assign_result(input, "put_", lambda t: put(t, index, source, accumulate), others=(source,))


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    """torch.index_reduce: the slices of `source` reduced ('prod', 'mean',
    'amax', 'amin') into the input's slices named by a 1-D index along dim
    (scatter_reduce with the index broadcast over the other dims)."""
    from .index import scatter_reduce

    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(index, Tensor) or index.dtype is not int64:
        raise RuntimeError("index_reduce_(): Expected a long tensor for index")
    if index.ndim > 1:
        raise RuntimeError("index_reduce_(): Index is supposed to be a vector")
    nd = max(input.ndim, 1)
    d = _shape.norm_dim("index_reduce", dim, nd)
    if source.ndim != input.ndim or (input.ndim and source.shape[d] != index.numel()):
        raise RuntimeError(
            f"index_reduce_(): source of shape {tuple(source.shape)} must have the input's dims {tuple(input.shape)} "
            f"and index.numel() = {index.numel()} entries along dim {d}"
        )
    for k in range(input.ndim):
        if k != d and source.shape[k] != input.shape[k]:
            raise RuntimeError(f"index_reduce_(): source {tuple(source.shape)} and input {tuple(input.shape)} differ in dim {k}")
    n = input.shape[d] if input.ndim else 1
    ix = index.numpy(force=True).reshape(-1)
    if ix.size and (ix.min() < -n or ix.max() >= n):
        raise IndexError(f"index_reduce_(): index out of range for dimension {d} with size {n}")
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = index.numel()
    idx = views.expand(views.reshape(index, tuple(shape)), tuple(source.shape))
    return scatter_reduce(input, d, idx.contiguous(), source, reduce, include_self=include_self)


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    from .inplace import assign_result

    index_reduce(input.detach(), dim, index, source.detach(), reduce, include_self=include_self)  # checks first
    return assign_result(input, "index_reduce_", lambda t: index_reduce(t, dim, index, source, reduce, include_self=include_self), others=(source,))


def inplace_view(t: Tensor, op: str, fn) -> Tensor:
    """Give `t` the geometry (and the record) of the view ``fn(t)``."""
    if is_grad_enabled() and t._record is None and t._requires_grad:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation.")
    r = fn(t)
    t._shape, t._strides, t._offset = r._shape, r._strides, r._offset
    if r._record is not None:
        t._record = r._record
    return t


def geometric_(t: Tensor, p: float, *, generator=None) -> Tensor:
    """ceil(log(u) / log(1 − p)) with u uniform in (0, 1): onemodel's log on
    the float32 values, one double division and a ceil."""
    from .._numpy_exact import ieee
    from .pointwise import log
    from .random import _fill, _result, uniform64

    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = uniform64(generator, _shape.numel(t.shape)).reshape(t.shape)
    with ieee():
        uu = _result(np.maximum(1.0 - u, np.finfo(np.float32).tiny).astype(np.float32), float32)
        lq = log(_result(np.array(1.0 - p, np.float32), float32)).numpy(force=True).astype(np.float64)
        vals = np.ceil(log(uu).numpy(force=True).astype(np.float64) / lq)
        vals = np.maximum(vals, 1.0)
    return _fill(t, "geometric_", vals)


def cauchy_(t: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """median + sigma · n1 / n2 with n1, n2 two standard normal draws (the
    ratio of two normals is Cauchy; no tan needed, so no libm)."""
    from .._numpy_exact import ieee
    from .random import _fill

    n = _shape.numel(t.shape)
    pair = Tensor._empty((2, n), float32)
    from .random import normal_

    normal_(pair, 0.0, 1.0, generator=generator)
    with ieee(), np.errstate(divide="ignore", invalid="ignore"):
        a = pair.numpy(force=True).astype(np.float64)
        vals = median + sigma * (a[0] / a[1])
    return _fill(t, "cauchy_", vals.reshape(t.shape))


def log_normal_(t: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """exp(normal(mean, std)) with onemodel's exp."""
    from .pointwise import exp
    from .random import _fill, normal_

    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = Tensor._empty(tuple(t.shape), float32)
    normal_(z, mean, std, generator=generator)
    return _fill(t, "log_normal_", exp(z).numpy(force=True))
