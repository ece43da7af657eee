"""Bit-identity of the tensor-language operators (docs/engine.md, "Pinned gradient hashes"): the
exact-mode gradients of a graph using each of them hash to one pinned value
on every kernel path × threads {1, 3, 8}; fast mode is equal across
threads. The sizes make the double-sum kernels (var, std, norm) split
their outputs over several thread chunks and use the blocked chain."""

import numpy as np

import onemodel as om
from conftest import PATHS, THREAD_COUNTS, sha256_of, assert_splits

# sha256 of _tensor_language_gradients() in exact mode (parameter order, then the outputs).
TENSOR_EXACT_SHA256 = "b39baa14faa8bbdefb7f58afa40a1ac16ebd0ad871fc7bdd29d28ea4b279e66d"


def _tensor_language_gradients():
    gen = om.Generator().manual_seed(11)
    x = om.randn(40, 700, generator=gen).requires_grad_()
    w = (om.randn(700, 24, generator=gen) * 0.05).requires_grad_()
    e = om.randn(30, 6, generator=gen).requires_grad_()
    tokens = om.tensor(np.random.default_rng(3).integers(0, 30, size=(5, 9)))
    h = x @ w  # [40, 24]
    h = h.masked_fill(om.tril(om.ones(40, 24)) == 0, -1.0)
    h[h > 1.5] = 1.5
    h = h.relu_()  # in place on a recorded tensor
    v = x.var(1, keepdim=True) + x.std(0)[:24] + x.norm(dim=1, keepdim=True) * 0.01
    h = h * v[:, :1] + om.where(h > 0.5, h, v[:, :1] * 0.1)
    top = h.topk(5, dim=1).values.sum(1) + h.sort(0, descending=True).values[:3].sum(0).sum()
    c = h.cumsum(1)[:, -1] + (h * 0.01 + 1.0).cumprod(0)[-1].sum()
    z = om.logsumexp(h, 1) + h.amax(1) + h.max(0).values.sum() + (h.abs() + 0.5).prod(1) * 1e-6
    emb = e[tokens]  # [5, 9, 6] with repeated rows: the scatter-add backward
    g = om.gather(emb, 2, om.tensor(np.random.default_rng(4).integers(0, 6, size=(5, 9, 3))))
    s = om.zeros(30, 3).index_add(0, tokens[:, :3].reshape(-1), g[:, :3].reshape(-1, 3))
    loss = (top + c + z).sum() + (s * s).sum() + g.flip(1).roll(2, 0)[..., 0].repeat(2, 1).sum()
    loss.backward()
    return [x.grad.numpy(), w.grad.numpy(), e.grad.numpy(), loss.detach().reshape(1).numpy()]


# sha256 of _more_gradients() in exact mode: the operators the first graph leaves out.
MORE_EXACT_SHA256 = "7e3d55d83b2c246399695d3f71552c934fcc8636e1bca4dd756d19cd430c13d8"


def _more_gradients():
    gen = om.Generator().manual_seed(12)
    a = om.randn(6, 9, generator=gen).requires_grad_()
    b = om.randn(6, 9, generator=gen).requires_grad_()
    lo = (om.randn(9, generator=gen) * 0.3 - 0.5).requires_grad_()
    rows = om.tensor([0, 3, 3, 5, 0, 0])
    h = om.clamp(a, lo, b.detach().abs() + 0.5) + om.maximum(a, b) * om.minimum(a, b.flip(1))
    h = h.tril(1) + h.triu(-2) * 0.5
    h = h.index_put((rows,), b * 0.25, accumulate=True)
    s = h.scatter_reduce(0, om.tensor([[0, 1, 0, 2, 0, 1, 1, 0, 2]] * 2), b[:2], "mean")
    s = s + h.scatter_reduce(0, om.tensor([[1, 1, 0, 0, 2, 2, 1, 0, 0]]), a[:1], "amax")
    c = h.cummax(1).values.sum() + h.cummin(0).values.sum() + h.kthvalue(3, 1).values.sum() + h.median(0).values.sum()
    v, m = om.var_mean(h, 1)
    n = h.norm(3, dim=0).sum() + h.norm(1) + h.norm(float("inf"), dim=1).sum()
    t = om.take_along_dim(h, om.tensor([[8], [0], [3], [3], [1], [7]]), 1).sum()
    r = h.repeat_interleave(om.tensor([1, 0, 2, 1, 1, 3]), dim=0).sum(0) + h.masked_select(h > 0.3).sum()
    y = h * 1.0
    y[y.abs() < 0.2] = 0.0
    y[1].mul_(2.0)
    y[:, [0, 8, 8]] += 1.0
    loss = (s * s).sum() + c + (v * m).sum() + n + t + (r * r).sum() + (y * y).sum() + y.std(correction=0)
    loss.backward()
    return [a.grad.numpy(), b.grad.numpy(), lo.grad.numpy(), loss.detach().reshape(1).numpy()]


def test_exact_mode_hash_is_pinned_on_every_path_and_thread_count():
    with om.compute.mode("exact"):
        # (_more_gradients runs in one chunk: its thread-count claim rests on
        # _tensor_language_gradients and the other hash tests.)
        assert_splits(_tensor_language_gradients)
    for fn, pinned in ((_tensor_language_gradients, TENSOR_EXACT_SHA256), (_more_gradients, MORE_EXACT_SHA256)):
        seen = {}
        for path in PATHS:
            for threads in THREAD_COUNTS:
                with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                    seen[(path, threads)] = sha256_of(fn())
        assert len(set(seen.values())) == 1, seen
        assert next(iter(seen.values())) == pinned, fn.__name__


def test_fast_mode_does_not_depend_on_threads():
    for fn in (_tensor_language_gradients, _more_gradients):
        hashes = set()
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="fast", threads=threads):
                hashes.add(sha256_of(fn()))
        assert len(hashes) == 1


def test_gradients_are_finite_and_nonzero():
    with om.compute.settings(mode="exact"):
        for fn in (_tensor_language_gradients, _more_gradients):
            for g in fn():
                assert np.isfinite(g).all() and np.abs(g).max() > 0
