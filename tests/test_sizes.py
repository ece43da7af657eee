"""Sizes are checked arithmetic: a shape past what a tensor can hold is a
ValueError naming the op and the sizes, a size the machine cannot supply a
MemoryError, both before any work; never a wrapped size, a crash or a
minutes-long loop. Each case runs in a child process (tests/isolated.py), so
that the crashes these tests were written against fail the case instead of
killing the run."""

import pytest

from isolated import raises_in_child

BIG = 2**62
HUGE = 2**63 - 1

# (expression, exception, a fragment of the message). Before the checks
# each of these crashed the process (a byte size that wrapped to 0 under a
# real element count), or ran for minutes.
OVERFLOWS = [
    (f"om.zeros({BIG})", "ValueError", "zeros: shape (4611686018427387904,)"),
    (f"om.ones({BIG})", "ValueError", "ones: shape"),
    (f"om.empty({BIG})", "ValueError", "empty: shape"),
    (f"om.randn({BIG})", "ValueError", "randn: shape"),
    (f"om.rand({BIG})", "ValueError", "rand: shape"),
    (f"om.full(({BIG},), 1.0)", "ValueError", "full: shape"),
    (f"om.zeros({HUGE})", "ValueError", "zeros: shape"),
    (f"om.ones({HUGE}, dtype=om.int64)", "ValueError", "ones: shape"),
    (f"om.empty({HUGE}, dtype=om.bool)", "MemoryError", "empty"),
    (f"om.zeros(2**32, 2**32)", "ValueError", "zeros: shape (4294967296, 4294967296)"),
    (f"om.zeros(2**64)", "ValueError", "zeros: shape"),
    (f"om.randint(0, 10, ({BIG},))", "ValueError", "randint: shape"),
    (f"om.normal(0.0, 1.0, size=({BIG},))", "ValueError", "normal: shape"),
    ("om.zeros(-1)", "ValueError", "zeros: negative dimension"),
    ("om.zeros(2.0)", "TypeError", "zeros: expected a shape of ints"),
    # Views and joins: element counts past 2**63 - 1 are refused by name.
    (f"om.ones(1, 1).expand({BIG}, {BIG})", "ValueError", "expand: shape"),
    (f"om.ones(1).expand({BIG}).shape", "", ""),  # 2**62 elements of stride 0: a real view
    (f"om.zeros(0).reshape(2**40, 2**40, 0)", "", ""),
    (f"om.stack([om.ones(2), 3])", "TypeError", "stack"),
    (f"om.cat([om.ones(2), 'x'])", "TypeError", "cat"),
]


@pytest.mark.parametrize("expr,kind,fragment", OVERFLOWS, ids=[c[0] for c in OVERFLOWS])
def test_sizes_refused_by_name(expr, kind, fragment):
    got, message = raises_in_child(expr)
    assert got == kind, f"{expr}: raised {got or 'nothing'} ({message[:300]})"
    assert fragment in message, message


def test_memory_error_before_any_work():
    # 2**59 float32 elements are a representable size (2**61 bytes) that no
    # machine has: the allocator refuses, MemoryError, and the process goes on.
    got, message = raises_in_child("om.zeros(2**59)")
    assert got == "MemoryError", message
    assert "zeros" in message or "empty" in message, message
    assert "2305843009213693952 bytes" in message or "bytes" in message
    got, message = raises_in_child("om.zeros(2**59)", setup="import gc")
    got, value = raises_in_child("(om.ones(3) * 2).tolist()", setup="""
try:
    om.zeros(2**59)
except MemoryError:
    pass
""")
    assert got == "" and "list" in value


def test_interpolate_refuses_an_output_no_machine_holds():
    got, message = raises_in_child(
        "F.interpolate(om.ones(1, 1, 2, 2), size=(2**31, 2**31))", timeout=60
    )
    assert got == "ValueError", message
    assert "interpolate" in message and "2147483648" in message, message


@pytest.mark.parametrize("mode", ["bicubic", "nearest-exact", "area"])
def test_interpolate_modes_refuse_an_output_no_machine_holds(mode):
    got, message = raises_in_child(
        f"F.interpolate(om.ones(1, 1, 2, 2), size=(2**31, 2**31), mode={mode!r})", timeout=60
    )
    assert got == "ValueError", message
    assert "interpolate" in message and "2147483648" in message, message


def test_storage_binding_refuses_wrapping_sizes():
    got, message = raises_in_child("om._core.Storage.empty('float32', 2**62)")
    assert got == "ValueError" and "overflow" in message, message
    got, message = raises_in_child("om._core.Storage.empty('float32', 2**60)")
    assert got == "MemoryError", message


@pytest.mark.parametrize("expr,fragment", [
    (f"om.cat([om.ones(1).expand({BIG}), om.ones(1).expand({BIG})])", "cat: shape (9223372036854775808,)"),
    (f"F.pad(om.ones(2, 2), ({BIG}, {BIG}))", "pad: shape"),
    (f"F.conv2d(om.ones(1, 1, 2, 2), om.ones(1, 1, 1, 1), padding={2**40})", "conv2d: the output"),
    (f"F.max_pool2d(om.ones(1, 1, 4, 4), 2, padding={2**70})", "max_pool2d: padding"),
    (f"F.interpolate(om.ones(1, 1, 2, 2), scale_factor=1e300)", "interpolate: scale_factor"),
])
def test_joins_padding_and_geometry_name_the_op(expr, fragment):
    got, message = raises_in_child(expr)
    assert got == "ValueError", message
    assert fragment in message, message
