"""The 3-D layers: Conv3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d, BatchNorm3d, InstanceNorm3d (the functional forms in
ops/volumetric.py; the norms are the existing batch/instance norm over
5-D inputs)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..ops.volumetric import triple
from .conv import _ConvNd
from ..tensor import Tensor
from .module import Module
from .normalization import _BatchNorm, _InstanceNorm
from .pooling import _MaxPoolNd


class Conv3d(_ConvNd):
    _op = "Conv3d"
    _dims = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, generator=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, False, 0,
                         device, dtype, generator)

    def _tuple(self, name, value, minimum):
        return triple(self._op, name, value, minimum)

    def forward(self, input) -> Tensor:
        input, padding = self._mode_padded(input)
        return F.conv3d(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class MaxPool3d(_MaxPoolNd):
    def forward(self, input) -> Any:
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode, self.return_indices)


class AvgPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input) -> Tensor:
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input) -> Tensor:
        return F.adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input) -> Any:
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class BatchNorm3d(_BatchNorm):
    _dims = (5,)
    _name = "BatchNorm3d"


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3
    _name = "InstanceNorm3d"
