"""Functional forms of layers built from existing operators: rms_norm,
local_response_norm, lp_pool1d/2d, max_unpool1d/2d, bilinear,
alpha_dropout, feature_alpha_dropout, gumbel_softmax.

Orders: rms_norm's mean of squares is a double sum in increasing element
order, rounded once, then ``x · (1/√(ms + eps)) · weight`` as separate IEEE
operations; local_response_norm's window sum over channels is a double sum
over the window in increasing channel order (a view of overlapping
windows, its backward the indexing scatter-add); bilinear is two canonical GEMMs
(einsum 'bi,oij,bj->bo': first over i, then over j); max_unpool is a
scatter (the last write of a repeated index wins, as torch's loop).
"""

from __future__ import annotations

import math

import numpy as np

from .. import _core, _shape
from ..tensor import Tensor, float32, int64
from .operands import check_float, pair
from . import views


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """torch.nn.functional.rms_norm: x / √(mean(x², last dims) + eps) · weight;
    eps=None is float32's machine epsilon, as torch."""
    from .pointwise import sqrt

    check_float("rms_norm", input=input, weight=weight)
    shape = (int(normalized_shape),) if isinstance(normalized_shape, int) else tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k :]) != shape or k > input.ndim:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: weight of shape {tuple(weight.shape)} does not match normalized_shape {shape}")
    if eps is None:
        eps = float(np.finfo(np.float32).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    if not dims:
        ms = input * input
    else:
        ms = (input * input).mean(dims, keepdim=True)
    y = input * (1.0 / sqrt(ms + eps))
    return y * weight if weight is not None else y


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """torch.nn.functional.local_response_norm: x / (k + α·mean of x² over
    a window of `size` channels)^β, the window zero-padded as torch's
    (size//2 before, (size−1)//2 after)."""
    from .pointwise import pow as _pow
    from .shape_ops import pad

    check_float("local_response_norm", input=input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    moved = sq.movedim(1, -1)
    padded = pad(moved, (size // 2, (size - 1) // 2))
    windows = padded.unfold(-1, size, 1)  # [..., C, size]
    div = windows.sum(-1) / float(size)
    div = div.movedim(-1, 1)
    div = _pow(div * alpha + k, beta)
    return input / div


def _lp_pool(op: str, input: Tensor, norm_type: float, kernel_size, stride, ceil_mode: bool, nd: int) -> Tensor:
    from .pointwise import pow as _pow

    check_float(op, input=input)
    if nd == 1:
        from .spatial1d import avg_pool1d

        k = int(kernel_size[0] if isinstance(kernel_size, (tuple, list)) else kernel_size)
        out = avg_pool1d(_pow(input, norm_type), k, stride if stride is not None else None, 0, ceil_mode)
        scale = k
    else:
        from .pool import avg_pool2d

        kh, kw = pair(op, "kernel_size", kernel_size, 1)
        out = avg_pool2d(_pow(input, norm_type), (kh, kw), stride if stride is not None else None, 0, ceil_mode)
        scale = kh * kw
    # torch: (sign(out) · relu(|out|)) · k, then the 1/p power; sign·relu(|·|)
    # is the identity on the values (a zero stays zero).
    return _pow(out * float(scale), 1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool1d", input, float(norm_type), kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    return _lp_pool("lp_pool2d", input, float(norm_type), kernel_size, stride, ceil_mode, 2)


def _unpool(op: str, input: Tensor, indices: Tensor, kernel, stride, padding, output_size, nd: int) -> Tensor:
    from .index import scatter

    check_float(op, input=input)
    if not isinstance(indices, Tensor) or indices.dtype is not int64:
        raise RuntimeError(f"{op}: expected indices to be an int64 tensor")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"{op}: Expected shape of indices to be same as that of the input tensor ({tuple(input.shape)}) but got indices tensor with shape: {tuple(indices.shape)}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}: expected a {nd + 1}-D or {nd + 2}-D input, got shape {tuple(input.shape)}")
    ks = pair(op, "kernel_size", kernel, 1) if nd == 2 else (int(kernel[0] if isinstance(kernel, (tuple, list)) else kernel),)
    st = ks if stride is None else (pair(op, "stride", stride, 1) if nd == 2 else (int(stride[0] if isinstance(stride, (tuple, list)) else stride),))
    pd = pair(op, "padding", padding, 0) if nd == 2 else (int(padding[0] if isinstance(padding, (tuple, list)) else padding),)
    spatial_in = tuple(input.shape[-nd:])
    default = tuple((n - 1) * s - 2 * p + k for n, s, p, k in zip(spatial_in, st, pd, ks))
    if output_size is None:
        out_sp = default
    else:
        out_sp = tuple(int(v) for v in output_size)[-nd:]
        if len(out_sp) != nd:
            raise ValueError(f"{op}: output_size must have {nd} spatial sizes, got {output_size}")
        for o, dflt, s in zip(out_sp, default, st):
            if not dflt - s < o < dflt + s:
                raise ValueError(f"{op}: invalid output_size {tuple(output_size)} (the default is {default}, each may differ by less than the stride {st})")
    lead = tuple(input.shape[:-nd])
    plane = _shape.numel(out_sp)
    ix = indices.numpy(force=True)
    if ix.size and (ix.min() < 0 or ix.max() >= plane):
        bad = int(ix[(ix < 0) | (ix >= plane)].ravel()[0])
        raise RuntimeError(f"{op}: Found an invalid max index: {bad} (output volumes are of size {'x'.join(map(str, out_sp))})")
    flat_in = views.reshape(input, lead + (-1,))
    flat_ix = views.reshape(indices, lead + (-1,))
    from ..creation import zeros

    out = scatter(zeros(lead + (plane,)), len(lead), flat_ix.contiguous(), flat_in)
    return views.reshape(out, lead + out_sp)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return _unpool("max_unpool1d", input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None) -> Tensor:
    return _unpool("max_unpool2d", input, indices, kernel_size, stride, padding, output_size, 2)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """torch.nn.functional.bilinear: y[..., o] = x1 · W[o] · x2 + b[o]."""
    from .einsum import einsum

    check_float("bilinear", input1=input1, input2=input2, weight=weight, bias=bias)
    if weight is None:
        raise _shape.not_a_tensor("bilinear", weight, "weight")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D [out, in1, in2], got shape {tuple(weight.shape)}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match the weight's {tuple(weight.shape[1:])}"
        )
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {tuple(input1.shape[:-1])} and {tuple(input2.shape[:-1])}")
    lead = tuple(input1.shape[:-1])
    x1 = views.reshape(input1, (-1, input1.shape[-1]))
    x2 = views.reshape(input2, (-1, input2.shape[-1]))
    y = einsum("bi,oij,bj->bo", x1, weight, x2)
    if bias is not None:
        y = y + bias
    return views.reshape(y, lead + (weight.shape[0],))


_SELU_ALPHA_PRIME = 1.7580993408473766  # −λ·α of SELU, torch's constant


def _alpha_dropout(op: str, input: Tensor, p: float, training: bool, feature: bool, generator) -> Tensor:
    from .dropout import dropout_key

    check_float(op, input=input)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input * 0.0
    if feature:
        if input.ndim < 2:
            raise RuntimeError(f"{op}: Feature dropout requires at least 2 dimensions in the input")
        mask = Tensor._empty(tuple(input.shape[:2]) + (1,) * (input.ndim - 2))
    else:
        mask = Tensor._empty(tuple(input.shape))
    _core.dropout_mask(mask, dropout_key(generator), p)
    keep = (mask != 0).float()  # 1 kept, 0 dropped
    a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME**2 * p + 1) * (1 - p))
    b = (keep - 1.0) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
    return input * (keep * a) + b


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, generator=None) -> Tensor:
    """torch.nn.functional.alpha_dropout: dropped elements take SELU's
    negative saturation value, the rest are rescaled to keep mean and
    variance (torch's formula; the mask comes from onemodel's generator)."""
    if inplace:
        raise ValueError("alpha_dropout: inplace=True is not supported")
    return _alpha_dropout("alpha_dropout", input, p, training, False, generator)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False, generator=None) -> Tensor:
    if inplace:
        raise ValueError("feature_alpha_dropout: inplace=True is not supported")
    return _alpha_dropout("feature_alpha_dropout", input, p, training, True, generator)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1, generator=None) -> Tensor:
    """torch.nn.functional.gumbel_softmax: softmax((logits + g) / tau) with
    g = −log(Exponential(1)) draws from onemodel's generator; ``hard``
    returns the one-hot of the argmax with the soft sample's gradient
    (y_hard − y_soft.detach() + y_soft)."""
    if not isinstance(logits, Tensor):
        raise _shape.not_a_tensor("gumbel_softmax", logits, "logits")
    from .index import scatter
    from .pointwise import log
    from .random import exponential_
    from .softmax import softmax

    check_float("gumbel_softmax", logits=logits)
    e = Tensor._empty(tuple(logits.shape), float32)
    exponential_(e, 1.0, generator=generator)
    gumbels = -log(e)
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    d = _shape.norm_dim("gumbel_softmax", dim, logits.ndim)
    index = y_soft.detach().argmax(d, keepdim=True)
    from ..creation import zeros_like

    y_hard = scatter(zeros_like(logits), d, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def softmax2d(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("softmax2d", input)
    from .softmax import softmax

    if input.ndim not in (3, 4):
        raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
    return softmax(input, -3)
