"""Optimizer and scheduler cases shared by tools/surface_oracle.py (torch)
and tests/test_surface_optim.py (onemodel)."""

from __future__ import annotations

SHAPES = [(6, 5), (7,), (2, 3, 2), (1,)]
STEPS = 7

# name, class, defaults, per-group overrides (params 0-1 group 0, 2-3 group 1)
OPTIM_CASES = [
    ("adadelta", "Adadelta", {}, [{}, {"lr": 0.5}]),
    ("adadelta_wd_maximize", "Adadelta", {"rho": 0.8, "eps": 1e-5, "maximize": True}, [{"weight_decay": 0.1}, {}]),
    ("adagrad", "Adagrad", {"lr": 0.1}, [{}, {"lr": 0.01}]),
    ("adagrad_decay_init_wd", "Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.2}, [{"weight_decay": 0.05}, {"maximize": True}]),
    ("rmsprop", "RMSprop", {}, [{}, {"lr": 0.001}]),
    ("rmsprop_centered_momentum", "RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}, [{"weight_decay": 0.1}, {}]),
    ("rmsprop_alpha_maximize", "RMSprop", {"alpha": 0.9, "maximize": True, "momentum": 0.5}, [{}, {"eps": 1e-3}]),
    ("adamax", "Adamax", {}, [{}, {"lr": 0.01}]),
    ("adamax_wd_betas", "Adamax", {"betas": (0.8, 0.9), "maximize": True}, [{"weight_decay": 0.1}, {}]),
    ("nadam", "NAdam", {}, [{}, {"lr": 0.01}]),
    ("nadam_decoupled", "NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}, [{}, {"momentum_decay": 0.01}]),
    ("nadam_l2_maximize", "NAdam", {"lr": 0.01, "weight_decay": 0.05, "maximize": True}, [{}, {"betas": (0.7, 0.95)}]),
    ("radam", "RAdam", {}, [{}, {"lr": 0.01}]),
    ("radam_rectified", "RAdam", {"lr": 0.01, "betas": (0.9, 0.9)}, [{"weight_decay": 0.1}, {}]),
    ("radam_decoupled_maximize", "RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1, "decoupled_weight_decay": True,
                                           "maximize": True}, [{}, {"eps": 1e-4}]),
]

LAMBDAS = {
    "half_every_3": lambda e: 0.5 if e % 3 == 2 else 1.0,
    "decay": lambda e: 0.95,
}

# CyclicLR's custom amplitude scales, by name (kwargs["scale_fn"]).
SCALE_FNS = {
    "inverse": lambda x: 1.0 / (x + 1.0),
    "halving": lambda x: 0.5 ** x,
}

# name, scheduler, kwargs, optimizer, steps (and for the composites the children)
SCHEDULES = [
    ("multiplicative", "MultiplicativeLR", {"lr_lambda": "decay"}, "SGD", 10),
    ("multiplicative_two", "MultiplicativeLR", {"lr_lambda": ["half_every_3", "decay"]}, "SGD", 10),
    ("multistep", "MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}, "SGD", 12),
    ("constant", "ConstantLR", {"factor": 0.25, "total_iters": 4}, "AdamW", 8),
    ("exponential", "ExponentialLR", {"gamma": 0.9}, "SGD", 15),
    ("polynomial", "PolynomialLR", {"total_iters": 6, "power": 2.0}, "AdamW", 9),
    ("polynomial_linear", "PolynomialLR", {"total_iters": 4}, "SGD", 6),
    ("warm_restarts", "CosineAnnealingWarmRestarts", {"T_0": 4, "eta_min": 1e-3}, "SGD", 14),
    ("warm_restarts_mult", "CosineAnnealingWarmRestarts", {"T_0": 2, "T_mult": 2}, "AdamW", 16),
    ("sequential_warmup_cosine", "SequentialLR",
     {"schedulers": [("LinearLR", {"start_factor": 0.1, "total_iters": 3}), ("CosineAnnealingLR", {"T_max": 6})], "milestones": [3]}, "SGD", 12),
    ("sequential_three", "SequentialLR",
     {"schedulers": [("ConstantLR", {"factor": 0.5, "total_iters": 2}), ("ExponentialLR", {"gamma": 0.8}),
                     ("StepLR", {"step_size": 2, "gamma": 0.5})], "milestones": [2, 5]}, "AdamW", 10),
    ("chained", "ChainedScheduler",
     {"schedulers": [("ConstantLR", {"factor": 0.1, "total_iters": 2}), ("ExponentialLR", {"gamma": 0.9})]}, "SGD", 8),
    ("cyclic_triangular", "CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 4}, "SGD", 20),
    ("cyclic_triangular2_uneven", "CyclicLR",
     {"base_lr": [0.01, 0.002], "max_lr": [0.1, 0.05], "step_size_up": 3, "step_size_down": 5, "mode": "triangular2"}, "SGD", 26),
    ("cyclic_exp_range_adamw", "CyclicLR",
     {"base_lr": 0.001, "max_lr": 0.01, "step_size_up": 3, "mode": "exp_range", "gamma": 0.9, "base_momentum": 0.7,
      "max_momentum": 0.95}, "AdamW", 14),
    ("cyclic_no_momentum", "CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "cycle_momentum": False}, "SGD", 9),
    ("cyclic_scale_fn_iterations", "CyclicLR",
     {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "scale_fn": "inverse", "scale_mode": "iterations"}, "SGD", 12),
    ("cyclic_scale_fn_cycle", "CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "scale_fn": "halving"}, "AdamW", 12),
]

# ReduceLROnPlateau: metric sequences and kwargs
PLATEAU = [
    ("plateau_min", {"factor": 0.5, "patience": 2}, [1.0, 0.9, 0.95, 0.95, 0.96, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85]),
    ("plateau_max_abs_cooldown", {"mode": "max", "threshold": 0.1, "threshold_mode": "abs", "patience": 1, "cooldown": 2, "min_lr": [0.01, 0.001]},
     [0.1, 0.15, 0.16, 0.17, 0.3, 0.31, 0.32, 0.33, 0.34, 0.35, 0.36, 0.37]),
]


def build_schedule(lib, cls_name, kwargs, opt):
    """The scheduler (composites build their children first, as a program would)."""
    sched_mod = lib.optim.lr_scheduler
    kw = dict(kwargs)
    if "schedulers" in kw:
        kw["schedulers"] = [getattr(sched_mod, c)(opt, **k) for c, k in kw["schedulers"]]
        if cls_name == "ChainedScheduler":
            return sched_mod.ChainedScheduler(kw["schedulers"])
        return getattr(sched_mod, cls_name)(opt, **kw)
    if "scale_fn" in kw:
        kw["scale_fn"] = SCALE_FNS[kw["scale_fn"]]
    if "lr_lambda" in kw:
        lam = kw["lr_lambda"]
        kw["lr_lambda"] = [LAMBDAS[x] for x in lam] if isinstance(lam, list) else LAMBDAS[lam]
    return getattr(sched_mod, cls_name)(opt, **kw)


def momenta(opt):
    """Each group's momentum (SGD) or beta1 (Adam family): what CyclicLR
    and OneCycleLR cycle."""
    return [float(g["betas"][0]) if "betas" in g else float(g["momentum"]) for g in opt.param_groups]


def make_optimizer(lib, kind):
    p0 = lib.zeros(3, requires_grad=True)
    p1 = lib.zeros(2, requires_grad=True)
    groups = [{"params": [p0], "lr": 0.1}, {"params": [p1], "lr": 0.02}]
    return lib.optim.SGD(groups, momentum=0.9) if kind == "SGD" else lib.optim.AdamW(groups)
