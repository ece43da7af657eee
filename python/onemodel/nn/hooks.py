"""Hooks: RemovableHandle and Module's forward and load-state-dict hooks, as
a mixin of nn.Module (nn/module.py)."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any, Callable


class RemovableHandle:
    """Removes a hook from the dicts it was added to (``handle.remove()``
    or ``with handle:``)."""

    _next_id = itertools.count()

    def __init__(self, hooks_dict: dict, extra_dicts: tuple = ()) -> None:
        self._dicts = (hooks_dict, *extra_dicts)
        self.id = next(RemovableHandle._next_id)

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _add_hook(hooks: OrderedDict, hook: Callable[..., Any], prepend: bool, flags: list) -> RemovableHandle:
    """Store `hook` in `hooks` under a new handle (first when `prepend`) and
    mark it in each (flag dict, condition) pair whose condition holds; the
    handle removes it from all of them."""
    handle = RemovableHandle(hooks, tuple(store for store, _ in flags))
    hooks[handle.id] = hook
    for store, on in flags:
        if on:
            store[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


class _ModuleHooks:
    """The hook half of nn.Module (its attributes are Module's)."""

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before
        forward; a non-None result replaces the arguments."""
        return _add_hook(self._forward_pre_hooks, hook, prepend, [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or with kwargs) after forward; a
        non-None result replaces the output."""
        flags = [(self._forward_hooks_with_kwargs, with_kwargs), (self._forward_hooks_always_called, always_call)]
        return _add_hook(self._forward_hooks, hook, prepend, flags)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of
        the inputs are computed; a non-None result replaces grad_input (nn/backward_hooks.py)."""
        from .backward_hooks import register

        return register(self, "_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` when the outputs' gradients are known; may replace them."""
        from .backward_hooks import register

        return register(self, "_backward_pre_hooks", hook, prepend)

    def _call_with_hooks(self, args, kwargs):
        # torch's order: forward pre-hooks, the backward hooks' identity on
        # the inputs, forward, forward hooks, the identity on the outputs.
        args, kwargs = self._run_forward_pre_hooks(args, kwargs)
        d = self.__dict__
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            from .backward_hooks import call

            return call(self, args, kwargs, self._run_forward_and_hooks)
        return self._run_forward_and_hooks(args, kwargs)

    def _run_forward_pre_hooks(self, args, kwargs):
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        return args, kwargs

    def _run_forward_and_hooks(self, args, kwargs):
        output = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        return output
