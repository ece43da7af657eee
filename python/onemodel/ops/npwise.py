"""Element-wise operations that are exact, or one correctly rounded IEEE
binary32 operation per step, computed by NumPy ufuncs on views of the
tensors' memory: rounding to integers (floor, ceil, trunc, round half to
even), sign, copysign, fmod and the floor-division family, compares and
selects, and every int64/bool arithmetic operation.

Exact operations and single IEEE operations give the same bits on every
machine whatever loop NumPy picks, so there is no order question; the two
machine dependencies are removed as in ``onemodel._numpy_exact``: the
x86 flush-to-zero bits are cleared for the duration, and in exact mode a NaN
result is written as the quiet NaN 0x7FC00000.

Dtype promotion is torch's for the three dtypes onemodel has (bool < int64 <
float32, ops/compare.py): an int64 tensor with a Python float or a float32
tensor computes in float32 (the int64 values rounded to float32 first, as
torch casts its inputs); true division of integers computes in float32.
"""

from __future__ import annotations

import numpy as np

from .. import _core, _shape
from .._numpy_exact import canonical_nan, ieee
from ..tensor import Tensor, bool_, float32, int64
from .compare import as_array, common_dtype


def shape_of(x) -> tuple:
    return x._shape if isinstance(x, Tensor) else ()


def result_dtype(op: str, *operands: object, floating: bool = False) -> object:
    """torch's result dtype; with ``floating`` integers promote to float32
    (true division, the transcendentals)."""
    dt = common_dtype(op, *operands)
    return float32 if floating else dt


def compute(op: str, fn, operands, dt, out_dtype=None) -> Tensor:
    """A new tensor ``fn(*arrays)`` over the broadcast shape: each operand
    read as a NumPy array (tensor) or scalar (number) of dtype `dt`."""
    out_dtype = out_dtype or dt
    shape = _shape.broadcast_shapes(op, *(shape_of(x) for x in operands))
    out = Tensor._empty(shape, out_dtype)
    arrays = [as_array(x, dt, op) for x in operands]
    dst = out.numpy(force=True)
    with ieee(), np.errstate(all="ignore"):
        res = fn(*arrays)
        np.copyto(dst, res, casting="unsafe")
    if out_dtype is float32 and _core.get_mode() == "exact":
        canonical_nan(dst)
    return out


def f32(v) -> np.float32:
    """A Python number as the binary32 torch would compute with (the
    scalar cast to the tensor's dtype)."""
    return np.float32(v)


def check_int_divisor(op: str, b, dt) -> None:
    """torch refuses integer division by zero (RuntimeError)."""
    if dt is float32:
        return
    zero = (b == 0) if not isinstance(b, Tensor) else bool(np.any(b.numpy(force=True) == 0))
    if zero:
        raise RuntimeError(f"{op}: ZeroDivisionError (integer division by zero)")


def is_float_tensor(x) -> bool:
    return isinstance(x, Tensor) and x._dtype is float32


def floating_operand(x: object, op: str) -> object:
    """A float32 tensor for `x` (int64/bool tensors converted, as torch's
    promotion casts them) or a Python float."""
    if isinstance(x, Tensor):
        if x._dtype is float32:
            return x
        from .convert import convert

        return convert(x, float32)
    if isinstance(x, (bool, np.bool_)):
        return float(x)
    return x


def all_integral(*operands) -> bool:
    """No float operand: the operation runs on int64 (or bool)."""
    return common_dtype("", *operands) in (int64, bool_)


# -- the float rounding primitives, shared by several operators ------------------

def floor_divide_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch's floor division of floats (div_floor_floating): from fmod, so
    that a − b·q is exact; ties of the quotient handled as Python does."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    mod = np.fmod(a, b)
    div = (a - mod) / b
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    div = np.where(fix, div - np.float32(1), div)
    fl = np.floor(div)
    fl = np.where(div - fl > np.float32(0.5), fl + np.float32(1), fl)
    zero = np.copysign(np.float32(0), a / b)
    res = np.where(div != 0, fl, zero)
    return np.where(b == 0, a / b, res)


def remainder_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch's float remainder: fmod, moved by b when its sign differs from
    b's (a zero keeps fmod's sign, as torch)."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    mod = np.fmod(a, b)
    fix = (mod != 0) & ((b < 0) != (mod < 0))
    return np.where(fix, mod + b, mod)


def trunc_divide_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.trunc(np.asarray(a, np.float32) / np.asarray(b, np.float32))
