"""Matrix products: matmul (torch.matmul's semantics) and linear.

Every product runs on the canonical-order kernel (one accumulator per output
starting at +0, terms in increasing k; exact mode rounds the multiply and the
add separately, fast mode uses one fma). Backward products with a
transposed operand (g·Bᵀ, Aᵀ·g) pass strided views to the same kernel, so
they follow the same order. The bias of linear is a separate IEEE add after
the sum; its gradient is a double-precision column sum.
"""

from __future__ import annotations

from .. import _core, _shape
from ..autograd.function import Function, is_fresh
from ..grad_mode import _state as _grad_state
from ..tensor import Tensor, float32, from_core
from .._kernels import clone_contiguous, expand_to, sum_kernel, sum_to
from . import views


def _swap_last(t: Tensor) -> Tensor:
    """View with the last two dims swapped (no copy)."""
    s, st = list(t._shape), list(t._strides)
    s[-1], s[-2] = s[-2], s[-1]
    st[-1], st[-2] = st[-2], st[-1]
    return t._view(tuple(s), tuple(st))


def _product(a: Tensor, b: Tensor) -> Tensor:
    """[*batch, M, K] × [*batch, K, N] (batch dims already equal; any strides)."""
    if len(a._shape) == 2 and len(b._shape) == 2:
        # One call allocates and multiplies: the same kernel call on the
        # same [1, M, K] × [1, K, N] views as the batched path below (None:
        # an operand the small-op path does not take; the general path runs).
        r = _core.matmul_new(a, b)
        if r is not None:
            return from_core(r)
    batch = a._shape[:-2]
    m, n = a._shape[-2], b._shape[-1]
    out = Tensor._empty(batch + (m, n))
    bsz = _shape.numel(batch)
    # The kernel takes one batch dimension: merge the batch dims when the
    # strides allow it (always for contiguous or broadcast-of-one layouts),
    # else materialise the operand.
    a3 = _merge_batch(a, bsz)
    b3 = _merge_batch(b, bsz)
    _core.matmul(out._view((bsz, m, n), (m * n, n, 1)), a3, b3)
    return out


def _merge_batch(t: Tensor, bsz: int) -> Tensor:
    shape3 = (bsz,) + t._shape[-2:]
    batch_shape, batch_strides = t._shape[:-2], t._strides[:-2]
    if not batch_shape:
        return t._view(shape3, (0,) + t._strides[-2:])
    merged = _shape.view_strides(batch_shape, batch_strides, (bsz,))
    if merged is None:
        # Broadcast batch dims with mixed strides: all zero strides merge to 0.
        if all(s == 0 or n == 1 for n, s in zip(batch_shape, batch_strides)):
            merged = (0,)
        else:
            t = clone_contiguous(t)
            merged = (t._shape[-2] * t._shape[-1],)
    return t._view(shape3, merged + t._strides[-2:])


class MatMul(Function):
    """Batched product of operands already broadcast to [*batch, M, K] and
    [*batch, K, N] views; input_meta keeps the un-broadcast shapes."""

    def forward(self, a, b, batch):
        self.save_for_backward(a, b)
        self.batch = batch
        ab = expand_to(a, batch + a._shape[-2:], "matmul")
        bb = expand_to(b, batch + b._shape[-2:], "matmul")
        return _product(ab, bb)

    def backward(self, g):
        a, b = self.saved_tensors
        ga = gb = None
        if self.needs_input_grad[0]:
            bb = expand_to(b, self.batch + b._shape[-2:], "matmul")
            ga = sum_to(_product(g, _swap_last(bb)), a._shape)
        if self.needs_input_grad[1]:
            ab = expand_to(a, self.batch + a._shape[-2:], "matmul")
            gb = sum_to(_product(_swap_last(ab), g), b._shape)
        return ga, gb


def _rows(t: Tensor, rows: tuple) -> Tensor:
    """`t` [*lead, n] as its [R, n] rows: a view where strides allow it,
    else a contiguous copy (what reshape(t, (R, n)) returns, unrecorded)."""
    strides = _shape.view_strides(t._shape, t._strides, rows)
    if strides is None:
        t = clone_contiguous(t)
        strides = (rows[1], 1)
    return t._view(rows, strides)


def _as_lead(t: Tensor, lead: tuple) -> Tensor:
    """Contiguous [R, n] `t` viewed as [*lead, n]."""
    shape = lead + t._shape[1:]
    return t._view(shape, _shape.contiguous_strides(shape))


