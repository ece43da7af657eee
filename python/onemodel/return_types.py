"""The named tuples some operators return (``torch.return_types``):
``values`` and ``indices`` by name or by position. Typed (NamedTuple
classes), so that ``x.sort().values`` is a Tensor to a type checker."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .tensor import Tensor


class max(NamedTuple):  # noqa: A001 - torch's names
    values: Tensor
    indices: Tensor


class min(NamedTuple):  # noqa: A001
    values: Tensor
    indices: Tensor


class sort(NamedTuple):
    values: Tensor
    indices: Tensor


class topk(NamedTuple):
    values: Tensor
    indices: Tensor


class kthvalue(NamedTuple):
    values: Tensor
    indices: Tensor


class mode(NamedTuple):
    values: Tensor
    indices: Tensor


class median(NamedTuple):
    values: Tensor
    indices: Tensor


class aminmax(NamedTuple):
    min: Tensor
    max: Tensor


class cummax(NamedTuple):
    values: Tensor
    indices: Tensor


class cummin(NamedTuple):
    values: Tensor
    indices: Tensor


class nanmedian(NamedTuple):
    values: Tensor
    indices: Tensor
