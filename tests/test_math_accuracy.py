"""Accuracy of erfc, erfinv, pow and atan2 through the Python API against
binary64 references (Python's math.erfc/math.erf, libm's pow and atan2 via
NumPy's float64): within 2 ulp on dense samples (pow at every |p·ln x|,
large exponents included), every kernel path the same bits. The exhaustive
and sampled measurements are tools/accuracy.rs
(docs/numerics.md); these are the API-level checks that run in seconds."""

import math

import numpy as np
import pytest

import onemodel as om
from conftest import PATHS


def ulp32(r: np.ndarray) -> np.ndarray:
    """The float32 ulp at the magnitude of r (2^-149 below the normal range)."""
    _, e = np.frexp(np.maximum(np.abs(r), 2.0**-126))  # |r| = m·2^e, m in [0.5, 1)
    return np.ldexp(1.0, e - 24)


def err_ulp(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    y = y.astype(np.float64)
    with np.errstate(over="ignore"):  # a reference past binary32's range rounds to inf: the class it must have
        ref32 = ref.astype(np.float32)
    same_class = (np.isnan(y) == np.isnan(ref)) & (np.isinf(y) == np.isinf(ref32))
    finite = np.isfinite(y) & np.isfinite(ref)
    e = np.where(finite, np.abs(y - np.where(finite, ref, 0.0)) / ulp32(np.where(finite, ref, 1.0)), 0.0)
    inf_ok = ~np.isinf(y) | (y == ref32)
    return np.where(same_class & inf_ok, e, np.inf)


def on_every_path(fn, *arrays):
    outs = []
    for path in PATHS:
        with om.compute.settings(mode="exact", kernel_path=path):
            outs.append(fn(*[om.tensor(a) for a in arrays]).numpy())
    for o in outs[1:]:
        assert np.array_equal(o.view(np.uint32), outs[0].view(np.uint32))
    return outs[0]


def test_erfc_is_within_2_ulp():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-4, 11, 200_000), rng.standard_normal(50_000) * 0.5,
                        np.linspace(9.0, 10.1, 20_000)]).astype(np.float32)
    y = on_every_path(om.erfc, x)
    ref = np.array([math.erfc(float(v)) for v in x])
    e = err_ulp(y, ref)
    assert e.max() <= 2.0, (e.max(), x[e.argmax()])


def _erfinv_ref(u: float) -> float:
    """The binary64 root of erf(y) = u (Newton on math.erf / math.erfc from
    a bisection bracket: independent of onemodel's value)."""
    a = abs(u)
    lo, hi = 0.0, 6.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if (math.erf(mid) < a) if a <= 0.5 else (math.erfc(mid) > 1.0 - a):
            lo = mid
        else:
            hi = mid
    y = (lo + hi) / 2
    for _ in range(3):
        d = (math.erf(y) - a) if a <= 0.5 else ((1.0 - a) - math.erfc(y))
        y -= d / (2 / math.sqrt(math.pi) * math.exp(-y * y))
    return math.copysign(y, u)


def test_erfinv_is_within_2_ulp_and_its_ends_are_inf():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-1, 1, 20_000), 1 - rng.uniform(0, 1e-3, 5_000),
                        1 - np.float32(2.0**-24) * np.arange(1, 200), rng.uniform(-0.5, 0.5, 5_000)]).astype(np.float32)
    x = x[np.abs(x) < 1]
    y = on_every_path(om.erfinv, x)
    ref = np.array([_erfinv_ref(float(v)) for v in x])
    e = err_ulp(y, ref)
    assert e.max() <= 2.0, (e.max(), x[e.argmax()])
    ends = om.erfinv(om.tensor(np.array([1.0, -1.0, 1.5, np.nan, 0.0, -0.0], np.float32))).numpy()
    assert ends[0] == np.inf and ends[1] == -np.inf and np.isnan(ends[2:4]).all()
    assert np.signbit(ends[5]) and not np.signbit(ends[4])


def test_pow_with_large_exponents_is_within_2_ulp():
    rng = np.random.default_rng(2)
    n = 100_000
    x = np.concatenate([rng.uniform(0, 8, n), 1 + rng.uniform(-1e-3, 1e-3, n), -rng.uniform(0, 4, n)]).astype(np.float32)
    p = np.concatenate([rng.uniform(-40, 40, n), rng.uniform(-1e5, 1e5, n), np.round(rng.uniform(-60, 60, n))]).astype(np.float32)
    y = on_every_path(om.pow, x, p)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), p.astype(np.float64))
    e = err_ulp(y, ref)
    assert e.max() <= 2.0, (e.max(), x[e.argmax()], p[e.argmax()])
    # The scalar exponent (torch.pow(tensor, number)).
    for q in (25.1, -13.3, 7.0, -41.0):
        ys = on_every_path(lambda t: t ** q, x[: 2 * n])
        with np.errstate(all="ignore"):
            rs = np.power(x[: 2 * n].astype(np.float64), np.float64(np.float32(q)))
        assert err_ulp(ys, rs).max() <= 2.0, q


@pytest.mark.parametrize("x, p, want", [
    (np.nan, 0.0, 1.0), (1.0, np.nan, 1.0), (-0.0, -3.0, -np.inf), (0.0, -3.0, np.inf), (-2.0, 1e30, np.inf),
    (-2.0, -1e30, 0.0), (-1.0, np.inf, 1.0), (-8.0, 1 / 3, np.nan), (-0.0, 3.0, -0.0), (-np.inf, -3.0, -0.0),
])
def test_pow_special_values_are_torchs(x, p, want):
    got = om.pow(om.tensor(np.float32(x)), om.tensor(np.float32(p))).numpy()
    assert (np.isnan(got) and np.isnan(want)) or (got == want and np.signbit(got) == np.signbit(want))


def test_atan2_with_subnormal_operands_is_within_2_ulp():
    rng = np.random.default_rng(3)
    n = 100_000
    small = (rng.integers(1, 2**23, n).astype(np.uint32)).view(np.float32)
    big = np.exp2(rng.uniform(-126, 40, n)).astype(np.float32)
    sy, sx = rng.choice([-1, 1], n).astype(np.float32), rng.choice([-1, 1], n).astype(np.float32)
    y = np.concatenate([small * sy, big * sy, np.array([2.04e-42], np.float32)])
    x = np.concatenate([big * sx, small * sx, np.array([3.5722557e-8], np.float32)])
    got = on_every_path(om.atan2, y, x)
    ref = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    e = err_ulp(got, ref)
    assert e.max() <= 2.0, (e.max(), y[e.argmax()], x[e.argmax()])
