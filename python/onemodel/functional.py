"""torch.nn.functional's names and signatures, over onemodel's operators.

Importable as ``onemodel.functional`` or ``onemodel.nn.functional``."""

from __future__ import annotations

from .ops.arith import relu as _relu
from .ops.attention import scaled_dot_product_attention
from .ops.conv import conv2d, conv_transpose2d
from .ops.dropout import dropout
from .ops.embedding import embedding
from .ops.linalg import linear
from .ops.norm import batch_norm, layer_norm
from .ops.pool import avg_pool2d, max_pool2d
from .ops.resize import interpolate, upsample
from .ops.shape_ops import pad
from .ops.softmax import cross_entropy, log_softmax, nll_loss, softmax
from .ops.pointwise import gelu, sigmoid, tanh
from .tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return input.relu_()
    return _relu(input)


__all__ = [
    "avg_pool2d",
    "batch_norm",
    "conv2d",
    "conv_transpose2d",
    "cross_entropy",
    "dropout",
    "embedding",
    "gelu",
    "interpolate",
    "layer_norm",
    "linear",
    "log_softmax",
    "max_pool2d",
    "nll_loss",
    "pad",
    "relu",
    "scaled_dot_product_attention",
    "sigmoid",
    "softmax",
    "tanh",
    "upsample",
]


from .ops.ctc import ctc_loss  # noqa: E402

__all__ += ["ctc_loss"]
