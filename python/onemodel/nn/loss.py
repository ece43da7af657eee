"""Loss modules (torch.nn's names)."""

from __future__ import annotations

from ..ops.ctc import ctc_loss
from .module import Module


class CTCLoss(Module):
    """torch.nn.CTCLoss(blank=0, reduction='mean', zero_infinity=False); see
    onemodel.functional.ctc_loss for the gradient convention."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__()
        self.blank, self.reduction, self.zero_infinity = blank, reduction, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction, self.zero_infinity)
