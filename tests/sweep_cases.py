"""What a sweep of torch's general semantics found (programs and calls
beyond the named ones), as a case table for tools/tensor_oracle.py and
tests/test_tensor_torch.py (fixture testdata/tensor/sweep.npz). See
tests/tensor_cases.py for the Case protocol.

Zero-size tensors (torch: a tensor without elements is contiguous
whatever its strides, and a reduction refuses only an empty reduced set)
and 0-d tensors (torch: dim 0 and -1 name the one "dimension" of a 0-d
tensor, and reducing over it reduces nothing). Sums are rounded in
onemodel's order (docs/engine.md), so their cases allow 2e-6 of the
largest reference value; selections are bit for bit.
"""

from __future__ import annotations

import numpy as np

from tensor_cases import bools, ints, normal, registrar, ties

CASES: dict = {}
case = registrar(CASES)
P = 2e-6


def empty(rng, *shape):
    return np.zeros(shape, np.float32)


# ---------------------------------------------------------------------------
# Zero-size dims that are not reduced
# ---------------------------------------------------------------------------

case("empty_sum_last_dim", lambda r: [empty(r, 4, 0, 3)],
     lambda T, x: [x.sum(-1), x.sum(1), x.sum((0, 2), keepdim=True), x.mean(-1), T.sum(x, dim=0)], tol=P)
case("empty_norm_dims", lambda r: [empty(r, 4, 0, 3)], lambda T, x: [x.norm(dim=-1), T.linalg.vector_norm(x, dim=(0, 2)), x.norm(p=1, dim=0)], tol=P)
case("empty_var_std", lambda r: [empty(r, 0, 5)], lambda T, x: [x.var(1), x.std(dim=1, keepdim=True), T.var_mean(x, 1)[0]], tol=P)
case("empty_var_over_empty", lambda r: [empty(r, 0, 5)], lambda T, x: [x.var(0), x.std(0, correction=0)], tol=P)
case("empty_extrema_kept", lambda r: [empty(r, 0, 4)],
     lambda T, x: [x.amax(1), x.amin(dim=1, keepdim=True), x.max(1).values, x.max(1).indices, x.min(-1)[1], x.argmax(1), T.argmin(x, 1, keepdim=True)])
case("empty_extrema_over_empty_refused", lambda r: [empty(r, 0, 4)], lambda T, x: x.amax(0))
case("empty_argmax_whole_refused", lambda r: [empty(r, 0, 4)], lambda T, x: x.argmax())
case("empty_max_whole_refused", lambda r: [empty(r, 0, 4)], lambda T, x: x.max())
case("empty_logsumexp", lambda r: [empty(r, 0, 4)], lambda T, x: [T.logsumexp(x, 0), x.logsumexp(1), x.logsumexp(0, keepdim=True)], tol=P)
case("empty_prod_cumprod", lambda r: [empty(r, 0, 4)], lambda T, x: [x.prod(1), x.prod(0), x.cumprod(0), x.cumsum(1)], tol=P)
case("empty_softmax", lambda r: [empty(r, 0, 4), empty(r, 3, 0)],
     lambda T, x, y: [T.softmax(x, 0), x.log_softmax(1), y.softmax(-1), T.nn.functional.log_softmax(y, dim=0)], tol=P)
case("empty_layer_norm_batch", lambda r: [empty(r, 0, 6), normal(r, 6), normal(r, 6)],
     lambda T, x, w, b: T.nn.functional.layer_norm(x, (6,), w, b), tol=P)
case("empty_linear_batch", lambda r: [empty(r, 0, 3), normal(r, 2, 3), normal(r, 2)],
     lambda T, x, w, b: T.nn.functional.linear(x, w, b), tol=P)
case("empty_contiguous_views", lambda r: [empty(r, 4, 0, 3)],
     lambda T, x: [x.is_contiguous(), x.sum(-1).is_contiguous(), x.transpose(0, 2).is_contiguous(), x.view(0, 12).shape[1], x.transpose(0, 1).reshape(-1).shape[0]])
