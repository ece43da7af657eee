"""The Optimizer base: torch.optim.Optimizer's parameter groups, state and
state-dict structure, with the arithmetic of each step in Rust kernels.

Differences from torch (documented in docs/optim.md): a parameter given
twice (in one group or in two) and parameters that share memory are errors,
not warnings; group options are validated whenever a group is added, not
only those passed to the constructor; ``params`` may not be a set; no
optimizer hooks; ``state[p]['step']`` is a Python float while training
(``state_dict()`` reports it as a 0-d float32 tensor, as torch does).
"""

from __future__ import annotations

from typing import Any, Callable

import copy
from collections import defaultdict

import numpy as np

from .. import scope
from ..grad_mode import enable_grad, no_grad
from ..tensor import Tensor, float32

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Marks a group option that has no default (torch.optim.optimizer.required)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _span(t: Tensor) -> tuple:
    """The bytes a tensor's elements occupy, [first, end), for overlap checks."""
    if t.numel() == 0:
        return (0, 0)
    first = t._storage.data_ptr + t._offset * t._dtype.itemsize
    last = first + sum((n - 1) * s for n, s in zip(t._shape, t._strides)) * t._dtype.itemsize
    return (first, last + t._dtype.itemsize)


def _as_state_tensor(value, like: Tensor, what: str) -> Tensor:
    """A fresh contiguous float32 copy of a loaded state tensor (a Tensor or
    anything NumPy can read), checked against the parameter's shape."""
    from ..creation import tensor as make_tensor

    if isinstance(value, Tensor):
        value = value.detach().numpy(force=True)
    arr = np.asarray(value)
    if tuple(arr.shape) != tuple(like.shape):
        raise ValueError(f"load_state_dict: {what} has shape {tuple(arr.shape)} but its parameter has shape {tuple(like.shape)}")
    with scope.suspend():
        # np.array, not np.ascontiguousarray: the latter makes a 0-d state (a scalar parameter's) 1-d.
        return make_tensor(np.array(arr, dtype=np.float32, order="C"))


def _check_non_negative(group: dict, *keys: str) -> None:
    """torch's "Invalid learning rate: -1" for the first of `keys` whose
    option is negative (or NaN)."""
    for key in keys:
        if not 0.0 <= group[key]:
            name = {"lr": "learning rate", "eps": "epsilon value"}.get(key, f"{key} value")
            raise ValueError(f"Invalid {name}: {group[key]}")


def _refuse_differentiable(group: dict) -> None:
    """torch's ``differentiable=True`` records the step in autograd; onemodel's
    steps are never recorded, so the option is refused."""
    if group.get("differentiable"):
        raise ValueError("differentiable=True is not supported: onemodel's optimizer steps are not recorded by autograd")


def _check_adam_options(group: dict) -> None:
    """The options of the Adam family (Adam, AdamW, Adamax, NAdam, RAdam)
    checked as torch checks them: lr, eps and weight_decay non-negative,
    betas a pair in [0, 1)."""
    _check_non_negative(group, "lr", "eps")
    try:
        b1, b2 = group["betas"]
    except (TypeError, ValueError):
        raise ValueError(f"betas must be a pair of numbers, got {group['betas']!r}") from None
    if not 0.0 <= b1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {b1}")
    if not 0.0 <= b2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {b2}")
    _check_non_negative(group, "weight_decay")
    _refuse_differentiable(group)


def _zeros_like(p: Tensor) -> Tensor:
    """Optimizer state: contiguous zeros, never tied to an ActivationScope."""
    with scope.suspend():
        return Tensor._empty(p.shape, float32, zeroed=True)


