"""torch.utils.data's names: datasets, samplers, DataLoader, collation."""

from __future__ import annotations

from ._collate import collate, default_collate, default_convert
from .dataloader import DataLoader, WorkerInfo, get_worker_info
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset, random_split
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "DataLoader", "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
    "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
    "BatchSampler", "DistributedSampler", "default_collate", "default_convert", "collate", "get_worker_info", "WorkerInfo",
]
