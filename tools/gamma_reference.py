"""Write the gamma family's reference values (testdata/math/gamma.npz) for
tests/test_gamma_family.py: lgamma, digamma and polygamma(n, ·), n = 1..4,
at binary32 arguments, computed by mpmath at 50 digits and rounded once to
binary32 (so each reference is the correctly rounded value).

Arguments: dense grids over every range the algorithms treat differently
(the reflection below 0, the series windows around 1 and 2, the shifted
range below 10, Stirling's range, huge and tiny values), the binary32
neighbours of digamma's zero, and the special values.
Usage: python tools/gamma_reference.py (needs mpmath; CI never runs it).
"""

from __future__ import annotations

from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 50
OUT = Path(__file__).resolve().parent.parent / "testdata" / "math" / "gamma.npz"


def grid() -> np.ndarray:
    rng = np.random.default_rng(2026)
    parts = [
        np.linspace(-30, 30, 6001),
        np.linspace(0.7, 1.3, 2001),
        np.linspace(1.7, 2.3, 2001),
        np.linspace(1.40, 1.52, 1001),
        np.geomspace(1e-30, 1e-3, 400),
        np.geomspace(10, 1e30, 400),
        -np.geomspace(1e-30, 1e-3, 200),
        rng.uniform(-60, 60, 3000),
        rng.uniform(0, 12, 3000),
    ]
    x = np.concatenate(parts).astype(np.float32)
    root = np.float32(1.4616321449683623)
    near = [root]
    for _ in range(8):
        near.append(np.nextafter(near[-1], np.float32(2)))
    below = [root]
    for _ in range(8):
        below.append(np.nextafter(below[-1], np.float32(0)))
    x = np.concatenate([x, np.array(near + below, np.float32), np.array([1.0, 2.0, 0.5, 3.0, 10.0, 1e-38, 1e-45], np.float32)])
    return np.unique(x[np.isfinite(x)])


def f32(v) -> float:
    return float(np.float32(float(v)))


def lgamma(x: float) -> float:
    if x <= 0 and x == int(x):
        return float("inf")
    return f32(mp.re(mp.loggamma(mp.mpf(x))))


def polygamma(n: int, x: float) -> float:
    if x <= 0 and x == int(x):
        # The poles, in torch's conventions: ψ is −inf at +0 and NaN at the
        # negative integers; ψ⁽ⁿ⁾, n ≥ 1, is (−1)ⁿ⁺¹·inf.
        if n == 0:
            return float("-inf") if x == 0 else float("nan")
        return float("inf") if n % 2 else float("-inf")
    return f32(mp.polygamma(n, mp.mpf(x)))


def main() -> None:
    x = grid()
    arrays = {"x": x, "lgamma": np.array([lgamma(float(v)) for v in x], np.float32)}
    for n in range(5):
        arrays[f"polygamma{n}"] = np.array([polygamma(n, float(v)) for v in x], np.float32)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT}: {len(x)} arguments")


if __name__ == "__main__":
    main()
