"""Module, container and state-dict behaviour against torch.

The structure cases (tests/surface_cases.py) are the same source that
tools/surface_oracle.py ran under torch 2.15: the printouts, the names of
every traversal, the state-dict keys and load_state_dict's messages must be
torch's (testdata/surface/structure.json), with torch's module name
replaced by onemodel's ("torch.float32" prints as "onemodel.float32",
"torch.Size([3, 2])" as "(3, 2)")."""

from __future__ import annotations

import copy
import json
import pickle
import re
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import onemodel as om
import onemodel.nn as nn
import surface_cases as cases

FIX = json.loads((Path(__file__).resolve().parent.parent / "testdata" / "surface" / "structure.json").read_text())


def _as_onemodel(text: str) -> str:
    """torch's strings with onemodel's module name and shape notation."""
    text = re.sub(r"torch\.Size\(\[([^\]]*)\]\)", lambda m: "(" + m.group(1) + ("," if m.group(1) and "," not in m.group(1) else "") + ")", text)
    return text.replace("torch.", "onemodel.")


@pytest.mark.parametrize("name", sorted(cases.STRUCTURE_CASES))
def test_structure_matches_torch(name):
    om.manual_seed(0)
    ours = cases.describe(cases.STRUCTURE_CASES[name](om))
    theirs = json.loads(_as_onemodel(json.dumps(FIX["cases"][name])))
    for key in theirs:
        assert ours[key] == theirs[key], f"{name}: {key}\nours:\n{ours[key]}\ntorch:\n{theirs[key]}"


def test_load_state_dict_reports_as_torch():
    ours = cases.load_errors(om)
    theirs = json.loads(_as_onemodel(json.dumps(FIX["load_errors"])))
    assert ours == theirs


# -- registration ----------------------------------------------------------------------------

def test_assignment_rules():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match="cannot assign 'onemodel.Tensor' as parameter 'weight'"):
        m.weight = om.zeros(3, 2)
    m.bias = None  # a parameter's name accepts None
    assert m.bias is None and "bias" in m._parameters
    seq = nn.Sequential(nn.ReLU())
    with pytest.raises(TypeError, match="as child module"):
        seq.__setattr__("0", 5)
    m.register_buffer("buf", om.zeros(2))
    m.buf = om.ones(2)  # replaces the buffer
    assert m._buffers["buf"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="as buffer 'buf'"):
        m.buf = 3
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("in_features", om.zeros(1))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nothing'"):
        m.nothing
    # A Parameter replaces an attribute of the same name and moves stores.
    m.in_features = nn.Parameter(om.zeros(1))
    assert "in_features" in m._parameters and "in_features" not in m.__dict__
    del m.in_features
    assert "in_features" not in m._parameters


def test_module_init_must_run_first():
    class Bad(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()


def test_buffer_object_and_non_persistent():
    m = nn.Module()
    m.mask = nn.Buffer(om.ones(3), persistent=False)
    m.count = nn.Buffer(om.zeros(1))
    assert [n for n, _ in m.named_buffers()] == ["mask", "count"]
    assert list(m.state_dict()) == ["count"]


def test_lookup_by_dotted_name():
    model = nn.Sequential(OrderedDict(enc=nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)), head=nn.Linear(2, 1)))
    assert model.get_submodule("enc.1") is model.enc[1]
    assert model.get_parameter("enc.0.bias") is model.enc[0].bias
    assert model.get_buffer("enc.1.running_mean") is model.enc[1].running_mean
    with pytest.raises(AttributeError, match="Sequential has no attribute `nope`"):
        model.get_submodule("enc.nope")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        model.get_submodule("head.weight")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        model.get_parameter("enc.1.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        model.get_buffer("head.weight")


def test_apply_visits_children_first_then_self():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh(), nn.Linear(2, 1)))
    seen = []
    assert model.apply(lambda m: seen.append(type(m).__name__)) is model
    assert seen == ["Linear", "Tanh", "Linear", "Sequential", "Sequential"]


def test_init_through_apply():
    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.5)
            nn.init.zeros_(m.bias)

    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1)).apply(init_weights)
    assert model[0].weight.detach().numpy().tolist() == [[0.5] * 3] * 2
    assert model[2].bias.tolist() == [0.0]


