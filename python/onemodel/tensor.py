"""The Tensor: a strided view (shape, strides, offset) over a Rust storage.

A tensor owns no memory itself: it references a ``_core.Storage`` (a pooled
64-byte-aligned buffer or a wrapped NumPy array). Views share the storage,
and with it the storage's version counter, which every in-place write bumps.
The autograd state is the ``requires_grad`` flag of a leaf, or the record
(``grad_fn``) of the operation that produced a non-leaf tensor.

This module holds the data model; the methods that run operators are
declared by family in the mixins of ``onemodel._methods`` (which call
``onemodel.ops``).
"""

from __future__ import annotations

import builtins
from typing import Any, Iterator

import numpy as np

from . import _core, _shape, scope
from ._device import CPU as _CPU, device
from ._methods import (
    ArithmeticMethods,
    ComparisonMethods,
    ConversionMethods,
    CreationMethods,
    MathMethods,
    ReductionMethods,
    SelectionMethods,
    ShapeMethods,
    SurfaceMethods,
)
from .grad_mode import is_grad_enabled


class dtype:
    """A tensor element type (``onemodel.float32``, ``onemodel.int64``,
    ``onemodel.bool``)."""

    __slots__ = ("name", "itemsize", "numpy", "is_floating_point")

    def __init__(self, name: str, itemsize: int, np_dtype, is_floating_point: bool):
        self.name = name
        self.itemsize = itemsize
        self.numpy = np.dtype(np_dtype)
        self.is_floating_point = is_floating_point

    def __repr__(self) -> str:
        return f"onemodel.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


float32 = dtype("float32", 4, np.float32, True)
int64 = dtype("int64", 8, np.int64, False)
# `onemodel.bool` (torch.bool); named bool_ here, where `bool` would shadow
# the builtin; the package's __init__ binds the public name.
bool_ = dtype("bool", 1, np.bool_, False)
float = float32  # torch's alias
long = int64
_DTYPES = {"float32": float32, "int64": int64, "bool": bool_}

# The dtypes torch programs name but onemodel does not compute in. They exist
# so that a program can name and compare them (`x.dtype == torch.float16`,
# `torch.set_default_dtype(torch.float32)`); making a tensor of one is a
# TypeError naming it (as_dtype below), never a silent float32.
float16 = dtype("float16", 2, np.float16, True)
bfloat16 = dtype("bfloat16", 2, np.uint16, True)  # NumPy has no bfloat16; never used to hold data
float64 = dtype("float64", 8, np.float64, True)
int32 = dtype("int32", 4, np.int32, False)
int16 = dtype("int16", 2, np.int16, False)
int8 = dtype("int8", 1, np.int8, False)
uint8 = dtype("uint8", 1, np.uint8, False)
complex64 = dtype("complex64", 8, np.complex64, False)
complex128 = dtype("complex128", 16, np.complex128, False)
half = float16
double = float64
short = int16
cfloat = complex64
cdouble = complex128
# `onemodel.int` is int32, as `torch.int`; it is set in the package's
# __init__, since a module-level `int` here would shadow the builtin.
_UNSUPPORTED = {d.name: d for d in (float16, bfloat16, float64, int32, int16, int8, uint8, complex64, complex128)}


def _dtype_by_name(name: str) -> dtype:
    return _DTYPES.get(name) or _UNSUPPORTED[name]


def as_dtype(value, op: str = "tensor") -> dtype:
    """Accept onemodel dtypes, their names, NumPy dtypes and Python types.

    A dtype onemodel does not compute in (float16, float64, int32, ...) is a
    TypeError naming it and the op."""
    if value is None:
        return value
    if isinstance(value, dtype):
        if value.name in _UNSUPPORTED:
            raise TypeError(
                f"{op}: onemodel does not compute in {value.name}; its tensors are "
                f"{' or '.join(_DTYPES)} (use .float() or .long())"
            )
        return value
    if value is builtins.float:
        return float32
    if value is builtins.int:
        return int64
    if value is builtins.bool:
        return bool_
    try:
        name = np.dtype(value).name
    except TypeError:
        name = str(value)
    if name in _DTYPES:
        return _DTYPES[name]
    if name in _UNSUPPORTED:
        return as_dtype(_UNSUPPORTED[name], op)
    raise TypeError(f"{op}: unsupported dtype {value!r}; onemodel tensors are {' or '.join(_DTYPES)}")


