"""Bit-identity of the operators added on 2026-12-06 (night) (docs/engine.md,
"Pinned gradient hashes"): conv_transpose3d, 5-D trilinear/nearest
interpolation, quantile/nanquantile, the matrix norms, onemodel.special's
entr/xlog1py/ndtr, xlogy, the zero-safe norm roots of normalize and
cosine_similarity, std/var, and a weight_norm parametrization. The
exact-mode gradients hash to one pinned value on every kernel path ×
threads {1, 3, 8}, and the products are large enough to split over
threads."""

import onemodel as om
from conftest import THREAD_COUNTS, assert_splits, exact_hashes

F = om.nn.functional

# sha256 of _gradients() in exact mode (parameter order, then the loss);
# equal on scalar, v128 and avx2 at 1, 3 and 8 threads when it was pinned
# (2026-12-06, the AVX2 Zen 3 machine; avx512 not available there).
ADDITIONS_EXACT_SHA256 = "0a49abc02e2f0cf3fa9b3a2fb171d5640777686caa547a8ee5bb0e0ac8b78107"


def _gradients():
    gen = om.Generator().manual_seed(31)
    x = om.randn(2, 8, 6, 7, 5, generator=gen).requires_grad_()
    w = (om.randn(8, 6, 3, 3, 3, generator=gen) * 0.1).requires_grad_()
    lin = om.nn.utils.parametrizations.weight_norm(om.nn.Linear(40, 24, generator=gen))
    v = F.conv_transpose3d(x, w, None, stride=2, padding=1, output_padding=1, groups=2)  # [2, 12, 12, 14, 10]
    v = F.interpolate(v, size=(9, 11, 8), mode="trilinear") + F.interpolate(v, size=(9, 11, 8), mode="nearest")
    h = lin(v.reshape(2, 12, -1)[..., :40])  # [2, 12, 24]
    q = om.quantile(h, om.tensor([0.1, 0.5, 0.9]), -1) ** 2  # [3, 2, 12]
    nq = om.nanquantile(h, 0.3, 1, interpolation="nearest")  # [2, 24]
    m = om.linalg.matrix_norm(h, 1) + om.linalg.matrix_norm(h, float("inf")) + h.std(-1).sum(-1) + h.var(1, correction=0).sum(-1)
    s = om.special.entr(h.sigmoid()) + om.special.xlog1py(h, h.abs()) + om.special.ndtr(h) + om.xlogy(h, h.abs() + 0.1)
    z = F.normalize(h * (h > 0.5), dim=-1) + F.cosine_similarity(h, h.flip(-1), dim=-1).unsqueeze(-1)
    loss = q.sum() + (nq * nq).sum() + m.sum() * 1e-2 + (s * z).sum() * 1e-2
    loss.backward()
    return [x.grad.numpy(), w.grad.numpy()] + [p.grad.numpy() for p in lin.parameters()] + [loss.detach().reshape(1).numpy()]


def test_additions_hash_is_pinned_on_every_path_and_thread_count():
    seen = exact_hashes(_gradients)
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == ADDITIONS_EXACT_SHA256


def test_the_graph_splits_over_threads():
    with om.compute.settings(mode="exact", threads=max(THREAD_COUNTS)):
        assert_splits(_gradients)
