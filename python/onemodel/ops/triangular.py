"""Triangular solves and the Cholesky factorisation, in fixed order:
linalg.solve_triangular, linalg.cholesky, and
cholesky_solve / cholesky_inverse computed by them.

Both are written out in float32 NumPy the way ``lu_solve`` writes its
substitutions: every sum Σ_j l[i, j]·y[j] accumulates in increasing j from
+0 (``np.add.accumulate``, sequential), then one rounded subtraction and
one rounded division (Cholesky: a correctly rounded square root on the
diagonal). Element-wise steps and sequential scans only, so the bits are
the same on every machine; they differ from LAPACK's (blocked, fused) by
rounding.

Gradients are torch's (derivatives.yaml):

* solve_triangular (X = A⁻¹B, left): gB = solve_triangular(Aᵀ, g, upper
  flipped), gA = −gB·Xᵀ kept on A's triangle (strictly, if unitriangular);
  left=False mirrors it (gA = −Xᵀ·gB);
* cholesky (A = LLᵀ): Φ = tril(Lᵀ·gL), gA = L⁻ᵀ·½(Φ + tril(Φ, −1)ᵀ)·L⁻¹,
  as torch's cholesky_backward (gA is not symmetrised further);
* cholesky_solve and cholesky_inverse: torch's formulas, which give the
  factor a full (not triangular) gradient.
"""

from __future__ import annotations

import numpy as np

from .._numpy_exact import canonical_nan, ieee
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .operands import from_array

F32 = np.float32


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a factorisation or solve that cannot be
    completed (a RuntimeError, as torch's)."""


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """X with A X = B for one triangular [n, n] A and [n, k] B."""
    n = a.shape[0]
    x = np.array(b, dtype=F32, copy=True)
    rows = range(n - 1, -1, -1) if upper else range(n)
    for i in rows:
        done = slice(i + 1, n) if upper else slice(0, i)
        if (upper and i + 1 < n) or (not upper and i > 0):
            acc = np.add.accumulate(a[i, done, None] * x[done], axis=0, dtype=F32)[-1]
            x[i] = x[i] - acc
        if not unit:
            x[i] = x[i] / a[i, i]
    return x


def _broadcast_batch(a: np.ndarray, b: np.ndarray):
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, lead + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b = np.broadcast_to(b, lead + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    return lead, a, b


def _out(a: np.ndarray) -> Tensor:
    return from_array(canonical_nan(np.array(a, dtype=F32)), float32)


def _check_float(op: str, **tensors) -> None:
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if t.dtype is not float32:
            raise TypeError(f"{op}: {name} must be a float32 tensor, got {t.dtype.name}")


class _SolveTriangular(Function):
    def forward(self, a, b, upper: bool, unit: bool) -> Tensor:
        self.upper, self.unit = upper, unit
        with ieee(), np.errstate(all="ignore"):
            lead, an, bn = _broadcast_batch(a.numpy(force=True), b.numpy(force=True))
            xs = [_substitute(m, r, upper, unit) for m, r in zip(an, bn)]
            shape = lead + bn.shape[-2:]
            x = _out(np.stack(xs).reshape(shape) if xs else np.zeros(shape, F32))
        self.save_for_backward(a, x)
        return x

    def backward(self, g):
        from .._kernels import sum_to
        from .linalg import matmul
        from .selection import tril, triu

        a, x = self.saved_tensors
        gb = ga = None
        solved = _SolveTriangular.apply(a.detach().transpose(-2, -1), g, not self.upper, self.unit)
        if self.needs_input_grad[1]:
            gb = sum_to(solved, self.input_meta[1][0]) if tuple(solved.shape) != tuple(self.input_meta[1][0]) else solved
        if self.needs_input_grad[0]:
            full = -matmul(solved, x.transpose(-2, -1))
            k = int(self.unit)
            full = triu(full, k) if self.upper else tril(full, -k)
            ga = sum_to(full, tuple(a.shape)) if tuple(full.shape) != tuple(a.shape) else full
        return ga, gb


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False, out=None) -> Tensor:
    """torch.linalg.solve_triangular: X with A X = B (left=False: X A = B)
    for triangular A (only its ``upper`` or lower triangle is read; with
    ``unitriangular`` its diagonal is taken as ones). Batch dims broadcast."""
    op = "linalg.solve_triangular"
    _check_float(op, A=A, B=B)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, got shape {tuple(A.shape)}")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions, got shape {tuple(B.shape)}")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    try:
        np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    except ValueError:
        raise RuntimeError(f"{op}: the batch dimensions of A {tuple(A.shape)} and B {tuple(B.shape)} do not broadcast") from None
    if left:
        return _SolveTriangular.apply(A, B, bool(upper), bool(unitriangular))
    # X A = B  ⟺  Aᵀ Xᵀ = Bᵀ, Aᵀ triangular the other way.
    xt = _SolveTriangular.apply(A.transpose(-2, -1), B.transpose(-2, -1), not upper, bool(unitriangular))
    return xt.transpose(-2, -1)


def _cholesky_lower(a: np.ndarray, op: str, batch: int | None) -> np.ndarray:
    """L with A = LLᵀ, from A's lower triangle (column by column)."""
    n = a.shape[0]
    low = np.zeros((n, n), F32)
    for j in range(n):
        s = a[j, j]
        if j:
            s = s - np.add.accumulate(low[j, :j] * low[j, :j], dtype=F32)[-1]
        if not s > 0:
            where = f"(Batch element {batch}): " if batch is not None else ""
            raise LinAlgError(
                f"{op}: {where}The factorization could not be completed because the input is not positive-definite "
                f"(the leading minor of order {j + 1} is not positive-definite)."
            )
        d = np.sqrt(s, dtype=F32)
        low[j, j] = d
        if j + 1 < n:
            col = a[j + 1 :, j]
            if j:
                col = col - np.add.accumulate(low[j + 1 :, :j] * low[j, :j], axis=1, dtype=F32)[:, -1]
            low[j + 1 :, j] = col / d
    return low


