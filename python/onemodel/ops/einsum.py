"""torch.einsum, mapped onto the canonical GEMM.

The steps, and so the order of every sum (docs/api.md, "The rest of torch's tensor surface"):

1. Each operand: a subscript repeated within it takes the diagonal (a
   view); a subscript found in no other operand and not in the output is
   summed out (a double sum in increasing element order, rounded once).
2. The operands are contracted pairwise from left to right (torch's order
   when opt_einsum is absent). For a pair, the subscripts in both that are
   still needed (by the output or a later operand) are batch dims; the
   others in both are contracted. The left operand is permuted to [batch,
   left-only, contracted], the right one to [batch, contracted,
   right-only], and one batched matmul runs: each output has one
   accumulator, k running over the contracted subscripts flattened
   row-major in the order they appear in the left operand. A pair with
   nothing to contract is an element-wise multiply (as torch).
3. The result is permuted to the output's subscript order.

Size-1 dims broadcast against the others (as torch); the ellipsis covers
the broadcast leading dims.
"""

from __future__ import annotations

import builtins

from ..tensor import Tensor
from . import views
from .diagonal import diagonal


def _letters(op: str, sub) -> str:
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif isinstance(s, int) and 0 <= s < 52:
            out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
        else:
            raise ValueError(f"{op}: a sublist holds ints in [0, 52) and Ellipsis, got {s!r}")
    return "".join(out)


def _parse_args(args) -> tuple:
    if args and isinstance(args[0], str):
        eq, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
        return eq, ops
    # Sublist format: op0, sub0, op1, sub1, ..., [out]
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) > len(subs):
        out = ops.pop()
    eq = ",".join(_letters("einsum", s) for s in subs)
    if out is not None:
        eq += "->" + _letters("einsum", out)
    return eq, ops


def _split_terms(op: str, term: str) -> list:
    """The subscripts of one term: letters, and '...' as one marker."""
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            if "..." in out:
                raise ValueError(f"{op}: more than one ellipsis in the term {term!r}")
            out.append("...")
            i += 3
        elif term[i].isalpha():
            out.append(term[i])
            i += 1
        else:
            raise ValueError(f"{op}: invalid subscript {term[i]!r} in {term!r}: subscripts are letters [a-zA-Z] and '...'")
    return out


def einsum(*args) -> Tensor:
    """torch.einsum(equation, *operands) (operands also as one list, or the
    sublist format)."""
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand")
    eq, ops = _parse_args(args)
    for o in ops:
        if not isinstance(o, Tensor):
            raise TypeError(f"einsum(): operands must be Tensors, got {type(o).__name__}")
    if not ops:
        raise ValueError("einsum(): must provide at least one operand")
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops):
        raise ValueError(f"einsum(): {len(terms)} subscript terms in {eq!r} for {len(ops)} operands")
    dtypes = {o.dtype for o in ops}
    if len(dtypes) > 1:
        raise RuntimeError(f"einsum(): expected all operands to have the same dtype, got {sorted(d.name for d in dtypes)}")

    # Subscript lists with the ellipsis expanded into labels (0, 1, ...)
    # counted from the right, so that they broadcast.
    labelled, n_ell = [], 0
    for k, (term, t) in enumerate(zip(terms, ops)):
        subs = _split_terms("einsum", term)
        n_named = len([s for s in subs if s != "..."])
        if "..." in subs:
            ne = t.ndim - n_named
            if ne < 0:
                raise ValueError(f"einsum(): the term {term!r} for operand {k} has more subscripts than its {t.ndim} dimensions")
            n_ell = builtins.max(n_ell, ne)
            i = subs.index("...")
            subs = subs[:i] + [("...", ne - 1 - j) for j in range(ne)] + subs[i + 1 :]
        elif n_named != t.ndim:
            raise ValueError(f"einsum(): the term {term!r} for operand {k} has {n_named} subscripts for {t.ndim} dimensions")
        labelled.append(subs)
    ell = [("...", n_ell - 1 - j) for j in range(n_ell)]

    counts: dict = {}
    for subs in labelled:
        for s in subs:
            if isinstance(s, str):
                counts[s] = counts.get(s, 0) + 1
    if arrow:
        out_subs = _split_terms("einsum", rhs)
        if "..." in out_subs:
            i = out_subs.index("...")
            out_subs = out_subs[:i] + ell + out_subs[i + 1 :]
        named = [s for s in out_subs if isinstance(s, str)]
        if len(set(named)) != len(named):
            raise ValueError(f"einsum(): output subscript appears more than once in {rhs!r}")
        for s in named:
            if s not in counts:
                raise ValueError(f"einsum(): output subscript {s!r} does not appear in the equation for any input operand")
    else:
        out_subs = ell + sorted((s for s, c in counts.items() if c == 1), key=lambda s: (s.islower(), s))

    # Sizes, with size-1 broadcasting.
    sizes: dict = {}
    for k, (subs, t) in enumerate(zip(labelled, ops)):
        for s, n in zip(subs, t.shape):
            prev = sizes.get(s)
            if prev is None or prev == 1:
                sizes[s] = n
            elif n != 1 and n != prev:
                name = "..." if isinstance(s, tuple) else s
                raise RuntimeError(f"einsum(): operand {k} has size {n} for subscript {name!r} which does not broadcast with previously seen size {prev}")

    # Step 1: diagonals and single-operand sums.
    work = []
    for k, (subs, t) in enumerate(zip(labelled, ops)):
        subs = list(subs)
        while True:
            dup = next((s for s in subs if subs.count(s) > 1), None)
            if dup is None:
                break
            i = subs.index(dup)
            j = subs.index(dup, i + 1)
            if t.shape[i] != t.shape[j]:
                raise RuntimeError(f"einsum(): subscript {dup!r} is repeated for operand {k} but the sizes don't match, {t.shape[i]} != {t.shape[j]}")
            t = diagonal(t, 0, i, j)
            subs = [s for n, s in enumerate(subs) if n not in (i, j)] + [dup]
        work.append((t, subs))

    def needed_after(idx: int) -> set:
        need = set(out_subs)
        for _, subs in work[idx + 1 :]:
            need.update(subs)
        return need

    def sum_alone(idx: int, t: Tensor, subs: list, need: set) -> tuple:
        others = set()
        for j, (_, s2) in enumerate(work):
            if j != idx:
                others.update(s2)
        drop = [i for i, s in enumerate(subs) if s not in need and s not in others]
        if drop:
            t = t.sum(tuple(drop))
            subs = [s for i, s in enumerate(subs) if i not in drop]
        return t, subs

    final_need = set(out_subs)
    work = [sum_alone(i, t, s, final_need) for i, (t, s) in enumerate(work)]

    # Step 2: left-to-right pairwise contraction.
    t, subs = work[0]
    for idx in range(1, len(work)):
        u, usubs = work[idx]
        need = needed_after(idx)
        t, subs = _contract(t, subs, u, usubs, need, sizes)
    # Labels present only because an earlier operand needed them are gone;
    # anything not in the output is summed now (a single operand's case).
    drop = [i for i, s in enumerate(subs) if s not in out_subs]
    if drop:
        t = t.sum(tuple(drop))
        subs = [s for i, s in enumerate(subs) if i not in drop]
    # Step 3: the output's order (size-1 dims broadcast to their size).
    if subs != out_subs:
        t = views.permute(t, *[subs.index(s) for s in out_subs])
    target = tuple(sizes[s] for s in out_subs)
    if tuple(t.shape) != target:
        t = views.expand(t, target)
    return t


