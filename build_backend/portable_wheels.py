"""The PEP 517 build backend: maturin's, with portable Linux wheels by default.

Through pip (``pip wheel .``, ``pip install .``) maturin's backend tags a
wheel ``linux_x86_64`` (it passes ``--compatibility off``): a tag PyPI
refuses and that pip on another distribution may not trust. On a glibc Linux
this backend asks maturin for a manylinux2014 wheel instead
(``--compatibility manylinux2014 --zig``): zig links against glibc 2.17's
symbols, so the library runs on any distribution since 2014, and maturin's
own auditwheel check verifies the tag before writing it (it refuses to build
otherwise). ``ziglang`` is then an extra build requirement.

An editable install (``pip install -e '.[test]'``, the test command) is the
developer's build: it adds the ``test-layers`` cargo feature, which compiles
the recognizer's single-layer bindings that only the per-layer parity tests
call (``_core.rec_conv_block``, ...); the wheel and the sdist never have them.

Everything else is maturin's backend unchanged. Build arguments given
explicitly (``--config-settings build-args=...`` or ``MATURIN_PEP517_ARGS``)
replace the default of either hook, e.g. ``MATURIN_PEP517_ARGS="--compatibility
off"`` for a host-linked wheel without zig. See docs/install.md.
"""

from __future__ import annotations

import os
import platform
import sys

import maturin
from maturin import (  # noqa: F401 (the hooks used unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_wheel,
)

#: The zig versions this configuration was verified with (docs/install.md).
ZIG = "ziglang>=0.17,<0.18"
PORTABLE_ARGS = ["--compatibility", "manylinux2014", "--zig"]
#: The editable (test) build's features: the bindings' and the test-only ones
#: (Cargo.toml). Listed whole, so that the result does not depend on whether
#: maturin adds command-line features to pyproject.toml's or replaces them.
TEST_ARGS = ["--features", "python,test-layers"]


def _portable() -> bool:
    """A glibc Linux on x86_64 or aarch64 (the machines this was verified
    for) on which nobody chose the build arguments."""
    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc" \
        and platform.machine() in ("x86_64", "aarch64") and not os.environ.get("MATURIN_PEP517_ARGS")


def _explicit(config_settings) -> bool:
    return bool(config_settings) and ("build-args" in config_settings or "maturin.build-args" in config_settings)


def get_requires_for_build_wheel(config_settings=None):
    extra = [ZIG] if _portable() and not _explicit(config_settings) else []
    return maturin.get_requires_for_build_wheel(config_settings) + extra


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if _portable() and not _explicit(config_settings):
        config_settings = {**(config_settings or {}), "maturin.build-args": list(PORTABLE_ARGS)}
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    if not _explicit(config_settings) and not os.environ.get("MATURIN_PEP517_ARGS"):
        config_settings = {**(config_settings or {}), "maturin.build-args": list(TEST_ARGS)}
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
