"""F.pad's 'reflect', 'replicate' and 'circular' modes, and F.unfold /
F.fold (im2col / col2im).

Each is a gather: every output element reads one input element (or a zero
for fold's and unfold's zero padding), so the forward is a copy and the
backward is the indexing scatter-add (docs/tensor.md, "Indexing": each input element one double
chain over the output positions in increasing row-major order, rounded
once). F.fold is the transposed operation: its forward is that scatter-add
and its backward the gather.
"""

from __future__ import annotations

import numpy as np

from .._numpy_exact import canonical_nan, ieee
from ..autograd.function import Function
from ..tensor import Tensor, float32
from .operands import check_float, from_array, pair


def _source(mode: str, n: int, before: int, after: int) -> np.ndarray:
    """For each output position along a dim, the input position it reads."""
    s = np.arange(-before, n + after, dtype=np.int64)
    if mode == "reflect":
        period = 2 * (n - 1) if n > 1 else 1
        s = np.abs(s) % period if n > 1 else np.zeros_like(s)
        s = np.where(s >= n, period - s, s)
    elif mode == "replicate":
        s = np.clip(s, 0, n - 1)
    else:  # circular: as torch, a negative pad crops first and the wrap reads the cropped part
        lo, hi = max(0, -before), n - max(0, -after)
        s = lo + np.mod(np.arange(-max(before, 0), hi - lo + max(after, 0), dtype=np.int64), max(hi - lo, 1))
    return s


def pad_nonconstant(input: Tensor, pad: tuple, mode: str) -> Tensor:
    """torch.nn.functional.pad for mode reflect / replicate / circular:
    `pad` lists (left, right) from the last dim backwards, for 1 to 3 dims
    of an input with one or two more leading dims (a batch, channels)."""
    from .take_put import Take

    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if not isinstance(input, Tensor):
        raise TypeError(f"pad: expected a Tensor, got {type(input).__name__}")
    k = len(pad) // 2
    if len(pad) % 2 or k not in (1, 2, 3):
        raise NotImplementedError(f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now (pad={list(pad)}, mode={mode})")
    if input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now: {mode} padding of {k} dims "
            f"expects a {k + 1}-D or {k + 2}-D input, got shape {tuple(input.shape)}"
        )
    idx = []
    nd = input.ndim
    for d in range(nd):
        j = nd - 1 - d  # pad pair index
        n = input.shape[d]
        if j >= k:
            idx.append(None)
            continue
        before, after = pad[2 * j], pad[2 * j + 1]
        if mode == "reflect" and (before >= n or after >= n):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: padding "
                f"({before}, {after}) at dimension {d} of input {tuple(input.shape)}"
            )
        if mode == "circular" and (before > n or after > n):
            raise RuntimeError(f"Padding value causes wrapping around more than once: padding ({before}, {after}) for size {n}")
        if mode == "replicate" and n == 0 and (before or after):
            raise RuntimeError(f"padding of size {n} dimension {d} with replicate needs a non-empty input")
        if n + before + after < 0:
            raise RuntimeError(f"pad: padding ({before}, {after}) makes dimension {d} of size {n} negative")
        idx.append(_source(mode, n, before, after) if n else np.zeros(max(0, before + after), np.int64))
    arrays = []
    pos = 0
    padded = [i for i in idx if i is not None]
    for i in idx:
        if i is None:
            arrays.append(slice(None))
        else:
            shape = [1] * len(padded)
            shape[pos] = i.size
            arrays.append(i.reshape(shape))
            pos += 1
    return Take.apply(input, tuple(arrays))


# ---------------------------------------------------------------------------
# unfold / fold
# ---------------------------------------------------------------------------

def _fold_index(c: int, size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple):
    """The (channel, row, col) read by each (C·kh·kw, L) position of the
    unfolded matrix, in the zero-padded plane, and the block counts."""
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = size, kernel, dilation, padding, stride
    bh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    ci, ki, kj = np.meshgrid(np.arange(c), np.arange(kh), np.arange(kw), indexing="ij")
    oi, oj = np.meshgrid(np.arange(bh), np.arange(bw), indexing="ij")
    rows = ki.reshape(-1, 1) * dh + oi.reshape(1, -1) * sh
    cols = kj.reshape(-1, 1) * dw + oj.reshape(1, -1) * sw
    chans = np.broadcast_to(ci.reshape(-1, 1), rows.shape)
    return chans, rows, cols, bh, bw


