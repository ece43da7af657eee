"""conv2d and conv_transpose2d (NCHW), forward and backward, on the
convolution kernels of rust/src/kernels/conv.rs (im2col + the canonical
GEMM; see docs/ops.md for the accumulation orders).

conv_transpose2d is the adjoint of conv2d: its forward is conv2d's
input-gradient kernel, its backward is conv2d's forward (input gradient)
and weight-gradient kernels with the roles swapped. Bias gradients are
double-precision sums over (batch, height, width) in increasing order.
"""

from __future__ import annotations

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor
from .operands import add_channel_bias, batched, check_float, contig, pair
from .._kernels import sum_kernel


def conv_out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _backward(fn: Function, g: Tensor, input_grad, weight_grad) -> tuple:
    """The gradients of a convolution record (Conv2dFn or ConvTranspose2dFn)
    for the inputs that need them: ``input_grad(dx, g, weight)`` and
    ``weight_grad(dw, x, g)`` write into fresh buffers; the bias gradient is
    the double sum of g over (batch, height, width)."""
    x, weight = fn.saved_tensors
    g = contig(g)
    need = fn.needs_input_grad
    dx = dw = db = None
    if need[0]:
        dx = Tensor._empty(x.shape)
        input_grad(dx, g, weight)
    if need[1]:
        dw = Tensor._empty(weight.shape)
        weight_grad(dw, x, g)
    if fn.has_bias:
        if need[2]:
            db = sum_kernel(g, (0, 2, 3), keepdim=False)
        return dx, dw, db
    return dx, dw


class Conv2dFn(Function):
    name = "Conv2d"

    def forward(self, x, weight, bias, geo):
        self.geo = geo
        self.has_bias = bias is not None
        x, weight = contig(x), contig(weight)
        self.save_for_backward(x, weight)
        stride, padding, dilation, groups = geo
        n, _, h, w = x.shape
        oh = conv_out_size(h, weight.shape[2], stride[0], padding[0], dilation[0])
        ow = conv_out_size(w, weight.shape[3], stride[1], padding[1], dilation[1])
        out = Tensor._empty((n, weight.shape[0], oh, ow))
        _core.conv2d_forward(out, x, weight, contig(bias) if bias is not None else None, *geo)
        return out

    def backward(self, g):
        geo = self.geo
        return _backward(
            self, g,
            lambda dx, g, w: _core.conv2d_input_grad(dx, g, w, *geo),
            lambda dw, x, g: _core.conv2d_weight_grad(dw, x, g, *geo),
        )


class ConvTranspose2dFn(Function):
    name = "ConvTranspose2d"

    def forward(self, x, weight, bias, geo, out_hw):
        self.geo = geo
        self.has_bias = bias is not None
        x, weight = contig(x), contig(weight)
        self.save_for_backward(x, weight)
        groups = geo[3]
        out = Tensor._empty((x.shape[0], weight.shape[1] * groups) + out_hw)
        _core.conv2d_input_grad(out, x, weight, *geo)
        if bias is not None:
            add_channel_bias(out, bias)
        return out

    def backward(self, g):
        # The adjoint's backward: conv2d's forward for the input, its weight
        # gradient with the roles of input and output swapped.
        geo = self.geo
        return _backward(
            self, g,
            lambda dx, g, w: _core.conv2d_forward(dx, g, w, None, *geo),
            lambda dw, x, g: _core.conv2d_weight_grad(dw, g, x, *geo),
        )


def _common(op: str, input, weight, bias, stride, padding, dilation, groups):
    check_float(op, input=input, weight=weight, bias=bias)
    x, squeeze = batched(op, input, 4)
    if weight.ndim != 4:
        raise ValueError(f"{op}: weight must be 4-D, got shape {tuple(weight.shape)}")
    if not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    stride = pair(op, "stride", stride, 1)
    dilation = pair(op, "dilation", dilation, 1)
    if any(s == 0 for s in weight.shape[2:]):
        raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} has an empty kernel")
    return x, squeeze, stride, dilation


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """torch.nn.functional.conv2d. padding: int, pair, 'valid' or 'same'."""
    op = "conv2d"
    x, squeeze, stride, dilation = _common(op, input, weight, bias, stride, padding, dilation, groups)
    c_out, cg, kh, kw = weight.shape
    if x.shape[1] != cg * groups:
        raise ValueError(
            f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, but weight of shape "
            f"{tuple(weight.shape)} with groups={groups} expects {cg * groups}"
        )
    if c_out % groups:
        raise ValueError(f"{op}: out_channels {c_out} (weight shape {tuple(weight.shape)}) is not divisible by groups={groups}")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not match out_channels {c_out}")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
            total = (dilation[0] * (kh - 1), dilation[1] * (kw - 1))
            lo = (total[0] // 2, total[1] // 2)
            if total[0] % 2 or total[1] % 2:
                from .shape_ops import pad as _pad

                x = _pad(x, (lo[1], total[1] - lo[1], lo[0], total[0] - lo[0]))
                padding = (0, 0)
            else:
                padding = lo
        else:
            raise ValueError(f"{op}: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    else:
        padding = pair(op, "padding", padding, 0)
    h, w = x.shape[2], x.shape[3]
    eff = (dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1)
    if h + 2 * padding[0] < eff[0] or w + 2 * padding[1] < eff[1]:
        raise ValueError(
            f"{op}: kernel of size {eff[0]}x{eff[1]} (dilated, weight shape {tuple(weight.shape)}) is larger than the padded "
            f"input {h + 2 * padding[0]}x{w + 2 * padding[1]} (input shape {tuple(input.shape)}, padding {padding})"
        )
    geo = (stride, padding, dilation, groups)
    out = Conv2dFn.apply(x, weight, bias, geo) if bias is not None else Conv2dFn.apply(x, weight, None, geo)
    return out.squeeze(0) if squeeze else out


def conv_transpose_out_size(size, k, s, p, op_, d):
    return (size - 1) * s - 2 * p + d * (k - 1) + op_ + 1


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """torch.nn.functional.conv_transpose2d (weight [in, out/groups, kh, kw])."""
    op = "conv_transpose2d"
    x, squeeze, stride, dilation = _common(op, input, weight, bias, stride, padding, dilation, groups)
    padding = pair(op, "padding", padding, 0)
    output_padding = pair(op, "output_padding", output_padding, 0)
    c_in, cog, kh, kw = weight.shape
    if x.shape[1] != c_in:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {x.shape[1]} channels, weight of shape {tuple(weight.shape)} expects {c_in}")
    if c_in % groups:
        raise ValueError(f"{op}: in_channels {c_in} (weight shape {tuple(weight.shape)}) is not divisible by groups={groups}")
    if bias is not None and tuple(bias.shape) != (cog * groups,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not match out_channels {cog * groups}")
    for i in range(2):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise ValueError(
                f"{op}: output_padding {output_padding} must be smaller than max(stride, dilation) = "
                f"{max(stride[i], dilation[i])} in each dimension (stride {stride}, dilation {dilation})"
            )
    out_hw = tuple(
        conv_transpose_out_size(x.shape[2 + i], weight.shape[2 + i], stride[i], padding[i], output_padding[i], dilation[i]) for i in range(2)
    )
    if out_hw[0] <= 0 or out_hw[1] <= 0:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} with weight {tuple(weight.shape)} and padding {padding} gives an empty output {out_hw}")
    geo = (stride, padding, dilation, groups)
    out = ConvTranspose2dFn.apply(x, weight, bias, geo, out_hw) if bias is not None else ConvTranspose2dFn.apply(x, weight, None, geo, out_hw)
    return out.squeeze(0) if squeeze else out
