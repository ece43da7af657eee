"""torch.nn.functional's names and signatures, over onemodel's operators.

Importable as ``onemodel.functional`` or ``onemodel.nn.functional``."""

from __future__ import annotations

from .ops.arith import relu as _relu
from .ops.linalg import linear
from .ops.pointwise import gelu, sigmoid, tanh
from .tensor import Tensor


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    if inplace:
        return input.relu_()
    return _relu(input)


__all__ = ["gelu", "linear", "relu", "sigmoid", "tanh"]


from .ops.ctc import ctc_loss  # noqa: E402

__all__ += ["ctc_loss"]
