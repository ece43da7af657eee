"""multi_margin_loss, multilabel_margin_loss and gaussian_nll_loss, as
compositions of differentiable operators (their gradients follow).

Sums over classes are double sums in increasing class order, rounded once
(docs/engine.md, "Arithmetic rules"); torch sums in float in its own loop order, so the values
agree to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor, bool_, float32, int64
from .operands import check_float, from_array
from .loss import reduce_loss, reduction_of
from . import views


def _as_2d(op: str, input: Tensor, target: Tensor):
    check_float(op, input=input)
    if not isinstance(target, Tensor) or target.dtype is not int64:
        raise RuntimeError(f"{op}: expected target to be an int64 tensor")
    if input.ndim == 0 or input.ndim > 2:
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim batch size, but got: {tuple(input.shape)}")
    return input.ndim == 1


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.multi_margin_loss:
    Σ_{i≠y} w[y]·max(0, margin − x[y] + x[i])^p / C per sample."""
    from .index import gather
    from .selection import clamp, masked_fill

    op = "multi_margin_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    vec = _as_2d(op, input, target)
    x = views.unsqueeze(input, 0) if vec else input
    y = views.reshape(target, (-1,))
    n, c = x.shape
    if y.shape[0] != n:
        raise RuntimeError(f"{op}: inconsistent target size: {tuple(target.shape)} for input of size: {tuple(input.shape)}")
    yn = y.numpy(force=True)
    if yn.size and (yn.min() < 0 or yn.max() >= c):
        raise IndexError(f"{op}: target out of range: expected values in [0, {c}), got {yn.min()}..{yn.max()}")
    if weight is not None:
        check_float(op, weight=weight)
        if weight.ndim != 1 or weight.shape[0] != c:
            raise RuntimeError(f"{op}: weight must be a 1-D tensor of {c} elements, got shape {tuple(weight.shape)}")
    xy = gather(x, 1, views.reshape(y, (n, 1)))  # [N, 1]
    z = clamp(x - xy + margin, min=0.0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * views.reshape(weight[y], (n, 1))
    self_mask = np.zeros((n, c), bool)
    self_mask[np.arange(n), yn] = True
    m = from_array(self_mask, bool_)
    per = masked_fill(z, m, 0.0).sum(1) / float(c)
    if vec:
        per = views.reshape(per, ())
    return reduce_loss(per, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.multilabel_margin_loss: the targets of a sample
    are its target entries up to the first −1; the loss is
    Σ_{j target, i not target} max(0, 1 − (x[j] − x[i])) / C."""
    from .selection import clamp

    op = "multilabel_margin_loss"
    reduction = reduction_of(op, size_average, reduce, reduction)
    vec = _as_2d(op, input, target)
    x = views.unsqueeze(input, 0) if vec else input
    t = target.numpy(force=True).reshape(x.shape) if target.numel() == x.numel() else None
    if t is None or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}: inconsistent target size: {tuple(target.shape)} for input of size: {tuple(input.shape)}")
    n, c = x.shape
    if t.size and (t.min() < -1 or t.max() >= c):
        raise RuntimeError(f"{op}: target values must be in [-1, {c}), got {t.min()}..{t.max()}")
    pair = np.zeros((n, c, c), np.float32)  # [sample, target class j, other class i]
    for b in range(n):
        row = t[b]
        stop = np.flatnonzero(row < 0)
        targets = row[: stop[0]] if stop.size else row
        is_target = np.zeros(c, bool)
        is_target[targets] = True
        for j in targets:
            pair[b, j, ~is_target] = 1.0
    w = from_array(pair, float32)
    diff = views.unsqueeze(x, 2) - views.unsqueeze(x, 1)  # x[j] − x[i]
    h = clamp(1.0 - diff, min=0.0) * w
    per = h.sum((1, 2)) / float(c)
    if vec:
        per = views.reshape(per, ())
    return reduce_loss(per, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """torch.nn.functional.gaussian_nll_loss: 0.5·(log(max(var, eps)) +
    (input − target)² / max(var, eps)) (+ ½·log 2π when full). The clamp
    passes the gradient through unchanged, as torch's no-grad clamp."""
    from .pointwise import log
    from .selection import clamp

    op = "gaussian_nll_loss"
    check_float(op, input=input, target=target)
    if not isinstance(var, Tensor):
        var = input.detach().new_full(tuple(input.shape), float(var))
    check_float(op, var=var)
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = views.unsqueeze(var, -1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1:
            pass  # one broadcast dim of size 1 (homoscedastic along it)
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if bool((var.detach() < 0).any()):
        raise ValueError("var has negative entry/entries")
    v = var + (clamp(var.detach(), min=eps) - var.detach())
    d = input - target
    loss = (log(v) + d * d / v) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)
