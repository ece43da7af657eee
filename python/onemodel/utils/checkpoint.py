"""torch.utils.checkpoint's names: activation checkpointing trades memory
for a second forward pass in backward. onemodel runs the function once and
keeps its activations (ActivationScope is onemodel's way to bound memory,
docs/engine.md), so ``checkpoint(fn, *args)`` is ``fn(*args)``: the same
values and gradients, without the memory saving."""

from __future__ import annotations


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    for fn in functions:
        input = fn(input)
    return input


__all__ = ["checkpoint", "checkpoint_sequential"]
