"""torch.set_printoptions: the options Tensor.__repr__ passes to NumPy's
array2string (precision, threshold, edgeitems, linewidth, sci_mode).
NumPy lays numbers out a little differently from torch (column widths,
when scientific notation starts); the options mean the same."""

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


def array2string_kwargs() -> dict:
    """The keyword arguments of np.array2string for the current options."""
    threshold = options["threshold"]
    kw = dict(
        precision=int(options["precision"]),
        threshold=threshold if threshold != float("inf") else (1 << 62),
        edgeitems=int(options["edgeitems"]),
        max_line_width=int(options["linewidth"]),
    )
    if options["sci_mode"] is not None:
        kw["suppress_small"] = not options["sci_mode"]
        if options["sci_mode"]:
            kw["floatmode"] = "maxprec_equal"
            kw["formatter"] = {"float_kind": lambda v, p=kw["precision"]: f"{v:.{p}e}"}
    return kw
