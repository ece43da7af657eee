"""Dropout: a counter-based mask from a generator (the default one unless
given), the same at every thread count; p = 0 and eval mode return the
input itself."""

from __future__ import annotations

from .. import functional as F
from .module import Module


class Dropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False, generator=None):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace, self.generator = p, inplace, generator

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace, generator=self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
