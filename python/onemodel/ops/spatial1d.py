"""The 1-D convolution and pooling operators of torch.nn.functional
(conv1d, conv_transpose1d, max_pool1d, avg_pool1d) as their 2-D
counterparts over a height-1 plane: input (N, C, L) → (N, C, 1, L), kernel
k → (1, k). The 2-D kernels' orders then are the 1-D ones (a product term
per (c, kx) in increasing order, pool taps in increasing position), so the
results are those of a dedicated 1-D kernel."""

from __future__ import annotations

from typing import Any

import numbers

from .. import _core
from ..tensor import Tensor
from . import views
from .operands import check_float
from .conv import conv2d, conv_transpose2d
from .pool import avg_pool2d, max_pool2d


def single(op: str, name: str, value, minimum: int = 0) -> int:
    """An int or a one-element sequence of ints, at least `minimum`."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        out = int(value)
    else:
        try:
            items = [int(v) for v in value]
        except TypeError:
            raise TypeError(f"{op}: {name} must be an int or a 1-tuple of ints, got {value!r}") from None
        if len(items) != 1:
            raise ValueError(f"{op}: {name} must be an int or a 1-tuple of ints, got {value!r}")
        out = items[0]
    if out < minimum:
        raise ValueError(f"{op}: {name} must be at least {minimum}, got {value!r}")
    if out >= 2**63:
        raise ValueError(f"{op}: {name} must be below 2**63, got {value!r}")
    return out


def _as_plane(op: str, input: Tensor) -> tuple:
    """(input as [N, C, 1, L], whether it was unbatched)."""
    check_float(op, input=input)
    if input.ndim == 2:
        return views.unsqueeze(views.unsqueeze(input, 0), 2), True
    if input.ndim != 3:
        raise ValueError(f"{op}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {tuple(input.shape)}")
    return views.unsqueeze(input, 2), False


def _from_plane(out: Tensor, unbatched: bool) -> Tensor:
    out = views.squeeze(out, 2)
    return views.squeeze(out, 0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """torch.nn.functional.conv1d: weight [out, in/groups, k]; padding an
    int, a 1-tuple, 'valid' or 'same'."""
    op = "conv1d"
    check_float(op, weight=weight)
    if weight is None:
        raise TypeError(f"{op}: weight must be a Tensor, got NoneType")
    if weight.ndim != 3:
        raise ValueError(f"{op}: weight must be 3-D (out_channels, in_channels/groups, k), got shape {tuple(weight.shape)}")
    x, unbatched = _as_plane(op, input)
    pad = padding if isinstance(padding, str) else (0, single(op, "padding", padding))
    st, dl = single(op, "stride", stride, 1), single(op, "dilation", dilation, 1)
    if isinstance(groups, int) and groups >= 1 and x.shape[1] != weight.shape[1] * groups:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of shape "
                         f"{tuple(weight.shape)} with groups={groups} expects {weight.shape[1] * groups}")
    if not isinstance(pad, str):
        # The 1-D sizes checked by the N-d rule, so that a size error names conv1d.
        _core.conv_output_sizes(op, [x.shape[3]], [weight.shape[2]], [st], [pad[1]], [dl])
    out = conv2d(x, views.unsqueeze(weight, 2), bias, (1, st), pad, (1, dl), groups)
    return _from_plane(out, unbatched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """torch.nn.functional.conv_transpose1d: weight [in, out/groups, k]."""
    op = "conv_transpose1d"
    check_float(op, weight=weight)
    if weight is None:
        raise TypeError(f"{op}: weight must be a Tensor, got NoneType")
    if weight.ndim != 3:
        raise ValueError(f"{op}: weight must be 3-D (in_channels, out_channels/groups, k), got shape {tuple(weight.shape)}")
    x, unbatched = _as_plane(op, input)
    out = conv_transpose2d(x, views.unsqueeze(weight, 2), bias, (1, single(op, "stride", stride, 1)),
                           (0, single(op, "padding", padding)), (0, single(op, "output_padding", output_padding)), groups,
                           (1, single(op, "dilation", dilation, 1)))
    return _from_plane(out, unbatched)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False) -> Any:
    """torch.nn.functional.max_pool1d (indices are positions along L)."""
    op = "max_pool1d"
    x, unbatched = _as_plane(op, input)
    k = single(op, "kernel_size", kernel_size, 1)
    s = k if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0) else single(op, "stride", stride, 1)
    p, d = single(op, "padding", padding), single(op, "dilation", dilation, 1)
    _core.pool_output_sizes(op, [x.shape[3]], [k], [s], [p], [d], bool(ceil_mode))  # size errors named max_pool1d
    out = max_pool2d(x, (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return _from_plane(out[0], unbatched), _from_plane(out[1], unbatched)
    return _from_plane(out, unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """torch.nn.functional.avg_pool1d."""
    op = "avg_pool1d"
    x, unbatched = _as_plane(op, input)
    k = single(op, "kernel_size", kernel_size, 1)
    s = k if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0) else single(op, "stride", stride, 1)
    p = single(op, "padding", padding)
    _core.pool_output_sizes(op, [x.shape[3]], [k], [s], [p], [1], bool(ceil_mode))  # size errors named avg_pool1d
    out = avg_pool2d(x, (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return _from_plane(out, unbatched)


__all__ = ["conv1d", "conv_transpose1d", "max_pool1d", "avg_pool1d"]
