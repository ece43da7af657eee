"""Bit-identity of the operators added on 2026-12-06 (evening session)
(docs/engine.md, "Pinned gradient hashes"): linalg.cholesky,
solve_triangular, cholesky_solve / cholesky_inverse, MultivariateNormal,
Laplace, Exponential, Independent, kl_divergence, mode, dist and ldexp.
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
