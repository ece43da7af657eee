"""Every in-place write counts itself in the tensor's version before it
writes (issue 20, "a KeyboardInterrupt during a long kernel leaves no
corrupted state").

A KeyboardInterrupt is raised at the next Python step after the C call that
was running, so the interrupt that matters comes right after a write's
kernel returns. Each test here makes the writer of one site perform its
write and then raise KeyboardInterrupt (what a signal arriving during the
kernel does), and checks that the version already counts the write: a copy
saved before it would otherwise look fresh. tests/test_concurrency.py
interrupts real kernels from a timer for the binary in-place ops.
"""

import numpy as np
import pytest

import onemodel as om
from onemodel import _core


def _trap(monkeypatch, owner, name, when=lambda *a, **k: True):
    """Replace ``owner.name`` by a call of the original that, when `when`
    holds for its arguments, raises KeyboardInterrupt after it returned."""
    real = getattr(owner, name)

    def trapped(*args, **kwargs):
        out = real(*args, **kwargs)
        if when(*args, **kwargs):
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(owner, name, trapped)


def _wrote(t, write, want):
    """Run `write` on `t` under the trap; the values it wrote must be
    `want`, and t's version must count the write."""
    v0 = t._version
    with pytest.raises(KeyboardInterrupt):
        write(t)
    np.testing.assert_array_equal(t.detach().numpy(), np.asarray(want, np.float32))
    assert t._version > v0, "the write happened but the version does not count it"


def _on(t):
    """Match a kernel call whose output (its first tensor argument, after
    the op's name where it takes one) is on t's memory."""

    def match(*args, **kwargs):
        out = next((a for a in args if isinstance(a, om.Tensor)), None)
        return out is not None and out._storage is t._storage

    return match


@pytest.mark.parametrize(
    "kernel, write, want",
    [
        ("unary", lambda t: t.neg_(), [-1.0, 2.0, -3.0]),
        ("unary", lambda t: t.relu_(), [1.0, 0.0, 3.0]),
        ("copy_", lambda t: t.copy_(om.tensor([7.0, 8.0, 9.0])), [7.0, 8.0, 9.0]),
        ("fill_", lambda t: t.fill_(4.0), [4.0, 4.0, 4.0]),
        ("fill_", lambda t: t.zero_(), [0.0, 0.0, 0.0]),
        ("binary", lambda t: t.add_(om.tensor([1.0, 1.0, 1.0])), [2.0, -1.0, 4.0]),
        # ops/inplace.py: assign_result -> _write (clamp_, tril_, put_, ...)
        ("copy_", lambda t: t.clamp_(min=0.0), [1.0, 0.0, 3.0]),
        # ops/inplace.py: write_through (setitem, index_put_, masked_fill_)
        ("copy_", lambda t: t.__setitem__(slice(0, 2), 5.0), [5.0, 5.0, 3.0]),
    ],
)
def test_an_interrupt_after_the_kernel_finds_the_write_counted(monkeypatch, kernel, write, want):
    t = om.tensor([1.0, -2.0, 3.0])
    _trap(monkeypatch, _core, kernel, _on(t))
    _wrote(t, write, want)


def test_a_recorded_in_place_op_counts_its_write(monkeypatch):
    # While recording, the op is rebased onto the tensor (ops/inplace.py,
    # rebase): its result is copied in by _write.
    x = om.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 1.0
    _trap(monkeypatch, _core, "copy_", _on(y))
    _wrote(y, lambda t: t.clamp_(min=0.0), [1.0, 0.0, 3.0])


class _NumpyTrap(np.ndarray):
    """A NumPy view whose item assignment writes, then raises
    KeyboardInterrupt (a write through t.numpy() the interrupt follows)."""

    def __setitem__(self, k, v):
        super().__setitem__(k, v)
        raise KeyboardInterrupt


def _wrote_through_numpy(monkeypatch, t, write) -> int:
    """Run `write` with t's NumPy views trapped; returns t's version before."""
    real = om.Tensor.numpy
    monkeypatch.setattr(om.Tensor, "numpy", lambda self, force=False: real(self, force=force).view(_NumpyTrap) if self is t else real(self, force=force))
    v0 = t._version
    with pytest.raises(KeyboardInterrupt):
        write(t)
    monkeypatch.undo()
    return v0


