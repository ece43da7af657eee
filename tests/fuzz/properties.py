"""Property tests of the public ops (hypothesis). Not collected by pytest
itself: tests/test_fuzz.py runs each property in a child process
(``python properties.py NAME``), so that a crash is reported as a failure
naming the case the child printed last.

Every property draws inputs — shapes with zero-sized dims, broadcasting,
transposed and sliced views, float32 with NaN/±inf/−0/subnormals, int64,
wrong argument kinds — and checks that the call either matches an
independent NumPy reference (exact bits where docs/engine.md fixes them: IEEE
element-wise ops, the double sums, the canonical product order in exact
mode; the documented ulp bounds for exp/log/tanh/sigmoid) or raises one of
the error kinds the library promises.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import onemodel as om
import onemodel.nn.functional as F

#: The exceptions a bad call may raise (and their subclasses).
ALLOWED = (ValueError, TypeError, IndexError, RuntimeError, MemoryError)

settings.register_profile(
    "ci",  # reproducible and bounded: the same cases on every run
    derandomize=True,
    max_examples=int(os.environ.get("ONEMODEL_FUZZ_EXAMPLES", "100")),
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "explore",  # random cases, many more of them: a local search
    max_examples=int(os.environ.get("ONEMODEL_FUZZ_EXAMPLES", "2000")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("ONEMODEL_FUZZ_PROFILE", "ci"))


def announce(case: str) -> None:
    """Print the case before running it: a child that dies leaves it last."""
    sys.stderr.write(f"@@case {case}\n")
    sys.stderr.flush()
    note(case)


def call(fn, *args, **kwargs):
    """(result, None) or (None, exception) for an allowed exception;
    any other exception propagates and fails the property."""
    try:
        return fn(*args, **kwargs), None
    except ALLOWED as e:
        return None, e


# -- strategies ------------------------------------------------------------------

F32 = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)
SPECIAL = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38, 1.0, -1.0])
VALUES = st.one_of(F32, SPECIAL)
I64 = st.integers(-(2**63), 2**63 - 1)


def shapes(max_dims=4, max_side=5):
    return hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side)


@st.composite
def float_arrays(draw, shape=None):
    shape = draw(shapes()) if shape is None else shape
    return draw(hnp.arrays(np.float32, shape, elements=VALUES))


@st.composite
def tensor_of(draw, array):
    """A tensor holding `array`, as a contiguous tensor, a transposed view
    or a sliced view (the same values, other strides)."""
    kind = draw(st.sampled_from(["contiguous", "transposed", "sliced"]))
    a = np.array(array, order="C", copy=True)  # (ascontiguousarray makes 0-d arrays 1-d)
    if kind == "transposed" and a.ndim >= 2:
        return om.tensor(np.ascontiguousarray(a.swapaxes(0, -1))).transpose(0, -1), kind
    if kind == "sliced" and a.ndim >= 1:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1] + 1,), a.dtype)
        big[..., 1::2] = a
        return om.tensor(big)[..., 1::2], kind
    return om.tensor(a), "contiguous"


@st.composite
def broadcast_pair(draw, dtype=np.float32):
    shape_a, shape_b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4, min_side=0)).input_shapes
    elements = VALUES if dtype == np.float32 else I64
    a = draw(hnp.arrays(dtype, shape_a, elements=elements))
    b = draw(hnp.arrays(dtype, shape_b, elements=elements))
    return a, b


def same_floats(got: np.ndarray, want: np.ndarray) -> bool:
    """Bit-equal, except that any NaN equals any NaN."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    if got.shape != want.shape:
        return False
    both_nan = np.isnan(got) & np.isnan(want)
    return bool(np.all(both_nan | (got.view(np.uint32) == want.view(np.uint32))))


