"""Channel ("feature") dropout: dropout1d, dropout2d, dropout3d zero whole
channels. One counter-based mask value per (sample, channel), the same
values dropout draws (0 or 1/(1 − p)), broadcast over the spatial
dimensions by one IEEE multiply per element."""

from __future__ import annotations

from .. import _core
from ..tensor import Tensor
from .operands import check_float
from .arith import mul
from .dropout import dropout_key


def _feature_dropout(op: str, input, p: float, training: bool, inplace: bool, spatial: int, generator) -> Tensor:
    check_float(op, input=input)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if inplace:
        raise ValueError(f"{op}: inplace=True is not supported")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise ValueError(f"{op}: expected {spatial + 1}-D (unbatched) or {spatial + 2}-D (batched) input, got shape {tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    lead = input.ndim - spatial
    mask = Tensor._empty(tuple(input.shape[:lead]) + (1,) * spatial)
    if p == 1.0:
        _core.fill_(mask, 0.0)
    else:
        _core.dropout_mask(mask, dropout_key(generator), p)
    return mul(input, mask)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None) -> Tensor:
    return _feature_dropout("dropout1d", input, p, training, inplace, 1, generator)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None) -> Tensor:
    return _feature_dropout("dropout2d", input, p, training, inplace, 2, generator)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False, generator=None) -> Tensor:
    return _feature_dropout("dropout3d", input, p, training, inplace, 3, generator)


__all__ = ["dropout1d", "dropout2d", "dropout3d"]
