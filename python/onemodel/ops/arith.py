"""Element-wise arithmetic with broadcasting: add, sub, mul, div, neg, relu,
and their in-place forms.

Broadcast operands are passed to the kernel as stride-0 views (no copy); the
backward of a broadcast input is the broadcast-undoing sum (``sum_to``),
accumulated in double in increasing element order and rounded once. The
kernel helpers themselves live in ``onemodel._kernels``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _core, _shape
from .._kernels import (  # noqa: F401  (kernel helpers, re-exported for the operators importing them from here)
    add_into,
    add_new,
    binary_kernel,
    clone_contiguous,
    expand_to,
    fill_inplace,
    ones_like_contiguous,
    sum_kernel,
    sum_to,
    unary_kernel,
)
from ..autograd.function import Function, is_fresh
from ..grad_mode import _state as _grad_state
from ..tensor import Tensor, float32, from_core

_binary_new = _core.binary_new
_unary_new = _core.unary_new


# ---------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------

def as_tensor_operand(x, op: str) -> Tensor:
    """A Tensor operand, or a Python number as a 0-d float32 tensor."""
    if isinstance(x, Tensor):
        if x.dtype is not float32:
            raise TypeError(f"{op}: expected float32 tensors, got {x.dtype.name}")
        return x
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        t = Tensor._empty((), float32)
        _core.fill_(t, float(x))
        return t
    raise TypeError(f"{op}: unsupported operand of type {type(x).__name__}")


# ---------------------------------------------------------------------------
# Differentiable operators
# ---------------------------------------------------------------------------

class Add(Function):
    kernel, saves = "add", False

    def forward(self, a, b):
        return binary_kernel("add", a, b)

    def backward(self, g):
        (sa, _), (sb, _) = self.input_meta
        return (sum_to(g, sa) if self.needs_input_grad[0] else None, sum_to(g, sb) if self.needs_input_grad[1] else None)


class Sub(Function):
    kernel, saves = "sub", False

    def forward(self, a, b):
        return binary_kernel("sub", a, b)

    def backward(self, g):
        (sa, _), (sb, _) = self.input_meta
        ga = sum_to(g, sa) if self.needs_input_grad[0] else None
        gb = sum_to(unary_kernel("neg", g), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Mul(Function):
    kernel, saves = "mul", True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return binary_kernel("mul", a, b)

    def backward(self, g):
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        ga = sum_to(binary_kernel("mul", g, b), sa) if self.needs_input_grad[0] else None
        gb = sum_to(binary_kernel("mul", g, a), sb) if self.needs_input_grad[1] else None
        return ga, gb


class Div(Function):
    kernel, saves = "div", True

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return binary_kernel("div", a, b)

    def backward(self, g):
        # torch's rules: da = g / b, db = -g * a / (b * b).
        a, b = self.saved_tensors
        (sa, _), (sb, _) = self.input_meta
        ga = sum_to(binary_kernel("div", g, b), sa) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            num = binary_kernel("mul", unary_kernel("neg", g), a)
            gb = sum_to(binary_kernel("div", num, binary_kernel("mul", b, b)), sb)
        return ga, gb


class Neg(Function):
    kernel, saves = "neg", False

    def forward(self, a):
        return unary_kernel("neg", a)

    def backward(self, g):
        return unary_kernel("neg", g)


class Relu(Function):
    kernel, saves = "relu", True

    def forward(self, a):
        self.save_for_backward(a)
        return unary_kernel("relu", a)

    def backward(self, g):
        (a,) = self.saved_tensors
        return binary_kernel("relu_backward", g, a)


# ---------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------

def _binary(cls, name: str, a, b) -> Tensor:
    # The small-op path: one Rust call computes the output, and a record is
    # built directly when recording (what apply() would record). It covers
    # float32 tensors and Python numbers; anything else (and every error)
    # takes apply() below.
    # (The is_fresh check and the requires-grad test written out: this is the
    # path of every + - * /.)
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if (
        (ta or tb)
        and (not ta or a._base is None or a._base._record is a._base_record)
        and (not tb or b._base is None or b._base._record is b._base_record)
    ):
        if (
            (ta and (a._requires_grad or a._record is not None)) or (tb and (b._requires_grad or b._record is not None))
        ) and getattr(_grad_state, "enabled", True):
            # int64/bool operands take torch's promotion below.
            if (not ta or a._dtype is float32) and (not tb or b._dtype is float32):
                a, b = as_tensor_operand(a, name), as_tensor_operand(b, name)
                r = _binary_new(cls.kernel, a, b)
                if r is not None:
                    out = from_core(r)
                    cls.record_op(out, a, b, cls.saves)
                    return out
        else:
            r = _binary_new(cls.kernel, a, b)
            if r is not None:
                return from_core(r)
    if not ta and not tb:
        raise TypeError(f"{name}: at least one operand must be a Tensor")
    if any(isinstance(x, Tensor) and x.dtype is not float32 for x in (a, b)):
        from .division import promoted  # int64/bool operands: torch's promotion

        return promoted(name, cls, a, b)
    return cls.apply(as_tensor_operand(a, name), as_tensor_operand(b, name))


def _unary(cls, name: str, a) -> Tensor:
    if isinstance(a, Tensor) and is_fresh(a):
        r = _unary_new(cls.kernel, a)
        if r is not None:
            out = from_core(r)
            if (a._requires_grad or a._record is not None) and getattr(_grad_state, "enabled", True):
                cls.record_op(out, a, None, cls.saves)
            return out
    return cls.apply(as_tensor_operand(a, name))


def add(input, other, *, alpha=1) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Add, "add", input, other)


def sub(input, other, *, alpha=1) -> Tensor:
    if alpha != 1:
        other = mul(other, alpha)
    return _binary(Sub, "sub", input, other)


def mul(input, other) -> Tensor:
    return _binary(Mul, "mul", input, other)


def div(input, other, *, rounding_mode=None) -> Tensor:
    if rounding_mode is not None:
        from .division import divide

        return divide(input, other, rounding_mode=rounding_mode)
    return _binary(Div, "div", input, other)


def neg(input) -> Tensor:
    if isinstance(input, Tensor) and input.dtype is not float32:
        from .npwise import compute

        if input.dtype.name == "bool":
            raise RuntimeError("neg: negation, the `-` operator, on a bool tensor is not supported; use `~` or logical_not() instead")
        return compute("neg", np.negative, [input], input.dtype)
    return _unary(Neg, "neg", input)


def relu(input) -> Tensor:
    return _unary(Relu, "relu", input)


# -- in-place forms (no autograd: allowed outside recording only) -------------

def _inplace_binary(op: str, name: str, self: Tensor, other) -> Tensor:
    self._check_inplace(name)
    if self._dtype is not float32 or (isinstance(other, Tensor) and other.dtype is not float32):
        return _inplace_promoted(op, name, self, other)
    o = as_tensor_operand(other, name)
    shape = _shape.broadcast_shapes(name, self._shape, o._shape)
    if shape != self._shape:
        raise ValueError(f"{name}: the result of shape {shape} would not fit the tensor of shape {self._shape}")
    if self._dtype is not float32:
        raise TypeError(f"{name}: expected a float32 tensor, got {self._dtype.name}")
    # The version first: a KeyboardInterrupt is raised at the next Python
    # call after the kernel, so bumping after the write could leave a write
    # the version does not count (saved copies would not be seen as stale).
    self._bump()
    _core.binary(op, self, self, expand_to(o, shape, name))
    return self


def _inplace_promoted(op: str, name: str, self: Tensor, other) -> Tensor:
    """An in-place op on or with an int64/bool tensor: the promoted result
    must be of self's dtype (or float32 into float32), as torch requires."""
    r = {"add": add, "sub": sub, "mul": mul, "div": div}[op](self, other)
    if r.dtype is not self._dtype:
        raise RuntimeError(f"{name}: result type {r.dtype.name} can't be cast to the desired output type {self._dtype.name}")
    if tuple(r.shape) != tuple(self._shape):
        raise ValueError(f"{name}: the result of shape {tuple(r.shape)} would not fit the tensor of shape {self._shape}")
    self._bump()  # before the write, as _inplace_binary
    _core.copy_(self, r)
    return self


