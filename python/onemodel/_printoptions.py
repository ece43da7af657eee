"""torch.set_printoptions: the options (precision, threshold, edgeitems,
linewidth, sci_mode) of Tensor.__repr__, which lays values out as torch
does (_tensor_str.py)."""

from __future__ import annotations

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80),
}

options = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None) -> None:
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        options.update(_PROFILES[profile])
    for key, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            options[key] = value
    options["sci_mode"] = sci_mode
