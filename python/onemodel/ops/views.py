"""View operators: results share the input's storage (reshape copies only
when no strides can express the new shape). Each is differentiable; the
backward of a view maps the gradient back to the input's shape, and the
gradients are contiguous."""

from __future__ import annotations

import numbers

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor, int64
from .._kernels import clone_contiguous, expand_to, sum_to


def _as_view_shape(g: Tensor, shape: tuple) -> Tensor:
    """`g` (contiguous) viewed with another shape of the same size."""
    return g._view(shape, _shape.contiguous_strides(shape))


class Reshape(Function):
    def forward(self, a, shape):
        strides = _shape.view_strides(a._shape, a._strides, shape)
        if strides is None:
            a = clone_contiguous(a)
            strides = _shape.contiguous_strides(shape)
        return a._view(shape, strides)

    def backward(self, g):
        return _as_view_shape(g if g.is_contiguous() else clone_contiguous(g), self.input_meta[0][0])


class View(Reshape):
    """Like Reshape but never copies (an error instead)."""

    def forward(self, a, shape):
        strides = _shape.view_strides(a._shape, a._strides, shape)
        if strides is None:
            raise ValueError(
                f"view: shape {shape} is not compatible with the input's shape {a._shape} and strides {a._strides} "
                "(at least one dimension spans two non-contiguous subspaces); use reshape() instead"
            )
        return a._view(shape, strides)


class Permute(Function):
    def forward(self, a, dims):
        self.dims = dims
        return a._view(tuple(a._shape[d] for d in dims), tuple(a._strides[d] for d in dims))

    def backward(self, g):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        gv = g._view(tuple(g._shape[d] for d in inverse), tuple(g._strides[d] for d in inverse))
        return clone_contiguous(gv)


class Expand(Function):
    def forward(self, a, shape):
        return expand_to(a, shape, "expand")

    def backward(self, g):
        return sum_to(g, self.input_meta[0][0])


class Contiguous(Function):
    def forward(self, a):
        return clone_contiguous(a)

    def backward(self, g):
        return g


class Index(Function):
    """Basic indexing: ints, slices (positive steps), None and Ellipsis."""

    def forward(self, a, spec):
        self.spec = spec
        shape, strides, offset = apply_index(a._shape, a._strides, a._offset, spec)
        return a._view(shape, strides, offset)

    def backward(self, g):
        in_shape = self.input_meta[0][0]
        out = Tensor._empty(in_shape, zeroed=True)
        shape, strides, offset = apply_index(in_shape, out._strides, 0, self.spec)
        _core.copy_(out._view(shape, strides, offset), g)
        return out


# ---------------------------------------------------------------------------
# Index parsing
# ---------------------------------------------------------------------------

def parse_index(op: str, shape: tuple, index) -> tuple:
    """Normalise an index into a tuple of ('int', i) / ('slice', start, stop, step)
    / ('new',) per output step, validated against `shape`."""
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(int(i) if isinstance(i, numbers.Integral) and not isinstance(i, bool) else i for i in index)
    for item in index:
        if isinstance(item, (list, Tensor)) or (hasattr(item, "__array__") and not isinstance(item, int)):
            raise TypeError(
                f"{op}: indexing with lists or tensors (advanced indexing) is not supported; "
                "use basic indexing (ints, slices, None, ...)"
            )
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError(f"{op}: an index can only have a single ellipsis")
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"{op}: too many indices for a tensor of {len(shape)} dimensions")
    expanded = []
    for item in index:
        if item is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - consumed))
        else:
            expanded.append(item)
    spec = []
    dim = 0
    for item in expanded:
        if item is None:
            spec.append(("new",))
            continue
        n = shape[dim]
        if isinstance(item, slice):
            start, stop, step = item.start, item.stop, item.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError(f"{op}: slice step must be positive, got {step}")
            start, stop, _ = slice(start, stop, step).indices(n)
            spec.append(("slice", start, max(stop, start), step))
        elif isinstance(item, int) and not isinstance(item, bool):
            if item < -n or item >= n:
                raise IndexError(f"{op}: index {item} is out of bounds for dimension {dim} with size {n}")
            spec.append(("int", item % n))
        else:
            raise TypeError(f"{op}: unsupported index of type {type(item).__name__}")
        dim += 1
    while dim < len(shape):
        spec.append(("slice", 0, shape[dim], 1))
        dim += 1
    return tuple(spec)