class Optimizer:
    """Base of the optimizers: ``param_groups`` (a list of dicts, each with
    ``params`` and its options), ``state`` (per parameter), ``zero_grad``,
    ``step``, ``state_dict``/``load_state_dict`` and ``add_param_group``."""

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got a Tensor"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections (a list), not a set")
        self._check_options(defaults, "defaults")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        # Validate every group before adding any, so that a bad one leaves
        # nothing half-built.
        staged: list = []
        for g in groups:
            staged.append(self._prepare_group(g, staged))
        self.param_groups.extend(staged)

    # -- options ----------------------------------------------------------------
    def _check_options(self, group: dict, where: str) -> None:
        """Raise ValueError for invalid options (subclasses)."""

    # -- groups -------------------------------------------------------------------
    def _prepare_group(self, param_group, pending=()) -> dict:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        group = dict(param_group)
        params = group.get("params")
        if params is None:
            raise ValueError("param_group has no 'params' entry")
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors "
                "in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)
        names = []
        tensors = []
        for item in params:
            if isinstance(item, tuple) and len(item) == 2:
                names.append(item[0])
                tensors.append(item[1])
            else:
                tensors.append(item)
        if names and len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
            if p.dtype is not float32:
                raise TypeError(f"optimizer can only optimize float32 tensors, got {p.dtype.name}")
        group["params"] = tensors
        if names:
            group["param_names"] = names
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        self._check_options(group, "param group")

        # No parameter twice, within the group or across groups, by identity
        # or by shared memory (the kernels update in place; a shared element
        # would be updated twice, in an order that depends on threads).
        seen = set()
        for p in tensors:
            if id(p) in seen:
                raise ValueError("a parameter appears twice in one parameter group")
            seen.add(id(p))
        others = [q for g in list(self.param_groups) + list(pending) for q in g["params"]]
        other_ids = {id(q) for q in others}
        if any(id(p) in other_ids for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        spans = sorted((_span(p), i) for i, p in enumerate(others + tensors) if p.numel())
        for (a, _), (b, _) in zip(spans, spans[1:]):
            if b[0] < a[1]:
                raise ValueError("two parameters share memory (views of one tensor); give each element to the optimizer once")
        for g in list(self.param_groups) + list(pending):
            if ("param_names" in g) != ("param_names" in group):
                raise ValueError("all optimizer param groups should be with/without names")
        return group

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (a dict with ``params`` and any options; missing
        options take the optimizer's defaults). Nothing changes on error."""
        self.param_groups.append(self._prepare_group(param_group))

    # -- gradients ----------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (``set_to_none=True``, the
        default) or zero it in place."""
        from ..autograd import _zero_grads

        _zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient. ``closure``, if
        given, is called first with gradients enabled and its result returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            self._step()
        return loss

    def _step(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- state dict -----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``
        with parameters numbered in group order, as torch does. State tensors
        are the live ones (not copies), like torch's."""
        mapping = {}
        groups = []
        start = 0
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for i, p in enumerate(g["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in g["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if id(p) in mapping:
                state[mapping[id(p)]] = self._export_state(s)
        return {"state": state, "param_groups": groups}

    def _export_state(self, s: dict) -> dict:
        from ..creation import tensor as make_tensor

        out = dict(s)
        if "step" in out and not isinstance(out["step"], Tensor):
            with scope.suspend():
                out["step"] = make_tensor(np.float32(out["step"]))
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state dict of this optimizer's structure (ours or torch's,
        with tensors as onemodel tensors or NumPy arrays). Everything is
        checked before anything changes; state tensors are copied."""
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for saved_id, p in zip(s["params"], g["params"]):
                id_map[saved_id] = p
        new_state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key not in id_map:
                raise ValueError(f"load_state_dict: state for parameter {key!r}, which no group lists")
            p = id_map[key]
            new_state[p] = self._import_state(value, p, key)
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            if "betas" in s and isinstance(s["betas"], list):
                s["betas"] = tuple(s["betas"])
            for name, default in self.defaults.items():
                s.setdefault(name, default)
            self._check_options(s, "loaded param group")
            new_groups.append(s)
        self.state = new_state
        self.param_groups = new_groups

    def _import_state(self, value: dict, p: Tensor, key) -> dict:
        out = {}
        for k, v in value.items():
            if k == "step":
                out[k] = float(v.item() if isinstance(v, Tensor) else np.asarray(v).item())
            elif isinstance(v, Tensor) or isinstance(v, np.ndarray):
                out[k] = _as_state_tensor(v, p, f"state[{key!r}][{k!r}]")
            else:
                out[k] = copy.deepcopy(v)
        return out

    # -- misc -------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group.keys()):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)
