"""Basic layers: Linear, ReLU, Identity, Sequential, ModuleList."""

from __future__ import annotations

import math
from collections import OrderedDict

from .. import functional as F
from ..creation import empty
from ..grad_mode import no_grad
from .module import Module
from .parameter import Parameter


def _uniform_(t, bound: float, generator=None) -> None:
    from ..creation import default_generator

    with no_grad():
        (generator or default_generator)._g.uniform_(t, -bound, bound)
        t._bump()


class Linear(Module):
    """y = x Wᵀ + b. Initialised as torch does (U(-1/√in, 1/√in) for both),
    from onemodel's generator, so the values differ from torch's."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, generator=None):
        super().__init__()
        if in_features < 0 or out_features < 0:
            raise ValueError(f"Linear: feature counts must be non-negative, got {in_features}, {out_features}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features))
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        _uniform_(self.weight, bound, generator)
        if bias:
            self.bias = Parameter(empty(out_features))
            _uniform_(self.bias, bound, generator)
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for k, m in modules[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        return mods[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self._modules)), module)
        return self


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return ModuleList(mods[i])
        return mods[i]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())
