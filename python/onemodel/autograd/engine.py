"""The reverse-mode engine (docs/engine.md, "The backward pass").

1. Order: an iterative depth-first search from the root's record over the
   input edges (inputs in input order), post-order; records run in the
   reverse of that order, so each runs after every record consuming it.
   Nothing here recurses: a chain of 100,000 operations works.
2. Before any work, every record on the way is checked: released records
   raise GraphReleasedError and tensors modified in place after they were
   saved raise TensorVersionError, so a failing backward writes nothing.
3. Each record holds one pending gradient. Emissions to a record are added
   to it element by element in emission order (an out-of-place f32 add, so a
   gradient emitted to two places is never modified); emissions to a leaf
   add into ``leaf.grad``, created on the first emission as a contiguous
   copy.
4. The engine runs with recording off and outside any ActivationScope.
   Unless ``retain_graph``, each record is released after it ran.
"""

from __future__ import annotations

from .. import _kernels, scope
from ..grad_mode import _set_enabled, is_grad_enabled
from ..tensor import Tensor
from . import hooks
from .function import Function


def topological_order(root: Function) -> list:
    """Post-order of an iterative DFS over record edges (input order)."""
    order = []
    visited = {root}
    stack = [(root, iter(root.edges))]
    while stack:
        node, edges = stack[-1]
        for edge in edges:
            if isinstance(edge, Function) and edge not in visited:
                visited.add(edge)
                stack.append((edge, iter(edge.edges)))
                break
        else:
            stack.pop()
            order.append(node)
    return order


def _accumulate_leaf(leaf: Tensor, grad: Tensor) -> None:
    if hooks._LEAF_HOOKS:  # (no look-ups while no tensor has a hook)
        grad = hooks.leaf_grad(leaf, grad)
    if leaf._grad is None:
        leaf._grad = _kernels.clone_contiguous(grad)
    else:
        _kernels.add_into(leaf._grad, grad)
    if hooks._POST_HOOKS:
        hooks.after_accumulate(leaf)


def _capture(capture: dict, key, grad: Tensor) -> None:
    if isinstance(key, Tensor):
        grad = hooks.leaf_grad(key, grad)
    k = id(key)
    if k in capture:
        prev = capture[k]
        capture[k] = _kernels.clone_contiguous(grad) if prev is None else _kernels.add_new(prev, grad)


def backward(root: Tensor, gradient=None, retain_graph: bool = False, capture: dict | None = None) -> None:
    """Run the graph back from ``root``. With ``capture`` (a dict keyed by
    id() of leaf tensors and of records), the gradients reaching those keys
    are added into it instead of into any ``.grad`` (autograd.grad)."""
    if not isinstance(root, Tensor):
        raise TypeError(f"backward: expected a Tensor, got {type(root).__name__}")
    if not root.requires_grad:
        raise RuntimeError("backward: the tensor does not require grad and has no grad_fn")
    if gradient is None:
        if root.numel() != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for one-element outputs; this one has shape {root.shape}"
            )
        seed = None
    else:
        if not isinstance(gradient, Tensor):
            raise TypeError(f"backward: gradient must be a Tensor, got {type(gradient).__name__}")
        if gradient.shape != root.shape:
            raise ValueError(f"backward: gradient of shape {gradient.shape} does not match the output shape {root.shape}")
        if not gradient.dtype.is_floating_point:
            raise TypeError("backward: gradient must be float32")
        seed = gradient

    record = root._record
    order = topological_order(record) if record is not None else []
    for rec in order:
        rec.check_saved()

    prev = is_grad_enabled()
    _set_enabled(False)
    try:
        with scope.suspend():
            seed_t = _kernels.ones_like_contiguous(root) if seed is None else _kernels.clone_contiguous(seed)
            if record is None:
                if capture is None:
                    _accumulate_leaf(root, seed_t)
                else:
                    _capture(capture, root, seed_t)
                return
            pending = {record: seed_t}
            for rec in reversed(order):
                g = pending.pop(rec, None)
                if g is not None:
                    g = hooks.record_grad(rec, g)  # Tensor.register_hook on a non-leaf
                if g is not None and capture is not None:
                    _capture(capture, rec, g)
                if g is not None:
                    retained = rec.retained() if rec.retained is not None else None
                    if retained is not None and retained._record is rec:
                        _accumulate_leaf(retained, g)  # retain_grad(): the same rule as a leaf's
                    grads = rec.backward(g)
                    if not isinstance(grads, tuple):
                        grads = (grads,)
                    if len(grads) != len(rec.edges):
                        raise RuntimeError(f"{rec.name}.backward returned {len(grads)} gradients for {len(rec.edges)} inputs")
                    for edge, gi, (shape, _dt) in zip(rec.edges, grads, rec.input_meta):
                        if edge is None or gi is None:
                            continue
                        if gi._shape != shape:
                            raise RuntimeError(f"{rec.name}.backward produced a gradient of shape {gi.shape} for an input of shape {shape}")
                        if isinstance(edge, Function):
                            prev_g = pending.get(edge)
                            pending[edge] = gi if prev_g is None else _kernels.add_new(prev_g, gi)
                        elif capture is None:
                            _accumulate_leaf(edge, gi)
                        else:
                            _capture(capture, edge, gi)
                    del grads, g
                if not retain_graph:
                    rec.release()
    finally:
        _set_enabled(prev)
