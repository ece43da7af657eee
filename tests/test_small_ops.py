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


# ---------------------------------------------------------------------------
# The contiguous case of + - * / (fused.rs binary_flat): no views, no walk
# ---------------------------------------------------------------------------

from onemodel import _core  # noqa: E402
from onemodel._kernels import expand_to  # noqa: E402

OPS = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)]
PATHS = ["scalar", "v128", "avx2", "avx512"]


def special(n):
    """Normals mixed with NaNs (payloads and signs), infinities, signed
    zeros, subnormals and values whose product overflows."""
    x = arr(n) * np.float32(1e3)
    pool = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7F800000, 0xFF800000, 0x00000000,
                     0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF], dtype=np.uint32).view(np.float32)
    idx = RNG.integers(0, n, size=max(1, n // 3))
    x[idx] = pool[RNG.integers(0, len(pool), size=len(idx))]
    return x


def general(op, a, b, shape):
    """The strided binding into a preallocated output: the general path."""
    out = om.empty(*shape)
    ta = a if isinstance(a, om.Tensor) else om.tensor(np.float32(a))
    tb = b if isinstance(b, om.Tensor) else om.tensor(np.float32(b))
    _core.binary(op, out, expand_to(ta, shape, op), expand_to(tb, shape, op))
    return out


def same(x, y, mode) -> bool:
    """Bit for bit; in fast mode a NaN matches any NaN, because there the
    kernels leave NaN payloads to the hardware and the compiler (which may
    swap the operands of a commutative add or multiply, and x86 keeps the
    first operand's payload): kernels/elementwise.rs says so. Exact mode
    writes the canonical NaN, so there every bit is compared."""
    x, y = x.detach().numpy(), y.detach().numpy()
    if x.shape != y.shape:
        return False
    if mode == "fast":
        nan = np.isnan(x)
        if not np.array_equal(nan, np.isnan(y)):
            return False
        x, y = np.where(nan, 0, x), np.where(nan, 0, y)
    return np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()


def each_path():
    for name in PATHS:
        try:
            with om.compute.kernel_path_scope(name):
                yield name
        except RuntimeError as e:  # this CPU lacks the path
            assert "requires" in str(e) or name in str(e)


@pytest.mark.parametrize("mode", ["fast", "exact"])
@pytest.mark.parametrize("op, ref", OPS)
def test_contiguous_case_equals_the_general_path_on_every_kernel_path(mode, op, ref):
    # Lengths around every lane width (4, 8, 16) and past the size where
    # the GIL is released.
    ran = []
    for path in each_path():
        ran.append(path)
        with om.compute.mode(mode):
            for n in (1, 3, 4, 7, 8, 15, 16, 17, 33, 100, 20000):
                a, b = om.tensor(special(n)), om.tensor(special(n))
                assert same(getattr(om, op)(a, b), general(op, a, b, (n,)), mode), (path, n)
                for s in (2.5, -0.0, float("nan"), 1e-45):
                    assert same(getattr(om, op)(a, s), general(op, a, s, (n,)), mode), (path, n, s)
                    assert same(getattr(om, op)(s, a), general(op, s, a, (n,)), mode), (path, n, s)
    assert "scalar" in ran


@pytest.mark.parametrize("op, ref", OPS)
def test_contiguous_case_matches_numpy_float32(op, ref):
    a, b = arr(3, 5, 7), arr(3, 5, 7)
    with np.errstate(all="ignore"):
        assert bits(getattr(om, op)(om.tensor(a), om.tensor(b))) == ref(a, b).tobytes()
        # A one-element operand (0-d or of fewer or equal dimensions) broadcast.
        for one in (arr(), arr(1), arr(1, 1, 1)):
            got = getattr(om, op)(om.tensor(a), om.tensor(one))
            assert got.shape == (3, 5, 7) and bits(got) == ref(a, one).tobytes()
            got = getattr(om, op)(om.tensor(one), om.tensor(a))
            assert bits(got) == ref(one, a).tobytes()


def test_layouts_the_contiguous_case_leaves_to_the_strided_path():
    a = arr(4, 6)
    ta = om.tensor(a)
    # Transposed, sliced with a step, a column (non-canonical strides), an
    # offset view (contiguous: the contiguous case, reading from its offset),
    # a one-element operand of more dimensions than the other.
    cases = [
        (ta.t(), ta.t(), a.T, a.T),
        (ta[:, ::2], ta[:, 1::2], a[:, ::2], a[:, 1::2]),
        (ta[:, 2:3], ta[:, 3:4], a[:, 2:3], a[:, 3:4]),
        (ta[1:], ta[:3], a[1:], a[:3]),
        (ta, om.tensor(arr(1, 1, 1)), a, None),
    ]
    for x, y, xa, ya in cases:
        ya = y.numpy() if ya is None else ya
        want = np.ascontiguousarray(xa * ya)
        got = x * y
        assert got.shape == want.shape and got.stride() == om.empty(*want.shape).stride()
        assert bits(got) == want.tobytes()


def test_result_is_a_new_contiguous_tensor():
    ta, tb = om.tensor(arr(2, 3)), om.tensor(arr(2, 3))
    for y in (ta + tb, ta * 2.0, 3 - ta):
        assert y.shape == (2, 3) and y.stride() == (3, 1) and y.is_contiguous()
        assert y.data_ptr() != ta.data_ptr()
    before = bits(ta)
    y = ta + tb
    y.add_(1.0)  # writing the result leaves the operand alone
    assert bits(ta) == before


def test_int64_and_bool_operands_take_the_general_path():
    f = om.tensor([1.5, -2.0])
    assert (f + om.tensor([1, 2])).tolist() == [2.5, 0.0]
    assert (om.tensor([3, 4]) * om.tensor(2)).dtype == om.int64
    assert (om.tensor([3, 4]) * om.tensor(2)).tolist() == [6, 8]
    assert (f * om.tensor([True, False])).tolist() == [1.5, -0.0]


def test_in_place_ops_are_not_the_contiguous_case():
    a = arr(9)
    t = om.tensor(a)
    ptr = t.data_ptr()
    t += om.tensor(a)
    t *= 2.0
    assert t.data_ptr() == ptr
    assert bits(t) == ((a + a) * np.float32(2)).tobytes()


def test_contiguous_case_records_and_gradients():
    a, b = arr(4, 4), arr(4, 4)
    ta, tb = om.tensor(a).requires_grad_(), om.tensor(b).requires_grad_()
    y = (ta * tb + 1.0) / tb
    assert y.grad_fn.name == "Div" and y.grad_fn.next_functions[0].name == "Add"
    y.backward(om.ones(4, 4))
    # d/da = b * (1 / b) per element: the two float32 operations.
    g = np.ones((4, 4), np.float32) / b
    assert bits(ta.grad) == (g * b).tobytes()
    with om.no_grad():
        assert (ta + tb).grad_fn is None
