"""Laplace, Exponential, OneHotCategorical and Independent, as
torch.distributions: torch's formulas with onemodel's operators, draws from
onemodel's generator."""

from __future__ import annotations

import numbers

import numpy as np

from ..tensor import Tensor
from .discrete import Categorical
from .distribution import Distribution, LocationMoments, as_float_tensor, broadcast_all

_EPS = float(np.finfo(np.float32).eps)


def _draws(shape: tuple, low: float, high: float) -> Tensor:
    from ..creation import empty

    return empty(*shape).uniform_(low, high) if shape else empty(()).uniform_(low, high)


class Laplace(LocationMoments, Distribution):
    """Laplace(loc, scale); rsample = loc − scale·sign(u)·log1p(−|u|) with u
    uniform on (eps − 1, 1), as torch."""

    has_rsample = True
    arg_constraints = {"loc": "real", "scale": "positive"}

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        scalar = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if scalar else tuple(self.loc.shape), (), validate_args)

    def _support_ok(self, v):
        return v == v

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=()) -> Tensor:
        from ..ops.transcendental import log1p

        shape = self._extended_shape(tuple(sample_shape))
        u = _draws(shape, _EPS - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value) -> Tensor:
        from ..ops.transcendental import expm1

        value = as_float_tensor(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value) -> Tensor:
        from ..ops.transcendental import log1p

        term = as_float_tensor(value) - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Exponential(Distribution):
    """Exponential(rate); rsample = −log1p(−u)/rate (u uniform on [0, 1))."""

    has_rsample = True
    arg_constraints = {"rate": "positive"}

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(() if isinstance(rate, numbers.Number) else tuple(self.rate.shape), (), validate_args)

    def _support_ok(self, v):
        return v >= 0

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        from ..creation import zeros_like

        return zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()) -> Tensor:
        from ..ops.transcendental import log1p

        shape = self._extended_shape(tuple(sample_shape))
        return -log1p(-_draws(shape, 0, 1)) / self.rate

    def log_prob(self, value) -> Tensor:
        value = as_float_tensor(value)
        self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value) -> Tensor:
        return 1 - (-self.rate * as_float_tensor(value)).exp()

    def icdf(self, value) -> Tensor:
        from ..ops.transcendental import log1p

        return -log1p(-as_float_tensor(value)) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()


class OneHotCategorical(Distribution):
    """OneHotCategorical(probs=None, logits=None): a Categorical whose
    samples are one-hot vectors (event shape ``(n,)``)."""

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits, validate_args)
        n = self._categorical._num_events
        super().__init__(self._categorical._batch_shape, (n,), False)
        self._validate_args = self._categorical._validate_args

    def _support_ok(self, v):
        return np.all((v == 0) | (v == 1), axis=-1) & (v.sum(-1) == 1)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        from ..ops.gather import one_hot

        return one_hot(self.probs.argmax(-1), self._event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _sample(self, sample_shape: tuple) -> Tensor:
        from ..ops.gather import one_hot

        return one_hot(self._categorical._sample(sample_shape), self._event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import eye

        n = self._event_shape[0]
        values = eye(n).reshape((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + self._batch_shape + (n,)) if expand else values


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum the ``dim`` rightmost dimensions (torch.distributions.utils)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[: value.ndim - dim]) + (-1,)).sum(-1)


class Independent(Distribution):
    """Independent(base_distribution, reinterpreted_batch_ndims): the last
    ``reinterpreted_batch_ndims`` batch dimensions of the base become event
    dimensions (log_prob and entropy summed over them)."""

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None) -> None:
        if not isinstance(base_distribution, Distribution):
            raise TypeError(f"Independent: expected a Distribution, got {type(base_distribution).__name__}")
        n = int(reinterpreted_batch_ndims)
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = n + len(base_distribution.event_shape)
        if n < 0 or n > len(base_distribution.batch_shape):
            raise ValueError(
                "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                f"actual {n} vs {len(base_distribution.batch_shape)}"
            )
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        super().__init__(shape[: len(shape) - event_dim], shape[len(shape) - event_dim :], False)
        self._validate_args = base_distribution._validate_args if validate_args is None else bool(validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
