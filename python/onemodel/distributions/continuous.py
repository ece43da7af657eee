"""Normal and Uniform, as torch.distributions (reparameterised)."""

from __future__ import annotations

import math
import numbers

from ..tensor import Tensor
from .distribution import Distribution, LocationMoments, broadcast_all


class Normal(LocationMoments, Distribution):
    """Normal(loc, scale); rsample = loc + ε·scale with ε ~ N(0, 1)."""

    has_rsample = True
    arg_constraints = {"loc": "real", "scale": "positive"}

    def _support_ok(self, v):
        return v == v

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalar else tuple(self.loc.shape), (), validate_args)

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        from ..creation import randn

        shape = self._extended_shape(tuple(sample_shape))
        eps = randn(*shape) if shape else randn(())
        return self.loc.expand(shape) + eps * self.scale.expand(shape)

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = broadcast_all(value)[0]
        self._validate_sample(value)
        var = self.scale * self.scale
        d = value - self.loc
        return -(d * d) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

    def cdf(self, value) -> Tensor:
        from ..ops.pointwise import erf

        inv = self.scale.reciprocal() if hasattr(self.scale, "reciprocal") else 1.0 / self.scale
        return 0.5 * (1 + erf((value - self.loc) * inv / math.sqrt(2)))

    def icdf(self, value) -> Tensor:
        from ..ops.transcendental import erfinv

        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)


class Uniform(Distribution):
    """Uniform(low, high); rsample = low + u·(high − low)."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        scalar = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if scalar else tuple(self.low.shape), (), validate_args)
        if self._validate_args and not bool((self.low < self.high).all()):
            raise ValueError("Uniform is not defined when low>= high")

    def _support_ok(self, v):
        lo, hi = self.low.detach().numpy(force=True), self.high.detach().numpy(force=True)
        return (v >= lo) & (v <= hi)

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def variance(self) -> Tensor:
        w = self.high - self.low
        return w * w / 12

    def rsample(self, sample_shape=()) -> Tensor:
        from ..creation import rand

        shape = self._extended_shape(tuple(sample_shape))
        u = rand(*shape) if shape else rand(())
        return self.low.expand(shape) + u * (self.high - self.low).expand(shape)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        inside = (value >= self.low).float() * (value < self.high).float()
        return (inside.log()) - (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        return ((value - self.low) / (self.high - self.low)).clamp(0.0, 1.0)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
