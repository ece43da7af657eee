"""Record PyTorch's optimizer, clipping and scheduler results as fixtures
for tests/test_optim.py and tests/test_lr_scheduler.py.

    python tools/optim_oracle.py            # writes testdata/optim/

Needs torch and numpy; the tests read only the files written here (torch is
not a test dependency). The inputs (initial parameters, the gradient of
every step) are generated here with NumPy and stored with the results, so
the tests replay exactly the same steps.

Files:
  optim.npz       inputs and torch's parameters and state after every step
  optim.json      the optimizer cases (class, defaults, groups), torch version
  clip.npz        clip_grad_norm_ / clip_grad_value_ inputs and results
  clip.json       the clipping cases and torch's total norms
  schedulers.json torch's learning rates (and momenta) step by step
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "optim")

SHAPES = [(12, 20), (20,), (5, 4, 3), (1,)]
STEPS = 3

# Each case: optimizer class, defaults, and per-group overrides. Parameters
# 0 and 1 are group 0, 2 and 3 group 1 (different lr and weight decay).
CASES = [
    ("adamw", "AdamW", {"lr": 1e-2}, [{"weight_decay": 0.1}, {"weight_decay": 0.0, "lr": 3e-3}]),
    ("adamw_betas", "AdamW", {"lr": 5e-2, "betas": (0.8, 0.95), "eps": 1e-6}, [{"weight_decay": 0.05}, {"weight_decay": 0.5}]),
    ("adamw_amsgrad", "AdamW", {"lr": 1e-2, "amsgrad": True}, [{"weight_decay": 0.1}, {"weight_decay": 0.0}]),
    ("adamw_maximize", "AdamW", {"lr": 1e-2, "maximize": True}, [{"weight_decay": 0.1}, {"weight_decay": 0.0}]),
    ("adamw_amsgrad_maximize", "AdamW", {"lr": 2e-2, "amsgrad": True, "maximize": True}, [{}, {"weight_decay": 0.3}]),
    ("adam", "Adam", {"lr": 1e-2}, [{"weight_decay": 0.0}, {"weight_decay": 0.0, "lr": 1e-3}]),
    ("adam_l2", "Adam", {"lr": 1e-2}, [{"weight_decay": 0.05}, {"weight_decay": 0.0}]),
    ("adam_amsgrad_maximize_l2", "Adam", {"lr": 1e-2, "amsgrad": True, "maximize": True}, [{"weight_decay": 0.02}, {}]),
    ("sgd", "SGD", {"lr": 0.1}, [{}, {"lr": 0.01}]),
    ("sgd_momentum", "SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1}, [{"weight_decay": 0.01}, {"weight_decay": 0.0}]),
    ("sgd_nesterov_maximize", "SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}, [{"weight_decay": 0.001}, {}]),
]


def make_inputs(rng: np.random.Generator) -> dict:
    out = {}
    scales = [1.0, 1e-3, 10.0, 0.5]
    for i, shape in enumerate(SHAPES):
        out[f"init/{i}"] = rng.standard_normal(shape).astype(np.float32)
    for s in range(STEPS):
        for i, shape in enumerate(SHAPES):
            g = (rng.standard_normal(shape) * scales[i]).astype(np.float32)
            flat = g.reshape(-1)
            if flat.size > 8:
                flat[::7] = 0.0  # exact zeros
                flat[3] = np.float32(1e-20)  # g*g underflows
                flat[5] = np.float32(-3e-30)
                flat[6] = np.float32(1e4)
            out[f"grad/{s}/{i}"] = g
    return out


def run_optimizers(inputs: dict) -> tuple:
    results = {}
    cases = []
    for name, cls_name, defaults, group_opts in CASES:
        params = [torch.tensor(inputs[f"init/{i}"], requires_grad=True) for i in range(len(SHAPES))]
        groups = [dict({"params": params[0:2]}, **group_opts[0]), dict({"params": params[2:4]}, **group_opts[1])]
        cls = getattr(torch.optim, cls_name)
        opt = cls(groups, foreach=False, **defaults)
        for s in range(STEPS):
            for i, p in enumerate(params):
                p.grad = torch.tensor(inputs[f"grad/{s}/{i}"])
            opt.step()
            for i, p in enumerate(params):
                results[f"{name}/{s}/param/{i}"] = p.detach().numpy().copy()
                for key, value in opt.state[p].items():
                    if key != "step" and torch.is_tensor(value):
                        results[f"{name}/{s}/{key}/{i}"] = value.detach().numpy().copy()
        cases.append(
            {
                "name": name,
                "optimizer": cls_name,
                "defaults": {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()},
                "groups": [{"params": [0, 1], **group_opts[0]}, {"params": [2, 3], **group_opts[1]}],
                "state_keys": sorted(k for k in opt.state[params[0]] if k != "step"),
                "torch_group_keys": sorted(opt.param_groups[0].keys()),
            }
        )
    return results, cases


def run_clipping(rng: np.random.Generator) -> tuple:
    shapes = [(33, 17), (17,), (4, 5, 6)]
    base = [(rng.standard_normal(s) * sc).astype(np.float32) for s, sc in zip(shapes, (0.3, 2.0, 0.05))]
    arrays = {f"grad/{i}": g for i, g in enumerate(base)}
    cases = []
    for name, max_norm, norm_type in [
        ("l2_above", 1.0, 2.0),
        ("l2_below", 1e3, 2.0),
        ("inf_above", 0.5, math.inf),
        ("inf_below", 1e3, math.inf),
        ("l1_above", 2.0, 1.0),
        ("l3_above", 1.0, 3.0),
    ]:
        params = [torch.zeros(g.shape, requires_grad=True) for g in base]
        for p, g in zip(params, base):
            p.grad = torch.tensor(g)
        total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type, foreach=False)
        for i, p in enumerate(params):
            arrays[f"{name}/{i}"] = p.grad.numpy().copy()
        cases.append({"name": name, "max_norm": max_norm, "norm_type": "inf" if math.isinf(norm_type) else norm_type, "total_norm": float(total)})
    # Non-finite gradients: error_if_nonfinite raises before touching anything.
    nonfinite = []
    for name, bad in [("nan", math.nan), ("inf", math.inf)]:
        params = [torch.zeros(g.shape, requires_grad=True) for g in base]
        for p, g in zip(params, base):
            p.grad = torch.tensor(g)
        params[1].grad[3] = bad
        before = [p.grad.clone() for p in params]
        try:
            torch.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True, foreach=False)
            raised = False
        except RuntimeError:
            raised = True
        untouched = all(torch.equal(a.nan_to_num(), p.grad.nan_to_num()) for a, p in zip(before, params))
        total = torch.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=False, foreach=False)
        nonfinite.append({"name": name, "raised": raised, "untouched": untouched, "total_norm": repr(float(total))})
    # clip_grad_value_
    params = [torch.zeros(g.shape, requires_grad=True) for g in base]
    for p, g in zip(params, base):
        p.grad = torch.tensor(g)
    torch.nn.utils.clip_grad_value_(params, 0.25, foreach=False)
    for i, p in enumerate(params):
        arrays[f"value/{i}"] = p.grad.numpy().copy()
    return arrays, {"norm": cases, "nonfinite": nonfinite, "clip_value": 0.25}


# The LambdaLR functions (tests/test_lr_scheduler.py defines the same ones).
LAMBDAS = {
    "warmup": lambda e: min(1.0, (e + 1) / 5),
    "decay": lambda e: 0.95**e,
}

SCHEDULES = [
    ("lambda_warmup", "LambdaLR", {"lr_lambda": "warmup"}, "SGD", 12),
    ("lambda_two", "LambdaLR", {"lr_lambda": ["warmup", "decay"]}, "SGD", 12),
    ("step", "StepLR", {"step_size": 3, "gamma": 0.5}, "SGD", 12),
    ("linear_warmup", "LinearLR", {"start_factor": 0.1, "total_iters": 5}, "AdamW", 10),
    ("linear_decay", "LinearLR", {"start_factor": 1.0, "end_factor": 0.2, "total_iters": 7}, "SGD", 10),
    ("cosine", "CosineAnnealingLR", {"T_max": 10, "eta_min": 1e-4}, "AdamW", 35),
    ("cosine_zero_min", "CosineAnnealingLR", {"T_max": 7}, "SGD", 20),
    ("onecycle_adamw", "OneCycleLR", {"max_lr": 0.1, "total_steps": 20}, "AdamW", 19),
    ("onecycle_sgd_three_phase_linear", "OneCycleLR", {"max_lr": [0.1, 0.05], "total_steps": 16, "three_phase": True, "anneal_strategy": "linear"}, "SGD", 15),
    ("onecycle_epochs", "OneCycleLR", {"max_lr": 0.01, "epochs": 3, "steps_per_epoch": 4, "pct_start": 0.25, "cycle_momentum": False}, "AdamW", 11),
]


def run_schedulers() -> list:
    out = []
    for name, cls_name, kwargs, opt_name, steps in SCHEDULES:
        p0 = torch.zeros(3, requires_grad=True)
        p1 = torch.zeros(2, requires_grad=True)
        groups = [{"params": [p0], "lr": 0.1}, {"params": [p1], "lr": 0.02}]
        opt = torch.optim.SGD(groups, momentum=0.9) if opt_name == "SGD" else torch.optim.AdamW(groups)
        kw = dict(kwargs)
        if "lr_lambda" in kw:
            lam = kw["lr_lambda"]
            kw["lr_lambda"] = [LAMBDAS[x] for x in lam] if isinstance(lam, list) else LAMBDAS[lam]
        sched = getattr(torch.optim.lr_scheduler, cls_name)(opt, **kw)

        def snapshot():
            return {
                "lr": [float(x) for x in sched.get_last_lr()],
                "momentum": [float(g["betas"][0]) if "betas" in g else float(g["momentum"]) for g in opt.param_groups],
            }

        seq = [snapshot()]
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append(snapshot())
        out.append({"name": name, "scheduler": cls_name, "kwargs": kwargs, "optimizer": opt_name, "steps": steps, "values": seq})
    # Closed forms: step(epoch) jumps (deprecated in torch, still supported).
    closed = []
    for name, cls_name, kwargs, epochs in [
        ("step", "StepLR", {"step_size": 3, "gamma": 0.5}, [5, 9, 2]),
        ("cosine", "CosineAnnealingLR", {"T_max": 10, "eta_min": 1e-4}, [4, 13, 1]),
        ("linear", "LinearLR", {"start_factor": 0.1, "total_iters": 5}, [3, 8, 0]),
    ]:
        p0 = torch.zeros(3, requires_grad=True)
        opt = torch.optim.SGD([{"params": [p0], "lr": 0.1}])
        sched = getattr(torch.optim.lr_scheduler, cls_name)(opt, **kwargs)
        vals = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                opt.step()
                sched.step(e)
                vals.append(float(sched.get_last_lr()[0]))
        closed.append({"name": name, "scheduler": cls_name, "kwargs": kwargs, "epochs": epochs, "lr": vals})
    return out, closed


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(1)
    rng = np.random.default_rng(20240509)
    inputs = make_inputs(rng)
    results, cases = run_optimizers(inputs)
    np.savez_compressed(os.path.join(OUT, "optim.npz"), **inputs, **results)
    meta = {"torch": torch.__version__, "shapes": SHAPES, "steps": STEPS, "cases": cases}
    with open(os.path.join(OUT, "optim.json"), "w") as f:
        json.dump(meta, f, indent=1)
    clip_arrays, clip_meta = run_clipping(rng)
    np.savez_compressed(os.path.join(OUT, "clip.npz"), **clip_arrays)
    with open(os.path.join(OUT, "clip.json"), "w") as f:
        json.dump(dict(clip_meta, torch=torch.__version__), f, indent=1)
    sched, closed = run_schedulers()
    with open(os.path.join(OUT, "schedulers.json"), "w") as f:
        json.dump({"torch": torch.__version__, "schedules": sched, "closed_form": closed}, f, indent=1)
    print(f"wrote {OUT} with torch {torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
