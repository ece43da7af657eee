"""torch.distributions' most used part: Categorical, OneHotCategorical,
Bernoulli, Normal, Uniform, Laplace, Exponential, MultivariateNormal,
Gamma, Chi2, Beta, Dirichlet, Poisson, Independent and kl_divergence /
register_kl (as in reinforcement-learning
and VAE examples: sample, rsample, log_prob, entropy, KL). Formulas are torch's, written with
onemodel's operators, so log_prob, entropy and KL are differentiable; draws
come from onemodel's generator (values differ from torch's for the same
seed)."""

from .continuous import Normal, Uniform
from .discrete import Bernoulli, Categorical
from .distribution import Distribution
from .gamma_based import Beta, Chi2, Dirichlet, Gamma, Poisson
from .kl import kl_divergence, register_kl
from .more import Exponential, Independent, Laplace, OneHotCategorical
from .multivariate import MultivariateNormal

__all__ = [
    "Distribution", "Categorical", "OneHotCategorical", "Bernoulli", "Normal", "Uniform", "Laplace", "Exponential",
    "Independent", "MultivariateNormal", "Gamma", "Chi2", "Beta", "Dirichlet", "Poisson", "kl_divergence", "register_kl",
]