def add_(self, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    return _inplace_binary("add", "add_", self, other)


def sub_(self, other, *, alpha=1):
    if alpha != 1:
        other = mul(other, alpha)
    return _inplace_binary("sub", "sub_", self, other)


def mul_(self, other):
    return _inplace_binary("mul", "mul_", self, other)


def div_(self, other):
    return _inplace_binary("div", "div_", self, other)


def neg_(self):
    self._check_inplace("neg_")
    self._bump()  # before the write, as _inplace_binary
    _core.unary("neg", self, self)
    return self


def relu_(self):
    self._check_inplace("relu_")
    self._bump()  # before the write, as _inplace_binary
    _core.unary("relu", self, self)
    return self


def zero_(self):
    self._check_inplace("zero_")
    fill_inplace(self, 0)
    return self


def fill_(self, value):
    self._check_inplace("fill_")
    if isinstance(value, Tensor):
        value = value.item()
    fill_inplace(self, value)
    return self


def copy_(self, src):
    """Copy `src` (broadcast to this shape) into this tensor, in place."""
    self._check_inplace("copy_")
    if not isinstance(src, Tensor):
        from ..creation import tensor as make_tensor

        src = make_tensor(src, dtype=self._dtype)
    if src._dtype is not self._dtype:
        raise TypeError(f"copy_: dtypes differ ({src._dtype.name} into {self._dtype.name}); convert first")
    src_v = expand_to(src, self._shape, "copy_")
    if src._storage is self._storage:
        src_v = clone_contiguous(src_v)  # overlapping source: read it before writing
    self._bump()  # before the write, as _inplace_binary
    _core.copy_(self, src_v)
    return self
