"""The rest of torch's tensor surface (products, einsum, diagonals,
stacking and splitting, search and counts, statistics, Tensor extras), as
a case table for tools/tensor_oracle.py and tests/test_tensor_torch.py
(fixture testdata/tensor/breadth.npz). See tests/tensor_cases.py for the
Case protocol.

Tolerances: products and sums are rounded in a different order from
torch's BLAS and vectorised loops (onemodel's order: docs/engine.md, "Arithmetic rules"), so
their cases allow 2e-6 of the largest reference value (a few ulp of a sum
of ~16 terms); copies, views, selections and integer results are bit for
bit (tol None).
"""

from __future__ import annotations

import numpy as np

from tensor_cases import bools, ints, normal, registrar, special, ties

CASES: dict = {}
case = registrar(CASES)
P = 2e-6  # products and sums (see the module docstring)


def pos(rng, *shape):
    return (rng.random(shape) + 0.5).astype(np.float32)


# ---------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------

case("dot_vdot", lambda r: [normal(r, 7), normal(r, 7)], lambda T, a, b: [T.dot(a, b), a.dot(b), T.vdot(a, b)], tol=P)
case("dot_empty", lambda r: [normal(r, 0), normal(r, 0)], lambda T, a, b: T.dot(a, b), tol=P)
case("dot_length_mismatch", lambda r: [normal(r, 3), normal(r, 4)], lambda T, a, b: T.dot(a, b))
case("dot_2d_refused", lambda r: [normal(r, 2, 3), normal(r, 3)], lambda T, a, b: T.dot(a, b))
case("mv", lambda r: [normal(r, 4, 6), normal(r, 6)], lambda T, m, v: [T.mv(m, v), m.mv(v), T.mv(m.t().t(), v)], tol=P)
case("mv_transposed_view", lambda r: [normal(r, 6, 4), normal(r, 6)], lambda T, m, v: T.mv(m.t(), v), tol=P)
case("mv_mismatch", lambda r: [normal(r, 4, 6), normal(r, 5)], lambda T, m, v: T.mv(m, v))
case("outer_ger", lambda r: [special(r, 5), normal(r, 3)], lambda T, a, b: [T.outer(a, b), T.ger(b, a), a.outer(b)])
case("outer_signed_zero", lambda r: [np.array([0.0, -0.0, 1.0], np.float32), np.array([-1.0, 2.0], np.float32)], lambda T, a, b: T.outer(a, b))
case("inner", lambda r: [normal(r, 2, 3, 5), normal(r, 4, 5)], lambda T, a, b: [T.inner(a, b), T.inner(a[0, 0], b[1])], tol=P)
case("inner_scalar", lambda r: [normal(r), normal(r, 3, 2)], lambda T, a, b: T.inner(a, b), tol=P)
case("addmm", lambda r: [normal(r, 3, 5), normal(r, 3, 4), normal(r, 4, 5)],
     lambda T, c, a, b: [T.addmm(c, a, b), T.addmm(c, a, b, beta=0.5, alpha=-2.0), c.addmm(a, b, alpha=3)], tol=P)
case("addmm_broadcast_bias", lambda r: [normal(r, 5), normal(r, 3, 4), normal(r, 4, 5)], lambda T, c, a, b: T.addmm(c, a, b), tol=P)
case("addmm_beta_zero_ignores_nan", lambda r: [np.full((2, 3), np.nan, np.float32), normal(r, 2, 4), normal(r, 4, 3)],
     lambda T, c, a, b: T.addmm(c, a, b, beta=0), tol=P, no_grad=(0,))
case("addmm_bad_shapes", lambda r: [normal(r, 3, 5), normal(r, 3, 4), normal(r, 3, 5)], lambda T, c, a, b: T.addmm(c, a, b))
case("addmv_addr", lambda r: [normal(r, 4), normal(r, 4, 3), normal(r, 3), normal(r, 4, 3), normal(r, 4), normal(r, 3)],
     lambda T, c, m, v, c2, x, y: [T.addmv(c, m, v, beta=2.0), T.addr(c2, x, y, alpha=0.5), c2.addr(x, y)], tol=P)
case("baddbmm", lambda r: [normal(r, 2, 3, 5), normal(r, 2, 3, 4), normal(r, 2, 4, 5)],
     lambda T, c, a, b: [T.baddbmm(c, a, b), T.baddbmm(c[0], a, b, beta=0.25, alpha=1.5), c.baddbmm(a, b)], tol=P)
case("baddbmm_batch_mismatch", lambda r: [normal(r, 2, 3, 5), normal(r, 2, 3, 4), normal(r, 3, 4, 5)], lambda T, c, a, b: T.baddbmm(c, a, b))
case("addbmm", lambda r: [normal(r, 3, 5), normal(r, 4, 3, 2), normal(r, 4, 2, 5)],
     lambda T, c, a, b: [T.addbmm(c, a, b), T.addbmm(c, a, b, beta=0.0, alpha=2.0)], tol=P)
case("addmm_inplace_graph", lambda r: [normal(r, 3, 5), normal(r, 3, 4), normal(r, 4, 5)],
     lambda T, c, a, b: (lambda y: (y.addmm_(a, b, beta=0.5), y * 2)[1])(c * 1.0), tol=P)
case("tensordot_int_dims", lambda r: [normal(r, 3, 4, 5), normal(r, 4, 5, 2)], lambda T, a, b: [T.tensordot(a, b, dims=2), T.tensordot(a, b, 0).sum(), T.tensordot(a[0], b[0], 1)], tol=P)
case("tensordot_lists", lambda r: [normal(r, 3, 4, 5), normal(r, 5, 3, 2)],
     lambda T, a, b: [T.tensordot(a, b, dims=([0, 2], [1, 0])), T.tensordot(a, b, dims=([-1], [0]))], tol=P)
case("tensordot_size_mismatch", lambda r: [normal(r, 3, 4), normal(r, 3, 4)], lambda T, a, b: T.tensordot(a, b, dims=([0], [1])))
case("kron", lambda r: [normal(r, 2, 3), normal(r, 3, 2)], lambda T, a, b: [T.kron(a, b), T.kron(a[0], b), a.kron(b[0])])
case("kron_int", lambda r: [ints(r, -3, 4, 2, 2), ints(r, -3, 4, 3)], lambda T, a, b: T.kron(a, b), grad=False)
case("cross", lambda r: [normal(r, 4, 3), normal(r, 4, 3)], lambda T, a, b: [T.cross(a, b, dim=1), T.linalg.cross(a, b), a.cross(b, dim=-1)], tol=P)
case("cross_broadcast_dim0", lambda r: [normal(r, 3, 5), normal(r, 3, 1)], lambda T, a, b: T.cross(a, b, dim=0), tol=P)
case("cross_bad_size", lambda r: [normal(r, 4, 2), normal(r, 4, 2)], lambda T, a, b: T.cross(a, b, dim=1))
case("matmul_family_special", lambda r: [special(r, 3, 4), normal(r, 4, 2)], lambda T, a, b: [T.mm(a, b), T.addmm(b[:1, :], a, b)], tol=P)

# ---------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------

case("einsum_matmul", lambda r: [normal(r, 3, 4), normal(r, 4, 5)], lambda T, a, b: [T.einsum("ij,jk->ik", a, b), T.einsum("ij,jk", a, b), T.einsum("ij,kj->ik", a, b.t())], tol=P)
case("einsum_batched_attention", lambda r: [normal(r, 2, 3, 5, 4), normal(r, 2, 3, 6, 4), normal(r, 2, 3, 6, 4)],
     lambda T, q, k, v: T.einsum("bhqk,bhkd->bhqd", T.softmax(T.einsum("bhqd,bhkd->bhqk", q, k) * 0.5, dim=-1), v), tol=P)
