"""Random draws from onemodel's counter-based generator (docs/tensor.md,
"Random draws"): ``multinomial``, ``bernoulli``, and the in-place fills
``normal_``, ``uniform_``, ``bernoulli_``, ``random_``, ``exponential_``.

The stream is the generator's (``onemodel.Generator``): draw k of a seed is
SplitMix64(seed + k·γ), a function of the seed and the position only.
Draws are consumed in row-major order of what they decide (the rows of a
multinomial, then its samples in order). ``u64_draws`` reproduces that
stream in NumPy integer arithmetic (exact, modulo 2^64) and advances the
generator past them; a uniform double in [0, 1) takes the top 53 bits.
The values differ from torch's (another generator), never the rules.
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import _shape
from .._numpy_exact import ieee_method
from ..tensor import Tensor, bool_, float32, int64
from .operands import from_array
from .operands import from_array as _result  # noqa: F401  (other operators import it by this name)

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)


def _gen(generator):
    from ..creation import default_generator

    return (generator or default_generator)._g


def u64_draws(generator, n: int) -> np.ndarray:
    """The next `n` 64-bit draws of the generator (and advance it)."""
    g = _gen(generator)
    seed, counter = g.get_state()
    with np.errstate(over="ignore"):
        c = np.uint64(counter) + np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(seed) + c * _GAMMA
        z = (z ^ (z >> np.uint64(30))) * _C1
        z = (z ^ (z >> np.uint64(27))) * _C2
        z = z ^ (z >> np.uint64(31))
    g.set_state((seed, (counter + n) & 0xFFFF_FFFF_FFFF_FFFF))
    return z


def uniform64(generator, n: int) -> np.ndarray:
    """`n` uniform doubles in [0, 1) (53 random bits each)."""
    return (u64_draws(generator, n) >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


@ieee_method
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Category indices drawn with the (unnormalised, non-negative) weights
    of each row of ``input`` ([n] or [m, n]). Each draw is the inverse CDF
    of a uniform double over the row's double cumulative sum in index order;
    without replacement the chosen category's weight is zeroed before the
    next draw."""
    if not isinstance(input, Tensor) or input.dtype is not float32:
        raise TypeError("multinomial: expected a float32 tensor of weights")
    if input.ndim not in (1, 2):
        raise ValueError(f"multinomial: weights must be 1-D or 2-D, got shape {tuple(input.shape)}")
    w = input.numpy(force=True).astype(np.float64).reshape(-1, input.shape[-1])
    m, n = w.shape
    k = int(num_samples)
    if k <= 0:
        raise ValueError(f"multinomial: num_samples must be positive, got {num_samples}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("multinomial: weights must be finite and non-negative")
    rows_total = np.add.accumulate(w, axis=1)[:, -1] if n else np.zeros(m)
    if (rows_total <= 0).any():
        raise ValueError("multinomial: every row needs a positive total weight")
    if not replacement:
        if k > n:
            raise ValueError(f"multinomial: cannot draw {k} samples from {n} categories without replacement")
        if ((w > 0).sum(axis=1) < k).any():
            raise ValueError(f"multinomial: a row has fewer than {k} categories with positive weight (replacement=False)")
    u = uniform64(generator, m * k).reshape(m, k)
    out = np.empty((m, k), np.int64)
    for r in range(m):
        row = w[r].copy()
        c = np.add.accumulate(row)
        for j in range(k):
            if not replacement and j:
                row[out[r, j - 1]] = 0.0
                c = np.add.accumulate(row)
            target = u[r, j] * c[-1]
            i = int(np.searchsorted(c, target, side="right"))
            if i >= n:  # the product rounded up to the total: the last category with weight
                i = int(np.nonzero(row > 0)[0][-1])
            out[r, j] = i
    return from_array(out.reshape(tuple(input.shape[:-1]) + (k,)), int64)


@ieee_method
def bernoulli(input: Tensor, p=None, *, generator=None) -> Tensor:
    """1 with probability ``p`` (the input's values, or the number ``p``),
    else 0, in the input's dtype: a uniform double below p."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli: expected a Tensor, got {type(input).__name__}")
    probs = np.full(input.shape, float(p)) if p is not None else input.numpy(force=True).astype(np.float64)
    if ((probs < 0) | (probs > 1) | np.isnan(probs)).any():
        raise ValueError("bernoulli: probabilities must lie in [0, 1]")
    u = uniform64(generator, _shape.numel(input.shape)).reshape(input.shape)
    dt = input.dtype if input.dtype is not bool_ or p is not None else float32
    return from_array((u < probs).astype(dt.numpy), dt)


# -- in-place fills -----------------------------------------------------------------

def _check_fill(t: Tensor, op: str, float_only: bool = False) -> None:
    """An in-place random fill may write `t`: writable, not recording a
    tensor that requires grad, float32 where the draw is a float one."""
    from .inplace import check_no_overlap, check_writable

    check_writable(t, op)
    check_no_overlap(t, op)
    _refuse_grad(t, op)
    if float_only and t.dtype is not float32:
        raise TypeError(f"{op}: expected a float32 tensor, got {t.dtype.name}")


def _fill(t: Tensor, op: str, values: np.ndarray) -> Tensor:
    _check_fill(t, op)
    values = values.astype(t.dtype.numpy)
    t._bump()  # before the write, as every in-place op (ops/inplace.py, _write)
    t.numpy(force=True)[...] = values
    return t


def _refuse_grad(t: Tensor, op: str) -> None:
    from ..grad_mode import is_grad_enabled

    if is_grad_enabled() and t.requires_grad:
        raise RuntimeError(f"{op}: a tensor that requires grad cannot be filled in place while recording; use onemodel.no_grad()")


def _draw(t: Tensor, op: str, generator, x: float, y: float) -> Tensor:
    """`t` filled in place by the generator's float32 draw `op` (normal_ or
    uniform_) with parameters (x, y)."""
    _check_fill(t, op, float_only=True)
    g, x, y = _gen(generator), float(x), float(y)
    t._bump()  # before the write, as every in-place op (ops/inplace.py, _write)
    getattr(g, op)(t, x, y)
    return t


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    return _draw(t, "normal_", generator, mean, std)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator=None) -> Tensor:
    return _draw(t, "uniform_", generator, a, b)


@ieee_method
def bernoulli_(t: Tensor, p=0.5, *, generator=None) -> Tensor:
    probs = p.numpy(force=True).astype(np.float64) if isinstance(p, Tensor) else float(p)
    u = uniform64(generator, _shape.numel(t.shape)).reshape(t.shape)
    return _fill(t, "bernoulli_", np.broadcast_to(u < probs, t.shape))


def exponential_(t: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """−log(1 − u)/λ, with 1 − u rounded to float32 and onemodel's log (the
    fixed polynomial in exact mode), then one double division."""
    from .pointwise import log

    u = uniform64(generator, _shape.numel(t.shape)).reshape(t.shape)
    from .._numpy_exact import ieee

    with ieee():
        one_minus = from_array((1.0 - u).astype(np.float32), float32)
        vals = -(log(one_minus).numpy(force=True).astype(np.float64)) / float(lambd)
    return _fill(t, "exponential_", vals)


def random_(t: Tensor, from_=0, to=None, *, generator=None) -> Tensor:
    """Uniform integers in [from, to) (``random_(to)``: [0, to); no
    bounds: [0, 2^24] for float32, [0, 2^63) for int64), as torch."""
    if to is None and from_ != 0 and isinstance(from_, numbers.Integral):
        from_, to = 0, from_
    if to is None:
        to = (1 << 24) + 1 if t.dtype is float32 else (1 << 63) - 1
    lo, hi = int(from_), int(to)
    if hi <= lo:
        raise ValueError(f"random_: empty range [{lo}, {hi})")
    if lo < -(2**63) or hi > 2**63 - 1:
        raise ValueError(f"random_: the range [{lo}, {hi}) must lie within int64 [-2**63, 2**63 - 1)")
    g = _gen(generator)
    vals = np.array([g.randint(lo, hi) for _ in range(_shape.numel(t.shape))], dtype=np.int64).reshape(t.shape)
    return _fill(t, "random_", vals)


def _shaped_draws(op: str, params: Tensor, generator) -> Tensor:
    from ..grad_mode import no_grad

    with no_grad():
        p = params.detach().float().contiguous()
        out = Tensor._empty(p._shape)
        getattr(_gen(generator), op)(out, p)
    return out


def standard_gamma(input: Tensor, *, generator=None) -> Tensor:
    """torch._standard_gamma: Gamma(input, 1) draws (Marsaglia–Tsang in
    binary64 with the fixed log and exp; values differ from torch's, the
    stream is onemodel's). Not differentiable (torch's implicit
    reparameterisation gradient is not provided)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"standard_gamma: expected a Tensor, got {type(input).__name__}")
    return _shaped_draws("standard_gamma_", input, generator)


def poisson(input: Tensor, generator=None) -> Tensor:
    """torch.poisson: one Poisson(rate) draw per element (float32 counts)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson: expected a Tensor, got {type(input).__name__}")
    if input.numel() and bool((input.detach() < 0).any()):
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    return _shaped_draws("poisson_", input, generator)
