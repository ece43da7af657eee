"""Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d (torch's constructor
arguments, parameter names, initialisation bounds and printing)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .. import functional as F
from ..creation import empty
from ..ops.operands import ints
from ..ops.conv import conv_transpose_out_size
from . import init
from .module import Module
from .parameter import Parameter, optional_parameter

if TYPE_CHECKING:
    from ..tensor import Tensor


class _ConvNd(Module):
    _op = "Conv2d"
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                 transposed, output_padding=0, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        from .layers import _check_factory

        op = self._op
        _check_factory(op, device, dtype)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got padding_mode='{padding_mode}'")
        if transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {op}')
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self._tuple("stride", stride, 1)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = self._tuple("kernel_size", kernel_size, 1)
        self.stride = self._tuple("stride", stride, 1)
        self.padding = padding if isinstance(padding, str) else self._tuple("padding", padding, 0)
        self.dilation = self._tuple("dilation", dilation, 1)
        self.output_padding = self._tuple("output_padding", output_padding, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        self.transposed = transposed
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*shape, *self.kernel_size))
        optional_parameter(self, "bias", empty(out_channels) if bias else None)
        self.reset_parameters(generator)

    def _mode_padded(self, input):
        """padding_mode other than 'zeros': F.pad with that mode, then a
        convolution without padding (torch's forward)."""
        if self.padding_mode == "zeros":
            return input, self.padding
        pads = []
        for i in reversed(range(self._dims)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pads += [total // 2, total - total // 2]
            elif self.padding == "valid":
                pads += [0, 0]
            else:
                pads += [self.padding[i], self.padding[i]]
        return F.pad(input, tuple(pads), mode=self.padding_mode), (0,) * self._dims

    def _tuple(self, name, value, minimum):
        return ints(self._op, name, value, self._dims, minimum)

    def reset_parameters(self, generator=None) -> None:
        # torch's: kaiming_uniform_(a=√5) for the weight, U(±1/√fan_in) for the bias.
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound, generator=generator)

    def extra_repr(self) -> str:
        n = self._dims
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """Conv1d, Conv2d and Conv3d: torch's constructor, the functional form
    named by `_fn` after the padding mode's pad."""
    _fn = "conv2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, generator=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, False, 0,
                         device, dtype, generator)

    def forward(self, input) -> Tensor:
        input, padding = self._mode_padded(input)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_Conv):
    _op, _dims, _fn = "Conv1d", 1, "conv1d"


class Conv2d(_Conv):
    _op, _dims, _fn = "Conv2d", 2, "conv2d"


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d and ConvTranspose2d: torch's constructor, the
    functional form named by `_fn`."""
    _fn = "conv_transpose2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                 dilation=1, padding_mode="zeros", device=None, dtype=None, generator=None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode, True,
                         output_padding, device, dtype, generator)

    def _output_padding(self, input, output_size):
        """torch's rule: the extra size that reaches output_size (each extra
        must be below max(stride, dilation))."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        size = tuple(output_size)[-n:]
        extra = []
        for i in range(n):
            base = conv_transpose_out_size(input.shape[-n + i], self.kernel_size[i], self.stride[i], self.padding[i], 0, self.dilation[i])
            e = size[i] - base
            if e < 0 or e >= max(self.stride[i], self.dilation[i]):
                raise ValueError(f"{self._op}: requested an output size of {tuple(output_size)}, which is not reachable from input of shape {tuple(input.shape)}")
            extra.append(e)
        return tuple(extra)

    def forward(self, input, output_size=None) -> Tensor:
        op = self._output_padding(input, output_size)
        return getattr(F, self._fn)(input, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _op, _dims, _fn = "ConvTranspose1d", 1, "conv_transpose1d"


class ConvTranspose2d(_ConvTransposeNd):
    _op, _dims, _fn = "ConvTranspose2d", 2, "conv_transpose2d"


__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
