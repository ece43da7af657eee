"""Rearrangements of elements: ``narrow``, ``select``, ``unbind`` (views),
``movedim``/``swapaxes``/``unflatten`` (views), ``flip``, ``roll``
(copies), and ``repeat``/``tile``/``repeat_interleave`` (copies built
from broadcast views).

No arithmetic: forward values are the input's bits. Backward: flip and
roll move the gradient back; the repeats sum the gradient over the copies
(the broadcast-undoing double sum, or the index scatter-add of
ops/index.py for tensor repeat counts).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _shape
from ..autograd.function import Function
from ..tensor import Tensor, int64
from . import views
from .index import Take, getitem
from .operands import from_array


def _dim(op: str, dim, ndim: int) -> int:
    return _shape.norm_dim(op, int(dim) if isinstance(dim, (numbers.Integral, Tensor)) else dim, ndim)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """The view of ``length`` elements from ``start`` along ``dim``."""
    d = _dim("narrow", dim, input.ndim)
    n = input.shape[d]
    start, length = int(start), int(length)
    if start < 0:
        start += n
    if start < 0 or length < 0 or start + length > n:
        raise IndexError(f"narrow: start {start} and length {length} exceed dimension {d} of size {n} (shape {tuple(input.shape)})")
    return getitem(input, (slice(None),) * d + (slice(start, start + length),))


def select(input: Tensor, dim: int, index) -> Tensor:
    d = _dim("select", dim, input.ndim)
    return getitem(input, (slice(None),) * d + (int(index),))


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("unbind", input)
    d = _dim("unbind", dim, input.ndim)
    return tuple(select(input, d, i) for i in range(input.shape[d]))


def movedim(input: Tensor, source, destination) -> Tensor:
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"movedim: {len(src)} source dims but {len(dst)} destinations")
    src = [_dim("movedim", s, input.ndim) for s in src]
    dst = [_dim("movedim", s, input.ndim) for s in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"movedim: repeated dims in {source} or {destination}")
    order = [None] * input.ndim
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(d for d in range(input.ndim) if d not in src)
    order = [o if o is not None else next(rest) for o in order]
    return views.permute(input, *order)


moveaxis = movedim


def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    return views.transpose(input, axis0, axis1)


swapdims = swapaxes


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    d = _dim("unflatten", dim, input.ndim)
    sizes = tuple(int(s) for s in sizes)
    inner = _shape.infer_shape("unflatten", sizes, input.shape[d])
    return views.reshape(input, tuple(input.shape[:d]) + inner + tuple(input.shape[d + 1 :]))


# ---------------------------------------------------------------------------
# flip, roll
# ---------------------------------------------------------------------------

class Flip(Function):
    def forward(self, a, dims):
        self.dims = dims
        return from_array(np.flip(a.numpy(force=True), dims), a.dtype)

    def backward(self, g):
        return from_array(np.flip(g.numpy(force=True), self.dims), g.dtype)


class Roll(Function):
    def forward(self, a, shifts, dims):
        self.shifts, self.dims = shifts, dims
        return from_array(np.roll(a.numpy(force=True), shifts, dims), a.dtype)

    def backward(self, g):
        return from_array(np.roll(g.numpy(force=True), tuple(-s for s in self.shifts), self.dims), g.dtype)


def flip(input: Tensor, dims) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("flip", input)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    nd = _shape.norm_dims("flip", dims, input.ndim) if dims else ()
    return Flip.apply(input, nd)


def fliplr(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("fliplr", input)
    if input.ndim < 2:
        raise ValueError(f"fliplr: input must have at least 2 dimensions, got shape {tuple(input.shape)}")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("flipud", input)
    if input.ndim < 1:
        raise ValueError("flipud: input must have at least 1 dimension")
    return flip(input, (0,))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted along ``dims`` with wrap-around; ``dims=None``
    rolls the flattened tensor and restores the shape."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("roll", input)
    shifts = (shifts,) if isinstance(shifts, numbers.Integral) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: {len(shifts)} shifts need as many dims")
        return views.reshape(Roll.apply(views.reshape(input, -1), shifts, (0,)), input.shape)
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    if len(shifts) != len(dims):
        raise ValueError(f"roll: shifts {shifts} and dims {dims} differ in length")
    nd = tuple(_dim("roll", d, input.ndim) for d in dims)
    return Roll.apply(input, tuple(int(s) for s in shifts), nd)


# ---------------------------------------------------------------------------
# repeat, tile, repeat_interleave
# ---------------------------------------------------------------------------

def _sizes(args) -> tuple:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(int(s) for s in args)


def repeat(input: Tensor, *sizes) -> Tensor:
    """torch's ``Tensor.repeat``: the tensor tiled ``sizes`` times per dim
    (more sizes than dims add leading dims)."""
    sizes = _sizes(sizes)
    if len(sizes) < input.ndim:
        raise ValueError(f"repeat: {len(sizes)} repeat counts for a tensor of {input.ndim} dimensions (shape {tuple(input.shape)})")
    if any(s < 0 for s in sizes):
        raise ValueError(f"repeat: repeat counts must be non-negative, got {sizes}")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    x = views.reshape(input, shape)
    # [n0, n1, ...] -> [1, n0, 1, n1, ...] -> [r0, n0, r1, n1, ...] -> [r0·n0, r1·n1, ...]
    inter = tuple(v for n in shape for v in (1, n))
    big = tuple(v for r, n in zip(sizes, shape) for v in (r, n))
    x = views.expand(views.reshape(x, inter), big)
    out = views.reshape(x, tuple(r * n for r, n in zip(sizes, shape))).contiguous()
    # torch's repeat always makes new memory: a view (stride 0 where a count is > 1
    # over a size-1 dim, or all counts 1) would let an in-place op write through
    # to the input, or hit one element several times.
    return out.clone() if out._storage is input._storage else out


def tile(input: Tensor, dims) -> Tensor:
    dims = _sizes((dims,)) if not isinstance(dims, numbers.Integral) else (int(dims),)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element (or slice along ``dim``) repeated ``repeats`` times in
    place; ``repeats`` an int or a 1-D int64 tensor (one count per element).
    ``repeat_interleave(counts)`` alone gives ``arange`` repeated by counts."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("repeat_interleave", input)
    if repeats is None:
        counts = input.numpy(force=True).astype(np.int64)
        out = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        return from_array(out, int64)
    if dim is None:
        input = views.reshape(input, -1)
        dim = 0
    d = _dim("repeat_interleave", dim, input.ndim)
    n = input.shape[d]
    if isinstance(repeats, Tensor):
        counts = repeats.numpy(force=True).astype(np.int64).reshape(-1)
        if counts.size == 1:
            repeats = int(counts[0])
        else:
            if counts.size != n:
                raise ValueError(f"repeat_interleave: {counts.size} repeat counts for dimension {d} of size {n}")
            if (counts < 0).any():
                raise ValueError("repeat_interleave: repeat counts must be non-negative")
            idx = np.repeat(np.arange(n, dtype=np.int64), counts)
            return Take.apply(input, (slice(None),) * d + (idx,))
    if not isinstance(repeats, numbers.Integral) or isinstance(repeats, bool):
        raise TypeError(f"repeat_interleave: repeats must be an int or an int64 tensor, got {type(repeats).__name__}")
    r = int(repeats)
    if r < 0:
        raise ValueError(f"repeat_interleave: repeats must be non-negative, got {r}")
    shape = tuple(input.shape)
    x = views.unsqueeze(input, d + 1)
    x = views.expand(x, shape[: d + 1] + (r,) + shape[d + 1 :])
    return views.reshape(x, shape[:d] + (n * r,) + shape[d + 1 :])
