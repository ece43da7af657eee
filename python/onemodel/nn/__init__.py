"""Neural-network modules (torch.nn's names): the Module base, Parameter,
and layers. Later layers (convolutions, normalisation, attention, recurrent
layers) join this namespace as they are implemented."""

from __future__ import annotations

from .. import functional
from .layers import Identity, Linear, ModuleList, ReLU, Sequential
from .module import Module
from .parameter import Parameter
from . import utils

__all__ = ["Module", "Parameter", "Linear", "ReLU", "Identity", "Sequential", "ModuleList", "functional", "utils"]
