"""Element-wise selections: where, masked_fill, clamp/clip, maximum/minimum,
tril/triu, each a Function with its backward rule (torch's
derivatives.yaml):

* where / masked_fill: g to the chosen side, 0 to the other (none to the
  condition); a 0-d fill value that requires grad gets the sum of g over
  the filled positions;
* clamp with number bounds: g to x where min < x < max (strictly: 0 at a
  bound, as torch); with tensor bounds, torch's rules (ClampTensor);
* maximum/minimum: g to the larger/smaller input, g/2 to each on a tie, g
  to both where either is NaN;
* tril/triu: g on the kept triangle.

float32 forward and backward run on the Rust lane loops (compare-and-select,
one IEEE operation per element), the same bits on every kernel path;
int64 and bool selections are NumPy's (exact). Conditions and masks are bool
tensors (or NumPy bool arrays); other dtypes are read as "nonzero".
Operands are promoted as torch does (ops/compare.py).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import _core, _shape
from .._kernels import binary_kernel, expand_to, sum_to
from .._numpy_exact import ieee, ieee_method
from ..autograd.function import Function
from ..tensor import Tensor, bool_, float32, int64
from .pointwise import _unary_p
from .operands import from_array


def _ternary(op: str, a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    shape = _shape.broadcast_shapes(op, a._shape, b._shape, c._shape)
    out = Tensor._empty(shape)
    _core.ternary(op, out, expand_to(a, shape, op), expand_to(b, shape, op), expand_to(c, shape, op))
    return out


class Clamp(Function):
    """clamp with number bounds (NaN = no bound on that side). Backward as
    torch: g where min < x < max strictly, 0 at a bound and at NaN."""

    def forward(self, a, lo: float, hi: float):
        self.bounds = (lo, hi)
        self.save_for_backward(a)
        return _unary_p("clamp", a, lo, hi)

    def backward(self, g):
        (a,) = self.saved_tensors
        lo, hi = self.bounds
        x = a.numpy(force=True)
        inside = np.ones(x.shape, bool) if math.isnan(lo) else x > np.float32(lo)
        if not math.isnan(hi):
            inside &= x < np.float32(hi)
        if math.isnan(lo) and math.isnan(hi):
            inside &= ~np.isnan(x)
        return from_array(np.where(inside, g.numpy(force=True), np.float32(0.0)), float32)


class Maximum(Function):
    op = "maximum"

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return binary_kernel(self.op, a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        shape = g._shape
        av, bv = expand_to(a, shape, self.op), expand_to(b, shape, self.op)
        rule = self.op + "_backward"
        ga = _ternary(rule, g, av, bv) if self.needs_input_grad[0] else None
        gb = _ternary(rule, g, bv, av) if self.needs_input_grad[1] else None
        # torch: where either side is NaN, both get the whole gradient.
        nan = np.isnan(av.numpy(force=True)) | np.isnan(bv.numpy(force=True))
        if nan.any():
            for gi in (ga, gb):
                if gi is not None:
                    gi.numpy(force=True)[nan] = g.numpy(force=True)[nan]
        return (sum_to(ga, sa) if ga is not None else None, sum_to(gb, sb) if gb is not None else None)


class Minimum(Maximum):
    op = "minimum"


class Where(Function):
    # Inputs: (a, b, condition); the condition (float32 0/1, no grad) never
    # receives a gradient.
    def forward(self, a, b, cond: Tensor):
        self.cond = cond
        return _ternary("where", cond, a, b)

    def backward(self, g):
        (sa, _), (sb, _), _ = self.input_meta
        zero = Tensor._empty(())
        _core.fill_(zero, 0.0)
        ga = sum_to(_ternary("where", self.cond, g, zero), sa) if self.needs_input_grad[0] else None
        gb = sum_to(_ternary("where", self.cond, zero, g), sb) if self.needs_input_grad[1] else None
        return ga, gb, None


class ClampTensor(Function):
    """clamp with both bounds tensors: min(max(x, lo), hi). Backward as
    torch 2.15 (measured): for lo < hi, g to x inside, to lo below, to hi
    above, split in halves on a tie of x with a bound; for lo = hi, g to x
    at the tie; for lo > hi (every output hi), g to hi. A NaN x gets g (and
    hi too when lo > hi); a NaN lo gives g to x unless x > hi; a NaN hi
    gives g to x where x ≥ lo."""

    def forward(self, x, lo, hi):
        self.save_for_backward(x, lo, hi)
        shape = _shape.broadcast_shapes("clamp", x.shape, lo.shape, hi.shape)
        r = np.minimum(np.maximum(np.broadcast_to(x.numpy(force=True), shape), lo.numpy(force=True)), hi.numpy(force=True))
        return from_array(r, x.dtype)

    @ieee_method
    def backward(self, g):
        x, lo, hi = self.saved_tensors
        gn = g.numpy(force=True)
        xv, lv, hv = (np.broadcast_to(t.numpy(force=True), gn.shape) for t in (x, lo, hi))
        with ieee(), np.errstate(invalid="ignore"):
            nx, nl, nh = np.isnan(xv), np.isnan(lv), np.isnan(hv)
            ok = ~(nx | nl | nh)
            half = np.float32(0.5)
            lt, eq = lv < hv, lv == hv
            wx = np.where(ok & lt & (xv > lv) & (xv < hv), 1.0, 0.0)
            wx += np.where(ok & eq & (xv == lv), 1.0, 0.0)
            wx += np.where(ok & lt & ((xv == lv) | (xv == hv)), 0.5, 0.0)
            wx += np.where(nx, 1.0, 0.0)
            wx += np.where(~nx & nl & ~(xv > hv), 1.0, 0.0)
            wx += np.where(~nx & ~nl & nh & (xv >= lv), 1.0, 0.0)
            wl = np.where(ok & (lv <= hv) & (xv < lv), 1.0, 0.0) + np.where(ok & lt & (xv == lv), 0.5, 0.0)
            wh = np.where(~nl & ~nh & (lv > hv), 1.0, 0.0) + np.where(ok & (lv <= hv) & (xv > hv), 1.0, 0.0)
            wh += np.where(ok & lt & (xv == hv), 0.5, 0.0)
        out = []
        for w, need, (shape, _) in zip((wx, wl, wh), self.needs_input_grad, self.input_meta):
            if not need:
                out.append(None)
                continue
            # g·0.5 is g/2 as torch divides: one f32 multiply.
            with ieee():
                gi = np.where(w == 0.5, gn * half, np.where(w == 1.0, gn, np.float32(0.0))).astype(np.float32)
            out.append(sum_to(from_array(gi, float32), shape))
        return tuple(out)


class Triangle(Function):
    """tril/triu: the input where the (constant) mask holds, else 0."""

    def forward(self, x, mask):
        self.mask = mask
        return from_array(np.where(mask, x.numpy(force=True), x.dtype.numpy.type(0)), x.dtype)

    def backward(self, g):
        return from_array(np.where(self.mask, g.numpy(force=True), np.float32(0.0)), float32)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _operand(x, dt, op: str) -> Tensor:
    """`x` (tensor or number) as a tensor of dtype `dt` (numbers 0-d)."""
    if isinstance(x, Tensor):
        if x.dtype is dt:
            return x
        from .convert import convert

        return convert(x, dt)
    if dt is int64 and isinstance(x, numbers.Integral) and not -(2**63) <= int(x) < 2**63:
        raise ValueError(f"{op}: the value {x} cannot be converted to int64 without overflow")
    t = Tensor._empty((), dt)
    _core.fill_(t, float(x) if dt is float32 else x)
    return t


def _promote(op: str, *xs):
    from .compare import common_dtype

    return common_dtype(op, *xs)


def _truth_array(cond, op: str) -> np.ndarray:
    if isinstance(cond, Tensor):
        a = cond.numpy(force=True)
    else:
        a = np.asarray(cond)
        if a.dtype == object:
            raise TypeError(f"{op}: the condition must be a bool tensor or array, got {type(cond).__name__}")
    return a if a.dtype == np.bool_ else a != 0


def _condition(cond, name: str) -> Tensor:
    """The condition as a float32 0/1 tensor for the selection kernel."""
    return from_array(_truth_array(cond, name).astype(np.float32), float32)


# ---------------------------------------------------------------------------
# Public functions (torch's names and signatures)
# ---------------------------------------------------------------------------

def where(condition, input=None, other=None) -> Tensor | tuple[Tensor, ...]:
    """``input`` where ``condition`` holds, else ``other`` (tensors or
    numbers, broadcast, promoted as torch); ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        from .index import nonzero

        c = condition if isinstance(condition, Tensor) else from_array(_truth_array(condition, "where"), bool_)
        return nonzero(c, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where: give both input and other, or neither")
    dt = _promote("where", input, other)
    if dt is float32:
        return Where.apply(_operand(input, dt, "where"), _operand(other, dt, "where"), _condition(condition, "where"))
    a = _operand(input, dt, "where").numpy(force=True)
    b = _operand(other, dt, "where").numpy(force=True)
    return from_array(np.where(_truth_array(condition, "where"), a, b), dt)


def _fill_value(value, dt, op: str):
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"{op}: only a 0-d tensor or a number can be the fill value, got shape {tuple(value.shape)}")
        return value if (value.dtype is dt or (dt is float32 and value.requires_grad)) else _operand(value.item(), dt, op)
    if not isinstance(value, (numbers.Number, np.generic)):
        raise TypeError(f"{op}: the fill value must be a number or a 0-d tensor, got {type(value).__name__}")
    return _operand(value, dt, op)


