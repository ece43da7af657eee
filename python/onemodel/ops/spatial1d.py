"""The 1-D convolution and pooling operators of torch.nn.functional
(conv1d, conv_transpose1d, max_pool1d, avg_pool1d) as their 2-D
counterparts over a height-1 plane: input (N, C, L) → (N, C, 1, L), kernel
k → (1, k). The 2-D kernels' orders then are the 1-D ones (a product term
per (c, kx) in increasing order, pool taps in increasing position), so the
results are those of a dedicated 1-D kernel."""

from __future__ import annotations

from typing import Any

from .. import _core
from ..tensor import Tensor
from . import views
from .operands import check_float, ints, pool_stride
from .conv import _conv2d, _conv_transpose2d
from .pool import avg_pool2d, max_pool2d


def single(op: str, name: str, value, minimum: int = 0) -> int:
    """An int or a one-element sequence of ints, at least `minimum`."""
    return ints(op, name, value, 1, minimum)[0]


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


def _conv_operands(op: str, input, weight, layout: str) -> tuple:
    """(input as a plane, whether unbatched, weight [a, b, 1, k], the shapes
    the 2-D geometry names in its messages: the user's)."""
    check_float(op, weight=weight)
    if weight is None:
        raise TypeError(f"{op}: weight must be a Tensor, got NoneType")
    if weight.ndim != 3:
        raise ValueError(f"{op}: weight must be 3-D ({layout}, k), got shape {tuple(weight.shape)}")
    x, unbatched = _as_plane(op, input)
    return x, unbatched, views.unsqueeze(weight, 2), (tuple(input.shape), tuple(weight.shape))


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """torch.nn.functional.conv1d: weight [out, in/groups, k]; padding an
    int, a 1-tuple, 'valid' or 'same'."""
    op = "conv1d"
    x, unbatched, w, shown = _conv_operands(op, input, weight, "out_channels, in_channels/groups")
    pad = padding if isinstance(padding, str) else (0, single(op, "padding", padding))
    st, dl = single(op, "stride", stride, 1), single(op, "dilation", dilation, 1)
    if not isinstance(pad, str):
        # The 1-D sizes checked by the N-d rule, so that a size error says (k,).
        _core.conv_output_sizes(op, [x.shape[3]], ([weight.shape[2]], [st], [pad[1]], [dl]))
    return _from_plane(_conv2d(op, x, w, bias, (1, st), pad, (1, dl), groups, shown), unbatched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """torch.nn.functional.conv_transpose1d: weight [in, out/groups, k]."""
    op = "conv_transpose1d"
    x, unbatched, w, shown = _conv_operands(op, input, weight, "in_channels, out_channels/groups")
    out = _conv_transpose2d(op, x, w, bias, (1, single(op, "stride", stride, 1)), (0, single(op, "padding", padding)),
                            (0, single(op, "output_padding", output_padding)), groups,
                            (1, single(op, "dilation", dilation, 1)), shown)
    return _from_plane(out, unbatched)


def _pool_window(op: str, input, kernel_size, stride, padding) -> tuple:
    """(input as a plane, whether unbatched, kernel, stride, padding); the
    stride defaults to the kernel (None or an empty sequence), as torch."""
    x, unbatched = _as_plane(op, input)
    k = single(op, "kernel_size", kernel_size, 1)
    return x, unbatched, k, pool_stride(op, stride, (k,))[0], single(op, "padding", padding)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False) -> Any:
    """torch.nn.functional.max_pool1d (indices are positions along L)."""
    op = "max_pool1d"
    x, unbatched, k, s, p = _pool_window(op, input, kernel_size, stride, padding)
    d = single(op, "dilation", dilation, 1)
    _core.pool_output_sizes(op, [x.shape[3]], ([k], [s], [p], [d]), bool(ceil_mode))  # size errors named max_pool1d
    out = max_pool2d(x, (1, k), (1, s), (0, p), (1, d), ceil_mode, return_indices)
    if return_indices:
        return _from_plane(out[0], unbatched), _from_plane(out[1], unbatched)
    return _from_plane(out, unbatched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True) -> Tensor:
    """torch.nn.functional.avg_pool1d."""
    op = "avg_pool1d"
    x, unbatched, k, s, p = _pool_window(op, input, kernel_size, stride, padding)
    _core.pool_output_sizes(op, [x.shape[3]], ([k], [s], [p], [1]), bool(ceil_mode))  # size errors named avg_pool1d
    out = avg_pool2d(x, (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return _from_plane(out, unbatched)


__all__ = ["conv1d", "conv_transpose1d", "max_pool1d", "avg_pool1d"]
