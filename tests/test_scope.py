"""ActivationScope: a training step allocates no pool memory after warm-up."""

import gc

import pytest

import onemodel as om


def _mlp(gen):
    w1 = (om.randn(16, 8, generator=gen) * 0.3).requires_grad_()
    b1 = om.zeros(16, requires_grad=True)
    w2 = (om.randn(4, 16, generator=gen) * 0.3).requires_grad_()
    b2 = om.zeros(4, requires_grad=True)
    return [w1, b1, w2, b2]


def _step(params, x, y, lr=0.05):
    w1, b1, w2, b2 = params
    with om.ActivationScope():
        h = om.functional.linear(x, w1, b1).relu()
        out = om.functional.linear(h, w2, b2)
        loss = ((out - y) * (out - y)).mean()
        loss.backward()
        value = loss.item()
        with om.no_grad():
            for p in params:
                p.sub_(p.grad * lr)
                om.autograd.zero_grad(p)
    return value


def test_mlp_step_allocates_nothing_after_warm_up():
    gen = om.Generator().manual_seed(0)
    params = _mlp(gen)
    x = om.randn(32, 8, generator=gen)
    y = om.randn(32, 4, generator=gen)
    gc.collect()
    stats = []
    losses = []
    for _ in range(6):
        losses.append(_step(params, x, y))
        stats.append(om.pool_stats())
    for s in stats[2:]:
        assert s["native_allocations"] == stats[2]["native_allocations"]
        assert s["outstanding_bytes"] == stats[2]["outstanding_bytes"]
    assert stats[-1]["requests"] > stats[2]["requests"]  # it did allocate, from the pool
    assert losses[-1] < losses[0]


def test_scope_releases_what_is_still_referenced_at_exit():
    with om.ActivationScope() as scope:
        kept = om.ones(100) * 2  # still referenced after the block
        dropped = om.ones(10)
        del dropped
    assert scope.released >= 1
    with pytest.raises(RuntimeError, match="ActivationScope"):
        kept.tolist()


def test_buffers_allocated_outside_survive_and_scopes_nest():
    outside = om.ones(3)
    with om.ActivationScope():
        inner_keep = None
        with om.ActivationScope():
            a = outside + 1
        with pytest.raises(RuntimeError):
            a.tolist()
        inner_keep = outside * 3
        assert inner_keep.tolist() == [3.0, 3.0, 3.0]
    assert outside.tolist() == [1.0, 1.0, 1.0]
