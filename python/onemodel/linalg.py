"""torch.linalg's vector norms (the only part onemodel implements): orders
and backward rules in docs/tensor.md."""

from __future__ import annotations

from .ops.reduce import vector_norm


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):  # noqa: A002 - torch's names
    """torch.linalg.norm for vector orders: ``ord=None`` is the 2-norm of
    the flattened input (the Frobenius norm of a matrix); ``'fro'`` over
    the last two dims; numbers over ``dim``. Other matrix norms ('nuc', 2 of
    a matrix, …) are a ValueError."""
    if ord is None:
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if ord == "fro":
        return vector_norm(A, 2, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is None and A.ndim == 2) or (isinstance(dim, tuple) and len(dim) == 2):
        raise ValueError(f"linalg.norm: matrix norm ord={ord!r} is not supported (vector norms and 'fro' only)")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):  # noqa: A002
    if ord != "fro":
        raise ValueError(f"linalg.matrix_norm: ord={ord!r} is not supported ('fro' only)")
    return vector_norm(A, 2, dim, keepdim, dtype=dtype)


__all__ = ["matrix_norm", "norm", "vector_norm"]

from .ops.products import linalg_cross as cross  # noqa: E402

__all__ += ["cross"]
from .ops.lu_solve import det, inv, matrix_power, multi_dot, slogdet, solve  # noqa: E402

__all__ += ["det", "inv", "matrix_power", "multi_dot", "slogdet", "solve"]