def _mask_for(op: str, input: Tensor, mask) -> np.ndarray:
    m = _truth_array(mask, op)
    try:
        np.broadcast_to(m, input.shape)
    except ValueError:
        raise ValueError(f"{op}: the mask of shape {tuple(m.shape)} cannot be broadcast to the input's shape {tuple(input.shape)}") from None
    if _shape.broadcast_shapes(op, input.shape, m.shape) != tuple(input.shape):
        raise ValueError(f"{op}: the mask of shape {tuple(m.shape)} cannot be broadcast to the input's shape {tuple(input.shape)}")
    return m


def masked_fill(input: Tensor, mask, value) -> Tensor:
    """``value`` where the (broadcast) bool mask is True, else the input;
    the result has the input's dtype and shape."""
    if not isinstance(input, Tensor):
        raise TypeError(f"masked_fill: expected a Tensor, got {type(input).__name__}")
    m = _mask_for("masked_fill", input, mask)
    v = _fill_value(value, input.dtype, "masked_fill")
    if input.dtype is float32:
        return Where.apply(v, input, from_array(np.broadcast_to(m, input.shape).astype(np.float32), float32))
    return from_array(np.where(m, v.numpy(force=True), input.numpy(force=True)), input.dtype)


def masked_fill_(input: Tensor, mask, value) -> Tensor:
    from .inplace import write_through

    m = _mask_for("masked_fill_", input, mask)
    v = _fill_value(value, input.dtype, "masked_fill_")

    def assign(t):
        t.numpy(force=True)[np.broadcast_to(m, t.shape)] = v.numpy(force=True)

    return write_through(input, "masked_fill_", assign, lambda t: masked_fill(t, m, v), (v,))