case("einsum_trace_diag_sum", lambda r: [normal(r, 4, 4), normal(r, 3, 4)],
     lambda T, a, b: [T.einsum("ii", a), T.einsum("ii->i", a), T.einsum("ij->", b), T.einsum("ij->j", b), T.einsum("ji", b)], tol=P)
case("einsum_outer_and_hadamard", lambda r: [special(r, 3), normal(r, 4), normal(r, 3, 4), normal(r, 3, 4)],
     lambda T, a, b, c, d: [T.einsum("i,j->ij", a, b), T.einsum("ij,ij->ij", c, d), T.einsum("ij,ij->", c, d)], tol=P)
case("einsum_ellipsis", lambda r: [normal(r, 2, 3, 4, 5), normal(r, 5, 6)],
     lambda T, a, b: [T.einsum("...ij,jk->...ik", a, b), T.einsum("b...j,jk->b...k", a, b), T.einsum("...j->...", a)], tol=P)
case("einsum_ellipsis_broadcast", lambda r: [normal(r, 2, 1, 3, 4), normal(r, 5, 4, 2)], lambda T, a, b: T.einsum("...ij,...jk->...ik", a, b), tol=P)
case("einsum_three_operands", lambda r: [normal(r, 3, 4), normal(r, 4, 5), normal(r, 5, 2)],
     lambda T, a, b, c: [T.einsum("ij,jk,kl->il", a, b, c), T.einsum("ij,jk,kl", [a, b, c])], tol=P)
case("einsum_bilinear", lambda r: [normal(r, 4, 3), normal(r, 6, 3, 5), normal(r, 4, 5)],
     lambda T, x1, w, x2: T.einsum("bi,oij,bj->bo", x1, w, x2), tol=P)
case("einsum_size_one_broadcast", lambda r: [normal(r, 1, 4), normal(r, 3, 4)], lambda T, a, b: [T.einsum("ij,ij->ij", a, b), T.einsum("ij,ij->i", a, b)], tol=P)
case("einsum_repeated_in_operand_and_output", lambda r: [normal(r, 3, 3, 2), normal(r, 2, 4)], lambda T, a, b: T.einsum("iij,jk->ik", a, b), tol=P)
case("einsum_sublist", lambda r: [normal(r, 3, 4), normal(r, 4, 2)], lambda T, a, b: T.einsum(a, [0, 1], b, [1, 2], [0, 2]), tol=P)
case("einsum_uppercase_order", lambda r: [normal(r, 2, 3), normal(r, 3, 4)], lambda T, a, b: T.einsum("aB,Bc", a, b), tol=P)
case("einsum_zero_size", lambda r: [normal(r, 3, 0), normal(r, 0, 4)], lambda T, a, b: T.einsum("ij,jk->ik", a, b), tol=P)
case("einsum_bad_subscripts", lambda r: [normal(r, 3, 4)], lambda T, a: T.einsum("ijk->i", a))
case("einsum_bad_sizes", lambda r: [normal(r, 3, 4), normal(r, 5, 2)], lambda T, a, b: T.einsum("ij,jk->ik", a, b))
case("einsum_output_not_in_input", lambda r: [normal(r, 3, 4)], lambda T, a: T.einsum("ij->ik", a))

# ---------------------------------------------------------------------------
# Diagonals
# ---------------------------------------------------------------------------

case("diagonal_views", lambda r: [normal(r, 4, 5)],
     lambda T, x: [T.diagonal(x), x.diagonal(1), x.diagonal(-2), T.diagonal(x, 7), x.diagonal(0, 1, 0), x.t().diagonal(1)])
case("diagonal_batched_dims", lambda r: [normal(r, 2, 3, 4)], lambda T, x: [T.diagonal(x, 0, 1, 2), T.diagonal(x, 1, -1, 0), x.diagonal(dim1=-2, dim2=-1, offset=-1)])
case("diagonal_is_view", lambda r: [normal(r, 3, 3)], lambda T, x: (lambda y: (y.diagonal().mul_(2.0), y)[1])(x * 1.0))
case("diagonal_same_dims", lambda r: [normal(r, 3, 3)], lambda T, x: T.diagonal(x, 0, 1, 1))
case("diag_1d_2d", lambda r: [special(r, 4), normal(r, 3, 5)], lambda T, v, m: [T.diag(v), T.diag(v, 2), T.diag(v, -1), T.diag(m), T.diag(m, 1), m.diag(-2), v.diag()])
case("diag_int", lambda r: [ints(r, -5, 5, 3), ints(r, -5, 5, 3, 3)], lambda T, v, m: [T.diag(v), T.diag(m, -1), T.trace(m)], grad=False)
case("diag_3d_refused", lambda r: [normal(r, 2, 2, 2)], lambda T, x: T.diag(x))
case("diag_embed", lambda r: [normal(r, 2, 3)], lambda T, x: [T.diag_embed(x), T.diag_embed(x, 1), T.diag_embed(x, -1, 0, 2), x.diag_embed(dim1=0, dim2=1)])
case("diagflat", lambda r: [normal(r, 2, 2)], lambda T, x: [T.diagflat(x), T.diagflat(x, -1), x.diagflat(2)])
case("trace", lambda r: [normal(r, 3, 5)], lambda T, x: [T.trace(x), x.trace(), T.trace(x.t())], tol=P)
case("trace_1d_refused", lambda r: [normal(r, 3)], lambda T, x: T.trace(x))
case("diagonal_scatter", lambda r: [normal(r, 3, 4), normal(r, 3), normal(r, 2)],
     lambda T, x, s, s1: [T.diagonal_scatter(x, s), T.diagonal_scatter(x, s1, 2), x.diagonal_scatter(s1, -1)])
case("fill_diagonal", lambda r: [normal(r, 3, 3), normal(r, 7, 3), normal(r, 3, 3, 3)],
     lambda T, a, b, c: [a.clone().fill_diagonal_(5.0), b.clone().fill_diagonal_(-1.0), b.clone().fill_diagonal_(2.0, wrap=True), c.clone().fill_diagonal_(0.0)])
case("fill_diagonal_wide", lambda r: [normal(r, 3, 6)], lambda T, a: [a.clone().fill_diagonal_(1.5), a.clone().fill_diagonal_(1.5, True)])
case("fill_diagonal_graph", lambda r: [normal(r, 4, 4)], lambda T, a: (lambda y: (y.fill_diagonal_(0.0), y * y)[1])(a * 2.0))
case("tri_indices", lambda r: [], lambda T: [T.tril_indices(4, 3), T.triu_indices(4, 3), T.tril_indices(3, 5, 1), T.triu_indices(3, 5, -1), T.tril_indices(0, 3), T.triu_indices(3, 3, 4)], grad=False)

# ---------------------------------------------------------------------------
# Stacking, splitting, grids
# ---------------------------------------------------------------------------

case("hstack_vstack_dstack", lambda r: [normal(r, 3), normal(r, 2), normal(r, 2, 3), normal(r, 1, 3)],
     lambda T, a, b, m, n: [T.hstack([a, b]), T.hstack((m, m)), T.vstack([a, m, n]), T.row_stack([m, a]), T.dstack([a, a]), T.dstack([m, n.expand(2, 3)]), T.column_stack([a, m.t()])])
case("stack_family_scalars", lambda r: [normal(r), normal(r)], lambda T, a, b: [T.hstack([a, b]), T.vstack([a, b]), T.dstack([a, b]), T.column_stack([a, b])])
case("concat_aliases", lambda r: [normal(r, 2, 3), normal(r, 1, 3)], lambda T, a, b: [T.concat([a, b]), T.concatenate([a, b], axis=0), T.concat((a.t(), b.t()), dim=-1)])
case("hstack_mismatch", lambda r: [normal(r, 2, 3), normal(r, 3, 3)], lambda T, a, b: T.hstack([a, b]))
case("atleast", lambda r: [normal(r), normal(r, 3), normal(r, 2, 3), normal(r, 1, 2, 3)],
     lambda T, s, v, m, c: [T.atleast_1d(s), T.atleast_2d(s), T.atleast_3d(s), T.atleast_2d(v), T.atleast_3d(v), T.atleast_3d(m), T.atleast_1d(c), *T.atleast_2d(s, v), *T.atleast_3d([m, c])])
