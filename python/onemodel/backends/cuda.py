"""torch.backends.cuda: flags accepted without effect (no CUDA)."""

from __future__ import annotations


class _MatmulFlags:
    """``backends.cuda.matmul.allow_tf32`` and friends: plain attributes."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "ieee"


matmul = _MatmulFlags()


def is_built() -> bool:
    return False


def flash_sdp_enabled() -> bool:
    return False


def mem_efficient_sdp_enabled() -> bool:
    return False


def math_sdp_enabled() -> bool:
    return True


def enable_flash_sdp(enabled: bool) -> None:
    """Accepted without effect."""


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Accepted without effect."""


def enable_math_sdp(enabled: bool) -> None:
    """Accepted without effect."""
