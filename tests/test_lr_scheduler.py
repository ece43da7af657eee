"""onemodel.optim.lr_scheduler against torch's recorded values
(testdata/optim/schedulers.json, written by tools/optim_oracle.py): the
rates (and OneCycleLR's momenta) after construction and after every step,
two parameter groups, relative error at most 1e-12."""

import json
import math
import os

import numpy as np
import pytest

import onemodel as om

DATA = os.path.join(os.path.dirname(__file__), "..", "testdata", "optim")
with open(os.path.join(DATA, "schedulers.json")) as _f:
    FIX = json.load(_f)

# The same functions as tools/optim_oracle.py's LAMBDAS.
LAMBDAS = {
    "warmup": lambda e: min(1.0, (e + 1) / 5),
    "decay": lambda e: 0.95**e,
}
RTOL = 1e-12


def _optimizer(kind):
    p0 = om.zeros(3, requires_grad=True)
    p1 = om.zeros(2, requires_grad=True)
    groups = [{"params": [p0], "lr": 0.1}, {"params": [p1], "lr": 0.02}]
    opt = om.optim.SGD(groups, momentum=0.9) if kind == "SGD" else om.optim.AdamW(groups)
    return opt, (p0, p1)


def _kwargs(kwargs):
    kw = dict(kwargs)
    if "lr_lambda" in kw:
        lam = kw["lr_lambda"]
        kw["lr_lambda"] = [LAMBDAS[x] for x in lam] if isinstance(lam, list) else LAMBDAS[lam]
    return kw


def _snapshot(sched, opt):
    return {
        "lr": list(sched.get_last_lr()),
        "momentum": [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups],
    }


def _close(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs):
        assert abs(a - b) <= RTOL * abs(b), f"{what}: {a!r} vs torch {b!r}"


@pytest.mark.parametrize("case", FIX["schedules"], ids=lambda c: c["name"])
def test_schedule_matches_torch(case):
    opt, params = _optimizer(case["optimizer"])
    sched = getattr(om.optim.lr_scheduler, case["scheduler"])(opt, **_kwargs(case["kwargs"]))
    seq = [_snapshot(sched, opt)]
    for _ in range(case["steps"]):
        for p in params:
            p.grad = om.ones_like(p)
        opt.step()
        sched.step()
        seq.append(_snapshot(sched, opt))
    for k, (ours, theirs) in enumerate(zip(seq, case["values"])):
        _close(ours["lr"], theirs["lr"], f"{case['name']} step {k} lr")
        _close(ours["momentum"], theirs["momentum"], f"{case['name']} step {k} momentum")
    # The groups' rates are what the scheduler reports.
    assert [g["lr"] for g in opt.param_groups] == sched.get_last_lr()


@pytest.mark.parametrize("case", FIX["closed_form"], ids=lambda c: c["name"])
def test_step_with_epoch_uses_torch_closed_form(case):
    p = om.zeros(3, requires_grad=True)
    opt = om.optim.SGD([{"params": [p], "lr": 0.1}])
    sched = getattr(om.optim.lr_scheduler, case["scheduler"])(opt, **case["kwargs"])
    got = []
    for e in case["epochs"]:
        sched.step(e)
        got.append(sched.get_last_lr()[0])
    _close(got, case["lr"], case["name"])


def test_closed_forms_by_hand():
    """Independent of torch: StepLR and LinearLR closed forms evaluated here."""
    p = om.zeros(1, requires_grad=True)
    opt = om.optim.SGD([p], lr=1.0)
    s = om.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(6):
        s.step()
        lrs.append(s.get_last_lr()[0])
    assert lrs == [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]
    opt = om.optim.SGD([p], lr=1.0)
    w = om.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    vals = [w.get_last_lr()[0]]
    for _ in range(5):
        w.step()
        vals.append(w.get_last_lr()[0])
    np.testing.assert_allclose(vals, [0.25, 0.5, 0.75, 1.0, 1.0, 1.0], rtol=1e-15)
    opt = om.optim.SGD([p], lr=1.0)
    c = om.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.0)
    vals = [c.get_last_lr()[0]]
    for _ in range(4):
        c.step()
        vals.append(c.get_last_lr()[0])
    want = [0.5 * (1 + math.cos(math.pi * t / 4)) for t in range(5)]
    np.testing.assert_allclose(vals, want, rtol=1e-12, atol=1e-16)


def test_state_dict_round_trip_continues_identically():
    def make():
        opt, params = _optimizer("AdamW")
        return opt, om.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=30)

    opt_a, sched_a = make()
    for _ in range(29):
        sched_a.step()
    opt_b, sched_b = make()
    for _ in range(12):
        sched_b.step()
    saved_sched = sched_b.state_dict()
    saved_opt = opt_b.state_dict()
    opt_c, sched_c = make()
    opt_c.load_state_dict(saved_opt)
    sched_c.load_state_dict(saved_sched)
    for _ in range(12, 29):
        sched_c.step()
    assert sched_c.get_last_lr() == sched_a.get_last_lr()
    assert [g["betas"] for g in opt_c.param_groups] == [g["betas"] for g in opt_a.param_groups]


def test_lambda_state_dict_skips_plain_functions():
    opt, _ = _optimizer("SGD")

    class Rate:
        def __init__(self):
            self.factor = 0.5

        def __call__(self, e):
            return self.factor**e

    rate = Rate()
    s = om.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, rate])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [None, {"factor": 0.5}]
    rate.factor = 0.1
    s.load_state_dict(sd)
    assert rate.factor == 0.5


def test_bad_arguments():
    opt, _ = _optimizer("SGD")
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.LinearLR(opt, start_factor=0.0)
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.LinearLR(opt, end_factor=1.5)
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0])
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError):
        om.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.1], total_steps=10)
    with pytest.raises(TypeError):
        om.optim.lr_scheduler.StepLR(object(), step_size=1)
    with pytest.raises(KeyError):
        om.optim.lr_scheduler.StepLR(om.optim.SGD([om.zeros(1, requires_grad=True)]), step_size=1, last_epoch=3)
    s = om.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=3)
    s.step()
    s.step()
    s.step()
    with pytest.raises(ValueError, match="total steps"):
        s.step()
