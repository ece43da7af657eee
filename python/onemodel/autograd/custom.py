"""torch's custom-function protocol on onemodel's engine.

A subclass of ``onemodel.autograd.Function`` whose ``forward`` is a
staticmethod is a custom operator written as for torch::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

(``forward(*args)`` with a separate ``setup_context(ctx, inputs, output)``
works too.) ``ctx`` is the operation's record, an instance of the class's
``<Name>Backward`` record type: ``save_for_backward`` (saved tensors are
checked against in-place changes before backward runs, as every record's
are), ``saved_tensors``, ``needs_input_grad`` (one flag per forward
argument), ``mark_non_differentiable``, ``set_materialize_grads``,
``mark_dirty`` (recorded only), and any attribute the forward sets.
``forward`` runs with recording off. ``backward`` receives one gradient
per forward output and returns one per forward argument (None for
arguments without one; extra trailing Nones are allowed).

Several differentiable outputs are stored in one buffer whose record is
``ctx``, and returned as views of it (the engine's one-output-per-record
rule); an output that is also an input is returned as a new view of it.
Differences from torch: no double backward (``create_graph``), no
``vmap``/``jvp``, and ``mark_dirty`` does not re-base the modified input.
"""

from __future__ import annotations

from .. import _core
from ..grad_mode import _set_enabled, is_grad_enabled
from ..tensor import Tensor
from .function import Function as _Record


class FunctionCtx:
    """The context methods a custom function's ``ctx`` has (mixed into the
    record type created for each custom Function)."""

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    def save_for_forward(self, *tensors) -> None:
        raise NotImplementedError("save_for_forward: onemodel has no forward-mode differentiation")


class CustomBackward(FunctionCtx, _Record):
    """Base of the ``<Name>Backward`` record types of custom Functions."""

    _fn_cls = None

    def backward(self, g):
        fn = self._fn_cls
        grads = self._output_grads(g)
        result = fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self._arg_is_tensor)
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise RuntimeError(f"function {fn.__name__}Backward returned an incorrect number of gradients (expected {n_args}, got {len(result)})")
        out = []
        for is_tensor, needed, r in zip(self._arg_is_tensor, self.needs_input_grad, result):
            if not is_tensor:
                continue
            if r is not None and not isinstance(r, Tensor):
                raise TypeError(f"{fn.__name__}.backward must return Tensors or None, got {type(r).__name__}")
            out.append(r if needed else None)
        return tuple(out)

    def _output_grads(self, g):
        layout = self._layout
        if layout is None:  # one differentiable output, the record's own
            return (g,)
        grads = []
        for kind, shape, offset, n in layout:
            if kind == "self":
                grads.append(g)
            elif kind == "packed":
                grads.append(g._view(shape, _contiguous_strides(shape), g._offset + offset) if n else _zeros(shape))
            elif kind == "zeros":
                grads.append(_zeros(shape) if self._materialize else None)
            else:
                grads.append(None)
        return tuple(grads)


def _contiguous_strides(shape) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s
    return tuple(reversed(strides))


def _zeros(shape) -> Tensor:
    t = Tensor._empty(tuple(shape))
    _core.fill_(t, 0.0)
    return t


def make_backward_cls(fn_cls) -> type:
    return type(f"{fn_cls.__name__}Backward", (CustomBackward,), {"_fn_cls": fn_cls, "name": f"{fn_cls.__name__}Backward"})


def apply_custom(fn_cls, args, kwargs):
    """Run a torch-style custom Function (see the module docstring)."""
    if kwargs:
        raise TypeError(f"{fn_cls.__name__}.apply takes positional arguments only (torch's rule), got {sorted(kwargs)}")
    backward_cls = fn_cls.__dict__.get("_backward_cls")
    if backward_cls is None:
        backward_cls = fn_cls._backward_cls = make_backward_cls(fn_cls)
    ctx = backward_cls.__new__(backward_cls)
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    tensors = [a for a in args if isinstance(a, Tensor)]
    recording = is_grad_enabled() and any(t.requires_grad for t in tensors)
    ctx.recording = recording
    ctx.saved = ()
    ctx._arg_is_tensor = is_tensor
    ctx.needs_input_grad = tuple(bool(recording and isinstance(a, Tensor) and a.requires_grad) for a in args)
    ctx._non_differentiable = set()
    ctx._materialize = True
    ctx._dirty = ()
    ctx._layout = None
    prev = is_grad_enabled()
    _set_enabled(False)
    try:
        if getattr(fn_cls, "setup_context", None) is not None and _is_static(fn_cls, "setup_context"):
            output = fn_cls.forward(*args)
            fn_cls.setup_context(ctx, args, output)
        else:
            output = fn_cls.forward(ctx, *args)
    finally:
        _set_enabled(prev)
    if not recording:
        return output
    single = not isinstance(output, tuple)
    outs = (output,) if single else output
    diff = [i for i, o in enumerate(outs)
            if isinstance(o, Tensor) and o.dtype.is_floating_point and id(o) not in ctx._non_differentiable]
    ctx.edges = tuple((t._record if t._record is not None else t) if t.requires_grad else None for t in tensors)
    ctx.input_meta = tuple((t._shape, t._dtype) for t in tensors)
    ctx.released = False
    if not diff:
        return output
    input_ids = {id(t) for t in tensors}
    outs = list(outs)
    if len(diff) == 1:
        # The one differentiable output is the record's own output.
        k = diff[0]
        o = outs[k]
        if id(o) in input_ids or o._record is not None:
            o = o._view(o._shape, o._strides)  # a new view: the input keeps its own history
        o._record = ctx
        outs[k] = o
        if single:
            return o
        ctx._layout = [("self", None, 0, 0) if i == k else _passive(x) for i, x in enumerate(outs)]
        return tuple(outs)
    return _pack_outputs(ctx, outs, diff, single)


def _passive(o) -> tuple:
    """The layout entry of an output without a gradient of its own."""
    if isinstance(o, Tensor) and o.dtype.is_floating_point:
        return ("zeros", tuple(o.shape), 0, 0)
    return ("none", None, 0, 0)


def _pack_outputs(ctx, outs, diff, single):
    """Several outputs: one contiguous buffer is the record's output; each
    differentiable output is returned as a (recorded) view of it."""
    from ..ops import views

    layout = []
    offset = 0
    for i, o in enumerate(outs):
        if i in diff:
            n = o.numel()
            layout.append(("packed", tuple(o.shape), offset, n))
            offset += n
        else:
            layout.append(_passive(o))
    packed = Tensor._empty((offset,))
    for (kind, shape, off, n), o in zip(layout, outs):
        if kind == "packed" and n:
            _core.copy_(packed._view(shape, _contiguous_strides(shape), off), o)
    packed._record = ctx
    ctx._layout = layout
    result = []
    for (kind, shape, off, n), o in zip(layout, outs):
        if kind == "packed":
            result.append(views.reshape(packed[off:off + n], shape))
        else:
            result.append(o)
    return result[0] if single else tuple(result)


def _is_static(cls, name: str) -> bool:
    import inspect

    return isinstance(inspect.getattr_static(cls, name, None), staticmethod)


def once_differentiable(fn):
    """torch's decorator for a backward that is not itself differentiable;
    onemodel's backward is never recorded, so it returns ``fn`` unchanged."""
    return fn
