"""torch.nn.functional's names and signatures, over onemodel's operators.

Importable as ``onemodel.functional`` or ``onemodel.nn.functional``."""

from __future__ import annotations

from .ops.arith import relu as _relu
from .ops.attention import scaled_dot_product_attention
from .ops.conv import conv2d, conv_transpose2d
from .ops.dropout import dropout
from .ops.embedding import embedding
from .ops.index import one_hot
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
    "one_hot",
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

# Losses, 1-D convolution and pooling, adaptive pooling, group/instance
# normalisation and channel dropout (the program-surface work).
from .ops.adaptive_pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d  # noqa: E402
from .ops.feature_dropout import dropout1d, dropout2d, dropout3d  # noqa: E402
from .ops.group_norm import group_norm, instance_norm  # noqa: E402
from .ops.loss import (  # noqa: E402
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from .ops.spatial1d import avg_pool1d, conv1d, conv_transpose1d, max_pool1d  # noqa: E402

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "dropout1d", "dropout2d",
    "dropout3d", "group_norm", "instance_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "huber_loss", "kl_div",
    "l1_loss", "mse_loss", "smooth_l1_loss", "avg_pool1d", "conv1d", "conv_transpose1d", "max_pool1d",
]

from .ops.distance import cosine_similarity, normalize, pairwise_distance, pixel_shuffle, pixel_unshuffle  # noqa: E402

__all__ += ["cosine_similarity", "normalize", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle"]

from .ops.loss import (  # noqa: E402
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
)

__all__ += ["cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
            "soft_margin_loss", "triplet_margin_loss"]

from .ops.embedding_bag import embedding_bag  # noqa: E402

__all__ += ["embedding_bag"]

from .ops.statistics import pdist  # noqa: E402

__all__ += ["pdist"]

# The rest of torch.nn.functional's layers (docs/api.md, "The rest of torch's tensor surface").
from .ops.padding import fold, unfold  # noqa: E402
from .ops.layer_extras import (  # noqa: E402
    alpha_dropout,
    bilinear,
    feature_alpha_dropout,
    gumbel_softmax,
    local_response_norm,
    lp_pool1d,
    lp_pool2d,
    max_unpool1d,
    max_unpool2d,
    rms_norm,
    softmax2d,
)
from .ops.margin_losses import gaussian_nll_loss, multi_margin_loss, multilabel_margin_loss  # noqa: E402
from .ops.grid_sample import affine_grid, grid_sample  # noqa: E402

__all__ += ["fold", "unfold", "alpha_dropout", "bilinear", "feature_alpha_dropout", "gumbel_softmax", "local_response_norm",
            "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d", "rms_norm", "gaussian_nll_loss", "multi_margin_loss",
            "multilabel_margin_loss", "affine_grid", "grid_sample", "softmax2d"]
from .ops.misc_surface import channel_shuffle  # noqa: E402

__all__ += ["channel_shuffle"]
from .ops.volumetric import adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, conv3d, conv_transpose3d, max_pool3d  # noqa: E402

__all__ += ["adaptive_avg_pool3d", "adaptive_max_pool3d", "avg_pool3d", "conv3d", "conv_transpose3d", "max_pool3d"]
# Activations and element-wise math (the math work; ops/activation.py).
from .ops.activation import (  # noqa: E402
    glu,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    prelu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    silu,
    softmin,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)

__all__ += ["glu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_", "prelu", "relu6",
            "relu_", "rrelu", "rrelu_", "silu", "softmin", "softshrink", "softsign", "tanhshrink", "threshold", "threshold_"]
from .ops.smooth_activation import celu, celu_, elu, elu_, logsigmoid, mish, selu, selu_, softplus  # noqa: E402

__all__ += ["celu", "celu_", "elu", "elu_", "logsigmoid", "mish", "selu", "selu_", "softplus"]
