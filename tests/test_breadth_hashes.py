"""Bit-identity of the rest of the tensor and nn surface (docs/engine.md, "Pinned gradient hashes"): the
exact-mode gradients of graphs using the new operators (einsum, addmm and
baddbmm on the canonical GEMM, tensordot, cdist/pdist, cov, diagonals,
unfold/fold, the pad modes, RMSNorm, LocalResponseNorm, grid_sample,
logcumsumexp, bincount's weighted double sum, the indexing scatter-adds of
overlapping windows and gathers; conv3d and the 3-D pools, bicubic and
nearest-exact interpolation, weight_norm and spectral_norm, distributions,
alpha dropout) hash to one pinned value on every kernel
path × threads {1, 3, 8}; fast mode is equal across threads. The products
have K = 300..700 so the GEMM's blocked and threaded paths are used."""

import numpy as np

import onemodel as om
import onemodel.nn.functional as F
from conftest import PATHS, THREAD_COUNTS, sha256_of

# sha256 of _products_gradients() in exact mode (input order, then the loss).
PRODUCTS_EXACT_SHA256 = "bc7442bc4e1c0c4cf1e2ac5293ac3f0d7e870408508bca4c710dcf842bfd7e0a"
# sha256 of _layers_gradients() in exact mode.
LAYERS_EXACT_SHA256 = "9409c86c28a09811e053a158684ad367bb00337ec6cd13afdf41ee9f05f256ce"


def _products_gradients():
    gen = om.Generator().manual_seed(21)
    x = om.randn(24, 700, generator=gen).requires_grad_()
    w = (om.randn(700, 32, generator=gen) * 0.05).requires_grad_()
    c = om.randn(32, generator=gen).requires_grad_()
    b1 = (om.randn(4, 24, 300, generator=gen) * 0.1).requires_grad_()
    b2 = (om.randn(4, 300, 16, generator=gen) * 0.1).requires_grad_()
    h = om.addmm(c, x, w, beta=0.5, alpha=1.5)  # [24, 32]
    e = om.einsum("bij,bjk->bik", b1, b2)  # [4, 24, 16]
    t = om.tensordot(b1, b2, dims=([0, 2], [0, 1]))  # [24, 16]
    a = om.baddbmm(e, b1, b2, beta=0.25) + om.addbmm(t, b1, b2)
    q = om.einsum("ik,jk->ij", h, h) * 0.01 + om.outer(h[:, 0], h[0]).sum()
    d = om.cdist(h[:, :8], h[:12, :8]) + om.pdist(h[:6, :4]).sum() + om.cov(h.t()[:5]).sum()
    diag = om.diagonal(q).sum() + om.trace(q[:16, :16]) + om.diag_embed(h[:3, :5]).sum() + om.kron(h[:2, :2], h[:3, :3]).sum()
    win = h.unfold(1, 5, 2)  # overlapping windows: the indexing scatter-add backward
    lc = om.logcumsumexp(h[:4] * 0.3, 1)
    loss = (a * a).sum() + (q * q).sum() + d.sum() + diag + (win * win).sum() + lc.sum() + om.cross(h[:, :3], h[1:2, 3:6], dim=1).sum()
    loss.backward()
    return [x.grad.numpy(), w.grad.numpy(), c.grad.numpy(), b1.grad.numpy(), b2.grad.numpy(), loss.detach().reshape(1).numpy()]


def _layers_gradients():
    gen = om.Generator().manual_seed(22)
    img = om.randn(2, 3, 12, 12, generator=gen).requires_grad_()
    wt = (om.randn(3, 12, 12, generator=gen) * 0.1).requires_grad_()
    g = (om.rand(12, generator=gen) + 0.5).requires_grad_()
    y = F.pad(img, (2, 1, 1, 2), "reflect") + 0.0
    y = y[..., :12, :12] + F.pad(img, (1, 1, 1, 1), "replicate")[..., 1:13, :12] + F.pad(img, (3, 0, 0, 3), "circular")[..., :12, 3:15]
    cols = F.unfold(y, 3, padding=1, stride=1)  # [2, 27, 144]
    back = F.fold(cols * 0.5, (12, 12), 3, padding=1)
    r = F.rms_norm(back, (12,), g) + F.local_response_norm(back, 3)
    grid = om.tensor(np.random.default_rng(7).uniform(-1.1, 1.1, (2, 5, 6, 2)).astype(np.float32))
    s = F.grid_sample(r, grid, align_corners=False)
    z = om.einsum("nchw,chw->n", r, wt)
    idx = om.tensor(np.random.default_rng(8).integers(0, 10, 200))
    counts = om.bincount(idx, r.reshape(-1)[:200].detach(), minlength=10)
    loss = (s * s).sum() + z.sum() + (counts * counts.detach()).sum() * 0.0 + (r * r).mean()
    loss.backward()
    return [img.grad.numpy(), wt.grad.numpy(), g.grad.numpy(), counts.numpy(), loss.detach().reshape(1).numpy()]


