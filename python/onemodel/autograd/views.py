"""The records of views whose base was written in place (docs/tensor.md,
"In-place operations under autograd").

A view shows part of another tensor's memory. When that tensor's history
is rebased by an in-place write (ops/inplace.py), a view made before has a
record that describes the old value; before the view is used by an
operator again, ``refresh_view`` gives it a record that reads the base's
current history instead: ``ViewOfBase``, whose backward puts the view's
gradient into zeros of the base's shape at the view's elements.
"""

from __future__ import annotations

import numpy as np

from .. import _shape
from ..tensor import Tensor, float32
from .function import Function


def view_region(t: Tensor, base: Tensor) -> tuple:
    """A NumPy index into `base` (contiguous) selecting the elements `t`
    shows, in `t`'s row-major order."""
    if not base.is_contiguous():
        raise RuntimeError(
            "an in-place operation through a view of a non-contiguous tensor is not supported while recording; "
            "call .contiguous() on the base first"
        )
    flat = np.full((), t._offset - base._offset, np.int64)
    for n, s in zip(t._shape, t._strides):
        flat = flat[..., None] + np.arange(n, dtype=np.int64) * s
    if flat.size and (flat.min() < 0 or flat.max() >= _shape.numel(base._shape)):
        raise RuntimeError("an in-place operation through a view that reaches outside its base")
    return np.unravel_index(flat, base._shape) if base._shape else ()


class ViewOfBase(Function):
    """The record of a view re-derived from its base (made by
    ``Function.record``; no forward computation)."""

    def backward(self, g):
        z = np.zeros(self.input_meta[0][0], np.float32)
        z[self.region] = g.numpy(force=True)  # a view's elements are distinct: no sums
        out = Tensor._empty(z.shape, float32)
        out.numpy(force=True)[...] = z
        return out


def refresh_view(t: Tensor) -> None:
    """Re-derive a view's record from its base's current record."""
    base = t._base
    t._base_record = base._record
    if base.requires_grad and t._dtype is float32:
        t._record = ViewOfBase.record((base,), region=view_region(t, base))
