"""3-D (volumetric) convolution and pooling as compositions: conv3d,
conv_transpose3d, max_pool3d, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d.

conv3d is im2col and one canonical GEMM per group: the (zero-padded)
input's windows are gathered into [N, C·kd·kh·kw, L] (backward: the indexing
scatter-add of docs/tensor.md, "Indexing"), and each output is one accumulator over k in the order
(c, kd, kh, kw) row-major, then the bias as a separate add. max_pool3d
takes the first maximum of each window in (kd, kh, kw) order (as torch;
NaN wins), its gradient going to that element; avg_pool3d is the window's
double sum, rounded once, divided as torch does (count_include_pad,
divisor_override). The adaptive pools use torch's windows
[floor(i·n/o), ceil((i+1)·n/o)).
"""

from __future__ import annotations

from typing import Any

import math
import numbers

import numpy as np

from .. import _core
from ..tensor import Tensor, float32, int64
from .operands import check_float, from_array, ints, pool_stride


def triple(op: str, name: str, value, minimum: int = 0) -> tuple:
    return ints(op, name, value, 3, minimum)


def _windows(sizes, kernel, stride, dilation, outs):
    """Per spatial dim: [out, k] source indices into the padded input."""
    return [np.arange(o)[:, None] * s + np.arange(k)[None, :] * d for o, k, s, d in zip(outs, kernel, stride, dilation)]


def _gather_windows(x: Tensor, idx) -> Tensor:
    """x [N, C, D, H, W] → [N, C, od, oh, ow, kd, kh, kw] (a gather)."""
    from .take_put import Take

    (wd, wh, ww) = idx
    od, kd = wd.shape
    oh, kh = wh.shape
    ow, kw = ww.shape
    d = wd.reshape(od, 1, 1, kd, 1, 1)
    h = wh.reshape(1, oh, 1, 1, kh, 1)
    w = ww.reshape(1, 1, ow, 1, 1, kw)
    return Take.apply(x, (slice(None), slice(None), d, h, w))


