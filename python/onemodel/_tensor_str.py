"""Tensor.__repr__ laid out as torch's ``torch._tensor_str`` lays it out:
one formatter per tensor chooses integer mode (every finite nonzero value
whole: ``1.``), scientific mode (the largest over the smallest nonzero
magnitude above 1000, a magnitude above 1e8, or — outside integer mode —
one below 1e-4) or fixed ``precision`` decimals, and pads every element to
the widest; rows wrap at ``linewidth``; above ``threshold`` elements only
``edgeitems`` per edge are shown around ``...``. Options come from
``_printoptions`` (torch.set_printoptions)."""

from __future__ import annotations

import math

import numpy as np

from ._printoptions import options


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = int(options["precision"])
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size:
            mags = np.abs(finite)
            lo, hi = float(mags.min()), float(mags.max())
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            if self.int_mode:
                self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
                widths = [len(f"{v:.{p}e}") if self.sci_mode else len(f"{v:.0f}") + 1 for v in finite.tolist()]
            else:
                self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                widths = [len(f"{v:.{p}e}") if self.sci_mode else len(f"{v:.{p}f}") for v in finite.tolist()]
            self.max_width = max(widths)
        if options["sci_mode"] is not None:
            self.sci_mode = bool(options["sci_mode"])

    def format(self, value) -> str:
        p = int(options["precision"])
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray, edge: int) -> np.ndarray:
    """The elements a summarized print shows (for the formatter's widths)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * edge:
        a = np.concatenate([a[:edge], a[-edge:]])
    return np.stack([_summarized(x, edge) for x in a]) if a.ndim > 1 else a


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge, width = int(options["edgeitems"]), int(options["linewidth"])
    per_line = max(1, int(math.floor((width - indent) / (fmt.max_width + 2))))
    vals = a.tolist()
    if summarize and not edge:
        data = ["..."]
    elif summarize and len(vals) > 2 * edge:
        data = [fmt.format(v) for v in vals[:edge]] + [" ..."] + [fmt.format(v) for v in vals[-edge:]]
    else:
        data = [fmt.format(v) for v in vals]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    edge = int(options["edgeitems"])
    if summarize and a.shape[0] > 2 * edge:
        rows = [_nested(a[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
        rows += [_nested(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0] - edge, a.shape[0])]
    else:
        rows = [_nested(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_body(a: np.ndarray, floating: bool, indent: int) -> str:
    """The bracketed values of torch's repr for the array `a`."""
    if a.size == 0:
        return "[]"
    summarize = a.size > options["threshold"]
    shown = _summarized(a, int(options["edgeitems"])) if summarize else a
    return _nested(a, indent, summarize, _Formatter(shown, floating))


def add_suffixes(body: str, suffixes: list, indent: int) -> str:
    """``, suffix`` after the values, on a new line where it would pass the line width."""
    out = [body]
    last = len(body) - body.rfind("\n") + 1
    width = int(options["linewidth"])
    for s in suffixes:
        if last + len(s) + 2 > width:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)