def apply_index(shape: tuple, strides: tuple, offset: int, spec: tuple):
    out_shape, out_strides = [], []
    dim = 0
    for item in spec:
        if item[0] == "new":
            out_shape.append(1)
            out_strides.append(0)
            continue
        if item[0] == "int":
            offset += item[1] * strides[dim]
        else:
            _, start, stop, step = item
            count = max(0, (stop - start + step - 1) // step)
            out_shape.append(count)
            out_strides.append(strides[dim] * step)
            if count:
                offset += start * strides[dim]
        dim += 1
    return tuple(out_shape), tuple(out_strides), offset


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------

def _shape_arg(shape) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def reshape(input: Tensor, *shape) -> Tensor:
    shape = _shape.infer_shape("reshape", _shape_arg(shape), input.numel())
    if shape == input.shape:
        return input
    return Reshape.apply(input, shape)


def view(input: Tensor, *shape) -> Tensor:
    shape = _shape.infer_shape("view", _shape_arg(shape), input.numel())
    return View.apply(input, shape)


def permute(input: Tensor, *dims) -> Tensor:
    dims = _shape_arg(dims)
    if len(dims) != input.ndim:
        raise ValueError(f"permute: {len(dims)} dims given for a tensor of {input.ndim} dimensions (shape {input.shape})")
    nd = tuple(_shape.norm_dim("permute", d, input.ndim) for d in dims)
    if sorted(nd) != list(range(input.ndim)):
        raise ValueError(f"permute: {dims} is not a permutation of the dimensions of shape {input.shape}")
    return Permute.apply(input, nd)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    d0 = _shape.norm_dim("transpose", dim0, input.ndim)
    d1 = _shape.norm_dim("transpose", dim1, input.ndim)
    dims = list(range(input.ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


def t(input: Tensor) -> Tensor:
    if input.ndim > 2:
        raise ValueError(f"t: expects a tensor with at most 2 dimensions, got shape {input.shape}")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def expand(input: Tensor, *shape) -> Tensor:
    shape = _shape_arg(shape)
    target = tuple(input.shape[i - (len(shape) - input.ndim)] if s == -1 and i >= len(shape) - input.ndim else s for i, s in enumerate(shape))
    _shape.expand_strides("expand", input.shape, input._strides, target)  # validates
    if target == input.shape:
        return input
    return Expand.apply(input, target)


def broadcast_to(input: Tensor, shape) -> Tensor:
    return expand(input, tuple(shape))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    d = _shape.norm_dim("unsqueeze", dim, input.ndim, extra=1)
    shape = input.shape[:d] + (1,) + input.shape[d:]
    return Reshape.apply(input, shape)


def squeeze(input: Tensor, dim=None) -> Tensor:
    if dim is None:
        shape = tuple(n for n in input.shape if n != 1)
    else:
        dims = _shape.norm_dims("squeeze", dim, input.ndim)
        shape = tuple(n for d, n in enumerate(input.shape) if not (d in dims and n == 1))
    if shape == input.shape:
        return input
    return Reshape.apply(input, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if input.ndim == 0:
        return reshape(input, 1)
    s = _shape.norm_dim("flatten", start_dim, input.ndim)
    e = _shape.norm_dim("flatten", end_dim, input.ndim)
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for shape {input.shape}")
    shape = input.shape[:s] + (_shape.numel(input.shape[s : e + 1]),) + input.shape[e + 1 :]
    return reshape(input, shape)


def contiguous(input: Tensor) -> Tensor:
    if input.is_contiguous():
        return input
    return Contiguous.apply(input)


def getitem(input: Tensor, index) -> Tensor:
    spec = parse_index("getitem", input.shape, index)
    return Index.apply(input, spec)


def setitem(input: Tensor, index, value) -> None:
    """``t[index] = value``: an in-place copy into a view, bumping the version."""
    input._check_inplace("setitem")
    spec = parse_index("setitem", input.shape, index)
    shape, strides, offset = apply_index(input.shape, input._strides, input._offset, spec)
    target = input._view(shape, strides, offset)
    if isinstance(value, Tensor):
        if value.dtype is not input.dtype:
            raise TypeError(f"setitem: cannot assign a {value.dtype.name} tensor into a {input.dtype.name} tensor")
        src = expand_to(value, shape, "setitem")
        if value._storage is input._storage:
            src = clone_contiguous(src)
        _core.copy_(target, src)
    else:
        if input.dtype is int64:
            value = int(value)
        _core.fill_(target, value)
    input._bump()
