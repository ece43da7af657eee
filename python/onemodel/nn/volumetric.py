"""The 3-D layers: Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d,
AdaptiveMaxPool3d, BatchNorm3d, InstanceNorm3d (the functional forms in
ops/volumetric.py; the norms are the existing batch/instance norm over
5-D inputs)."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from .conv import _Conv, _ConvTransposeNd
from ..tensor import Tensor
from .module import Module
from .normalization import _BatchNorm, _InstanceNorm
from .pooling import _AvgPoolNd, _MaxPoolNd


class Conv3d(_Conv):
    _op, _dims, _fn = "Conv3d", 3, "conv3d"


class ConvTranspose3d(_ConvTransposeNd):
    _op, _dims, _fn = "ConvTranspose3d", 3, "conv_transpose3d"


class MaxPool3d(_MaxPoolNd):
    _fn = "max_pool3d"


class AvgPool3d(_AvgPoolNd):
    _fn = "avg_pool3d"


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