class _Cholesky(Function):
    def forward(self, a, op: str) -> Tensor:
        with ieee(), np.errstate(all="ignore"):
            an = a.numpy(force=True)
            n = an.shape[-1]
            flat = an.reshape((-1, n, n))
            batched = an.ndim > 2
            ls = [_cholesky_lower(m, op, i if batched else None) for i, m in enumerate(flat)]
            low = _out(np.stack(ls).reshape(an.shape) if ls else np.zeros(an.shape, F32))
        self.save_for_backward(low)
        return low

    def backward(self, g):
        from .linalg import matmul
        from .selection import tril

        (low,) = self.saved_tensors
        low_t = low.transpose(-2, -1)
        phi = tril(matmul(low_t, g))
        phi = 0.5 * (phi + tril(phi, -1).transpose(-2, -1))
        ga = _SolveTriangular.apply(low_t, phi, True, False)
        # ga · L⁻¹: solve X L = ga, i.e. Lᵀ Xᵀ = gaᵀ.
        return _SolveTriangular.apply(low_t, ga.transpose(-2, -1), True, False).transpose(-2, -1)


def cholesky(A: Tensor, *, upper: bool = False, out=None) -> Tensor:
    """torch.linalg.cholesky: L (lower) with A = LLᵀ for symmetric
    positive-definite A (its lower triangle is read); ``upper`` returns Lᵀ.
    A matrix that is not positive-definite raises LinAlgError naming the
    leading minor, as torch."""
    op = "linalg.cholesky"
    _check_float(op, A=A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2] if A.ndim >= 2 else '?'} by {A.shape[-1] if A.ndim else '?'} matrices")
    low = _Cholesky.apply(A, op)
    return low.transpose(-2, -1) if upper else low


def _solve_with_factor(b: Tensor, factor: Tensor, upper: bool) -> Tensor:
    """(LLᵀ)⁻¹B (UᵀU with ``upper``) by two triangular solves, no graph."""
    first, second = (factor.transpose(-2, -1), factor) if upper else (factor, factor.transpose(-2, -1))
    y = _SolveTriangular.apply(first.detach(), b.detach(), False, False)
    return _SolveTriangular.apply(second.detach(), y, True, False)


class _CholeskySolve(Function):
    """torch's cholesky_solve and its backward (derivatives.yaml): gB =
    cholesky_solve(g, L); C = gB·Xᵀ + (gB·Xᵀ)ᵀ; gL = −C·L (−L·C with
    ``upper``), a full matrix as torch's."""

    def forward(self, b, factor, upper: bool) -> Tensor:
        self.upper = upper
        x = _solve_with_factor(b, factor, upper)
        self.save_for_backward(factor, x)
        return x

    def backward(self, g):
        from .._kernels import sum_to
        from .linalg import matmul

        factor, x = self.saved_tensors
        gb = _solve_with_factor(g, factor, self.upper)
        common = matmul(gb, x.transpose(-2, -1))
        common = common + common.transpose(-2, -1)
        gl = -matmul(factor, common) if self.upper else -matmul(common, factor)
        sb, sl = self.input_meta[0][0], self.input_meta[1][0]
        gb = sum_to(gb, sb) if tuple(gb.shape) != tuple(sb) else gb
        gl = sum_to(gl, sl) if tuple(gl.shape) != tuple(sl) else gl
        return gb, gl


def cholesky_removed(input=None, upper: bool = False):
    """torch.cholesky, which torch 2.x removed: the same RuntimeError, so a
    port learns the replacement."""
    raise RuntimeError(
        "cholesky: this function was deprecated since version 1.9 and is now removed (as in torch). "
        "L = torch.cholesky(A) should be replaced with L = onemodel.linalg.cholesky(A); "
        "U = torch.cholesky(A, upper=True) with U = onemodel.linalg.cholesky(A).mH"
    )


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky_solve: X with (LLᵀ) X = B from the factor L (UᵀU
    with ``upper``), as two triangular solves; batch dims broadcast."""
    op = "cholesky_solve"
    _check_float(op, B=B, L=L)
    if B.ndim < 2 or L.ndim < 2 or L.shape[-1] != L.shape[-2] or B.shape[-2] != L.shape[-1]:
        raise RuntimeError(f"{op}: Incompatible matrix sizes for B {tuple(B.shape)} and the factor {tuple(L.shape)}")
    return _CholeskySolve.apply(B, L, bool(upper))


class _CholeskyInverse(Function):
    """(LLᵀ)⁻¹ and torch's backward: C = Y·(g + gᵀ)·Y; gL = −C·L (−L·C
    with ``upper``)."""

    def forward(self, factor, upper: bool) -> Tensor:
        from ..creation import eye

        self.upper = upper
        ident = eye(factor.shape[-1])
        ident = ident.expand(tuple(factor.shape)).contiguous() if factor.ndim > 2 else ident
        y = _solve_with_factor(ident, factor, upper)
        self.save_for_backward(factor, y)
        return y

    def backward(self, g):
        from .linalg import matmul

        factor, y = self.saved_tensors
        common = matmul(y, matmul(g + g.transpose(-2, -1), y))
        return -matmul(factor, common) if self.upper else -matmul(common, factor)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """torch.cholesky_inverse: (LLᵀ)⁻¹ (with ``upper``, (UᵀU)⁻¹)."""
    _check_float("cholesky_inverse", L=L)
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, got shape {tuple(L.shape)}")
    return _CholeskyInverse.apply(L, bool(upper))