case("empty_int_reductions", lambda r: [np.zeros((3, 0), np.int64), np.zeros((0, 2), np.bool_)],
     lambda T, i, b: [i.sum(1), i.sum(0), i.prod(1), i.sum(), b.any(1), b.all(0), b.sum(0)], grad=False)

# ---------------------------------------------------------------------------
# 0-d tensors and dim 0 / -1
# ---------------------------------------------------------------------------

case("scalar_reduce_dim0", lambda r: [normal(r)],
     lambda T, s: [s.sum(0), s.sum(-1, keepdim=True), s.mean(0), T.mean(s, dim=-1), s.prod(0), s.amax(0), s.amin(-1), s.logsumexp(0),
                   s.nansum(0), s.nanmean(0), s.norm(dim=0), s.max(0).values, s.max(0).indices, s.argmax(0), s.cumsum(0), s.flip(0)], tol=P)
case("scalar_var_dim0", lambda r: [normal(r)], lambda T, s: [s.var(0), s.std(0, correction=0), s.var(-1, keepdim=True, correction=0)], tol=P)
case("scalar_bool_int_dim0", lambda r: [np.array(True), np.array(7, np.int64)],
     lambda T, b, i: [b.all(0), b.any(-1), i.sum(0), T.count_nonzero(i, 0), i.amax(0)], grad=False)
case("scalar_dim_out_of_range", lambda r: [normal(r)], lambda T, s: s.sum(1))

# ---------------------------------------------------------------------------
# Memory: repeat makes new memory; in-place writes into overlapping views
# ---------------------------------------------------------------------------


def _repeat_then_inplace(T, x):
    r = x.detach().repeat(2, 1, 1)  # a size-1 dim repeated: torch copies
    r.div_(4.0)
    s = x.detach().repeat(1, 1)  # all counts 1: still a copy
    s.add_(1.0)
    t = x.tile((2,))
    return [r, s, x, t * 2]


case("repeat_is_new_memory", lambda r: [normal(r, 1, 3)], _repeat_then_inplace)
case("repeat_grad", lambda r: [normal(r, 1, 3)], lambda T, x: [x.repeat(2, 2), x.repeat(3, 1, 1).mul(2)])
case("inplace_into_expanded_refused", lambda r: [normal(r, 1, 3)], lambda T, x: x.detach().expand(2, 3).div_(2.0), grad=False)
case("copy_into_expanded_refused", lambda r: [normal(r, 3)], lambda T, x: x.detach().expand(4, 3).copy_(T.ones(4, 3)), grad=False)
case("clamp_into_expanded_refused", lambda r: [normal(r, 3)], lambda T, x: x.detach().expand(4, 3).clamp_(0.0, 1.0), grad=False)
case("normal_into_expanded_refused", lambda r: [normal(r, 3)], lambda T, x: x.detach().expand(4, 3).normal_(), grad=False)


def _fills_into_expanded(T, x):
    base = x.detach().clone()
    e = base.expand(4, 3)
    e.fill_(2.0)
    e[0, 1] = 5.0  # torch writes given values through the overlap
    e.masked_fill_(T.tensor([[True, False, False]] * 4), -1.0)
    return [base, e.zero_(), base]


case("fills_into_expanded_allowed", lambda r: [normal(r, 3)], _fills_into_expanded, grad=False)
case("inplace_into_expanded_size1_ok", lambda r: [normal(r, 1, 3)], lambda T, x: [x.detach().expand(1, 3).mul_(2.0)], grad=False)

# ---------------------------------------------------------------------------
# torch.Tensor's legacy constructor
# ---------------------------------------------------------------------------

case("legacy_tensor_constructor", lambda r: [normal(r, 2)],
     lambda T, x: [T.Tensor(2, 3).shape[0], T.Tensor(2, 3).dtype == T.float32, T.Tensor([1, 2, 3]), T.Tensor([[1.5], [2]]),
                   T.Tensor().shape[0], T.Tensor(T.Size([4])).shape[0], T.Tensor(x.detach()) * 1, isinstance(T.Tensor(1), T.Tensor)], grad=False)

