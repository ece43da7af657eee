"""Devices and dtypes as torch programs name them: the CPU is accepted
everywhere a device is, every other device is a clear error, and the dtypes
onemodel does not compute in exist but refuse to make tensors."""

import pickle

import numpy as np
import pytest

import onemodel as om


def test_device_objects_behave_as_torch():
    d = om.device("cpu")
    assert d.type == "cpu" and d.index is None
    assert str(d) == "cpu" and repr(d) == "device(type='cpu')"
    assert om.device("cpu:0").index == 0 and str(om.device("cpu", 0)) == "cpu:0"
    assert d == "cpu" and d == om.device(d) and d != "cpu:1"
    assert hash(d) == hash(om.device("cpu"))
    assert pickle.loads(pickle.dumps(om.device("cpu:0"))) == om.device("cpu:0")
    assert om.zeros(2).device == d and om.zeros(2).is_cuda is False


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "mps", "xpu", "meta"])
def test_other_devices_say_onemodel_is_cpu_only(name):
    with pytest.raises(RuntimeError, match="CPU only"):
        om.device(name)
    with pytest.raises(RuntimeError, match="zeros:.*CPU only"):
        om.zeros(3, device=name)
    with pytest.raises(RuntimeError, match="to:.*CPU only"):
        om.ones(2).to(name)


def test_bad_device_arguments():
    with pytest.raises(RuntimeError, match="unknown device type"):
        om.device("gpu")
    with pytest.raises(TypeError):
        om.device(3.0)
    with pytest.raises(RuntimeError, match="CUDA"):
        om.device(0)


@pytest.mark.parametrize(
    "make",
    [
        lambda d: om.zeros(2, 3, device=d),
        lambda d: om.ones((2,), device=d),
        lambda d: om.empty(2, device=d),
        lambda d: om.full((2,), 1.5, device=d),
        lambda d: om.tensor([1.0], device=d),
        lambda d: om.as_tensor([1.0], device=d),
        lambda d: om.arange(3, device=d),
        lambda d: om.randn(2, device=d),
        lambda d: om.rand(2, device=d),
        lambda d: om.randint(0, 3, (2,), device=d),
        lambda d: om.randperm(3, device=d),
        lambda d: om.eye(2, device=d),
        lambda d: om.zeros_like(om.ones(2), device=d),
    ],
)
def test_creation_takes_a_cpu_device(make):
    for d in ("cpu", om.device("cpu"), None):
        assert make(d).device == "cpu"
    with pytest.raises(RuntimeError, match="CPU only"):
        make("cuda")


def test_tensor_to_forms():
    x = om.tensor([1.5, -2.0])
    assert x.to("cpu") is x and x.to(om.device("cpu")) is x and x.cpu() is x
    assert x.to(om.float32) is x
    y = x.to(om.int64)
    assert y.dtype == om.int64 and y.tolist() == [1, -2]
    z = x.to("cpu", om.int64)
    assert z.dtype == om.int64
    z = x.to(device="cpu", dtype=om.int64, non_blocking=True)
    assert z.dtype == om.int64
    other = om.tensor([3])
    assert x.to(other).dtype == om.int64
    c = x.to(om.float32, copy=True)
    assert c is not x and c.tolist() == x.tolist()
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.to(devise="cpu")


@pytest.mark.parametrize("dt", [om.float16, om.bfloat16, om.float64, om.int32, om.int16, om.int8, om.uint8, om.complex64])
def test_dtypes_onemodel_does_not_compute_in_exist_and_refuse(dt):
    assert dt == dt and repr(dt).startswith("onemodel.")
    with pytest.raises(TypeError, match=f"does not compute in {dt.name}"):
        om.zeros(2, dtype=dt)
    with pytest.raises(TypeError, match="to:.*does not compute"):
        om.ones(2).to(dt)
    assert om.ones(2).dtype != dt


def test_dtype_aliases():
    assert om.double is om.float64 and om.half is om.float16 and om.int is om.int32
    assert om.long is om.int64 and om.float is om.float32 and om.short is om.int16
    with pytest.raises(TypeError, match="float64"):
        om.tensor(np.zeros(2), dtype=np.float64)


def test_star_import_keeps_builtins():
    ns = {}
    exec("from onemodel import *", ns)
    assert "int" not in ns and "float" not in ns and "tensor" in ns


def test_randint_two_argument_form():
    g = om.Generator().manual_seed(3)
    t = om.randint(5, (4, 2), generator=g)
    assert t.shape == (4, 2) and t.dtype == om.int64
    assert 0 <= t.numpy().min() and t.numpy().max() < 5
