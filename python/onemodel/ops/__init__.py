"""The differentiable operators, grouped by family, and the Tensor methods
and Python operators that call them."""

from __future__ import annotations

from ..tensor import Tensor
from . import arith, linalg, pointwise, reduce, shape_ops, softmax, views

_METHODS = {
    # arithmetic
    "add": arith.add,
    "sub": arith.sub,
    "mul": arith.mul,
    "div": arith.div,
    "neg": arith.neg,
    "relu": arith.relu,
    "add_": arith.add_,
    "sub_": arith.sub_,
    "mul_": arith.mul_,
    "div_": arith.div_,
    "neg_": arith.neg_,
    "relu_": arith.relu_,
    "zero_": arith.zero_,
    "fill_": arith.fill_,
    "copy_": arith.copy_,
    # transcendentals and selections
    "exp": pointwise.exp,
    "log": pointwise.log,
    "sigmoid": pointwise.sigmoid,
    "tanh": pointwise.tanh,
    "erf": pointwise.erf,
    "sqrt": pointwise.sqrt,
    "square": pointwise.square,
    "abs": pointwise.abs,
    "pow": pointwise.pow,
    "clamp": pointwise.clamp,
    "clip": pointwise.clip,
    "maximum": pointwise.maximum,
    "minimum": pointwise.minimum,
    # reductions
    "sum": reduce.sum,
    "mean": reduce.mean,
    # products
    "matmul": linalg.matmul,
    "mm": linalg.mm,
    "bmm": linalg.bmm,
    # views
    "reshape": views.reshape,
    "view": views.view,
    "permute": views.permute,
    "transpose": views.transpose,
    "t": views.t,
    "expand": views.expand,
    "broadcast_to": views.broadcast_to,
    "unsqueeze": views.unsqueeze,
    "squeeze": views.squeeze,
    "flatten": views.flatten,
    "contiguous": views.contiguous,
    # shape operators and softmax
    "split": shape_ops.split,
    "chunk": shape_ops.chunk,
    "softmax": softmax.softmax,
    "log_softmax": softmax.log_softmax,
}


def _install() -> None:
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)

    def clone(self):
        # A differentiable copy (gradient passes through unchanged).
        return views.Contiguous.apply(self) if self.dtype.is_floating_point else arith.clone_contiguous(self)

    def expand_as(self, other):
        return views.expand(self, other.shape)

    def reshape_as(self, other):
        return views.reshape(self, other.shape)

    def view_as(self, other):
        return views.view(self, other.shape)

    def to(self, dtype=None, copy: bool = False):
        from ..creation import tensor as make_tensor
        from ..tensor import as_dtype

        if dtype is None or isinstance(dtype, str) and dtype == "cpu":
            return self
        dt = as_dtype(dtype, "to")
        if dt is self.dtype and not copy:
            return self
        return make_tensor(self.numpy(force=True), dtype=dt)

    def float(self):
        return to(self, "float32")

    def long(self):
        return to(self, "int64")

    def cpu(self):
        return self

    def where(self, condition, other):
        return pointwise.where(condition, self, other)

    Tensor.where = where
    Tensor.__abs__ = lambda a: pointwise.abs(a)
    Tensor.__pow__ = lambda a, p: pointwise.pow(a, p)
    Tensor.clone = clone
    Tensor.expand_as = expand_as
    Tensor.reshape_as = reshape_as
    Tensor.view_as = view_as
    Tensor.to = to
    Tensor.float = float
    Tensor.long = long
    Tensor.cpu = cpu
    Tensor.T = property(lambda self: views.permute(self, *reversed(range(self.ndim))))
    Tensor.mT = property(lambda self: views.transpose(self, -2, -1))
    Tensor.__getitem__ = views.getitem
    Tensor.__setitem__ = views.setitem

    Tensor.__add__ = lambda a, b: arith.add(a, b)
    Tensor.__radd__ = lambda a, b: arith.add(b, a)
    Tensor.__sub__ = lambda a, b: arith.sub(a, b)
    Tensor.__rsub__ = lambda a, b: arith.sub(b, a)
    Tensor.__mul__ = lambda a, b: arith.mul(a, b)
    Tensor.__rmul__ = lambda a, b: arith.mul(b, a)
    Tensor.__truediv__ = lambda a, b: arith.div(a, b)
    Tensor.__rtruediv__ = lambda a, b: arith.div(b, a)
    Tensor.__neg__ = lambda a: arith.neg(a)
    Tensor.__pos__ = lambda a: a
    Tensor.__matmul__ = lambda a, b: linalg.matmul(a, b)
    Tensor.__rmatmul__ = lambda a, b: linalg.matmul(b, a)
    Tensor.__iadd__ = lambda a, b: arith.add_(a, b)
    Tensor.__isub__ = lambda a, b: arith.sub_(a, b)
    Tensor.__imul__ = lambda a, b: arith.mul_(a, b)
    Tensor.__itruediv__ = lambda a, b: arith.div_(a, b)


_install()
