"""The benchmarks' round order (benchmarks/_timing.py, `round_order`): over
n! rounds every configuration is timed first, and right after every other
one, equally often (docs/performance.md, "2026-12-08"), where a fixed or a
rotated order always put the same configuration after torch."""

import collections
import itertools
import math
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
from _timing import round_order  # noqa: E402


def test_every_ordering_once_per_n_factorial_rounds():
    for n in range(1, 5):
        items = list(range(n))
        orders = [tuple(round_order(items, r)) for r in range(math.factorial(n))]
        assert sorted(orders) == sorted(itertools.permutations(items))
        # and the cycle repeats
        assert tuple(round_order(items, math.factorial(n) + 1)) == orders[1 % len(orders)]


def test_first_and_neighbours_are_balanced_for_three_configurations():
    configs = ("fast", "exact", "torch")
    orders = [round_order(configs, r) for r in range(6)]
    assert collections.Counter(o[0] for o in orders) == {c: 2 for c in configs}
    after = collections.Counter((a, b) for o in orders for a, b in zip(o, o[1:]))
    assert after == {(a, b): 2 for a in configs for b in configs if a != b}


def test_takes_any_iterable_and_an_empty_one():
    assert round_order(iter("ab"), 1) == ["b", "a"]
    assert round_order([], 5) == []
