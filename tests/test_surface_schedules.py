"""The schedulers added for the program surface against torch 2.15's
recorded rates (testdata/surface/schedules.json, tools/surface_oracle.py):
MultiplicativeLR, MultiStepLR, ConstantLR, ExponentialLR, PolynomialLR,
CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler, CyclicLR and
ReduceLROnPlateau, two parameter groups, step by step, rates and momenta
(SGD's momentum or AdamW's beta1, which CyclicLR cycles); the same doubles
(the test allows 1e-12 relative, as tests/test_lr_scheduler.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import onemodel as om
from surface_optim_cases import PLATEAU, SCHEDULES, build_schedule, make_optimizer, momenta

FIX = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "schedules.json").read_text())
RTOL = 1e-12


def _close(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs):
        assert abs(a - b) <= RTOL * abs(b), f"{what}: {a!r} vs torch {b!r}"


@pytest.mark.parametrize("case", SCHEDULES, ids=[c[0] for c in SCHEDULES])
def test_schedule_matches_torch(case):
    name, cls_name, kwargs, opt_name, steps = case
    recorded = next(c for c in FIX["schedules"] if c["name"] == name)
    expected, expected_momenta = recorded["values"], recorded["momenta"]
    opt = make_optimizer(om, opt_name)
    sched = build_schedule(om, cls_name, kwargs, opt)
    _close(sched.get_last_lr(), expected[0], f"{name} initial")
    _close(momenta(opt), expected_momenta[0], f"{name} initial momentum")
    for s in range(steps):
        opt.step()
        sched.step()
        _close(sched.get_last_lr(), expected[s + 1], f"{name} step {s + 1}")
        _close([g["lr"] for g in opt.param_groups], expected[s + 1], f"{name} step {s + 1} (groups)")
        _close(momenta(opt), expected_momenta[s + 1], f"{name} step {s + 1} (momentum or beta1)")


@pytest.mark.parametrize("case", PLATEAU, ids=[c[0] for c in PLATEAU])
def test_plateau_matches_torch(case):
    name, kwargs, metrics = case
    expected = next(c for c in FIX["plateau"] if c["name"] == name)["values"]
    opt = make_optimizer(om, "SGD")
    sched = om.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
    for m, want in zip(metrics, expected):
        opt.step()
        sched.step(om.tensor(m))
        _close([g["lr"] for g in opt.param_groups], want, f"{name} metric {m}")
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]


def test_composite_state_dict_round_trip():
    opt = make_optimizer(om, "SGD")
    kwargs = dict(SCHEDULES[9][2])
    sched = build_schedule(om, "SequentialLR", kwargs, opt)
    for _ in range(4):
        opt.step()
        sched.step()
    state = sched.state_dict()
    # Resume as a program does: build both, then load the optimizer's and the
    # scheduler's state.
    opt2 = make_optimizer(om, "SGD")
    sched2 = build_schedule(om, "SequentialLR", kwargs, opt2)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(state)
    for _ in range(5):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()


def test_bad_arguments_raise_as_torch():
    opt = make_optimizer(om, "SGD")
    sch = om.optim.lr_scheduler
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        sch.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ValueError, match="positive integer T_0"):
        sch.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        sch.SequentialLR(opt, [sch.ConstantLR(opt)], milestones=[1])
    with pytest.raises(ValueError, match="between 0 and 1"):
        sch.ConstantLR(opt, factor=2.0)


def test_cyclic_state_dict_round_trip_and_pickles():
    import pickle

    for kwargs in ({"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 3, "mode": "exp_range", "gamma": 0.9},
                   {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2, "scale_fn": lambda x: 0.5 ** x}):
        opt = make_optimizer(om, "SGD")
        sched = om.optim.lr_scheduler.CyclicLR(opt, **kwargs)
        for _ in range(4):
            opt.step()
            sched.step()
        state = pickle.loads(pickle.dumps(sched.state_dict()))
        assert "_scale_fn_ref" not in state and state["_scale_fn_custom"] is None
        opt2 = make_optimizer(om, "SGD")
        sched2 = om.optim.lr_scheduler.CyclicLR(opt2, **kwargs)
        opt2.load_state_dict(opt.state_dict())
        sched2.load_state_dict(state)
        for _ in range(6):
            for o, s in ((opt, sched), (opt2, sched2)):
                o.step()
                s.step()
            assert sched.get_last_lr() == sched2.get_last_lr()
            assert momenta(opt) == momenta(opt2)


def test_cyclic_bad_arguments_raise_as_torch():
    sch = om.optim.lr_scheduler
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        sch.CyclicLR(make_optimizer(om, "SGD"), 0.01, 0.1, mode="sawtooth")
    p = om.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sch.CyclicLR(om.optim.Adagrad([p]), 0.01, 0.1)
    with pytest.raises(ValueError, match="base_lr must have the same length"):
        sch.CyclicLR(make_optimizer(om, "SGD"), [0.01], 0.1)
