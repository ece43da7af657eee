"""Neural-network modules (torch.nn's names): the Module base, Parameter,
and layers. Later layers (convolutions, normalisation, attention, recurrent
layers) join this namespace as they are implemented."""

from __future__ import annotations

from .. import functional
from .layers import Identity, Linear, ModuleList, ReLU, Sequential
from .loss import CTCLoss
from .module import Module
from .rnn import GRU, LSTM
from .parameter import Parameter

__all__ = ["LSTM", "GRU", "CTCLoss", "Module", "Parameter", "Linear", "ReLU", "Identity", "Sequential", "ModuleList", "functional"]