def _bound(v, op: str, nm: str):
    if v is None or isinstance(v, Tensor):
        return v
    if not isinstance(v, numbers.Real) or isinstance(v, bool):
        raise TypeError(f"{op}: {nm} must be a number, a tensor or None, got {type(v).__name__}")
    return v


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002 - torch's names
    """min(max(x, min), max) with numbers or tensors (broadcast) as bounds."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    lo, hi = _bound(min, "clamp", "min"), _bound(max, "clamp", "max")
    if not isinstance(input, Tensor):
        raise TypeError(f"clamp: expected a Tensor, got {type(input).__name__}")
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        # torch: a single tensor bound is maximum/minimum (their tie and NaN
        # rules); two go through ClampTensor.
        if hi is None:
            return maximum(input, lo)
        if lo is None:
            return minimum(input, hi)
        dt = _promote("clamp", input, lo, hi)
        if dt is not float32:
            return minimum(maximum(input, lo), hi)
        return ClampTensor.apply(*(_operand(b, dt, "clamp") for b in (input, lo, hi)))
    if input.dtype is not float32:
        dt = _promote("clamp", input, *(b for b in (lo, hi) if b is not None))
        r = _operand(input, dt, "clamp").numpy(force=True)
        if lo is not None:
            r = np.maximum(r, dt.numpy.type(lo))
        if hi is not None:
            r = np.minimum(r, dt.numpy.type(hi))
        return from_array(r, dt)
    return Clamp.apply(input, math.nan if lo is None else float(lo), math.nan if hi is None else float(hi))


def clip(input, min=None, max=None) -> Tensor:  # noqa: A002
    return clamp(input, min, max)


def clip_(input, min=None, max=None) -> Tensor:  # noqa: A002
    return clamp_(input, min, max)


def clamp_min(input, min) -> Tensor:  # noqa: A002
    return clamp(input, min, None)


def clamp_max(input, max) -> Tensor:  # noqa: A002
    return clamp(input, None, max)


def clamp_(input, min=None, max=None) -> Tensor:  # noqa: A002
    from .inplace import assign_result

    return assign_result(input, "clamp_", lambda t: clamp(t, min, max), (min, max))


def clamp_min_(input, min) -> Tensor:  # noqa: A002
    return clamp_(input, min, None)


def clamp_max_(input, max) -> Tensor:  # noqa: A002
    return clamp_(input, None, max)


def maximum(input, other) -> Tensor:
    dt = _promote("maximum", input, other)
    if dt is float32:
        return Maximum.apply(_operand(input, dt, "maximum"), _operand(other, dt, "maximum"))
    return from_array(np.maximum(_operand(input, dt, "maximum").numpy(force=True), _operand(other, dt, "maximum").numpy(force=True)), dt)


def minimum(input, other) -> Tensor:
    dt = _promote("minimum", input, other)
    if dt is float32:
        return Minimum.apply(_operand(input, dt, "minimum"), _operand(other, dt, "minimum"))
    return from_array(np.minimum(_operand(input, dt, "minimum").numpy(force=True), _operand(other, dt, "minimum").numpy(force=True)), dt)


def _triangle(op: str, input: Tensor, diagonal: int, lower: bool) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor(op, input)
    if not isinstance(diagonal, numbers.Integral) or isinstance(diagonal, bool):
        raise TypeError(f"{op}: diagonal must be an int, got {type(diagonal).__name__}")
    if input.ndim < 2:
        raise ValueError(f"{op}: input must have at least 2 dimensions, got shape {tuple(input.shape)}")
    r, c = input.shape[-2:]
    # Past either corner every diagonal keeps the same elements: clamped,
    # so a diagonal beyond 2**63 selects as torch's does, not OverflowError.
    diagonal = min(max(int(diagonal), -r - 1), c + 1)
    keep = np.tri(r, c, diagonal, dtype=bool)
    if not lower:
        keep = ~np.tri(r, c, diagonal - 1, dtype=bool)
    return Triangle.apply(input, keep)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle (``j ≤ i + diagonal``) of the last two dims; 0 above."""
    return _triangle("tril", input, diagonal, True)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle (``j ≥ i + diagonal``) of the last two dims; 0 below."""
    return _triangle("triu", input, diagonal, False)


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import assign_result

    return assign_result(input, "tril_", lambda t: tril(t, diagonal))


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    from .inplace import assign_result

    return assign_result(input, "triu_", lambda t: triu(t, diagonal))


__all__ = [
    "clamp", "clamp_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clip", "clip_", "masked_fill", "masked_fill_",
    "maximum", "minimum", "tril", "tril_", "triu", "triu_", "where",
]
