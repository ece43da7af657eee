"""The product family beyond matmul: dot, vdot, mv, outer/ger, inner,
addmm, addmv, addr, baddbmm, addbmm, tensordot, kron, cross.

Every sum of products here is one call of the canonical GEMM (ops/linalg:
one accumulator per output starting at +0, terms in increasing k), so the
bits are those of a matmul of the same operands:

* dot/vdot/inner/mv are matmuls of the operands as [1, n]·[n, 1], [.., n]·
  [n, ..] and [m, n]·[n]: k runs over the contracted dim in index order.
* tensordot moves the contracted dims of `a` last and those of `b` first,
  in the order the ``dims`` lists give them, and flattens them row-major:
  k runs over that flattened index (the last listed dim fastest).
* addbmm sums over the batch and over k in one product: k runs over
  (batch, k) pairs, batch-major.
* the add-forms (addmm, addmv, addr, baddbmm, addbmm) compute the product
  first, then ``alpha * product`` and ``beta * input`` as separate IEEE
  multiplies (skipped when the factor is 1) and one add. With ``beta=0``
  the input is ignored (its NaNs do not propagate), as torch.

outer, ger, kron and cross multiply without summing: each output is one
rounded multiply (cross: two multiplies and one subtraction).
"""

from __future__ import annotations

import builtins

from .. import _shape
from ..tensor import Tensor, float32
from . import linalg, views


def _tensor(op: str, *ts) -> None:
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{op}: expected both operands to have the same dtype, but got {a.dtype.name} and {b.dtype.name}")


def _need_ndim(op: str, t: Tensor, ndim: int, what: str) -> None:
    if t.ndim != ndim:
        raise RuntimeError(f"{op}: {what} must be a {ndim}-D tensor, got shape {tuple(t.shape)}")


def _dot(op: str, a: Tensor, b: Tensor) -> Tensor:
    _tensor(op, a, b)
    _need_ndim(op, a, 1, "input")
    _need_ndim(op, b, 1, "other")
    _same_dtype(op, a, b)
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"{op}: inconsistent tensor size, expected {a.shape[0]} and {b.shape[0]} elements to be equal")
    return linalg.matmul(a, b)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """torch.dot: the inner product of two 1-D tensors of equal length."""
    return _dot("dot", input, tensor)


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """torch.vdot: dot with the first operand conjugated (real here: dot)."""
    return _dot("vdot", input, other)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """torch.mv: [n, m] matrix times [m] vector."""
    _tensor("mv", input, vec)
    _need_ndim("mv", input, 2, "input")
    _need_ndim("mv", vec, 1, "vec")
    _same_dtype("mv", input, vec)
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"mv: size mismatch, got input ({input.shape[0]}x{input.shape[1]}) and vec ({vec.shape[0]})")
    return linalg.matmul(input, vec)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """torch.outer (alias ger): out[i, j] = input[i] * vec2[j]."""
    _tensor("outer", input, vec2)
    _need_ndim("outer", input, 1, "input")
    _need_ndim("outer", vec2, 1, "vec2")
    return views.unsqueeze(input, 1) * views.unsqueeze(vec2, 0)


def ger(input: Tensor, vec2: Tensor) -> Tensor:
    return outer(input, vec2)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """torch.inner: the sum over the last dims; out has shape
    input.shape[:-1] + other.shape[:-1] (a product with a 0-d operand is
    element-wise)."""
    _tensor("inner", input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner: inputs of shapes {tuple(input.shape)} and {tuple(other.shape)} differ in their last dimension "
            f"({input.shape[-1]} and {other.shape[-1]})"
        )
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


def _dims_arg(a: Tensor, b: Tensor, dims) -> tuple:
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot: expects dims >= 0, but got dims={dims}")
        if dims > builtins.min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot: dims={dims} exceeds the dimensions of the operands ({a.ndim} and {b.ndim})")
        return tuple(range(a.ndim - dims, a.ndim)), tuple(range(dims))
    if not isinstance(dims, (list, tuple)) or len(dims) != 2:
        raise RuntimeError(f"tensordot: dims must be an int or a pair of lists of dims, got {dims!r}")
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError(f"tensordot: both dimension lists should have the same length, got {len(da)} and {len(db)}")
    da = tuple(_shape.norm_dim("tensordot", d, a.ndim) for d in da)
    db = tuple(_shape.norm_dim("tensordot", d, b.ndim) for d in db)
    return da, db


