"""GradientCheck on every differentiable operator of the rest of the
tensor and nn surface (products, einsum, diagonals, stacking, statistics,
windows and strided views, index writes, pads, fold/unfold, the added
layers and losses), in both modes, with broadcasting and strided views."""

import pytest

import onemodel as om
import onemodel.nn.functional as F
from onemodel.gradcheck import gradient_check

from test_tensor_gradcheck import GEN, leaf, mode, positive, strided  # noqa: F401  (mode: the fast/exact fixture)


def _grid_points():
    """A grid whose unnormalised coordinates have fractional parts in
    [0.25, 0.75] (away from the kinks of bilinear interpolation, where a
    finite difference is one-sided), some outside the input."""
    import numpy as np

    rng = np.random.default_rng(5)
    ix = rng.integers(-1, 4, size=(2, 3, 5)) + rng.uniform(0.25, 0.75, size=(2, 3, 5))
    iy = rng.integers(-1, 3, size=(2, 3, 5)) + rng.uniform(0.25, 0.75, size=(2, 3, 5))
    g = np.stack([(2 * ix + 1) / 4 - 1, (2 * iy + 1) / 3 - 1], -1).astype(np.float32)
    return om.tensor(g, requires_grad=True)


def _grid_case(x, g, theta):
    return F.grid_sample(x, g, align_corners=False), F.affine_grid(theta, (2, 2, 3, 4), align_corners=True)