# ---------------------------------------------------------------------------
# Printing: torch's layout (integer, fixed and scientific modes, widths, wrapping, summaries)
# ---------------------------------------------------------------------------


def _reprs(T, *xs):
    # dtype names carry the module name (torch.int64 / onemodel.int64)
    return [repr(x.detach()).replace(T.__name__ + ".", "") for x in xs]


case("repr_float_modes", lambda r: [np.array([0.1, 0.9], np.float32), np.array([1.0, 2.0, -30.0], np.float32), np.array([1e-5, 1.0], np.float32),
                                    np.array([123456.0, 1.5], np.float32), np.array(3.25, np.float32), np.array([[1.5, -2.25], [3.0, 4.0]], np.float32),
                                    np.array([np.nan, np.inf, 1.0], np.float32), np.array([0.0, -0.0], np.float32), np.array([1e9, 2.0], np.float32),
                                    np.array([-np.inf, 0.5, np.nan], np.float32), np.array(np.nan, np.float32)],
     _reprs, grad=False)
case("repr_int_bool_empty", lambda r: [ints(r, -1000, 1000, 3, 4), bools(r, 2, 3), np.zeros((0, 3), np.float32), np.zeros(0, np.int64), np.array(7, np.int64)],
     _reprs, grad=False)
case("repr_wrap_and_summary", lambda r: [normal(r, 30), normal(r, 4, 12) * 100, np.arange(2000, dtype=np.float32).reshape(2, 1000), normal(r, 5, 3, 2),
                                        np.arange(1200, dtype=np.int64), normal(r, 1100) * 1e-3],
     _reprs, grad=False)
case("repr_grad_suffix_wrap", lambda r: [normal(r, 16)], lambda T, x: [repr(x), repr(x.detach().requires_grad_()), repr(x.long())], grad=False)
case("legacy_typed_constructors", lambda r: [np.array([[1, 2], [3, 4]], np.int64)],
     lambda T, i: [T.LongTensor([[1, 2], [3, 4]]), T.LongTensor(2, 3).shape[1], T.LongTensor(2, 3).dtype == T.int64, T.FloatTensor([1, 2]), T.FloatTensor(2).shape[0], T.BoolTensor([True, False]),
                   isinstance(i, T.LongTensor), isinstance(i, T.FloatTensor), isinstance(i.float(), T.FloatTensor), T.LongTensor(i),
                   T.LongTensor(np.array([5, 6], np.int32))], grad=False)
case("legacy_typed_constructor_of_other_dtype_refused", lambda r: [normal(r, 2)], lambda T, x: T.LongTensor(x.detach()), grad=False)

# ---------------------------------------------------------------------------
# Losses with int64 / bool targets (torch promotes them; BCE and kl_div refuse)
# ---------------------------------------------------------------------------

case("losses_int_targets", lambda r: [normal(r, 3, 4), normal(r, 3, 4), ints(r, -1, 2, 3, 4), np.array([1, -1, 1], np.int64)],
     lambda T, x, y, t, s: [T.nn.functional.mse_loss(x, t), T.nn.functional.l1_loss(x, t, reduction="sum"), T.nn.functional.smooth_l1_loss(x, t),
                            T.nn.functional.soft_margin_loss(x, t), T.nn.functional.hinge_embedding_loss(x, t),
                            T.nn.functional.margin_ranking_loss(x[:, 0], y[:, 0], s), T.nn.functional.cosine_embedding_loss(x, y, s),
                            T.nn.functional.poisson_nll_loss(x, t.abs()), T.nn.functional.multilabel_soft_margin_loss(x, t.abs()),
                            T.nn.functional.mse_loss(x, t > 0)], tol=P, no_grad=(1,))
