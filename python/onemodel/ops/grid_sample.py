"""affine_grid and grid_sample for 4-D inputs (2-D spatial transformers).

affine_grid is torch's construction: a base grid of [x, y, 1] rows (x and
y from linspace(-1, 1), scaled by (n − 1)/n without align_corners) times
θᵀ in one canonical GEMM per batch (k = 3 terms in the order x, y, 1).

grid_sample follows torch's CPU formulas: the coordinate unnormalised as
((g + 1)/2)·(size − 1) (align_corners) or ((g + 1)·size − 1)/2, clipped for
padding_mode='border'; bilinear weights from the four neighbours,
out = v_nw·w_nw + v_ne·w_ne + v_sw·w_sw + v_se·w_se added in that order,
neighbours outside the input reading zero; 'nearest' rounds half to even.
The gradient to the input is the indexing scatter-add of the gathers, the
gradient to the grid flows through the weights (0 for 'nearest').
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor, float32, int64
from .operands import check_float, from_array
from . import views


def _linspace_from_neg_one(n: int, align_corners: bool) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 1), np.float32)
    from ..creation import linspace

    r = linspace(-1.0, 1.0, n).numpy(force=True).astype(np.float32)
    if not align_corners:
        r = (r * np.float32(n - 1)) / np.float32(n)
    return r


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    """torch.nn.functional.affine_grid for 2-D transforms (size [N, C, H, W])."""
    from .linalg import matmul

    check_float("affine_grid", theta=theta)
    align = bool(align_corners) if align_corners is not None else False
    size = tuple(int(s) for s in size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid: 3-D (5-D size) transforms are not implemented in onemodel")
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {tuple(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n, _, h, w = size
    if theta.shape[0] != n:
        raise RuntimeError(f"affine_grid: theta has {theta.shape[0]} matrices for a batch of {n}")
    base = np.empty((h, w, 3), np.float32)
    base[..., 0] = _linspace_from_neg_one(w, align)[None, :]
    base[..., 1] = _linspace_from_neg_one(h, align)[:, None]
    base[..., 2] = 1.0
    bt = from_array(base.reshape(1, h * w, 3), float32)
    grid = matmul(bt, theta.transpose(1, 2))  # [N, H·W, 2]
    return views.reshape(grid, (n, h, w, 2))


def _unnormalize(g: Tensor, size: int, align: bool) -> Tensor:
    if align:
        return ((g + 1.0) / 2.0) * float(size - 1)
    return ((g + 1.0) * float(size) - 1.0) / 2.0


def _index(a: np.ndarray) -> Tensor:
    return from_array(a, int64)


def _mask(a: np.ndarray) -> Tensor:
    return from_array(a.astype(np.float32), float32)


def _corner(input: Tensor, iy: np.ndarray, ix: np.ndarray) -> Tensor:
    """input[n, :, iy, ix] as [N, C, Hg, Wg], zero where (iy, ix) is outside."""
    n, c, h, w = input.shape
    valid = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)
    yy = np.clip(iy, 0, max(h - 1, 0)).astype(np.int64)
    xx = np.clip(ix, 0, max(w - 1, 0)).astype(np.int64)
    nn = np.broadcast_to(np.arange(n, dtype=np.int64).reshape(n, 1, 1), yy.shape)
    vals = input[_index(np.ascontiguousarray(nn)), :, _index(yy), _index(xx)]  # [N, Hg, Wg, C]
    vals = vals.permute(0, 3, 1, 2)
    return vals * views.unsqueeze(_mask(valid), 1)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros", align_corners=None) -> Tensor:
    """torch.nn.functional.grid_sample for 4-D input [N, C, H, W] and grid
    [N, Hg, Wg, 2]; modes 'bilinear' and 'nearest', padding 'zeros' and
    'border' ('reflection', 'bicubic' and 5-D inputs are not implemented)."""
    check_float("grid_sample", input=input, grid=grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" or padding_mode == "reflection":
        raise NotImplementedError(f"grid_sample: mode={mode!r} with padding_mode={padding_mode!r} is not implemented in onemodel (bilinear/nearest with zeros/border are)")
    if input.ndim == 5:
        raise NotImplementedError("grid_sample: 5-D (volumetric) inputs are not implemented in onemodel")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with last dimension 2, got input {tuple(input.shape)} and grid {tuple(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    align = bool(align_corners) if align_corners is not None else False
    _, _, h, w = input.shape
    ix = _unnormalize(grid[..., 0], w, align)
    iy = _unnormalize(grid[..., 1], h, align)
    if padding_mode == "border":
        from .selection import clamp

        ix = clamp(ix, 0.0, float(w - 1))
        iy = clamp(iy, 0.0, float(h - 1))
    xn, yn = ix.detach().numpy(force=True), iy.detach().numpy(force=True)
    if mode == "nearest":
        with np.errstate(invalid="ignore"):
            xr, yr = np.rint(xn), np.rint(yn)
        bad = ~np.isfinite(xr) | ~np.isfinite(yr)
        xr, yr = np.where(bad, -1, xr).astype(np.int64), np.where(bad, -1, yr).astype(np.int64)
        return _corner(input, yr, xr)
    with np.errstate(invalid="ignore"):
        x0f, y0f = np.floor(xn), np.floor(yn)
    bad = ~np.isfinite(x0f) | ~np.isfinite(y0f)
    x0 = np.where(bad, -2, x0f).astype(np.int64)
    y0 = np.where(bad, -2, y0f).astype(np.int64)
    x0t, y0t = _mask(x0), _mask(y0)
    x1t, y1t = x0t + 1.0, y0t + 1.0
    w_nw = (x1t - ix) * (y1t - iy)
    w_ne = (ix - x0t) * (y1t - iy)
    w_sw = (x1t - ix) * (iy - y0t)
    w_se = (ix - x0t) * (iy - y0t)
    out = _corner(input, y0, x0) * views.unsqueeze(w_nw, 1)
    out = out + _corner(input, y0, x0 + 1) * views.unsqueeze(w_ne, 1)
    out = out + _corner(input, y0 + 1, x0) * views.unsqueeze(w_sw, 1)
    out = out + _corner(input, y0 + 1, x0 + 1) * views.unsqueeze(w_se, 1)
    return out
