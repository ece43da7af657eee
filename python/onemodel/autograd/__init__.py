"""Reverse-mode automatic differentiation (torch.autograd's names): the
record type and torch's custom-function protocol (``Function``), the
engine (``backward``, ``grad``) and the grad-mode helpers."""

from __future__ import annotations

import contextlib

from .. import _kernels
from .._runtime import inference_mode
from ..grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ..tensor import Tensor
from .custom import FunctionCtx, once_differentiable
from .engine import backward as _backward_one
from .engine import topological_order
from .function import Function
from . import function

# torch.autograd.function's names.
function.FunctionCtx = FunctionCtx
function.once_differentiable = once_differentiable


def _as_list(name: str, value) -> list:
    if isinstance(value, Tensor):
        return [value]
    if value is None:
        return [None]
    try:
        return list(value)
    except TypeError:
        raise TypeError(f"{name} must be a Tensor or a sequence of Tensors, got {type(value).__name__}") from None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Run backward from one tensor or a sequence of them, in order,
    accumulating into the leaves' ``.grad``."""
    if create_graph:
        raise NotImplementedError("backward: create_graph=True is not supported (onemodel has no higher-order gradients)")
    if inputs is not None:
        raise NotImplementedError("backward: inputs= is not supported; use onemodel.autograd.grad for chosen inputs")
    tensors = _as_list("tensors", tensors)
    grad_tensors = [None] * len(tensors) if grad_tensors is None else _as_list("grad_tensors", grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"backward: {len(tensors)} tensors but {len(grad_tensors)} gradients")
    retain = bool(retain_graph)
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        # Every run but the last keeps the graph (the tensors may share it).
        _backward_one(t, g, retain or i < len(tensors) - 1)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False, only_inputs: bool = True,
         allow_unused=None, is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (leaves or
    intermediate tensors), as a tuple; no ``.grad`` is touched. Unused
    inputs are an error unless ``allow_unused`` (then None, or zeros with
    ``materialize_grads``). ``create_graph`` and ``is_grads_batched`` are
    not supported (no higher-order gradients)."""
    if create_graph:
        raise NotImplementedError("grad: create_graph=True is not supported (onemodel has no higher-order gradients)")
    if is_grads_batched:
        raise NotImplementedError("grad: is_grads_batched=True is not supported")
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.")
    allow_unused = bool(allow_unused) or materialize_grads
    outputs = _as_list("outputs", outputs)
    inputs_list = _as_list("inputs", inputs)
    grad_outputs = [None] * len(outputs) if grad_outputs is None else _as_list("grad_outputs", grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(grad_outputs)} for {len(outputs)} outputs")
    for t in inputs_list:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad: inputs must be Tensors, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    keys = [id(t._record) if t._record is not None else id(t) for t in inputs_list]
    capture = {k: None for k in keys}
    retain = bool(retain_graph)
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        _backward_one(out, g, retain or i < len(outputs) - 1, capture)
    result = []
    for t, k in zip(inputs_list, keys):
        value = capture[k]
        if value is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                from ..creation import zeros

                value = zeros(t.shape)
        result.append(value)
    return tuple(result)


def zero_grad(t: Tensor) -> None:
    """Zero ``t.grad`` in place (keeps the buffer)."""
    if t.grad is not None:
        _kernels.fill_inplace(t.grad, 0.0)


def _zero_grads(params, set_to_none: bool = True) -> None:
    """Module.zero_grad and Optimizer.zero_grad: each parameter that has a
    grad drops it (``set_to_none``) or has it zeroed in place."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            zero_grad(p)


def clear_grad(t: Tensor) -> None:
    """Drop ``t.grad`` (its buffer returns to the pool)."""
    t.grad = None


def Variable(data, requires_grad: bool = False, volatile: bool = False):
    """torch's deprecated wrapper: the tensor itself (with requires_grad set)."""
    if requires_grad:
        data.requires_grad_(True)
    return data


_anomaly = {"enabled": False, "check_nan": True}


def set_detect_anomaly(mode: bool, check_nan: bool = True):
    """Accepted and recorded; onemodel's engine already checks every saved
    tensor's version before any work (docs/engine.md)."""
    _anomaly["enabled"], _anomaly["check_nan"] = bool(mode), bool(check_nan)
    return contextlib.nullcontext()


def is_anomaly_enabled() -> bool:
    return _anomaly["enabled"]


@contextlib.contextmanager
def detect_anomaly(check_nan: bool = True):
    prev = dict(_anomaly)
    set_detect_anomaly(True, check_nan)
    try:
        yield
    finally:
        _anomaly.update(prev)


__all__ = [
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "function",
    "backward",
    "grad",
    "zero_grad",
    "clear_grad",
    "Variable",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
    "inference_mode",
    "set_detect_anomaly",
    "detect_anomaly",
    "is_anomaly_enabled",
    "topological_order",
]
