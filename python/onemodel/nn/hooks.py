"""Hooks: RemovableHandle and Module's forward and load-state-dict hooks, as
a mixin of nn.Module (nn/module.py)."""

from __future__ import annotations

import itertools
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


class _ModuleHooks:
    """The hook half of nn.Module (its attributes are Module's)."""

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)``) before
        forward; a non-None result replaces the arguments."""
        handle = RemovableHandle(self._forward_pre_hooks, (self._forward_pre_hooks_with_kwargs,))
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (or with kwargs) after forward; a
        non-None result replaces the output."""
        handle = RemovableHandle(self._forward_hooks, (self._forward_hooks_with_kwargs, self._forward_hooks_always_called))
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_with_hooks(self, args, kwargs):
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
        output = self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                result = hook(self, args, kwargs, output)
            else:
                result = hook(self, args, output)
            if result is not None:
                output = result
        return output
