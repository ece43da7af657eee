"""onemodel.nn.utils: pad_sequence, pack/unpack round trips and
parameters_to_vector / vector_to_parameters (torch's semantics, derived by
hand; the recurrent layers over packed batches are compared with torch in
tests/test_surface_layers.py)."""

from __future__ import annotations

import numpy as np
import pytest

import onemodel as om
from onemodel.nn.utils import parameters_to_vector, vector_to_parameters
from onemodel.nn.utils import rnn


def test_pad_sequence():
    a, b = om.tensor([[1.0], [2.0], [3.0]]), om.tensor([[4.0]])
    out = rnn.pad_sequence([a, b], padding_value=-1.0)
    assert out.shape == (3, 2, 1) and out[:, 1, 0].tolist() == [4.0, -1.0, -1.0]
    out = rnn.pad_sequence([a, b], batch_first=True, padding_side="left")
    assert out[1, :, 0].tolist() == [0.0, 0.0, 4.0]
    ints = rnn.pad_sequence([om.tensor([1, 2]), om.tensor([3])], batch_first=True, padding_value=9)
    assert ints.dtype is om.int64 and ints.tolist() == [[1, 2], [3, 9]]


def test_pack_unpack_round_trip_and_gradients():
    x = om.tensor(np.arange(24, dtype=np.float32).reshape(4, 3, 2), requires_grad=True)
    packed = rnn.pack_padded_sequence(x, om.tensor([2, 4, 1]), enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 0, 2] and packed.unsorted_indices.tolist() == [1, 0, 2]
    padded, lengths = rnn.pad_packed_sequence(packed)
    assert lengths.tolist() == [2, 4, 1]
    expect = x.detach().numpy().copy()
    expect[2:, 0] = 0
    expect[1:, 2] = 0
    np.testing.assert_array_equal(padded.detach().numpy(), expect)
    padded.sum().backward()
    assert x.grad.numpy().sum() == 2 * (2 + 4 + 1)
    seqs = rnn.unpack_sequence(rnn.pack_sequence([om.ones(3, 2), om.ones(1, 2)]))
    assert [tuple(s.shape) for s in seqs] == [(3, 2), (1, 2)]
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [1, 2, 3])


def test_parameters_to_vector_and_back():
    m = om.nn.Linear(3, 2)
    v = parameters_to_vector(m.parameters())
    assert v.shape == (8,) and v[:6].tolist() == m.weight.detach().numpy().reshape(-1).tolist()
    vector_to_parameters(om.arange(8).float(), m.parameters())
    assert m.bias.tolist() == [6.0, 7.0] and m.weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(ValueError, match="8 parameter values"):
        vector_to_parameters(om.zeros(7), m.parameters())