case("tensor_split_sections", lambda r: [normal(r, 7, 2)], lambda T, x: [*T.tensor_split(x, 3), *x.tensor_split(2, dim=1), *T.tensor_split(x, 9)])
case("tensor_split_indices", lambda r: [normal(r, 7, 2)], lambda T, x: [*T.tensor_split(x, [1, 5]), *T.tensor_split(x, (6, 2, 9)), *T.tensor_split(x, [-2], dim=0), *T.tensor_split(x, T.tensor([1, 1]))])
case("tensor_split_zero_sections", lambda r: [normal(r, 4)], lambda T, x: T.tensor_split(x, 0))
case("hsplit_vsplit_dsplit", lambda r: [normal(r, 4, 6, 2), normal(r, 6)],
     lambda T, x, v: [*T.hsplit(x, 3), *T.vsplit(x, [1, 3]), *T.dsplit(x, 2), *T.hsplit(v, [2, 4]), *x.hsplit(2)])
case("hsplit_not_divisible", lambda r: [normal(r, 4, 5)], lambda T, x: T.hsplit(x, 2))
case("vsplit_1d_refused", lambda r: [normal(r, 4)], lambda T, x: T.vsplit(x, 2))
case("meshgrid", lambda r: [normal(r, 3), normal(r, 4), normal(r, 2)],
     lambda T, a, b, c: [*T.meshgrid(a, b, indexing="ij"), *T.meshgrid(a, b, indexing="xy"), *T.meshgrid([a, b, c], indexing="xy"), *T.meshgrid(a, indexing="ij")])
case("meshgrid_int_scalar", lambda r: [ints(r, 0, 9, 3), ints(r, 0, 9)], lambda T, a, s: [*T.meshgrid(a, s, indexing="ij")], grad=False)
case("meshgrid_2d_refused", lambda r: [normal(r, 2, 2)], lambda T, a: T.meshgrid(a, a, indexing="ij"))
case("broadcast_tensors", lambda r: [normal(r, 3, 1), normal(r, 4), normal(r)], lambda T, a, b, c: [*T.broadcast_tensors(a, b, c)])
case("broadcast_tensors_mismatch", lambda r: [normal(r, 3), normal(r, 4)], lambda T, a, b: T.broadcast_tensors(a, b))
case("cartesian_prod", lambda r: [normal(r, 3), normal(r, 2), normal(r, 2)], lambda T, a, b, c: [T.cartesian_prod(a, b), T.cartesian_prod(a, b, c), T.cartesian_prod(a)])
case("combinations", lambda r: [normal(r, 4)], lambda T, x: [T.combinations(x), T.combinations(x, 3), T.combinations(x, 2, with_replacement=True), T.combinations(x, 5), T.combinations(x, 0)])
case("combinations_int", lambda r: [ints(r, 0, 9, 4)], lambda T, x: T.combinations(x, with_replacement=True), grad=False)
case("ravel_take", lambda r: [normal(r, 3, 4), ints(r, -12, 12, 2, 3)], lambda T, x, i: [T.ravel(x.t()), x.ravel(), T.take(x, i), x.t().take(i), T.take(x, T.tensor([5, 5, 5]))])
case("take_out_of_range", lambda r: [normal(r, 2, 2)], lambda T, x: T.take(x, T.tensor([4])))
case("rot90", lambda r: [normal(r, 2, 3, 4)], lambda T, x: [T.rot90(x), T.rot90(x, 2), T.rot90(x, -1, [1, 2]), x.rot90(3, [2, 0]), T.rot90(x, 4)])
case("rot90_same_dims", lambda r: [normal(r, 2, 3)], lambda T, x: T.rot90(x, 1, [0, 0]))
case("select_slice_scatter", lambda r: [normal(r, 3, 5), normal(r, 5), normal(r, 3, 2), normal(r, 3)],
     lambda T, x, s, t, u: [T.select_scatter(x, s, 0, 1), T.select_scatter(x, u, 1, -1), T.slice_scatter(x, t, 1, 1, 5, 2), x.slice_scatter(t, dim=1, start=3), T.slice_scatter(x, x * 2)])
case("slice_scatter_bad_shape", lambda r: [normal(r, 3, 5), normal(r, 3, 3)], lambda T, x, t: T.slice_scatter(x, t, 1, 0, 2))
case("narrow_copy", lambda r: [normal(r, 4, 5)], lambda T, x: [T.narrow_copy(x, 1, 1, 3), x.narrow_copy(0, 2, 2)], grad=False)
case("block_diag", lambda r: [normal(r, 2, 2), normal(r, 3), normal(r), normal(r, 1, 2)], lambda T, a, b, c, d: [T.block_diag(a, b, c, d), T.block_diag(a)])
case("block_diag_mixed_dtypes", lambda r: [ints(r, 0, 5, 2, 2), normal(r, 1, 2)], lambda T, a, b: T.block_diag(a, b))

# ---------------------------------------------------------------------------
# Search and counts
# ---------------------------------------------------------------------------

case("searchsorted", lambda r: [np.sort(normal(r, 6)), special(r, 3, 4)],
     lambda T, s, v: [T.searchsorted(s, v), T.searchsorted(s, v, right=True), T.searchsorted(s, v, side="right"), T.searchsorted(s, 0.25)], grad=False)
case("searchsorted_ties_batched", lambda r: [np.array([[0, 1, 1, 1, 3], [-2, -2, 0, 5, 5]], np.float32), ties(r, 2, 6)],
     lambda T, s, v: [T.searchsorted(s, v), T.searchsorted(s, v, right=True)], grad=False)
case("searchsorted_int_sorter", lambda r: [np.array([5, 1, 3, 9, 7], np.int64), ints(r, 0, 11, 6)],
     lambda T, s, v: [T.searchsorted(s, v, sorter=T.argsort(s)), T.searchsorted(s, v, sorter=T.argsort(s), side="right")], grad=False)
case("searchsorted_nan_boundaries", lambda r: [np.array([1.0, 2.0, np.nan], np.float32), np.array([0.0, 1.5, 3.0, np.nan, np.inf], np.float32)],
     lambda T, s, v: [T.searchsorted(s, v), T.searchsorted(s, v, right=True)], grad=False)
case("searchsorted_side_conflict", lambda r: [np.sort(normal(r, 4)), normal(r, 3)], lambda T, s, v: T.searchsorted(s, v, right=True, side="left"), grad=False)
case("searchsorted_shape_mismatch", lambda r: [np.sort(normal(r, 2, 4), axis=1), normal(r, 3, 3)], lambda T, s, v: T.searchsorted(s, v), grad=False)
case("bucketize", lambda r: [special(r, 3, 5), np.array([-1.0, 0.0, 0.5, 2.0], np.float32)],
     lambda T, x, b: [T.bucketize(x, b), T.bucketize(x, b, right=True), T.bucketize(1.0, b)], grad=False)
case("bincount", lambda r: [ints(r, 0, 6, 20), normal(r, 20)],
     lambda T, x, w: [T.bincount(x), T.bincount(x, w), T.bincount(x, minlength=10), x.bincount(w, 3), T.bincount(x[:0])], grad=False, tol=P)
case("bincount_negative", lambda r: [np.array([0, -1, 2], np.int64)], lambda T, x: T.bincount(x), grad=False)
case("bincount_2d_refused", lambda r: [ints(r, 0, 3, 2, 2)], lambda T, x: T.bincount(x), grad=False)
case("histc", lambda r: [special(r, 30), normal(r, 50)],
     lambda T, x, y: [T.histc(y), T.histc(y, bins=7, min=-1.0, max=1.0), y.histc(4, -0.5, 0.5), T.histc(x, bins=5, min=-2, max=2), T.histc(y[:1], bins=3)], grad=False)
