"""More torch.nn layers: the reflection / replication / circular pads,
Fold and Unfold, RMSNorm, LocalResponseNorm, LPPool1d/2d, MaxUnpool1d/2d,
Bilinear, Softmax2d, AlphaDropout, FeatureAlphaDropout and LazyLinear.
Each is a thin module over the functional form (onemodel.functional);
parameters are initialised as torch's schemes from onemodel's generator."""

from __future__ import annotations

import math

from .. import functional as F
from ..creation import empty, ones
from ..grad_mode import no_grad
from . import init
from .layers import Linear, _check_factory
from .dropout import _DropoutNd
from ..tensor import Tensor
from .misc import pad_tuple
from .module import Module
from .parameter import Parameter, optional_parameter


class _PadNd(Module):
    _n = 1
    _mode = "reflect"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = pad_tuple(padding, self._n, type(self).__name__)

    def forward(self, input) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    _n, _mode = 3, "replicate"


class CircularPad1d(_PadNd):
    _n, _mode = 1, "circular"


class CircularPad2d(_PadNd):
    _n, _mode = 2, "circular"


class CircularPad3d(_PadNd):
    _n, _mode = 3, "circular"


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, stride={self.stride}"


class Fold(Module):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        _check_factory("RMSNorm", device, dtype)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        optional_parameter(self, "weight", ones(*self.normalized_shape) if elementwise_affine else None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            with no_grad():
                self.weight.fill_(1.0)

    def forward(self, x) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _LPPoolNd(Module):
    _fn = "lp_pool1d"

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input) -> Tensor:
        return getattr(F, self._fn)(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, ceil_mode={self.ceil_mode}"


class LPPool1d(_LPPoolNd):
    _fn = "lp_pool1d"


class LPPool2d(_LPPoolNd):
    _fn = "lp_pool2d"


class _MaxUnpoolNd(Module):
    _fn = "max_unpool1d"

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def forward(self, input, indices, output_size=None) -> Tensor:
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = "max_unpool2d"


class Bilinear(Module):
    """y = x1ᵀ A x2 + b with A [out, in1, in2]; A and b drawn from
    U(±1/√in1), torch's scheme."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None, dtype=None, generator=None) -> None:
        super().__init__()
        _check_factory("Bilinear", device, dtype)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features))
        optional_parameter(self, "bias", empty(out_features) if bias else None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0.0
        init.uniform_(self.weight, -bound, bound, generator=generator)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound, generator=generator)

    def forward(self, input1, input2) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in1_features={self.in1_features}, in2_features={self.in2_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Softmax2d(Module):
    def forward(self, input) -> Tensor:
        return F.softmax2d(input)


class _AlphaDropoutNd(_DropoutNd):
    """The dropout modules' constructor, checks and printout; the forward
    calls F.alpha_dropout / F.feature_alpha_dropout."""

    _fn = "alpha_dropout"


class AlphaDropout(_AlphaDropoutNd):
    _fn = "alpha_dropout"


class FeatureAlphaDropout(_AlphaDropoutNd):
    _fn = "feature_alpha_dropout"


class LazyLinear(Linear):
    """Linear whose in_features is taken from the first input. The weight
    and bias exist from the start as empty parameters and are filled in
    place at the first call (so an optimizer made before sees them, as
    torch's UninitializedParameter); the module then becomes a Linear."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None, generator=None) -> None:
        super().__init__(0, out_features, bias, device, dtype, generator)
        self._lazy_generator = generator

    def reset_parameters(self, generator=None) -> None:
        if self.in_features:
            super().reset_parameters(generator)

    def has_uninitialized_params(self) -> bool:
        return self.in_features == 0

    def initialize_parameters(self, input) -> None:
        from .._shape import contiguous_strides
        from ..tensor import _new_storage, float32

        self.in_features = int(input.shape[-1])
        shape = (self.out_features, self.in_features)
        w = self.weight
        w._storage = _new_storage(self.out_features * self.in_features, float32)
        w._shape, w._strides, w._offset = shape, contiguous_strides(shape), 0
        self.reset_parameters(self._lazy_generator)

    def forward(self, input) -> Tensor:
        if self.has_uninitialized_params():
            with no_grad():
                self.initialize_parameters(input)
            self.__class__ = self.cls_to_become
            del self._lazy_generator
        return F.linear(input, self.weight, self.bias)
