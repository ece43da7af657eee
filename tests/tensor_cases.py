"""Tensor-language cases shared by tools/tensor_oracle.py (run on torch)
and tests/test_tensor_torch.py (run on onemodel): the two libraries share
names and signatures, so one table serves both.

A case is ``Case(inputs, fn, ...)``: ``inputs(rng)`` returns NumPy arrays
(float32 ones become leaf tensors that require grad unless ``grad=False``;
int64 and bool ones become plain tensors), ``fn(T, *tensors)`` runs the
operation with ``T`` the library (``torch`` or ``onemodel``) and returns a
tensor, a tuple/list of them, or a Python number/bool. The oracle saves
the inputs, every output, and the gradients of L = Σ W·out over the float
outputs (W seeded); the test loads the inputs from the file, so the two
sides see the same bits.

``tol``: None compares outputs bit for bit (selections, copies, exact
integer results); a number is the allowed error scaled by the largest
reference value, for results rounded differently (sums, norms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Case:
    inputs: Callable
    fn: Callable
    grad: bool = True
    tol: float | None = None
    grad_tol: float = 2e-6
    # Names of float inputs that get no gradient (e.g. used as masks only).
    no_grad: tuple = field(default_factory=tuple)


def normal(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def special(rng, *shape, ties: bool = True):
    """Normals with NaN, ±inf, ±0 and repeated values at seeded positions."""
    x = normal(rng, *shape).ravel()
    n = x.size
    picks = rng.permutation(n)
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    for p, v in zip(picks, vals):
        x[p] = v
    if ties and n > 8:
        x[picks[6]] = x[picks[7]]
    return x.reshape(shape)


def ties(rng, *shape, levels: int = 4):
    """Small integers as float32: many exact ties."""
    return rng.integers(-levels, levels + 1, size=shape).astype(np.float32)


def ints(rng, low, high, *shape):
    return rng.integers(low, high, size=shape).astype(np.int64)


def bools(rng, *shape, p: float = 0.5):
    return rng.random(shape) < p


def seeded(name: str, seed: int = 1234):
    return np.random.default_rng([seed, sum(map(ord, name)), len(name)])


# Every case table and its fixture file in testdata/tensor/ (written by
# tools/tensor_oracle.py, read by tests/test_tensor_torch.py). A new table is
# a module of tests/ with its own CASES, made with `registrar`, and a line here.
SUITES = {"tensor_cases": "cases.npz"}
SUITES["breadth_cases"] = "breadth.npz"  # tests/breadth_cases.py: products, einsum, diagonals, search, statistics
SUITES["math_cases"] = "math.npz"  # element-wise math and activations
SUITES["sweep_cases"] = "sweep.npz"  # tests/sweep_cases.py: zero-size and 0-d semantics, what the sweep of torch programs found


def registrar(cases: dict) -> Callable:
    """A ``case(name, inputs, fn, **kw)`` function that adds to ``cases``."""

    def case(name, inputs, fn, **kw):
        assert name not in cases, name
        cases[name] = Case(inputs, fn, **kw)

    return case


CASES: dict = {}
case = registrar(CASES)


# ---------------------------------------------------------------------------
# Comparisons, logic, special values (results are bool: no gradient)
# ---------------------------------------------------------------------------

for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(f"{_op}_broadcast_special", lambda r: [special(r, 3, 4), special(r, 4)], lambda T, a, b, op=_op: getattr(T, op)(a, b), grad=False)
    case(f"{_op}_scalar", lambda r: [ties(r, 5, 3)], lambda T, a, op=_op: getattr(a, op)(1.0), grad=False)
case("compare_ops_python", lambda r: [special(r, 2, 5), ties(r, 5)],
     lambda T, a, b: [a == b, a != b, a < b, a <= 0, 0.5 > a, a >= -1, b == 2], grad=False)
case("compare_int_float_promotion", lambda r: [np.array([16777217, -3, 2, 5], np.int64), np.array([16777216.0, -3.5, 2.0, np.nan], np.float32)],
     lambda T, a, b: [a == b, a < b, a > 1.5, a == 2, a != 5], grad=False)
case("compare_bool_tensors", lambda r: [bools(r, 4, 3), bools(r, 3)], lambda T, a, b: [a == b, a != b, a < b, a >= b, a == 1, a == 0.5], grad=False)
case("logical_ops", lambda r: [bools(r, 3, 4), bools(r, 4), special(r, 3, 4)],
     lambda T, a, b, x: [a & b, a | b, a ^ b, ~a, a & True, T.logical_and(a, x), T.logical_or(x, b), T.logical_xor(x, a), T.logical_not(x), x.logical_not()], grad=False)
case("bitwise_int", lambda r: [ints(r, -9, 9, 2, 5), ints(r, 0, 7, 5)], lambda T, a, b: [a & b, a | b, a ^ b, ~a, a & 3, T.bitwise_xor(a, b)], grad=False)
case("any_all", lambda r: [bools(r, 3, 4, 2, p=0.8), (ints(r, 0, 3, 3, 4) * 1.0).astype(np.float32)],
     lambda T, m, x: [m.any(), m.all(), m.any(1), m.all(dim=0), m.any(-1, keepdim=True), T.any(x), T.all(x, 1), x.any(0), m.all((0, 2))], grad=False)
case("any_all_nan_and_empty", lambda r: [np.array([0.0, np.nan, -0.0], np.float32), np.zeros((0, 3), np.float32)],
     lambda T, x, e: [x.any(), x.all(), e.any(), e.all(), e.any(0), e.all(1)], grad=False)
case("special_value_tests", lambda r: [special(r, 4, 5), ints(r, -3, 3, 4)],
     lambda T, x, i: [T.isnan(x), T.isinf(x), T.isfinite(x), x.isnan(), T.isposinf(x), T.isneginf(x), T.signbit(x), T.isnan(i), T.isfinite(i)], grad=False)
case("isclose_allclose", lambda r: [special(r, 3, 4), special(r, 3, 4)],
     lambda T, a, b: [T.isclose(a, a + 1e-6), T.isclose(a, b), T.isclose(a, a, equal_nan=True), T.allclose(a[0:1, 0:1] * 0 + 1, a[0:1, 0:1] * 0 + 1.000001), T.equal(a, a), T.equal(b, b.clone())], grad=False)
case("bool_conversions", lambda r: [special(r, 3, 4), ints(r, -2, 3, 5), bools(r, 4)],
     lambda T, x, i, m: [x.bool(), i.bool(), m.float(), m.long(), x.to(T.bool), i.to(T.bool), m.sum(), m.to(T.float32).sum(), x.isnan().long().sum()], grad=False)


# ---------------------------------------------------------------------------
# Selection: where, masked_fill, clamp, maximum/minimum, tril/triu
# ---------------------------------------------------------------------------

case("where_broadcast_grad", lambda r: [bools(r, 3, 1), normal(r, 3, 4), normal(r, 4)], lambda T, c, a, b: T.where(c, a, b))
case("where_scalars_and_promotion", lambda r: [bools(r, 2, 3), normal(r, 2, 3), ints(r, -3, 3, 2, 3)],
     lambda T, c, a, i: [T.where(c, a, 0.0), T.where(c, 1.5, a), T.where(c, i, 7), T.where(c, i, 0.5), a.where(c, -a), T.where(c, i, i.flip(0)), T.where(c, a, i)])
case("where_condition_only", lambda r: [bools(r, 3, 4)], lambda T, c: list(T.where(c)), grad=False)
case("where_special_values", lambda r: [special(r, 4, 4), special(r, 4, 4)], lambda T, a, b: T.where(a > b, a, b))
case("masked_fill_causal", lambda r: [normal(r, 2, 4, 4)],
     lambda T, x: T.softmax(x.masked_fill(T.tril(T.ones(4, 4)) == 0, float("-inf")), dim=-1), tol=2e-6)
case("masked_fill_broadcast_mask", lambda r: [normal(r, 2, 3, 5), bools(r, 3, 1)], lambda T, x, m: [x.masked_fill(m, 0.0), T.masked_fill(x, m, -1.5)])
case("masked_fill_int_and_tensor_value", lambda r: [ints(r, -5, 5, 3, 4), bools(r, 3, 4)],
     lambda T, i, m: [i.masked_fill(m, 9), i.masked_fill(m, T.tensor(-2)), m.masked_fill(m, False)], grad=False)
case("masked_fill_value_grad", lambda r: [normal(r, 3, 4), bools(r, 3, 4), np.array(0.75, np.float32)], lambda T, x, m, v: x.masked_fill(m, v))
case("masked_fill_inplace_graph", lambda r: [normal(r, 3, 4), bools(r, 4)],
     lambda T, x, m: (lambda y: (y.masked_fill_(m, 0.0), y * 2)[1])(x * 3.0))
case("clamp_scalars", lambda r: [special(r, 4, 5)], lambda T, x: [x.clamp(-0.5, 0.5), T.clamp(x, min=0.0), T.clip(x, max=-0.25), x.clamp_min(0.1), x.clamp_max(0.2)])
case("clamp_ties", lambda r: [ties(r, 3, 5)], lambda T, x: [x.clamp(-1.0, 2.0), x.clamp(min=0.0)])
case("clamp_tensor_bounds", lambda r: [normal(r, 3, 5), normal(r, 5) - 0.5, normal(r, 3, 1) + 0.5], lambda T, x, lo, hi: T.clamp(x, lo, hi))
case("clamp_tensor_bounds_ties", lambda r: [ties(r, 4, 4), ties(r, 4), ties(r, 4, 1) + 2],
     lambda T, x, lo, hi: [T.clamp(x, min=lo), T.clamp(x, max=hi), T.clamp(x, lo, hi)])
case("clamp_int", lambda r: [ints(r, -9, 9, 3, 4)], lambda T, i: [i.clamp(-2, 3), i.clamp(min=0), T.clamp(i, max=1)], grad=False)
case("maximum_minimum_ties_nan", lambda r: [ties(r, 3, 4), ties(r, 4)], lambda T, a, b: [T.maximum(a, b), T.minimum(a, b), T.max(a, b)])
case("maximum_int", lambda r: [ints(r, -5, 5, 3, 4), ints(r, -5, 5, 4)], lambda T, a, b: [T.maximum(a, b), T.minimum(a, b)], grad=False)
case("tril_triu", lambda r: [normal(r, 2, 4, 5)], lambda T, x: [T.tril(x), T.triu(x), x.tril(-1), x.triu(2), T.tril(x, 1)])
case("tril_triu_int_bool", lambda r: [ints(r, 1, 9, 4, 3), bools(r, 3, 3)],
     lambda T, i, b: [T.tril(i), T.triu(i, 1), T.tril(b), T.triu(T.ones(3, 3, dtype=T.bool), diagonal=1)], grad=False)


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------

case("getitem_int_lists", lambda r: [normal(r, 4, 5, 6)],
     lambda T, x: [x[[0, 2, 2]], x[:, [4, -1, 0]], x[..., [-1]], x[[1, 3], :, [0, 5]], x[[[0], [3]], [[1, 2, 1]]], x[1, [0, 4], 2:5]])
case("getitem_placement", lambda r: [normal(r, 3, 4, 5, 6)],
     lambda T, x: [x[0, :, [1, 2]], x[:, [0, 1], [1, 2]], x[[0, 1], :, [1, 2]], x[:, None, [0, 1]], x[[0, 2], None, [1, 3]], x[:, [1], :, [2, 3]]])
case("getitem_tensor_indices", lambda r: [normal(r, 5, 6), ints(r, -5, 5, 3, 2), ints(r, 0, 6, 2)],
     lambda T, x, i, j: [x[i], x[i, j], x[:, j], x[T.tensor(2)], x[i[0], 1:4]])
case("getitem_bool_masks", lambda r: [normal(r, 3, 4, 2), bools(r, 3, 4), bools(r, 4)],
     lambda T, x, m, c: [x[m], x[:, c], x[m.unsqueeze(-1).expand(3, 4, 2)], x[x > 0], x[0, c], x[True], x[1, True], x[False]])
case("getitem_repeated_index_grad", lambda r: [normal(r, 4, 3)], lambda T, x: x[[0, 0, 2, 0, 3]] * 2.0 + x[[3, 3, 3]].sum(0))
case("getitem_empty_index", lambda r: [normal(r, 4, 3)], lambda T, x: [x[[]], x[T.tensor([], dtype=T.long)], x[:, []]])
case("getitem_out_of_range", lambda r: [normal(r, 4, 3)], lambda T, x: x[[0, 4]], grad=False)
case("getitem_mask_shape_mismatch", lambda r: [normal(r, 4, 3)], lambda T, x: x[T.tensor([True, False])], grad=False)
case("getitem_broadcast_mismatch", lambda r: [normal(r, 4, 3)], lambda T, x: x[[0, 1], [0, 1, 2]], grad=False)
case("getitem_float_index", lambda r: [normal(r, 4, 3)], lambda T, x: x[T.tensor([0.0])], grad=False)


def _setitem_cases(T, x, v, m):
    outs = []
    y = x.clone(); y[[0, 2]] = v; outs.append(y)
    y = x.clone(); y[m] = 0.0; outs.append(y)
    y = x.clone(); y[m] = v[0, 0]; outs.append(y)
    y = x.clone(); y[:, [1, 3]] = -1.0; outs.append(y)
    y = x.clone(); y[[0, 0, 1]] = v[0:1]; outs.append(y)  # repeated: the same value
    y = x.clone(); y[[1, 2], [3, 0]] = T.tensor([5.0, 6.0]); outs.append(y)
    y = x.clone(); y[[2, 0]] += 1.0; outs.append(y)
    y = x.clone(); y[..., [-1]] = 2.0; outs.append(y)
    y = x.clone(); y[x > 0.5] = x[x > 0.5] * 10; outs.append(y)
    return outs


case("setitem_forms", lambda r: [normal(r, 3, 4), normal(r, 2, 4), bools(r, 3, 4)], _setitem_cases, grad=False)


def _setitem_graph(T, x, v):
    y = x * 1.5
    y[[0, 2]] = v * 2.0
    y[y > 1.0] = 0.0
    y[:, 0] = v[0, 0]
    return [y.sum(1), y[1]]


case("setitem_in_graph", lambda r: [normal(r, 3, 4), normal(r, 2, 4)], _setitem_graph, tol=1e-6)
case("setitem_int_and_bool", lambda r: [ints(r, 0, 9, 3, 4), bools(r, 3, 4)],
     lambda T, i, m: (lambda a, b: (a.__setitem__(m, -1), a.__setitem__((0, [1, 2]), 2.7), b.__setitem__([0, 1], True), [a, b])[-1])(i.clone(), m.clone()), grad=False)
case("index_select_gather", lambda r: [normal(r, 4, 5), ints(r, 0, 4, 6), ints(r, 0, 5, 4, 3), ints(r, 0, 4, 3, 3)],
     lambda T, x, i, g, h: [x.index_select(0, i), T.index_select(x, 1, g[0]), T.gather(x, 1, g), x.gather(0, h), T.gather(x, -1, g[:, :1])])
case("take_along_dim", lambda r: [normal(r, 3, 5), ints(r, 0, 5, 3, 2), ints(r, 0, 3, 1, 5)],
     lambda T, x, i, j: [T.take_along_dim(x, i, 1), T.take_along_dim(x, j, 0), T.take_along_dim(x, i[:1], dim=1), T.take_along_dim(x, T.tensor([0, 14, 3]))])
case("masked_select", lambda r: [normal(r, 3, 4), bools(r, 4)], lambda T, x, m: [T.masked_select(x, m), x.masked_select(x > 0)])
case("nonzero", lambda r: [ties(r, 3, 4), bools(r, 2, 3, 2)],
     lambda T, x, b: [T.nonzero(x), list(x.nonzero(as_tuple=True)), T.nonzero(b), T.argwhere(b)], grad=False)
case("scatter_forms", lambda r: [normal(r, 3, 5), np.array([[4, 0, 2], [1, 3, 0]], np.int64), normal(r, 2, 5), np.array([[2, 0, 1, 1, 0], [0, 1, 2, 2, 1]], np.int64)],
     lambda T, x, i, s, j: [x.scatter(1, i, s[:, :3]), T.scatter(x, 1, i[:, :1], 9.0), x.scatter(0, j, s), T.scatter(x, 0, j[:1], value=-1.0)])
case("scatter_add_repeats", lambda r: [normal(r, 3, 5), np.array([[0, 1, 0, 2, 0], [2, 2, 2, 1, 0]], np.int64), normal(r, 2, 5)],
     lambda T, x, i, s: [T.scatter_add(x, 0, i, s), x.scatter_add(1, i, s)], grad_tol=2e-6)
case("scatter_reduce_forms", lambda r: [normal(r, 3, 4), np.array([[0, 1, 1, 2], [2, 0, 0, 0]], np.int64), normal(r, 2, 4)],
     lambda T, x, i, s: [T.scatter_reduce(x, 0, i, s, "sum"), x.scatter_reduce(0, i, s, "amax"), x.scatter_reduce(0, i, s, "amin", include_self=False),
                         x.scatter_reduce(0, i, s, "mean"), x.scatter_reduce(0, i, s, "prod")], grad_tol=1e-5, tol=1e-6)
case("index_add_copy_fill", lambda r: [normal(r, 4, 3), np.array([0, 2, 0], np.int64), normal(r, 3, 3), normal(r, 4, 3)],
     lambda T, x, i, s, s2: [x.index_add(0, i, s), T.index_add(x, 1, i, s2, alpha=2.0), x.index_copy(0, T.tensor([3, 1, 0]), s), x.index_fill(1, i, -7.0)], tol=1e-6)
case("index_put", lambda r: [normal(r, 4, 3), normal(r, 3)],
     lambda T, x, v: [x.index_put((T.tensor([0, 0, 3]),), v[:1], accumulate=True), x.index_put((T.tensor([1, 2]), T.tensor([0, 2])), v[:2]),
                      T.index_put(x, (T.tensor([2, 2]),), v, accumulate=True)])
case("inplace_index_ops", lambda r: [normal(r, 4, 3), normal(r, 2, 3)],
     lambda T, x, s: (lambda y: (y.index_add_(0, T.tensor([3, 3]), s), y.index_fill_(1, T.tensor([0]), 2.0), y.scatter_(0, T.tensor([[1, 1, 1]]), s[:1]), y * 1.0)[-1])(x * 1.0))


# ---------------------------------------------------------------------------
# Rearrangements
# ---------------------------------------------------------------------------

case("narrow_select_unbind", lambda r: [normal(r, 4, 5)],
     lambda T, x: [x.narrow(1, 1, 3), T.narrow(x, 0, -2, 2), x.select(1, -1), T.select(x, 0, 2), *x.unbind(1), *T.unbind(x)])
case("flip_roll", lambda r: [normal(r, 3, 4, 2)],
     lambda T, x: [x.flip(0), T.flip(x, (1, 2)), x.flip(-1), T.roll(x, 1, 0), x.roll((2, -1), (1, 2)), T.roll(x, 5), T.fliplr(x), T.flipud(x)])
case("repeat_tile_interleave", lambda r: [normal(r, 2, 3)],
     lambda T, x: [x.repeat(2, 3), x.repeat(2, 1, 2), T.tile(x, (2,)), x.tile(3, 1, 1), x.repeat_interleave(2), T.repeat_interleave(x, 3, dim=0),
                   x.repeat_interleave(T.tensor([1, 0, 2]), dim=1), T.repeat_interleave(T.tensor([2, 0, 1]))])
case("movedim_swapaxes_unflatten", lambda r: [normal(r, 2, 3, 4)],
     lambda T, x: [x.movedim(0, 2), T.movedim(x, (0, 1), (2, 0)), x.swapaxes(0, 1), T.swapdims(x, 1, 2), x.unflatten(2, (2, 2)), T.unflatten(x, 1, (3, -1))])


# ---------------------------------------------------------------------------
# Reductions, scans, sorting
# ---------------------------------------------------------------------------

case("max_min_dim", lambda r: [ties(r, 4, 5)],
     lambda T, x: [*x.max(1), *T.min(x, 0), *x.max(dim=-1, keepdim=True), x.max(), T.min(x), x.argmax(), x.argmin(1), T.argmax(x, 0, keepdim=True)])
case("max_min_nan", lambda r: [special(r, 3, 5)],
     lambda T, x: [*x.max(1), *x.min(1), x.argmax(1), x.argmin(0), x.max(), x.min()], grad=False)
case("amax_amin_ties", lambda r: [ties(r, 3, 4, 2, levels=2)],
     lambda T, x: [x.amax(), T.amax(x, 1), x.amin((0, 2)), T.amin(x, -1, keepdim=True), x.max(), x.min()])
case("extrema_int", lambda r: [ints(r, -6, 6, 3, 4)], lambda T, i: [*i.max(1), i.min(), i.argmax(), i.amax(0), *T.aminmax(i)], grad=False)
case("sum_int_bool", lambda r: [ints(r, -6, 6, 3, 4), bools(r, 3, 4)],
     lambda T, i, b: [i.sum(), i.sum(0), b.sum(1), T.sum(b, (0, 1), keepdim=True), i.sum(dtype=T.float32), T.count_nonzero(i, 0), b.long().sum()], grad=False)
case("mean_dtype", lambda r: [normal(r, 3, 4), ints(r, 0, 9, 4)], lambda T, x, i: [x.mean(1, dtype=T.float32), i.mean(dtype=T.float32), i.float().mean()])
case("mean_of_int_refused", lambda r: [ints(r, 0, 9, 4)], lambda T, i: i.mean(), grad=False)
case("prod", lambda r: [(normal(r, 3, 4) + 2.0).astype(np.float32), np.array([[1.5, 0.0, 2.0], [0.0, 3.0, 0.0], [1.0, 2.0, 4.0]], np.float32)],
     lambda T, x, z: [x.prod(), x.prod(1), T.prod(x, 0, keepdim=True), z.prod(1), z.prod(0), z.prod()], tol=1e-6, grad_tol=1e-5)
case("prod_int", lambda r: [ints(r, -3, 4, 3, 4)], lambda T, i: [i.prod(), i.prod(1), T.prod(i, 0)], grad=False)
case("var_std", lambda r: [normal(r, 4, 6)],
     lambda T, x: [x.var(), x.std(), x.var(1), x.std(0, keepdim=True), T.var(x, 1, correction=0), x.std(unbiased=False), T.var(x, (0, 1), correction=2), x.var(1, False)], tol=1e-6, grad_tol=1e-5)
case("var_one_element", lambda r: [normal(r, 3, 1)], lambda T, x: [x.var(1), x.std(1, correction=0)], tol=1e-6)
case("norms", lambda r: [normal(r, 3, 5)],
     lambda T, x: [x.norm(), T.norm(x, dim=1), x.norm(1), x.norm(float("inf"), dim=0), x.norm(3, dim=1, keepdim=True), x.norm(0), x.norm(p=-float("inf"))], tol=2e-6, grad_tol=1e-5)
case("norm_zero_row", lambda r: [np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0]], np.float32)], lambda T, x: [x.norm(dim=1)], tol=1e-6)
case("logsumexp", lambda r: [normal(r, 3, 5) * 4], lambda T, x: [T.logsumexp(x, 1), x.logsumexp(0, keepdim=True), x.logsumexp((0, 1))], tol=2e-6, grad_tol=1e-5)
case("logsumexp_infinities", lambda r: [np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf]], np.float32)], lambda T, x: T.logsumexp(x, 1), grad=False)
case("cumsum_cumprod", lambda r: [normal(r, 3, 6), ints(r, -3, 3, 5), bools(r, 4)],
     lambda T, x, i, b: [x.cumsum(1), T.cumsum(x, 0), (x * 0.5 + 1.0).cumprod(1), i.cumsum(0), b.cumsum(0), T.cumprod(i, 0)], tol=1e-6, grad_tol=1e-5)
case("cumprod_zeros", lambda r: [np.array([[1.0, 0.0, 2.0, 0.0, 3.0], [2.0, 3.0, 0.0, 1.5, 2.0], [1.0, 2.0, 3.0, 4.0, 0.5]], np.float32)],
     lambda T, x: x.cumprod(1), tol=1e-6, grad_tol=1e-5)
case("cummax_cummin", lambda r: [np.array([[1.0, 3.0, 3.0, 2.0, 5.0], [4.0, 1.0, 1.0, 0.5, 0.5]], np.float32)],
     lambda T, x: [*x.cummax(1), *T.cummin(x, 1), *x.cummax(0)])
case("cummax_nan", lambda r: [np.array([1.0, 3.0, np.nan, 2.0, 5.0], np.float32)], lambda T, x: [*x.cummax(0), *x.cummin(0)], grad=False)
case("sort_argsort_stable", lambda r: [ties(r, 3, 7, levels=2)],
     lambda T, x: [*x.sort(1), *T.sort(x, 0, descending=True), x.argsort(dim=1, stable=True), T.argsort(x, dim=-1, descending=True, stable=True), *x.sort(dim=1, stable=True), T.msort(x)])
case("sort_nan", lambda r: [special(r, 2, 6, ties=False)], lambda T, x: [*x.sort(1), *x.sort(1, descending=True), x.argsort(0)], grad=False)
case("topk_distinct", lambda r: [normal(r, 3, 8)],
     lambda T, x: [*x.topk(3), *T.topk(x, 2, dim=0, largest=False), *x.topk(8, sorted=True), *x.topk(1, dim=1)])
case("topk_nan", lambda r: [np.array([[1.0, np.nan, 3.0, 0.5], [2.0, 1.0, 0.0, np.nan]], np.float32)], lambda T, x: [*x.topk(2), *x.topk(2, largest=False)], grad=False)
case("kthvalue_median", lambda r: [normal(r, 3, 7), np.array([[3.0, 1.0, np.nan, 2.0]], np.float32)],
     lambda T, x, n: [*x.kthvalue(3), *T.kthvalue(x, 1, 0, keepdim=True), x.median(), *x.median(1), *T.median(x, 0), n.median(), *n.median(1)])
case("unique", lambda r: [ints(r, 0, 5, 12)], lambda T, i: [T.unique(i), *T.unique(i, return_inverse=True, return_counts=True), *i.unique(return_counts=True)], grad=False)


# ---------------------------------------------------------------------------
# In-place operations under autograd
# ---------------------------------------------------------------------------

def _relu_inplace_chain(T, x, w):
    h = x @ w
    h.mul_(2.0).add_(x[:, :3], alpha=0.5)
    h.relu_()  # torch's relu_ saves its output: nothing may write h after this
    return h.sum(1)


def _clamp_inplace(T, x):
    h = x * 3.0
    h.clamp_(-1.0, 1.5)
    h.sub_(0.25)
    return h


case("inplace_chain_grad", lambda r: [normal(r, 4, 5), normal(r, 5, 3)], _relu_inplace_chain)
case("inplace_clamp_sub", lambda r: [normal(r, 3, 4)], _clamp_inplace)
case("inplace_relu_sequential", lambda r: [normal(r, 3, 4), normal(r, 4, 4)],
     lambda T, x, w: T.nn.Sequential(T.nn.ReLU(inplace=True))(x @ w) * 3.0)


def _view_inplace(T, x):
    y = x * 2.0
    row = y[1]
    row.mul_(3.0)  # through a view: y's history is rebased too
    col = y[:, 0]
    return [y, col * 1.0, row + 0.0]


case("inplace_through_view", lambda r: [normal(r, 3, 4)], _view_inplace)


def _copy_fill_zero(T, x, s):
    y = x * 1.0
    y[0].copy_(s)
    y[1].fill_(s[2])
    y[2].zero_()
    return y


case("inplace_copy_fill_zero", lambda r: [normal(r, 3, 4), normal(r, 4)], _copy_fill_zero)
case("inplace_leaf_refused", lambda r: [normal(r, 3)], lambda T, x: x.relu_())
case("inplace_saved_tensor_version", lambda r: [normal(r, 3)], lambda T, x: (lambda z: (z.add_(1.0), z.sum().backward()))((x * 1.0).exp()))


# ---------------------------------------------------------------------------
# Bool masks in the attention modules (om.tensor of a NumPy bool array)
# ---------------------------------------------------------------------------

_ENC_PARAMS = [
    ("self_attn.in_proj_weight", (24, 8)), ("self_attn.in_proj_bias", (24,)),
    ("self_attn.out_proj.weight", (8, 8)), ("self_attn.out_proj.bias", (8,)),
    ("linear1.weight", (16, 8)), ("linear1.bias", (16,)), ("linear2.weight", (8, 16)), ("linear2.bias", (8,)),
    ("norm1.weight", (8,)), ("norm1.bias", (8,)), ("norm2.weight", (8,)), ("norm2.bias", (8,)),
]
_KPM = np.array([[False, False, False, True, True], [False, False, False, False, False]])


def _encoder_inputs(r):
    params = [(normal(r, *shape) * 0.3 + (1.0 if name.startswith("norm") and name.endswith("weight") else 0.0)).astype(np.float32) for name, shape in _ENC_PARAMS]
    return [normal(r, 2, 5, 8), _KPM, *params]


def _encoder(T, src, kpm, *params, norm_first=False):
    layer = T.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True, norm_first=norm_first)
    layer.load_state_dict({name: p.detach() for (name, _), p in zip(_ENC_PARAMS, params)})
    causal = T.triu(T.ones(5, 5, dtype=T.bool), diagonal=1)  # True = not allowed
    return [layer(src, src_mask=causal, src_key_padding_mask=kpm), layer(src, src_key_padding_mask=T.tensor(_KPM))]


case("transformer_encoder_bool_masks", _encoder_inputs, _encoder, tol=2e-6, grad_tol=1e-5, no_grad=tuple(range(2, 14)))
case("transformer_encoder_bool_masks_prenorm", _encoder_inputs, lambda T, *a: _encoder(T, *a, norm_first=True),
     tol=2e-6, grad_tol=1e-5, no_grad=tuple(range(2, 14)))
case("transformer_float_mask", _encoder_inputs,
     lambda T, src, kpm, *p: _encoder(T, src, kpm.float().masked_fill(kpm, float("-inf")), *p), tol=2e-6, grad_tol=1e-5, no_grad=tuple(range(2, 14)))


# ---------------------------------------------------------------------------
# Creation and conversion
# ---------------------------------------------------------------------------

case("linspace_logspace", lambda r: [],
     lambda T: [T.linspace(0, 1, 5), T.linspace(-3.5, 7.25, 11), T.linspace(2, 2, 1), T.linspace(0.1, 0.7, 7), T.linspace(5, -5, 4),
                T.logspace(0, 2, 3), T.logspace(-1, 1, 5, base=2.0)], grad=False, tol=1e-6)
case("one_hot", lambda r: [ints(r, 0, 4, 2, 3)], lambda T, i: [T.nn.functional.one_hot(i), T.nn.functional.one_hot(i, 6)], grad=False)
case("new_and_like", lambda r: [normal(r, 2, 3), ints(r, 0, 5, 3)],
     lambda T, x, i: [x.new_zeros(2, 2), x.new_ones((3,)), x.new_full((2,), 1.5), i.new_zeros(2), i.new_full((2,), 7), x.new_tensor([1, 2]),
                      T.full_like(x, 2), T.full_like(i, 3), T.zeros_like(x, dtype=T.bool), T.ones(2, 2, dtype=T.bool), T.full((2,), True),
                      T.empty(0, 3).shape[1], x.new_empty(0).dtype == T.float32], grad=False)
case("type_conversions", lambda r: [special(r, 2, 4), ints(r, -3, 3, 4)],
     lambda T, x, i: [x.long(), x.type(T.int64), i.float(), i.type(T.float32), i.to(T.float32), x.to(i), i.bool().long(), T.tensor([True, False]).float(),
                      x.type(), i.type(), T.tensor([True]).type(), x.to(dtype=T.bool), i.type_as(x)], grad=False)
case("python_scalars", lambda r: [normal(r, 3), ints(r, 0, 9, 2, 2)],
     lambda T, x, i: [x[0].item(), float(x[1]), int(i[0, 0]), bool(i[1, 1] > 4), i.tolist(), (i > 4).tolist(), x.tolist(), len(i), i.numel(), i.dim(),
                      [r.tolist() for r in i], i.size(1), list(i.shape), f"{x[2]:.3f}" == format(float(x[2]), ".3f")], grad=False)
case("linalg_vector_norm", lambda r: [normal(r, 3, 4)],
     lambda T, x: [T.linalg.vector_norm(x), T.linalg.vector_norm(x, 1, dim=1), T.linalg.vector_norm(x, float("inf"), dim=0, keepdim=True),
                   T.linalg.norm(x), T.linalg.matrix_norm(x), T.linalg.vector_norm(x, 2.5)], tol=2e-6, grad_tol=1e-5)
case("getitem_list_read_as_tuple", lambda r: [normal(r, 4, 5, 3)],
     lambda T, x: [x[[[0], [1]]], x[[[0, 2], [1, 4]]], x[[slice(1, 3), 0]], x[[0, 2, 3]]])
case("extrema_backward_nan_and_signs", lambda r: [np.array([[1.0, np.nan, 3.0, np.nan], [2.0, -1.0, 2.0, 0.5]], np.float32)],
     lambda T, x: [x.amax(1), x.amin(1)])
case("max_whole_backward_nan", lambda r: [np.array([1.0, np.nan, 3.0, np.nan], np.float32)], lambda T, x: [x.max(), x.min()])
case("prod_backward_nan", lambda r: [np.array([[1.5, np.nan, 2.0], [0.5, 3.0, -2.0]], np.float32)], lambda T, x: [x.prod(1)], tol=1e-6)
