"""Shape arithmetic shared by the operators: broadcasting, dimension
normalisation and the stride rules of views. Pure Python, no tensors."""

from __future__ import annotations

from typing import Iterable, Sequence


class Size(tuple):
    """A tensor's shape (``torch.Size``): a tuple of ints with ``numel()``;
    slices and sums stay Sizes. ``repr`` is torch's form
    (``onemodel.Size([2, 3])``), ``str`` the tuple's (``(2, 3)``)."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        return super().__new__(cls, [int(s) for s in sizes])

    def numel(self) -> int:
        return numel(self)

    def __getitem__(self, index):
        r = tuple.__getitem__(self, index)
        return tuple.__new__(Size, r) if isinstance(index, slice) else r  # (already ints)

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __radd__(self, other):
        return Size(tuple(other) + tuple(self))

    def __repr__(self) -> str:
        return f"onemodel.Size({list(self)})"

    # str() (and so f-strings and error messages) keeps the tuple's form.
    __str__ = tuple.__repr__

    def __reduce__(self):
        return (Size, (tuple(self),))


def contiguous_strides(shape: Sequence[int]) -> tuple:
    strides = [0] * len(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):
        strides[d] = acc
        acc *= max(shape[d], 1)
    return tuple(strides)


_LAYOUTS: dict = {}


def contiguous_layout(shape: tuple) -> tuple:
    """(numel, contiguous strides) of a shape tuple, remembered: op outputs
    repeat a few shapes, and this is on the path of every small op."""
    r = _LAYOUTS.get(shape)
    if r is None:
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        r = _LAYOUTS[shape] = (numel(shape), contiguous_strides(shape))
    return r


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    if 0 in shape:  # no element to read: any strides (torch's rule)
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def numel(shape: Iterable[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


#: The most bytes (and so elements) a tensor may span: ``isize::MAX``, the
#: largest size the Rust core can allocate or index. Python's ints never
#: wrap, so a size past it is refused here, by name, before it reaches Rust.
MAX_SIZE = 2**63 - 1


def checked_numel(op: str, shape: Sequence[int], itemsize: int = 1) -> int:
    """The element count of ``shape``, or ``ValueError`` naming ``op`` and
    the shape when its elements (of ``itemsize`` bytes) exceed
    :data:`MAX_SIZE` bytes."""
    n = numel(shape)
    if n * itemsize > MAX_SIZE:
        raise ValueError(
            f"{op}: shape {tuple(shape)} has {n} elements ({n * itemsize} bytes), "
            f"more than the largest possible tensor (2**63 - 1 bytes)"
        )
    # The contiguous strides (sizes of 0 count as 1) must be sizes too, even
    # when a zero dimension leaves no element.
    if numel(max(s, 1) for s in shape) * itemsize > MAX_SIZE:
        raise ValueError(f"{op}: the strides of shape {tuple(shape)} overflow (more than 2**63 - 1 bytes)")
    return n


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple:
    """torch.broadcast_shapes, with an error naming the op and the shapes."""
    if len(shapes) == 2 and shapes[0] == shapes[1]:
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            d = ndim - len(s) + i
            if out[d] == 1:
                out[d] = n
            elif n != 1 and n != out[d]:
                shown = " and ".join(str(tuple(x)) for x in shapes)
                raise ValueError(f"{op}: shapes {shown} cannot be broadcast together (dimension {d - ndim}: {out[d]} vs {n})")
    return tuple(out)


def expand_strides(op: str, shape: Sequence[int], strides: Sequence[int], target: Sequence[int]) -> tuple:
    """Strides that view a tensor of `shape` as `target` (stride 0 where it is broadcast)."""
    if len(target) < len(shape):
        raise ValueError(f"{op}: cannot expand shape {tuple(shape)} to fewer dimensions {tuple(target)}")
    lead = len(target) - len(shape)
    checked_numel(op, [shape[d - lead] if n == -1 and d >= lead else n for d, n in enumerate(target)])
    out = [0] * len(target)
    for d, n in enumerate(target):
        if d < lead:
            if n < 0:
                raise ValueError(f"{op}: -1 is not allowed for a new leading dimension in {tuple(target)}")
            out[d] = 0
            continue
        src_n = shape[d - lead]
        if n == -1:
            n = src_n
        if src_n == n:
            out[d] = strides[d - lead]
        elif src_n == 1:
            out[d] = 0
        else:
            raise ValueError(
                f"{op}: the size {src_n} of shape {tuple(shape)} cannot be expanded to {n} at dimension {d} of {tuple(target)}"
            )
    return tuple(out)


def not_a_tensor(op: str, value, name: str = "input") -> TypeError:
    """torch's TypeError for a non-tensor where an operator takes a Tensor,
    raised by the operator before its first ``.shape`` would raise an
    AttributeError (a fuzz finding): ``raise not_a_tensor(op, x)`` after an
    inline ``isinstance`` check, which costs the hot view ops nothing more."""
    return TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}")


def norm_dim(op: str, dim: int, ndim: int, extra: int = 0) -> int:
    """Normalise a possibly negative dimension index (extra: one past the end allowed, for unsqueeze)."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = ndim + extra
    lo, hi = -max(n, 1), max(n, 1) - 1
    if dim < lo or dim > hi:
        raise IndexError(f"{op}: dimension {dim} is out of range for a tensor of {ndim} dimensions (expected {lo}..{hi})")
    return dim % max(n, 1) if n > 0 else 0