def ulps(got: np.ndarray, want64: np.ndarray) -> np.ndarray:
    """Distance in float32 ulps of `got` from the float64 reference (0 where
    both are the same non-finite value)."""
    got = np.asarray(got, np.float32).astype(np.float64)
    want = np.asarray(want64, np.float64)
    ref32 = want.astype(np.float32).astype(np.float64)
    spacing = np.spacing(np.abs(ref32).astype(np.float32)).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(got - want) / spacing
    same = (got == want) | (np.isnan(got) & np.isnan(want)) | (np.isinf(ref32) & (got == ref32))
    return np.where(same, 0.0, d)


# -- properties --------------------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


@given(op=st.sampled_from(sorted(BINARY)), pair=broadcast_pair(), data=st.data())
def binary_float(op, pair, data):
    """IEEE element-wise ops with broadcasting: NumPy's float32 bits."""
    a, b = pair
    ta, ka = data.draw(tensor_of(a))
    tb, kb = data.draw(tensor_of(b))
    announce(f"{op}({ka} {a.shape}, {kb} {b.shape})")
    with np.errstate(all="ignore"):
        want = BINARY[op](a, b)
    got = getattr(om, op)(ta, tb).numpy()
    assert same_floats(got, want), (op, a, b, got, want)


INT_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "eq": np.equal, "lt": np.less, "maximum": np.maximum}


@given(op=st.sampled_from(sorted(INT_OPS)), pair=broadcast_pair(np.int64))
def binary_int(op, pair):
    """int64 operands: comparisons and maximum exact; the arithmetic ops
    (float32 only in onemodel today) a TypeError, never a wrong value."""
    a, b = pair
    announce(f"{op}(int64 {a.shape}, int64 {b.shape})")
    with np.errstate(all="ignore"):
        want = INT_OPS[op](a, b)
    got, err = call(getattr(om, op), om.tensor(a), om.tensor(b))
    if err is not None:
        assert isinstance(err, TypeError) and op in ("add", "sub", "mul"), err
        return
    assert np.array_equal(got.numpy(), want), (op, a, b, got.numpy(), want)
    # An int64 sum is exact (wrapping) whatever its length.
    with np.errstate(all="ignore"):
        assert int(om.tensor(a).sum()) == int(np.sum(a, dtype=np.int64))


EXACT_UNARY = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "relu": lambda x: np.where(x > 0, x, np.float32(0))}
ULP_UNARY = {"exp": (np.exp, 1), "log": (np.log, 1), "tanh": (np.tanh, 2),
             "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), 2)}


@given(op=st.sampled_from(sorted(EXACT_UNARY) + sorted(ULP_UNARY)), a=float_arrays(), data=st.data())
def unary_float(op, a, data):
    """Exact-mode unary ops: IEEE ones bit-exact, the fixed transcendentals
    within the ulps docs/numerics.md states (against float64)."""
    t, kind = data.draw(tensor_of(a))
    announce(f"{op}({kind} {a.shape})")
    with om.compute.mode("exact"):
        got = getattr(om, op)(t).numpy()
    with np.errstate(all="ignore"):
        if op in EXACT_UNARY:
            want = EXACT_UNARY[op](a)
            # relu of NaN: torch gives NaN; the reference's where() gives 0.
            if op == "relu":
                want = np.where(np.isnan(a), a, want)
            assert same_floats(got, want), (op, a, got, want)
        else:
            fn, bound = ULP_UNARY[op]
            want = fn(a.astype(np.float64))
            d = ulps(got, want)
            assert np.all(d <= bound), (op, a[d > bound], got[d > bound], want[d > bound])


@given(a=float_arrays(), data=st.data())
def sum_along_a_dim(a, data):
    """A sum widens to double, adds in increasing index order, rounds once:
    NumPy's sequential float64 cumsum, rounded."""
    t, kind = data.draw(tensor_of(a))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1)) if a.ndim else None
    announce(f"sum({kind} {a.shape}, dim={dim})")
    if dim is None:
        got = om.sum(t).numpy()
        # From +0 (docs/engine.md, "Arithmetic rules"; torch: a sum of -0.0 is +0.0).
        flat = np.concatenate([[0.0], a.reshape(-1).astype(np.float64)])
        want = np.float32(np.cumsum(flat)[-1])
    else:
        got = om.sum(t, dim).numpy()
        moved = np.moveaxis(a.astype(np.float64), dim, -1)
        moved = np.concatenate([np.zeros(moved.shape[:-1] + (1,)), moved], axis=-1)
        want = np.cumsum(moved, axis=-1)[..., -1].astype(np.float32)
    with np.errstate(invalid="ignore"):
        assert same_floats(got, want), (a, dim, got, want)


