"""Bad input: clear errors naming the op and the shapes, nothing written."""

import pytest

import onemodel as om


def test_broadcast_errors_name_op_and_shapes():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\)"):
        om.ones(2, 3) + om.ones(4)
    with pytest.raises(ValueError, match=r"mul: shapes"):
        om.ones(2) * om.ones(3)


def test_matmul_and_linear_shape_errors():
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) and \(4, 5\)"):
        om.ones(2, 3) @ om.ones(4, 5)
    with pytest.raises(ValueError, match="at least 1 dimension"):
        om.matmul(om.tensor(1.0), om.ones(2))
    with pytest.raises(ValueError, match="matmul: shapes"):
        om.ones(2, 2, 3) @ om.ones(3, 3, 2)
    with pytest.raises(ValueError, match=r"linear: input of shape \(2, 3\)"):
        om.functional.linear(om.ones(2, 3), om.ones(4, 5))
    with pytest.raises(ValueError, match="linear: bias"):
        om.functional.linear(om.ones(2, 3), om.ones(4, 3), om.ones(5))
    with pytest.raises(ValueError, match="linear: weight must be 2-D"):
        om.functional.linear(om.ones(2, 3), om.ones(3))


def test_type_errors():
    with pytest.raises(TypeError, match="add: unsupported operand"):
        om.ones(2) + "x"
    # int64 + float promotes to float32 as in torch (tests/math_cases.py);
    # an activation of an int64 tensor is still refused, as torch refuses it.
    with pytest.raises(TypeError, match="float32"):
        om.nn.functional.leaky_relu(om.tensor([1, 2]))
    with pytest.raises(TypeError, match="matmul: expected float32"):
        om.matmul(om.tensor([1, 2]), om.tensor([1, 2]))
    with pytest.raises(TypeError, match="sum: expected a Tensor"):
        om.sum([1.0, 2.0])


def test_dimension_errors():
    t = om.ones(2, 3)
    with pytest.raises(IndexError, match="sum: dimension 2 is out of range"):
        t.sum(2)
    with pytest.raises(ValueError, match="permute"):
        t.permute(0, 0)
    with pytest.raises(ValueError, match="permute"):
        t.permute(0)
    with pytest.raises(IndexError, match="transpose"):
        t.transpose(0, 5)
    with pytest.raises(ValueError, match="sum: dimension repeated"):
        t.sum((0, -2))


def test_in_place_errors_write_nothing():
    t = om.ones(2, 3)
    with pytest.raises(ValueError, match=r"add_: the result of shape \(4, 2, 3\)"):
        t.add_(om.ones(4, 1, 1))
    with pytest.raises(ValueError, match="add_: shapes"):
        t.add_(om.ones(5))
    assert t.tolist() == [[1.0] * 3] * 2
    assert t._version == 0
    with pytest.raises(ValueError, match="copy_"):
        t.copy_(om.ones(3, 3))
    assert t._version == 0


def test_setitem_errors():
    t = om.ones(3)
    with pytest.raises(ValueError, match="cannot be expanded"):
        t[0:2] = om.ones(3)
    with pytest.raises(IndexError, match="out of bounds for dimension 0 with size 3"):
        t[[0, 3]] = 2.0
    with pytest.raises(ValueError, match="cannot be broadcast"):
        t[om.tensor([True, False, True])] = om.ones(3)
    assert t.tolist() == [1.0, 1.0, 1.0]
    t[0:1] = om.tensor([2])  # as torch: the value is cast to the tensor's dtype
    assert t.tolist() == [2.0, 1.0, 1.0]


def test_backward_argument_errors():
    with pytest.raises(RuntimeError, match="does not require grad"):
        om.ones(1).backward()
    x = om.ones(1, requires_grad=True)
    with pytest.raises(TypeError, match="gradient must be a Tensor"):
        (x * 2).backward([1.0])
