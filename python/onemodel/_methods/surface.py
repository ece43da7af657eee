"""The rest of torch's Tensor surface: products (dot, mv, addmm, ...),
diagonals, splits and windows, search and counts, statistics, gradient
hooks, in-place view changes, metadata aliases and dtype conversions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import ops as _ops

if TYPE_CHECKING:
    from ..autograd.hooks import TensorHookHandle
    from ..tensor import Tensor


class SurfaceMethods:
    __slots__ = ()

    # -- products ----------------------------------------------------------------
    def dot(self, other) -> Tensor:
        return _ops.products.dot(self, other)

    def vdot(self, other) -> Tensor:
        return _ops.products.vdot(self, other)

    def mv(self, vec) -> Tensor:
        return _ops.products.mv(self, vec)

    def outer(self, vec2) -> Tensor:
        return _ops.products.outer(self, vec2)

    def ger(self, vec2) -> Tensor:
        return _ops.products.outer(self, vec2)

    def inner(self, other) -> Tensor:
        return _ops.products.inner(self, other)

    def kron(self, other) -> Tensor:
        return _ops.products.kron(self, other)

    def cross(self, other, dim=None) -> Tensor:
        return _ops.products.cross(self, other, dim)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        return _ops.products.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1) -> Tensor:
        return _ops.products.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def addr(self, vec1, vec2, *, beta=1, alpha=1) -> Tensor:
        return _ops.products.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return _ops.products.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return _ops.products.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1) -> Tensor:
        return _ops.inplace.assign_result(self, "addmm_", lambda t: _ops.products.addmm(t, mat1, mat2, beta=beta, alpha=alpha), others=(mat1, mat2))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1) -> Tensor:
        return _ops.inplace.assign_result(self, "baddbmm_", lambda t: _ops.products.baddbmm(t, batch1, batch2, beta=beta, alpha=alpha), others=(batch1, batch2))

    # -- square-matrix solvers (ops/lu_solve.py) ------------------------------------------
    def inverse(self) -> Tensor:
        return _ops.lu_solve.inverse(self)

    def det(self) -> Tensor:
        return _ops.lu_solve.det(self)

    def logdet(self) -> Tensor:
        return _ops.lu_solve.logdet(self)

    def slogdet(self) -> Any:
        return _ops.lu_solve.slogdet(self)

    def matrix_power(self, n: int) -> Tensor:
        return _ops.lu_solve.matrix_power(self, n)

    # -- triangular solves and Cholesky (ops/triangular.py) --------------------------------
    def cholesky(self, upper: bool = False) -> Tensor:
        return _ops.triangular.cholesky_removed(self, upper)

    def cholesky_solve(self, input2, upper: bool = False) -> Tensor:
        return _ops.triangular.cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper: bool = False) -> Tensor:
        return _ops.triangular.cholesky_inverse(self, upper)

    # -- diagonals -----------------------------------------------------------------
    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _ops.diagonal.diagonal(self, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> Tensor:
        return _ops.diagonal.diag(self, diagonal)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
        return _ops.diagonal.diag_embed(self, offset, dim1, dim2)

    def diagflat(self, offset: int = 0) -> Tensor:
        return _ops.diagonal.diagflat(self, offset)

    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
        return _ops.diagonal.diagonal_scatter(self, src, offset, dim1, dim2)

    def trace(self) -> Tensor:
        return _ops.diagonal.trace(self)

    def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
        return _ops.diagonal.fill_diagonal_(self, fill_value, wrap)

    # -- splits, windows, index writes ------------------------------------------------
    def ravel(self) -> Tensor:
        return _ops.stacking.ravel(self)

    def take(self, index) -> Tensor:
        return _ops.stacking.take(self, index)

    def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
        return _ops.stacking.rot90(self, k, dims)

    def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
        return _ops.stacking.tensor_split(self, indices_or_sections, dim)

    def hsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return _ops.stacking.hsplit(self, indices_or_sections)

    def vsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return _ops.stacking.vsplit(self, indices_or_sections)

    def dsplit(self, indices_or_sections) -> tuple[Tensor, ...]:
        return _ops.stacking.dsplit(self, indices_or_sections)

    def select_scatter(self, src, dim: int, index: int) -> Tensor:
        return _ops.stacking.select_scatter(self, src, dim, index)

    def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
        return _ops.stacking.slice_scatter(self, src, dim, start, end, step)

    def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
        return _ops.stacking.narrow_copy(self, dim, start, length)

    def unfold(self, dimension: int, size: int, step: int) -> Tensor:
        return _ops.tensor_extras.unfold(self, dimension, size, step)

    def as_strided(self, size, stride, storage_offset=None) -> Tensor:
        return _ops.tensor_extras.as_strided(self, size, stride, storage_offset)

    def put(self, index, source, accumulate: bool = False) -> Tensor:
        return _ops.tensor_extras.put(self, index, source, accumulate)

    def put_(self, index, source, accumulate: bool = False) -> Tensor:
        return _ops.tensor_extras.put_(self, index, source, accumulate)

    def index_reduce(self, dim: int, index, source, reduce: str, *, include_self: bool = True) -> Tensor:
        return _ops.tensor_extras.index_reduce(self, dim, index, source, reduce, include_self=include_self)

    def index_reduce_(self, dim: int, index, source, reduce: str, *, include_self: bool = True) -> Tensor:
        return _ops.tensor_extras.index_reduce_(self, dim, index, source, reduce, include_self=include_self)

    # -- search, counts, statistics -------------------------------------------------------
    def bincount(self, weights=None, minlength: int = 0) -> Tensor:
        return _ops.bucketing.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002 - torch's names
        return _ops.bucketing.histc(self, bins, min, max)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None) -> Tensor | tuple[Tensor, ...]:
        return _ops.bucketing.unique_consecutive(self, return_inverse, return_counts, dim)

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
        return _ops.statistics.diff(self, n, dim, prepend, append)

    def cov(self, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
        return _ops.statistics.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Tensor:
        return _ops.statistics.corrcoef(self)

    def logcumsumexp(self, dim: int) -> Tensor:
        return _ops.statistics.logcumsumexp(self, dim)

    def nanmedian(self, dim=None, keepdim: bool = False) -> Any:
        return _ops.statistics.nanmedian(self, dim, keepdim)

    def renorm(self, p, dim: int, maxnorm) -> Tensor:
        return _ops.statistics.renorm(self, p, dim, maxnorm)

    # -- gradient hooks --------------------------------------------------------------------
    def register_hook(self, hook) -> TensorHookHandle:
        """Run ``hook(grad)`` on this tensor's gradient during backward; a
        returned tensor replaces the gradient. Returns a handle (``.remove()``)."""
        from ..autograd.hooks import register_hook

        return register_hook(self, hook)

    # -- in-place view changes ----------------------------------------------------------------
    def squeeze_(self, dim=None) -> Tensor:
        return _ops.tensor_extras.inplace_view(self, "squeeze_", lambda t: _ops.views.squeeze(t, dim))

    def unsqueeze_(self, dim: int) -> Tensor:
        return _ops.tensor_extras.inplace_view(self, "unsqueeze_", lambda t: _ops.views.unsqueeze(t, dim))

    def t_(self) -> Tensor:
        return _ops.tensor_extras.inplace_view(self, "t_", _ops.views.t)

    def transpose_(self, dim0: int, dim1: int) -> Tensor:
        return _ops.tensor_extras.inplace_view(self, "transpose_", lambda t: _ops.views.transpose(t, dim0, dim1))

    def swapdims_(self, dim0: int, dim1: int) -> Tensor:
        return self.transpose_(dim0, dim1)

    def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
        return self.transpose_(axis0, axis1)

    def sum_to_size(self, *size) -> Tensor:
        return _ops.misc_surface.sum_to_size(self, *size)

    def register_post_accumulate_grad_hook(self, hook) -> TensorHookHandle:
        """Run ``hook(tensor)`` on a leaf after its ``.grad`` was accumulated."""
        from ..autograd.hooks import register_post_accumulate_grad_hook

        return register_post_accumulate_grad_hook(self, hook)

    @property
    def is_sparse(self) -> bool:
        return False

    # -- metadata aliases --------------------------------------------------------------------------
    def nelement(self) -> int:
        return self.numel()

    def ndimension(self) -> int:
        return self.dim()

    @property
    def nbytes(self) -> int:
        return self.numel() * self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self.dtype.name != "bool"

    @property
    def H(self) -> Tensor:
        """The conjugate transpose of a matrix (real tensors: ``.T`` of a 2-D one)."""
        if self.ndim > 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return _ops.views.t(self)

    @property
    def mH(self) -> Tensor:
        return self.mT

    def adjoint(self) -> Tensor:
        return self.mT

    def conj(self) -> Tensor:
        return self

    def resolve_conj(self) -> Tensor:
        return self

    def resolve_neg(self) -> Tensor:
        return self

    # -- conversions to dtypes onemodel does not compute in: the clear TypeError --------------------
    def byte(self) -> Tensor:
        return self.to(_dtype("uint8"))

    def char(self) -> Tensor:
        return self.to(_dtype("int8"))

    def short(self) -> Tensor:
        return self.to(_dtype("int16"))

    def bfloat16(self) -> Tensor:
        return self.to(_dtype("bfloat16"))

    # -- random fills ------------------------------------------------------------------------------
    def geometric_(self, p, *, generator=None) -> Tensor:
        return _ops.tensor_extras.geometric_(self, p, generator=generator)

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
        return _ops.tensor_extras.cauchy_(self, median, sigma, generator=generator)

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
        return _ops.tensor_extras.log_normal_(self, mean, std, generator=generator)


def _dtype(name: str):
    from ..tensor import _dtype_by_name

    return _dtype_by_name(name)
