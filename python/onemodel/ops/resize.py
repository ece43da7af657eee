"""interpolate (torch.nn.functional.interpolate) for 4-D NCHW input, modes
'nearest' and 'bilinear', with torch's source coordinates; kernels in
rust/src/kernels/resize.rs."""

from __future__ import annotations

import math
import numbers

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor
from .operands import check_float, contig


class Resize2dFn(Function):
    name = "Resize2d"

    def forward(self, x, out_hw, mode, align_corners, scales):
        self.args = (mode, align_corners) + scales
        x = contig(x)
        out = Tensor._empty(x.shape[:2] + out_hw)
        _core.resize2d(out, x, *self.args, False)
        return out

    def backward(self, g):
        dx = Tensor._empty(self.input_meta[0][0])
        _core.resize2d(dx, contig(g), *self.args, True)
        return dx


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None, antialias=False) -> Tensor:
    op = "interpolate"
    check_float(op, input=input)
    if input.ndim != 4:
        raise ValueError(f"{op}: only 4-D (N, C, H, W) input is supported, got shape {tuple(input.shape)}")
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"{op}: mode {mode!r} is not supported (use 'nearest' or 'bilinear')")
    if antialias:
        raise ValueError(f"{op}: antialias=True is not supported")
    if mode == "nearest" and align_corners is not None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: exactly one of size or scale_factor must be given")
    h, w = input.shape[2], input.shape[3]
    if size is not None:
        out_hw = (int(size), int(size)) if isinstance(size, numbers.Integral) else tuple(int(s) for s in size)
        if len(out_hw) != 2:
            raise ValueError(f"{op}: size must have 2 elements for a 4-D input, got {size!r}")
        scales = (None, None)
    else:
        sf = (float(scale_factor),) * 2 if isinstance(scale_factor, numbers.Real) else tuple(float(s) for s in scale_factor)
        if len(sf) != 2:
            raise ValueError(f"{op}: scale_factor must have 2 elements for a 4-D input, got {scale_factor!r}")
        out_hw = (int(math.floor(h * sf[0])), int(math.floor(w * sf[1])))
        scales = (None, None) if recompute_scale_factor else sf
    if out_hw[0] <= 0 or out_hw[1] <= 0 or h == 0 or w == 0:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} and output size {out_hw} must be non-empty")
    return Resize2dFn.apply(input, out_hw, mode, bool(align_corners), scales)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    return interpolate(input, size, scale_factor, mode, align_corners)