def _contract(a: Tensor, asubs: list, b: Tensor, bsubs: list, need: set, sizes: dict) -> tuple:
    batch = [s for s in asubs if s in bsubs and s in need]
    contracted = [s for s in asubs if s in bsubs and s not in need]
    left = [s for s in asubs if s not in bsubs]
    right = [s for s in bsubs if s not in asubs]

    def arrange(t, tsubs, order) -> Tensor:
        return views.permute(t, *[tsubs.index(s) for s in order]) if tsubs != order else t

    if not contracted:
        # Element-wise: align both on batch + left + right and multiply.
        order = batch + left + right
        pa = arrange(a, asubs, batch + left)
        pb = arrange(b, bsubs, batch + right)
        pa = views.reshape(pa, tuple(pa.shape) + (1,) * len(right))
        pb = views.reshape(pb, tuple(pb.shape[: len(batch)]) + (1,) * len(left) + tuple(pb.shape[len(batch) :]))
        return pa * pb, order

    pa = arrange(a, asubs, batch + left + contracted)
    pb = arrange(b, bsubs, batch + contracted + right)
    nb = len(batch)
    # A contracted subscript of size 1 on one side broadcasts to the other's size.
    full_k = tuple(sizes[s] for s in contracted)
    ka = tuple(pa.shape[nb + len(left) :])
    kb = tuple(pb.shape[nb : nb + len(contracted)])
    if ka != full_k:
        pa = views.expand(pa, tuple(pa.shape[: nb + len(left)]) + full_k)
    if kb != full_k:
        pb = views.expand(pb, tuple(pb.shape[:nb]) + full_k + tuple(pb.shape[nb + len(contracted) :]))
    bshape_a = tuple(pa.shape[:nb])
    bshape_b = tuple(pb.shape[:nb])
    lshape = tuple(pa.shape[nb : nb + len(left)])
    rshape = tuple(pb.shape[nb + len(contracted) :])
    k = 1
    for n in full_k:
        k *= n
    lsz = 1
    for n in lshape:
        lsz *= n
    rsz = 1
    for n in rshape:
        rsz *= n
    ma = views.reshape(pa, bshape_a + (lsz, k))
    mb = views.reshape(pb, bshape_b + (k, rsz))
    from .linalg import matmul

    r = matmul(ma, mb)
    r = views.reshape(r, tuple(r.shape[:nb]) + lshape + rshape)
    return r, batch + left + right