case("histc_edges", lambda r: [np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.0, -0.0, 0.1, 0.3, 0.7], np.float32)], lambda T, x: [T.histc(x, bins=4, min=0, max=1), T.histc(x, bins=3, min=0, max=1), T.histc(x, bins=10)], grad=False)
case("isin", lambda r: [ties(r, 3, 4), np.array([0.0, 2.0, np.nan, -3.0], np.float32), ints(r, 0, 5, 6)],
     lambda T, x, t, i: [T.isin(x, t), T.isin(x, t, invert=True), T.isin(i, T.tensor([1, 3])), T.isin(i, 2), T.isin(3, i), T.isin(x, t, assume_unique=True)], grad=False)
case("isin_special", lambda r: [special(r, 10), special(r, 4)], lambda T, x, t: T.isin(x, t), grad=False)
case("unique_consecutive", lambda r: [np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64), np.array([0.0, 0.0, np.nan, np.nan, -0.0, 0.0, 1.0], np.float32)],
     lambda T, a, f: [T.unique_consecutive(a), *T.unique_consecutive(a, return_inverse=True, return_counts=True), *T.unique_consecutive(f, return_counts=True), a.unique_consecutive()], grad=False)
case("unique_consecutive_dim", lambda r: [np.array([[1, 1, 2], [1, 1, 2], [3, 3, 3], [1, 1, 2]], np.int64)],
     lambda T, a: [*T.unique_consecutive(a, return_inverse=True, return_counts=True, dim=0), *T.unique_consecutive(a, return_counts=True, dim=1)], grad=False)
case("unravel_index", lambda r: [ints(r, -24, 24, 2, 3)], lambda T, i: [*T.unravel_index(i, (2, 3, 4)), *T.unravel_index(T.tensor(7), (3, 4)), *T.unravel_index(T.tensor([0, 5, 3]), 6), *T.unravel_index(T.tensor([-1, 30]), (2, 3, 4))], grad=False)
case("unravel_index_out_of_range", lambda r: [np.array([24], np.int64)], lambda T, i: T.unravel_index(i, (2, 3, 4)), grad=False)

# ---------------------------------------------------------------------------
# Distances and statistics
# ---------------------------------------------------------------------------

case("cdist_p2", lambda r: [normal(r, 5, 3), normal(r, 4, 3)], lambda T, a, b: [T.cdist(a, b), T.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist")], tol=P)
case("cdist_p_values", lambda r: [normal(r, 2, 5, 3), normal(r, 2, 4, 3)], lambda T, a, b: [T.cdist(a, b, p=1), T.cdist(a, b, p=3.0), T.cdist(a, b, p=float("inf"))], tol=P, grad_tol=1e-5)
case("cdist_broadcast_batch", lambda r: [normal(r, 2, 1, 5, 3), normal(r, 4, 3)], lambda T, a, b: T.cdist(a, b), tol=P)
case("cdist_bad_cols", lambda r: [normal(r, 5, 3), normal(r, 4, 2)], lambda T, a, b: T.cdist(a, b))
case("pdist", lambda r: [normal(r, 5, 3)], lambda T, x: [T.pdist(x), T.pdist(x, p=1), T.nn.functional.pdist(x, 3)], tol=P, grad_tol=1e-5)
case("pdist_one_row", lambda r: [normal(r, 1, 3)], lambda T, x: T.pdist(x), tol=P)
case("cov_corrcoef", lambda r: [normal(r, 3, 8), normal(r, 8)],
     lambda T, x, v: [T.cov(x), T.cov(x, correction=0), x.cov(correction=2), T.cov(v), T.corrcoef(x), x.corrcoef()], tol=P, grad_tol=1e-5)
case("cov_weights", lambda r: [normal(r, 2, 6), ints(r, 1, 4, 6), pos(r, 6)],
     lambda T, x, f, a: [T.cov(x, fweights=f), T.cov(x, aweights=a), T.cov(x, fweights=f, aweights=a, correction=0)], tol=P, grad_tol=1e-5)
case("cov_3d_refused", lambda r: [normal(r, 2, 2, 2)], lambda T, x: T.cov(x))
case("diff", lambda r: [special(r, 3, 5), normal(r, 3, 1), normal(r, 3, 2)],
     lambda T, x, p, a: [T.diff(x), T.diff(x, dim=0), T.diff(x, n=2), T.diff(x, n=3, prepend=p, append=a), x.diff(n=0), T.diff(x, n=7)])
case("diff_int_bool", lambda r: [ints(r, -9, 9, 6), bools(r, 6)], lambda T, i, b: [T.diff(i), T.diff(i, 2), T.diff(b)], grad=False)
case("trapezoid", lambda r: [normal(r, 3, 6), np.sort(normal(r, 6)), np.sort(normal(r, 3, 6), axis=1)],
     lambda T, y, x, x2: [T.trapezoid(y), T.trapezoid(y, dx=0.5), T.trapezoid(y, x), T.trapezoid(y, x2), T.trapezoid(y, dim=0), T.trapz(y, x)], tol=P)
case("cumulative_trapezoid", lambda r: [normal(r, 3, 6), np.sort(normal(r, 6))],
     lambda T, y, x: [T.cumulative_trapezoid(y), T.cumulative_trapezoid(y, dx=2.0), T.cumulative_trapezoid(y, x), T.cumulative_trapezoid(y, dim=0)], tol=P)
case("vander", lambda r: [normal(r, 4)], lambda T, x: [T.vander(x), T.vander(x, N=3), T.vander(x, 5, increasing=True), T.vander(x, 0), T.vander(x, 1)], tol=P, grad=False)
case("vander_int", lambda r: [ints(r, -3, 4, 4)], lambda T, x: T.vander(x), grad=False)
case("renorm", lambda r: [normal(r, 3, 4, 2) * 2], lambda T, x: [T.renorm(x, 2, 0, 1.5), x.renorm(1, 1, 2.0), T.renorm(x, 3, 2, 100.0)], tol=P, grad_tol=1e-5)
case("nanmedian", lambda r: [special(r, 4, 5), np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)],
     lambda T, x, n: [T.nanmedian(x), *T.nanmedian(x, 1), *T.nanmedian(x, 0, keepdim=True), *n.nanmedian(dim=1), T.nanmedian(n)])
case("nanmedian_ties", lambda r: [ties(r, 3, 6)], lambda T, x: [*T.nanmedian(x, -1), T.nanmedian(x)])
case("logcumsumexp", lambda r: [normal(r, 3, 6) * 3, np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0, np.nan, 2.0], np.float32)],
     lambda T, x, s: [T.logcumsumexp(x, 1), x.logcumsumexp(0), T.logcumsumexp(s, 0)], tol=4e-6, grad_tol=1e-5, no_grad=(1,))

# ---------------------------------------------------------------------------
# Tensor extras: windows, strided views, index writes, in-place views, metadata
# ---------------------------------------------------------------------------

case("unfold_windows", lambda r: [normal(r, 2, 9)], lambda T, x: [x.unfold(1, 3, 2), x.unfold(1, 4, 1), x.unfold(0, 1, 1), x.unfold(-1, 9, 5), x.t().unfold(0, 2, 3)])
case("unfold_overlap_grad_special", lambda r: [special(r, 12)], lambda T, x: x.unfold(0, 5, 2) * 3.0)
case("unfold_too_big", lambda r: [normal(r, 4)], lambda T, x: x.unfold(0, 5, 1))
case("as_strided", lambda r: [normal(r, 4, 4)], lambda T, x: [T.as_strided(x, (3, 3), (4, 1)), x.as_strided((2, 2), (1, 4), 5), T.as_strided(x, (3, 2), (2, 1), 1)])
case("put", lambda r: [normal(r, 3, 4), ints(r, -12, 12, 5), normal(r, 5)],
     lambda T, x, i, s: [T.put(x, T.tensor([0, 5, 11]), s[:3]), x.put(i, s, accumulate=True), x.clone().put_(T.tensor([1, 1]), s[:2], accumulate=True)])