def _new_storage(numel: int, dt: dtype, zeroed: bool = False):
    storage = _core.Storage.empty(dt.name, numel, zeroed)
    if scope._open:
        scope.register(storage)
    return storage


class Tensor(
    ArithmeticMethods,
    ComparisonMethods,
    MathMethods,
    SelectionMethods,
    ReductionMethods,
    ShapeMethods,
    ConversionMethods,
    CreationMethods,
    SurfaceMethods,
):
    """A float32, int64 or bool n-dimensional array with reverse-mode autograd.

    The data model (storage, layout, autograd state, Python conversions) is
    here; the operator methods come from the mixins in ``onemodel._methods``.
    """

    __slots__ = (
        "_storage",
        "_shape",
        "_strides",
        "_offset",
        "_dtype",
        "_requires_grad",
        "_grad",
        "_record",
        # A view made by an operator: the tensor whose memory it shows (the
        # root of a chain of views) and that tensor's record when the view
        # was made (ops/inplace.py: in-place writes through views).
        "_base",
        "_base_record",
        "__weakref__",
    )

    # -- construction ---------------------------------------------------------
    @classmethod
    def _make(cls, storage, shape, strides, offset, dt) -> "Tensor":
        return _new_tensor(
            cls,
            storage,
            shape if type(shape) is tuple else tuple(shape),
            strides if type(strides) is tuple else tuple(strides),
            offset,
            dt,
        )

    @classmethod
    def _empty(cls, shape, dt: dtype = float32, zeroed: bool = False) -> "Tensor":
        """A new contiguous tensor on a fresh pooled buffer (an op output)."""
        shape = shape if type(shape) is tuple else tuple(shape)
        n, strides = _shape.contiguous_layout(shape)
        if shape and strides[0] * max(shape[0], 1) * dt.itemsize > _shape.MAX_SIZE:
            # Never wraps in Rust (creation and geometry name their op first).
            _shape.checked_numel("empty", shape, dt.itemsize)
        return _new_tensor(cls, _new_storage(n, dt, zeroed), shape, strides, 0, dt)

    def _view(self, shape, strides, offset=None) -> "Tensor":
        """Another view of the same storage (no autograd; the ops record it)."""
        return _new_tensor(
            Tensor,
            self._storage,
            shape if type(shape) is tuple else tuple(shape),
            strides if type(strides) is tuple else tuple(strides),
            self._offset if offset is None else offset,
            self._dtype,
        )

    def __new__(cls, *args, **kwargs) -> "Tensor":
        """torch's legacy constructor: ``Tensor()`` (empty), ``Tensor(2, 3)``
        or ``Tensor(Size)`` (float32, uninitialised: here zeros), ``Tensor(data)``
        (a float32 copy of a list or array), ``Tensor(t)`` (t itself, float32)."""
        from ._legacy import make_typed

        if kwargs.pop("device", None) not in (None, "cpu") or kwargs:
            raise TypeError(f"Tensor(): unexpected arguments {sorted(kwargs)}; use onemodel.tensor(data, dtype=...)")
        return make_typed(float32, args)

    def __init__(self, *args, **kwargs) -> None:
        pass

    # -- metadata ---------------------------------------------------------------
    @property
    def shape(self) -> "_shape.Size":
        return tuple.__new__(_shape.Size, self._shape)  # (already ints: no conversion)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return tuple.__new__(_shape.Size, self._shape)
        return self._shape[_shape.norm_dim("size", dim, self.ndim)]

    def stride(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._strides
        return self._strides[_shape.norm_dim("stride", dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._offset

    @property
    def dtype(self) -> dtype:
        return self._dtype

    @property
    def device(self) -> "device":
        return _CPU

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def is_cpu(self) -> bool:
        return True

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        return _shape.numel(self._shape)

    def element_size(self) -> int:
        return self._dtype.itemsize

    def is_contiguous(self) -> bool:
        return _shape.is_contiguous(self._shape, self._strides)

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def data_ptr(self) -> int:
        return self._storage.data_ptr + self._offset * self._dtype.itemsize

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    # -- autograd state ----------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self._record is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        if self._record is not None:
            if not requires_grad:
                raise RuntimeError(
                    "requires_grad_: you can only change requires_grad flags of leaf tensors; use detach() for a non-leaf"
                )
            return self
        if requires_grad and not self._dtype.is_floating_point:
            raise TypeError(f"requires_grad_: only float32 tensors can require gradients, this one is {self._dtype.name}")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._record is None

    @property
    def grad_fn(self) -> Any:
        return self._record

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
            if value.shape != self._shape:
                raise ValueError(f"grad: assigned gradient of shape {value.shape} to a tensor of shape {self._shape}")
        self._grad = value

    def detach(self) -> "Tensor":
        """The same data (shared storage) without autograd history."""
        return self._view(self._shape, self._strides)

    @property
    def data(self) -> "Tensor":
        """A detached alias of the same memory (torch's ``.data``). Unlike
        torch's, it shares the storage's version counter (onemodel keeps
        the counter in the storage), so writing through ``.data`` a tensor
        that a recorded graph saved makes that graph's backward raise
        TensorVersionError instead of computing with the new values."""
        return self._view(self._shape, self._strides)

    @data.setter
    def data(self, value: "Tensor") -> None:
        # As torch: the tensor now shows `value`'s memory, shape and dtype,
        # keeping its own autograd identity (leaf flag, grad, record).
        if not isinstance(value, Tensor):
            raise TypeError(f"data: expected a Tensor, got {type(value).__name__}")
        if self.requires_grad and not value._dtype.is_floating_point:
            raise TypeError(f"data: a tensor that requires grad cannot hold {value._dtype.name} data")
        self._storage, self._shape, self._strides = value._storage, value._shape, value._strides
        self._offset, self._dtype = value._offset, value._dtype

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` at the next
        backward (a leaf keeps it anyway)."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: can't retain_grad on a tensor that has requires_grad=False")
        if self._record is not None:
            import weakref

            self._record.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        r = getattr(self._record, "retained", None) if self._record is not None else None
        return r is not None and r() is self

    def detach_(self) -> "Tensor":
        self._record = None
        self._requires_grad = False
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
        """torch's signature; ``inputs`` accumulates into those tensors'
        ``.grad`` only (through autograd.grad); ``create_graph`` is refused
        (no higher-order gradients)."""
        if create_graph:
            raise NotImplementedError("backward: create_graph=True is not supported (onemodel has no higher-order gradients)")
        if inputs is not None:
            from .autograd.inputs_backward import backward_into

            return backward_into(self, gradient, bool(retain_graph), inputs)
        from .autograd.engine import backward

        backward(self, gradient, bool(retain_graph))

    # -- NumPy interop and Python values ------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """A NumPy view of this tensor's memory (no copy). Writes through the
        view are visible to the tensor but are not version-tracked."""
        if self.requires_grad and not force:
            raise RuntimeError("numpy: can't call numpy() on a tensor that requires grad; use tensor.detach().numpy()")
        return self._storage.numpy(list(self._shape), list(self._strides), self._offset)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self._storage.numpy(list(self._shape), list(self._strides), self._offset)
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        return np.array(a, copy=True) if copy else a

    def item(self) -> Any:
        """The one element as a Python float, int or bool."""
        if self.numel() != 1:
            raise ValueError(f"item: a tensor with {self.numel()} elements cannot be converted to a Python scalar")
        return self.numpy(force=True).reshape(()).item()

    def tolist(self) -> Any:
        """Nested lists of Python floats, ints or bools (a number for a 0-d tensor)."""
        return self.numpy(force=True).tolist()

    def __float__(self) -> float:
        return builtins.float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"bool: a tensor with {self.numel()} elements is ambiguous")
        return bool(self.item())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only one-element int64 or bool tensors can be used as an index")
        return int(self.item())

    def __format__(self, format_spec: str) -> str:
        # As torch: a 0-d tensor formats as its number (f"{loss:.4f}").
        if self.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __repr__(self) -> str:
        from ._tensor_str import add_suffixes, tensor_body

        prefix = "tensor("
        try:
            body = tensor_body(self.numpy(force=True), self._dtype is float32, len(prefix))
        except RuntimeError as e:  # released storage
            return f"tensor(<{e}>)"
        extra = []
        if self.numel() == 0 and self.dim() != 1:
            extra.append(f"size={tuple(self._shape)}")
        # As torch: the dtype is shown when the values do not imply it.
        if self._dtype not in (float32, int64, bool_) or (self.numel() == 0 and self._dtype is not float32):
            extra.append(f"dtype={self._dtype!r}")
        if self._record is not None:
            extra.append(f"grad_fn=<{self._record.name}>")
        elif self._requires_grad:
            extra.append("requires_grad=True")
        return prefix + add_suffixes(body, extra, len(prefix))

    def __iter__(self) -> Iterator[Tensor]:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        for i in range(self._shape[0]):
            yield self[i]

    def __hash__(self) -> int:
        return id(self)

    # -- pickling and copying (DataLoader workers, copy.deepcopy) -------------------
    def __reduce_ex__(self, proto):
        # The value only: a copy of the data, the dtype and a leaf's
        # requires_grad flag (autograd history is not part of a value).
        data = np.array(self._storage.numpy(list(self._shape), list(self._strides), self._offset), copy=True)
        return (_rebuild_tensor, (data, self._dtype.name, self._requires_grad))

    def __deepcopy__(self, memo):
        if self._record is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol; "
                "detach() it first"
            )
        if id(self) in memo:
            return memo[id(self)]
        fn, args = self.__reduce_ex__(2)
        out = fn(*args)
        memo[id(self)] = out
        return out

    # -- in-place helpers -----------------------------------------------------------
    def _check_inplace(self, op: str) -> None:
        """The guard of the raw in-place kernels (ops/arith.py): while
        recording they may not write a tensor that requires grad. The Tensor
        methods route such writes through ops/inplace.py, which rebases the
        history instead (or refuses a leaf, as torch)."""
        if is_grad_enabled() and self.requires_grad:
            what = "a leaf tensor that requires grad" if self.is_leaf else "a tensor that is part of a recorded graph"
            raise RuntimeError(
                f"{op}: the raw in-place kernel cannot write {what} while recording; call the Tensor method "
                "(which records the write), wrap parameter updates in onemodel.no_grad(), or use the out-of-place operation"
            )
        if self._storage.readonly:
            raise ValueError(f"{op}: the tensor wraps a read-only NumPy array and cannot be written")

    def _bump(self) -> None:
        self._storage.bump_version()

    @property
    def _version(self) -> int:
        return self._storage.version


def _new_tensor(cls, storage, shape: tuple, strides: tuple, offset: int, dt: dtype) -> Tensor:
    """A tensor object over `storage` with no autograd state (every
    constructor ends here: on the path of every op output and view)."""
    t = _new_object(cls)
    t._storage = storage
    t._shape = shape
    t._strides = strides
    t._offset = offset
    t._dtype = dt
    t._requires_grad = False
    t._grad = None
    t._record = None
    t._base = None
    t._base_record = None
    return t


_new_object = object.__new__


def from_core(result: tuple) -> Tensor:
    """The float32 Tensor of a ``_core.*_new`` result (a fresh storage, its
    shape and contiguous strides as tuples), tied to the open
    ActivationScope like every op output."""
    storage, shape, strides = result
    if scope._open:
        scope.register(storage)
    return _new_tensor(Tensor, storage, shape, strides, 0, float32)


def _rebuild_tensor(data: np.ndarray, dtype_name: str, requires_grad: bool) -> Tensor:
    """Unpickle a tensor: wrap the unpickled array (it is a private copy)."""
    storage, shape, strides = _core.Storage.from_numpy(np.require(data, requirements="C"))
    t = Tensor._make(storage, shape, strides, 0, _dtype_by_name(dtype_name))
    if requires_grad:
        t.requires_grad_(True)
    return t


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)
