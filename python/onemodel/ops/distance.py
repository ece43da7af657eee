"""normalize, cosine_similarity and pairwise_distance (torch.nn.functional's),
composed from the element-wise operators and onemodel's double-precision
sums (increasing element order, rounded once):

* normalize(x, p, dim, eps) = x / max(‖x‖_p, eps), ‖x‖_2 = sqrt(Σ x²),
  other p: (Σ |x|^p)^(1/p);
* cosine_similarity(a, b, dim, eps) = Σ (a / max(‖a‖, eps)) · (b / max(‖b‖, eps))
  (torch's order: each input normalised first);
* pairwise_distance(a, b, p, eps) = ‖a − b + eps‖_p over the last dim."""

from __future__ import annotations

import math

from .._shape import norm_dim
from ..tensor import Tensor
from . import reduce
from .operands import check_float
from .pointwise import abs as _abs, pow as _pow, sqrt
from .selection import clamp


def _norm(x: Tensor, p: float, dim: int, keepdim: bool) -> Tensor:
    if p == 2:
        return sqrt(reduce.sum(x.square(), dim, keepdim))
    if p == 1:
        return reduce.sum(_abs(x), dim, keepdim)
    if math.isinf(p):
        raise ValueError("norm: p = inf is not supported here (use amax of abs)")
    if p <= 0:
        raise ValueError(f"norm: p must be positive, got {p}")
    return _pow(reduce.sum(_pow(_abs(x), p), dim, keepdim), 1.0 / p)


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
