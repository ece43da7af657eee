"""Operator values against independent references: NumPy's IEEE float32
element-wise arithmetic, double-precision sums written out here, and a
NumPy emulation of the canonical product order."""

import numpy as np
import pytest

import onemodel as om
from conftest import bits, every_setting

RNG = np.random.default_rng(1234)

SPECIALS = np.array(
    [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 3.4e38, -3.4e38, 1.17549435e-38, 0.1],
    dtype=np.float32,
)


def _operands(shape_a, shape_b):
    a = RNG.standard_normal(shape_a).astype(np.float32)
    b = RNG.standard_normal(shape_b).astype(np.float32)
    return a, b


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize(
    "shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (5,)), ((5, 1), (1, 6))]
)
def test_binary_ops_equal_numpy_float32_bit_for_bit(op, shapes):
    a, b = _operands(*shapes)
    got = getattr(om, op)(om.tensor(a), om.tensor(b)).numpy()
    want = getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide"}[op])(a, b)
    assert got.shape == want.shape
    assert np.array_equal(bits(got), bits(want))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_ops_on_special_values(op):
    a = np.repeat(SPECIALS, len(SPECIALS))
    b = np.tile(SPECIALS, len(SPECIALS))
    f = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    with np.errstate(all="ignore"):
        want = f(a, b)
    for mode in ("fast", "exact"):
        with om.compute.mode(mode):
            got = getattr(om, op)(om.tensor(a), om.tensor(b)).numpy()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(bits(got[~nan]), bits(want[~nan]))
        if mode == "exact":
            assert np.all(bits(got[nan]) == 0x7FC00000)


def test_operators_and_scalars():
    x = om.tensor([1.0, 2.0, 4.0])
    assert (x + 1).tolist() == [2.0, 3.0, 5.0]
    assert (1 - x).tolist() == [0.0, -1.0, -3.0]
    assert (2 * x).tolist() == [2.0, 4.0, 8.0]
    assert (1 / x).tolist() == [1.0, 0.5, 0.25]
    assert (-x).tolist() == [-1.0, -2.0, -4.0]
    assert om.add(x, x, alpha=2).tolist() == [3.0, 6.0, 12.0]
    y = om.tensor([1.0, 2.0])
    y += 1
    assert y.tolist() == [2.0, 3.0]


def test_relu_matches_definition():
    x = np.array([-2.0, -0.0, 0.0, 1e-45, 3.0, np.nan, -np.inf, np.inf], dtype=np.float32)
    got = om.relu(om.tensor(x)).numpy()
    assert got[:3].tolist() == [0.0, 0.0, 0.0]
    assert got[3] == np.float32(1e-45) and got[4] == 3.0
    assert np.isnan(got[5]) and got[6] == 0.0 and got[7] == np.inf


def _sequential_f64_sum(values: np.ndarray) -> np.float32:
    acc = 0.0
    for v in values.reshape(-1):
        acc += float(v)
    return np.float32(acc)