case("put_graph", lambda r: [normal(r, 2, 3), normal(r, 2)], lambda T, x, s: (lambda y: (y.put_(T.tensor([4, 0]), s), y * y)[1])(x * 1.0))
case("index_reduce", lambda r: [normal(r, 4, 3), normal(r, 5, 3), ints(r, 0, 4, 5)],
     lambda T, x, s, i: [x.index_reduce(0, i, s, "prod"), x.index_reduce(0, i, s, "mean", include_self=False), x.index_reduce(0, i, s, "amax"), T.index_reduce(x, 0, i, s, "amin", include_self=False)], tol=P, grad_tol=1e-5)
case("index_reduce_dim1", lambda r: [normal(r, 3, 4), normal(r, 3, 6), ints(r, 0, 4, 6)], lambda T, x, s, i: [x.index_reduce(1, i, s, "mean"), x.clone().index_reduce_(1, i, s, "amax")], tol=P)
case("index_reduce_bad_reduce", lambda r: [normal(r, 3, 4), normal(r, 2, 4)], lambda T, x, s: x.index_reduce(0, T.tensor([0, 1]), s, "sum"))
case("inplace_view_ops", lambda r: [normal(r, 2, 1, 3)],
     lambda T, x: (lambda y: [y.squeeze_(1) * 1, y.unsqueeze_(0) * 1, y.transpose_(0, 2) * 1, y.squeeze_() * 1, y.t_() * 1, y.swapdims_(0, 1) * 1, y])(x * 1.0))
case("inplace_view_on_leaf_refused", lambda r: [normal(r, 2, 3)], lambda T, x: x.unsqueeze_(0))
case("metadata_aliases", lambda r: [normal(r, 2, 3), ints(r, 0, 3, 4), bools(r, 5)],
     lambda T, x, i, b: [x.nelement(), x.ndimension(), x.nbytes, i.nbytes, b.nbytes, x.itemsize, i.itemsize, x.is_complex(), i.is_signed(), b.is_signed(), x.H, x.mH, x.adjoint(), x.conj()], grad=False)
case("H_3d_refused", lambda r: [normal(r, 2, 2, 2)], lambda T, x: x.H, grad=False)
case("clone_function", lambda r: [special(r, 3, 4)], lambda T, x: [T.clone(x), T.clone(x.t()), T.clone(x) * 2])
case("result_type", lambda r: [normal(r, 2), ints(r, 0, 3, 2), bools(r, 2), normal(r), ints(r, 0, 3)],
     lambda T, f, i, b, f0, i0: [str(T.result_type(x, y)).split(".")[-1] for x, y in [(f, i), (i, 1.5), (i, 2), (b, 1), (b, True), (i0, f), (f0, i), (i, f0), (b, i0), (i, i0), (f0, 2), (i0, 2.5)]], grad=False)
case("promote_types_can_cast", lambda r: [],
     lambda T: [str(T.promote_types(a, b)).split(".")[-1] for a, b in [(T.uint8, T.int8), (T.float16, T.bfloat16), (T.int32, T.float16), (T.bool, T.uint8), (T.int64, T.float32), (T.complex64, T.float64), (T.int16, T.int32)]]
     + [T.can_cast(a, b) for a, b in [(T.float32, T.int64), (T.int64, T.float32), (T.bool, T.int64), (T.int64, T.bool), (T.float64, T.float16), (T.complex64, T.float32)]], grad=False)


# ---------------------------------------------------------------------------
# Tensor hooks
# ---------------------------------------------------------------------------

case("register_hook_nonleaf", lambda r: [normal(r, 3, 4)],
     lambda T, x: (lambda y: (y.register_hook(lambda g: g * 2.0), y.register_hook(lambda g: g + 1.0), y * y)[2])(x * 3.0))
case("register_hook_leaf", lambda r: [normal(r, 3, 4), normal(r, 4)],
     lambda T, x, w: (x.register_hook(lambda g: g * -1.0), w.register_hook(lambda g: None), (x * w).sum(0))[2], tol=P)
case("register_hook_removed", lambda r: [normal(r, 5)],
     lambda T, x: (lambda y, h: (h.remove(), y * 2.0)[1])(*(lambda y: (y, y.register_hook(lambda g: g * 100.0)))(x + 1.0)))
case("register_hook_no_grad_refused", lambda r: [normal(r, 3)], lambda T, x: x.detach().register_hook(lambda g: g), grad=False)


# ---------------------------------------------------------------------------
# torch.distributions (log_prob, entropy, moments: deterministic parts)
# ---------------------------------------------------------------------------

case("categorical_logits", lambda r: [normal(r, 3, 5), ints(r, 0, 5, 4, 3)],
     lambda T, x, v: (lambda d: [d.log_prob(v), d.entropy(), d.probs, d.logits, d.mode, list(d.batch_shape)])(T.distributions.Categorical(logits=x)), tol=P)
case("categorical_probs", lambda r: [pos(r, 2, 4), ints(r, 0, 4, 2)],
     lambda T, p, v: (lambda d: [d.log_prob(v), d.entropy(), d.probs, d.logits, d.enumerate_support()])(T.distributions.Categorical(probs=p)), tol=P)
case("categorical_zero_prob_entropy", lambda r: [np.array([[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], np.float32)],
     lambda T, p: T.distributions.Categorical(probs=p).entropy(), tol=P, grad=False)
case("bernoulli", lambda r: [(r.random((3, 4)) * 0.9 + 0.05).astype(np.float32), normal(r, 4), bools(r, 3, 4)],
     lambda T, p, l, v: [T.distributions.Bernoulli(probs=p).log_prob(v.float()), T.distributions.Bernoulli(probs=p).entropy(), T.distributions.Bernoulli(logits=l).log_prob(v.float()),
                         T.distributions.Bernoulli(logits=l).probs, T.distributions.Bernoulli(probs=p).variance, T.distributions.Bernoulli(logits=l).entropy()], tol=P)
case("normal", lambda r: [normal(r, 3, 4), pos(r, 4), normal(r, 3, 4)],
     lambda T, m, s, x: (lambda d: [d.log_prob(x), d.entropy(), d.mean, d.stddev, d.variance, d.cdf(x), list(d.batch_shape)])(T.distributions.Normal(m, s)), tol=P, grad_tol=1e-5)
case("normal_scalar_params", lambda r: [normal(r, 5)], lambda T, x: [T.distributions.Normal(0.5, 2.0).log_prob(x), T.distributions.Normal(0.0, 1.0).entropy()], tol=P)
case("uniform", lambda r: [normal(r, 4) - 2.0, pos(r, 4) * 3, r.random((3, 4)).astype(np.float32)],
     lambda T, lo, w, u: (lambda d, x: [d.log_prob(x), d.entropy(), d.mean, d.variance, d.cdf(x)])(T.distributions.Uniform(lo, lo + w), (lo + w * u).detach()), tol=P)
case("distribution_validation", lambda r: [normal(r, 3), np.array([1.0, -0.5, 2.0], np.float32)],
     lambda T, m, s: T.distributions.Normal(m, s), grad=False)
case("distribution_support_validation", lambda r: [normal(r, 2, 3)],
     lambda T, x: T.distributions.Categorical(logits=x).log_prob(T.tensor([0, 3])), grad=False)
case("distribution_bernoulli_support", lambda r: [normal(r, 3)],
     lambda T, x: T.distributions.Bernoulli(logits=x).log_prob(T.tensor([0.0, 0.5, 1.0])), grad=False)
case("distribution_validation_off", lambda r: [normal(r, 3), np.array([1.0, 0.5, 2.0], np.float32)],
     lambda T, m, s: T.distributions.Normal(m, s, validate_args=False).log_prob(T.tensor([0.1, 0.2, 0.3])), tol=P)
case("kl_normal_normal", lambda r: [normal(r, 3, 4), pos(r, 3, 4), normal(r, 4), pos(r, 4)],
     lambda T, a, b, c, d: T.distributions.kl_divergence(T.distributions.Normal(a, b), T.distributions.Normal(c, d)), tol=P)
case("kl_categorical", lambda r: [normal(r, 3, 5), normal(r, 3, 5)],
     lambda T, a, b: T.distributions.kl_divergence(T.distributions.Categorical(logits=a), T.distributions.Categorical(logits=b)), tol=P)
case("kl_categorical_zero_probs", lambda r: [np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], np.float32), np.array([[0.1, 0.9, 0.0], [0.0, 0.5, 0.5]], np.float32)],
     lambda T, p, q: T.distributions.kl_divergence(T.distributions.Categorical(probs=p), T.distributions.Categorical(probs=q)), tol=P, grad=False)
