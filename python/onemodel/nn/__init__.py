"""Neural-network modules (torch.nn's names): the Module base, Parameter,
containers, layers, losses, ``init``, ``utils`` and ``functional``
(docs/api.md lists them)."""

from __future__ import annotations

import sys as _sys

from .. import functional
from .activation import GELU, Flatten, LogSoftmax, Sigmoid, Softmax, Tanh
from .activation import (
    CELU,
    ELU,
    SELU,
    LogSigmoid,
    Mish,
    Softplus,
    GLU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    PReLU,
    ReLU6,
    RReLU,
    SiLU,
    Softmin,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .layers import Identity, Linear, ReLU, Unflatten
from .loss import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    PoissonNLLLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    CTCLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .misc import (
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    CosineSimilarity,
    PairwiseDistance,
    PixelShuffle,
    PixelUnshuffle,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .parameter import Buffer, Parameter
from . import init, parallel, utils
from .parallel import DataParallel
from .pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)
from .sparse import Embedding, EmbeddingBag
from .extra_layers import (
    AlphaDropout,
    Bilinear,
    ChannelShuffle,
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    FeatureAlphaDropout,
    Fold,
    LazyLinear,
    LocalResponseNorm,
    LPPool1d,
    LPPool2d,
    MaxUnpool1d,
    MaxUnpool2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    RMSNorm,
    Softmax2d,
    Unfold,
)
from .extra_losses import GaussianNLLLoss, MultiLabelMarginLoss, MultiMarginLoss
from .volumetric import AdaptiveAvgPool3d, AdaptiveMaxPool3d, AvgPool3d, BatchNorm3d, Conv3d, ConvTranspose3d, InstanceNorm3d, MaxPool3d
from .transformer import Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer

# `import onemodel.nn.functional as F` finds the one functional module (the
# same object as onemodel.functional, not a copy).
_sys.modules[__name__ + ".functional"] = functional

__all__ = [
    "Module", "Parameter", "Buffer", "functional", "init", "utils", "parallel", "DataParallel",
    "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Linear", "Identity", "ReLU", "Unflatten", "Flatten", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax",
    "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
    "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "Embedding", "EmbeddingBag", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "MultiheadAttention", "Transformer", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder",
    "RNNBase", "LSTM", "GRU", "RNN", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss",
    "CrossEntropyLoss", "CTCLoss",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "PixelShuffle", "PixelUnshuffle",
    "CosineSimilarity", "PairwiseDistance", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
    "TripletMarginLoss", "PoissonNLLLoss", "MultiLabelSoftMarginLoss",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "Fold", "Unfold", "RMSNorm", "LocalResponseNorm", "LPPool1d", "LPPool2d",
    "MaxUnpool1d", "MaxUnpool2d", "Bilinear", "Softmax2d", "AlphaDropout", "FeatureAlphaDropout", "LazyLinear",
    "MultiMarginLoss", "MultiLabelMarginLoss", "GaussianNLLLoss", "ZeroPad3d", "ChannelShuffle",
    "Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "BatchNorm3d", "InstanceNorm3d",
    "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "PReLU", "ReLU6", "RReLU", "SiLU", "Softmin",
    "Softshrink", "Softsign", "Tanhshrink", "Threshold", "CELU", "ELU", "SELU", "LogSigmoid", "Mish", "Softplus",
]
