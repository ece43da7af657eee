"""The activation modules, built the same way on torch and on onemodel
(tools/surface_oracle.py section ``activations`` records torch's side in
testdata/surface/activations.json; tests/test_activation_modules.py
compares): their printout, their parameters (PReLU's), and their output and
parameter gradients on a seeded input with the special values."""

from __future__ import annotations

import numpy as np

MODULES = {
    "LeakyReLU": lambda nn: nn.LeakyReLU(),
    "LeakyReLU_args": lambda nn: nn.LeakyReLU(0.2, inplace=True),
    "Hardtanh": lambda nn: nn.Hardtanh(),
    "Hardtanh_args": lambda nn: nn.Hardtanh(-2.0, 3.5, inplace=True),
    "ReLU6": lambda nn: nn.ReLU6(),
    "ReLU6_inplace": lambda nn: nn.ReLU6(inplace=True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(),
    "Hardswish": lambda nn: nn.Hardswish(inplace=True),
    "SiLU": lambda nn: nn.SiLU(),
    "SiLU_inplace": lambda nn: nn.SiLU(inplace=True),
    "Softsign": lambda nn: nn.Softsign(),
    "Tanhshrink": lambda nn: nn.Tanhshrink(),
    "Softshrink": lambda nn: nn.Softshrink(),
    "Softshrink_args": lambda nn: nn.Softshrink(1.25),
    "Hardshrink": lambda nn: nn.Hardshrink(0.75),
    "Threshold": lambda nn: nn.Threshold(0.1, 20.0),
    "Threshold_inplace": lambda nn: nn.Threshold(-1, 2, inplace=True),
    "PReLU": lambda nn: nn.PReLU(),
    "PReLU_channels": lambda nn: nn.PReLU(num_parameters=3, init=0.1),
    "RReLU": lambda nn: nn.RReLU(),
    "RReLU_args": lambda nn: nn.RReLU(0.1, 0.3, inplace=True),
    "GLU": lambda nn: nn.GLU(),
    "GLU_dim": lambda nn: nn.GLU(dim=0),
    "Softmin": lambda nn: nn.Softmin(dim=1),
    "GELU": lambda nn: nn.GELU(),
    "GELU_tanh": lambda nn: nn.GELU(approximate="tanh"),
    "Sigmoid": lambda nn: nn.Sigmoid(),
    "Tanh": lambda nn: nn.Tanh(),
    "Softmax": lambda nn: nn.Softmax(dim=-1),
    "LogSoftmax": lambda nn: nn.LogSoftmax(dim=1),
    "ELU": lambda nn: nn.ELU(),
    "ELU_args": lambda nn: nn.ELU(alpha=0.5, inplace=True),
    "CELU": lambda nn: nn.CELU(1.5),
    "SELU": lambda nn: nn.SELU(),
    "SELU_inplace": lambda nn: nn.SELU(inplace=True),
    "Mish": lambda nn: nn.Mish(),
    "Softplus": lambda nn: nn.Softplus(),
    "Softplus_args": lambda nn: nn.Softplus(beta=2.0, threshold=5.0),
    "LogSigmoid": lambda nn: nn.LogSigmoid(),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(4, 4), nn.LeakyReLU(0.2, inplace=True), nn.PReLU(), nn.ReLU6(), nn.ELU(), nn.GLU()),
}


def module_input() -> np.ndarray:
    """(2, 3, 4) float32: normals ×3 with ±0, ±3, ±6 and ±0.5 planted."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((2, 3, 4)) * 3).astype(np.float32)
    x.flat[:8] = [0.0, -0.0, 3.0, -3.0, 6.0, -6.0, 0.5, -0.5]
    return x


def weights(shape) -> np.ndarray:
    return np.random.default_rng(11).uniform(-1, 1, size=shape).astype(np.float32)