case("kl_bernoulli", lambda r: [normal(r, 3, 4), normal(r, 3, 4), np.array([0.0, 1.0, 0.3, 0.5], np.float32), np.array([0.2, 0.4, 0.0, 1.0], np.float32)],
     lambda T, a, b, p, q: [T.distributions.kl_divergence(T.distributions.Bernoulli(logits=a), T.distributions.Bernoulli(logits=b)),
                            T.distributions.kl_divergence(T.distributions.Bernoulli(probs=p.detach()), T.distributions.Bernoulli(probs=q.detach()))], tol=P, no_grad=(2, 3))
case("kl_uniform", lambda r: [normal(r, 4), normal(r, 4)],
     lambda T, a, b: [T.distributions.kl_divergence(T.distributions.Uniform(a, a + 1), T.distributions.Uniform(b - 2, b + 2)),
                      T.distributions.kl_divergence(T.distributions.Uniform(b - 2, b + 2), T.distributions.Uniform(a, a + 1))], tol=P)
case("kl_laplace_exponential_onehot", lambda r: [normal(r, 3, 4), pos(r, 3, 4), normal(r, 4), pos(r, 4), normal(r, 3, 5), normal(r, 3, 5)],
     lambda T, a, b, c, d, l1, l2: [T.distributions.kl_divergence(T.distributions.Laplace(a, b), T.distributions.Laplace(c, d)),
                                    T.distributions.kl_divergence(T.distributions.Exponential(b), T.distributions.Exponential(d)),
                                    T.distributions.kl_divergence(T.distributions.OneHotCategorical(logits=l1), T.distributions.OneHotCategorical(logits=l2))], tol=P)
case("kl_independent", lambda r: [normal(r, 2, 3, 4), pos(r, 2, 3, 4), normal(r, 2, 3, 4), pos(r, 2, 3, 4)],
     lambda T, a, b, c, d: [T.distributions.kl_divergence(T.distributions.Independent(T.distributions.Normal(a, b), n), T.distributions.Independent(T.distributions.Normal(c, d), n)) for n in (1, 2)], tol=P)
case("kl_across_families", lambda r: [normal(r, 3, 4), pos(r, 3, 4), normal(r, 4), pos(r, 4)],
     lambda T, m, s, c, d: [T.distributions.kl_divergence(p, q) for p, q in [
         (T.distributions.Exponential(s), T.distributions.Normal(c, d)), (T.distributions.Laplace(m, s), T.distributions.Normal(c, d)),
         (T.distributions.Normal(m, s), T.distributions.Laplace(c, d)), (T.distributions.Uniform(m, m + s), T.distributions.Normal(c, d)),
         (T.distributions.Uniform(m, m + s), T.distributions.Exponential(d)), (T.distributions.Exponential(s), T.distributions.Uniform(c, c + d)),
         (T.distributions.Laplace(m, s), T.distributions.Exponential(d)), (T.distributions.Laplace(m, s), T.distributions.Uniform(c, c + d)),
         (T.distributions.Normal(m, s), T.distributions.Exponential(d)), (T.distributions.Normal(m, s), T.distributions.Uniform(c, c + d))]], tol=P, grad_tol=1e-5)
case("kl_not_implemented", lambda r: [normal(r, 3)],
     lambda T, a: T.distributions.kl_divergence(T.distributions.Categorical(logits=a), T.distributions.Normal(a, 1.0)), grad=False)
case("laplace", lambda r: [normal(r, 3, 4), pos(r, 3, 4), normal(r, 3, 4), r.random(4).astype(np.float32) * 0.9 + 0.05],
     lambda T, m, s, x, u: (lambda d: [d.log_prob(x), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.cdf(x), d.icdf(u.detach()), list(d.batch_shape)])(T.distributions.Laplace(m, s)),
     tol=P, no_grad=(3,))
case("exponential", lambda r: [pos(r, 4), pos(r, 3, 4), r.random(4).astype(np.float32) * 0.9 + 0.05],
     lambda T, rate, x, u: (lambda d: [d.log_prob(x), d.entropy(), d.mean, d.mode, d.variance, d.stddev, d.cdf(x), d.icdf(u.detach())])(T.distributions.Exponential(rate)), tol=P, no_grad=(2,))
case("exponential_support", lambda r: [pos(r, 2)], lambda T, rate: T.distributions.Exponential(rate).log_prob(T.tensor([-1.0, 2.0])), grad=False)
case("normal_icdf", lambda r: [normal(r, 4), pos(r, 4)],
     lambda T, m, s: T.distributions.Normal(m, s).icdf(T.tensor([0.1, 0.5, 0.9, 0.99])), tol=P, grad_tol=1e-5)
case("one_hot_categorical", lambda r: [normal(r, 3, 5)],
     lambda T, l: (lambda d: [d.log_prob(T.nn.functional.one_hot(T.tensor([0, 4, 2]), 5).float()), d.entropy(), d.mean, d.mode, d.variance,
                              d.enumerate_support(), list(d.batch_shape), list(d.event_shape)])(T.distributions.OneHotCategorical(logits=l)), tol=P)
case("independent", lambda r: [normal(r, 2, 3, 4), pos(r, 2, 3, 4), normal(r, 2, 3, 4), normal(r, 3, 4)],
     lambda T, m, s, x, l: [f(d) for d in (T.distributions.Independent(T.distributions.Normal(m, s), 1), T.distributions.Independent(T.distributions.Normal(m, s), 2))
                            for f in (lambda d: d.log_prob(x), lambda d: d.entropy(), lambda d: d.mean, lambda d: d.variance,
                                      lambda d: list(d.batch_shape), lambda d: list(d.event_shape))]
     + [T.distributions.Independent(T.distributions.Bernoulli(logits=l), 1).log_prob((l > 0).float())], tol=P, grad_tol=1e-5)
case("independent_too_many_dims", lambda r: [normal(r, 3, 4)], lambda T, m: T.distributions.Independent(T.distributions.Normal(m, 1.0), 3), grad=False)
case("multivariate_normal", lambda r: [normal(r, 3), _spd(r, 3, 3), normal(r, 4, 3), normal(r, 2, 3), _lower(r, 3, 3), _spd(r, 2, 3, 3)],
     lambda T, m, c, x, mb, t, cb: [f(d) for d in (T.distributions.MultivariateNormal(m, covariance_matrix=c), T.distributions.MultivariateNormal(mb, scale_tril=t),
                                                 T.distributions.MultivariateNormal(m, precision_matrix=c), T.distributions.MultivariateNormal(mb, covariance_matrix=cb))
                                    for f in (lambda d: d.log_prob(x.unsqueeze(1)), lambda d: d.entropy(), lambda d: d.mean, lambda d: d.variance, lambda d: d.covariance_matrix,
                                              lambda d: d.scale_tril, lambda d: d.precision_matrix, lambda d: list(d.batch_shape), lambda d: list(d.event_shape))],
     tol=1e-5, grad_tol=2e-5)
