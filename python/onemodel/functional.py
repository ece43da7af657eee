"""torch.nn.functional's names and signatures, over onemodel's operators.

Importable as ``onemodel.functional`` or ``onemodel.nn.functional``."""

from __future__ import annotations

from .ops.arith import relu as _relu
from .ops.linalg import linear
from .tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return input.relu_()
    return _relu(input)


__all__ = ["linear", "relu"]


from .ops.ctc import ctc_loss  # noqa: E402

__all__ += ["ctc_loss"]
