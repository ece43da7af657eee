"""interpolate (torch.nn.functional.interpolate) for 4-D NCHW input, modes
'nearest' and 'bilinear', with torch's source coordinates; kernels in
rust/src/kernels/resize.rs. The other modes and 3-D inputs are in
ops/resize_modes.py."""

from __future__ import annotations

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
    if mode in ("area", "nearest-exact", "bicubic", "linear", "trilinear") or input.ndim in (3, 5):
        return _interpolate_more(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)
    if input.ndim != 4:
        raise ValueError(f"{op}: only 4-D (N, C, H, W) input is supported, got shape {tuple(input.shape)}")
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"{op}: mode {mode!r} is not supported (use 'nearest' or 'bilinear')")
    if antialias:
        raise ValueError(f"{op}: antialias=True is not supported")
    if mode == "nearest" and align_corners is not None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    out_hw, scales = output_size(op, input, size, scale_factor, not recompute_scale_factor)
    return Resize2dFn.apply(input, out_hw, mode, bool(align_corners), scales)


def output_size(op: str, input, size, scale_factor, keep_scales: bool) -> tuple:
    """(spatial output sizes, per-dimension scales or None) for any rank:
    an int or float applies to every spatial dimension; the sizes, scales
    and their checks are the core's geometry (rust/src/geometry)."""
    nd = input.ndim - 2
    if size is not None:
        size = (int(size),) * nd if isinstance(size, numbers.Integral) else tuple(int(s) for s in size)
    if scale_factor is not None:
        real = isinstance(scale_factor, numbers.Real)
        scale_factor = (float(scale_factor),) * nd if real else tuple(float(s) for s in scale_factor)
    shape, scales = _core.resize_geometry(op, tuple(input.shape), size, scale_factor, keep_scales)
    return tuple(shape[2:]), tuple(scales)


_MODE_RANKS = {"nearest": (3, 4, 5), "nearest-exact": (3, 4), "area": (3, 4), "linear": (3,), "bilinear": (4,), "bicubic": (4,),
               "trilinear": (5,)}


def _interpolate_more(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias) -> Tensor:
    """The modes and ranks of ops/resize_modes.py, with torch's checks."""
    from .resize_modes import interpolate_more

    op = "interpolate"
    if mode not in _MODE_RANKS:
        raise ValueError(f"{op}: mode {mode!r} is not supported (nearest, nearest-exact, area, linear, bilinear, bicubic, trilinear)")
    if input.ndim not in _MODE_RANKS[mode]:
        raise NotImplementedError(f"{op}: got a {input.ndim}D input for mode {mode!r} (onemodel: nearest takes 3-D, 4-D or 5-D, nearest-exact/area 3-D or 4-D, linear 3-D, bilinear/bicubic 4-D, trilinear 5-D)")
    if mode in ("nearest", "nearest-exact", "area") and align_corners is not None:
        raise ValueError(f"{op}: align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    if antialias:
        raise ValueError(f"{op}: antialias=True is not supported")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    # An output no tensor can hold is refused (by the core's geometry)
    # before the index tables are built.
    out, scales = output_size(op, input, size, scale_factor, not (recompute_scale_factor or mode == "area"))
    return interpolate_more(input, out, scales, mode, align_corners)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None) -> Tensor:
    return interpolate(input, size, scale_factor, mode, align_corners)
