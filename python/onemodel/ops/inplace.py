"""In-place operations under autograd, as torch: the tensor's history is
rebased onto the in-place operation.

When no graph is recorded (grad mode off, or neither the tensor nor any
operand requires grad), an in-place op writes the tensor's memory directly
(the fast kernels). When one is, the op is computed out of place from a
private copy of the tensor's old value that carries its old history
(``old``), the result is written into the tensor's memory, the storage's
version is bumped, and the tensor's ``grad_fn`` becomes the record of that
out-of-place op. The values are the out-of-place op's bits, and so are the
gradients. Consequences, as in torch:

* a leaf that requires grad (or a view of one) is refused (RuntimeError);
* a record that saved the tensor (or any tensor on its memory) before the
  write raises TensorVersionError at backward: its saved value changed;
* a write through a view rebases the view's base too: the base's new
  record puts the view's new values into the old base (``Put``), and the
  view becomes a gather of the base's new value; other views of that base
  are re-derived from it when next used by an operator
  (``autograd/views.py``).

Views are tracked by ``Function.apply``: an output sharing an input's
memory gets ``_base`` (the root tensor of the chain of views) and
``_base_record`` (that tensor's record at the time).
"""

from __future__ import annotations

from .. import _core
from .._kernels import clone_contiguous
from ..autograd.views import ViewOfBase, refresh_view, view_region
from ..grad_mode import enable_grad, is_grad_enabled
from ..tensor import Tensor, bool_


def needs_record(t: Tensor, others=()) -> bool:
    if not is_grad_enabled():
        return False
    return t.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others)


def check_writable(t: Tensor, op: str) -> None:
    if t._storage.readonly:
        raise ValueError(f"{op}: the tensor wraps a read-only NumPy array and cannot be written")


def check_no_overlap(t: Tensor, op: str) -> None:
    """torch's internal-overlap rule: an in-place op that computes from the
    old values (arithmetic, copy_, clamp_, random fills) into a tensor where
    several elements are one memory location (a stride 0 over a dim of size
    > 1, as ``expand`` makes) is refused, since each location would be
    updated once per element that shows it. Writes of given values
    (fill_, zero_, masked_fill_, index_put_, item assignment) are allowed,
    as torch allows them."""
    for n, s in zip(t._shape, t._strides):
        if s == 0 and n > 1:
            raise RuntimeError(
                f"{op}: unsupported operation: more than one element of the written-to tensor refers to a single "
                f"memory location (shape {tuple(t._shape)}, strides {tuple(t._strides)}); clone() the tensor first"
            )


def run(t: Tensor, op: str, outofplace, fast, others=()) -> Tensor:
    """An in-place op: ``fast()`` (the direct kernel) when no graph is
    recorded, else ``outofplace(old)`` rebased onto `t`."""
    if op not in ("fill_", "zero_"):
        check_no_overlap(t, op)
    if needs_record(t, others):
        rebase(t, op, outofplace)
        return t
    return fast()


def write_through(t: Tensor, op: str, assign, outofplace, others=()) -> Tensor:
    """An in-place write: ``assign(t)`` writes `t`'s memory directly (the
    version bumped first, see ``_write``), or, while recording,
    ``outofplace(old)`` is rebased onto `t`."""
    check_writable(t, op)
    if needs_record(t, others):
        rebase(t, op, outofplace)
    else:
        t._bump()
        assign(t)
    return t


def assign_result(t: Tensor, op: str, outofplace, others=()) -> Tensor:
    """An in-place op given only its out-of-place form: the result is
    computed and copied into `t` (rebased while recording)."""
    check_writable(t, op)
    check_no_overlap(t, op)
    if needs_record(t, others):
        rebase(t, op, outofplace)
        return t
    r = outofplace(t)
    _write(t, r, op)
    return t


def _write(t: Tensor, r: Tensor, op: str) -> None:
    """Copy the result `r` into `t`'s memory and count the write in its
    version. The version first: a KeyboardInterrupt arrives at the next
    Python call after the kernel, so a bump after the copy could leave a
    write the version does not count (a saved copy would not be stale)."""
    if tuple(r.shape) != tuple(t.shape):
        raise ValueError(f"{op}: the result of shape {tuple(r.shape)} does not fit the tensor of shape {tuple(t.shape)}")
    if r.dtype is not t.dtype:
        from .convert import convert

        r = convert(r, t.dtype)
    src = r if r._storage is not t._storage else clone_contiguous(r)
    t._bump()
    _core.copy_(t, src)


def _alias(t: Tensor, copy: bool) -> Tensor:
    """A tensor with `t`'s autograd identity (record or leaf): a private copy
    of its values, or (copy=False) a second handle on its memory."""
    a = clone_contiguous(t) if copy else t._view(t._shape, t._strides)
    a._record = t._record
    a._requires_grad = t._requires_grad
    return a


def _refuse_leaf(t: Tensor, op: str) -> None:
    if t._record is None and t._requires_grad:
        raise RuntimeError(
            f"{op}: a leaf tensor that requires grad is being used in an in-place operation; "
            "wrap parameter updates in onemodel.no_grad() or use the out-of-place operation"
        )
    base = t._base
    if base is not None and base._record is None and base._requires_grad:
        raise RuntimeError(
            f"{op}: a view of a leaf tensor that requires grad is being used in an in-place operation; "
            "wrap the update in onemodel.no_grad() or use the out-of-place operation"
        )


def rebase(t: Tensor, op: str, outofplace) -> None:
    check_writable(t, op)
    _refuse_leaf(t, op)
    if t._base is not None and t._base._record is not t._base_record:
        refresh_view(t)
    old = _alias(t, copy=True)
    with enable_grad():
        r = outofplace(old)
    _write(t, r, op)
    base = t._base
    if base is None or not (base.requires_grad or r.requires_grad):
        t._record = r._record
        return
    # A view: the base's new value is its old one with the view's region
    # replaced by r; the view is then a view of the base's new value.
    from .index import Put

    region = view_region(t, base)
    with enable_grad():
        base._record = Put.record((_alias(base, copy=False), r), idx=region, accumulate=False, vshape=tuple(r.shape))
    t._base_record = base._record
    t._record = ViewOfBase.record((base,), region=region)


# -- out-of-place forms of the plain writes (used while recording) -------------

def filled(t: Tensor, value) -> Tensor:
    """`t`'s shape filled with `value` (a number or a 0-d tensor, whose
    gradient is then the sum of the output's)."""
    from .selection import masked_fill

    return masked_fill(t, True, value)


def copied(t: Tensor, src) -> Tensor:
    """`src` broadcast to `t`'s shape (its gradient flows back to `src`);
    as torch, the result still requires grad when `t` did (a zero gradient
    to `t`'s old value), even from a constant `src`."""
    from .views import expand

    if not isinstance(src, Tensor):
        from ..creation import tensor as make_tensor

        src = make_tensor(src, dtype=t.dtype)
    if src.dtype is not t.dtype:
        src = src.to(t.dtype)
    out = expand(src, t.shape) if tuple(src.shape) != tuple(t.shape) else src
    if t.requires_grad and not out.requires_grad:
        from ..creation import ones
        from .selection import where

        return where(ones(t.shape, dtype=bool_), out, t)
    return out.clone()