@pytest.mark.parametrize("dims", [None, 0, 1, 2, (0, 2), (-1, 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_and_mean_are_double_sums_rounded_once(dims, keepdim):
    x = (RNG.standard_normal((3, 4, 5)) * np.float32(1e3)).astype(np.float32)
    x[0, 0, 0] = 1e7  # make the order and precision matter
    t = om.tensor(x)
    s = t.sum(dims, keepdim=keepdim).numpy()
    m = t.mean(dims, keepdim=keepdim).numpy()
    dlist = tuple(range(3)) if dims is None else tuple(d % 3 for d in np.atleast_1d(dims))
    moved = np.moveaxis(x, dlist, tuple(range(3 - len(dlist), 3)))
    kept = moved.shape[: 3 - len(dlist)]
    want_s = np.array([_sequential_f64_sum(moved[i]) for i in np.ndindex(*kept)], dtype=np.float32).reshape(kept)
    n = int(np.prod([x.shape[d] for d in dlist]))
    want_m = np.array(
        [np.float32(sum(float(v) for v in moved[i].reshape(-1)) / n) for i in np.ndindex(*kept)], dtype=np.float32
    ).reshape(kept)
    if keepdim:
        shape = tuple(1 if d in dlist else x.shape[d] for d in range(3))
        want_s, want_m = want_s.reshape(shape), want_m.reshape(shape)
    assert np.array_equal(bits(s), bits(want_s))
    assert np.array_equal(bits(m), bits(want_m))


def _chain_f32(values: np.ndarray) -> np.float32:
    """The double chain by NumPy's cumulative sum (sequential by definition)."""
    return np.float32(np.cumsum(values.reshape(-1).astype(np.float64))[-1])


@pytest.mark.parametrize(
    "kind", ["normal", "uniform", "mean 1e4", "heavy tails", "integers", "ties", "subnormal and zeros", "nan"]
)
def test_long_sums_equal_the_sequential_chain(kind):
    # Long contiguous runs take the blocked chain (kernels/double_chain.rs);
    # its result must be the written-out chain's, whatever the data.
    rng = np.random.default_rng(7)
    n = 3 * 37 * 1001
    x = {
        "normal": lambda: rng.standard_normal(n) * 1.7,
        "uniform": lambda: rng.random(n),
        "mean 1e4": lambda: rng.standard_normal(n) + 1e4,
        "heavy tails": lambda: rng.standard_normal(n) * np.exp(rng.standard_normal(n) * 6),
        "integers": lambda: rng.integers(-50, 1000, n),
        # After 2^50 the doubles are 1/4 apart: odd multiples of 1/8 are
        # ties; the last term takes 2^50 away so that f32 shows the result.
        "ties": lambda: np.concatenate([[2.0**50], rng.integers(0, 64, n - 2) * 0.125, [-(2.0**50)]]),
        "subnormal and zeros": lambda: rng.choice([0.0, -0.0, 1e-45, -3e-39, 1.0, 1e-30], n),
        "nan": lambda: np.where(rng.random(n) < 1e-4, np.nan, rng.random(n)),
    }[kind]().astype(np.float32)
    t = om.tensor(x.reshape(3, 37, 1001))
    results = []
    for path in om.compute.available_kernel_paths():
        for threads in (1, 2):
            with om.compute.settings(kernel_path=path, threads=threads):
                results.append((t.sum().numpy(), t.sum((0, 2)).numpy()))
    whole, rows = results[0]
    for w, r in results[1:]:
        assert bits(w) == bits(whole) and np.array_equal(bits(r), bits(rows))
    want_rows = np.array([_chain_f32(x.reshape(3, 37, 1001)[:, j, :]) for j in range(37)], np.float32)
    if kind == "nan":
        assert np.isnan(whole) and np.isnan(rows).any()
        assert np.array_equal(np.isnan(rows), np.isnan(want_rows))
        ok = ~np.isnan(want_rows)
        assert np.array_equal(bits(rows[ok]), bits(want_rows[ok]))
        return
    assert bits(whole) == bits(_chain_f32(x))
    assert np.array_equal(bits(rows), bits(want_rows))


def test_sum_of_strided_view_follows_logical_order():
    x = RNG.standard_normal((6, 7)).astype(np.float32)
    t = om.tensor(x).t()[::2]  # strided, transposed
    want = np.float32(sum(float(v) for v in x.T[::2].reshape(-1)))
    assert t.sum().item() == want


def canonical_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact mode's order, emulated in NumPy float32: acc = fl(acc + fl(a·b)), k ascending from +0."""
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k in range(a.shape[1]):
        acc = acc + np.multiply.outer(a[:, k], b[k, :]).astype(np.float32)
    return acc


@pytest.mark.parametrize("mkn", [(1, 1, 1), (3, 5, 7), (17, 33, 9), (1, 70, 1), (64, 1, 65), (40, 0, 3)])
def test_exact_matmul_is_the_canonical_order_on_every_path_and_thread_count(mkn):
    m, k, n = mkn
    a, b = _operands((m, k), (k, n))
    want = canonical_product(a, b)
    om.compute.set_mode("exact")
    for path, threads in every_setting():
        with om.compute.settings(kernel_path=path, threads=threads):
            got = om.matmul(om.tensor(a), om.tensor(b)).numpy()
        assert np.array_equal(bits(got), bits(want)), (path, threads)


def test_exact_matmul_with_special_operands():
    a = RNG.choice(SPECIALS, size=(9, 14)).astype(np.float32)
    b = RNG.choice(SPECIALS, size=(14, 11)).astype(np.float32)
    with np.errstate(all="ignore"):
        want = canonical_product(a, b)
    om.compute.set_mode("exact")
    for path, threads in every_setting((1, 3)):
        with om.compute.settings(kernel_path=path, threads=threads):
            got = om.matmul(om.tensor(a), om.tensor(b)).numpy()
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        assert np.array_equal(bits(got[~nan]), bits(want[~nan]))


def test_fast_matmul_within_the_float_bound_and_thread_independent():
    a, b = _operands((37, 129), (129, 23))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = 129 * 2.0**-24 / (1 - 129 * 2.0**-24) * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    om.compute.set_mode("fast")
    results = []
    for threads in (1, 2, 3, 8):
        with om.compute.threads(threads):
            results.append(om.matmul(om.tensor(a), om.tensor(b)).numpy())
    for r in results[1:]:
        assert np.array_equal(bits(r), bits(results[0]))
    assert np.all(np.abs(results[0] - ref) <= bound)


@pytest.mark.parametrize(
    "sa,sb",
    [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 3, 4), (2, 4, 5))],
)
def test_matmul_shapes_follow_torch(sa, sb):
    a, b = _operands(sa, sb)
    got = om.matmul(om.tensor(a), om.tensor(b)).numpy()
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5)


def test_matmul_reads_transposed_and_strided_views():
    a, b = _operands((6, 10), (8, 6))
    ta = om.tensor(a)[:, ::2]  # 6x5, column stride 2
    tb = om.tensor(b).t()[::2]  # 3x8 -> (6x8)^T sliced: shape (3, 8)
    got = om.matmul(ta.t(), om.tensor(a)[:, :8][:, ::2][:, :3].contiguous() @ tb).numpy()
    want = a[:, ::2].T.astype(np.float64) @ (a[:, :8][:, ::2][:, :3].astype(np.float64) @ b.T[::2].astype(np.float64))
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4)


def test_linear_matches_reference_and_bias_is_added_after_the_sum():
    x, w = _operands((2, 3, 5), (4, 5))
    bias = RNG.standard_normal(4).astype(np.float32)
    om.compute.set_mode("exact")
    got = om.functional.linear(om.tensor(x), om.tensor(w), om.tensor(bias)).numpy()
    want = canonical_product(x.reshape(6, 5), w.T) + bias
    assert np.array_equal(bits(got.reshape(6, 4)), bits(want))
