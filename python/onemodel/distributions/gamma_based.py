"""The distributions built on the gamma function: Gamma, Chi2, Beta,
Dirichlet and Poisson, as torch.distributions (torch's log_prob, entropy
and moment formulas with onemodel's lgamma/digamma, so they are
differentiable in the parameters). Samples come from onemodel's generator
(Marsaglia–Tsang gamma draws, Knuth / PTRS Poisson draws, in binary64 with
the fixed log and exp): ``sample`` only; torch's reparameterised
``rsample`` of Gamma, Beta and Dirichlet (its implicit gradient of the
gamma draw) is not provided."""

from __future__ import annotations

import numbers

import numpy as np

from ..tensor import Tensor
from .distribution import Distribution, as_float_tensor, broadcast_all


def _lgamma(t: Tensor) -> Tensor:
    from ..ops.gamma_fns import lgamma

    return lgamma(t)


def _digamma(t: Tensor) -> Tensor:
    from ..ops.gamma_fns import digamma

    return digamma(t)


def _xlogy(a, b) -> Tensor:
    from ..ops.binary_math import xlogy

    return xlogy(a, b)


class Gamma(Distribution):
    """Gamma(concentration, rate): density rate^α x^(α−1) e^(−rate·x)/Γ(α)."""

    arg_constraints = {"concentration": "positive", "rate": "positive"}

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number)
        super().__init__(() if scalar else tuple(self.concentration.shape), (), validate_args)

    def _support_ok(self, v):
        return v >= 0

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..ops.random import standard_gamma

        shape = self._extended_shape(sample_shape)
        draws = standard_gamma(self.concentration.detach().expand(shape)) / self.rate.detach().expand(shape)
        return draws.clamp(min=float(np.finfo(np.float32).tiny))

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        return _xlogy(self.concentration, self.rate) + _xlogy(self.concentration - 1, value) - self.rate * value - _lgamma(self.concentration)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + _lgamma(a) + (1.0 - a) * _digamma(a)


class Chi2(Gamma):
    """Chi2(df) = Gamma(df/2, 1/2)."""

    arg_constraints = {"concentration": "positive"}

    def __init__(self, df, validate_args=None) -> None:
        super().__init__(0.5 * as_float_tensor(df) if isinstance(df, Tensor) else 0.5 * float(df), 0.5, validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Dirichlet(Distribution):
    """Dirichlet(concentration): the last dimension is the event."""

    arg_constraints = {"concentration": "positive"}

    def __init__(self, concentration, validate_args=None) -> None:
        concentration = as_float_tensor(concentration)
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]), validate_args)

    def _support_ok(self, v):
        return np.all(v >= 0, axis=-1) & (np.abs(v.sum(-1) - 1) < 1e-6)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        from ..ops.gather import one_hot
        from ..ops.selection import where

        concm1 = (self.concentration - 1).clamp(min=0.0)
        mode = concm1 / concm1.sum(-1, True)
        # Where every concentration is below 1, torch sets the row to the
        # one-hot vector of its argmax; the row is 0/0 = NaN there, so the
        # argmax is the first NaN's index, 0.
        below = (self.concentration < 1).all(-1, keepdim=True)
        vertex = one_hot(mode.argmax(-1), concm1.shape[-1]).to(mode.dtype)
        return where(below, vertex, mode)

    @property
    def variance(self) -> Tensor:
        con0 = self.concentration.sum(-1, True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..ops.random import standard_gamma

        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.detach().expand(shape))
        return g / g.sum(-1, True)

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        a = self.concentration
        return _xlogy(a - 1.0, value).sum(-1) + _lgamma(a.sum(-1)) - _lgamma(a).sum(-1)

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return _lgamma(a).sum(-1) - _lgamma(a0) - (k - a0) * _digamma(a0) - ((a - 1.0) * _digamma(a)).sum(-1)


class Beta(Distribution):
    """Beta(concentration1, concentration0), through Dirichlet((c1, c0))."""

    arg_constraints = {"concentration1": "positive", "concentration0": "positive"}

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        from ..ops.stacking import stack

        c1, c0 = broadcast_all(concentration1, concentration0)
        self.concentration1, self.concentration0 = c1, c0
        self._dirichlet = Dirichlet(stack([c1, c0], -1), validate_args=False)
        scalar = isinstance(concentration1, numbers.Number) and isinstance(concentration0, numbers.Number)
        super().__init__(() if scalar else tuple(c1.shape), (), validate_args)

    def _support_ok(self, v):
        return (v >= 0) & (v <= 1)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def _sample(self, sample_shape: tuple) -> Tensor:
        return self._dirichlet._sample(sample_shape)[..., 0]

    def log_prob(self, value) -> Tensor:
        from ..ops.stacking import stack

        value = as_float_tensor(value)
        self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


class Poisson(Distribution):
    """Poisson(rate): log_prob = xlogy(value, rate) − rate − lgamma(value + 1)."""

    arg_constraints = {"rate": "nonnegative"}

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else tuple(self.rate.shape), (), validate_args)

    def _support_ok(self, v):
        return (v >= 0) & (v == np.floor(v))

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..ops.random import poisson

        return poisson(self.rate.detach().expand(self._extended_shape(sample_shape)))

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return _xlogy(value, rate) - rate - _lgamma(value + 1)
