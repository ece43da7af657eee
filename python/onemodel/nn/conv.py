"""Conv2d and ConvTranspose2d (torch's constructor arguments, parameter names
and initialisation bounds)."""

from __future__ import annotations

import math

from .. import functional as F
from ..creation import empty
from ..ops._spatial_util import pair
from ..ops.conv import conv_transpose_out_size
from . import _init
from .module import Module
from .parameter import Parameter


class _ConvNd(Module):
    _op = "Conv2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, transposed, output_padding=0, generator=None):
        super().__init__()
        op = self._op
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(f"{op}: in_channels {in_channels} and out_channels {out_channels} must be divisible by groups={groups}")
        if padding_mode != "zeros":
            raise ValueError(f"{op}: padding_mode {padding_mode!r} is not supported (only 'zeros')")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = pair(op, "kernel_size", kernel_size, 1)
        self.stride = pair(op, "stride", stride, 1)
        self.padding = padding if isinstance(padding, str) else pair(op, "padding", padding, 0)
        self.dilation = pair(op, "dilation", dilation, 1)
        self.output_padding = pair(op, "output_padding", output_padding, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = transposed
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*shape, *self.kernel_size))
        _init.kaiming_uniform_a_sqrt5_(self.weight, generator)
        if bias:
            fan_in, _ = _init.fan_in_out(self.weight.shape)
            bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            self.bias = Parameter(empty(out_channels))
            _init.uniform_(self.bias, -bound, bound, generator)
        else:
            self.register_parameter("bias", None)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0, 0):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv2d(_ConvNd):
    _op = "Conv2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode="zeros", device=None, dtype=None, generator=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, False, 0, generator)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    _op = "ConvTranspose2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None, generator=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, True, output_padding, generator)

    def forward(self, input, output_size=None):
        op = self.output_padding
        if output_size is not None:
            size = tuple(output_size)[-2:]
            op = []
            for i in range(2):
                base = conv_transpose_out_size(input.shape[-2 + i], self.kernel_size[i], self.stride[i], self.padding[i], 0, self.dilation[i])
                extra = size[i] - base
                if extra < 0 or extra >= max(self.stride[i], self.dilation[i]):
                    raise ValueError(f"ConvTranspose2d: requested output size {tuple(output_size)} is not reachable from input {tuple(input.shape)}")
                op.append(extra)
            op = tuple(op)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
