"""GradientCheck on every differentiable operator of the tensor language
(selection, indexing, scatters, rearrangements, reductions, scans, sorting,
in-place writes under autograd), in both modes, with broadcasting, views
and repeated indices."""

import pytest

import onemodel as om
from onemodel.gradcheck import gradient_check

GEN = om.Generator().manual_seed(7)


def leaf(*shape, scale=1.0):
    return (om.randn(*shape, generator=GEN) * scale).requires_grad_()


def positive(*shape):
    return (om.rand(*shape, generator=GEN) + 0.5).requires_grad_()


def mask(*shape):
    return om.rand(*shape, generator=GEN) > 0.5


def strided(rows, cols):
    base = om.randn(cols * 2, rows, generator=GEN)
    return base[::2].t().detach().requires_grad_()


@pytest.fixture(params=["fast", "exact"])
def mode(request):
    om.compute.set_mode(request.param)
    return request.param


def _setitem_graph(x, v):
    y = x * 1.5
    y[[0, 2]] = v * 2.0
    y[om.tensor([[True, False, True, False]] * 3)] = 0.5
    return y * y


def _inplace_graph(x, w):
    h = x @ w
    h.mul_(2.0).add_(x[:, :3], alpha=0.5)
    h.relu_()
    return h * h


def _view_write(x):
    y = x * 2.0
    y[1].mul_(3.0)
    y[:, 2].masked_fill_(om.tensor([True, False, False]), 0.0)
    return y * y