case("multivariate_normal_diagonal", lambda r: [normal(r, 4, 2), pos(r, 2), normal(r, 4, 2)],
     lambda T, m, v, a: (lambda d: [d.log_prob(a), d.entropy()])(T.distributions.MultivariateNormal(m, T.diag_embed(v))), tol=1e-5, grad_tol=2e-5)
case("kl_multivariate_normal", lambda r: [normal(r, 2, 3), _spd(r, 2, 3, 3), normal(r, 3), _lower(r, 3, 3)],
     lambda T, m1, c1, m2, t2: [T.distributions.kl_divergence(T.distributions.MultivariateNormal(m1, covariance_matrix=c1), T.distributions.MultivariateNormal(m2, scale_tril=t2)),
                                T.distributions.kl_divergence(T.distributions.MultivariateNormal(m2, scale_tril=t2), T.distributions.MultivariateNormal(m1, covariance_matrix=c1))],
     tol=1e-5, grad_tol=2e-5)
case("multivariate_normal_not_positive_definite", lambda r: [normal(r, 2)],
     lambda T, m: T.distributions.MultivariateNormal(m, covariance_matrix=T.tensor([[1.0, 2.0], [2.0, 1.0]])), grad=False)
case("gamma_chi2", lambda r: [pos(r, 3, 4) * 2, pos(r, 4), pos(r, 3, 4) * 2],
     lambda T, a, b, x: [f(d) for d in (T.distributions.Gamma(a, b), T.distributions.Chi2(a))
                         for f in (lambda d: d.log_prob(x), lambda d: d.entropy(), lambda d: d.mean, lambda d: d.mode, lambda d: d.variance)]
     + [T.distributions.Chi2(a).df, T.distributions.Gamma(2.0, 3.0).log_prob(x)], tol=1e-5, grad_tol=1e-5)
case("beta_dirichlet", lambda r: [pos(r, 3, 4) + 0.5, pos(r, 4) + 0.5, (r.random((3, 4)) * 0.9 + 0.05).astype(np.float32), pos(r, 2, 3, 4), pos(r, 2, 3, 4)],
     lambda T, a, b, x, c, y: [f(d, v) for d, v in ((T.distributions.Beta(a, b), x), (T.distributions.Dirichlet(c), (y / y.sum(-1, keepdim=True)).detach()))
                               for f in (lambda d, v: d.log_prob(v), lambda d, v: d.entropy(), lambda d, v: d.mean, lambda d, v: d.mode, lambda d, v: d.variance)]
     + [T.distributions.Dirichlet(T.tensor([[0.5, 0.7, 0.2], [2.0, 3.0, 0.5]])).mode], tol=1e-5, grad_tol=1e-5, no_grad=(2, 4))
case("poisson_distribution", lambda r: [pos(r, 3, 4) * 3, ints(r, 0, 8, 3, 4)],
     lambda T, rate, k: (lambda d: [d.log_prob(k.float()), d.mean, d.mode, d.variance])(T.distributions.Poisson(rate)), tol=1e-5, grad_tol=1e-5)
case("kl_gamma_beta_dirichlet_poisson", lambda r: [pos(r, 3, 4) + 0.2, pos(r, 4) + 0.2, pos(r, 3, 4) + 0.2, pos(r, 3, 4) + 0.2],
     lambda T, a, b, c, d: [T.distributions.kl_divergence(T.distributions.Gamma(a, b), T.distributions.Gamma(c, d)),
                            T.distributions.kl_divergence(T.distributions.Beta(a, c), T.distributions.Beta(d, b)),
                            T.distributions.kl_divergence(T.distributions.Dirichlet(a), T.distributions.Dirichlet(c)),
                            T.distributions.kl_divergence(T.distributions.Poisson(a), T.distributions.Poisson(d))], tol=1e-5, grad_tol=1e-5)
case("poisson_support", lambda r: [pos(r, 2)], lambda T, rate: T.distributions.Poisson(rate).log_prob(T.tensor([0.5, 1.0])), grad=False)


# ---------------------------------------------------------------------------
# Small pieces
# ---------------------------------------------------------------------------

case("sum_to_size", lambda r: [normal(r, 2, 3, 4)], lambda T, x: [x.sum_to_size(3, 1), x.sum_to_size((1, 3, 4)), x.sum_to_size(2, 1, 1), x.sum_to_size(4)], tol=P)
case("sum_to_size_bad", lambda r: [normal(r, 2, 3)], lambda T, x: x.sum_to_size(2, 2))
case("channel_shuffle", lambda r: [normal(r, 2, 6, 2, 2)], lambda T, x: [T.nn.functional.channel_shuffle(x, 3), T.nn.ChannelShuffle(2)(x)])
case("zero_pad3d", lambda r: [normal(r, 1, 2, 2, 2, 3)], lambda T, x: T.nn.ZeroPad3d((1, 0, 2, 1, 0, 1))(x))
case("chain_matmul_scalar_misc", lambda r: [normal(r, 2, 3), normal(r, 3, 4), normal(r, 4, 2)],
     lambda T, a, b, c: [T.chain_matmul(a, b, c), T.scalar_tensor(2.5), T.is_nonzero(T.tensor([3])), T.is_complex(a), T.typename(a), a.is_sparse], tol=P)
case("post_accumulate_grad_hook", lambda r: [normal(r, 3)],
     lambda T, x: (x.register_post_accumulate_grad_hook(lambda p: (p.grad.mul_(2.0), None)[1]), (x * 3.0))[1])


# ---------------------------------------------------------------------------
# Zero sizes and degenerate shapes
# ---------------------------------------------------------------------------

case("zero_size_products", lambda r: [normal(r, 0, 3), normal(r, 3, 4), normal(r, 0, 4), normal(r, 2, 0), normal(r, 0, 5)],
     lambda T, a, b, c, d, e: [T.addmm(c, a, b), T.mv(d, T.zeros(0)), T.outer(T.zeros(0), T.ones(3)), T.einsum("ij,jk->ik", d, e), T.tensordot(a, b, 1), T.kron(a, b)], tol=P)
case("zero_size_diagonals", lambda r: [normal(r, 0, 3), normal(r, 0)],
     lambda T, m, v: [T.diagonal(m), T.diag(v), T.diag(m), T.diag_embed(m), T.trace(T.zeros(0, 0)), T.tril_indices(0, 0), T.triu_indices(2, 0)])
case("zero_size_stacking", lambda r: [normal(r, 0), normal(r, 3), normal(r, 0, 2)],
     lambda T, e, v, m: [T.hstack([e, v]), T.vstack([m, T.ones(1, 2)]), *T.tensor_split(e, 3), *T.tensor_split(m, [1, 2]), T.column_stack([e, e]), T.block_diag(m, v),
                         T.cartesian_prod(e, v), T.combinations(e), T.ravel(m), T.rot90(m), *T.meshgrid(e, v, indexing="ij")])
case("zero_size_search", lambda r: [normal(r, 0), np.sort(normal(r, 4)), ints(r, 0, 3, 0)],
     lambda T, e, s, i: [T.searchsorted(s, e), T.searchsorted(e, s), T.bucketize(e, s), T.histc(e, bins=3), T.isin(e, s), T.isin(s, e), T.unique_consecutive(e), T.bincount(i, minlength=2)], grad=False)
