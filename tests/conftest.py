import contextlib
import hashlib
import os
import platform

import numpy as np
import pytest

import onemodel as om


@pytest.fixture(autouse=True)
def _restore_compute_settings():
    """Every test starts and ends with the default mode, best path, 2 threads.

    And with the kernels' size thresholds off: below them a kernel runs its
    chunks on the calling thread, which is right for speed but would make
    most of this suite's shapes serial, so that "the same bits at 1, 3 and 8
    threads" would compare one serial run three times. The thresholds choose
    only which thread runs a chunk, never the chunks, so turning them off
    changes no result; it makes every kernel's parallel path run on the
    suite's small shapes. (Production keeps them on; test_compute.py checks
    the switch and that they are on by default.)"""
    prev = (om.compute.get_mode(), om.compute.get_threads())
    om.compute.set_kernel_path(None)
    om._core.set_size_thresholds(False)
    yield
    om._core.set_size_thresholds(True)
    om.compute.set_mode(prev[0])
    om.compute.set_threads(prev[1])
    om.compute.set_kernel_path(None)


PATHS = om.compute.available_kernel_paths()
#: Every kernel path of this architecture; those this CPU lacks are reported
#: as skips naming them (tests/test_kernel_paths.py), so a
#: run without AVX-512 says so instead of dropping it silently.
ALL_PATHS = ("scalar", "v128") if platform.machine().lower() in ("aarch64", "arm64") else ("scalar", "v128", "avx2", "avx512")
THREADS = (1, 2, 3, 8)
# Thread counts of the bit-identity tests. ONEMODEL_TEST_THREADS="1,3,8,16"
# adds more on a machine with more cores (tools/device_check.sh does).
THREAD_COUNTS = tuple(int(t) for t in os.environ.get("ONEMODEL_TEST_THREADS", "1,3,8").split(","))


def every_setting(threads=THREADS):
    """(path, threads) pairs covering every path this CPU has and every
    thread count, for a test to loop over. A path the CPU lacks is reported
    once as a skip naming it by tests/test_kernel_paths.py."""
    return [(p, t) for p in PATHS for t in threads]


@contextlib.contextmanager
def chunk_count():
    """Counts how the kernels split the work inside the block: ``stats`` gets
    ``calls``, ``split`` (calls with more than one chunk) and ``most`` (the
    most chunks of one call). The chunking is a function of the shapes only
    (docs/engine.md, "Arithmetic rules"), so one count stands for every
    thread count."""
    stats = {}
    om._core.reset_chunk_stats()
    try:
        yield stats
    finally:
        stats["calls"], stats["split"], stats["most"] = om._core.chunk_stats()


def assert_splits(run, at_least=None):
    """Run ``run()`` and assert that some kernel of it split its work into at
    least ``at_least`` chunks (default: the largest thread count tested), so
    that "the same bits at 1, 3 and 8 threads" compares real parallel runs,
    not one serial run three times. Calls kept on the calling thread (inside
    ``dispatch::serial``) are not counted."""
    at_least = max(THREAD_COUNTS) if at_least is None else at_least
    with chunk_count() as stats:
        run()
    assert stats["most"] >= at_least, f"the work split into at most {stats['most']} chunks ({stats}), fewer than {at_least}"
    return stats


def exact_hashes(gradients) -> dict:
    """sha256_of(gradients()) in exact mode for every kernel path × thread
    count, keyed by (path, threads): what a pinned-hash test compares."""
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                seen[(path, threads)] = sha256_of(gradients())
    return seen


def sha256_of(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype="<f4")).tobytes())
    return h.hexdigest()


def bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32)).view(np.uint32)
