"""torch.distributions' most used part: Categorical, Bernoulli, Normal,
Uniform (as in reinforcement-learning examples: sample, log_prob,
entropy). Formulas are torch's, written with onemodel's operators, so
log_prob and entropy are differentiable; draws come from onemodel's
generator (values differ from torch's for the same seed)."""

from .continuous import Normal, Uniform
from .discrete import Bernoulli, Categorical
from .distribution import Distribution

__all__ = ["Distribution", "Categorical", "Bernoulli", "Normal", "Uniform"]
