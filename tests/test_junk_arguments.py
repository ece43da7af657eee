"""Junk where a tensor or an int belongs (issue 20, fuzz findings): each of
these raised AttributeError (a non-tensor input), OverflowError (an int past
int64) or hung before; each is now torch's kind of error naming the op.
tests/fuzz/properties.py's wrong_argument_kinds draws junk for them too."""

import numpy as np
import pytest

import onemodel as om
import onemodel.nn.functional as F

T = om.ones(2, 3)

NON_TENSOR = [
    ("chunk", lambda x: om.chunk(x, 2)), ("split", lambda x: om.split(x, 1)), ("flatten", om.flatten),
    ("flip", lambda x: om.flip(x, 0)), ("permute", lambda x: om.permute(x, (1, 0))), ("roll", lambda x: om.roll(x, 1)),
    ("squeeze", om.squeeze), ("unsqueeze", lambda x: om.unsqueeze(x, 0)),
    ("repeat_interleave", lambda x: om.repeat_interleave(x, 2)), ("tril", om.tril), ("triu", om.triu),
    ("pad", lambda x: F.pad(x, (1, 1))), ("unbind", om.unbind), ("t", om.t), ("reshape", lambda x: om.reshape(x, (-1,))),
    ("ravel", om.ravel), ("expand", lambda x: om.expand(x, (2, 3))), ("contiguous", om.contiguous), ("clone", om.clone),
    ("nonzero", om.nonzero), ("argwhere", om.argwhere), ("zeros_like", om.zeros_like), ("ones_like", om.ones_like),
    ("empty_like", om.empty_like), ("full_like", lambda x: om.full_like(x, 1.0)), ("rand_like", om.rand_like),
    ("randn_like", om.randn_like), ("randint_like", lambda x: om.randint_like(x, 3)), ("signbit", om.signbit),
    ("logical_not", om.logical_not), ("bitwise_not", om.bitwise_not), ("is_nonzero", om.is_nonzero),
    ("numel", om.numel), ("is_floating_point", om.is_floating_point), ("flipud", om.flipud), ("fliplr", om.fliplr),
    ("hsplit", lambda x: om.hsplit(x, 1)), ("slice_scatter", lambda x: om.slice_scatter(x, T)),
    ("masked_scatter", lambda x: om.masked_scatter(x, T > 0, T)), ("softmax2d", F.softmax2d),
    ("gumbel_softmax", F.gumbel_softmax), ("channel_shuffle", lambda x: F.channel_shuffle(x, 1)),
    # An operand after the first.
    ("view_as", lambda x: T.view_as(x)), ("reshape_as", lambda x: T.reshape_as(x)), ("expand_as", lambda x: T.expand_as(x)),
    ("type_as", lambda x: T.type_as(x)), ("masked_scatter", lambda x: om.masked_scatter(T, T > 0, x)),
    ("conv1d", lambda x: F.conv1d(om.ones(1, 1, 4), x)), ("conv_transpose1d", lambda x: F.conv_transpose1d(om.ones(1, 1, 4), x)),
    ("bilinear", lambda x: F.bilinear(T, T, x)), ("grid_sample", lambda x: F.grid_sample(om.ones(1, 1, 2, 2), x)),
]


@pytest.mark.parametrize("op, call", NON_TENSOR, ids=[f"{n}-{i}" for i, (n, _) in enumerate(NON_TENSOR)])
@pytest.mark.parametrize("junk", [None, "ab", ["a", "b"], [[1, [2]]], 3, float("nan"), {}])
def test_a_non_tensor_is_a_type_error_naming_the_op(op, call, junk):
    with pytest.raises(TypeError, match=rf"^{op}: \w+ must be a Tensor, got {type(junk).__name__}$"):
        call(junk)


@pytest.mark.parametrize("diagonal", [2**63, 2**70, -(2**70)])
def test_a_diagonal_past_int64_selects_as_the_farthest_diagonal(diagonal):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    a = om.tensor(x)
    np.testing.assert_array_equal(om.tril(a, diagonal).numpy(), np.tril(x, 5 if diagonal > 0 else -4))
    np.testing.assert_array_equal(om.triu(a, diagonal).numpy(), np.triu(x, 5 if diagonal > 0 else -4))
    with pytest.raises(TypeError, match="tril: diagonal must be an int"):
        om.tril(a, 1.5)


@pytest.mark.parametrize(
    "call, kind, message",
    [
        (lambda: om.randint(2**63), ValueError, "randint: the range"),
        (lambda: om.randint(-(2**64), 0, (2,)), ValueError, "randint: the range"),
        (lambda: om.zeros(2).random_(2**63), ValueError, "random_: the range"),
        (lambda: om.randperm(2**63), ValueError, "randperm"),
        (lambda: om.randperm(1.5), TypeError, "randperm: n must be an int"),
        (lambda: om.histc(T, 2**63), ValueError, "histc: bins"),
        (lambda: om.histc(T, 2.5), TypeError, "histc: bins must be an int"),
        (lambda: om.unravel_index(2**63, (3,)), ValueError, "unravel_index: index"),
        (lambda: om.unravel_index(om.tensor([1]), (2**70,)), ValueError, "unravel_index: shape"),
        (lambda: om.where(om.tensor([True]), 1, 2**63), ValueError, "where: the value"),
        (lambda: om.masked_fill(om.tensor([1, 2]), om.tensor([True, False]), -(2**63) - 1), ValueError, "masked_fill: the value"),
        # 2**63 sections were a loop of 2**63 steps (a hang).
        (lambda: om.tensor_split(T, 2**63), MemoryError, "tensor_split: 9223372036854775808 sections"),
    ],
)
def test_an_int_past_int64_is_refused_by_name(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


def test_the_int64_bounds_themselves_still_work():
    g = om.Generator().manual_seed(0)
    v = om.randint(-(2**63), 2**63 - 1, (50,), generator=g).numpy()
    assert v.dtype == np.int64 and v.min() < 0 < v.max()  # the full range, no wrap to one value
    assert om.where(om.tensor([True, False]), 2**63 - 1, -(2**63)).tolist() == [2**63 - 1, -(2**63)]
    assert sorted(om.randperm(6, generator=g).tolist()) == list(range(6))
    assert om.tensor_split(om.arange(3), 5)[4].numel() == 0
