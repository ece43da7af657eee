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


class _ConvFn(Function):
    def _start(self, x, weight, bias, geo, out_shape) -> tuple:
        """Saves the contiguous (x, weight) and the geometry; returns them
        with the fresh output buffer."""
        self.geo = geo
        self.has_bias = bias is not None
        x, weight = contig(x), contig(weight)
        self.save_for_backward(x, weight)
        return x, weight, Tensor._empty(out_shape)

    @classmethod
    def run(cls, op: str, input, weight, bias, geo, out_shape) -> Tensor:
        """The record over the batched input, squeezed back if unbatched."""
        x, squeeze = batched(op, input, 4)
        out = cls.apply(x, weight, bias, geo, out_shape)
        return out.squeeze(0) if squeeze else out


class Conv2dFn(_ConvFn):
    name = "Conv2d"

    def forward(self, x, weight, bias, geo, out_shape):
        x, weight, out = self._start(x, weight, bias, geo, out_shape)
        _core.conv2d_forward(out, x, weight, contig(bias) if bias is not None else None, *geo)
        return out

    def backward(self, g):
        geo = self.geo
        return _backward(
            self, g,
            lambda dx, g, w: _core.conv2d_input_grad(dx, g, w, *geo),
            lambda dw, x, g: _core.conv2d_weight_grad(dw, x, g, *geo),
        )


class ConvTranspose2dFn(_ConvFn):
    name = "ConvTranspose2d"

    def forward(self, x, weight, bias, geo, out_shape):
        x, weight, out = self._start(x, weight, bias, geo, out_shape)
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


def _common(op: str, input, weight, bias, stride, dilation, groups):
    check_float(op, input=input, weight=weight, bias=bias)
    if weight is None:
        raise TypeError(f"{op}: weight must be a Tensor, got NoneType")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    return pair(op, "stride", stride, 1), pair(op, "dilation", dilation, 1)


def _bias_shape(bias):
    return None if bias is None else tuple(bias.shape)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> Tensor:
    """torch.nn.functional.conv2d. padding: int, pair, 'valid' or 'same'.
    Sizes and shape checks: ``_core.conv2d_geometry`` (rust/src/geometry)."""
    return _conv2d("conv2d", input, weight, bias, stride, padding, dilation, groups)


def _conv2d(op: str, input, weight, bias, stride, padding, dilation, groups, shown=None) -> Tensor:
    """conv2d whose errors name `op` and, where given, the `shown` (input,
    weight) shapes instead of the 4-D ones (conv1d's height-1 plane)."""
    stride, dilation = _common(op, input, weight, bias, stride, dilation, groups)
    x = input
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions (stride {stride})")
            top, bottom, left, right = _core.conv2d_same_padding(op, tuple(weight.shape), dilation)
            # Checked before the padding changes the input, so that a
            # mis-shaped one is reported as it was given.
            _core.conv2d_geometry(op, tuple(input.shape), tuple(weight.shape), _bias_shape(bias),
                                  (stride, (bottom, right), dilation, groups), None, shown)
            if top != bottom or left != right:
                from .shape_ops import pad as _pad

                x = _pad(x, (left, right, top, bottom))
                padding = (0, 0)
            else:
                padding = (top, left)
        else:
            raise ValueError(f"{op}: padding must be an int, a pair, 'valid' or 'same', got {padding!r}")
    else:
        padding = pair(op, "padding", padding, 0)
    geo = (stride, padding, dilation, groups)
    out_shape = tuple(_core.conv2d_geometry(op, tuple(x.shape), tuple(weight.shape), _bias_shape(bias), geo, None, shown))
    return Conv2dFn.run(op, x, weight, bias, geo, out_shape)


def conv_transpose_out_size(size, k, s, p, op_, d):
    """One axis of a transposed convolution's output (``_core``'s geometry)."""
    return _core.conv_transpose_size("conv_transpose", size, k, s, p, op_, d)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1) -> Tensor:
    """torch.nn.functional.conv_transpose2d (weight [in, out/groups, kh, kw]);
    sizes and checks: ``_core.conv2d_geometry`` with output_padding."""
    return _conv_transpose2d("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups, dilation)


def _conv_transpose2d(op: str, input, weight, bias, stride, padding, output_padding, groups, dilation, shown=None) -> Tensor:
    """conv_transpose2d naming `op` and the `shown` shapes (see _conv2d)."""
    stride, dilation = _common(op, input, weight, bias, stride, dilation, groups)
    padding = pair(op, "padding", padding, 0)
    output_padding = pair(op, "output_padding", output_padding, 0)
    geo = (stride, padding, dilation, groups)
    out_shape = tuple(_core.conv2d_geometry(op, tuple(input.shape), tuple(weight.shape), _bias_shape(bias), geo,
                                            output_padding, shown))
    return ConvTranspose2dFn.run(op, input, weight, bias, geo, out_shape)
