"""The backward record: one ``Function`` instance per recorded operation.

An operator is a subclass with ``forward`` and ``backward`` side by side.
``apply`` runs ``forward`` (with recording off, so its internals are never
recorded) and, when recording is on and an input requires gradients, turns
the instance into the output's record: one edge per tensor input (the
producing record, the leaf tensor itself, or None), the inputs' shapes and
dtypes, the saved tensors with the storage version at save time, and any
attributes ``forward`` stored on ``self``.

A subclass whose ``forward`` is a staticmethod follows torch's
custom-function protocol instead (``forward(ctx, ...)``,
``backward(ctx, *grads)``): see onemodel.autograd.custom.
"""

from __future__ import annotations

import inspect

from ..errors import GraphReleasedError, TensorVersionError
from ..grad_mode import _state as _grad_state
from ..tensor import Tensor

_new = object.__new__


def _refresh_view(t: Tensor) -> None:
    from .views import refresh_view  # (views.py subclasses Function)

    refresh_view(t)


def is_fresh(t: Tensor) -> bool:
    """Not a view whose base was written in place since the view was made
    (apply() refreshes such a view first; the fast paths leave it to apply)."""
    return t._base is None or t._base._record is t._base_record


class Function:
    #: Name used in error messages and ``grad_fn`` reprs (default: class name).
    name: str = ""
    #: A weak reference to the output tensor when it called retain_grad().
    retained = None
    # Defaults of the per-record state, so that a record built by a fast
    # path (``record_op``) sets only what differs.
    recording = False
    saved = ()
    released = False
    #: Attributes that release() clears besides the saved tensors.
    _release_attrs: tuple = ()

    #: True for torch-style custom functions (staticmethod forward), which
    #: apply() runs through onemodel.autograd.custom.
    _torch_style: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__dict__.get("name"):
            cls.name = cls.__name__
        forward = inspect.getattr_static(cls, "forward", None)
        cls._torch_style = isinstance(forward, staticmethod)

    # Subclasses implement these two.
    def forward(self, *args, **kwargs) -> Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, grad: Tensor):  # pragma: no cover - abstract
        """Return one gradient (or None) per tensor input, in input order."""
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs) -> Tensor:
        if cls._torch_style:
            from .custom import apply_custom

            return apply_custom(cls, args, kwargs)
        tensors = [a for a in args if isinstance(a, Tensor)]
        needs = []
        for t in tensors:
            if t._base is not None and t._base._record is not t._base_record:
                _refresh_view(t)  # its base was written in place since (ops/inplace.py)
            needs.append(t._requires_grad or t._record is not None)
        prev = getattr(_grad_state, "enabled", True)
        recording = prev and any(needs)
        ctx = _new(cls)
        if recording:
            ctx.recording = True
            ctx.needs_input_grad = tuple(needs)
        else:
            ctx.needs_input_grad = (False,) * len(tensors)
        _grad_state.enabled = False
        try:
            out = ctx.forward(*args, **kwargs)
        finally:
            _grad_state.enabled = prev
        if isinstance(out, Tensor):
            for t in tensors:
                if out._storage is t._storage and out is not t:
                    # A view of an input: remember the root tensor it shows.
                    base = t._base if t._base is not None else t
                    out._base, out._base_record = base, base._record
                    break
        if recording:
            ctx.edges = tuple((t._record if t._record is not None else t) if n else None for t, n in zip(tensors, needs))
            ctx.input_meta = tuple((t._shape, t._dtype) for t in tensors)
            out._record = ctx
        else:
            ctx.saved = ()
        return out

    @classmethod
    def record(cls, inputs, **attrs) -> "Function":
        """A record of this operation over `inputs` without running forward
        (for a tensor whose value is already in place, ops/inplace.py)."""
        ctx = cls.__new__(cls)
        ctx.recording = True
        ctx.saved = ()
        ctx.needs_input_grad = tuple(t.requires_grad for t in inputs)
        ctx.edges = tuple((t._record if t._record is not None else t) if t.requires_grad else None for t in inputs)
        ctx.input_meta = tuple((t._shape, t._dtype) for t in inputs)
        ctx.released = False
        for k, v in attrs.items():
            setattr(ctx, k, v)
        return ctx

    @classmethod
    def record_op(cls, out: Tensor, a: Tensor, b: Tensor | None = None, save: bool = False) -> "Function":
        """Make `out` (already computed) the output of a record of this
        operation over one or two float32 tensor inputs, saving them when
        `save`: what ``apply`` would record, for the fast paths of the small
        ops (ops/arith.py) that compute without running ``forward``. The
        caller has checked that recording is on, that an input requires
        grad and that no input is a stale view."""
        ctx = _new(cls)
        ctx.recording = True
        na = a._requires_grad or a._record is not None
        ea = (a._record if a._record is not None else a) if na else None
        if b is None:
            ctx.needs_input_grad = (na,)
            ctx.edges = (ea,)
            ctx.input_meta = ((a._shape, a._dtype),)
            if save:
                ctx.saved = ((a, a._storage.version),)
        else:
            nb = b._requires_grad or b._record is not None
            ctx.needs_input_grad = (na, nb)
            ctx.edges = (ea, (b._record if b._record is not None else b) if nb else None)
            ctx.input_meta = ((a._shape, a._dtype), (b._shape, b._dtype))
            if save:
                ctx.saved = ((a, a._storage.version), (b, b._storage.version))
        out._record = ctx
        return ctx

    # -- saved tensors ----------------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        if self.recording:
            self.saved = tuple((t, t._storage.version) if t is not None else (None, 0) for t in tensors)

    def check_saved(self) -> None:
        """Raise if the record was released or a saved tensor changed since."""
        if self.released:
            raise GraphReleasedError(
                f"backward: the graph through {self.name} was already freed by an earlier backward(); "
                "pass retain_graph=True to the first backward() to run it twice"
            )
        for i, (t, version) in enumerate(self.saved):
            if t is not None and t._storage.version != version:
                raise TensorVersionError(
                    f"backward: tensor {i} saved by {self.name} (shape {t.shape}) was modified in place after it "
                    f"was saved (version {version} -> {t._storage.version}); its gradient would be wrong"
                )

    @property
    def saved_tensors(self) -> tuple:
        return tuple([t for t, _ in self.saved])

    def release(self) -> None:
        """Free what the record holds for backward (after it ran). A record
        that held nothing (an addition, a reshape) stays usable, as torch's:
        a second backward through it needs nothing that was freed."""
        held = bool(self.saved)
        keys = self._release_attrs
        if keys:
            held = held or any(getattr(self, key, None) is not None for key in keys)
            for key in keys:
                setattr(self, key, None)
        self.saved = ()
        self.released = held

    @property
    def next_functions(self) -> tuple:
        return tuple(e if isinstance(e, Function) else None for e in getattr(self, "edges", ()))

    def __repr__(self) -> str:
        return f"<{self.name}>"
