"""dropout with a counter-based mask: element i of a call is dropped iff a
hash of (key, i) falls below p, where the key is one draw from the
generator. The mask therefore depends on the generator's state and the
element index only, never on threads; p = 0 (or eval) returns the input
itself."""

from __future__ import annotations

from .. import _core
from ..tensor import Tensor
from .operands import check_float
from .arith import mul


def dropout_key(generator=None) -> int:
    from ..creation import default_generator

    return int((generator or default_generator)._g.randint(0, 2**62))


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None) -> Tensor:
    """torch.nn.functional.dropout (plus an optional generator)."""
    check_float("dropout", input=input)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise ValueError("dropout: inplace=True is not supported")
    if not training or p == 0.0:
        return input
    mask = Tensor._empty(input.shape)
    if p == 1.0:
        _core.fill_(mask, 0.0)
    else:
        _core.dropout_mask(mask, dropout_key(generator), p)
    return mul(input, mask)
