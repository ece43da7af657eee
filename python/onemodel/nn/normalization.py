"""BatchNorm1d/2d, LayerNorm, GroupNorm and InstanceNorm1d/2d with torch's
parameters and buffers (weight, bias, running_mean, running_var,
num_batches_tracked) and printing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import functional as F
from ..creation import ones, tensor, zeros
from ..grad_mode import no_grad
from ..tensor import int64
from .module import Module
from .parameter import optional_parameter

if TYPE_CHECKING:
    from ..tensor import Tensor


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool) -> None:
    """A norm layer's learnable scale (ones) and shift (zeros) of `shape`,
    registered as torch does: ``weight`` and ``bias`` are None without
    `affine`, ``bias`` alone is None without `bias`."""
    optional_parameter(module, "weight", ones(*shape) if affine else None)
    optional_parameter(module, "bias", zeros(*shape) if affine and bias else None)


class _BatchNorm(Module):
    _dims: tuple = ()
    _name = "BatchNorm"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *, bias=True) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory(self._name, device, dtype)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.use_bias = affine and bias
        _affine_parameters(self, (num_features,), affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features))
            self.register_buffer("running_var", ones(num_features))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.fill_(0.0)
                self.running_var.fill_(1.0)
                self.num_batches_tracked.fill_(0)

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.fill_(0.0)

    def forward(self, input) -> Tensor:
        if input.ndim not in self._dims:
            raise ValueError(f"{self._name}: expected {' or '.join(f'{d}D' for d in self._dims)} input (got {input.ndim}D input, shape {tuple(input.shape)})")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            n = int(self.num_batches_tracked.item()) + 1
            self.num_batches_tracked.fill_(n)
            if self.momentum is None:
                factor = 1.0 / n
        use_batch = self.training or self.running_mean is None
        return F.batch_norm(
            input,
            self.running_mean if not self.training or self.track_running_stats else None,
            self.running_var if not self.training or self.track_running_stats else None,
            self.weight, self.bias, use_batch, factor, self.eps,
        )

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.use_bias}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)
    _name = "BatchNorm1d"


class BatchNorm2d(_BatchNorm):
    _dims = (4,)
    _name = "BatchNorm2d"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory("LayerNorm", device, dtype)
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias)

    def forward(self, input) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1.0)
            if self.bias is not None:
                self.bias.fill_(0.0)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"


class GroupNorm(Module):
    """Normalise each group of num_channels / num_groups channels of a
    sample (with its spatial positions) to zero mean and unit variance,
    then scale and shift per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True) -> None:
        super().__init__()
        from .layers import _check_factory

        _check_factory("GroupNorm", device, dtype)
        if num_groups <= 0 or num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.use_bias = affine and bias
        _affine_parameters(self, (num_channels,), affine, bias)

    def forward(self, input) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.use_bias}"


class _InstanceNorm(_BatchNorm):
    """Each (sample, channel) plane normalised by its own statistics;
    torch's defaults: affine=False, track_running_stats=False."""

    _spatial = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None, dtype=None, *, bias=True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input) -> Tensor:
        expected = self._spatial + 2
        if input.ndim not in (expected - 1, expected):
            raise ValueError(f"expected {expected - 1}D or {expected}D input (got {input.ndim}D input)")
        unbatched = input.ndim == expected - 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features ({self.num_features}), but got: {input.shape[1]}.")
        out = F.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats, self.momentum if self.momentum is not None else 0.0, self.eps,
        )
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1
    _name = "InstanceNorm1d"


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2
    _name = "InstanceNorm2d"