# sha256 of _more_layers_gradients() in exact mode.
MORE_LAYERS_EXACT_SHA256 = "b3c4718cdfb2385e48713cf79a414b4e4971481c3e5376502db25d5ae77d293c"


def _more_layers_gradients():
    gen = om.Generator().manual_seed(23)
    vol = om.randn(2, 3, 6, 7, 6, generator=gen).requires_grad_()
    img = om.randn(2, 4, 9, 11, generator=gen).requires_grad_()
    conv = om.nn.Conv3d(3, 8, 3, padding=1, generator=om.Generator().manual_seed(24))
    wn = om.nn.utils.weight_norm(om.nn.Linear(7, 6, generator=om.Generator().manual_seed(25)))
    sn = om.nn.utils.spectral_norm(om.nn.Linear(6, 5, generator=om.Generator().manual_seed(26)))
    with om.no_grad():
        sn.weight_u.copy_(om.randn(5, generator=gen))
        sn.weight_v.copy_(om.randn(6, generator=gen))
    v = conv(vol)  # K = 3·27 = 81 per output
    p = F.max_pool3d(v, 2, stride=1, padding=1) + 0.0
    q = F.avg_pool3d(v, 3, stride=2, padding=1, count_include_pad=False).sum() + F.adaptive_avg_pool3d(v, (2, 3, 2)).sum()
    up = F.interpolate(img, size=(13, 7), mode="bicubic", align_corners=False) + F.interpolate(img, size=(13, 7), mode="nearest-exact")
    h = sn(wn(up)).sum(1)
    d = om.distributions.Normal(h.mean((0, 1)), h.std((0, 1)) + 1.0).log_prob(h[0, 0])
    c = om.distributions.Categorical(logits=up[:, :, 0, :5]).entropy()
    a = F.alpha_dropout(up, 0.2, training=True, generator=om.Generator().manual_seed(27))
    loss = (p * p).mean() + q + d.sum() + c.sum() + (a * a).mean() + (h * h).sum() * 1e-3
    loss.backward()
    grads = [vol.grad.numpy(), img.grad.numpy()] + [t.grad.numpy() for t in (conv.weight, conv.bias, wn.weight_g, wn.weight_v, sn.weight_orig)]
    return grads + [sn.weight_u.numpy(), loss.detach().reshape(1).numpy()]


def test_exact_mode_hash_is_pinned_on_every_path_and_thread_count():
    for fn, pinned in ((_products_gradients, PRODUCTS_EXACT_SHA256), (_layers_gradients, LAYERS_EXACT_SHA256),
                       (_more_layers_gradients, MORE_LAYERS_EXACT_SHA256)):
        seen = {}
        for path in PATHS:
            for threads in THREAD_COUNTS:
                with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                    seen[(path, threads)] = sha256_of(fn())
        assert len(set(seen.values())) == 1, seen
        assert next(iter(seen.values())) == pinned, (fn.__name__, next(iter(seen.values())))


def test_fast_mode_does_not_depend_on_threads():
    for fn in (_products_gradients, _layers_gradients, _more_layers_gradients):
        hashes = set()
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="fast", threads=threads):
                hashes.add(sha256_of(fn()))
        assert len(hashes) == 1


def test_gradients_are_finite_and_nonzero():
    with om.compute.settings(mode="exact"):
        for fn in (_products_gradients, _layers_gradients, _more_layers_gradients):
            for g in fn():
                assert np.isfinite(g).all() and np.abs(g).max() > 0