@given(m=st.integers(0, 6), k=st.integers(0, 40), n=st.integers(0, 6), batch=st.sampled_from([(), (2,), (1, 3)]),
       data=st.data())
def matmul_exact(m, k, n, batch, data):
    """Exact mode: each output is one accumulator from +0 adding rounded
    products in increasing k (docs/engine.md, "Arithmetic rules"), emulated
    in NumPy float32."""
    finite = st.floats(-1e4, 1e4, width=32, allow_subnormal=True)
    a = data.draw(hnp.arrays(np.float32, batch + (m, k), elements=finite))
    b = data.draw(hnp.arrays(np.float32, (k, n), elements=finite))
    ta, ka = data.draw(tensor_of(a))
    announce(f"matmul({ka} {a.shape}, {b.shape})")
    acc = np.zeros(batch + (m, n), np.float32)
    for i in range(k):
        acc = acc + a[..., :, i : i + 1] * b[i : i + 1, :]
    with om.compute.mode("exact"):
        got = om.matmul(ta, om.tensor(b)).numpy()
    assert same_floats(got, acc), (a, b, got, acc)


@given(a=float_arrays(), data=st.data())
def views_and_joins(a, data):
    """reshape, permute, transpose, flip, slicing, cat and stack move
    values as NumPy does; bad arguments raise the promised kinds."""
    t, kind = data.draw(tensor_of(a))
    op = data.draw(st.sampled_from(["reshape", "permute", "transpose", "flip", "slice", "cat", "stack", "expand"]))
    if op == "reshape":
        shape = tuple(data.draw(st.lists(st.integers(-2, 6), max_size=4)))
        announce(f"reshape({kind} {a.shape}, {shape})")
        got, err = call(t.reshape, shape)
        try:
            want = a.reshape(shape)
        except ValueError:
            assert err is not None, (a.shape, shape)
            return
        assert err is None, err
        assert same_floats(got.numpy(), want)
    elif op == "permute":
        dims = tuple(data.draw(st.permutations(range(a.ndim)))) if data.draw(st.booleans()) else tuple(
            data.draw(st.lists(st.integers(-5, 5), max_size=5)))
        announce(f"permute({kind} {a.shape}, {dims})")
        got, err = call(t.permute, *dims)
        try:
            want = np.transpose(a, dims) if len(dims) == a.ndim else None
        except (ValueError, np.exceptions.AxisError):
            want = None
        if want is None:
            assert err is not None or a.ndim == 0
        else:
            assert err is None, err
            assert same_floats(got.numpy(), want)
    elif op == "transpose":
        d0, d1 = data.draw(st.integers(-5, 5)), data.draw(st.integers(-5, 5))
        announce(f"transpose({kind} {a.shape}, {d0}, {d1})")
        got, err = call(t.transpose, d0, d1)
        nd = max(a.ndim, 1)
        if -nd <= d0 < nd and -nd <= d1 < nd:
            assert err is None, err
            want = np.swapaxes(a, d0, d1) if a.ndim else a
            assert same_floats(got.numpy(), want)
        else:
            assert isinstance(err, IndexError), err
    elif op == "flip":
        dims = tuple(sorted(set(data.draw(st.lists(st.integers(0, max(a.ndim - 1, 0)), max_size=3)))))
        announce(f"flip({kind} {a.shape}, {dims})")
        if a.ndim == 0:
            return
        got = om.flip(t, dims).numpy()
        assert same_floats(got, np.flip(a, dims) if dims else a)
    elif op == "slice":
        if a.ndim == 0:
            return
        start, stop = data.draw(st.integers(-7, 7)), data.draw(st.integers(-7, 7))
        step = data.draw(st.integers(1, 3))
        announce(f"slice({kind} {a.shape}, {start}:{stop}:{step})")
        assert same_floats(t[start:stop:step].numpy(), a[start:stop:step])
    elif op in ("cat", "stack"):
        other = data.draw(float_arrays())
        dim = data.draw(st.integers(-4, 4))
        announce(f"{op}({kind} {a.shape}, {other.shape}, dim={dim})")
        fn = om.cat if op == "cat" else om.stack
        got, err = call(fn, [t, om.tensor(other)], dim)
        if op == "cat" and (0,) in (a.shape, other.shape):
            # torch's legacy rule, which onemodel follows and NumPy does not have: an
            # empty 1-D input is skipped whatever the other's shape and the dim.
            kept = [x for x in (a, other) if x.shape != (0,)]
            if err is None:
                assert same_floats(got.numpy(), kept[0] if kept else np.zeros(0, np.float32))
            return
        try:
            want = (np.concatenate if op == "cat" else np.stack)([a, other], dim)
        except (ValueError, np.exceptions.AxisError):
            assert err is not None, (a.shape, other.shape, dim)
            return
        if err is not None:  # NumPy is laxer: 0-d cat and empty-dim mixes
            return
        assert same_floats(got.numpy(), want)
    else:
        target = tuple(data.draw(st.lists(st.integers(-1, 4), max_size=5)))
        announce(f"expand({kind} {a.shape}, {target})")
        got, err = call(t.expand, *target)
        if err is None:
            want = np.broadcast_to(a, tuple(a.shape[i - len(target) + a.ndim] if s == -1 else s for i, s in enumerate(target)))
            assert same_floats(got.numpy(), want)


