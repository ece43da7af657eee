"""Samplers (torch.utils.data's): the order in which a DataLoader visits a
map-style dataset.

Random samplers draw from onemodel's counter-based generator, so an order
is a function of the seed only (the same on every machine). As torch's,
a RandomSampler without a generator draws a fresh seed from the default
generator at the start of each pass; its values differ from torch's for
the same seed (docs/porting.md)."""

from __future__ import annotations

import numpy as np

from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"]


def _seed_from(generator) -> int:
    """One 63-bit draw from ``generator`` (the default one when None)."""
    from ...creation import default_generator

    return int((generator or default_generator)._g.randint(0, 2**63 - 1))


class Sampler:
    """Base of samplers: ``__iter__`` yields indices (or batches of them)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation per pass (or, with replacement, uniform draws);
    ``num_samples`` may exceed the dataset's size (whole permutations, then
    the head of one more)."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or isinstance(self.num_samples, bool) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        from ...creation import Generator, randint, randperm

        n = len(self.data_source)
        if self.generator is None:
            generator = Generator()
            generator.manual_seed(_seed_from(None))
        else:
            generator = self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new one each pass)."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        from ...creation import randperm

        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to
    ``weights``. Each draw is one uniform value u from the generator, and
    the index is the first whose cumulative weight (summed in double, in
    index order) exceeds u times the total; without replacement a chosen
    index's weight is removed before the next draw."""

    def __init__(self, weights, num_samples: int, replacement: bool = True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = np.asarray(weights.tolist() if isinstance(weights, Tensor) else weights, dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        if np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be finite, non-negative and not all zero)")
        if not replacement and num_samples > int(np.count_nonzero(w)):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = weights
        self._w = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ...creation import rand

        w = self._w.copy()
        u = rand(self.num_samples, generator=self.generator).numpy().astype(np.float64)
        out = []
        for k in range(self.num_samples):
            cum = np.cumsum(w)  # sequential, in index order
            target = u[k] * cum[-1]
            # The first index whose cumulative weight exceeds the target (a
            # zero-weight index never does: its sum equals its predecessor's).
            i = min(int(np.searchsorted(cum, target, side="right")), w.size - 1)
            out.append(i)
            if not self.replacement:
                w[i] = 0.0
        return iter(out)

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of ``batch_size`` (the
    last one shorter unless ``drop_last``)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def _process_group(what: str) -> int:
    try:
        from ... import distributed as dist
    except ImportError:  # pragma: no cover
        dist = None
    if dist is not None and getattr(dist, "is_initialized", lambda: False)():
        return dist.get_world_size() if what == "num_replicas" else dist.get_rank()
    raise RuntimeError(f"DistributedSampler: {what} was not given and no process group is initialized")


class DistributedSampler(Sampler):
    """torch's DistributedSampler: rank r of num_replicas takes every
    num_replicas-th index of one permutation (seeded by seed + epoch; call
    ``set_epoch`` each epoch), padded by repetition to equal lengths unless
    ``drop_last``."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle: bool = True, seed: int = 0, drop_last: bool = False):
        import math

        if num_replicas is None:
            num_replicas = _process_group("num_replicas")
        if rank is None:
            rank = _process_group("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        import math

        from ...creation import Generator, randperm

        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch


__all__.append("DistributedSampler")