def _fold_args(op: str, kernel_size, dilation, padding, stride) -> tuple:
    return (pair(op, "kernel_size", kernel_size, 1), pair(op, "dilation", dilation, 1), pair(op, "padding", padding, 0), pair(op, "stride", stride, 1))


class Unfold(Function):
    def forward(self, x, geom) -> Tensor:
        # x: the zero-padded input [N, C, Hp, Wp]; geom: the index arrays.
        self.geom = geom
        chans, rows, cols = geom
        a = x.numpy(force=True)
        out = np.ascontiguousarray(a[:, chans, rows, cols])
        return from_array(out, float32)

    def backward(self, g) -> Tensor:
        return _col2im(g, self.input_meta[0][0], self.geom)


class Fold(Function):
    def forward(self, cols_t, plane_shape, geom) -> Tensor:
        self.geom = geom
        return _col2im(cols_t, plane_shape, geom)

    def backward(self, g) -> Tensor:
        chans, rows, cols = self.geom
        out = np.ascontiguousarray(g.numpy(force=True)[:, chans, rows, cols])
        return from_array(out, float32)


def _col2im(g: Tensor, plane_shape: tuple, geom) -> Tensor:
    chans, rows, cols = geom
    n = plane_shape[0]
    with ieee():
        acc = np.zeros(plane_shape, np.float64)
        gn = g.numpy(force=True).astype(np.float64)
        for b in range(n):
            np.add.at(acc[b], (chans, rows, cols), gn[b])
        r = canonical_nan(acc.astype(np.float32))
    return from_array(r, float32)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """torch.nn.functional.unfold: the sliding blocks of a [N, C, H, W] (or
    [C, H, W]) input as columns of [N, C·kh·kw, L]."""
    op = "unfold"
    check_float(op, input=input)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {input.ndim}D)")
    k, d, p, s = _fold_args(op, kernel_size, dilation, padding, stride)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    n, c, h, w = x.shape
    chans, rows, cols, bh, bw = _fold_index(c, (h, w), k, d, p, s)
    if bh <= 0 or bw <= 0:
        raise RuntimeError(
            f"Given input with spatial size ({h}, {w}), kernel_size={k}, dilation={d}, padding={p}, calculated shape of "
            f"the array of sliding blocks as ({bh}, {bw}), but its components must be at least one."
        )
    from .shape_ops import pad as constant_pad

    xp = constant_pad(x, (p[1], p[1], p[0], p[0])) if any(p) else x
    out = Unfold.apply(xp, (chans, rows, cols))
    return out.squeeze(0) if unbatched else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """torch.nn.functional.fold: sums the columns of [N, C·kh·kw, L] (or
    [C·kh·kw, L]) into a [N, C, H, W] output (overlaps add: one double
    chain per output element in increasing column order, rounded once)."""
    op = "fold"
    check_float(op, input=input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {input.ndim}D)")
    size = pair(op, "output_size", output_size, 1)
    k, d, p, s = _fold_args(op, kernel_size, dilation, padding, stride)
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    n, ckk, length = x.shape
    if ckk % (k[0] * k[1]):
        raise RuntimeError(
            f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={ckk} and kernel_size={k}"
        )
    c = ckk // (k[0] * k[1])
    chans, rows, cols, bh, bw = _fold_index(c, size, k, d, p, s)
    if bh * bw != length:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, stride={s}, expected size of "
            f"input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, but got "
            f"input.size(2)={length}."
        )
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    out = Fold.apply(x if x.is_contiguous() else x.contiguous(), (n, c, hp, wp), (chans, rows, cols))
    if any(p):
        out = out[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]
    return out.squeeze(0) if unbatched else out