# Small sizes, or sizes no machine holds (a size that fits the address space
# but not this machine's memory may be granted by Linux's overcommit and the
# process killed when the pages are touched, in any library: not fuzzed).
SIZES = st.one_of(st.integers(-3, 6), st.sampled_from([2**62, 2**63 - 1, 2**63, 2**64, -(2**63)]))
JUNK = st.one_of(st.none(), st.text(max_size=3), st.floats(), st.lists(st.integers(-2, 3), max_size=3),
                 st.just(object()), st.just({}), st.just(np.zeros(2)), st.booleans(),
                 st.sampled_from([-1, 0, 3, 2**31, 2**63, 2**70, -(2**70)]))


@given(fn=st.sampled_from(["zeros", "ones", "empty", "randn", "rand", "full", "arange", "eye", "randint"]),
       size=st.lists(SIZES, max_size=4), junk=JUNK)
def creation(fn, size, junk):
    """Creation from any ints (negative, huge) or junk: a tensor of that
    shape, or an allowed error, before any memory is touched."""
    size = tuple(size)
    announce(f"{fn}{size} / junk {junk!r:.40}")
    make = {"full": lambda *s: om.full(s, 1.5), "arange": lambda *s: om.arange(*s[:3]),
            "eye": lambda *s: om.eye(*s[:2]), "randint": lambda *s: om.randint(0, 5, s)}.get(fn, getattr(om, fn))
    got, err = call(make, *size)
    if err is None and fn not in ("arange", "eye"):
        assert tuple(got.shape) == size
    call(make, junk)
    call(make, *size, junk)


SPATIAL = st.integers(0, 6)


@given(n=st.integers(0, 2), c=st.integers(0, 3), h=SPATIAL, w=SPATIAL, o=st.integers(0, 3), k=st.integers(0, 4),
       stride=st.integers(-1, 3), padding=st.integers(-1, 3), dilation=st.integers(-1, 3), groups=st.integers(0, 3),
       op=st.sampled_from(["conv2d", "conv_transpose2d", "max_pool2d", "avg_pool2d", "interpolate", "adaptive_avg_pool2d"]),
       ceil=st.booleans(), data=st.data())