def tensordot(a: Tensor, b: Tensor, dims=2, out=None) -> Tensor:
    """torch.tensordot: contract `a`'s dims ``dims[0]`` with `b`'s
    ``dims[1]`` (an int n: the last n of a with the first n of b)."""
    _tensor("tensordot", a, b)
    if out is not None:
        raise TypeError("tensordot: out= is not supported")
    _same_dtype("tensordot", a, b)
    da, db = _dims_arg(a, b, dims)
    if len(set(da)) != len(da) or len(set(db)) != len(db):
        raise RuntimeError(f"tensordot: a dimension is listed twice in dims={dims!r}")
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(
                f"tensordot: contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                f"and second has size {b.shape[y]} in dim {y}"
            )
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = _shape.numel(a.shape[d] for d in da)
    pa = views.permute(a, *free_a, *da) if a.ndim else a
    pb = views.permute(b, *db, *free_b) if b.ndim else b
    out_shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    m = _shape.numel(a.shape[d] for d in free_a)
    n = _shape.numel(b.shape[d] for d in free_b)
    if a.dtype is not float32:
        # Integer tensors: the exact products in NumPy (no rounding to fix).
        return _int_product(pa, pb, m, k, n, out_shape)
    r = linalg.matmul(views.reshape(pa, (m, k)), views.reshape(pb, (k, n)))
    return views.reshape(r, out_shape)


def _int_product(pa: Tensor, pb: Tensor, m: int, k: int, n: int, out_shape: tuple) -> Tensor:
    import numpy as np

    from .operands import from_array as _from_numpy

    x = pa.numpy(force=True).reshape(m, k).astype(np.int64)
    y = pb.numpy(force=True).reshape(k, n).astype(np.int64)
    return _from_numpy((x @ y).reshape(out_shape), pa.dtype)  # (ascontiguousarray would make a 0-d result 1-d)


def _scaled_add(op: str, product: Tensor, input: Tensor, beta, alpha) -> Tensor:
    """``beta * input + alpha * product`` in torch's order (product scaled
    first; beta=0 ignores the input)."""
    _tensor(op, input)
    try:
        target = _shape.broadcast_shapes(op, tuple(input.shape), tuple(product.shape))
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    if target != tuple(product.shape):
        raise RuntimeError(f"{op}: input of shape {tuple(input.shape)} cannot be broadcast to the product's shape {tuple(product.shape)}")
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    scaled = input if beta == 1 else input * beta
    return scaled + product


