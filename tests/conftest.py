import hashlib
import os

import numpy as np
import pytest

import onemodel as om


@pytest.fixture(autouse=True)
def _restore_compute_settings():
    """Every test starts and ends with the default mode, best path, 2 threads."""
    prev = (om.compute.get_mode(), om.compute.get_threads())
    om.compute.set_kernel_path(None)
    yield
    om.compute.set_mode(prev[0])
    om.compute.set_threads(prev[1])
    om.compute.set_kernel_path(None)


PATHS = om.compute.available_kernel_paths()
THREADS = (1, 2, 3, 8)
# Thread counts of the bit-identity tests. ONEMODEL_TEST_THREADS="1,3,8,16"
# adds more on a machine with more cores (tools/device_check.sh does).
THREAD_COUNTS = tuple(int(t) for t in os.environ.get("ONEMODEL_TEST_THREADS", "1,3,8").split(","))


def every_setting(threads=THREADS):
    """(path, threads) pairs covering every available path and thread count."""
    return [(p, t) for p in PATHS for t in threads]


def sha256_of(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype="<f4")).tobytes())
    return h.hexdigest()


def bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32)).view(np.uint32)