# torch's huber_loss takes an int64 target forward but its backward then fails ("Found dtype
# Long but expected Float"); onemodel's backward runs, so the case compares the forward only.
case("huber_int_target_forward", lambda r: [normal(r, 3, 4), ints(r, -1, 2, 3, 4)],
     lambda T, x, t: T.nn.functional.huber_loss(x, t, delta=0.5), grad=False, tol=P)
case("bce_int_target_refused", lambda r: [normal(r, 3, 4), ints(r, 0, 2, 3, 4)], lambda T, x, t: T.nn.functional.binary_cross_entropy(x.sigmoid(), t))
case("bce_logits_int_target_refused", lambda r: [normal(r, 3, 4), ints(r, 0, 2, 3, 4)], lambda T, x, t: T.nn.functional.binary_cross_entropy_with_logits(x, t))
case("kl_div_int_target_refused", lambda r: [normal(r, 3, 4), ints(r, 0, 2, 3, 4)], lambda T, x, t: T.nn.functional.kl_div(x, t, reduction="batchmean"))
case("tensor_new_forms", lambda r: [normal(r, 2), ints(r, 0, 5, 3)],
     lambda T, x, i: [x.new((0, 2)), x.new([1.5, 2]), i.new((3, 4)), x.new(T.Size([2, 3])).shape[1], x.new(2, 3).shape[0], x.new().shape[0], i.new(2).dtype == T.int64],
     grad=False)
case("median_empty", lambda r: [empty(r, 0), empty(r, 0, 3)], lambda T, x, y: [x.median(), T.median(y), y.median(1).values, y.median(1).indices], grad=False)
case("median_empty_dim_refused", lambda r: [empty(r, 0, 3)], lambda T, y: y.median(0), grad=False)
case("pad_int_and_block_diag_int", lambda r: [ints(r, 0, 9, 2, 3), ints(r, 0, 9, 2)],
     lambda T, a, b: [T.nn.functional.pad(a, (1, 2)), T.nn.functional.pad(a, (0, 1, 1, 0), value=7), T.block_diag(a, b), T.nn.functional.pad(a > 4, (1, 1))], grad=False)


