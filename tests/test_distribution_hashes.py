"""Bit-identity of the operators added on 2026-12-06 (evening session)
(docs/engine.md, "Pinned gradient hashes"): linalg.cholesky,
solve_triangular, cholesky_solve / cholesky_inverse, MultivariateNormal,
Laplace, Exponential, Independent, kl_divergence, mode, dist and ldexp;
and (a second hash) the gamma family with Gamma, Beta, Dirichlet and
Poisson.
The exact-mode gradients hash to one pinned value on every kernel path ×
threads {1, 3, 8}; the products (an MLP over a batch large enough to split)
run on the GEMM."""

import onemodel as om
from conftest import THREAD_COUNTS, assert_splits, exact_hashes

D = om.distributions

# sha256 of _gradients() in exact mode (parameter order, then the loss);
# equal on scalar, v128 and avx2 at 1, 3 and 8 threads when it was pinned
# (2026-12-06, the AVX2 Zen 3 machine; avx512 not available there).
DISTRIBUTIONS_EXACT_SHA256 = "c0a3a928b84b9983324700c17f4b977306fc15e892c7904c145b5968f547ff94"


# The same for _gamma_gradients() (pinned the same day, the same machine).
GAMMA_EXACT_SHA256 = "7517055b443fb53f126f22c2117e2e3010240340294a45edef91c9cbf5b282ac"


def _gamma_gradients():
    gen = om.Generator().manual_seed(6)
    x = om.randn(256, 32, generator=gen)
    net = om.nn.Sequential(om.nn.Linear(32, 64, generator=gen), om.nn.Tanh(), om.nn.Linear(64, 12, generator=gen))
    out = om.nn.functional.softplus(net(x)) + 0.05  # positive parameters
    a, b, c = out[:, :4], out[:, 4:8], out[:, 8:]
    counts = om.randint(0, 6, (256, 4), generator=gen).float()
    share = om.rand(256, 4, generator=gen) * 0.9 + 0.05
    loss = (
        om.lgamma(a).mean() + om.digamma(b + 1).mean() + om.polygamma(1, c + 0.5).mean() * 0.1 + om.polygamma(3, a + 1).mean() * 0.01
        + om.mvlgamma(a + 2, 3).mean() * 0.1
        - D.Gamma(a, b).log_prob(c).mean()
        - D.Beta(a, b).log_prob(share).mean()
        - D.Dirichlet(c).log_prob(share / share.sum(-1, keepdim=True)).mean()
        - D.Poisson(a).log_prob(counts).mean()
        + D.kl_divergence(D.Gamma(a, b), D.Gamma(b, c)).mean() + D.kl_divergence(D.Beta(a, c), D.Beta(b, a)).mean()
        + D.kl_divergence(D.Dirichlet(a), D.Dirichlet(c)).mean() + D.Gamma(a, b).entropy().mean() + D.Dirichlet(b).entropy().mean()
    )
    loss.backward()
    return [pp.grad.numpy() for pp in net.parameters()] + [loss.detach().reshape(1).numpy()]


def _gradients():
    gen = om.Generator().manual_seed(5)
    x = om.randn(256, 48, generator=gen)
    net = om.nn.Sequential(om.nn.Linear(48, 96, generator=gen), om.nn.Tanh(), om.nn.Linear(96, 4 + 10 + 8, generator=gen))
    out = net(x)
    loc, raw, rest = out[:, :4], out[:, 4:14], out[:, 14:]
    # A lower factor with a positive diagonal from 10 numbers per row.
    tril = om.zeros(256, 4, 4)
    rows, cols = om.tril_indices(4, 4)
    tril = tril.index_put((om.arange(256).unsqueeze(1), rows.unsqueeze(0), cols.unsqueeze(0)), raw)
    diag = om.arange(4)
    tril = tril - om.diag_embed(tril[:, diag, diag]) + om.diag_embed(om.nn.functional.softplus(tril[:, diag, diag]) + 0.1)
    cov = tril @ tril.mT
    target = om.randn(256, 4, generator=gen)
    p = D.MultivariateNormal(loc, covariance_matrix=cov)
    q = D.MultivariateNormal(om.zeros(4), scale_tril=om.eye(4) * 1.5)
    refit = om.linalg.cholesky(cov)
    inv = om.cholesky_inverse(refit)
    solved = om.cholesky_solve(target.unsqueeze(-1), refit).squeeze(-1)
    tri = om.linalg.solve_triangular(refit, target.unsqueeze(-1), upper=False, left=True).squeeze(-1)
    lap = D.Independent(D.Laplace(rest[:, :4], rest[:, 4:].exp() + 0.1), 1)
    ex = D.Exponential(rest[:, 4:].exp() + 0.1)
    loss = (
        -p.log_prob(target).mean()
        + D.kl_divergence(p, q).mean()
        + p.entropy().mean() * 1e-2
        + inv.sum() * 1e-3
        + solved.pow(2).mean() * 1e-2
        + tri.abs().mean() * 1e-2
        - lap.log_prob(target).mean()
        + D.kl_divergence(lap, D.Independent(D.Laplace(om.zeros(4), om.ones(4)), 1)).mean()
        - ex.log_prob(target.abs()).mean()
        + om.mode(om.round(rest * 2), 1).values.mean() * 1e-2
        + om.dist(loc, target, 3) * 1e-3
        + om.ldexp(rest, om.tensor([1, -1, 2, 0] * 2)).mean()
    )
    loss.backward()
    return [pp.grad.numpy() for pp in net.parameters()] + [loss.detach().reshape(1).numpy()]


def test_distributions_hash_is_pinned_on_every_path_and_thread_count():
    seen = exact_hashes(_gradients)
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == DISTRIBUTIONS_EXACT_SHA256


def test_the_graph_splits_over_threads():
    with om.compute.settings(mode="exact", threads=max(THREAD_COUNTS)):
        assert_splits(_gradients)


def test_gamma_family_hash_is_pinned_on_every_path_and_thread_count():
    seen = exact_hashes(_gamma_gradients)
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == GAMMA_EXACT_SHA256


def test_the_gamma_graph_splits_over_threads():
    with om.compute.settings(mode="exact", threads=max(THREAD_COUNTS)):
        assert_splits(_gamma_gradients)
