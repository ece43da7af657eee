"""torch.linalg: vector norms, the matrix norms that need no singular
values, cross, det/inv/solve/slogdet (LU), matrix_power, multi_dot, and the
aliases matmul, diagonal, vecdot; orders and backward rules in
docs/tensor.md."""

from __future__ import annotations

import math

from .ops.linalg import matmul
from .ops.reduce import vector_norm


def _matrix_dims(A, dim) -> tuple:
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ValueError(f"linalg.matrix_norm: dim must be a 2-tuple of ints, got {dim!r}")
    if A.ndim < 2:
        raise ValueError(f"linalg.matrix_norm: the input must have at least 2 dimensions, got shape {tuple(A.shape)}")
    d0, d1 = (int(d) % A.ndim for d in dim)
    if d0 == d1:
        raise ValueError(f"linalg.matrix_norm: dims must be different, got {tuple(dim)}")
    return d0, d1


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002 - torch's names
    """torch.linalg.norm: ``ord=None`` is the 2-norm of the flattened input
    (over ``dim`` when given: a vector norm for an int, Frobenius for a
    2-tuple); with an ``ord``, a vector norm over an int ``dim`` (or of a
    1-D input) and a matrix norm (:func:`matrix_norm`) over a 2-tuple (or of
    a 2-D input)."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim == 1:
            return vector_norm(A, ord, None, keepdim, dtype=dtype)
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")
    if len(dim) == 2:
        return matrix_norm(A, ord, tuple(dim), keepdim, dtype=dtype)
    if len(dim) != 1:
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, got {ord!r}")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: A002
    """torch.linalg.matrix_norm for ``'fro'`` and ``ord`` = 1, −1 (max, min
    of the column sums of |A|), inf, −inf (of the row sums), composed as
    torch composes them (a 1-norm over one dim, then amax/amin over the
    other), so the gradient is torch's: ties share it evenly. ``'nuc'``, 2
    and −2 need singular values, which onemodel does not compute
    (ValueError)."""
    from .ops.reduce import amax, amin

    d0, d1 = _matrix_dims(A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    if ord in (1, -1, math.inf, -math.inf):
        if abs(ord) == math.inf:
            d0, d1 = d1, d0
        sums = vector_norm(A, 1, (d0,), keepdim, dtype=dtype)
        if not keepdim and d0 < d1:
            d1 -= 1
        return (amax if ord > 0 else amin)(sums, d1, keepdim)
    raise ValueError(f"linalg.matrix_norm: ord={ord!r} is not supported ('fro', 1, -1, inf and -inf are; 'nuc', 2 "
                     "and -2 need singular values, which onemodel does not compute)")


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """torch.linalg.diagonal: ``torch.diagonal`` with the last two dims as default."""
    from .ops.diagonal import diagonal as _diagonal

    return _diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim: int = -1):
    """torch.linalg.vecdot for real tensors: ``(x · y).sum(dim)`` over the
    broadcast operands (the product, then the double sum of the reductions)."""
    from .ops.reduce import sum as _sum

    return _sum(x * y, dim)


__all__ = ["diagonal", "matmul", "matrix_norm", "norm", "vecdot", "vector_norm"]

from .ops.products import linalg_cross as cross  # noqa: E402

__all__ += ["cross"]
from .ops.lu_solve import det, inv, matrix_power, multi_dot, slogdet, solve  # noqa: E402

__all__ += ["det", "inv", "matrix_power", "multi_dot", "slogdet", "solve"]
from .ops.triangular import LinAlgError, cholesky, solve_triangular  # noqa: E402

__all__ += ["LinAlgError", "cholesky", "solve_triangular"]
