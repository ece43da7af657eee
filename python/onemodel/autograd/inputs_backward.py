"""``Tensor.backward(inputs=...)``: torch accumulates the gradient into the
``.grad`` of the named tensors only (leaves or not), leaving every other
leaf's ``.grad`` untouched. Computed as ``autograd.grad`` of the same
output, then added to each input's ``.grad`` (or stored where it is None),
one IEEE addition per element, as the engine accumulates a leaf."""

from __future__ import annotations

from ..tensor import Tensor


def backward_into(output: Tensor, gradient, retain_graph: bool, inputs) -> None:
    from . import grad

    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not ins:
        raise RuntimeError("backward: inputs argument cannot be empty")
    for t in ins:
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError("backward: every tensor in inputs must require grad")
    grads = grad(output, ins, grad_outputs=gradient, retain_graph=retain_graph, allow_unused=True)
    for t, g in zip(ins, grads):
        if g is None:
            continue
        if t._grad is None:
            t._grad = g.detach()
        else:
            t._grad = (t._grad + g).detach()
