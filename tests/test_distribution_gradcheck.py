"""GradientCheck on the operators added on 2026-12-06 (evening):
Cholesky and the triangular solves, the gamma family, dist and ldexp, and
the log_prob / entropy / KL of the distributions built on them, in both
modes. Factors pass through tril (with a positive diagonal) so that every
perturbed element is one the forward reads; covariances are built as
A·Aᵀ + cI so that a perturbation keeps them symmetric."""

import pytest

import onemodel as om
from onemodel.gradcheck import gradient_check

from test_tensor_gradcheck import mode  # noqa: F401  (the fast/exact fixture)

# Its own stream: drawing from test_tensor_gradcheck's shared generator
# would move the inputs of every test that runs after this file.
GEN = om.Generator().manual_seed(2026)


def leaf(*shape):
    return om.randn(*shape, generator=GEN).requires_grad_()


def positive(*shape):
    return (om.rand(*shape, generator=GEN) + 0.5).requires_grad_()

D = om.distributions


def _spd(a, c=3.0):
    return a @ a.mT + c * om.eye(a.shape[-1])


def _lower(a):
    """A lower factor with a positive diagonal (at least 0.5) from any a."""
    return om.tril(a, -1) + om.diag_embed((a.diagonal(dim1=-2, dim2=-1) * 0.5).exp() + 0.5)


CASES = {
    "cholesky": (lambda a: om.linalg.cholesky(_spd(a)) + om.linalg.cholesky(_spd(a), upper=True), lambda: (leaf(2, 3, 3),)),
    "solve_triangular": (lambda a, b, c: om.linalg.solve_triangular(_lower(a), b, upper=False)
                         + om.linalg.solve_triangular(_lower(a).mT, b, upper=True, unitriangular=True)
                         + om.linalg.solve_triangular(_lower(a), c, upper=False, left=False).mT,
                         lambda: (leaf(3, 3), leaf(3, 2), leaf(2, 3))),
    "cholesky_solve_inverse": (lambda b, a: om.cholesky_solve(b, _lower(a)) + om.cholesky_solve(b, _lower(a).mT, upper=True)
                               + om.cholesky_inverse(_lower(a))[:, :2],
                               lambda: (leaf(3, 2), leaf(3, 3))),
    "gamma_family": (lambda x, y: om.lgamma(x) + om.digamma(x) * om.polygamma(1, x) + om.polygamma(2, x) + om.lgamma(y - 3.0) + om.digamma(y - 3.0),
                     lambda: (positive(3, 4) * 3, positive(3, 4))),
    "mvlgamma": (lambda x: om.mvlgamma(x + 2.0, 3), lambda: (positive(2, 3),)),
    "dist_ldexp": (lambda a, b: om.dist(a, b) + om.dist(a, b, 3) * om.ldexp(a, om.tensor([1, -2, 3])).sum(), lambda: (leaf(2, 3), leaf(3))),
    "multivariate_normal": (lambda loc, a, x: D.MultivariateNormal(loc, covariance_matrix=_spd(a)).log_prob(x)
                            + D.kl_divergence(D.MultivariateNormal(loc, scale_tril=_lower(a)), D.MultivariateNormal(x[0], precision_matrix=_spd(a, 2.0))),
                            lambda: (leaf(3), leaf(3, 3), leaf(2, 3))),
    "gamma_beta_dirichlet_poisson": (lambda a, b, x: D.Gamma(a, b).log_prob(x) + D.Gamma(a, b).entropy() + D.Beta(a, b).log_prob(x / 3.0)
                                     + D.Beta(a, b).entropy() + D.Dirichlet(a).log_prob(x / x.sum(-1, keepdim=True)) .unsqueeze(-1)
                                     + D.Poisson(a).log_prob(om.tensor([0.0, 1.0, 3.0]))
                                     + D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)) + D.kl_divergence(D.Dirichlet(a), D.Dirichlet(b)).unsqueeze(-1),
                                     lambda: (positive(2, 3) * 2, positive(2, 3) * 2, positive(2, 3))),
    "laplace_exponential_kl": (lambda m, s, x: D.Laplace(m, s).log_prob(x) + D.Exponential(s).log_prob(x.abs())
                               + D.kl_divergence(D.Normal(m, s), D.Laplace(x, s)) + D.kl_divergence(D.Laplace(m, s), D.Normal(x, s)),
                               lambda: (leaf(2, 3), positive(2, 3), leaf(2, 3))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report.passed
    assert report.max_scaled_error <= 1.0
