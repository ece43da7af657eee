"""Module's state dict: ``state_dict``, ``load_state_dict`` (every key and
shape checked before anything is copied) and the extra-state protocol, as a
mixin of nn.Module (nn/module.py)."""

from __future__ import annotations

import collections
from collections import OrderedDict
from typing import Any, Mapping

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor
from .parameter import Parameter

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(collections.namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns (torch's named tuple and repr)."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _ModuleState:
    """The state-dict half of nn.Module (its attributes are Module's)."""

    def get_extra_state(self) -> Any:
        raise RuntimeError("get_extra_state: this module stores no extra state (override get_extra_state and set_extra_state)")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("set_extra_state: this module stores no extra state (override get_extra_state and set_extra_state)")

    # -- state dict ----------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not _ModuleState.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> dict[str, Any]:
        """Parameters and persistent buffers under their dotted names, in
        registration order (parameters before buffers in each module). Tied
        weights appear under every name, as in torch."""
        if args:
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = dict(version=self._version)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _local_state(self) -> dict:
        state = {k: v for k, v in self._parameters.items() if v is not None}
        state.update((k, v) for k, v in self._buffers.items() if v is not None and k not in self._non_persistent_buffers_set)
        return state

    def _check_state(self, state_dict, prefix, missing, unexpected, errors, staged) -> None:
        """torch's per-module key logic, without copying: collects missing
        and unexpected keys, size-mismatch errors, and the (target, value)
        pairs to copy."""
        from ..creation import tensor as make_tensor

        local = self._local_state()
        for name, target in local.items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                if not isinstance(value, (np.ndarray, np.generic)):
                    errors.append(f'While copying the parameter named "{key}", expected a Tensor or a NumPy array from checkpoint but received {type(value)}')
                    continue
                try:
                    value = make_tensor(np.asarray(value), dtype=target.dtype)
                except (TypeError, ValueError) as e:
                    errors.append(f'While copying the parameter named "{key}": {e}')
                    continue
            shape = tuple(value.shape)
            if len(target.shape) == 0 and shape == (1,):
                value = value.reshape(())
                shape = ()
            if shape != tuple(target.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {shape} from checkpoint, "
                    f"the shape in current model is {tuple(target.shape)}."
                )
                continue
            if value.dtype is not target.dtype:
                value = make_tensor(value.numpy(force=True), dtype=target.dtype)
            staged.append((self, name, target, value))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _ModuleState.set_extra_state:
            if extra_key in state_dict:
                staged.append((self, _EXTRA_STATE_KEY_SUFFIX, None, state_dict[extra_key]))
            else:
                missing.append(extra_key)
        elif extra_key in state_dict:
            unexpected.append(extra_key)
        for key in state_dict:
            if key.startswith(prefix) and key != extra_key:
                head = key[len(prefix):].split(".", 1)
                if len(head) > 1:
                    if head[0] not in self._modules:
                        unexpected.append(key)
                elif head[0] not in local:
                    unexpected.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and persistent buffers from ``state_dict`` (values
        may be onemodel tensors or NumPy arrays, e.g. a torch state dict
        converted with ``{k: v.numpy() for k, v in sd.items()}``).

        Returns ``_IncompatibleKeys(missing_keys, unexpected_keys)``. With
        ``strict=True`` any missing or unexpected key is a RuntimeError in
        torch's format; a shape mismatch always is. Everything is checked
        before anything is copied. ``assign=True`` makes the module hold the
        given tensors (as Parameters where it had Parameters) instead of
        copying into its own."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors, staged = [], [], [], []

        def visit(module, local, prefix):
            module._check_state(local, prefix, missing, unexpected, errors, staged)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    visit(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)

        visit(self, dict(state_dict), "")
        # A recursive closure is a reference cycle (visit -> its cell ->
        # visit): left alone it would keep `staged` and the converted
        # tensors in it until the next garbage collection.
        del visit
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors)))
        with no_grad():
            for module, name, target, value in staged:
                if target is None:
                    module.set_extra_state(value)
                elif assign:
                    if isinstance(target, Parameter):
                        value = value if isinstance(value, Parameter) else Parameter(value, requires_grad=target.requires_grad)
                        value.requires_grad_(target.requires_grad)
                        module._parameters[name] = value
                    else:
                        module._buffers[name] = value
                else:
                    target.copy_(value)
        result = _IncompatibleKeys(missing, unexpected)
        for module in self.modules():
            for hook in list(module._load_state_dict_post_hooks.values()):
                if hook(module, result) is not None:
                    raise RuntimeError("load_state_dict post-hooks must return None (change incompatible_keys in place)")
        return result
