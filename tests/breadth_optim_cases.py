"""ASGD, Rprop and LBFGS cases shared by tools/surface_oracle.py's
``breadth`` section (torch, single-tensor path) and
tests/test_breadth_optim.py (onemodel): seeded initial parameters and
per-step gradients with exact zeros, tiny and huge values (ASGD, Rprop),
and a smooth objective for LBFGS's closure."""

from __future__ import annotations

import numpy as np

SHAPES = [(5, 4), (7,), (1,)]
STEPS = 6

# name, class, kwargs (ASGD/Rprop take stored gradients; LBFGS a closure)
OPTIM_CASES = [
    ("asgd", "ASGD", {"foreach": False}),
    ("asgd_fast_averaging", "ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1, "foreach": False}),
    ("asgd_maximize", "ASGD", {"lr": 0.02, "t0": 0, "maximize": True, "foreach": False}),
    ("rprop", "Rprop", {"foreach": False}),
    ("rprop_etas_bounds", "Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.08), "foreach": False}),
    ("rprop_maximize", "Rprop", {"lr": 0.1, "maximize": True, "foreach": False}),
    ("lbfgs", "LBFGS", {"lr": 1, "max_iter": 5}),
    ("lbfgs_history_lr", "LBFGS", {"lr": 0.5, "max_iter": 4, "history_size": 2}),
    ("lbfgs_strong_wolfe", "LBFGS", {"lr": 1, "max_iter": 6, "line_search_fn": "strong_wolfe"}),
]


def inputs() -> dict:
    rng = np.random.default_rng(20250120)
    arrays = {}
    for i, shape in enumerate(SHAPES):
        arrays[f"init/{i}"] = rng.standard_normal(shape).astype(np.float32)
    scales = [1.0, 1e-3, 10.0]
    for s in range(STEPS):
        for i, shape in enumerate(SHAPES):
            g = (rng.standard_normal(shape) * scales[i]).astype(np.float32)
            flat = g.reshape(-1)
            if flat.size > 6:
                flat[::5] = 0.0
                flat[2] = np.float32(1e-20)
                flat[4] = np.float32(1e4)
            if s % 3 == 2:
                flat[:2] = 0.0  # repeated zeros: Rprop's sign(g·prev) == 0 branch
            arrays[f"grad/{s}/{i}"] = g
    return arrays


def objective(t, params):
    """A smooth non-quadratic function of the three parameters."""
    a, b, c = params
    target = t.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4))
    r = (a - target) * (a - target)
    return r.sum() * 0.5 + (b * b).sum() + ((b * b).sum() + 1.0) * (c * c).sum() + (a * a * a * a).sum() * 0.05
