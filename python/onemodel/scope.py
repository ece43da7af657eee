"""ActivationScope: return every buffer allocated inside a ``with`` block to
the pool when the block ends.

Python frees a buffer as soon as its last tensor goes away, so most
activations come back on their own; a scope makes that deterministic for
what is still referenced at the end of a step (a graph kept by a stray
variable, a loss tensor, temporaries held by a caller). Buffers are
remembered weakly, so a scope never keeps memory alive longer than Python
would. At exit each remembered storage that is still alive is released:
its memory goes back to the pool (immediately, or when the last kernel or
NumPy view using it finishes) and any later use of a tensor on it raises a
RuntimeError instead of reading stale memory.

Leaf gradients and the backward engine's temporaries are never tied to a
scope. Parameters must be created outside any scope.
"""

from __future__ import annotations

import threading
import weakref

_local = threading.local()

# How many scopes are open on all threads together: while none is, an
# allocation has nothing to register and skips the thread-local look-ups
# (this is on the path of every op output).
_open = 0
_open_lock = threading.Lock()


def _count_open(delta: int) -> None:
    global _open
    with _open_lock:
        _open += delta


def _stack() -> list:
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _suspended() -> int:
    return getattr(_local, "suspended", 0)


def register(storage) -> None:
    """Called for every storage an operation allocates on this thread."""
    if not _open:
        return
    stack = getattr(_local, "stack", None)
    if stack and not getattr(_local, "suspended", 0):
        stack[-1].append(weakref.ref(storage))


class suspend:
    """Allocations inside are not tied to any scope (the engine, leaf grads)."""

    def __enter__(self):
        _local.suspended = _suspended() + 1
        return self

    def __exit__(self, *exc):
        _local.suspended = _suspended() - 1
        return False


class ActivationScope:
    """``with onemodel.ActivationScope(): loss = model(x); loss.backward()``"""

    def __init__(self) -> None:
        self._refs: list | None = None
        self.released = 0

    def __enter__(self):
        self._refs = []
        _stack().append(self._refs)
        _count_open(1)
        return self

    def __exit__(self, *exc):
        _count_open(-1)
        stack = _stack()
        # Scopes nest: pop ours (and any inner one left open by an exception).
        while stack:
            top = stack.pop()
            if top is self._refs:
                break
        count = 0
        for ref in self._refs:
            storage = ref()
            if storage is not None and storage.release():
                count += 1
        self.released = count
        self._refs = None
        return False
