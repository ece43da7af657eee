"""Distances and statistics composed of differentiable operators: cdist,
pdist, cov, corrcoef, diff, trapezoid, cumulative_trapezoid, vander,
renorm, nanmedian, logcumsumexp.

The orders: cdist/pdist take the vector norm of the differences (a double
sum over the feature dim, increasing index, rounded once; ``p=2`` through
the √Σx² kernel, whose gradient is 0 at distance 0 as torch's); cov is a
mean (double sum), a centring subtraction and one canonical GEMM over the
observations in increasing order, then a division; trapezoid sums with the
double sum; vander is a cumprod (double running product, rounded once per
output, the same rule as torch's CPU accumulation); logcumsumexp runs
torch's recurrence ``r = max + log1p(exp(min − max))`` step by step in
float32 (one element-wise pass per position).

These differ from torch in rounding only where torch's own order differs
(torch's cdist uses a matrix product for p=2 on large inputs,
``compute_mode``); docs/api.md names the tolerances.
"""

from __future__ import annotations

from typing import Any

import builtins
import math

import numpy as np

from .. import _shape
from ..tensor import Tensor, float32, int64
from . import views


def _float(op: str, *ts) -> None:
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
        if t.dtype is not float32:
            raise RuntimeError(f"{op} only supports floating-point dtypes, got {t.dtype.name}")


