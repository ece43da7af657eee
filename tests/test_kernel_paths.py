"""Which kernel paths this run covers: a path of this architecture that the
CPU lacks is a skip naming it (with the features it needs), so that a run
without AVX-512 says so in pytest's summary instead of leaving it out of
every bit-identity test silently."""

import pytest

import onemodel as om
from conftest import ALL_PATHS, PATHS

NEEDS = {"scalar": "nothing", "v128": "SSE4.1 (NEON on aarch64)", "avx2": "AVX2 and FMA",
         "avx512": "AVX-512 F, BW, DQ and VL"}


@pytest.mark.parametrize("path", ALL_PATHS)
def test_kernel_path_is_covered(path):
    if path not in PATHS:
        pytest.skip(f"this CPU lacks the {path} kernel path (needs {NEEDS[path]}): every bit-identity test ran without it")
    with om.compute.settings(kernel_path=path):
        assert om.compute.info()["kernel_path"] == path


def test_every_available_path_is_one_of_the_known_ones():
    assert set(PATHS) <= set(ALL_PATHS), PATHS
    assert "scalar" in PATHS
