"""A small typed program over onemodel's public API: tensors, a module, an
optimizer with a schedule, a loss, and the crnn-v0 recognizer's trainer.

`mypy --strict examples/typed_training.py` passes on it (tests/test_typing.py
runs that, and runs the program): what a user's typed code sees of the
package's annotations and of the extension's stubs (python/onemodel/_core.pyi).

    python examples/typed_training.py
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

import onemodel as om
from onemodel import nn, optim
from onemodel.recognizer import CrnnV0, CrnnV0Config, Trainer

if TYPE_CHECKING:  # (typing.assert_type is Python 3.11's; checked by mypy only)
    from typing import assert_type


class TwoLayer(nn.Module):
    """y = W2 · relu(W1 · x + b1) + b2."""

    def __init__(self, d_in: int, hidden: int, d_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, d_out)

    def forward(self, x: om.Tensor) -> om.Tensor:
        return self.fc2.forward(om.relu(self.fc1.forward(x)))


def fit_regressor(steps: int) -> list[float]:
    """Fit y = 2·Σx with SGD and a step schedule; the loss of every step."""
    om.manual_seed(0)
    model = TwoLayer(4, 16, 1)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    schedule = optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    loss_fn = nn.MSELoss()
    x = om.randn(32, 4)
    y = (x * 2.0).sum(dim=1, keepdim=True)
    if TYPE_CHECKING:  # what the annotations give a typed caller
        assert_type(y, om.Tensor)
        assert_type(x.sort(dim=0).values, om.Tensor)
        assert_type(x.split(2, dim=1), tuple[om.Tensor, ...])
        assert_type(list(model.parameters())[0], nn.Parameter)
        assert_type(opt.param_groups, list[dict[str, Any]])
    losses: list[float] = []
    for _ in range(steps):
        opt.zero_grad()
        loss: om.Tensor = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        schedule.step()
        losses.append(loss.item())
    with om.no_grad():
        fitted = model(x)
        worst: float = (fitted - y).abs().max().item()
    assert worst == worst  # a number, not NaN
    for p in model.parameters():
        assert p.grad is not None and p.grad.shape == p.shape
    return losses


def fit_recognizer(steps: int) -> tuple[list[float], str]:
    """A few AdamW steps of the recognizer on two random line images; the
    losses and what it reads in the first image afterwards."""
    model = CrnnV0(CrnnV0Config(charset="01"), seed=0)
    trainer = Trainer(model, lr=1e-3)
    rng = np.random.default_rng(0)
    images: list[npt.NDArray[np.float32]] = [rng.random((32, 24), dtype=np.float32) for _ in range(2)]
    losses: list[float] = []
    if TYPE_CHECKING:
        assert_type(trainer.step(images, ["01", "10"]), tuple[float, float])
        assert_type(model.logits(images[0]), np.ndarray)
    for _ in range(steps):
        loss, _norm = trainer.step(images, ["01", "10"])
        losses.append(loss)
    return losses, model.recognize(images[0])


def main() -> None:
    losses = fit_regressor(30)
    print(f"regressor: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    rec_losses, text = fit_recognizer(3)
    print(f"recognizer: loss {rec_losses[0]:.4f} -> {rec_losses[-1]:.4f}, reads {text!r}")


if __name__ == "__main__":
    main()