def _pnorm(diff: Tensor, p: float, dim: int) -> Tensor:
    from .reduce import vector_norm

    return vector_norm(diff, p, dim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """torch.cdist: the p-norm distance between each row of x1 [*, P, M]
    and each row of x2 [*, R, M] (batch dims broadcast), computed directly
    from the differences for every compute_mode."""
    _float("cdist", x1, x2)
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    a = views.unsqueeze(x1, -2)  # [*, P, 1, M]
    b = views.unsqueeze(x2, -3)  # [*, 1, R, M]
    d = a - b
    if d.numel() == 0:
        # (The reduction kernels take no empty output.) No features: zero
        # distances; no pairs: an empty view.
        if d.shape[-1] == 0 and _shape.numel(d.shape[:-1]):
            return x1.sum(-1, keepdim=True) * 0.0 + views.unsqueeze(x2.sum(-1) * 0.0, -2)
        return d[..., 0] if d.shape[-1] else Tensor._empty(tuple(d.shape[:-1]), float32)
    return _pnorm(d, float(p), -1)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """torch.pdist: the distances between the rows i < j of an [N, M]
    input, in row-major order of (i, j)."""
    _float("pdist", input)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    if n < 2:
        return input[:0].sum(-1)  # (the norm kernel's backward does not take an empty batch)
    i, j = np.triu_indices(n, 1)
    from .operands import from_array

    ii, jj = from_array(i.astype(np.int64), int64), from_array(j.astype(np.int64), int64)
    return _pnorm(input[ii] - input[jj], float(p), -1)


def _cov_weights(name: str, t, dtype, kind: str, n_obs: int) -> Tensor:
    """cov's `name` weights checked as torch checks them: `dtype`, one
    value per observation, none negative."""
    if not isinstance(t, Tensor) or t.dtype is not dtype:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype")
    if t.ndim > 1 or t.numel() != n_obs:
        raise RuntimeError(f"cov(): expected {name} to have one dimension of size {n_obs}, got shape {tuple(t.shape)}")
    if t.numel() and bool((t < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return t


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """torch.cov: the covariance of the variables in the rows of `input`
    (observations in the columns), with frequency and analytic weights."""
    _float("cov", input)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {input.ndim} dimensions")
    x = views.reshape(input, (1, -1)) if input.ndim < 2 else input
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        w = _cov_weights("fweights", fweights, int64, "integral", n_obs).float()
    if aweights is not None:
        a = _cov_weights("aweights", aweights, float32, "floating point", n_obs)
        w = a if w is None else w * a
    from .linalg import matmul

    if w is None:
        avg = x.mean(1, keepdim=True)
        w_sum = float(n_obs)
        norm = w_sum - correction
        xc = x - avg
        prod = matmul(xc, views.transpose(xc, 0, 1))
    else:
        w_sum_t = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum_t
        if correction == 0:
            norm_t = w_sum_t
        elif aweights is None:
            norm_t = w_sum_t - correction
        else:
            norm_t = w_sum_t - correction * (w * aweights).sum() / w_sum_t
        xc = x - avg
        prod = matmul(xc * w, views.transpose(xc, 0, 1))
        norm = norm_t
    if not isinstance(norm, Tensor) and norm <= 0:
        norm = 0.0
    elif isinstance(norm, Tensor):
        from .selection import clamp

        norm = clamp(norm, min=0.0)
    out = prod / norm
    return views.reshape(out, ()) if input.ndim < 2 else out


def corrcoef(input: Tensor) -> Tensor:
    """torch.corrcoef: cov / √(diag ⊗ diag), clipped to [-1, 1]."""
    _float("corrcoef", input)
    c = cov(input)
    if c.ndim == 0:
        return c / c
    from .diagonal import diagonal
    from .pointwise import sqrt
    from .selection import clamp

    d = diagonal(c)
    sd = sqrt(d)
    c = c / views.unsqueeze(sd, 1)
    c = c / views.unsqueeze(sd, 0)
    return clamp(c, -1.0, 1.0)


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """torch.diff: the n-th forward difference along `dim` (prepend/append
    joined first); bool inputs give logical xor, as torch."""
    if not isinstance(input, Tensor):
        raise TypeError(f"diff: expected a Tensor, got {type(input).__name__}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _shape.norm_dim("diff", dim, input.ndim)
    from .join import cat

    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        if not isinstance(extra, Tensor):
            from ..creation import tensor as make

            extra = make(extra, dtype=input.dtype)
            shape = list(input.shape)
            shape[d] = 1
            extra = views.expand(views.reshape(extra, (1,) * input.ndim), tuple(shape)) if extra.ndim == 0 else extra
        parts.append(extra)
    x = input
    if parts[0] is not None or parts[1] is not None:
        x = cat([t for t in (parts[0], input, parts[1]) if t is not None], d)
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        hi = x[(slice(None),) * d + (slice(1, m),)]
        lo = x[(slice(None),) * d + (slice(0, m - 1),)]
        if x.dtype is float32:
            x = hi - lo
        else:
            # int64 and bool (logical xor) exactly, in NumPy.
            from .operands import from_array

            a, b = hi.numpy(force=True), lo.numpy(force=True)
            x = from_array(np.ascontiguousarray(a ^ b if x.dtype.name == "bool" else a - b), x.dtype)
    return x


def _trap_x(op: str, y: Tensor, x, dx, d: int):
    if x is not None and dx is not None:
        raise TypeError(f"{op}: pass either x or dx, not both")
    if x is None:
        return None, (1.0 if dx is None else dx)
    if isinstance(x, Tensor):
        if x.ndim == 1:
            if x.shape[0] != y.shape[d]:
                raise RuntimeError(
                    f"{op}: There must be one `x` value for each sample point, got {x.shape[0]} for {y.shape[d]}"
                )
            shape = [1] * y.ndim
            shape[d] = x.shape[0]
            x = views.reshape(x, tuple(shape))
        return diff(x.float() if x.dtype is not float32 else x, dim=d if x.ndim == y.ndim else -1), None
    return None, float(x)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """torch.trapezoid: the trapezoidal rule along `dim` with spacing dx
    (default 1) or sample points x."""
    _float("trapezoid", y)
    d = _shape.norm_dim("trapezoid", dim, y.ndim)
    n = y.shape[d]
    if n == 0:
        shape = tuple(s for i, s in enumerate(y.shape) if i != d)
        return y.sum(d) * 0.0 if y.requires_grad else Tensor._empty(shape, float32, zeroed=True)
    spacing, const = _trap_x("trapezoid", y, x, dx, d)
    hi = y[(slice(None),) * d + (slice(1, n),)]
    lo = y[(slice(None),) * d + (slice(0, n - 1),)]
    if spacing is None:
        # torch: (sum(y) - (y[0] + y[-1]) / 2) * dx
        ends = y.select(d, 0) + y.select(d, n - 1)
        return (y.sum(d) - ends * 0.5) * const
    return ((hi + lo) * spacing).sum(d) / 2.0


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """torch.trapz: the older name of trapezoid."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """torch.cumulative_trapezoid: the running trapezoidal rule (a cumsum
    of the interval areas, double running value)."""
    _float("cumulative_trapezoid", y)
    d = _shape.norm_dim("cumulative_trapezoid", dim, y.ndim)
    n = y.shape[d]
    spacing, const = _trap_x("cumulative_trapezoid", y, x, dx, d)
    hi = y[(slice(None),) * d + (slice(1, builtins.max(n, 1)),)]
    lo = y[(slice(None),) * d + (slice(0, builtins.max(n - 1, 0)),)]
    if spacing is None:
        return ((hi + lo) * const / 2.0).cumsum(d)
    return ((spacing * (hi + lo)) / 2.0).cumsum(d)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """torch.vander: columns x^0..x^(N-1) (decreasing unless increasing),
    as torch computes it: a cumulative product of x."""
    if not isinstance(x, Tensor):
        raise TypeError(f"vander: expected a Tensor, got {type(x).__name__}")
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from ..creation import ones
    from .join import cat

    if n == 0:
        return Tensor._empty((x.shape[0], 0), x.dtype)
    col = views.unsqueeze(x, 1)
    first = ones((x.shape[0], 1), dtype=x.dtype)
    if n == 1:
        out = first
    else:
        out = cat([first, views.expand(col, (x.shape[0], n - 1))], 1).cumprod(1)
    return out if increasing else out.flip([1])


def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """torch.renorm: each slice along `dim` whose p-norm exceeds maxnorm is
    scaled by maxnorm / (norm + 1e-7)."""
    _float("renorm", input)
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = _shape.norm_dim("renorm", dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    from .reduce import vector_norm
    from .selection import where

    norm = vector_norm(input, float(p), others, True)
    factor = where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return input * factor


def nanmedian(input: Tensor, dim=None, keepdim: bool = False) -> Any:
    """torch.nanmedian: the lower median of the non-NaN values (NaN when a
    slice holds only NaN); with `dim`, (values, indices) of the first
    occurrence in sort order (a stable sort, NaN last)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"nanmedian: expected a Tensor, got {type(input).__name__}")
    from .operands import from_array

    if dim is None:
        flat = views.reshape(input, (-1,))
        if flat.shape[0] == 0:
            return from_array(np.array(np.nan, np.float32), float32) if input.dtype is float32 else flat.sum()
        v, _ = _nanmedian_dim(flat, 0, False)
        return v
    if input.ndim == 0:
        _shape.norm_dim("nanmedian", dim, 1)
        v, i = _nanmedian_dim(views.reshape(input, (1,)), 0, False)
        return _named(views.reshape(v, ()), views.reshape(i, ()))
    d = _shape.norm_dim("nanmedian", dim, input.ndim)
    if input.shape[d] == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    v, i = _nanmedian_dim(input, d, keepdim)
    return _named(v, i)


def _named(values, indices):
    from .. import return_types

    cls = getattr(return_types, "nanmedian", None) or getattr(return_types, "median")
    return cls(values, indices)


def _nanmedian_dim(x: Tensor, d: int, keepdim: bool):
    from .operands import from_array
    from .index import gather

    values, indices = x.sort(d, stable=True)
    a = x.numpy(force=True)
    count = (~np.isnan(a)).sum(axis=d, keepdims=True) if x.dtype is float32 else np.full(
        tuple(1 if k == d else n for k, n in enumerate(a.shape)), a.shape[d])
    pos = from_array((np.maximum(count - 1, 0) // 2).astype(np.int64), int64)
    v = gather(values, d, pos)
    i = gather(indices, d, pos)
    if not keepdim:
        v = views.squeeze(v, d)
        i = views.squeeze(i, d)
    return v, i


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """torch.logcumsumexp: log Σ_{j≤i} exp(x_j) along `dim`, by the
    recurrence r_i = m + log(1 + exp(min(r, x) − m)), m = max(r_{i−1}, x_i)
    (−inf when both are −inf)."""
    _float("logcumsumexp", input)
    if input.ndim == 0:
        return input * 1.0
    d = _shape.norm_dim("logcumsumexp", dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return input * 1.0
    from .join import stack
    from .pointwise import exp, log
    from .selection import maximum, minimum, where

    outs = [input.select(d, 0) * 1.0]
    r = outs[0]
    for i in range(1, n):
        xi = input.select(d, i)
        m = maximum(r, xi)
        lo = minimum(r, xi)
        both_inf = (m == -math.inf) | (m == math.inf)
        delta = where(both_inf, 0.0, lo - m)
        step = m + log(exp(delta) + 1.0)
        r = where(both_inf, m, step)
        outs.append(r)
    return stack(outs, d)
