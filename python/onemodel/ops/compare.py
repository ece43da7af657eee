"""Comparisons, logical and bitwise operators, and the tests of special
values: ``eq ne lt le gt ge``, ``logical_and/or/xor/not``, ``bitwise_*``
(``& | ^ ~``), ``any``/``all``, ``isnan``/``isinf``/``isfinite``,
``isclose``/``allclose``/``equal``. Results are bool tensors (``bitwise_*``
of int64 operands are int64); none has a gradient.

Operands are tensors or Python numbers, broadcast as torch does, and
compared in their common dtype by torch's promotion (bool < int64 <
float32: an int64 tensor against a float is compared in float32, as torch
rounds it). NaN compares as IEEE says (unequal to everything, itself
included), as in torch.

The work is NumPy's comparison and logical ufuncs on views of the tensors'
memory, written straight into the result's pooled buffer: comparisons and
logic are exact, so no order or rounding question arises.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _shape
from .._numpy_exact import ieee, ieee_method
from ..tensor import Tensor, bool_, float32, int64

_CATEGORY = {"bool": 0, "int64": 1, "float32": 2}
_BY_CATEGORY = (bool_, int64, float32)


def _is_number(x) -> bool:
    return isinstance(x, (numbers.Number, np.bool_)) and not isinstance(x, complex)


def _category(x) -> int:
    if isinstance(x, Tensor):
        return _CATEGORY[x.dtype.name]
    if isinstance(x, (bool, np.bool_)):
        return 0
    if isinstance(x, numbers.Integral):
        return 1
    return 2


def common_dtype(op: str, *operands):
    """torch's result dtype of tensors and Python numbers (bool < int64 <
    float32; with one dtype per category it is the highest category)."""
    for x in operands:
        if not isinstance(x, Tensor) and not _is_number(x):
            raise TypeError(f"{op}: unsupported operand of type {type(x).__name__}")
    return _BY_CATEGORY[max(_category(x) for x in operands)]


def as_array(x, dt, op: str):
    """A NumPy view (tensor) or scalar (number) of `x` in dtype `dt`."""
    if isinstance(x, Tensor):
        a = x.numpy(force=True)
        return a if a.dtype == dt.numpy else a.astype(dt.numpy)
    try:
        with np.errstate(over="ignore"):
            return dt.numpy.type(x)
    except OverflowError:
        raise ValueError(f"{op}: the value {x!r} does not fit {dt.name}") from None


def _shape_of(x) -> tuple:
    return x.shape if isinstance(x, Tensor) else ()


def _binary(ufunc, op: str, a, b, operands, out_dtype=bool_) -> Tensor:
    """``ufunc(*operands(a, b))`` into a fresh tensor of the broadcast
    shape; at least one of a, b must be a Tensor."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: at least one operand must be a Tensor")
    shape = _shape.broadcast_shapes(op, _shape_of(a), _shape_of(b))
    x, y = operands(a, b)
    out = Tensor._empty(shape, out_dtype)
    with np.errstate(invalid="ignore"):
        ufunc(x, y, out=out.numpy(force=True))
    return out


def _elementwise(ufunc, op: str, a, b, compute=None, out_dtype=bool_) -> Tensor:
    """The ufunc over a and b in their common dtype (or `compute`)."""
    def operands(a, b):
        dt = compute or common_dtype(op, a, b)
        return as_array(a, dt, op), as_array(b, dt, op)

    return _binary(ufunc, op, a, b, operands, out_dtype)


# -- comparisons -------------------------------------------------------------------

def eq(input, other) -> Tensor:
    return _elementwise(np.equal, "eq", input, other)


def ne(input, other) -> Tensor:
    return _elementwise(np.not_equal, "ne", input, other)


def lt(input, other) -> Tensor:
    return _elementwise(np.less, "lt", input, other)


def le(input, other) -> Tensor:
    return _elementwise(np.less_equal, "le", input, other)


def gt(input, other) -> Tensor:
    return _elementwise(np.greater, "gt", input, other)


