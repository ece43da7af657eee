"""Square-matrix solvers on a fixed-order LU factorisation: linalg.solve,
linalg.inv (inverse), linalg.det (det), linalg.slogdet (slogdet, logdet),
and the product helpers linalg.multi_dot and matrix_power.

The LU is LAPACK's unblocked getf2 written out in float32 NumPy: for each
column k, the pivot is the first largest |a[i, k]| (i ≥ k), rows swap, the
column below the pivot is divided by it, and the trailing block is updated
a[i, j] = a[i, j] − l[i, k]·u[k, j] (one rounded multiply, one rounded
subtraction; k ascending for every element). The triangular solves
accumulate l[i, j]·y[j] (resp. u) in increasing j from +0 in float32, then
subtract from the right-hand side and (back substitution) divide by the
pivot. det is the product of U's diagonal in double, rounded once, times
the permutation's sign. Every step is element-wise or a sequential scan,
so the bits are the same on every machine; they differ from LAPACK's
(blocked, fused) by rounding. Gradients: inv −Yᵀ·g·Yᵀ; solve gB = A⁻ᵀg,
gA = −gB·Xᵀ; det g·det·A⁻ᵀ; slogdet g·A⁻ᵀ (the products on the GEMM).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._numpy_exact import canonical_nan, ieee
from ..autograd.function import Function
from ..tensor import Tensor, float32
from . import views
from .operands import from_array

F32 = np.float32


def _lu(a: np.ndarray):
    """LU with partial pivoting of one [n, n] float32 matrix: (lu, perm, sign)."""
    a = np.array(a, dtype=F32, copy=True)
    n = a.shape[0]
    perm = np.arange(n)
    sign = 1.0
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            perm[[k, p]] = perm[[p, k]]
            sign = -sign
        piv = a[k, k]
        if piv != 0 and k + 1 < n:
            a[k + 1 :, k] = a[k + 1 :, k] / piv
            a[k + 1 :, k + 1 :] = a[k + 1 :, k + 1 :] - a[k + 1 :, k : k + 1] * a[k : k + 1, k + 1 :]
    return a, perm, sign


def _lu_solve(lu: np.ndarray, perm: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve A x = b (b [n, m]) from A's LU."""
    n = lu.shape[0]
    y = np.array(b[perm], dtype=F32, copy=True)
    for i in range(1, n):
        acc = np.add.accumulate(lu[i, :i, None] * y[:i], axis=0, dtype=F32)[-1]
        y[i] = y[i] - acc
    x = y
    for i in range(n - 1, -1, -1):
        if i + 1 < n:
            acc = np.add.accumulate(lu[i, i + 1 :, None] * x[i + 1 :], axis=0, dtype=F32)[-1]
            x[i] = x[i] - acc
        x[i] = x[i] / lu[i, i]
    return x


def _square(op: str, a: Tensor) -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__}")
    if a.dtype is not float32:
        raise TypeError(f"{op}: expected a float32 tensor, got {a.dtype.name}")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {a.shape[-2] if a.ndim >= 2 else '?'} by {a.shape[-1] if a.ndim else '?'} matrices")


def _out(a: np.ndarray) -> Tensor:
    return from_array(canonical_nan(np.array(a, dtype=F32)), float32)


def _batch_apply(a: np.ndarray, fn):
    lead = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [fn(m) for m in flat]
    return lead, outs


class _Inv(Function):
    def forward(self, a, check_singular) -> Tensor:
        with ieee(), np.errstate(all="ignore"):
            an = a.numpy(force=True)
            n = an.shape[-1]

            def inv(m) -> Tensor:
                lu, perm, _ = _lu(m)
                if check_singular and np.any(np.diag(lu) == 0):
                    raise RuntimeError(f"linalg.inv: The diagonal element {int(np.flatnonzero(np.diag(lu) == 0)[0]) + 1} is zero, the inversion could not be completed because the input matrix is singular.")
                return _lu_solve(lu, perm, np.eye(n, dtype=F32))

            lead, outs = _batch_apply(an, inv)
            y = _out(np.stack(outs).reshape(lead + (n, n)) if outs else np.zeros(an.shape, F32))
        self.save_for_backward(y)
        return y

    def backward(self, g) -> Tensor:
        from .linalg import matmul

        (y,) = self.saved_tensors
        yt = y.transpose(-2, -1)
        return -matmul(matmul(yt, g), yt)


def inv(A: Tensor, *, out=None) -> Tensor:
    """torch.linalg.inv (batched); a singular matrix is a RuntimeError, as torch."""
    _square("linalg.inv", A)
    return _Inv.apply(A, True)


def inverse(input: Tensor) -> Tensor:
    return inv(input)


class _Solve(Function):
    def forward(self, a, b, vector) -> Tensor:
        with ieee(), np.errstate(all="ignore"):
            an, bn = a.numpy(force=True), b.numpy(force=True)
            lead = np.broadcast_shapes(an.shape[:-2], bn.shape[:-2])
            an = np.broadcast_to(an, lead + an.shape[-2:]).reshape((-1,) + an.shape[-2:])
            bn = np.broadcast_to(bn, lead + bn.shape[-2:]).reshape((-1,) + bn.shape[-2:])
            xs = []
            for m, r in zip(an, bn):
                lu, perm, _ = _lu(m)
                if np.any(np.diag(lu) == 0):
                    raise RuntimeError("linalg.solve: The solver failed because the input matrix is singular.")
                xs.append(_lu_solve(lu, perm, r))
            x = _out(np.stack(xs).reshape(lead + bn.shape[-2:]) if xs else np.zeros(lead + bn.shape[-2:], F32))
        self.save_for_backward(a, x)
        return x

    def backward(self, g) -> Tensor:
        from .linalg import matmul
        from .reduce import sum as _sum

        a, x = self.saved_tensors
        gb = solve(a.transpose(-2, -1).detach(), g)
        ga = -matmul(gb, x.transpose(-2, -1))
        ga = _sum_to(ga, tuple(a.shape), _sum)
        gb = _sum_to(gb, self.input_meta[1][0], _sum)
        return ga, gb


