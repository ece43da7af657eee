"""torch.backends.mkldnn: flags accepted without effect."""

from __future__ import annotations

enabled = True


def is_available() -> bool:
    return False
