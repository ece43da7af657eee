"""The gamma family: ``lgamma``, ``digamma``, ``polygamma`` and
``mvlgamma`` (and torch.special's ``gammaln``, ``psi``, ``multigammaln``),
with torch's backward formulas (derivatives.yaml): lgamma → g·ψ(x),
digamma → g·ψ′(x), polygamma(n) → g·ψ⁽ⁿ⁺¹⁾(x).

Each value is computed in binary64 from the binary32 argument by
``rust/src/math/gamma.rs`` (IEEE operations and fdlibm's log in one fixed
order: the same bits on every machine) and rounded once; torch computes
lgamma with the C library's lgammaf and digamma/trigamma in binary32, so
the two agree to a few binary32 ulps (docs/numerics.md). int64/bool inputs
compute in float32, as torch promotes them.
"""

from __future__ import annotations

import math

from .. import _core
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .npwise import compute, floating_operand


def _apply(op: str, x: Tensor, n: int = 0) -> Tensor:
    x = x.contiguous()
    out = Tensor._empty(x._shape)
    _core.gamma_family(op, out, x, n)
    return out


class _GammaFn(Function):
    """y = lgamma(x), ψ(x) or ψ⁽ⁿ⁾(x); backward g times the next
    derivative (ψ, ψ′, ψ⁽ⁿ⁺¹⁾)."""

    def forward(self, x, op: str, n: int):
        self.op, self.n = op, n
        self.save_for_backward(x)
        return _apply(op, x, n)

    def backward(self, g):
        (x,) = self.saved_tensors
        order = {"lgamma": 0, "digamma": 1}.get(self.op, self.n + 1)
        slope = _apply("polygamma", x, order)
        return compute(f"{self.op}_backward", lambda gg, s: gg * s, [g, slope], float32)


def _operand(x, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return floating_operand(x, op)


def lgamma(input) -> Tensor:
    """ln|Γ(x)| (+inf at 0, the negative integers and ±inf)."""
    return _GammaFn.apply(_operand(input, "lgamma"), "lgamma", 0)


def digamma(input) -> Tensor:
    """ψ(x) = d/dx ln Γ(x) (−inf at +0, +inf at −0, NaN at the negative
    integers), as torch."""
    return _GammaFn.apply(_operand(input, "digamma"), "digamma", 0)


def polygamma(n: int, input) -> Tensor:
    """ψ⁽ⁿ⁾(x), the n-th derivative of ψ (n ≥ 0; n ≥ 2 through the Hurwitz
    zeta function, as torch)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n, got n = {n}")
    x = _operand(input, "polygamma")
    if n == 0:
        return _GammaFn.apply(x, "digamma", 0)
    return _GammaFn.apply(x, "polygamma", int(n))


def mvlgamma(input, p: int) -> Tensor:
    """The multivariate log-gamma of dimension p: Σᵢ lgamma(x − i/2) (i <
    p) + p(p − 1)/4·ln π, as torch composes it (torch 2.15 no longer
    refuses elements ≤ (p − 1)/2: they give lgamma's values there)."""
    from ..creation import arange

    if isinstance(p, bool) or not isinstance(p, int) or p < 1:
        raise RuntimeError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    x = _operand(input, "mvlgamma")
    args = arange(-p * 0.5 + 0.5, 0.5, 0.5) + x.unsqueeze(-1)
    return lgamma(args).sum(-1) + p * (p - 1) * math.log(math.pi) / 4