def _batched(op: str, input: Tensor):
    if input.ndim not in (4, 5):
        raise ValueError(f"{op}: expected a 4-D (unbatched) or 5-D input, got shape {tuple(input.shape)}")
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """torch.nn.functional.conv3d (padding int, triple, 'valid' or 'same')."""
    from .linalg import matmul
    from .shape_ops import pad

    op = "conv3d"
    check_float(op, input=input, weight=weight, bias=bias)
    x, unbatched = _batched(op, input)
    if weight.ndim != 5:
        raise ValueError(f"{op}: weight must be 5-D [out, in/groups, kd, kh, kw], got shape {tuple(weight.shape)}")
    c_out, cg, *k = weight.shape
    st = triple(op, "stride", stride, 1)
    dl = triple(op, "dilation", dilation, 1)
    if x.shape[1] != cg * groups or c_out % groups:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} and weight of shape {tuple(weight.shape)} do not match groups={groups}")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not match out_channels {c_out}")
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * 3
        elif padding == "same":
            if st != (1, 1, 1):
                raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
            pads = [(dd * (kk - 1) // 2, dd * (kk - 1) - dd * (kk - 1) // 2) for dd, kk in zip(dl, k)]
        else:
            raise ValueError(f"{op}: padding must be an int, a triple, 'valid' or 'same', got {padding!r}")
    else:
        pads = [(p, p) for p in triple(op, "padding", padding, 0)]
    if any(a or b for a, b in pads):
        x = pad(x, (pads[2][0], pads[2][1], pads[1][0], pads[1][1], pads[0][0], pads[0][1]))
    n, c = x.shape[:2]
    sizes = x.shape[2:]
    # (x is already padded: the geometry sees padding 0.)
    outs = tuple(_core.conv_output_sizes(op, list(sizes), (list(k), list(st), [0, 0, 0], list(dl))))
    win = _gather_windows(x, _windows(sizes, k, st, dl, outs))  # [N, C, od, oh, ow, kd, kh, kw]
    kk = k[0] * k[1] * k[2]
    L = outs[0] * outs[1] * outs[2]
    cols = win.permute(0, 1, 5, 6, 7, 2, 3, 4).reshape(n, groups, cg * kk, L)
    w = weight.reshape(groups, c_out // groups, cg * kk)
    out = matmul(w, cols)  # [N, G, Og, L]
    out = out.reshape(n, c_out, *outs)
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
    """torch.nn.functional.conv_transpose3d (weight [in, out/groups, kd, kh,
    kw]): per group one canonical GEMM ``Wᵀ·x`` gives every input
    position's contribution to its kd·kh·kw output taps; the taps are added
    into the output grid in (tap, input position) order (``index_add``, its
    backward the matching gather), then ``padding`` is cropped from both
    ends and the bias added."""
    from .linalg import matmul
    from .scatter import index_add

    op = "conv_transpose3d"
    check_float(op, input=input, weight=weight, bias=bias)
    x, unbatched = _batched(op, input)
    if weight.ndim != 5:
        raise ValueError(f"{op}: weight must be 5-D [in, out/groups, kd, kh, kw], got shape {tuple(weight.shape)}")
    c_in, og, *k = weight.shape
    groups = int(groups)
    if groups < 1 or x.shape[1] != c_in or c_in % groups:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} and weight of shape {tuple(weight.shape)} do not match groups={groups}")
    c_out = og * groups
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias of shape {tuple(bias.shape)} does not match out_channels {c_out}")
    st = triple(op, "stride", stride, 1)
    dl = triple(op, "dilation", dilation, 1)
    pd = triple(op, "padding", padding, 0)
    opad = triple(op, "output_padding", output_padding, 0)
    for i in range(3):
        if opad[i] >= max(st[i], dl[i]):
            raise ValueError(f"{op}: output padding must be smaller than either stride or dilation, got output_padding={opad}, "
                             f"stride={st}, dilation={dl}")
    n = x.shape[0]
    sizes = tuple(x.shape[2:])
    outs = tuple(_core.conv_transpose_size(op, sizes[i], k[i], st[i], pd[i], opad[i], dl[i]) for i in range(3))
    # The full grid before the crop: every tap of every input position.
    full = tuple((sizes[i] - 1) * st[i] + dl[i] * (k[i] - 1) + 1 + opad[i] for i in range(3))
    kk, L = k[0] * k[1] * k[2], sizes[0] * sizes[1] * sizes[2]
    cg = c_in // groups
    w = weight.reshape(groups, cg, og * kk).transpose(1, 2)  # [G, og·kk, cg]
    cols = matmul(w, x.reshape(n, groups, cg, L))  # [N, G, og·kk, L]
    cols = cols.reshape(n, c_out, kk * L)
    # Target of tap (a, b, c) of input position (z, y, x): the full-grid
    # position (z·s + a·d, y·s + b·d, x·s + c·d), flattened.
    tz, ty, tx = (np.arange(sizes[i])[None, :] * st[i] + np.arange(k[i])[:, None] * dl[i] for i in range(3))
    target = ((tz[:, None, None, :, None, None] * full[1] + ty[None, :, None, None, :, None]) * full[2]
              + tx[None, None, :, None, None, :]).reshape(-1)
    grid = from_array(np.zeros((n, c_out, full[0] * full[1] * full[2]), np.float32), float32)
    out = index_add(grid, 2, from_array(target.astype(np.int64), int64), cols)
    out = out.reshape(n, c_out, *full)[:, :, pd[0]:pd[0] + outs[0], pd[1]:pd[1] + outs[1], pd[2]:pd[2] + outs[2]]
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def _pool_windows(op: str, input, kernel_size, stride, padding, dilation, ceil_mode: bool, fill: float) -> tuple:
    """The checked arguments of a 3-D pool and its windows [N, C, od, oh,
    ow, kd·kh·kw] over the input padded with `fill` (far enough for
    ceil_mode's last windows): (windows, unbatched, k, stride, padding,
    dilation, input sizes, output sizes)."""
    from .shape_ops import pad

    check_float(op, input=input)
    x, unbatched = _batched(op, input)
    k = triple(op, "kernel_size", kernel_size, 1)
    st = pool_stride(op, stride, k)
    p = triple(op, "padding", padding, 0)
    dl = triple(op, "dilation", dilation, 1)
    sizes = x.shape[2:]
    outs = tuple(_core.pool_output_sizes(op, list(sizes), (list(k), list(st), list(p), list(dl)), ceil_mode))
    need = [max(0, (o - 1) * ss + dd * (kk - 1) + 1 - (m + pp)) for o, ss, dd, kk, m, pp in zip(outs, st, dl, k, sizes, p)]
    xp = pad(x, (p[2], need[2], p[1], need[1], p[0], need[0]), value=fill)
    win = _gather_windows(xp, _windows(xp.shape[2:], k, st, dl, outs))
    n, c = x.shape[:2]
    return win.reshape(n, c, *outs, -1), unbatched, k, st, p, dl, sizes, outs


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    flat, unbatched, k, st, p, dl, sizes, outs = _pool_windows("max_pool3d", input, kernel_size, stride, padding, dilation,
                                                               ceil_mode, -math.inf)
    values, arg = flat.max(-1)
    out = values
    if not return_indices:
        return out.squeeze(0) if unbatched else out
    # The flat input index of each chosen element (torch's indices).
    a = arg.numpy(force=True)
    kd_, rem = np.divmod(a, k[1] * k[2])
    kh_, kw_ = np.divmod(rem, k[2])
    od, oh, ow = np.meshgrid(*[np.arange(o) for o in outs], indexing="ij")
    zd = od * st[0] + kd_ * dl[0] - p[0]
    zh = oh * st[1] + kh_ * dl[1] - p[1]
    zw = ow * st[2] + kw_ * dl[2] - p[2]
    flat_idx = (zd * sizes[1] + zh) * sizes[2] + zw
    it = from_array(flat_idx, int64)
    if unbatched:
        return out.squeeze(0), it.squeeze(0)
    return out, it


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True, divisor_override=None) -> Tensor:
    op = "avg_pool3d"
    if divisor_override is not None and divisor_override == 0:
        raise ValueError(f"{op}: divisor must be not zero")
    win, unbatched, k, st, p, _dl, sizes, outs = _pool_windows(op, input, kernel_size, stride, padding, 1, ceil_mode, 0.0)
    total = win.sum(-1)
    if divisor_override is not None:
        return (total / float(divisor_override)).squeeze(0) if unbatched else total / float(divisor_override)
    # torch's divisor: the window clipped to the padded input (count_include_pad)
    # or to the input itself.
    div = np.ones(outs, np.float64)
    for axis, (o, ss, kk, m, pp) in enumerate(zip(outs, st, k, sizes, p)):
        start = np.arange(o) * ss - pp
        end = np.minimum(start + kk, m + pp)
        if count_include_pad:
            cnt = end - start
        else:
            cnt = np.minimum(end, m) - np.maximum(start, 0)
        shape = [1, 1, 1]
        shape[axis] = o
        div = div * cnt.reshape(shape)
    dt = from_array(div.astype(np.float32), float32)
    out = total / dt
    return out.squeeze(0) if unbatched else out


def _adaptive3d(op: str, input: Tensor, output_size, reduce_max: bool):
    from .join import stack

    check_float(op, input=input)
    x, unbatched = _batched(op, input)
    osz = (output_size,) * 3 if isinstance(output_size, numbers.Integral) else tuple(output_size)
    if len(osz) != 3:
        raise ValueError(f"{op}: output_size must be an int or a triple, got {output_size!r}")
    osz = tuple(m if o is None else int(o) for o, m in zip(osz, x.shape[2:]))
    wins = [_core.adaptive_windows(m, o) for m, o in zip(x.shape[2:], osz)]
    vals, idxs = [], []
    for (d0, d1) in wins[0]:
        for (h0, h1) in wins[1]:
            for (w0, w1) in wins[2]:
                block = x[:, :, d0:d1, h0:h1, w0:w1].reshape(x.shape[0], x.shape[1], -1)
                if reduce_max:
                    v, a = block.max(-1)
                    vals.append(v)
                    an = a.numpy(force=True)
                    bh, bw = h1 - h0, w1 - w0
                    dd, rem = np.divmod(an, bh * bw)
                    hh, ww = np.divmod(rem, bw)
                    idxs.append(((d0 + dd) * x.shape[3] + h0 + hh) * x.shape[4] + w0 + ww)
                else:
                    vals.append(block.mean(-1))
    out = stack(vals, -1).reshape(x.shape[0], x.shape[1], *osz)
    if not reduce_max:
        return out.squeeze(0) if unbatched else out
    ia = np.stack(idxs, -1).reshape(x.shape[0], x.shape[1], *osz).astype(np.int64)
    it = from_array(ia, int64)
    return (out.squeeze(0), it.squeeze(0)) if unbatched else (out, it)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    return _adaptive3d("adaptive_avg_pool3d", input, output_size, False)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False) -> Any:
    out, idx = _adaptive3d("adaptive_max_pool3d", input, output_size, True)
    return (out, idx) if return_indices else out
