"""<< and >> on int64 tensors with torch's rules, the expected values
worked out by hand: a left shift wraps as unsigned 64-bit arithmetic and
gives 0 for a count below 0 or of 64 and more; a right shift is arithmetic
and gives the sign (0 or −1) for such counts."""

import numpy as np
import pytest

import onemodel as om

X = [5, -5, 1, -1, 2**62, -(2**62)]


def test_left_shift_wraps_and_clears_out_of_range():
    x = om.tensor(X)
    assert (x << 1).tolist() == [10, -10, 2, -2, -(2**63), -(2**63)]
    assert (x << 3).tolist() == [40, -40, 8, -8, 0, 0]
    assert (x << 63).tolist() == [-(2**63)] * 4 + [0, 0]
    for n in (64, 65, -1):
        assert (x << n).tolist() == [0] * 6


def test_right_shift_is_arithmetic_and_fills_the_sign_out_of_range():
    x = om.tensor(X)
    assert (x >> 1).tolist() == [2, -3, 0, -1, 2**61, -(2**61)]
    assert (x >> 3).tolist() == [0, -1, 0, -1, 2**59, -(2**59)]
    for n in (63, 64, 65, -1):
        assert (x >> n).tolist() == [0, -1, 0, -1, 0, -1]


def test_tensor_counts_reflected_operands_and_in_place():
    x = om.tensor(X)
    assert om.bitwise_left_shift(x, om.tensor([1, 2, 3, 4, 5, 6])).tolist() == [10, -20, 8, -16, 0, 0]
    assert x.bitwise_right_shift(2).tolist() == [1, -2, 0, -1, 2**60, -(2**60)]
    assert (3 << om.tensor([1, 2])).tolist() == [6, 12]
    assert (100 >> om.tensor([1, 2])).tolist() == [50, 25]
    assert (om.tensor([True, False]) << 1).tolist() == [2, 0]
    b = om.tensor([8])
    b <<= 2
    assert b.tolist() == [32]
    b >>= 1
    assert b.tolist() == [16]


@pytest.mark.parametrize("op", [lambda a: a << 1, lambda a: a >> 1, lambda a: om.tensor([4]) << a])
def test_float_operands_are_refused(op):
    with pytest.raises(TypeError, match="only int64"):
        op(om.tensor(np.array([1.5], np.float32)))