def test_a_masked_fill_counts_its_write(monkeypatch):
    # masked_fill_ writes through a NumPy view of the tensor.
    t = om.tensor([1.0, -2.0, 3.0])
    v0 = _wrote_through_numpy(monkeypatch, t, lambda t: t.masked_fill_(om.tensor([True, False, True]), 0.0))
    np.testing.assert_array_equal(t.numpy(), [0.0, -2.0, 0.0])
    assert t._version > v0


@pytest.mark.parametrize("fill", [lambda t: t.bernoulli_(1.0), lambda t: t.exponential_(1.0)])
def test_a_random_fill_through_numpy_counts_its_write(monkeypatch, fill):
    t = om.zeros(4)
    v0 = _wrote_through_numpy(monkeypatch, t, fill)
    assert (t.numpy() > 0).all(), "the fill did not happen"
    assert t._version > v0


class _TrappedGenerator:
    """A generator whose draws into a tensor raise KeyboardInterrupt after
    writing (what an interrupt during the draw's kernel does)."""

    def __init__(self):
        real = om.Generator().manual_seed(3)._g
        outer = self

        class G:
            def get_state(self):
                return real.get_state()

            def normal_(self, t, a, b):
                real.normal_(t, a, b)
                raise KeyboardInterrupt

            def uniform_(self, t, a, b):
                real.uniform_(t, a, b)
                raise KeyboardInterrupt

        outer._g = G()


@pytest.mark.parametrize(
    "draw",
    [
        lambda t, g: t.normal_(5.0, 1.0, generator=g),
        lambda t, g: t.uniform_(1.0, 2.0, generator=g),
        lambda t, g: om.nn.init.uniform_(t, 1.0, 2.0, generator=g),
        lambda t, g: om.nn.init.normal_(t, 5.0, 1.0, generator=g),
    ],
)
def test_a_random_draw_into_a_tensor_counts_its_write(draw):
    t = om.zeros(4)
    v0 = t._version
    with pytest.raises(KeyboardInterrupt):
        draw(t, _TrappedGenerator())
    assert (t.numpy() > 0).all(), "the draw did not happen"
    assert t._version > v0


@pytest.mark.parametrize("make", [lambda ps: om.optim.Adagrad(ps, lr=0.1), lambda ps: om.optim.RMSprop(ps, lr=0.1, momentum=0.9), lambda ps: om.optim.Adamax(ps, lr=0.1)])
def test_an_element_wise_optimizer_step_counts_its_writes(monkeypatch, make):
    # The NumPy-written optimizers: an interrupt may arrive between any two
    # statements of the update; every tensor it writes must count it.
    p = om.nn.Parameter(om.tensor([1.0, 2.0]))
    p.grad = om.tensor([0.5, -0.5])
    opt = make([p])
    opt.step()  # the state exists now
    state = [t for t in opt.state[p].values() if isinstance(t, om.Tensor)]
    before = [p._version] + [t._version for t in state]
    old = p.detach().numpy().copy()
    _trap(monkeypatch, opt, "_update")
    with pytest.raises(KeyboardInterrupt):
        opt.step()
    assert not np.array_equal(p.detach().numpy(), old), "the step did not write"
    after = [p._version] + [t._version for t in state]
    assert all(a > b for a, b in zip(after, before)), (before, after)


@pytest.mark.parametrize("kernel, make", [("adam_step", lambda ps: om.optim.AdamW(ps, lr=0.1)), ("sgd_step", lambda ps: om.optim.SGD(ps, lr=0.1, momentum=0.9))])
def test_a_rust_optimizer_step_counts_its_writes(monkeypatch, kernel, make):
    # The Rust steps bump every written tensor inside the same C call as the
    # kernel, so no Python step (and no interrupt) comes between.
    p = om.nn.Parameter(om.tensor([1.0, 2.0]))
    p.grad = om.tensor([0.5, -0.5])
    opt = make([p])
    v0 = p._version
    _trap(monkeypatch, _core, kernel)
    with pytest.raises(KeyboardInterrupt):
        opt.step()
    assert p._version > v0
