"""Bit-identity of the softmax-free spatial operators: one exact-mode
gradient hash across every kernel path × threads {1, 3, 8}, pinned as a
literal (docs/engine.md, "Pinned gradient hashes"); fast mode equal across threads."""

import numpy as np

import onemodel as om
import onemodel.functional as F
from conftest import THREAD_COUNTS, PATHS, sha256_of, assert_splits

# sha256 of the exact-mode gradients of _decoder_gradients (parameter order, then the loss).
DECODER_EXACT_SHA256 = "9aa7b7c668e3d9e7418b78ccfe8cffb77802353c42246d7f0de335ac4d366a6e"


def _decoder_gradients():
    gen = om.Generator().manual_seed(5)

    def p(*shape, scale=0.3):
        return (om.randn(*shape, generator=gen) * scale).requires_grad_()

    params = [
        p(8, 2, 3, 3), p(8, scale=0.1),  # conv, groups 2, stride 2
        p(8, scale=0.1), p(8, scale=0.1),  # batch norm affine
        p(8, 1, 3, 3),  # depthwise, dilation 2
        p(8, 3, 3, 3), p(6, scale=0.1),  # transposed conv, stride 2, output padding, groups 2
        p(12, 12, scale=0.2), p(12, 12, scale=0.2),  # layer norm affine (over H, W)
        p(10, 6),  # embedding table
    ]
    cw, cb, bw, bb, dw, tw, tb, lw, lb, emb = params
    x = om.randn(3, 4, 13, 11, generator=gen)
    h = F.conv2d(x, cw, cb, stride=2, padding=1, groups=2)  # 7×6
    h = F.relu(F.batch_norm(h, om.zeros(8), om.ones(8), bw, bb, training=True))
    h = F.max_pool2d(h, 3, stride=1, padding=1)
    h = F.conv2d(h, dw, None, padding=2, dilation=2, groups=8)
    h = F.avg_pool2d(h, 2, ceil_mode=True, count_include_pad=False)  # 4×3
    h = F.conv_transpose2d(h, tw, tb, stride=2, padding=1, output_padding=1, groups=2)  # 8×6
    a = F.interpolate(h, size=(12, 12), mode="bilinear", align_corners=False)
    b = F.interpolate(h, size=(12, 12), mode="bilinear", align_corners=True)
    c = F.interpolate(h, scale_factor=(1.5, 2.0), mode="nearest")
    h = F.layer_norm(om.cat([a, b, c], 1), (12, 12), lw + 1.0, lb)
    e = F.embedding(om.tensor([[1, 3, 3, 9, 0, 3]]), emb)  # [1, 6, 6]
    h = h[:, :6, :6, :6] * e.reshape(1, 1, 6, 6)
    h = F.pad(h, (1, 1, 0, 2))
    loss = (h * h).mean() + h.sum() * 0.01
    loss.backward()
    return [q.grad.numpy() for q in params] + [loss.detach().reshape(1).numpy()]


def test_exact_mode_hash_is_pinned_on_every_path_and_thread_count():
    with om.compute.mode("exact"):
        assert_splits(_decoder_gradients)
    seen = {}
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                seen[(path, threads)] = sha256_of(_decoder_gradients())
    assert len(set(seen.values())) == 1, seen
    assert next(iter(seen.values())) == DECODER_EXACT_SHA256


def test_fast_mode_does_not_depend_on_threads():
    hashes = set()
    for threads in THREAD_COUNTS:
        with om.compute.settings(mode="fast", threads=threads):
            hashes.add(sha256_of(_decoder_gradients()))
    assert len(hashes) == 1


def test_gradients_are_finite_and_nonzero():
    with om.compute.settings(mode="exact"):
        grads = _decoder_gradients()
    for g in grads:
        assert np.isfinite(g).all() and np.abs(g).max() > 0


def _conv_grads(x, w, g):
    xt, wt = om.tensor(x, requires_grad=True), om.tensor(w, requires_grad=True)
    F.conv2d(xt, wt, padding=1).backward(om.tensor(g))
    return xt.grad.numpy(), wt.grad.numpy()


def test_one_images_gradients_in_chunks_of_channels_keep_their_bits():
    """One image with 64 input channels (576 rows of Wᵀ, 2.4 M multiply-adds)
    runs its input and weight gradients in two chunks of input channels
    (kernels/conv/backward.rs, `channels_per_chunk`; the Rust test
    `input_grad_gives_the_definition_bits` asserts that this shape splits);
    inside a batch of 8 the same image runs whole. No sum is split, so the
    image's input gradient has the same bits both ways, both gradients are
    the same on every path and thread count, and both are within f32
    rounding of a float64 reference."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 64, 16, 16)).astype(np.float32)
    w = (rng.standard_normal((16, 64, 3, 3)) * 0.1).astype(np.float32)
    g = rng.standard_normal((8, 16, 16, 16)).astype(np.float32)
    seen = set()
    for path in PATHS:
        for threads in THREAD_COUNTS:
            with om.compute.settings(mode="exact", kernel_path=path, threads=threads):
                dx, dw = _conv_grads(x[:1], w, g[:1])
                batch_dx, _ = _conv_grads(x, w, g)
            np.testing.assert_array_equal(dx.view(np.uint32), batch_dx[:1].view(np.uint32))
            seen.add(sha256_of([dx, dw]))
    assert len(seen) == 1
    # float64 references: with xp, gp the zero-padded planes,
    # dx[c, iy, ix] = Σ_o Σ_(ky,kx) w[o, c, ky, kx] · gp[o, iy + 2 − ky, ix + 2 − kx],
    # dw[o, c, ky, kx] = Σ_(oy,ox) g[o, oy, ox] · xp[c, oy + ky, ox + kx].
    gp = np.pad(g[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    ref_dx = np.zeros((64, 16, 16))
    ref_dw = np.zeros((16, 64, 3, 3))
    for ky in range(3):
        for kx in range(3):
            ref_dx += np.einsum("oc,oyx->cyx", w[:, :, ky, kx].astype(np.float64),
                                gp[:, 2 - ky:18 - ky, 2 - kx:18 - kx])
            ref_dw[:, :, ky, kx] = np.einsum("oyx,cyx->oc", g[0].astype(np.float64),
                                             xp[:, ky:ky + 16, kx:kx + 16])
    # dx: 144 f32 terms of size ~0.1; dw: 256 terms of size ~1 (sums ~16).
    np.testing.assert_allclose(dx[0], ref_dx, rtol=0, atol=2e-5)
    np.testing.assert_allclose(dw, ref_dw, rtol=0, atol=2e-4)
