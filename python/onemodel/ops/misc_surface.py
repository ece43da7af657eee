"""Small pieces of torch's surface: randint_like, scalar_tensor, asarray,
empty_strided, chain_matmul, is_nonzero, is_complex, typename, Tensor
sum_to_size, and F.channel_shuffle."""

from __future__ import annotations

from .. import _shape
from ..tensor import Tensor, float32
from . import views


def randint_like(input: Tensor, low=0, high=None, *, dtype=None, generator=None, requires_grad: bool = False, device=None, memory_format=None) -> Tensor:
    """torch.randint_like(input, high) or (input, low, high): input's shape
    and dtype (values from onemodel's generator)."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("randint_like", input)
    from ..creation import randint

    if high is None:
        low, high = 0, low
    out = randint(low, high, tuple(input.shape), generator=generator, device=device)
    dt = dtype or input.dtype
    out = out if dt is out.dtype else out.to(dt)
    return out.requires_grad_() if requires_grad else out


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    from ..creation import tensor

    return tensor(float(s) if dtype is None else s, dtype=dtype or float32, device=device, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """torch.asarray: no copy for a tensor (or NumPy array, when its dtype
    is onemodel's) unless copy=True or a conversion is needed."""
    import numpy as np

    from ..creation import as_tensor, from_numpy, tensor

    if isinstance(obj, Tensor):
        out = as_tensor(obj, dtype=dtype)
        out = out.clone() if copy and out is obj else out
    elif isinstance(obj, np.ndarray) and not copy and dtype is None and obj.dtype in (np.float32, np.int64, np.bool_):
        out = from_numpy(obj)
    else:
        out = tensor(obj, dtype=dtype)
    return out.requires_grad_() if requires_grad else out


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """torch.empty_strided: a view with the given strides over a fresh buffer."""
    from ..creation import empty

    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} and {len(stride)}")
    n = 1 + sum((a - 1) * s for a, s in zip(size, stride)) if _shape.numel(size) else 0
    base = empty(n, dtype=dtype, device=device)
    out = base._view(size, stride, 0)
    return out.requires_grad_() if requires_grad else out


def chain_matmul(*matrices) -> Tensor:
    """torch.chain_matmul (deprecated in torch): the product from the left."""
    from .linalg import matmul

    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    out = matrices[0]
    for m in matrices[1:]:
        out = matmul(out, m)
    return out


def is_nonzero(input: Tensor) -> bool:
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("is_nonzero", input)
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous" if input.numel() else
                           "Boolean value of Tensor with no values is ambiguous")
    return bool(input.item())


def is_complex(input: Tensor) -> bool:
    return False


def typename(obj) -> str:
    if isinstance(obj, Tensor):
        return obj.type()
    module = type(obj).__module__
    return type(obj).__qualname__ if module in ("builtins", None) else f"{module}.{type(obj).__qualname__}"


def sum_to_size(input: Tensor, *size) -> Tensor:
    """torch.Tensor.sum_to_size: the sum over the dims that broadcasting to
    this tensor's shape expanded (a double sum, rounded once)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    try:
        if _shape.broadcast_shapes("sum_to_size", size, tuple(input.shape)) != tuple(input.shape):
            raise ValueError
    except ValueError:
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(input.shape)}") from None
    lead = input.ndim - len(size)
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size) if n == 1 and input.shape[lead + i] != 1)
    out = input.sum(dims, keepdim=True) if dims else input
    return views.reshape(out, size) if tuple(out.shape) != size else out


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """torch.nn.functional.channel_shuffle: [N, g·k, *] → channels regrouped
    as (k, g) (a reshape and a transpose)."""
    if not isinstance(input, Tensor):
        raise _shape.not_a_tensor("channel_shuffle", input)
    if input.ndim < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    n, rest = input.shape[0], tuple(input.shape[2:])
    x = views.reshape(input, (n, groups, c // groups) + rest)
    return views.reshape(views.transpose(x, 1, 2), (n, c) + rest)
