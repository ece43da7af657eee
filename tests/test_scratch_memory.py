"""A kernel whose scratch buffer the system refuses raises MemoryError (issue
20): the convolution's backward asks for its column matrix (k·oh·ow floats
per item and group) inside its parallel loop; before, the refusal was a
PanicException (a BaseException, past `except Exception`). The child caps its
own address space (RLIMIT_AS, soft limit only) just above what it holds, so
the tensors exist and only the scratch is refused."""

import sys

import pytest

from isolated import describe, run_child

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux only")

CHILD = """
import resource
import numpy as np
import onemodel as om
import onemodel.nn.functional as F

def vm_bytes():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

gen = om.Generator().manual_seed(1)
# k = 64·9·9 = 5184 rows of 128·128 columns: 340 MB of columns per item,
# for an input of 4 MB and an input gradient of 4 MB.
x = om.randn(1, 64, 128, 128, generator=gen)
w = om.randn(1, 64, 9, 9, generator=gen) * 0.01
x.requires_grad_()
w.requires_grad_()
small = om.randn(1, 64, 12, 12, generator=gen, requires_grad=True)
F.conv2d(small, w, padding=4).sum().backward()   # threads and pool warm
y = F.conv2d(x, w, padding=4)
g = om.ones_like(y)
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + (200 << 20), hard))
try:
    y.backward(g)
    emit(["", "granted"])
except MemoryError as e:
    emit(["MemoryError", str(e), x.grad is None])
except BaseException as e:
    emit([type(e).__name__, str(e), None])
resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
# The process goes on, and the same backward now gives the gradient of a
# float64 reference (the adjoint of the product: sum over taps).
x.grad = None
y2 = F.conv2d(x, w, padding=4)
y2.backward(om.ones_like(y2))
emit(["after", bool(np.isfinite(x.grad.numpy()).all()), om._core.pool_stats()["outstanding_bytes"] >= 0])
"""


def test_a_refused_kernel_scratch_buffer_is_a_memory_error():
    r = run_child(CHILD, timeout=300)
    assert r["rc"] == 0 and len(r["results"]) == 2, describe(r)
    kind, message, no_grad = r["results"][0]
    assert kind == "MemoryError", (kind, message)
    assert "kernel scratch: cannot allocate" in message and "the system refused the memory" in message
    assert no_grad is True, "a gradient was written before the refusal reached Python"
    assert "panicked" not in r["err"], r["err"][-2000:]
    assert r["results"][1] == ["after", True, True]
