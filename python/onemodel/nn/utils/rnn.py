"""Variable-length sequences (torch.nn.utils.rnn's names): PackedSequence,
pack_padded_sequence, pad_packed_sequence, pad_sequence, pack_sequence,
unpad_sequence, unpack_sequence.

A PackedSequence holds the time steps of a batch of sequences sorted by
decreasing length: ``data`` is step 0 of every sequence, then step 1 of the
sequences at least 2 long, …; ``batch_sizes[t]`` counts the sequences
longer than t. Packing and unpacking are differentiable (row selections
and concatenations).

The recurrent modules accept a PackedSequence: the sequences of each
length run together as one batch of that length (so each sequence, in
both directions, sees exactly its own steps), and the results are packed
back in the input's order. Initial and final states follow the input's
original batch order, as torch's do."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...creation import full, tensor as make_tensor
from ...ops.join import cat, stack
from ...tensor import Tensor, int64

__all__ = [
    "PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence", "unpad_sequence",
    "unpack_sequence", "invert_permutation",
]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self) -> "PackedSequence":
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    p = np.asarray(permutation.numpy() if isinstance(permutation, Tensor) else permutation, dtype=np.int64)
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=np.int64)
    return make_tensor(out)


def _select(x: Tensor, dim: int, indices) -> Tensor:
    """x's slices along dim at the given indices (differentiable)."""
    idx = [int(i) for i in indices]
    if idx == list(range(x.shape[dim])):
        return x
    parts = [x[i] if dim == 0 else x[:, i] for i in idx]
    return stack(parts, dim)


def _lengths(lengths) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.dtype is not int64:
            raise TypeError("lengths must be an int64 tensor or a list of ints")
        arr = lengths.numpy().reshape(-1).copy()
    else:
        arr = np.asarray(list(lengths), dtype=np.int64)
    return arr


def pack_padded_sequence(input, lengths, batch_first: bool = False, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch [T, B, *] ([B, T, *] with batch_first) whose
    sequence b has lengths[b] valid steps."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence: input must be a Tensor, got {type(input).__name__}")
    lens = _lengths(lengths)
    batch_dim = 0 if batch_first else 1
    if input.ndim < 2 or lens.size != input.shape[batch_dim]:
        raise ValueError(f"pack_padded_sequence: expected {input.shape[batch_dim] if input.ndim >= 2 else '?'} lengths for input of shape {tuple(input.shape)}, got {lens.size}")
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    t_dim = 1 - batch_dim
    if lens.size and lens.max() > input.shape[t_dim]:
        raise RuntimeError(f"pack_padded_sequence: a length ({lens.max()}) exceeds the input's {input.shape[t_dim]} time steps")
    if enforce_sorted:
        if np.any(lens[:-1] < lens[1:]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
                "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                "do not need ONNX exportability."
            )
        sorted_indices = None
        order = np.arange(lens.size)
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = make_tensor(order.astype(np.int64))
        input = _select(input, batch_dim, order)
        lens = lens[order]
    if batch_first:
        input = input.transpose(0, 1)
    steps = int(lens[0]) if lens.size else 0
    batch_sizes = np.array([(lens > t).sum() for t in range(steps)], dtype=np.int64)
    data = cat([input[t, : int(batch_sizes[t])] for t in range(steps)], 0)
    return PackedSequence(data, make_tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0, total_length=None):
    """(padded [T, B, *] or [B, T, *], lengths) in the original batch order."""
    data, batch_sizes = sequence.data, sequence.batch_sizes.numpy()
    steps = batch_sizes.size
    batch = int(batch_sizes[0]) if steps else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but got total_length={total_length} and max sequence length being {steps}")
        steps_out = total_length
    else:
        steps_out = steps
    feature = tuple(data.shape[1:])
    rows, offset = [], 0
    for t in range(steps_out):
        n = int(batch_sizes[t]) if t < steps else 0
        part = data[offset:offset + n] if n else None
        offset += n
        if n < batch:
            pad = full((batch - n,) + feature, float(padding_value))
            part = pad if part is None else cat([part, pad], 0)
        rows.append(part)
    padded = stack(rows, 0) if rows else full((0, batch) + feature, float(padding_value))
    lengths = np.array([(batch_sizes > b).sum() for b in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        order = sequence.unsorted_indices.numpy()
        padded = _select(padded, 1, order)
        lengths = lengths[order]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, make_tensor(lengths)


def pad_sequence(sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack tensors [L_i, *] into [max L, B, *] ([B, max L, *] with
    batch_first), padding with padding_value on the right (or left)."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0)) if hasattr(sequences, "unbind") else [sequences[i] for i in range(len(sequences))]
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: all sequences must have the same trailing shape, got {tuple(s.shape)} and {(None,) + trailing}")
    max_len = max(s.shape[0] for s in sequences)
    dt = sequences[0].dtype
    rows = []
    for s in sequences:
        n = max_len - s.shape[0]
        if n:
            pad = full((n,) + trailing, float(padding_value) if dt.is_floating_point else int(padding_value), dtype=dt)
            s = cat([s, pad], 0) if padding_side == "right" else cat([pad, s], 0)
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first: bool = False) -> list:
    lens = _lengths(lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, : int(n)] for b, n in enumerate(lens.tolist())]


def pack_sequence(sequences, enforce_sorted: bool = True) -> PackedSequence:
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def run_packed(module, packed: PackedSequence, hx):
    """A recurrent module over a PackedSequence: the sequences of each
    length run as one batch; returns (PackedSequence, states) as torch."""
    batch_sizes = packed.batch_sizes.numpy()
    steps = batch_sizes.size
    batch = int(batch_sizes[0]) if steps else 0
    # Sorted position j has length lens[j]; original index orig[j].
    lens = np.array([(batch_sizes > j).sum() for j in range(batch)], dtype=np.int64)
    orig = packed.sorted_indices.numpy() if packed.sorted_indices is not None else np.arange(batch)
    # Rows of data: step t, sorted position j < batch_sizes[t].
    starts = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)
    lstm = isinstance(hx, (tuple, list))
    outputs = {}  # sorted position -> [L_j, D*H] output rows
    finals = {}  # original index -> per-state [layers*dirs, H]
    for length in sorted(set(lens.tolist()), reverse=True):
        members = [j for j in range(batch) if lens[j] == length]
        seq = stack([stack([packed.data[int(starts[t]) + j] for t in range(length)], 0) for j in members], 1)
        group_hx = None
        if hx is not None:
            cols = [int(orig[j]) for j in members]
            states = hx if lstm else (hx,)
            chosen = tuple(_select(s, 1, cols) for s in states)
            group_hx = chosen if lstm else chosen[0]
        saved_bf = module.batch_first
        module.batch_first = False
        try:
            out, state = module._forward_tensor(seq, group_hx)
        finally:
            module.batch_first = saved_bf
        states_out = state if isinstance(state, tuple) else (state,)
        for k, j in enumerate(members):
            outputs[j] = out[:, k]
            finals[int(orig[j])] = tuple(s[:, k] for s in states_out)
    rows = [outputs[j][t] for t in range(steps) for j in range(int(batch_sizes[t]))]
    data = stack(rows, 0)
    n_states = len(next(iter(finals.values())))
    final = tuple(stack([finals[b][i] for b in range(batch)], 1) for i in range(n_states))
    result = PackedSequence(data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    return result, (final if len(final) == 2 else final[0])
