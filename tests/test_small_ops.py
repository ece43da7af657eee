"""The small-op path (rust/src/py/fused.rs, ops/arith.py, linalg.matmul,
reduce.sum): one Rust call that checks, broadcasts, allocates and computes,
and a record built without apply(). It must give what the general path
gives: the same bits, the same records and gradients, the same errors, the
same ActivationScope behaviour. References: NumPy float32 (one IEEE
operation per element is the same on any IEEE machine), float64 for sums,
and the general path itself (forced through a shape the fast path does not
take) where the kernel's order is the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

import onemodel as om
from onemodel.ops import arith

RNG = np.random.default_rng(7)


def arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def bits(t) -> bytes:
    return np.ascontiguousarray(t.detach().numpy()).tobytes()


@pytest.mark.parametrize("op, ref", [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)])
@pytest.mark.parametrize("sa, sb", [((4, 4), (4, 4)), ((3, 1, 5), (4, 1)), ((), (2, 3)), ((6,), ())])
def test_binary_matches_numpy_float32(op, ref, sa, sb):
    a, b = arr(*sa), arr(*sb)
    out = getattr(om, op)(om.tensor(a), om.tensor(b))
    want = ref(a, b)
    assert out.shape == want.shape
    assert bits(out) == np.ascontiguousarray(want, dtype=np.float32).tobytes()


@pytest.mark.parametrize("scalar", [2.5, -3, 0.1, 10**20])
def test_python_numbers_round_to_float32_as_a_0d_tensor(scalar):
    a = arr(5)
    s = np.float32(float(scalar))
    assert bits(om.tensor(a) * scalar) == (a * s).tobytes()
    assert bits(scalar - om.tensor(a)) == (s - a).tobytes()


def test_strided_operands():
    a = arr(4, 6)
    ta = om.tensor(a)
    assert bits(ta.t() + ta.t()) == np.ascontiguousarray(a.T + a.T).tobytes()
    assert bits(ta[:, ::2] * 2.0) == np.ascontiguousarray(a[:, ::2] * np.float32(2)).tobytes()


def test_errors_are_the_general_paths():
    with pytest.raises(ValueError, match=r"add: shapes \(2,\) and \(3,\) cannot be broadcast"):
        om.tensor([1.0, 2.0]) + om.tensor([1.0, 2.0, 3.0])
    # An int64 operand is not the fast path's: the general path promotes it (torch).
    mixed = om.tensor([1, 2]) * om.tensor([1.5, 2.0])
    assert mixed.dtype == om.float32 and mixed.tolist() == [1.5, 4.0]
    with pytest.raises(TypeError, match="add: unsupported operand of type bool"):
        om.tensor([1.0]) + True
    with pytest.raises(TypeError, match="at least one operand must be a Tensor"):
        om.add(1.0, 2.0)
    with pytest.raises(ValueError, match="matmul"):
        om.ones(2, 3) @ om.ones(2, 3)
    with pytest.raises(TypeError, match="relu"):
        om.relu([1.0])


def test_recorded_gradients_with_broadcast_and_scalar():
    a, b = arr(3, 4), arr(4)
    ta, tb = om.tensor(a).requires_grad_(), om.tensor(b).requires_grad_()
    y = (ta * tb - 0.5) / 2.0
    assert y.grad_fn.name == "Div"
    assert y.grad_fn.next_functions[0].name == "Sub"
    y.sum().backward()
    # d/da = b / 2 (exact in float32); d/db = sum over rows of a / 2 (double sum).
    assert bits(ta.grad) == np.broadcast_to(b / np.float32(2), (3, 4)).tobytes()
    want_b = np.float32(np.sum((a / np.float32(2)).astype(np.float64), axis=0))
    np.testing.assert_array_equal(tb.grad.numpy(), want_b.astype(np.float32))


def test_fast_and_general_records_agree():
    """The same graph through the fast path and through apply() (which the
    fast path leaves to ops it does not cover) gives the same bits."""
    a, b = arr(5, 5), arr(5, 5)

    def grads(fast):
        ta, tb = om.tensor(a).requires_grad_(), om.tensor(b).requires_grad_()
        if fast:
            y = ((ta * tb).relu() @ tb + ta).sum()
        else:
            y = arith.Add.apply(om.matmul(arith.Relu.apply(arith.Mul.apply(ta, tb))[None], tb[None])[0], ta)
            y = y.sum(dim=(0, 1))
        y.backward()
        return bits(y), bits(ta.grad), bits(tb.grad)

    assert grads(True) == grads(False)


def test_relu_and_neg():
    a = arr(7)
    a[0] = 0.0
    assert bits(om.tensor(a).relu()) == np.maximum(a, 0).tobytes()
    assert bits(-om.tensor(a)) == (-a).tobytes()
    t = om.tensor(a).requires_grad_()
    t.relu().sum().backward()
    assert bits(t.grad) == (a > 0).astype(np.float32).tobytes()


def test_sum_all_is_the_double_chain():
    x = (arr(33, 3) * 1e3).astype(np.float32)
    got = om.tensor(x).sum().item()
    assert got == np.float32(math.fsum(x.astype(np.float64).ravel()))
    assert bits(om.tensor(x).sum()) == bits(om.tensor(x).sum(dim=(0, 1)))
    t = om.tensor(x).requires_grad_()
    s = t.sum()
    assert s.grad_fn.name == "Sum" and s.shape == ()
    s.backward()
    assert bits(t.grad) == np.ones_like(x).tobytes()


def test_int_sum_keeps_its_path():
    assert om.tensor([1, 2, 3]).sum().item() == 6


def test_matmul_2d_equals_the_batched_path():
    a, b = arr(16, 9), arr(9, 16)
    ta, tb = om.tensor(a).requires_grad_(), om.tensor(b).requires_grad_()
    y = ta @ tb
    assert y.grad_fn.name == "MatMul"
    assert bits(y) == bits(om.matmul(ta[None], tb[None])[0])
    np.testing.assert_allclose(y.detach().numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    g = arr(16, 16)
    y.backward(om.tensor(g))
    np.testing.assert_allclose(ta.grad.numpy(), g.astype(np.float64) @ b.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(tb.grad.numpy(), a.T.astype(np.float64) @ g, rtol=1e-5, atol=1e-5)


def test_outputs_belong_to_the_open_scope():
    a = om.tensor(arr(4))
    with om.ActivationScope() as scope:
        y, z, m, s = a + a, a.relu(), om.ones(2, 2) @ om.ones(2, 2), a.sum()
    assert scope.released >= 4
    for t in (y, z, m, s):
        with pytest.raises(RuntimeError, match="released"):
            t.numpy()
    w = a * 3.0  # no scope open: a plain output
    assert bits(w) == (a.numpy() * np.float32(3)).tobytes()


def test_no_grad_records_nothing():
    t = om.tensor(arr(3)).requires_grad_()
    with om.no_grad():
        for y in (t + t, t * 2.0, t.relu(), t.sum()):
            assert y.grad_fn is None and not y.requires_grad


def test_saved_input_modified_in_place_is_caught():
    t = om.tensor(arr(3)).requires_grad_()
    u = t * 1.0
    y = u * u
    with om.no_grad():
        u.add_(1.0)
    with pytest.raises(om.errors.TensorVersionError):
        y.sum().backward()
