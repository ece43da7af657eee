"""torch.backends.cpu: the CPU capability onemodel's kernels use."""

from __future__ import annotations


def get_cpu_capability() -> str:
    """The kernel path in use (onemodel.compute.kernel_path()): scalar,
    v128, avx2 or avx512."""
    from .. import compute

    return compute.kernel_path()
