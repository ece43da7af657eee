"""The GEMM through onemodel.matmul and linear (issue 3).

Exact mode is checked bit for bit against an independent reference: the
canonical order (docs/kernels.md, "The order it keeps") written with numpy float32 ufuncs, one
rounded multiply and one rounded add per k, NaN results canonical. Fast mode
is checked for the same bits at every thread count. The Rust tests
(rust/src/gemm/tests.rs) cover the f64 error bound, every tail 1..70, the
hand-derived special cases and the caller's MXCSR.
"""

import numpy as np
import pytest

import onemodel as om
from onemodel.gradcheck import gradient_check

from conftest import PATHS, THREADS, bits, every_setting

CANONICAL_NAN = np.uint32(0x7FC00000)
SPECIALS = np.array(
    [0x7FC00000, 0xFFC12345, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00400000, 0x7F7FFFFF],
    dtype=np.uint32,
).view(np.float32)


def operand(rng, shape, special=False):
    x = (rng.uniform(-1, 1, size=shape) * 2.0 ** rng.integers(-4, 5, size=shape)).astype(np.float32)
    if special:
        mask = rng.random(shape) < 1 / 64
        x[mask] = rng.choice(SPECIALS, size=int(mask.sum()))
    return x


def canonical_exact(a, b):
    """C = A·B in the canonical exact order: acc = +0; acc = acc + a·b for
    k ascending, each a float32 rounding; NaN results as 0x7FC00000."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    acc = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1])), dtype=np.float32)
    with np.errstate(all="ignore"):
        for p in range(a.shape[-1]):
            acc = acc + a[..., p : p + 1] * b[..., p : p + 1, :]
    out = acc.view(np.uint32).copy()
    out[np.isnan(acc)] = CANONICAL_NAN
    return out


def run_matmul(a, b, path, threads, mode):
    om.compute.set_kernel_path(path)
    om.compute.set_threads(threads)
    om.compute.set_mode(mode)
    return bits(om.matmul(om.from_numpy(a), om.from_numpy(b)).numpy())


SHAPES = [(1, 1, 1), (1, 7, 1), (6, 16, 16), (7, 17, 33), (13, 64, 5), (8, 128, 512), (65, 300, 70), (130, 257, 49)]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_exact_bits_every_path_and_thread_count(m, k, n):
    rng = np.random.default_rng(m * 10007 + k * 101 + n)
    a = operand(rng, (m, k), special=True)
    b = operand(rng, (k, n), special=True)
    want = canonical_exact(a, b)
    for path, threads in every_setting():
        got = run_matmul(a, b, path, threads, "exact")
        assert np.array_equal(got, want), (path, threads)


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_fast_bits_every_thread_count(m, k, n):
    rng = np.random.default_rng(m + k + n)
    a = operand(rng, (m, k))
    b = operand(rng, (k, n))
    for path in PATHS:
        first = run_matmul(a, b, path, 1, "fast")
        for threads in THREADS[1:]:
            assert np.array_equal(run_matmul(a, b, path, threads, "fast"), first), (path, threads)
        # Fast mode stays within the bound γ_k·Σ|a||b| of the float64 product.
        ref = a.astype(np.float64) @ b.astype(np.float64)
        gamma = k * 2.0**-24 / (1 - k * 2.0**-24)
        bound = gamma * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + 2 * k * 2.0**-150
        assert np.all(np.abs(first.view(np.float32) - ref) <= bound), path


def test_transposed_strided_and_batched_views():
    rng = np.random.default_rng(3)
    x = operand(rng, (45, 37), special=True)  # x: [K, M]; xᵀ·g
    g = operand(rng, (45, 29), special=True)
    w = operand(rng, (31, 29), special=True)  # g·Wᵀ
    a3 = operand(rng, (2, 1, 9, 11), special=True)
    b3 = operand(rng, (3, 11, 14), special=True)
    wide = operand(rng, (37, 90))
    cases = [
        (lambda X, G, W, A, B, V: X.t() @ G, canonical_exact(x.T, g)),
        (lambda X, G, W, A, B, V: G @ W.t(), canonical_exact(g, w.T)),
        (lambda X, G, W, A, B, V: A @ B, canonical_exact(a3, b3)),
        (lambda X, G, W, A, B, V: V[:, ::2] @ X, canonical_exact(wide[:, ::2], x)),
    ]
    tensors = [om.from_numpy(v) for v in (x, g, w, a3, b3, wide)]
    for fn, want in cases:
        for path, threads in every_setting((1, 3)):
            om.compute.set_kernel_path(path)
            om.compute.set_threads(threads)
            om.compute.set_mode("exact")
            assert np.array_equal(bits(fn(*tensors).numpy()), want), (path, threads)


def test_linear_is_the_product_then_the_bias():
    rng = np.random.default_rng(11)
    x = operand(rng, (5, 7, 19), special=True)
    w = operand(rng, (23, 19), special=True)
    bias = operand(rng, (23,))
    prod = canonical_exact(x, w.T).view(np.float32)
    with np.errstate(all="ignore"):
        want = (prod + bias).view(np.uint32).copy()
    want[np.isnan(want.view(np.float32))] = CANONICAL_NAN
    for path, threads in every_setting((1, 2)):
        om.compute.set_kernel_path(path)
        om.compute.set_threads(threads)
        om.compute.set_mode("exact")
        y = om.functional.linear(om.from_numpy(x), om.from_numpy(w), om.from_numpy(bias))
        assert np.array_equal(bits(y.numpy()), want), (path, threads)


GEN = om.Generator().manual_seed(3)


def leaf(*shape):
    return om.randn(*shape, generator=GEN).requires_grad_()


GRAD_CASES = {
    "matmul_tails": (lambda a, b: a @ b, lambda: (leaf(7, 13), leaf(13, 17))),
    "matmul_batched": (lambda a, b: a @ b, lambda: (leaf(3, 5, 9), leaf(1, 9, 18))),
    "matmul_transposed": (lambda a, b: a.t() @ b.t(), lambda: (leaf(11, 6), leaf(19, 11))),
    "linear": (lambda x, w, b: om.functional.linear(x, w, b), lambda: (leaf(4, 3, 10), leaf(25, 10), leaf(25))),
    "linear_nobias": (lambda x, w: om.functional.linear(x, w), lambda: (leaf(9, 33), leaf(7, 33))),
}


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradient_check(case, mode):
    om.compute.set_mode(mode)
    fn, make = GRAD_CASES[case]
    report = gradient_check(fn, make(), name=f"gemm_{case}_{mode}")
    assert report.passed
    assert report.max_scaled_error <= 1.0


@pytest.mark.skipif(not om.compute.cpu_features() or "sse4.1" not in om.compute.cpu_features(), reason="x86-64 MXCSR")
def test_flush_to_zero_left_set_by_the_caller_changes_nothing():
    """A = 2^-149 (a subnormal input: DAZ would read 0), B = 1: each term is
    2^-149 (FTZ would flush it) and k of them sum to k·2^-149, bits k."""
    from onemodel import _core

    m, k, n = 40, 300, 70
    a = np.full((m, k), np.uint32(1), dtype=np.uint32).view(np.float32)
    b = np.ones((k, n), dtype=np.float32)
    before = _core.get_mxcsr()
    for path, threads in every_setting((1, 2)):
        for mode in ("exact", "fast"):
            om.compute.set_kernel_path(path)
            om.compute.set_threads(threads)
            om.compute.set_mode(mode)
            A, B = om.from_numpy(a), om.from_numpy(b)
            _core.set_mxcsr(before | 0x8040)  # FTZ (bit 15) | DAZ (bit 6)
            try:
                c = om.matmul(A, B)
                after = _core.get_mxcsr()
            finally:
                _core.set_mxcsr(before)
            assert after == before | 0x8040, "the caller's MXCSR was not restored"
            assert np.all(bits(c.numpy()) == k), (path, threads, mode)
