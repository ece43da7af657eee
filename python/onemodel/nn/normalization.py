"""BatchNorm1d/2d and LayerNorm with torch's parameters and buffers
(weight, bias, running_mean, running_var, num_batches_tracked)."""

from __future__ import annotations

from .. import functional as F
from ..creation import ones, tensor, zeros
from ..tensor import int64
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    _dims: tuple = ()
    _name = "BatchNorm"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features))
            self.bias = Parameter(zeros(num_features))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
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
            self.running_mean.fill_(0.0)
            self.running_var.fill_(1.0)
            self.num_batches_tracked.fill_(0)

    def forward(self, input):
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
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, track_running_stats={self.track_running_stats}"


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)
    _name = "BatchNorm1d"


class BatchNorm2d(_BatchNorm):
    _dims = (4,)
    _name = "BatchNorm2d"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*self.normalized_shape))
            if bias:
                self.bias = Parameter(zeros(*self.normalized_shape))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
