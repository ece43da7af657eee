"""Module.register_full_backward_hook / register_full_backward_pre_hook,
as torch's: ``hook(module, grad_input, grad_output)`` runs when the
gradients with respect to the module's positional tensor inputs are
computed and may return replacements; ``pre_hook(module, grad_output)``
runs when the gradients of the outputs are known and may replace them.

How: the float inputs that require grad pass through one identity record
that packs them into a single buffer (so its backward sees every input
gradient at once, after all uses inside the module have emitted), and the
float outputs through another (which sees every output gradient at
once; a single tensor passes through a plain identity). Hooks cost one
copy of the inputs and outputs; the values are unchanged, and so are the
gradients, except that with several packed tensors a gradient of −0 reads
+0 (the pieces are added into one buffer of zeros). An input whose
gradient is never produced gets zeros (torch passes None).
"""

from __future__ import annotations

from typing import Any

from collections import OrderedDict

from .. import _core, _shape
from .._kernels import clone_contiguous
from ..autograd.function import Function
from ..tensor import Tensor, float32


def _pack(tensors) -> Tensor:
    n = sum(t.numel() for t in tensors)
    out = Tensor._empty((n,), float32)
    offset = 0
    for t in tensors:
        k = t.numel()
        if k:
            _core.copy_(out._view(tuple(t.shape), _shape.contiguous_strides(t.shape), offset), t)
        offset += k
    return out


def _unpack(flat: Tensor, shapes) -> list:
    parts, offset = [], 0
    for shape in shapes:
        k = _shape.numel(shape)
        parts.append(flat._view(tuple(shape), _shape.contiguous_strides(shape), flat._offset + offset))
        offset += k
    return parts


class _Pack(Function):
    """Identity over several tensors, packed into one flat tensor; its
    backward hands the unpacked gradient to ``on_grad`` (which may return
    replacements) and splits it back."""

    def forward(self, *args) -> Tensor:
        *tensors, on_grad = args
        self.shapes = [tuple(t.shape) for t in tensors]
        self.on_grad = on_grad
        return _pack(tensors)

    def backward(self, g) -> Tensor:
        grads = [clone_contiguous(p) for p in _unpack(g if g.is_contiguous() else clone_contiguous(g), self.shapes)]
        new = self.on_grad(tuple(grads))
        if new is not None:
            new = tuple(new)
            if len(new) != len(grads):
                raise RuntimeError(f"backward hook returned {len(new)} gradients for {len(grads)} tensors")
            grads = [n if n is not None else g0 for n, g0 in zip(new, grads)]
            for n, g0 in zip(grads, self.shapes):
                if tuple(n.shape) != g0:
                    raise RuntimeError(f"backward hook returned a gradient of shape {tuple(n.shape)} for a tensor of shape {g0}")
        return tuple(grads)


class _Identity(Function):
    """The one-tensor case: an identity whose backward calls ``on_grad``."""

    def forward(self, t, on_grad) -> Tensor:
        self.on_grad = on_grad
        return clone_contiguous(t)

    def backward(self, g) -> Tensor:
        new = self.on_grad((g,))
        if new is not None and new[0] is not None:
            if tuple(new[0].shape) != tuple(g.shape):
                raise RuntimeError(f"backward hook returned a gradient of shape {tuple(new[0].shape)} for a tensor of shape {tuple(g.shape)}")
            return new[0]
        return g


def _through_pack(tensors: list, on_grad) -> list:
    if len(tensors) == 1:
        return [_Identity.apply(tensors[0], on_grad)]
    flat = _Pack.apply(*tensors, on_grad)
    return [_view_of(flat, t.shape, i, tensors) for i, t in enumerate(tensors)]


class _Slice(Function):
    """A piece of the packed buffer viewed with a tensor's shape."""

    def forward(self, flat, offset, shape) -> Tensor:
        self.offset, self.shape = offset, shape
        return flat._view(shape, _shape.contiguous_strides(shape), flat._offset + offset)

    def backward(self, g) -> Tensor:
        out = Tensor._empty(self.input_meta[0][0], float32, zeroed=True)
        k = _shape.numel(self.shape)
        if k:
            _core.copy_(out._view(self.shape, _shape.contiguous_strides(self.shape), self.offset), g)
        return out


def _view_of(flat: Tensor, shape, i: int, tensors) -> Tensor:
    offset = sum(t.numel() for t in tensors[:i])
    return _Slice.apply(flat, offset, tuple(shape))


def _hookable(x) -> bool:
    return isinstance(x, Tensor) and x.dtype is float32 and x.requires_grad


def register(module, store: str, hook, prepend: bool) -> Any:
    from .hooks import RemovableHandle

    hooks = module.__dict__.get(store)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, store, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def call(module, args: tuple, kwargs: dict, run) -> Any:
    """Run ``run(args, kwargs)`` (the module's forward with its forward
    hooks) with the backward hooks wired around it."""
    post = module.__dict__.get("_backward_hooks") or {}
    pre = module.__dict__.get("_backward_pre_hooks") or {}
    state = {"grad_output": None}
    positions = [i for i, a in enumerate(args) if _hookable(a)]

    def on_input_grads(grads) -> Tensor:
        full = [None] * len(args)
        for i, g in zip(positions, grads):
            full[i] = g
        grad_input = tuple(full)
        for hook in list(post.values()):
            r = hook(module, grad_input, state["grad_output"])
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"backward hook returned {len(r)} values for {len(grad_input)} inputs")
                grad_input = r
        return tuple(grad_input[i] for i in positions)

    if positions:
        wrapped = _through_pack([args[i] for i in positions], on_input_grads)
        args = list(args)
        for i, w in zip(positions, wrapped):
            args[i] = w
        args = tuple(args)
    output = run(args, kwargs)
    outs = list(output) if isinstance(output, (tuple, list)) else [output]
    out_pos = [i for i, o in enumerate(outs) if _hookable(o)]
    if not out_pos:
        return output

    def on_output_grads(grads) -> Tensor:
        grads = tuple(grads)
        for hook in list(pre.values()):
            r = hook(module, grads)
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        state["grad_output"] = grads
        if not positions:  # no input needs a gradient: the hook runs now, grad_input all None
            for hook in list(post.values()):
                hook(module, (None,) * len(args), grads)
        return grads

    wrapped = _through_pack([outs[i] for i in out_pos], on_output_grads)
    for i, w in zip(out_pos, wrapped):
        outs[i] = w
    if isinstance(output, tuple):
        return type(output)(outs) if type(output) is tuple else type(output)(*outs)
    if isinstance(output, list):
        return outs
    return outs[0]
