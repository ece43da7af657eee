"""group_norm and instance_norm (torch.nn.functional's), composed from the
normalisation kernels whose orders docs/ops.md fixes:

* group_norm: the input viewed as (N, G, C/G·spatial) is normalised over
  its last dimension by layer_norm's kernel (double-precision mean and
  variance, rounded once), then scaled and shifted per channel (one IEEE
  multiply and add per element);
* instance_norm: the input viewed as (1, N·C, spatial) goes through
  batch_norm's kernel, which normalises each (sample, channel) plane with
  its own statistics, as torch does; running statistics, when given, are
  updated per plane and averaged over the batch (double, in sample order).
"""

from __future__ import annotations

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from . import views
from .operands import check_float
from .join import cat
from .norm import batch_norm, layer_norm


def _channel_view(t: Tensor, ndim: int) -> Tensor:
    return views.reshape(t, (1, t.shape[0]) + (1,) * (ndim - 2))


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    op = "group_norm"
    check_float(op, input=input, weight=weight, bias=bias)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of at least 2 dimensions (N, C, ...), got shape {tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ValueError(f"{op}: Expected number of channels in input to be divisible by num_groups, but got input of shape {tuple(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ValueError(f"{op}: {name} of shape {tuple(t.shape)} does not match the {c} channels of input shape {tuple(input.shape)}")
    per_group = input.numel() // max(n * num_groups, 1)
    x = views.reshape(input, (n, num_groups, per_group))
    y = views.reshape(layer_norm(x, (per_group,), None, None, eps), tuple(input.shape))
    if weight is not None:
        y = y * _channel_view(weight, input.ndim)
    if bias is not None:
        y = y + _channel_view(bias, input.ndim)
    return y


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    op = "instance_norm"
    check_float(op, input=input, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    if input.ndim < 3:
        raise ValueError(f"{op}: expected an input of at least 3 dimensions (N, C, spatial...), got shape {tuple(input.shape)}")
    n, c = input.shape[0], input.shape[1]
    if use_input_stats and input.numel() // max(n * c, 1) <= 1:
        raise ValueError(f"{op}: Expected more than 1 spatial element when training, got input size {tuple(input.shape)}")
    planes = views.reshape(input, (1, n * c) + tuple(input.shape[2:]))

    def repeat(t):
        return None if t is None else cat([t] * n, 0)

    rm, rv = repeat(running_mean), repeat(running_var)
    if rm is not None:
        rm, rv = rm.detach(), rv.detach()
    out = batch_norm(planes, rm, rv, repeat(weight), repeat(bias), use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        # The per-plane updates, averaged over the batch: double, sample order.
        with no_grad():
            for target, updated in ((running_mean, rm), (running_var, rv)):
                per = updated.numpy().reshape(n, c).astype(np.float64)
                acc = np.zeros(c, dtype=np.float64)
                for i in range(n):
                    acc = acc + per[i]
                target.copy_(_from(acc / n))
    return views.reshape(out, tuple(input.shape))


def _from(a: np.ndarray) -> Tensor:
    from ..creation import tensor as make_tensor

    return make_tensor(a.astype(np.float32))


__all__ = ["group_norm", "instance_norm"]