def spatial_geometry(n, c, h, w, o, k, stride, padding, dilation, groups, op, ceil, data):
    """The geometry of the spatial ops: any sizes and options give torch's
    output shape (checked by hand formulas here) or an allowed error;
    conv2d's values against a float64 direct sum."""
    x = np.asarray(data.draw(hnp.arrays(np.float32, (n, c, h, w), elements=st.floats(-2, 2, width=32))))
    announce(f"{op}(x {x.shape}, o={o}, k={k}, stride={stride}, padding={padding}, dilation={dilation}, groups={groups}, ceil={ceil})")
    tx = om.tensor(x)
    if op == "conv2d":
        wt = np.ones((o, c // max(groups, 1), k, k), np.float32) * 0.5
        got, err = call(F.conv2d, tx, om.tensor(wt), None, stride, padding, dilation, groups)
        if err is None:
            span = dilation * (k - 1) + 1
            oh, ow = (h + 2 * padding - span) // stride + 1, (w + 2 * padding - span) // stride + 1
            assert tuple(got.shape) == (n, o, oh, ow), (got.shape, (n, o, oh, ow))
            if groups == 1 and got.numel():
                xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
                want = np.zeros((n, o, oh, ow))
                for i in range(oh):
                    for j in range(ow):
                        win = xp[:, :, i * stride : i * stride + span : dilation, j * stride : j * stride + span : dilation]
                        want[:, :, i, j] = (win.sum(axis=(1, 2, 3)) * 0.5)[:, None]
                bound = 4 * c * k * k * np.finfo(np.float32).eps * (np.abs(xp).max() + 1)
                assert np.allclose(got.numpy(), want, atol=bound, rtol=0), (got.numpy(), want)
    elif op == "conv_transpose2d":
        wt = np.ones((c, o, k, k), np.float32)
        got, err = call(F.conv_transpose2d, tx, om.tensor(wt), None, stride, padding, 0, groups, dilation)
        if err is None:
            oh = (h - 1) * stride - 2 * padding + dilation * (k - 1) + 1
            ow = (w - 1) * stride - 2 * padding + dilation * (k - 1) + 1
            assert tuple(got.shape) == (n, o * groups, oh, ow)
    elif op in ("max_pool2d", "avg_pool2d"):
        args = (tx, k, stride, padding) + ((dilation, ceil) if op == "max_pool2d" else (ceil,))
        got, err = call(getattr(F, op), *args)
        if err is None:
            d = dilation if op == "max_pool2d" else 1
            span = d * (k - 1) + 1

            def size(m):
                num = m + 2 * padding - span
                out = (-(-num // stride) if ceil else num // stride) + 1
                if ceil and (out - 1) * stride >= m + padding:
                    out -= 1
                return out

            assert tuple(got.shape) == (n, c, size(h), size(w))
    elif op == "interpolate":
        scale = data.draw(st.one_of(st.none(), st.floats(-1, 4), st.just(float("nan"))))
        got, err = call(F.interpolate, tx, None if scale is not None else (max(k, 0) * 2 - 1, o), scale)
        if err is None:
            want = (n, c, int(np.floor(h * scale)), int(np.floor(w * scale))) if scale is not None else (n, c, max(k, 0) * 2 - 1, o)
            assert tuple(got.shape) == want
    else:
        got, err = call(F.adaptive_avg_pool2d, tx, (o, k))
        if err is None:
            assert tuple(got.shape) == (n, c, o, k)
            for i, (r0, r1) in enumerate([((i * h) // o, -((-(i + 1) * h) // o)) for i in range(o)]):
                for j, (c0, c1) in enumerate([((j * w) // k, -((-(j + 1) * w) // k)) for j in range(k)]):
                    want = x[:, :, r0:r1, c0:c1].astype(np.float64).mean(axis=(2, 3))
                    assert np.allclose(got.numpy()[:, :, i, j], want, rtol=1e-6, atol=1e-6)


#: The ops the junk property covers: the first 28, then the functional forms
#: fuzzing found raising AttributeError for a non-tensor input (or
#: OverflowError for an int past int64: tril/triu's diagonal, randint's
#: range, randperm's n, histc's bins, tensor_split's sections, which also
#: hung), each fixed to a TypeError naming the op (docs/reliability.md).
JUNK_OPS = {"add": om.add, "matmul": om.matmul, "sum": om.sum, "cat": om.cat, "stack": om.stack, "where": om.where,
            "clamp": om.clamp, "exp": om.exp, "mean": om.mean, "argmax": om.argmax, "cumsum": om.cumsum,
            "conv2d": F.conv2d, "conv_transpose2d": F.conv_transpose2d, "max_pool2d": F.max_pool2d,
            "avg_pool2d": F.avg_pool2d, "adaptive_avg_pool2d": F.adaptive_avg_pool2d, "interpolate": F.interpolate,
            "softmax": F.softmax, "cross_entropy": F.cross_entropy, "embedding": F.embedding, "linear": F.linear,
            "layer_norm": F.layer_norm, "mse_loss": F.mse_loss, "dropout": F.dropout, "zeros": om.zeros,
            "full": om.full, "tensor": om.tensor, "load": om.load,
            "chunk": om.chunk, "split": om.split, "flatten": om.flatten, "flip": om.flip, "permute": om.permute,
            "roll": om.roll, "squeeze": om.squeeze, "unsqueeze": om.unsqueeze,
            "repeat_interleave": om.repeat_interleave, "tril": om.tril, "triu": om.triu, "pad": F.pad,
            "unbind": om.unbind, "t": om.t, "clone": om.clone, "expand": om.expand, "nonzero": om.nonzero,
            "zeros_like": om.zeros_like, "full_like": om.full_like, "tensor_split": om.tensor_split,
            "histc": om.histc, "randint": om.randint, "randperm": om.randperm, "unravel_index": om.unravel_index,
            "masked_scatter": om.masked_scatter, "conv1d": F.conv1d, "grid_sample": F.grid_sample}


@given(op=st.sampled_from(sorted(JUNK_OPS) + ["reshape"]), a=JUNK, b=JUNK)
def wrong_argument_kinds(op, a, b):
    """Junk where a tensor, a dim or an option belongs: an allowed error
    (never AttributeError, KeyError, OverflowError or a crash)."""
    t = om.ones(2, 3)
    announce(f"{op} with {a!r:.40}, {b!r:.40}")
    if op == "reshape":
        call(t.reshape, a)
        call(t.reshape, a, b)
        return
    for args in [(a, b), (t, a), (a, t), (t, t, a), ([t, a],), ([a, b],), (a,)]:
        try:
            call(JUNK_OPS[op], *args)
        except OSError:
            # A string is a path to load: a missing file is FileNotFoundError
            # (as torch.load and open() say), not a value error.
            assert op == "load" and isinstance(args[0], str)


PROPERTIES = {f.__name__: f for f in [binary_float, binary_int, unary_float, sum_along_a_dim, matmul_exact,
                                       views_and_joins, creation, spatial_geometry, wrong_argument_kinds]}


#: The child's address space (bytes): a junk size that fits the address
#: space but not a machine (repeat_interleave(t, 2**31) asks 48 GiB, histc
#: with 2**31 bins writes 16) would be granted by Linux's overcommit and
#: touched, taking the machine's memory from everything else; under the cap
#: it is the MemoryError the library gives for a refused allocation.
ADDRESS_SPACE = 6 << 30


def cap_address_space() -> None:
    try:
        import resource
    except ImportError:  # not on Windows: the cases stay the same, uncapped
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = ADDRESS_SPACE if hard == resource.RLIM_INFINITY else min(ADDRESS_SPACE, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


if __name__ == "__main__":
    cap_address_space()
    om.compute.set_threads(int(os.environ.get("ONEMODEL_THREADS", "2")))
    PROPERTIES[sys.argv[1]]()
    sys.stderr.write("@@done\n")