def norm_dims(op: str, dims, ndim: int) -> tuple:
    """A sorted tuple of distinct normalised dims; None means all."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    out = sorted(norm_dim(op, d, ndim) for d in dims)
    if ndim == 0:
        # torch: a 0-d tensor takes dim 0 or -1, and reducing over it reduces nothing.
        return ()
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: dimension repeated in {tuple(dims)}")
    return tuple(out)


def infer_shape(op: str, shape: Sequence[int], n: int) -> tuple:
    """Resolve one -1 in a requested shape for `n` elements."""
    shape = tuple([int(s) for s in shape])
    if -1 not in shape and (not shape or min(shape) >= 0):
        if numel(shape) != n:
            raise ValueError(f"{op}: shape {shape} is invalid for input of size {n}")
        return shape
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1:
        raise ValueError(f"{op}: only one dimension can be -1, got {shape}")
    if any(s < -1 for s in shape):
        raise ValueError(f"{op}: invalid shape {shape}")
    known = numel(s for s in shape if s != -1)
    if unknown:
        if known == 0 or n % known != 0:
            raise ValueError(f"{op}: shape {shape} is invalid for input of size {n}")
        shape = shape[: unknown[0]] + (n // known,) + shape[unknown[0] + 1 :]
    elif known != n:
        raise ValueError(f"{op}: shape {shape} is invalid for input of size {n}")
    return shape


def view_strides(shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]):
    """Strides that let `new_shape` view the same elements in the same order,
    or None if no such strides exist (then reshape must copy). The rule of
    torch's computeStride: group old dims into contiguous chunks and split
    each chunk into new dims."""
    n = numel(shape)
    if n == 0:
        return contiguous_strides(new_shape)
    old = [(sz, st) for sz, st in zip(shape, strides) if sz != 1]
    new_strides = [0] * len(new_shape)
    oi = 0
    ni = 0
    # Walk chunks of old dims that are mutually contiguous.
    while ni < len(new_shape) or oi < len(old):
        if oi >= len(old):
            # Only size-1 new dims remain.
            while ni < len(new_shape):
                if new_shape[ni] != 1:
                    return None
                new_strides[ni] = 1
                ni += 1
            break
        # Build a chunk: old dims oi..oj that are contiguous with each other.
        chunk_size = old[oi][0]
        oj = oi
        while oj + 1 < len(old) and old[oj][1] == old[oj + 1][0] * old[oj + 1][1]:
            oj += 1
            chunk_size *= old[oj][0]
        base_stride = old[oj][1]
        # Assign new dims to this chunk, innermost stride = base_stride.
        acc = 1
        start = ni
        while ni < len(new_shape) and acc * new_shape[ni] <= chunk_size and (acc < chunk_size or new_shape[ni] == 1):
            acc *= new_shape[ni]
            ni += 1
            if acc == chunk_size:
                # absorb trailing size-1 dims only if the next chunk can't use them; keep simple: stop here
                break
        if acc != chunk_size:
            return None
        # Strides within the chunk: row-major over new dims start..ni with base_stride.
        s = base_stride
        for d in range(ni - 1, start - 1, -1):
            new_strides[d] = s
            s *= new_shape[d]
        oi = oj + 1
    return tuple(new_strides)