CASES = {
    # products
    "dot_mv_outer_inner": (lambda a, b, m: om.dot(a, b) * om.mv(m, a) + om.outer(b[:3], a).sum(1) + om.inner(m, m).sum(1)[:1],
                           lambda: (leaf(4), leaf(4), strided(3, 4))),
    "addmm_family": (lambda c, a, b: om.addmm(c, a, b, beta=0.5, alpha=2.0) + om.addr(c, a[:, 0], b[0], alpha=0.3),
                     lambda: (leaf(3, 1), leaf(3, 4), leaf(4, 2))),
    "baddbmm_addbmm": (lambda c, a, b: om.baddbmm(c, a, b, beta=0.7) + om.addbmm(c[0], a, b), lambda: (leaf(2, 3, 2), leaf(2, 3, 4), leaf(2, 4, 2))),
    "tensordot_kron": (lambda a, b: om.tensordot(a, b, dims=([1, 0], [0, 2])).sum(0) + om.kron(a[0], b[0, 0]).sum(), lambda: (leaf(3, 2), leaf(2, 4, 3))),
    "cross": (lambda a, b: om.cross(a, b, dim=1), lambda: (leaf(4, 3), leaf(1, 3))),
    "einsum_attention": (lambda q, k, v: om.einsum("bqd,bkd,bke->bqe", q, k, v), lambda: (leaf(2, 3, 4), leaf(2, 5, 4), leaf(2, 5, 2))),
    "einsum_diag_broadcast_ellipsis": (lambda a, b: om.einsum("...ii,...i->...i", a, b), lambda: (leaf(2, 3, 3), leaf(1, 3))),
    # diagonals
    "diagonal_diag_embed_trace": (lambda a, v: a.diagonal(1).sum() * om.diag_embed(v, -1) + om.trace(a) + om.diag(v, 1).sum(0),
                                  lambda: (leaf(3, 4), leaf(3))),
    "diagonal_scatter_fill": (lambda a, s: om.diagonal_scatter(a, s, 1) * (a * 1.0).fill_diagonal_(0.5), lambda: (leaf(3, 4), leaf(3))),
    "diagflat": (lambda a: om.diagflat(a, 1) * 2.0, lambda: (leaf(2, 2),)),
    # stacking, splitting, grids, windows
    "stacks": (lambda a, b: om.hstack([a, b]).sum(1, keepdim=True) * om.vstack([a, b]).sum(0) + om.dstack([a, b]).sum(2).sum(),
               lambda: (leaf(3, 2), leaf(3, 2))),
    "splits_meshgrid": (lambda a, b: sum(t.sum() * (i + 1) for i, t in enumerate(om.tensor_split(a, [1, 3], 1))) * om.meshgrid(b, b[:2], indexing="xy")[0],
                        lambda: (leaf(2, 5), leaf(3))),
    "cartesian_combinations": (lambda a: om.cartesian_prod(a, a[:2]).prod(1)[:3] + om.combinations(a, 2).prod(1), lambda: (leaf(3),)),
    "take_rot90_scatters": (lambda a, s: om.take(a, om.tensor([[0, 5], [5, 3]])).sum() + om.rot90(a, 1) .sum(1)[:1] * om.select_scatter(a, s, 0, 1)
                            + om.slice_scatter(a, s.unsqueeze(0), 0, 0, 1), lambda: (leaf(2, 3), leaf(3))),
    "unfold_overlapping": (lambda a: a.unfold(1, 3, 1) * a.unfold(1, 3, 1), lambda: (leaf(2, 6),)),
    "as_strided_overlap": (lambda a: om.as_strided(a, (3, 3), (1, 1)) * 2.0, lambda: (leaf(6),)),
    "put_index_reduce": (lambda a, s: a.put(om.tensor([1, 4, 1]), s, accumulate=True) + a.index_reduce(0, om.tensor([0, 0, 1]), s.reshape(3, 1).expand(3, 3) * 1.0, "mean"),
                         lambda: (leaf(2, 3), leaf(3))),
    # statistics
    "cdist_pdist": (lambda a, b: om.cdist(a, b) + om.cdist(a, b, p=1) + om.pdist(a).sum(), lambda: (leaf(3, 2), leaf(4, 2))),
    "cov_corrcoef": (lambda a, w: om.cov(a, aweights=w) + om.corrcoef(a), lambda: (leaf(3, 6), positive(6))),
    "diff_trapezoid": (lambda y, x: om.diff(y, 2, prepend=y[:, :1]) .sum() + om.trapezoid(y, x.sort().values) + om.cumulative_trapezoid(y, dx=0.5).sum(1),
                       lambda: (leaf(3, 5), leaf(5))),
    "logcumsumexp": (lambda a: om.logcumsumexp(a * 2.0, 1), lambda: (leaf(3, 5),)),
    "nanmedian_renorm_vander": (lambda a, v: om.nanmedian(a, 1).values + om.renorm(a, 2, 0, 1.0).sum(1) + om.vander(v, 3).sum(1), lambda: (leaf(3, 5), leaf(3))),
    "quantile_nanquantile": (lambda a: om.quantile(a, om.tensor([0.2, 0.7]), 1).sum(0) + om.nanquantile(a, 0.4, 0, interpolation="midpoint").sum(),
                             lambda: (leaf(3, 5),)),
    "matrix_norms": (lambda a: om.linalg.matrix_norm(a, 1) + om.linalg.matrix_norm(a, -float("inf")) * 2 + om.linalg.norm(a, float("inf")) * 3,
                     lambda: (leaf(3, 4),)),
    # layers and losses
    "conv_transpose3d": (lambda x, w, b: F.conv_transpose3d(x, w, b, 2, 1, 1, 2), lambda: (leaf(1, 4, 2, 2, 2), leaf(4, 1, 2, 2, 2), leaf(2))),
    "trilinear_nearest_5d": (lambda x: F.interpolate(x, size=(3, 4, 3), mode="trilinear") + F.interpolate(x, size=(3, 4, 3), mode="nearest"),
                             lambda: (leaf(1, 2, 2, 3, 2),)),
    "pads": (lambda a: F.pad(a, (2, 1, 1, 2), "reflect").mean() * F.pad(a, (1, 3, 0, 0), "replicate")[..., :4] + F.pad(a, (2, 2, 1, 0), "circular")[..., 1:, 1:5],
             lambda: (leaf(1, 2, 3, 4),)),
    "fold_unfold": (lambda a: F.fold(F.unfold(a, 2, padding=1, stride=1) * 1.5, (3, 4), 2, padding=1), lambda: (leaf(1, 2, 3, 4),)),
    "rms_norm_lrn": (lambda a, w: F.rms_norm(a, (4,), w) + F.local_response_norm(a, 3, alpha=0.5), lambda: (leaf(2, 3, 4), positive(4))),
    "lp_pool_unpool": (lambda a: F.lp_pool2d(a, 2, 2) .sum() + F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2),
                       lambda: (positive(1, 2, 4, 4),)),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c), lambda: (leaf(3, 2), leaf(3, 4), leaf(5, 2, 4), leaf(5))),
    "grid_sample_affine_grid": (_grid_case, lambda: (leaf(2, 2, 3, 4), _grid_points(), leaf(2, 2, 3))),
    "margin_losses": (lambda a: F.multi_margin_loss(a, om.tensor([0, 2, 1]), p=2, margin=0.5) + F.multilabel_margin_loss(a, om.tensor([[1, -1, 0], [0, 2, -1], [2, 1, 0]])),
                      lambda: (leaf(3, 3),)),
    "addmv_vdot": (lambda c, m, v: om.addmv(c, m, v, beta=2.0, alpha=0.5) * om.vdot(v, v), lambda: (leaf(3), leaf(3, 4), leaf(4))),
    "block_column_atleast_broadcast": (lambda a, b: om.block_diag(a, b).sum(0) [:3] + om.column_stack([b, b]).sum(1) [:1] + om.atleast_3d(a).sum()
                                       + om.broadcast_tensors(a, b[:1])[1].sum(0), lambda: (leaf(2, 3), leaf(3))),
    "distributions": (lambda logits, loc, scale: om.distributions.Categorical(logits=logits).log_prob(om.tensor([0, 2])) * om.distributions.Categorical(logits=logits).entropy()
                      + om.distributions.Normal(loc, scale).log_prob(om.tensor([0.5, -1.0])) + om.distributions.Bernoulli(logits=loc).entropy(),
                      lambda: (leaf(2, 3), leaf(2), positive(2))),
    "interpolate_modes": (lambda a, b: F.interpolate(a, size=(5, 3), mode="bicubic", align_corners=False).sum(3)
                          + F.interpolate(a, size=(5, 4), mode="nearest-exact").sum(3) + F.interpolate(a, size=(5, 2), mode="area").sum(3)
                          + F.interpolate(b, size=5, mode="linear", align_corners=True), lambda: (leaf(1, 2, 3, 4), leaf(1, 2, 3))),
    "volumetric": (lambda x, w, b: (F.conv3d(x, w, b, padding=1), F.max_pool3d(x, 2, stride=1), F.avg_pool3d(x, 2, padding=1, count_include_pad=False),
                                    F.adaptive_avg_pool3d(x, 2), F.adaptive_max_pool3d(x, (1, 2, 2))),
                   lambda: (leaf(1, 2, 3, 3, 3), leaf(2, 2, 2, 2, 2, scale=0.5), leaf(2))),
    "lu_solvers": (lambda a, b: (om.linalg.inv(a), om.linalg.det(a), om.linalg.slogdet(a).logabsdet, om.linalg.solve(a, b), om.linalg.matrix_power(a, 3)),
                   lambda: ((om.randn(3, 3, generator=GEN) + om.eye(3) * 3.0).requires_grad_(), leaf(3, 2))),
    "gaussian_nll": (lambda a, t, v: F.gaussian_nll_loss(a, t, v, full=True), lambda: (leaf(4, 2), om.randn(4, 2, generator=GEN), positive(4, 1))),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report.passed
    assert report.max_scaled_error <= 1.0
