"""split, chunk and constant pad (cat and stack are in ops/join.py): copies
into and out of strided views (no arithmetic, so the bits are the inputs'
bits)."""

from __future__ import annotations

import numbers

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .index import getitem
from .join import cat, stack  # noqa: F401  (re-exported: the shape operators in one place)


def _narrow(t: Tensor, dim: int, start: int, length: int) -> Tensor:
    """A view of `t` restricted to [start, start+length) along dim (no autograd)."""
    shape = list(t._shape)
    shape[dim] = length
    return t._view(tuple(shape), t._strides, t._offset + start * t._strides[dim])


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """torch.split: views of equal chunks (the last smaller) or of the given sizes."""
    if not isinstance(tensor, Tensor):
        raise _shape.not_a_tensor("split", tensor, "tensor")
    d = _shape.norm_dim("split", dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, numbers.Integral):
        step = int(split_size_or_sections)
        if step <= 0 and n > 0:
            raise ValueError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - s) for s in range(0, n, step)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise ValueError(f"split: sections {sizes} do not add up to the size {n} of dimension {d} (shape {tuple(tensor.shape)})")
    out = []
    start = 0
    for s in sizes:
        index = (slice(None),) * d + (slice(start, start + s),)
        out.append(getitem(tensor, index))
        start += s
    return tuple(out)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("chunk", input)
    d = _shape.norm_dim("chunk", dim, input.ndim)
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = input.shape[d]
    return split(input, max(1, -(-n // chunks)), d)


class PadFn(Function):
    name = "ConstantPad"

    def forward(self, x, pads, value):
        # pads: per dim (before, after), possibly negative (cropping).
        self.pads = pads
        shape = tuple(n + a + b for n, (a, b) in zip(x.shape, pads))
        out = Tensor._empty(shape, x.dtype)
        _core.fill_(out, value)
        src, dst = self._regions(x, out)
        if src is not None:
            _core.copy_(dst, src)
        return out

    def _regions(self, inner: Tensor, outer: Tensor):
        """Matching views: the part of `inner` (unpadded) that lands in `outer` (padded)."""
        src, dst = inner, outer
        for d, (a, b) in enumerate(self.pads):
            n_in = inner.shape[d]
            in_start = max(0, -a)
            out_start = max(0, a)
            length = n_in - in_start - max(0, -b)
            if length <= 0:
                return None, None
            src = _narrow(src, d, in_start, length)
            dst = _narrow(dst, d, out_start, length)
        return src, dst

    def backward(self, g):
        dx = Tensor._empty(self.input_meta[0][0], zeroed=True)
        src, dst = self._regions(dx, g)
        if src is not None:
            _core.copy_(src, dst)
        return dx


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """torch.nn.functional.pad: `pad` lists (left, right) for the last dim,
    then the one before, …; negative values crop. Modes other than
    'constant' are in ops/padding.py."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("pad", input)
    pad = tuple(int(p) for p in pad)
    if mode != "constant":
        from .padding import pad_nonconstant

        if value is not None and value != 0:
            raise RuntimeError(f"pad: padding mode \"{mode}\" doesn't take in value argument")
        return pad_nonconstant(input, pad, mode)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding {pad} must have an even length of at most 2·{input.ndim} for shape {tuple(input.shape)}")
    pads = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        pads[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    new_shape = tuple(n + a + b for n, (a, b) in zip(input.shape, pads))
    if any(s < 0 for s in new_shape):
        raise ValueError(f"pad: padding {pad} makes the shape {tuple(input.shape)} negative: {new_shape}")
    _shape.checked_numel("pad", new_shape, input.dtype.itemsize)
    value = 0.0 if value is None else value
    if input.dtype is int64:
        value = int(value)  # torch casts the fill to the tensor's dtype (F.pad of int64 ids)
    return PadFn.apply(input, tuple(pads), value)


# ---------------------------------------------------------------------------
# resize_
# ---------------------------------------------------------------------------

def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """torch's ``Tensor.resize_``: the tensor takes the new sizes with
    contiguous strides. Its elements, read in storage order from its offset,
    keep their values where the new size fits the memory it has; a larger
    size moves it to new memory holding the old elements first and zeros
    after them (torch leaves them uninitialised). Differences from torch: the
    larger memory is the tensor's own, so other views of the old memory no
    longer see its writes (torch grows the shared storage)."""
    from .._typeinfo import contiguous_format

    if memory_format not in (None, contiguous_format):
        raise ValueError(f"resize_: only memory_format=onemodel.contiguous_format is supported, got {memory_format}")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for s in sizes:
        if not isinstance(s, numbers.Integral) or isinstance(s, bool):
            raise TypeError(f"resize_: sizes must be ints, got {type(s).__name__} in {sizes}")
    shape = tuple(int(s) for s in sizes)
    if any(s < 0 for s in shape):
        raise ValueError(f"resize_: sizes must be non-negative, got {shape}")
    if self._requires_grad or self._record is not None:
        raise RuntimeError("resize_: cannot resize a tensor that requires grad (torch refuses it too)")
    self._check_inplace("resize_")
    if shape == self._shape:
        return self
    n = _shape.checked_numel("resize_", shape, self._dtype.itemsize)
    _, strides = _shape.contiguous_layout(shape)
    self._bump()  # before any change, as every in-place write
    held = self._storage.numel - self._offset
    if n > held:
        from ..tensor import _new_storage

        old, version = self._storage, self._storage.version
        new = _new_storage(n, self._dtype, zeroed=True)
        if held > 0:
            new.numpy([held], [1], 0)[:] = old.numpy([held], [1], self._offset)
        # The new memory carries the old count of writes on, so a record
        # that saved this tensor still sees it as changed.
        for _ in range(version):
            new.bump_version()
        self._storage, self._offset = new, 0
        self._base = self._base_record = None
    self._shape, self._strides = shape, strides
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """torch's ``Tensor.resize_as_``: ``resize_`` to the template's sizes."""
    if not isinstance(the_template, Tensor):
        raise _shape.not_a_tensor("resize_as_", the_template, "the_template")
    return resize_(self, the_template._shape, memory_format=memory_format)