def _sum_to(g: Tensor, shape: tuple, _sum) -> Tensor:
    from .._kernels import sum_to

    return sum_to(g, shape) if tuple(g.shape) != tuple(shape) else g


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """torch.linalg.solve: X with A X = B (B a vector or matrices, batch
    dims broadcast); left=False solves X A = B."""
    _square("linalg.solve", A)
    if not isinstance(B, Tensor) or B.dtype is not float32:
        raise TypeError("linalg.solve: B must be a float32 tensor")
    if not left:
        return solve(A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = views.unsqueeze(B, -1) if vector else B
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({A.shape[-2]}x{A.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    x = _Solve.apply(A, b, vector)
    return views.squeeze(x, -1) if vector else x


def _lu_det_parts(an: np.ndarray):
    """Per matrix: det from the LU (the diagonal's product in double)."""
    lead, outs = _batch_apply(an, _lu)
    dets = []
    for lu, _, s in outs:
        det = s
        for v in np.diag(lu).astype(np.float64):  # increasing order, double, rounded once by the caller
            det *= v
        dets.append(det)
    return lead, dets


class _Det(Function):
    def forward(self, a) -> Tensor:
        with ieee(), np.errstate(all="ignore"):
            lead, dets = _lu_det_parts(a.numpy(force=True))
            d = _out(np.array(dets, np.float64).astype(F32).reshape(lead))
        self.save_for_backward(a, d)
        return d

    def backward(self, g) -> Tensor:
        a, d = self.saved_tensors
        ainv_t = _Inv.apply(a.detach(), False).transpose(-2, -1)
        return (g * d).unsqueeze(-1).unsqueeze(-1) * ainv_t


def det(A: Tensor) -> Tensor:
    """torch.linalg.det (and torch.det)."""
    _square("linalg.det", A)
    return _Det.apply(A)


def _abs_diag_and_sign(an: np.ndarray):
    """|diag(U)| [..., n] and sign(det) [...] of every matrix's LU."""
    with ieee(), np.errstate(all="ignore"):
        lead, outs = _batch_apply(an, _lu)
        n = an.shape[-1]
        diag = np.stack([np.abs(np.diag(lu)) for lu, _, _ in outs]).reshape(lead + (n,)) if outs else np.zeros(lead + (n,), F32)
        signs = np.array([s * np.prod(np.sign(np.diag(lu)).astype(np.float64)) for lu, _, s in outs], np.float64).reshape(lead)
    return diag, signs


class _LogAbsDet(Function):
    """log|det A| as Σ log|u_ii| (onemodel's log, a double sum), so it
    neither overflows nor underflows where det itself would; gradient g·A⁻ᵀ."""

    def forward(self, a, abs_diag) -> Tensor:
        from .pointwise import log

        self.save_for_backward(a)
        return log(_out(abs_diag)).sum(-1)

    def backward(self, g) -> Tensor:
        (a,) = self.saved_tensors
        ainv_t = _Inv.apply(a.detach(), False).transpose(-2, -1)
        return g.unsqueeze(-1).unsqueeze(-1) * ainv_t


class _Constant(Function):
    """A value computed from `a` whose gradient is zero (torch's sign of
    slogdet and matrix_power(A, 0) still require grad)."""

    def forward(self, a, value) -> Tensor:
        return value

    def backward(self, g) -> Tensor:
        return Tensor._empty(self.input_meta[0][0], float32, zeroed=True), None


def slogdet(A: Tensor) -> Any:
    """torch.linalg.slogdet: (sign, logabsdet) as a named tuple."""
    _square("linalg.slogdet", A)
    diag, signs = _abs_diag_and_sign(A.numpy(force=True))
    return _SlogdetResult(_Constant.apply(A, _out(signs.astype(F32))), _LogAbsDet.apply(A, diag))


def logdet(input: Tensor) -> Tensor:
    """torch.logdet: log|det| where det > 0, NaN where det < 0 (no gradient
    there, as torch's), −inf where det = 0."""
    from .selection import where

    sign, logabsdet = slogdet(input)
    return where(sign.detach() < 0, float("nan"), logabsdet)


def multi_dot(tensors) -> Tensor:
    """torch.linalg.multi_dot: the chained product (first/last may be 1-D),
    multiplied from the left (torch picks an order by cost; values agree to
    rounding)."""
    from .linalg import matmul

    ts = list(tensors)
    if len(ts) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(ts)}")
    out = ts[0]
    for t in ts[1:]:
        out = matmul(out, t)
    return out


def matrix_power(A: Tensor, n: int) -> Tensor:
    """torch.linalg.matrix_power with torch's order (binary powering: the
    result multiplied by z when a bit is set, z squared after each bit);
    n < 0 inverts first."""
    from ..creation import eye
    from .linalg import matmul

    _square("linalg.matrix_power", A)
    if n == 0:
        e = eye(A.shape[-1])
        e = views.expand(e, tuple(A.shape)).contiguous() if A.ndim > 2 else e
        return _Constant.apply(A, e)
    z = A if n > 0 else inv(A)
    n = abs(int(n))
    if n == 1:
        return z.clone()
    result = None
    while n > 0:
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
        if n:
            z = matmul(z, z)
    return result


from collections import namedtuple  # noqa: E402

_SlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])
