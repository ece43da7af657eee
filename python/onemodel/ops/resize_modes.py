"""interpolate's other modes and ranks: 'nearest' and 'linear' of 3-D
inputs (the 2-D kernels over a height-1 plane), 'nearest' and
'trilinear' of 5-D inputs (the 2-D kernel over H, W, then the 1-D path
along D), 'nearest-exact' (3-D and 4-D), 'area' (adaptive average
pooling, as torch) and 'bicubic' (4-D).

'nearest-exact' reads source floor((dst + 0.5)·scale); 'bicubic' is torch's
separable cubic convolution (A = −0.75, four taps per dim, indices clamped
to the border), along W first then H, each output the taps added in order
x0·c0 + x1·c1 + x2·c2 + x3·c3; the coordinates and weights are float32 as
torch's opmath. Both are gathers (backward: the indexing scatter-add).
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, float32
from . import views
from .operands import from_array

_A = np.float32(-0.75)


def _scale(in_size: int, out_size: int, align: bool, scale) -> np.float32:
    """torch's area_pixel_compute_scale in float32."""
    if align:
        return np.float32((in_size - 1) / (out_size - 1)) if out_size > 1 else np.float32(0)
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(np.float32(in_size) / np.float32(out_size))


def _nearest_exact_index(in_size: int, out_size: int, scale) -> np.ndarray:
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else np.float32(np.float32(in_size) / np.float32(out_size))
    dst = np.arange(out_size, dtype=np.float32)
    idx = np.floor((dst + np.float32(0.5)) * s).astype(np.int64)
    return np.minimum(idx, in_size - 1)


def _volume(input: Tensor, out_size: tuple, scales: tuple, mode: str, align_corners) -> Tensor:
    """'trilinear' and 'nearest' of a 5-D input, separably: the 2-D kernel
    over (H, W) with depth folded into the channels, then the 1-D path
    along D. torch's trilinear nests the same way (D's two terms outermost,
    each an H combination of W combinations), and nearest picks per dim."""
    from .resize import Resize2dFn

    n, c, d, h, w = input.shape
    od, oh, ow = out_size
    kernel_mode = "bilinear" if mode == "trilinear" else "nearest"
    align = bool(align_corners)
    x = views.reshape(input, (n, c * d, h, w))
    x = Resize2dFn.apply(x, (oh, ow), kernel_mode, align, (scales[1], scales[2]))
    # Depth last, as a row of a height-1 plane: [n, c·oh·ow, 1, d].
    x = views.reshape(views.transpose(views.reshape(x, (n, c, d, oh * ow)), 2, 3), (n, c * oh * ow, 1, d))
    x = Resize2dFn.apply(x, (1, od), kernel_mode, align, (None, scales[0]))
    return views.reshape(views.transpose(views.reshape(x, (n, c, oh * ow, od)), 2, 3), (n, c, od, oh, ow))


def _gather(x: Tensor, dim: int, idx: np.ndarray) -> Tensor:
    from .take_put import Take

    key = [slice(None)] * x.ndim
    key[dim] = idx
    return Take.apply(x, tuple(key))


def _const(a: np.ndarray, shape) -> Tensor:
    return from_array(a.reshape(shape), float32)


def _cubic_weights(in_size: int, out_size: int, align: bool, scale):
    """The four source indices (clamped) and weights of each output."""
    s = _scale(in_size, out_size, align, scale)
    dst = np.arange(out_size, dtype=np.float32)
    real = s * dst if align else s * (dst + np.float32(0.5)) - np.float32(0.5)
    real = real.astype(np.float32)
    i0 = np.floor(real).astype(np.int64)
    t = (real - np.floor(real)).astype(np.float32)
    one = np.float32(1)
    two = np.float32(2)

    def cc1(x) -> Tensor:
        return ((_A + two) * x - (_A + np.float32(3))) * x * x + one

    def cc2(x) -> Tensor:
        return ((_A * x - np.float32(5) * _A) * x + np.float32(8) * _A) * x - np.float32(4) * _A

    w = [cc2(t + one), cc1(t), cc1(one - t), cc2(two - t)]
    idx = [np.clip(i0 - 1 + k, 0, in_size - 1) for k in range(4)]
    return idx, [wk.astype(np.float32) for wk in w]


def _cubic_along(x: Tensor, dim: int, out_size: int, align: bool, scale) -> Tensor:
    idx, w = _cubic_weights(x.shape[dim], out_size, align, scale)
    shape = [1] * x.ndim
    shape[dim] = out_size
    out = None
    for k in range(4):
        term = _gather(x, dim, idx[k]) * _const(w[k], tuple(shape))
        out = term if out is None else out + term
    return out


def interpolate_more(input: Tensor, out_size: tuple, scales: tuple, mode: str, align_corners) -> Tensor:
    """The cases ops/resize.py's kernel does not take (sizes already
    computed as torch's interpolate does)."""
    from .resize import Resize2dFn

    nd = input.ndim - 2
    if mode == "area":
        from .adaptive_pool import adaptive_avg_pool1d, adaptive_avg_pool2d

        return adaptive_avg_pool1d(input, out_size) if nd == 1 else adaptive_avg_pool2d(input, out_size)
    if mode == "nearest-exact":
        x = input
        for k in range(nd):
            x = _gather(x, 2 + k, _nearest_exact_index(input.shape[2 + k], out_size[k], scales[k]))
        return x
    if mode == "bicubic":
        x = _cubic_along(input, 3, out_size[1], bool(align_corners), scales[1])
        return _cubic_along(x, 2, out_size[0], bool(align_corners), scales[0])
    if nd == 3:
        return _volume(input, out_size, scales, mode, align_corners)
    # 'nearest' / 'linear' of a 3-D input: the 2-D kernels on a height-1 plane.
    plane = views.unsqueeze(input, 2)
    kernel_mode = "bilinear" if mode == "linear" else "nearest"
    out = Resize2dFn.apply(plane, (1, out_size[0]), kernel_mode, bool(align_corners), (None, scales[0]))
    return views.squeeze(out, 2)

