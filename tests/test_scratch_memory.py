"""A kernel whose scratch buffer the system refuses raises MemoryError (issue
20): the convolution's backward asks for a block of its column matrix
(k × whole output rows, per item and group) inside its parallel loop;
before, the refusal was a PanicException (a BaseException, past `except Exception`); and a kernel's
`Vec` scratch (storage::scratch_vec), whose refusal aborted the process.
The child caps its own address space (RLIMIT_AS, soft limit only) just
above what it holds, so the tensors exist and only the scratch is
refused."""

import sys

import pytest

from isolated import describe, run_child

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux only")

#: The children's imports, their address-space size and the capped step.
PRELUDE = """
import resource
import numpy as np
import onemodel as om
import onemodel.nn.functional as F

def vm_bytes():
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024

def capped(extra, step, leaf):
    # step() with the address space capped `extra` bytes above what the
    # process holds; emits the outcome and whether leaf.grad stayed unset.
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (vm_bytes() + extra, hard))
    try:
        step()
        emit(["", "granted"])
    except MemoryError as e:
        emit(["MemoryError", str(e), leaf.grad is None])
    except BaseException as e:
        emit([type(e).__name__, str(e), None])
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
"""

CHILD = PRELUDE + """
gen = om.Generator().manual_seed(1)
# k = 64·9·9 = 5184 rows; the input gradient's column block holds whole
# output rows, here the one row of 16384 columns: 340 MB of columns per
# item, for an input of 34 MB and an input gradient of 34 MB. Eight items,
# so that each chunk is a whole item (fewer would split the channels,
# kernels/conv/backward.rs, and each chunk would ask for less).
x = om.randn(8, 64, 1, 16384, generator=gen)
w = om.randn(1, 64, 9, 9, generator=gen) * 0.01
x.requires_grad_()
w.requires_grad_()
small = om.randn(1, 64, 12, 12, generator=gen, requires_grad=True)
F.conv2d(small, w, padding=4).sum().backward()   # threads and pool warm
y = F.conv2d(x, w, padding=4)
g = om.ones_like(y)
capped(200 << 20, lambda: y.backward(g), x)
# The process goes on, and the same backward now gives the gradient of a
# float64 reference (the adjoint of the product: sum over taps).
x.grad = None
y2 = F.conv2d(x, w, padding=4)
y2.backward(om.ones_like(y2))
emit(["after", bool(np.isfinite(x.grad.numpy()).all()), om._core.pool_stats()["outstanding_bytes"] >= 0])
"""


def refused_in_child(code: str) -> dict:
    """Run `code`; check that its first result is the MemoryError of a
    refused kernel scratch, raised before the gradient was written, with no
    panic message on stderr."""
    r = run_child(code, timeout=300)
    assert r["rc"] == 0 and len(r["results"]) == 2, describe(r)
    kind, message, no_grad = r["results"][0]
    assert kind == "MemoryError", (kind, message)
    assert "kernel scratch: cannot allocate" in message and "the system refused the memory" in message
    assert no_grad is True, "a gradient was written before the refusal reached Python"
    assert "panicked" not in r["err"], r["err"][-2000:]
    return r


def test_a_refused_kernel_scratch_buffer_is_a_memory_error():
    r = refused_in_child(CHILD)
    assert r["results"][1] == ["after", True, True]


CHILD_VEC = PRELUDE + """
# An embedding table of 2^25 floats (128 MiB): its backward writes a 128 MiB
# gradient through an f64 accumulator of 256 MiB, a Vec (not a pool buffer).
rows, d = 1 << 15, 1 << 10
w = om.zeros(rows, d, requires_grad=True)
idx = om.tensor([3, 0, 3, rows - 1])
small = om.zeros(4, 2, requires_grad=True)
F.embedding(om.tensor([1, 1]), small).sum().backward()   # threads and pool warm
loss = F.embedding(idx, w).sum()
# Room for the gradient (128 MiB) and little more: the accumulator is refused.
capped(192 << 20, loss.backward, w)
# The process goes on; the same backward now gives each row's count of
# uses (the gradient of a sum of gathered rows), checked at the used rows
# and their neighbours.
w.grad = None
F.embedding(idx, w).sum().backward()
gw = w.grad.numpy()
emit(["after", gw[3].tolist() == [2.0] * d, gw[0].tolist() == [1.0] * d,
      gw[rows - 1].tolist() == [1.0] * d, float(np.abs(gw[[1, 2, 4, rows - 2]]).max())])
"""


def test_a_refused_kernel_scratch_vec_is_a_memory_error():
    """The Vec scratch of a kernel (here the embedding backward's f64
    accumulator) is asked for with try_reserve: a refusal is MemoryError,
    where `vec![0.0; n]` aborted the process."""
    r = refused_in_child(CHILD_VEC)
    assert r["results"][1] == ["after", True, True, True, 0.0]