def _scalar_param_resume(T, x):
    p = T.nn.Parameter(x.detach().clone())
    opt = T.optim.Adam([p], lr=0.1)
    (p * p).backward()
    opt.step()
    q = T.nn.Parameter(p.detach().clone())
    opt2 = T.optim.Adam([q], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    (q * q).backward()
    opt2.step()
    opt3 = T.optim.Adam([q], lr=0.1)
    opt3.load_state_dict(opt2.state_dict())  # a second resume: the state keeps the 0-d shape
    s = opt3.state[q]
    return [q.detach(), s["exp_avg"], s["exp_avg_sq"]]


case("optimizer_state_of_0d_parameter", lambda r: [normal(r)], _scalar_param_resume, grad=False, tol=P)
case("tensordot_int_0d", lambda r: [ints(r, -3, 4, 3, 4), ints(r, -3, 4, 3, 4)], lambda T, a, b: [T.tensordot(a, b), T.tensordot(a, b, dims=([0, 1], [0, 1]))], grad=False)
case("cat_promotes_and_skips_empty", lambda r: [normal(r, 2, 3), ints(r, 0, 5, 1, 3), bools(r, 2, 3), np.zeros(0, np.float32)],
     lambda T, x, i, b, e: [T.cat([x, i]), T.cat([i, b]), T.stack([x, b]), T.cat([e, x]), T.cat([e, i, e]), T.cat((e, e)), T.cat([T.tensor([], dtype=T.long), i], 0)],
     no_grad=(3,))  # a skipped empty input passes no requires_grad on (docs/porting.md)
case("cat_shape_mismatch_refused", lambda r: [normal(r, 2, 3), normal(r, 2, 4)], lambda T, x, y: T.cat([x, y]))


def _copy_constant_into_graph(T, x):
    y = x * 2.0
    y.copy_(T.arange(4.0))  # a constant source: y still requires grad, x's gradient is zero
    z = x * 3.0
    z[1].copy_(T.tensor([5.0, 6.0, 7.0, 8.0]))
    return [y, z]


case("copy_constant_into_graph", lambda r: [normal(r, 3, 4)], _copy_constant_into_graph)


def _backward_inputs(T, x, w):
    a = x.detach().clone().requires_grad_()
    b = w.detach().clone().requires_grad_()
    h = a * b
    (h * h).sum().backward(inputs=[a], retain_graph=True)
    first = a.grad.clone()
    (h.exp()).sum().backward(inputs=(a, b))  # accumulates into a, fills b
    return [first, a.grad, b.grad, T.tensor(float(b.grad is not None))]


case("backward_inputs", lambda r: [normal(r, 3), normal(r, 3)], _backward_inputs, grad=False, tol=P)
case("backward_create_graph_false", lambda r: [normal(r, 3)],
     lambda T, x: (lambda a: ((a * a).sum().backward(create_graph=False, retain_graph=None), a.grad)[1])(x.detach().clone().requires_grad_()), grad=False, tol=P)


def _backward_twice_without_saved(T, x):
    a = x.detach().clone().requires_grad_()
    y = (a + 1.0).reshape(-1).mean()
    y.backward()
    y.backward()  # nothing was saved: torch runs it again
    return a.grad


case("backward_twice_without_saved", lambda r: [normal(r, 2, 3)], _backward_twice_without_saved, grad=False, tol=P)


def _backward_twice_through_mul_refused(T, x):
    a = x.detach().clone().requires_grad_()
    y = (a * a).sum()
    y.backward()
    y.backward()


case("backward_twice_through_mul_refused", lambda r: [normal(r, 3)], _backward_twice_through_mul_refused, grad=False)

# ---------------------------------------------------------------------------
# clamp_min_ / clamp_max_ / clip_, resize_ / resize_as_
# ---------------------------------------------------------------------------

case("clamp_min_max_inplace", lambda r: [normal(r, 3, 4), ints(r, -5, 5, 6)],
     lambda T, x, i: [x.clone().clamp_min_(-0.25), x.clone().clamp_max_(0.5), T.clamp_min_(x.clone(), 0.0), T.clamp_max_(x.clone(), T.tensor(0.1)),
                      T.clip_(x.clone(), -0.5, 0.5), i.clone().clamp_min_(0), i.clone().clamp_max_(2)], grad=False)


def _resize(T, x):
    a = x.detach().clone()
    smaller = a.clone().resize_(2, 2)        # the first four elements in storage order
    same = a.t().resize_(4, 3)               # the same sizes: unchanged, strides kept
    view = a[1:].resize_(3, 2)               # from the view's offset
    kept = a.t().contiguous().resize_((12,)) # a contiguous copy reinterpreted
    grow = a.clone().resize_(3, 5)
    return [smaller, same, same.stride(), view, kept, grow[:2], grow.shape, grow.is_contiguous(),
            a.clone().resize_as_(T.zeros(6, 2)), T.zeros(0).resize_(0, 3).shape]


case("resize_sizes_and_storage_order", lambda r: [normal(r, 3, 4)], _resize, grad=False)
case("resize_requires_grad_refused", lambda r: [normal(r, 3)], lambda T, x: x.detach().clone().requires_grad_().resize_(2))
case("resize_negative_refused", lambda r: [normal(r, 3)], lambda T, x: x.clone().resize_(-1, 2))


def _addcmul_into_alias(T, x, w):
    a = x.detach().clone().requires_grad_()
    y = a * 2.0
    d = y.detach()  # an alias of y that needs no gradient
    y.addcmul_(d, d, value=0.5)
    z = a * 3.0
    e = z.detach()
    z.addcdiv_(e, e + 4.0)
    (y * w).sum().backward()
    (z * w).sum().backward()
    return a.grad


case("addcmul_addcdiv_into_detached_alias", lambda r: [normal(r, 3), normal(r, 3)], _addcmul_into_alias, grad=False, tol=P)
