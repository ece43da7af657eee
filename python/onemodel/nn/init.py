"""Parameter initialisation (torch.nn.init's names, arguments, bounds and
standard deviations).

Every function fills its tensor in place without recording a gradient and
returns it. Random values come from onemodel's counter-based generator
(the default one, or ``generator=``), so for the same seed they differ from
torch's; the distributions and their parameters (bounds, standard
deviations, gains, fans) are torch's. Two methods differ from torch's
because torch's use operations onemodel does not fix bit for bit:

* ``trunc_normal_`` redraws values outside ``[a, b]`` from the normal
  stream (the definition of the truncated normal) instead of torch's
  inverse-CDF transform (which needs erfinv);
* ``orthogonal_`` orthonormalises with classical Gram-Schmidt applied twice,
  in double precision with every dot product summed in row order, instead
  of LAPACK's QR (whose sums depend on the BLAS library). Both give the Q
  of the QR factorisation with a positive diagonal in R, as torch does.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_", "dirac_",
    "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
]


def _gen(generator):
    from ..creation import default_generator

    return (generator or default_generator)._g


def _check(op: str, tensor) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a float32 tensor, got {tensor.dtype.name}")


def _draw(tensor: Tensor, kind: str, p: float, q: float, generator) -> Tensor:
    """Fill ``tensor`` with uniform(p, q) or normal(p, q) draws in element
    order (through a contiguous buffer when the tensor is a strided view)."""
    g = _gen(generator)
    with no_grad():
        target = tensor if tensor.is_contiguous() else Tensor._empty(tensor.shape)
        draw, p, q = (g.uniform_ if kind == "uniform" else g.normal_), float(p), float(q)
        if target is tensor:
            tensor._bump()  # before the write, as every in-place op (ops/inplace.py, _write)
        draw(target, p, q)
        if target is not tensor:
            tensor.copy_(target)
    return tensor


def _write(tensor: Tensor, values: np.ndarray) -> Tensor:
    from ..creation import tensor as make_tensor

    with no_grad():
        tensor.copy_(make_tensor(np.asarray(values, dtype=np.float32).reshape(tensor.shape)))
    return tensor


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (torch's table)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    _check("uniform_", tensor)
    return _draw(tensor, "uniform", a, b, generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    _check("normal_", tensor)
    return _draw(tensor, "normal", mean, std, generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None) -> Tensor:
    """Normal(mean, std) values, each value outside [a, b] redrawn (in
    element order, from the same stream) until it falls inside."""
    _check("trunc_normal_", tensor)
    if not a <= b:
        raise ValueError(f"trunc_normal_: the cutoffs must satisfy a <= b, got a={a}, b={b}")
    if std < 0:
        raise ValueError(f"trunc_normal_: std must be non-negative, got {std}")
    n = tensor.numel()
    if (mean < a - 10 * std) or (mean > b + 10 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may be incorrect.", stacklevel=2)
    out = np.empty(n, dtype=np.float32)
    filled = 0
    draws = 0
    chunk = Tensor._empty((max(n, 16),))
    g = _gen(generator)
    while filled < n:
        g.normal_(chunk, float(mean), float(std))
        vals = chunk.numpy(force=True)
        keep = vals[(vals >= a) & (vals <= b)]
        take = min(n - filled, keep.size)
        out[filled:filled + take] = keep[:take]
        filled += take
        draws += 1
        if draws > 10_000 and filled == 0:
            raise ValueError(f"trunc_normal_: no draw of N({mean}, {std}^2) fell inside [{a}, {b}]")
    return _write(tensor, out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    _check("constant_", tensor)
    with no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor.shape, dtype=np.float32))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The identity of a convolution: channel d of each group passes to
    output d of the group through the kernel's centre tap."""
    _check("dirac_", tensor)
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    values = np.zeros(sizes, dtype=np.float32)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min_dim):
            values[(g * out_per_group + d, d) + centre] = 1.0
    return _write(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    _check("xavier_uniform_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return _draw(tensor, "uniform", -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    _check("xavier_normal_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _draw(tensor, "normal", 0.0, std, generator)


def _kaiming_std(op: str, tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float | None:
    """He et al.'s std, gain / sqrt(fan), or None for a zero-element tensor
    (torch warns and leaves it: a no-op)."""
    _check(op, tensor)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return _draw(tensor, "uniform", -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return _draw(tensor, "normal", 0.0, std, generator)


def _row_order_dots(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """qᵀv for the columns of q, each dot product summed in row order
    (double precision; no BLAS, so the same bits everywhere)."""
    acc = np.zeros(q.shape[1], dtype=np.float64)
    for k in range(q.shape[0]):
        acc = acc + q[k] * v[k]
    return acc


def _row_order_norm(v: np.ndarray) -> float:
    acc = 0.0
    for x in v.tolist():
        acc += x * x
    return math.sqrt(acc)


def _gram_schmidt(a: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning a's (m ≥ n), R's diagonal positive."""
    m, n = a.shape
    q = np.zeros((m, n), dtype=np.float64)
    for j in range(n):
        v = a[:, j].copy()
        for _ in range(2):  # classical Gram-Schmidt, twice (re-orthogonalisation)
            if j:
                coeffs = _row_order_dots(q[:, :j], v)
                for i in range(j):
                    v = v - coeffs[i] * q[:, i]
        norm = _row_order_norm(v)
        if norm == 0.0:
            raise ValueError("orthogonal_: the random matrix was rank-deficient; use another seed")
        q[:, j] = v / norm
    return q


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix: the Q factor of a normal random matrix
    (rows × the product of the other dims), scaled by ``gain``."""
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = Tensor._empty((rows, cols))
    _gen(generator).normal_(flat, 0.0, 1.0)
    a = flat.numpy(force=True).astype(np.float64)
    if rows < cols:
        a = a.T
    q = _gram_schmidt(a)
    if rows < cols:
        q = q.T
    return _write(tensor, q * gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std) values with ``ceil(sparsity * rows)`` zeros per column, at
    rows chosen by a random permutation per column."""
    _check("sparse_", tensor)
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from ..creation import randperm

    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    normal_(tensor, 0.0, std, generator)
    values = np.array(tensor.numpy(force=True), copy=True)
    for col in range(cols):
        zero_rows = randperm(rows, generator=generator).numpy()[:num_zeros]
        values[zero_rows, col] = 0.0
    return _write(tensor, values)


def _deprecated(meth):
    old = meth.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{meth.__name__}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__name__ = old
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