case("zero_size_statistics", lambda r: [normal(r, 0, 3), normal(r, 4, 3), normal(r, 1), normal(r, 2, 0)],
     lambda T, e, x, one, z: [T.cdist(e, x), T.cdist(x, e), T.diff(one), T.diff(z), T.trapezoid(one), T.trapezoid(z), T.cumulative_trapezoid(one), T.vander(T.zeros(0)), T.logcumsumexp(z, 1), T.logcumsumexp(e, 0)], tol=P)
# (torch 2.15's pdist backward of an empty input crashes the process: forward only.)
case("pdist_empty_forward", lambda r: [normal(r, 0, 3), normal(r, 1, 3)], lambda T, e, one: [T.pdist(e), T.pdist(one)], grad=False)
case("degenerate_statistics", lambda r: [normal(r, 3, 1), normal(r, 2, 2)],
     lambda T, one_obs, x: [T.cov(one_obs), T.cov(one_obs, correction=0), T.corrcoef(x[:, :1] * 0 + x), T.renorm(x, 2, 0, 0.0)], tol=P, grad=False)
case("zero_size_windows_and_layers", lambda r: [normal(r, 0, 5), normal(r, 0, 2, 4, 4), normal(r, 0, 6)],
     lambda T, e, img, seq: [e.unfold(1, 2, 1), T.nn.functional.pad(img, (1, 1, 1, 1), "reflect"), T.nn.functional.unfold(img, 2), T.nn.functional.rms_norm(seq, (6,)), T.nn.functional.fold(T.zeros(0, 8, 9), (4, 4), 2)])


# ---------------------------------------------------------------------------
# Square-matrix solvers (a fixed-order LU; LAPACK rounds differently)
# ---------------------------------------------------------------------------

def _well_conditioned(r, *shape):
    a = normal(r, *shape)
    return (a + 3.0 * np.eye(shape[-1], dtype=np.float32)).astype(np.float32)


case("linalg_inv_det", lambda r: [_well_conditioned(r, 4, 4), _well_conditioned(r, 2, 3, 3)],
     lambda T, a, b: [T.linalg.inv(a), T.inverse(b), T.linalg.det(a), T.det(b), b.det(), a.inverse()], tol=1e-5, grad_tol=1e-5)
case("linalg_slogdet_logdet", lambda r: [_well_conditioned(r, 4, 4), normal(r, 3, 3)],
     lambda T, a, b: [*T.linalg.slogdet(a), *T.slogdet(b), T.logdet(a), a.slogdet().logabsdet], tol=1e-5, grad_tol=1e-5)
case("linalg_solve", lambda r: [_well_conditioned(r, 3, 3), normal(r, 3, 2), normal(r, 3), _well_conditioned(r, 2, 3, 3)],
     lambda T, a, b, v, ab: [T.linalg.solve(a, b), T.linalg.solve(a, v), T.linalg.solve(ab, b), T.linalg.solve(a, b.t(), left=False)], tol=1e-5, grad_tol=1e-5)
case("linalg_pivoting", lambda r: [np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]], np.float32)],
     lambda T, a: [T.linalg.inv(a), T.linalg.det(a), T.linalg.solve(a, T.ones(3))], tol=1e-5, grad_tol=1e-5)
case("linalg_singular", lambda r: [np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)], lambda T, a: [T.linalg.det(a), *T.linalg.slogdet(a)], grad=False, tol=1e-6)


def _spd(r, *shape):
    a = normal(r, *shape).astype(np.float64)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(np.float32)


def _lower(r, *shape):
    a = np.tril(normal(r, *shape))
    i = np.arange(shape[-1])
    a[..., i, i] = np.abs(a[..., i, i]) + 0.5
    return a


case("linalg_cholesky", lambda r: [_spd(r, 4, 4), _spd(r, 2, 3, 3), normal(r, 3, 3)],
     lambda T, a, b, c: [T.linalg.cholesky(a), T.linalg.cholesky(b, upper=True), T.linalg.cholesky(c @ c.mT + 3 * T.eye(3))], tol=1e-5, grad_tol=1e-5)
case("cholesky_removed_from_torch", lambda r: [_spd(r, 2, 2)], lambda T, a: T.cholesky(a), grad=False)
case("gamma_family", lambda r: [(r.random((3, 5)) * 12 - 6).astype(np.float32), pos(r, 2, 4) * 4],
     lambda T, x, y: [T.lgamma(x), T.digamma(x), T.polygamma(1, x), T.polygamma(2, y), T.polygamma(3, y), x.lgamma(), y.digamma(),
                      T.special.gammaln(y), T.special.psi(y), T.special.polygamma(1, y), T.mvlgamma(y + 1.5, 3), T.special.multigammaln(y + 1.0, 2)],
     tol=1e-5, grad_tol=1e-5)
case("gamma_family_int_input", lambda r: [ints(r, 1, 9, 6)], lambda T, n: [T.lgamma(n), T.digamma(n), T.polygamma(2, n)], tol=1e-6, grad=False)
case("mvlgamma_below_the_domain", lambda r: [np.array([0.4, 3.0, -0.5], np.float32)], lambda T, x: T.mvlgamma(x, 2), tol=1e-5, grad=False)
case("mvlgamma_order_zero", lambda r: [np.array([3.0], np.float32)], lambda T, x: T.mvlgamma(x, 0), grad=False)
case("polygamma_negative_order", lambda r: [pos(r, 3)], lambda T, x: T.polygamma(-1, x), grad=False)
case("linalg_cholesky_not_positive_definite", lambda r: [np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]], np.float32)],
     lambda T, a: T.linalg.cholesky(a), grad=False)
case("linalg_solve_triangular", lambda r: [_lower(r, 4, 4), normal(r, 4, 3), normal(r, 3, 4), _lower(r, 2, 1, 3, 3), normal(r, 3, 3, 2), normal(r, 4, 4) + 4 * np.eye(4, dtype=np.float32)],
     lambda T, l, b, bt, lb, bb, full: [T.linalg.solve_triangular(l, b, upper=False), T.linalg.solve_triangular(l.mT, b, upper=True),
                                        T.linalg.solve_triangular(l, bt, upper=False, left=False), T.linalg.solve_triangular(l.mT, bt, upper=True, left=False, unitriangular=True),
                                        T.linalg.solve_triangular(l, b, upper=False, unitriangular=True), T.linalg.solve_triangular(lb, bb, upper=False),
                                        T.linalg.solve_triangular(full, b, upper=True), T.linalg.solve_triangular(full, b, upper=False)], tol=1e-5, grad_tol=1e-5)
case("linalg_solve_triangular_shapes", lambda r: [_lower(r, 4, 4), normal(r, 3, 2)], lambda T, l, b: T.linalg.solve_triangular(l, b, upper=False), grad=False)
case("cholesky_solve_inverse", lambda r: [normal(r, 4, 2), _lower(r, 4, 4), _lower(r, 2, 3, 3)],
     lambda T, b, l, lb: [T.cholesky_solve(b, l), T.cholesky_solve(b, l.mT, upper=True), T.cholesky_inverse(l), T.cholesky_inverse(l.mT, upper=True),
                          T.cholesky_inverse(lb), b.cholesky_solve(l), l.cholesky_inverse()], tol=1e-5, grad_tol=2e-5)
case("linalg_inv_singular_refused", lambda r: [np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)], lambda T, a: T.linalg.inv(a), grad=False)
case("linalg_not_square_refused", lambda r: [normal(r, 2, 3)], lambda T, a: T.linalg.det(a), grad=False)
case("matrix_power_multi_dot", lambda r: [normal(r, 3, 3) * 0.5, normal(r, 3, 4), normal(r, 4, 2), normal(r, 2)],
     lambda T, a, b, c, v: [T.linalg.matrix_power(a, 5), a.matrix_power(0), T.matrix_power(a, 1), T.linalg.multi_dot([a, b, c]), T.linalg.multi_dot([a, b, c, v])], tol=1e-5, grad_tol=1e-5)
