"""normalize, cosine_similarity and pairwise_distance (torch.nn.functional's),
composed from the element-wise operators and onemodel's double-precision
sums (increasing element order, rounded once):

* normalize(x, p, dim, eps) = x / max(‖x‖_p, eps), ‖x‖_2 = sqrt(Σ x²),
  other p: (Σ |x|^p)^(1/p);
* cosine_similarity(a, b, dim, eps) = Σ (a / max(‖a‖, eps)) · (b / max(‖b‖, eps))
  (torch's order: each input normalised first);
* pairwise_distance(a, b, p, eps) = ‖a − b + eps‖_p over the last dim.

Where a norm is 0 its gradient is 0 (torch's subgradient), so a zero
vector gets torch's finite gradient through max(‖x‖, eps) instead of NaN."""

from __future__ import annotations

import math

import numpy as np

from .._kernels import binary_kernel, unary_kernel
from .._shape import norm_dim
from ..autograd.function import Function
from ..tensor import Tensor, float32
from . import reduce
from .npwise import compute
from .operands import check_float
from .pointwise import _binary_p, _unary_p, abs as _abs, pow as _pow
from .selection import clamp


class _RootZeroSafe(Function):
    """The root of a norm, s^(1/p) (sqrt for p = 2), with its usual
    backward except where s = 0: there the gradient is 0, torch's norm
    subgradient (its norm backward masks norm == 0), not 0·inf = NaN. The
    forward is the same kernel as sqrt / pow, so the same bits."""

    def forward(self, s, p: float):
        self.p = p
        y = unary_kernel("sqrt", s) if p == 2 else _unary_p("pow", s, 1.0 / p)
        self.save_for_backward(s, y)
        return y

    def backward(self, g):
        s, y = self.saved_tensors
        d = binary_kernel("sqrt_backward", g, y) if self.p == 2 else _binary_p("pow_backward", g, s, 1.0 / self.p)
        return compute("norm_backward", lambda dd, ss: np.where(ss == 0, np.float32(0), dd), [d, s], float32)


def _norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    if p == 2:
        return _RootZeroSafe.apply(reduce.sum(x.square(), dim, keepdim), 2.0)
    if p == 1:
        return reduce.sum(_abs(x), dim, keepdim)
    if math.isinf(p):
        raise ValueError("norm: p = inf is not supported here (use amax of abs)")
    if p <= 0:
        raise ValueError(f"norm: p must be positive, got {p}")
    return _RootZeroSafe.apply(reduce.sum(_pow(_abs(x), p), dim, keepdim), float(p))


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out=None) -> Tensor:
    op = "normalize"
    check_float(op, input=input)
    if out is not None:
        raise ValueError(f"{op}: out= is not supported")
    d = norm_dim(op, dim, input.ndim)
    denom = clamp(_norm(input, float(p), d, True), min=eps)
    return input / denom


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    op = "cosine_similarity"
    check_float(op, x1=x1, x2=x2)
    import numpy as np

    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    x1 = x1.expand(*shape) if tuple(x1.shape) != shape else x1
    x2 = x2.expand(*shape) if tuple(x2.shape) != shape else x2
    d = norm_dim(op, dim, len(shape))
    a = x1 / clamp(_norm(x1, 2.0, d, True), min=eps)
    b = x2 / clamp(_norm(x2, 2.0, d, True), min=eps)
    return reduce.sum(a * b, d)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    op = "pairwise_distance"
    check_float(op, x1=x1, x2=x2)
    diff = x1 - x2 + eps
    return _norm(diff, float(p), diff.ndim - 1, keepdim)


def pixel_shuffle(input, upscale_factor: int) -> Tensor:
    """(*, C·r², H, W) → (*, C, H·r, W·r) (a reshape and a permutation)."""
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    oc = c // (r * r)
    n = len(lead)
    x = input.reshape(*lead, oc, r, r, h, w)
    perm = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    return x.permute(*perm).reshape(*lead, oc, h * r, w * r)


def pixel_unshuffle(input, downscale_factor: int) -> Tensor:
    """(*, C, H·r, W·r) → (*, C·r², H, W)."""
    r = int(downscale_factor)
    *lead, c, hr, wr = input.shape
    if hr % r or wr % r:
        raise ValueError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but input.size(-2)={hr} and input.size(-1)={wr}")
    h, w = hr // r, wr // r
    n = len(lead)
    x = input.reshape(*lead, c, h, r, w, r)
    perm = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return x.permute(*perm).reshape(*lead, c * r * r, h, w)


__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle"]


def dist(input, other, p: float = 2) -> Tensor:
    """torch.dist: the p-norm of ``input − other`` (broadcast) over every
    element, as ``linalg.vector_norm(input - other, p)`` (p = 0 counts the
    non-zero differences, ±inf is the largest / smallest |difference|)."""
    check_float("dist", input=input, other=other)
    if isinstance(p, Tensor):
        p = p.item()
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise TypeError(f"dist: p must be a number, got {type(p).__name__}")
    return reduce.vector_norm(input - other, float(p))