CASES = {
    # selection
    "where_broadcast": (lambda a, b: om.where(om.tensor([[True], [False], [True]]), a, b), lambda: (leaf(3, 4), leaf(4))),
    "where_scalar": (lambda a: om.where(a > 0.2, a * a, 0.5), lambda: (leaf(3, 4),)),
    "masked_fill": (lambda a: a.masked_fill(om.tensor([True, False, True, False]), -1.0) * a, lambda: (strided(3, 4),)),
    "masked_fill_tensor_value": (lambda a, v: a.masked_fill(om.tensor([[True, False]]), v), lambda: (leaf(3, 2), leaf())),
    "clamp_tensor_bounds": (lambda a, lo, hi: om.clamp(a, lo, hi), lambda: (leaf(3, 5), leaf(5, scale=0.3) - 0.7, leaf(3, 1, scale=0.3) + 0.7)),
    "clamp_min_tensor": (lambda a, lo: a.clamp(min=lo), lambda: (leaf(4, 3), leaf(3))),
    "maximum_minimum": (lambda a, b: om.maximum(a, b) * om.minimum(a, b.t().t()), lambda: (leaf(3, 4), leaf(4))),
    "tril_triu": (lambda a: a.tril() * 2.0 + a.triu(1) * 3.0, lambda: (leaf(2, 4, 5),)),
    # indexing
    "getitem_lists": (lambda a: a[[0, 2, 2, 1]][:, [3, -1]] * a[1, [0, 0, 4]].sum(), lambda: (leaf(3, 5),)),
    "getitem_placement": (lambda a: a[0, :, [1, 2]] + a[1, :, [0, 0]], lambda: (leaf(2, 3, 4),)),
    "getitem_mask": (lambda a: a[a > 0.0] * 2.0, lambda: (leaf(4, 5),)),
    "getitem_tensor_index_strided": (lambda a: a[om.tensor([[0, 1], [1, 1]]), 1:], lambda: (strided(3, 4),)),
    "setitem_in_graph": (_setitem_graph, lambda: (leaf(3, 4), leaf(2, 4))),
    "gather": (lambda a: om.gather(a, 1, om.tensor([[0, 0, 2], [1, 3, 3], [2, 2, 2]])), lambda: (leaf(3, 4),)),
    "take_along_dim": (lambda a: om.take_along_dim(a, om.tensor([[1], [0], [1]]), 1), lambda: (leaf(3, 2),)),
    "index_select": (lambda a: a.index_select(1, om.tensor([2, 0, 2, 2])), lambda: (leaf(3, 4),)),
    "masked_select": (lambda a: a.masked_select(om.tensor([True, False, True])), lambda: (leaf(2, 3),)),
    # (No repeated target: a source that is overwritten still gets its
    # gradient as in torch, which a finite difference does not see.)
    "scatter": (lambda a, s: a.scatter(1, om.tensor([[2, 0], [1, 0]]), s), lambda: (leaf(2, 3), leaf(2, 2))),
    "scatter_add": (lambda a, s: om.scatter_add(a, 0, om.tensor([[0, 1, 0], [0, 0, 1]]), s), lambda: (leaf(2, 3), leaf(2, 3))),
    "scatter_reduce_sum_mean": (lambda a, s: a.scatter_reduce(0, om.tensor([[0, 1, 0], [0, 0, 1]]), s, "sum")
                                + a.scatter_reduce(0, om.tensor([[1, 1, 0], [0, 1, 1]]), s, "mean", include_self=False), lambda: (leaf(2, 3), leaf(2, 3))),
    "scatter_reduce_amax_prod": (lambda a, s: a.scatter_reduce(0, om.tensor([[0, 1, 0], [1, 0, 1]]), s, "amax")
                                 + a.scatter_reduce(0, om.tensor([[0, 1, 0], [1, 0, 1]]), s, "prod"), lambda: (leaf(2, 3), leaf(2, 3))),
    "index_add_copy_fill": (lambda a, s: a.index_add(0, om.tensor([1, 1, 0]), s, alpha=2.0) + a.index_copy(0, om.tensor([2, 0, 1]), s)
                            + a.index_fill(1, om.tensor([1]), 0.5), lambda: (leaf(3, 2), leaf(3, 2))),
    "index_put_accumulate": (lambda a, v: a.index_put((om.tensor([0, 2, 0]),), v, accumulate=True), lambda: (leaf(3, 2), leaf(3, 2))),
    # rearrangements
    "narrow_select_unbind": (lambda a: a.narrow(1, 1, 2) * a.select(1, 0).unsqueeze(1) + a.unbind(1)[3].unsqueeze(1), lambda: (leaf(3, 4),)),
    "flip_roll": (lambda a: a.flip(0) * a.roll(1, 1) + om.roll(a, (1, -2), (0, 1)), lambda: (leaf(3, 4),)),
    "repeat_tile": (lambda a: a.repeat(2, 1, 3) + om.tile(a, (2, 1, 3)), lambda: (leaf(2, 3),)),
    "repeat_interleave": (lambda a: a.repeat_interleave(2, dim=1) + a.repeat_interleave(om.tensor([1, 0, 3]), dim=1).sum(1, keepdim=True), lambda: (leaf(2, 3),)),
    # reductions, scans, sorting
    "max_min_dim": (lambda a: a.max(1).values * 2.0 + a.min(0, keepdim=True).values.sum(), lambda: (leaf(3, 4),)),
    "amax_amin": (lambda a: a.amax((0, 2)).sum() + a.amin(1), lambda: (leaf(2, 3, 4),)),
    "max_whole": (lambda a: a.max() * a.min(), lambda: (leaf(3, 3),)),
    "prod": (lambda a: a.prod(1) + a.prod(), lambda: (positive(3, 4),)),
    "var_std": (lambda a: a.var(1) + a.std(0, keepdim=True).sum() + a.var(correction=0), lambda: (leaf(4, 5),)),
    "norms": (lambda a: a.norm() + a.norm(dim=1).sum() + a.norm(1, dim=0).sum() + a.norm(3), lambda: (leaf(3, 4),)),
    "logsumexp": (lambda a: om.logsumexp(a * 3.0, 1), lambda: (leaf(3, 5),)),
    "cumsum_cumprod": (lambda a, b: a.cumsum(1) * 2.0 + b.cumprod(1), lambda: (leaf(3, 4), positive(3, 4))),
    "cummax": (lambda a: a.cummax(1).values, lambda: (leaf(3, 5),)),
    "sort_topk": (lambda a: a.sort(1, descending=True).values * om.arange(5.0) + a.topk(2, 0).values.sum(0, keepdim=True), lambda: (leaf(3, 5),)),
    "kthvalue_median": (lambda a: a.kthvalue(2, 1).values + a.median(1).values, lambda: (leaf(3, 5),)),
    # in-place writes under autograd
    "inplace_chain": (_inplace_graph, lambda: (leaf(4, 5), leaf(5, 3))),
    "inplace_through_views": (_view_write, lambda: (leaf(3, 4),)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_gradient_check(case, mode):
    fn, make = CASES[case]
    report = gradient_check(fn, make(), name=case)
    assert report.passed
    assert report.max_scaled_error <= 1.0
