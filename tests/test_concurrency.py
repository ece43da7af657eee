"""Ops from several Python threads at once (the kernels release the GIL)
give the serial results; compute settings are process-wide (one thread's
set_* is seen by every other, docs/reliability.md) and changing them while
another thread's kernels run changes no bit in exact mode; a
KeyboardInterrupt during a long kernel leaves consistent state."""

import _thread
import gc
import signal
import threading
import time

import numpy as np

import onemodel as om
import onemodel.nn.functional as F
from conftest import PATHS


def _workloads():
    gen = om.Generator().manual_seed(99)
    a, b = om.randn(192, 160, generator=gen), om.randn(160, 128, generator=gen)
    x, w = om.randn(2, 4, 20, 20, generator=gen), om.randn(6, 4, 3, 3, generator=gen)
    v = om.randn(50_000, generator=gen)
    return {
        "matmul": lambda: om.matmul(a, b),
        "conv2d": lambda: F.conv2d(x, w, padding=1),
        "max_pool2d": lambda: F.max_pool2d(x, 2),
        "sum": lambda: v.sum().reshape(1),
        "softmax": lambda: F.softmax(a, dim=1),
        "exp": lambda: om.exp(v),
        "conv2d_backward": lambda: _conv_grad(x, w),
    }


def _conv_grad(x, w):
    wg = w.detach().requires_grad_()
    F.conv2d(x, wg, padding=1).square().sum().backward()
    return wg.grad


def _run_threads(n, body):
    errors = []

    def wrap(i):
        try:
            body(i)
        except BaseException as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert not errors, errors


def test_ops_from_several_threads_equal_serial_results():
    om.compute.set_mode("exact")
    work = _workloads()
    serial = {k: f().detach().numpy().copy() for k, f in work.items()}
    names = sorted(work)
    got = {}

    def body(i):
        for rep in range(6):
            name = names[(i + rep) % len(names)]
            got[(i, rep)] = (name, work[name]().detach().numpy().copy())

    _run_threads(6, body)
    assert len(got) == 36
    for (i, rep), (name, value) in got.items():
        assert np.array_equal(value.view(np.uint32), serial[name].view(np.uint32)), (name, i, rep)


def test_settings_are_process_wide():
    om.compute.set_mode("fast")
    om.compute.set_threads(2)
    seen = {}

    def other(_):
        seen["mode"], seen["threads"], seen["path"] = om.compute.get_mode(), om.compute.get_threads(), om.compute.kernel_path()

    om.compute.set_mode("exact")
    om.compute.set_threads(3)
    om.compute.set_kernel_path("scalar")
    _run_threads(1, other)
    assert seen == {"mode": "exact", "threads": 3, "path": "scalar"}


def test_changing_threads_and_path_while_kernels_run_changes_no_bit():
    om.compute.set_mode("exact")
    work = _workloads()
    serial = {k: f().detach().numpy().copy() for k, f in work.items()}
    stop = threading.Event()

    def flipper():
        k = 0
        while not stop.is_set():
            om.compute.set_threads((1, 3, 8, 2)[k % 4])
            om.compute.set_kernel_path(PATHS[k % len(PATHS)])
            k += 1
            time.sleep(0.001)

    t = threading.Thread(target=flipper)
    t.start()
    try:
        def body(i):
            for rep in range(20):
                for name, f in work.items():
                    assert np.array_equal(f().detach().numpy().view(np.uint32), serial[name].view(np.uint32)), name

        _run_threads(3, body)
    finally:
        stop.set()
        t.join()
        om.compute.set_kernel_path(None)


def test_keyboard_interrupt_during_a_long_kernel_leaves_consistent_state():
    om.compute.set_mode("exact")
    gen = om.Generator().manual_seed(5)
    a, b = om.randn(700, 700, generator=gen), om.randn(700, 700, generator=gen)
    want = om.matmul(a, b).numpy().copy()
    acc = om.zeros(700, 700)
    gc.collect()
    before = om._core.pool_stats()["outstanding_bytes"]
    # interrupt_main() does nothing unless Python's own SIGINT handler is
    # installed. In two full-suite clean-clone CI runs (2026-12-06) none of
    # up to 20 interrupts reached this loop, although it passed alone and
    # the handler was Python's at process start: something left SIGINT
    # without Python's handler by this point (not found). What this test
    # checks is the state an interrupt leaves, so it installs the handler
    # for its duration (and restores the inherited one), then sends the
    # interrupt every 0.3 s (at most 20 times) until the loop sees one.
    inherited = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    stop = threading.Event()
    sent = []

    def interrupter():
        while len(sent) < 20 and not stop.wait(0.3):
            sent.append(1)
            _thread.interrupt_main()

    timer = threading.Thread(target=interrupter, daemon=True)
    interrupted = False
    done = 0
    timer.start()
    try:
        for _ in range(10_000):
            acc.add_(om.matmul(a, b))
            done += 1
    except KeyboardInterrupt:
        interrupted = True
    finally:
        stop.set()
        timer.join()
        signal.signal(signal.SIGINT, inherited)
    assert interrupted, f"none of {len(sent)} interrupts arrived (the inherited SIGINT handler was {inherited!r})"
    # Every in-place add either happened whole or not at all: acc holds
    # `done` products, or `done + 1` when the interrupt came after the last
    # add's kernel; and its version never counts fewer writes than happened
    # (a saved copy of it would otherwise not be seen as stale).
    ref = np.zeros((700, 700), np.float32)
    sums = []
    for _ in range(done + 2):
        sums.append(ref)
        ref = ref + want
    applied = [k for k in (done, done + 1) if np.array_equal(acc.numpy(), sums[k])]
    assert applied, "acc holds a partial sum"
    assert acc._version >= applied[0]
    # The library still computes the same bits, and the pool got back every
    # buffer the interrupted iteration held.
    assert np.array_equal(om.matmul(a, b).numpy(), want)
    gc.collect()
    assert om._core.pool_stats()["outstanding_bytes"] == before
    assert om.compute.get_mode() == "exact"