class Linear(Function):
    """y = x Wᵀ + b over x [*lead, in], as one record: the leading dims are
    folded into rows inside forward and backward (the views and copies the
    two reshapes around a 2-D Linear would make, without their records)."""

    lead = None  # x's leading dims when x is not 2-D

    def forward(self, x, weight, bias):
        if len(x._shape) != 2:
            self.lead = x._shape[:-1]
            x = _rows(x, (_shape.numel(self.lead), x._shape[-1]))
        self.save_for_backward(x, weight)
        y = _product(x, _swap_last(weight))
        if bias is not None:
            _core.binary("add", y, y, expand_to(bias, y._shape, "linear"))
        if self.lead is not None:
            y = _as_lead(y, self.lead)
        return y

    def backward(self, g):
        x, weight = self.saved_tensors
        if self.lead is not None:
            g = g if g.is_contiguous() else clone_contiguous(g)
            g = g._view((x._shape[0], g._shape[-1]), (g._shape[-1], 1))
        gx = _product(g, weight) if self.needs_input_grad[0] else None
        if gx is not None and self.lead is not None:
            gx = _as_lead(gx, self.lead)
        gw = _product(_swap_last(g), x) if self.needs_input_grad[1] else None
        gb = None
        if len(self.needs_input_grad) > 2 and self.needs_input_grad[2]:
            gb = sum_kernel(g, (0,), keepdim=False)
        return (gx, gw, gb) if len(self.needs_input_grad) > 2 else (gx, gw)


def _check_float(op: str, *ts) -> None:
    for t in ts:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
        if t.dtype is not float32:
            raise TypeError(f"{op}: expected float32 tensors, got {t.dtype.name}")


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """torch.matmul: dot, matrix-vector, matrix-matrix and batched products
    with broadcasting of the batch dimensions."""
    if (
        isinstance(input, Tensor) and isinstance(other, Tensor) and len(input._shape) == 2 and len(other._shape) == 2
        and is_fresh(input) and is_fresh(other)
    ):
        # Matrix × matrix, the small-op path: one call checks, allocates
        # and multiplies (None: not float32 or the sizes differ, and the
        # general path below raises); the record is what apply() makes.
        r = _core.matmul_new(input, other)
        if r is not None:
            out = from_core(r)
            if (
                input._requires_grad or input._record is not None or other._requires_grad or other._record is not None
            ) and getattr(_grad_state, "enabled", True):
                MatMul.record_op(out, input, other, save=True).batch = ()
            return out
    _check_float("matmul", input, other)
    a, b = input, other
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both arguments need at least 1 dimension, got shapes {a.shape} and {b.shape}")
    squeeze_front = a.ndim == 1
    squeeze_back = b.ndim == 1
    if squeeze_front:
        a = views.unsqueeze(a, 0)
    if squeeze_back:
        b = views.unsqueeze(b, 1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: shapes {input.shape} and {other.shape} cannot be multiplied ({a.shape[-2]}x{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})"
        )
    if b.ndim == 2 and a.ndim > 2:
        # As torch: fold the batch of the first operand into its rows, so a
        # weight's gradient is one product over all rows.
        lead = a.shape[:-1]
        # (The row count by name: -1 cannot be inferred when k is 0.)
        out = MatMul.apply(views.reshape(a, (_shape.numel(lead), a.shape[-1])), b, ())
        out = views.reshape(out, lead + (b.shape[-1],))
    else:
        batch = _shape.broadcast_shapes("matmul", a.shape[:-2], b.shape[:-2])
        out = MatMul.apply(a, b, batch)
    if squeeze_front:
        out = views.squeeze(out, -2)
    if squeeze_back:
        out = views.squeeze(out, -1)
    return out


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    _check_float("mm", input, mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"mm: expected 2-D tensors, got shapes {input.shape} and {mat2.shape}")
    return matmul(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    _check_float("bmm", input, mat2)
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm: expected 3-D tensors with equal batch, got shapes {input.shape} and {mat2.shape}")
    return matmul(input, mat2)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """torch.nn.functional.linear: y = x Wᵀ + b over the last dimension."""
    _check_float("linear", input, weight)
    if bias is not None:
        _check_float("linear", bias)
    if len(weight._shape) != 2:
        raise ValueError(f"linear: weight must be 2-D [out_features, in_features], got shape {weight.shape}")
    if not input._shape or input._shape[-1] != weight._shape[1]:
        raise ValueError(
            f"linear: input of shape {input.shape} does not end in in_features={weight.shape[1]} (weight shape {weight.shape})"
        )
    if bias is not None and bias._shape != (weight._shape[0],):
        raise ValueError(f"linear: bias of shape {bias.shape} does not match out_features={weight.shape[0]}")
    lead = input._shape[:-1]
    if len(lead) == 1 or (lead and weight._shape[1]):
        return Linear.apply(input, weight, bias)
    # A 1-D input or no input features: the reshapes' own rules and errors.
    y = Linear.apply(views.reshape(input, (-1, weight._shape[1])), weight, bias)
    return views.reshape(y, lead + (weight._shape[0],))
