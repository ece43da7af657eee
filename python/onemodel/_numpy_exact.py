"""NumPy arithmetic under the contract's rules (docs/engine.md).

Some operators (products, scans, scatter-adds, index backward) compute
with NumPy in float64 where NumPy's order is the contract's order
(``np.add.accumulate``/``np.multiply.accumulate`` are sequential, and
``np.add.at`` applies its indices in order). Two machine dependencies
remain and are removed here:

* ``ieee()``: the x86 flush-to-zero and denormals-are-zero bits are cleared
  for the duration (another library may have set them), as the Rust
  kernels do;
* ``canonical_nan(a)``: a NaN that arithmetic created has the machine's
  default sign and payload (x86 makes ``-nan``, Arm ``+nan``); results are
  written with the quiet NaN ``0x7FC00000`` instead.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from . import _core

_FTZ_DAZ = 0x8040  # MXCSR bits 15 (flush to zero) and 6 (denormals are zero)


@contextmanager
def ieee():
    saved = _core.get_mxcsr()
    if saved & _FTZ_DAZ:
        _core.set_mxcsr(saved & ~_FTZ_DAZ)
        try:
            yield
        finally:
            _core.set_mxcsr(saved)
    else:
        yield


def ieee_method(fn):
    """Run `fn` (an operator's forward or backward doing NumPy float
    arithmetic or conversions) inside ``ieee()``: with denormals-are-zero set,
    even reading a float32 subnormal into a double gives 0."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with ieee():
            return fn(*args, **kwargs)

    return wrapper


def canonical_nan(a: np.ndarray) -> np.ndarray:
    """Write every NaN of float array `a` as the quiet NaN 0x7FC00000 (in place)."""
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        if nan.any():
            a[nan] = np.nan  # np.nan as float32/64 is the positive quiet NaN
    return a