def test_train_eval_requires_grad_and_zero_grad():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert model.training and model[1].training
    assert model.eval() is model and not model[1].training
    model.train()
    assert model[1].training
    with pytest.raises(ValueError, match="boolean"):
        model.train("yes")
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_(True)
    model(om.ones(1, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert model[0].weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    model.zero_grad()
    assert model[0].weight.grad is None


def test_to_and_dtype_conversions():
    m = nn.Linear(2, 2)
    assert m.to("cpu") is m and m.to(om.device("cpu")) is m and m.to(om.float32) is m
    assert m.to(om.zeros(1)) is m and m.to("cpu", om.float32, non_blocking=True) is m
    assert m.cpu() is m and m.float() is m and m.type(om.float32) is m
    with pytest.raises(RuntimeError, match="CPU only"):
        m.to("cuda")
    with pytest.raises(RuntimeError, match="CPU only"):
        m.cuda()
    for bad in (m.double, m.half, m.bfloat16):
        with pytest.raises(TypeError, match="does not compute in"):
            bad()
    with pytest.raises(TypeError, match="floating point"):
        m.to(om.int64)


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0.0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1.0)
    out = m(om.ones(1, 2))
    assert calls == [(1, 2)]
    np.testing.assert_array_equal(out.detach().numpy(), (m.bias.detach().numpy() + 1.0)[None])
    h1.remove()
    with h2:
        pass  # leaving the block removes it
    assert not m._forward_hooks and not m._forward_pre_hooks
    m.register_forward_hook(lambda mod, args, kwargs, out: out * 0.0, with_kwargs=True)
    assert m(om.ones(1, 2)).tolist() == [[0.0, 0.0]]


def test_deepcopy_and_pickle_keep_values_and_ties():
    om.manual_seed(1)
    model = cases.STRUCTURE_CASES["tied"](om)
    clone = copy.deepcopy(model)
    assert clone.head.weight is clone.embed.weight and clone.head.weight is not model.head.weight
    for (n, a), (_, b) in zip(model.state_dict().items(), clone.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    seq = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    again = pickle.loads(pickle.dumps(seq))
    for (n, a), (_, b) in zip(seq.state_dict().items(), again.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
    assert isinstance(again[0].weight, nn.Parameter) and again[0].weight.requires_grad


def test_state_dict_is_detached_and_keep_vars_is_not():
    m = nn.Linear(2, 1)
    assert not m.state_dict()["weight"].requires_grad
    assert m.state_dict(keep_vars=True)["weight"] is m.weight
    assert list(m.state_dict(prefix="fc.")) == ["fc.weight", "fc.bias"]


def test_failed_load_changes_nothing_and_assign_replaces():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    before = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    bad = {k: om.zeros(v.shape) for k, v in m.state_dict().items()}
    bad["1.weight"] = om.zeros(2, 2)
    with pytest.raises(RuntimeError, match="size mismatch for 1.weight"):
        m.load_state_dict(bad)
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])  # torch would have copied 0.* already
    new = {k: om.full(v.shape, 2.0) for k, v in m.state_dict().items()}
    m.load_state_dict(new, assign=True)
    assert m[0].weight.tolist() == [[2.0, 2.0]] * 3 and isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad
    # NumPy arrays (a converted torch state dict) load too.
    m.load_state_dict({k: np.full(v.shape, 3.0, np.float32) for k, v in m.state_dict().items()})
    assert m[1].bias.tolist() == [3.0]
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([1, 2])


def test_extra_state_round_trips():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1, 1)
            self.note = "a"

        def get_extra_state(self):
            return {"note": self.note}

        def set_extra_state(self, state):
            self.note = state["note"]

    a, b = WithExtra(), WithExtra()
    a.note = "z"
    sd = a.state_dict()
    assert sd["_extra_state"] == {"note": "z"}
    b.load_state_dict(sd)
    assert b.note == "z"


# -- containers --------------------------------------------------------------------------------

def test_sequential_indexing_and_mutation():
    a, b, c = nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1)
    seq = nn.Sequential(a, b, c)
    assert seq[0] is a and seq[-1] is c and len(seq) == 3 and list(seq) == [a, b, c]
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and list(head) == [a, b]
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[0]
    assert [k for k, _ in seq.named_children()] == ["0", "1"]
    seq.insert(0, a)
    seq.append(nn.Identity())
    assert len(seq) == 4 and seq[0] is a
    combined = seq + nn.Sequential(nn.ReLU())
    assert len(combined) == 5
    assert len(nn.Sequential(b) * 3) == 3
    out = nn.Sequential(nn.Linear(2, 2), nn.ReLU())(om.ones(1, 2))
    assert out.shape == (1, 2)


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
    ml.append(nn.Tanh()).extend([nn.Identity()])
    ml.insert(1, nn.Sigmoid())
    assert [type(m).__name__ for m in ml] == ["Linear", "Sigmoid", "ReLU", "Tanh", "Identity"]
    del ml[1:3]
    assert [type(m).__name__ for m in ml] == ["Linear", "Tanh", "Identity"]
    assert isinstance(ml[-2:], nn.ModuleList) and len(ml[-2:]) == 2
    md = nn.ModuleDict([("b", nn.ReLU()), ("a", nn.Tanh())])
    assert list(md.keys()) == ["b", "a"] and "a" in md
    md.update({"c": nn.Identity()})
    assert isinstance(md.pop("b"), nn.ReLU) and len(md) == 2
    with pytest.raises(ValueError, match="has length 3"):
        md.update([("x", nn.ReLU(), 1)])


def test_parameter_list_and_dict():
    pl = nn.ParameterList([om.zeros(2), nn.Parameter(om.ones(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(om.zeros(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    with pytest.raises(RuntimeError, match="should not be called"):
        pl()
    pd = nn.ParameterDict({"w": om.zeros(2)})
    pd["v"] = om.ones(1)
    assert isinstance(pd["v"], nn.Parameter) and list(pd) == ["w", "v"]
    assert pd.get("missing") is None and pd.pop("w").shape == (2,)
    merged = pd | nn.ParameterDict({"u": om.zeros(1)})
    assert list(merged.keys()) == ["v", "u"]