def ge(input, other) -> Tensor:
    return _elementwise(np.greater_equal, "ge", input, other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and the same values (NaN ≠ NaN)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("equal: expected two Tensors")
    if input.shape != other.shape:
        return False
    return bool(np.array_equal(input.numpy(force=True), other.numpy(force=True)))


@ieee_method
def isclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """torch's ``|a − b| ≤ atol + rtol·|b|`` in the operands' common dtype
    (float32 arithmetic for float tensors), equal values (infinities
    included) always close, NaN close to NaN only with ``equal_nan``."""
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol ({rtol}) and atol ({atol}) must be non-negative")
    dt = common_dtype("isclose", input, other)
    a, b = as_array(input, dt, "isclose"), as_array(other, dt, "isclose")
    shape = _shape.broadcast_shapes("isclose", _shape_of(input), _shape_of(other))
    out = Tensor._empty(shape, bool_)
    o = out.numpy(force=True)
    with ieee(), np.errstate(invalid="ignore", over="ignore"):
        if dt is bool_:
            np.equal(a, b, out=o)
        else:
            if dt is int64:
                a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
            # torch's rule: equal, or a finite error within atol + |rtol·b|.
            tol = np.float32(atol) + np.abs(np.float32(rtol) * b)
            err = np.abs(a - b)
            close = (np.isfinite(err) & (err <= tol)) | (a == b)
            if equal_nan:
                close |= np.isnan(a) & np.isnan(b)
            np.copyto(o, np.broadcast_to(close, shape))
    return out


def allclose(input: Tensor, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(isclose(input, other, rtol, atol, equal_nan).numpy().all())


# -- logic ---------------------------------------------------------------------------

def _truth(x, op: str):
    """`x` as NumPy bools (nonzero = True, NaN included), or a Python bool."""
    if isinstance(x, Tensor):
        a = x.numpy(force=True)
        return a if a.dtype == np.bool_ else a != 0
    if _is_number(x):
        return bool(x)
    raise TypeError(f"{op}: unsupported operand of type {type(x).__name__}")


def _logical(ufunc, op: str, a, b) -> Tensor:
    return _binary(ufunc, op, a, b, lambda a, b: (_truth(a, op), _truth(b, op)))


def logical_and(input, other) -> Tensor:
    return _logical(np.logical_and, "logical_and", input, other)


def logical_or(input, other) -> Tensor:
    return _logical(np.logical_or, "logical_or", input, other)


def logical_xor(input, other) -> Tensor:
    return _logical(np.logical_xor, "logical_xor", input, other)


def logical_not(input: Tensor) -> Tensor:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("logical_not", input)
    out = Tensor._empty(input.shape, bool_)
    np.logical_not(_truth(input, "logical_not"), out=out.numpy(force=True))
    return out


def _bitwise(ufunc, op: str, a, b) -> Tensor:
    dt = common_dtype(op, a, b)
    if dt is float32:
        raise TypeError(f"{op}: only bool and int64 operands are supported (float32 given); use logical_{op.split('_')[1]}")
    return _elementwise(ufunc, op, a, b, compute=dt, out_dtype=dt)


def bitwise_and(input, other) -> Tensor:
    return _bitwise(np.bitwise_and, "bitwise_and", input, other)


def bitwise_or(input, other) -> Tensor:
    return _bitwise(np.bitwise_or, "bitwise_or", input, other)


def bitwise_xor(input, other) -> Tensor:
    return _bitwise(np.bitwise_xor, "bitwise_xor", input, other)


def _shift_left(x, n, out):
    """torch's int64 ``x << n``: the bits shifted as unsigned (so the
    result wraps), 0 for a count below 0 or of 64 and more."""
    in_range = (n >= 0) & (n < 64)
    shifted = np.left_shift(np.asarray(x).astype(np.uint64), np.where(in_range, n, 0).astype(np.uint64))
    np.copyto(out, np.where(in_range, shifted.astype(np.int64), np.int64(0)))


def _shift_right(x, n, out):
    """torch's int64 ``x >> n``: arithmetic (the sign fills), and for a
    count below 0 or of 64 and more the sign alone (x >> 63)."""
    in_range = (n >= 0) & (n < 64)
    np.copyto(out, np.right_shift(x, np.where(in_range, n, 63)))


def _shift(fn, op: str, a, b) -> Tensor:
    if common_dtype(op, a, b) is float32:
        raise TypeError(f"{op}: only int64 (and bool) operands are supported, got float32")
    return _elementwise(fn, op, a, b, compute=int64, out_dtype=int64)


def bitwise_left_shift(input, other) -> Tensor:
    """``<<`` on int64 (bool operands read as 0/1): torch's wrap-around
    and out-of-range counts (0)."""
    return _shift(_shift_left, "bitwise_left_shift", input, other)


def bitwise_right_shift(input, other) -> Tensor:
    """``>>`` on int64: arithmetic, out-of-range counts give the sign."""
    return _shift(_shift_right, "bitwise_right_shift", input, other)


def bitwise_not(input: Tensor) -> Tensor:
    """``~``: logical not of a bool tensor, bitwise not of an int64 one."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("bitwise_not", input)
    if input.dtype is float32:
        raise TypeError("bitwise_not (~): only bool and int64 tensors are supported, got float32; use logical_not")
    out = Tensor._empty(input.shape, input.dtype)
    np.invert(input.numpy(force=True), out=out.numpy(force=True))
    return out


def _inplace_logic(fn, op: str, self: Tensor, other) -> Tensor:
    r = fn(self, other)
    if r.shape != self.shape or r.dtype is not self.dtype:
        raise ValueError(f"{op}: the result ({r.dtype.name}, shape {r.shape}) does not fit the tensor ({self.dtype.name}, shape {self.shape})")
    from .arith import copy_

    return copy_(self, r)


def logical_and_(self, other):
    return _inplace_logic(logical_and, "logical_and_", self, other)


def logical_or_(self, other):
    return _inplace_logic(logical_or, "logical_or_", self, other)


def bitwise_and_(self, other):
    return _inplace_logic(bitwise_and, "bitwise_and_", self, other)


def bitwise_or_(self, other):
    return _inplace_logic(bitwise_or, "bitwise_or_", self, other)


def bitwise_xor_(self, other):
    return _inplace_logic(bitwise_xor, "bitwise_xor_", self, other)


def bitwise_left_shift_(self, other):
    return _inplace_logic(bitwise_left_shift, "bitwise_left_shift_", self, other)


def bitwise_right_shift_(self, other):
    return _inplace_logic(bitwise_right_shift, "bitwise_right_shift_", self, other)


# -- reductions of truth values -----------------------------------------------------

def _any_all(fn, op: str, input: Tensor, dim, keepdim: bool) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    dims = _shape.norm_dims(op, dim, input.ndim)
    kept = tuple(1 if d in dims else n for d, n in enumerate(input.shape)) if keepdim else tuple(
        n for d, n in enumerate(input.shape) if d not in dims
    )
    out = Tensor._empty(kept, bool_)
    res = fn(_truth(input, op), axis=dims, keepdims=bool(keepdim))
    out.numpy(force=True)[...] = res
    return out


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001 - torch's name
    """True where some element (over ``dim``, all dims by default) is nonzero."""
    return _any_all(np.any, "any", input, dim, keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001 - torch's name
    """True where every element (over ``dim``, all dims by default) is nonzero."""
    return _any_all(np.all, "all", input, dim, keepdim)


# -- special values ------------------------------------------------------------------

def _test(fn, op: str, input: Tensor, if_not_float: bool) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(input).__name__}")
    out = Tensor._empty(input.shape, bool_)
    o = out.numpy(force=True)
    if input.dtype is float32:
        fn(input.numpy(force=True), out=o)
    else:
        o[...] = if_not_float
    return out


def isnan(input: Tensor) -> Tensor:
    return _test(np.isnan, "isnan", input, False)


def isinf(input: Tensor) -> Tensor:
    return _test(np.isinf, "isinf", input, False)


def isfinite(input: Tensor) -> Tensor:
    return _test(np.isfinite, "isfinite", input, True)


def isposinf(input: Tensor) -> Tensor:
    return _test(np.isposinf, "isposinf", input, False)


def isneginf(input: Tensor) -> Tensor:
    return _test(np.isneginf, "isneginf", input, False)


def signbit(input: Tensor) -> Tensor:
    """True where the sign bit is set (−0.0 and negative NaNs included)."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("signbit", input)
    if input.dtype is bool_:
        return _test(None, "signbit", input, False)
    out = Tensor._empty(input.shape, bool_)
    np.signbit(input.numpy(force=True), out=out.numpy(force=True))
    return out
