"""Reverse-mode automatic differentiation: the record type, the engine and
gradient helpers (torch.autograd's names where they exist)."""

from __future__ import annotations

from .. import _kernels
from ..grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..tensor import Tensor
from .engine import backward as _backward_one
from .engine import topological_order
from .function import Function


def backward(tensors, grad_tensors=None, retain_graph: bool = False) -> None:
    """Run backward from one tensor or a sequence of them, in order."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
        grad_tensors = [grad_tensors]
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"backward: {len(tensors)} tensors but {len(grad_tensors)} gradients")
    for t, g in zip(tensors, grad_tensors):
        _backward_one(t, g, retain_graph)


def zero_grad(t: Tensor) -> None:
    """Zero ``t.grad`` in place (keeps the buffer)."""
    if t.grad is not None:
        _kernels.fill_inplace(t.grad, 0.0)


def clear_grad(t: Tensor) -> None:
    """Drop ``t.grad`` (its buffer returns to the pool)."""
    t.grad = None


__all__ = [
    "Function",
    "backward",
    "zero_grad",
    "clear_grad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "topological_order",
]
