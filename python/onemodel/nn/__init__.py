"""Neural-network modules (torch.nn's names): the Module base, Parameter,
and the layers (docs/api.md lists them)."""

from __future__ import annotations

from .. import functional
from .activation import GELU, CrossEntropyLoss, Flatten, LogSoftmax, NLLLoss, Sigmoid, Softmax, Tanh
from .attention import MultiheadAttention
from .conv import Conv2d, ConvTranspose2d
from .dropout import Dropout
from .layers import Identity, Linear, ModuleList, ReLU, Sequential
from .loss import CTCLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .rnn import GRU, LSTM
from .parameter import Parameter
from . import utils
from .pooling import AvgPool2d, MaxPool2d, Upsample
from .sparse import Embedding
from .transformer import TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "Module", "Parameter", "Linear", "ReLU", "Identity", "Sequential", "ModuleList", "functional",
    "Conv2d", "ConvTranspose2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "MaxPool2d", "AvgPool2d", "Upsample",
    "Embedding", "Dropout", "Flatten", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "CrossEntropyLoss", "NLLLoss",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "LSTM", "GRU", "CTCLoss", "utils",
]
