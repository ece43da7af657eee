"""kl_divergence(p, q) and register_kl, as torch.distributions.kl: the
closed forms torch registers for the pairs onemodel has, looked up by the
most specific registered (type(p), type(q)) pair in the classes' method
resolution order; a pair with no closed form raises NotImplementedError."""

from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .continuous import Normal, Uniform
from .discrete import Bernoulli, Categorical
from .more import Exponential, Independent, Laplace, OneHotCategorical, sum_rightmost
from .gamma_based import Beta, Dirichlet, Gamma, Poisson
from .multivariate import MultivariateNormal, _batch_mahalanobis

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as the KL divergence of the pair."""
    if not isinstance(type_p, type) or not isinstance(type_q, type):
        raise TypeError(f"Expected type_p and type_q to be classes, got {type_p!r} and {type_q!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn

    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return None

    def rank(pair):  # torch's total order: the pair nearest in both MROs
        sp, sq = pair
        return (type_p.__mro__.index(sp), type_q.__mro__.index(sq))

    return _KL_REGISTRY[min(matches, key=rank)]


def kl_divergence(p, q) -> Tensor:
    """KL(p ‖ q) over the batch (event dimensions summed)."""
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fn = _KL_MEMOIZE[key]
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _masked(t: Tensor, mask: Tensor, value: float) -> Tensor:
    from ..ops.selection import masked_fill

    return masked_fill(t, mask.expand(tuple(t.shape)) if tuple(mask.shape) != tuple(t.shape) else mask, value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _masked(t, q.probs == 0, math.inf)
    t = _masked(t, p.probs == 0, 0.0)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    from ..ops.smooth_activation import softplus

    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = _masked(t1, q.probs == 0, math.inf)
    t1 = _masked(t1, p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = _masked(t2, q.probs == 1, math.inf)
    t2 = _masked(t2, p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _masked(result, (q.low > p.low) | (q.high < p.high), math.inf)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    t1 = -rate_ratio.log()
    return t1 + rate_ratio - 1


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# -- pairs across families (torch's closed forms; infinite where q's support
#    misses part of p's) ------------------------------------------------------


def _infinite_like(t: Tensor) -> Tensor:
    from ..creation import full_like

    return full_like(t.detach(), math.inf)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Laplace, Exponential)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Normal, Uniform)
def _kl_loc_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    from ..ops.pointwise import erf

    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _masked(result, p.low < 0, math.inf)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """torch's: Σ log diag(L_q) − Σ log diag(L_p) + ½(‖L_q⁻¹L_p‖²_F +
    Mahalanobis(q.loc − p.loc) − n)."""
    from ..ops.triangular import solve_triangular

    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    lead = tuple(np.broadcast_shapes(tuple(q._unbroadcasted_scale_tril.shape[:-2]), tuple(p._unbroadcasted_scale_tril.shape[:-2])))
    q_tril = q._unbroadcasted_scale_tril.expand(lead + (n, n))
    p_tril = p._unbroadcasted_scale_tril.expand(lead + (n, n))
    m = solve_triangular(q_tril, p_tril, upper=False)
    term2 = m.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


# -- the gamma-based families with their own kind (torch's closed forms) ------


def _lgamma(t):
    from ..ops.gamma_fns import lgamma

    return lgamma(t)


def _digamma(t):
    from ..ops.gamma_fns import digamma

    return digamma(t)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = _lgamma(q.concentration) - _lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * _digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = _lgamma(q.concentration1) + _lgamma(q.concentration0) + _lgamma(sum_params_p)
    t2 = _lgamma(p.concentration1) + _lgamma(p.concentration0) + _lgamma(sum_params_q)
    t3 = (p.concentration1 - q.concentration1) * _digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * _digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * _digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = _lgamma(sum_p) - _lgamma(sum_q)
    t2 = (_lgamma(p.concentration) - _lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = _digamma(p.concentration) - _digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)
