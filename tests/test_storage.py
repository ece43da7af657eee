"""Pooled storage: alignment, reuse, statistics, release."""

import gc
import threading

import pytest

import onemodel as om
from onemodel import _core


def test_pool_stats_has_the_four_counters():
    s = om.pool_stats()
    assert set(s) == {"native_allocations", "outstanding_bytes", "pooled_bytes", "requests"}
    assert all(isinstance(v, int) and v >= 0 for v in s.values())


def test_buffers_are_64_byte_aligned():
    for n in [1, 3, 17, 100, 1000, 12345]:
        t = om.zeros(n)
        assert t.data_ptr() % 64 == 0


def test_a_dropped_buffer_returns_to_the_pool_and_is_reused():
    om.empty(4096)  # warm the class
    gc.collect()
    before = om.pool_stats()
    t = om.empty(4096)
    mid = om.pool_stats()
    assert mid["requests"] == before["requests"] + 1
    assert mid["native_allocations"] == before["native_allocations"]  # served from the free list
    assert mid["outstanding_bytes"] >= before["outstanding_bytes"] + 4096 * 4
    del t
    after = om.pool_stats()
    assert after["outstanding_bytes"] == before["outstanding_bytes"]
    assert after["pooled_bytes"] == before["pooled_bytes"]


def test_views_keep_the_buffer_alive():
    t = om.arange(10.0)
    v = t[2:5]
    del t
    gc.collect()
    assert v.tolist() == [2.0, 3.0, 4.0]


def test_numpy_view_outlives_the_tensor_and_a_release():
    t = om.arange(6.0)
    a = t.numpy()
    assert t._storage.release()
    del t
    gc.collect()
    # The NumPy array's base keeps the memory; it is still readable.
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def test_released_storage_raises_instead_of_reading_freed_memory():
    t = om.ones(3)
    t._storage.release()
    with pytest.raises(RuntimeError, match="released"):
        t + 1
    with pytest.raises(RuntimeError, match="released"):
        t.numpy()
    assert "released" in repr(t)


def test_allocation_is_thread_safe():
    errors = []

    def work():
        try:
            for i in range(300):
                t = om.full((i % 37 + 1,), float(i))
                assert t.tolist() == [float(i)] * (i % 37 + 1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors


def test_empty_pool_returns_memory():
    t = om.empty(1 << 16)
    del t
    assert om.pool_stats()["pooled_bytes"] > 0
    freed = om.empty_pool()
    assert freed > 0
    assert om.pool_stats()["pooled_bytes"] == 0


def test_zero_element_storage():
    s = _core.Storage.empty("float32", 0)
    assert s.numel == 0 and s.nbytes == 0