def _check_float(op: str, *ts) -> None:
    for t in ts:
        if t.dtype is not float32:
            raise TypeError(f"{op}: expected float32 tensors, got {t.dtype.name}")


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.addmm: beta·input + alpha·(mat1 @ mat2), input broadcast to [n, p]."""
    _tensor("addmm", input, mat1, mat2)
    _need_ndim("addmm", mat1, 2, "mat1")
    _need_ndim("addmm", mat2, 2, "mat2")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _check_float("addmm", input, mat1, mat2)
    return _scaled_add("addmm", linalg.matmul(mat1, mat2), input, beta, alpha)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.addmv: beta·input + alpha·(mat @ vec)."""
    _tensor("addmv", input, mat, vec)
    _check_float("addmv", input, mat, vec)
    return _scaled_add("addmv", mv(mat, vec), input, beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.addr: beta·input + alpha·outer(vec1, vec2)."""
    _tensor("addr", input, vec1, vec2)
    _check_float("addr", input, vec1, vec2)
    return _scaled_add("addr", outer(vec1, vec2), input, beta, alpha)


def _check_batches(op: str, b1: Tensor, b2: Tensor) -> None:
    _need_ndim(op, b1, 3, "batch1")
    _need_ndim(op, b2, 3, "batch2")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"{op}: batch1 and batch2 must have the same number of matrices, got {b1.shape[0]} and {b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"{op}: batch1 and batch2 shapes cannot be multiplied ({b1.shape[1]}x{b1.shape[2]} and {b2.shape[1]}x{b2.shape[2]})")


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.baddbmm: beta·input + alpha·bmm(batch1, batch2)."""
    _tensor("baddbmm", input, batch1, batch2)
    _check_batches("baddbmm", batch1, batch2)
    _check_float("baddbmm", input, batch1, batch2)
    return _scaled_add("baddbmm", linalg.matmul(batch1, batch2), input, beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """torch.addbmm: beta·input + alpha·Σ_b batch1[b] @ batch2[b], the sum
    over b and k one GEMM over (b, k) pairs, batch-major."""
    _tensor("addbmm", input, batch1, batch2)
    _check_batches("addbmm", batch1, batch2)
    _check_float("addbmm", input, batch1, batch2)
    bsz, n, m = batch1.shape
    p = batch2.shape[2]
    left = views.reshape(views.permute(batch1, 1, 0, 2), (n, bsz * m))
    right = views.reshape(batch2, (bsz * m, p))
    return _scaled_add("addbmm", linalg.matmul(left, right), input, beta, alpha)


def kron(input: Tensor, other: Tensor) -> Tensor:
    """torch.kron: the Kronecker product (each output one multiply)."""
    _tensor("kron", input, other)
    if input.dtype is not float32 or other.dtype is not float32:
        if input.dtype is not other.dtype:
            raise TypeError(f"kron: operands of dtypes {input.dtype.name} and {other.dtype.name}; convert one first")
        import numpy as np

        from .operands import from_array

        return from_array(np.ascontiguousarray(np.kron(input.numpy(force=True), other.numpy(force=True))), input.dtype)
    nd = builtins.max(input.ndim, other.ndim)
    a = views.reshape(input, (1,) * (nd - input.ndim) + tuple(input.shape))
    b = views.reshape(other, (1,) * (nd - other.ndim) + tuple(other.shape))
    a_sh, b_sh = [], []
    for x, y in zip(a.shape, b.shape):
        a_sh += [x, 1]
        b_sh += [1, y]
    prod = views.reshape(a, tuple(a_sh)) * views.reshape(b, tuple(b_sh))
    return views.reshape(prod, tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: the 3-vector cross product along `dim` (None: the first
    dim of size 3 of the broadcast shape, as torch's deprecated default)."""
    _tensor("cross", input, other)
    try:
        shape = _shape.broadcast_shapes("cross", tuple(input.shape), tuple(other.shape))
    except ValueError as e:
        raise RuntimeError(str(e)) from None
    if dim is None:
        dim = next((d for d, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"cross: no dimension of size 3 in input of shape {tuple(shape)}")
    d = _shape.norm_dim("cross", dim, len(shape))
    if input.ndim != other.ndim:
        raise RuntimeError(f"cross: inputs must have the same number of dimensions, got {input.ndim} and {other.ndim}")
    if shape[d] != 3 or input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"cross: inputs dimension {dim} must have length 3, got {input.shape[d]} and {other.shape[d]}")
    a = views.expand(input, shape)
    b = views.expand(other, shape)

    def comp(t, i) -> Tensor:
        return t.select(d, i)

    c0 = comp(a, 1) * comp(b, 2) - comp(a, 2) * comp(b, 1)
    c1 = comp(a, 2) * comp(b, 0) - comp(a, 0) * comp(b, 2)
    c2 = comp(a, 0) * comp(b, 1) - comp(a, 1) * comp(b, 0)
    from .join import stack

    return stack([c0, c1, c2], dim=d)


def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """torch.linalg.cross: cross along `dim` (default the last), the inputs broadcast."""
    _tensor("linalg.cross", input, other)
    nd = builtins.max(input.ndim, other.ndim)
    a = views.reshape(input, (1,) * (nd - input.ndim) + tuple(input.shape))
    b = views.reshape(other, (1,) * (nd - other.ndim) + tuple(other.shape))
    return cross(a, b, dim)
