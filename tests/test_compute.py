"""Compute settings: mode, kernel paths, threads, environment variables,
and the floating-point environment."""

import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import onemodel as om
from onemodel import _core
from conftest import bits


def test_mode_round_trip_and_context_manager():
    om.compute.set_mode("exact")
    assert om.compute.get_mode() == "exact"
    with om.compute.mode("fast"):
        assert om.compute.get_mode() == "fast"
    assert om.compute.get_mode() == "exact"
    with pytest.raises(ValueError, match="'fast' or 'exact'"):
        om.compute.set_mode("turbo")


def test_kernel_paths():
    paths = om.compute.available_kernel_paths()
    assert paths[0] == "scalar"
    assert om.compute.best_kernel_path() == paths[-1]
    assert om.compute.kernel_path() == paths[-1]
    for p in paths:
        om.compute.set_kernel_path(p)
        assert om.compute.kernel_path() == p
    om.compute.set_kernel_path(None)
    assert om.compute.kernel_path() == paths[-1]
    with pytest.raises(ValueError, match="unknown kernel path"):
        om.compute.set_kernel_path("sse9")


def test_forcing_a_path_this_cpu_lacks_names_the_missing_features():
    missing = [p for p in ("v128", "avx2", "avx512") if p not in om.compute.available_kernel_paths()]
    features = {"v128": "sse4.1", "avx2": "avx2", "avx512": "avx512f"}
    for p in missing:
        with pytest.raises(RuntimeError, match=features[p]):
            om.compute.set_kernel_path(p)
    # On a CPU with every path there is nothing missing; the call must then succeed.
    if not missing:
        om.compute.set_kernel_path("avx512")


def test_threads():
    om.compute.set_threads(3)
    assert om.compute.get_threads() == 3
    with om.compute.threads(1):
        assert om.compute.get_threads() == 1
    assert om.compute.get_threads() == 3
    with pytest.raises(ValueError, match="at least 1"):
        om.compute.set_threads(0)


def _run(code: str, **env) -> str:
    e = dict(os.environ)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True).stdout.strip()


def test_environment_variables_set_path_and_threads():
    out = _run("import onemodel as om; print(om.compute.kernel_path(), om.compute.get_threads())",
               ONEMODEL_KERNEL_PATH="scalar", ONEMODEL_THREADS="3")
    assert out == "scalar 3"
    bad = subprocess.run(
        [sys.executable, "-c", "import onemodel as om; print(om.compute.kernel_path())"],
        env={**os.environ, "ONEMODEL_KERNEL_PATH": "bogus"}, capture_output=True, text=True, check=True,
    )
    assert "ignoring ONEMODEL_KERNEL_PATH" in bad.stderr
    assert bad.stdout.strip() == om.compute.best_kernel_path()


def test_size_thresholds_are_on_by_default_and_keep_small_work_off_the_counts():
    # A fresh process: the suite's fixture turns the thresholds off here.
    assert _run("import onemodel as om; print(om._core.size_thresholds())") == "True"
    a = om.ones(64, 64)
    from conftest import chunk_count
    with om.compute.threads(3):
        _core.set_size_thresholds(True)
        try:
            with chunk_count() as on:
                a @ a  # 64³ multiply-adds: below the GEMM's threshold
        finally:
            _core.set_size_thresholds(False)
        with chunk_count() as off:
            b = a @ a
    # Kept on the calling thread, the product is not counted as a parallel
    # call; with the thresholds off the same product is (its chunks are a
    # function of the shape), and gives the same values (64 each).
    assert on["calls"] == 0, on
    assert off["calls"] >= 1, off
    assert np.array_equal(b.numpy(), np.full((64, 64), 64.0, np.float32))


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="MXCSR exists on x86-64 only")
def test_results_do_not_depend_on_flush_to_zero_left_set_by_the_caller():
    ftz_daz = (1 << 15) | (1 << 6)
    a = np.full(64, 1e-20, dtype=np.float32)
    b = np.full(64, 1e-20, dtype=np.float32)  # products 1e-40: subnormal
    m = np.full((8, 8), 1e-20, dtype=np.float32)
    want_mul = a * b
    assert want_mul[0] != 0.0
    saved = _core.get_mxcsr()
    results = []
    _core.set_mxcsr(saved | ftz_daz)
    try:
        for mode in ("fast", "exact"):
            with om.compute.mode(mode):
                got = (om.tensor(a) * om.tensor(b)).numpy()
                prod = om.matmul(om.tensor(m), om.tensor(m)).numpy()
                s = om.tensor(want_mul).sum().numpy()
            results.append((got, prod, s))
        left_set = _core.get_mxcsr() & ftz_daz
    finally:
        _core.set_mxcsr(saved)
    # Compare only now: with DAZ set, NumPy itself would read subnormals as 0.
    assert left_set == ftz_daz  # the caller's setting is restored after each kernel
    for got, prod, s in results:
        assert np.array_equal(bits(got), bits(want_mul))
        assert np.all(prod > 0)  # 8 subnormal terms each, not flushed
        assert s > 0
