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


def _parse_to_args(op: str, t, args, kwargs):
    """The dtype and copy flag of a ``Tensor.to``/``Module.to`` call, after
    checking its device; ``t`` is None for a module (no ``to(other)`` there)."""
    from .._device import as_device, is_device_like
    from ..tensor import as_dtype

    kwargs = dict(kwargs)
    unknown = set(kwargs) - {"device", "dtype", "non_blocking", "copy", "memory_format"}
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    args = list(args)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    if args and isinstance(args[0], Tensor):
        if t is None:
            raise TypeError(f"{op}: a module cannot be converted to a tensor's type; pass a device or a dtype")
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    elif args and is_device_like(args[0]) and not (isinstance(args[0], str) and args[0] in ("float32", "int64")):
        device = args.pop(0)
    if args and dtype is None and not isinstance(args[0], bool):
        dtype = args.pop(0)
    # What is left is torch's positional (non_blocking, copy).
    if len(args) > 2:
        raise TypeError(f"{op}() takes at most 4 positional arguments")
    if len(args) == 2:
        copy = bool(args[1])
    as_device(device, op)
    return as_dtype(dtype, op), copy


def _convert(t, dt):
    from ..creation import tensor as make_tensor

    return make_tensor(t.numpy(force=True), dtype=dt)


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

    def to(self, *args, **kwargs):
        """torch's three forms: ``to(dtype)``, ``to(device=None, dtype=None)``
        and ``to(other)`` (other's device and dtype), each with
        ``non_blocking=False`` (ignored: there is nothing to overlap) and
        ``copy=False``. The device is always the CPU (``"cuda"`` raises)."""
        dt, copy = _parse_to_args("to", self, args, kwargs)
        if (dt is None or dt is self.dtype) and not copy:
            return self
        return _convert(self, dt or self.dtype)

    def float(self):
        return to(self, "float32")

    def long(self):
        return to(self, "int64")

    def cpu(self, memory_format=None):
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
