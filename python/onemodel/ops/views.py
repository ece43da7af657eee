"""View operators: results share the input's storage (reshape copies only
when no strides can express the new shape). Each is differentiable; the
backward of a view maps the gradient back to the input's shape, and the
gradients are contiguous."""

from __future__ import annotations

from .. import _core, _shape
from ..autograd.function import Function
from ..tensor import Tensor
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
        shape, strides = a._shape, a._strides
        return a._view(tuple([shape[d] for d in dims]), tuple([strides[d] for d in dims]))

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
    """Basic indexing: ints, slices (positive steps) and new axes, given as
    a spec of ('int', i) / ('slice', start, stop, step) / ('new',) items
    (ops/index.py parses an index into one)."""

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
# Basic indexing (the index itself is parsed in ops/index.py)
# ---------------------------------------------------------------------------

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
    return tuple([int(s) for s in shape])


def reshape(input: Tensor, *shape) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("reshape", input)
    shape = _shape.infer_shape("reshape", _shape_arg(shape), input.numel())
    if shape == input._shape:
        return input
    return Reshape.apply(input, shape)


def view(input: Tensor, *shape) -> Tensor:
    shape = _shape.infer_shape("view", _shape_arg(shape), input.numel())
    return View.apply(input, shape)


def permute(input: Tensor, *dims) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("permute", input)
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
    if input.ndim == 0:  # torch: dims 0 and -1 of a 0-d tensor name the tensor itself
        return Permute.apply(input, ())
    dims = list(range(input.ndim))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return Permute.apply(input, tuple(dims))


def t(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("t", input)
    if input.ndim > 2:
        raise ValueError(f"t: expects a tensor with at most 2 dimensions, got shape {input.shape}")
    return transpose(input, 0, 1) if input.ndim == 2 else input


def expand(input: Tensor, *shape) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("expand", input)
    shape = _shape_arg(shape)
    target = tuple(input.shape[i - (len(shape) - input.ndim)] if s == -1 and i >= len(shape) - input.ndim else s for i, s in enumerate(shape))
    _shape.expand_strides("expand", input.shape, input._strides, target)  # validates
    if target == input.shape:
        return input
    return Expand.apply(input, target)


def broadcast_to(input: Tensor, shape) -> Tensor:
    return expand(input, tuple(shape))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("unsqueeze", input)
    d = _shape.norm_dim("unsqueeze", dim, input.ndim, extra=1)
    shape = input.shape[:d] + (1,) + input.shape[d:]
    return Reshape.apply(input, shape)


def squeeze(input: Tensor, dim=None) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("squeeze", input)
    if dim is None:
        shape = tuple(n for n in input.shape if n != 1)
    else:
        dims = _shape.norm_dims("squeeze", dim, input.ndim)
        shape = tuple(n for d, n in enumerate(input.shape) if not (d in dims and n == 1))
    if shape == input.shape:
        return input
    return Reshape.apply(input, shape)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("flatten", input)
    if input.ndim == 0:
        return reshape(input, 1)
    s = _shape.norm_dim("flatten", start_dim, input.ndim)
    e = _shape.norm_dim("flatten", end_dim, input.ndim)
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for shape {input.shape}")
    shape = input.shape[:s] + (_shape.numel(input.shape[s : e + 1]),) + input.shape[e + 1 :]
    return reshape(input, shape)


def contiguous(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("contiguous", input)
    if input.is_contiguous():
        return input
    return Contiguous.apply(input)
