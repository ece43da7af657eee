"""Tensor.register_hook: functions run on a tensor's gradient during
backward, in registration order, each may return a replacement.

A non-leaf's hooks live on its record and run on the record's total
gradient (all emissions summed) before its backward rule; a leaf's hooks
run on each gradient reaching it, before it is added into ``.grad`` (as
torch). Leaves cannot hold attributes (Tensor has slots), so their hooks
are kept here by id, dropped when the tensor is collected.
"""

from __future__ import annotations

import itertools
import weakref
from collections import OrderedDict

from ..tensor import Tensor

_LEAF_HOOKS: dict = {}
_ids = itertools.count()


class TensorHookHandle:
    def __init__(self, hooks: OrderedDict, key: int) -> None:
        self._hooks, self.id = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _leaf_hooks(t: Tensor) -> OrderedDict:
    entry = _LEAF_HOOKS.get(id(t))
    if entry is None or entry[0]() is not t:
        key = id(t)
        hooks: OrderedDict = OrderedDict()
        ref = weakref.ref(t, lambda _r, k=key: _LEAF_HOOKS.pop(k, None))
        _LEAF_HOOKS[key] = (ref, hooks)
        return hooks
    return entry[1]


def register_hook(t: Tensor, hook) -> TensorHookHandle:
    if not callable(hook):
        raise TypeError(f"register_hook: hook must be callable, got {type(hook).__name__}")
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t._record is not None:
        hooks = t._record.__dict__.setdefault("_tensor_hooks", OrderedDict())
    else:
        hooks = _leaf_hooks(t)
    key = next(_ids)
    hooks[key] = hook
    return TensorHookHandle(hooks, key)


_POST_HOOKS: dict = {}


def register_post_accumulate_grad_hook(t: Tensor, hook) -> TensorHookHandle:
    """``hook(t)`` after a gradient was added into the leaf's ``.grad``."""
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook: hook must be callable, got {type(hook).__name__}")
    if t._record is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    entry = _POST_HOOKS.get(id(t))
    if entry is None or entry[0]() is not t:
        key = id(t)
        entry = (weakref.ref(t, lambda _r, k=key: _POST_HOOKS.pop(k, None)), OrderedDict())
        _POST_HOOKS[key] = entry
    k = next(_ids)
    entry[1][k] = hook
    return TensorHookHandle(entry[1], k)


def after_accumulate(leaf: Tensor) -> None:
    entry = _POST_HOOKS.get(id(leaf))
    if entry is not None and entry[0]() is leaf:
        for hook in list(entry[1].values()):
            if hook(leaf) is not None:
                raise RuntimeError("post accumulate grad hooks must return None")


def _apply(hooks, grad: Tensor) -> Tensor:
    for hook in list(hooks.values()):
        r = hook(grad)
        if r is not None:
            if not isinstance(r, Tensor) or tuple(r.shape) != tuple(grad.shape):
                raise RuntimeError(
                    f"hook returned {type(r).__name__ if not isinstance(r, Tensor) else tuple(r.shape)} "
                    f"for a gradient of shape {tuple(grad.shape)}; a hook must return None or a Tensor of the same shape"
                )
            grad = r
    return grad


def record_grad(rec, grad: Tensor) -> Tensor:
    """The gradient of a record's output after its tensor hooks."""
    hooks = rec.__dict__.get("_tensor_hooks")
    return _apply(hooks, grad) if hooks else grad


def leaf_grad(leaf: Tensor, grad: Tensor) -> Tensor:
    entry = _LEAF_HOOKS.get(id(leaf))
    if entry is None or entry[0]() is not leaf or not entry[1]:
        return grad
    return _apply(entry[1], grad)
