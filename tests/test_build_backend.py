"""The PEP 517 backend (build_backend/portable_wheels.py) asks maturin for a
manylinux2014 wheel through zig on glibc Linux x86_64/aarch64, and leaves
every other case to maturin's defaults; its editable build (the test
command's) adds the test-layers cargo feature. maturin itself is replaced by a
recorder here; .ci/wheel_check builds the real wheel."""

import importlib.util
import sys
import types
from pathlib import Path

import pytest

BACKEND = Path(__file__).resolve().parents[1] / "build_backend" / "portable_wheels.py"


@pytest.fixture
def backend(monkeypatch):
    calls = []
    fake = types.ModuleType("maturin")
    fake.build_wheel = lambda d, cs=None, md=None: calls.append(("wheel", cs)) or "x.whl"
    fake.get_requires_for_build_wheel = lambda cs=None: ["puccinialin"] if cs == {"rust": "missing"} else []
    for hook in ("build_editable", "build_sdist", "get_requires_for_build_editable", "get_requires_for_build_sdist",
                 "prepare_metadata_for_build_wheel"):
        setattr(fake, hook, getattr(fake, "build_wheel"))
    monkeypatch.setitem(sys.modules, "maturin", fake)
    monkeypatch.delenv("MATURIN_PEP517_ARGS", raising=False)
    spec = importlib.util.spec_from_file_location("portable_wheels_under_test", BACKEND)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.calls = calls
    return mod


def on(monkeypatch, mod, system="linux", libc="glibc", machine="x86_64"):
    monkeypatch.setattr(mod.sys, "platform", system)
    monkeypatch.setattr(mod.platform, "libc_ver", lambda: (libc, "2.36"))
    monkeypatch.setattr(mod.platform, "machine", lambda: machine)


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_glibc_linux_gets_a_manylinux2014_wheel_through_zig(backend, monkeypatch, machine):
    on(monkeypatch, backend, machine=machine)
    assert backend.build_wheel("dist", {"other": "1"}) == "x.whl"
    assert backend.calls == [("wheel", {"other": "1", "maturin.build-args": ["--compatibility", "manylinux2014",
                                                                           "--zig"]})]
    assert backend.get_requires_for_build_wheel() == ["ziglang>=0.17,<0.18"]
    assert backend.get_requires_for_build_wheel({"rust": "missing"}) == ["puccinialin", "ziglang>=0.17,<0.18"]


@pytest.mark.parametrize("where", [dict(system="darwin", libc=""), dict(system="win32", libc=""),
                                   dict(libc="musl"), dict(libc=""), dict(machine="ppc64le")])
def test_other_platforms_keep_maturins_defaults(backend, monkeypatch, where):
    on(monkeypatch, backend, **where)
    backend.build_wheel("dist", None)
    assert backend.calls == [("wheel", None)]
    assert backend.get_requires_for_build_wheel() == []


def test_chosen_build_arguments_are_kept(backend, monkeypatch):
    on(monkeypatch, backend)
    backend.build_wheel("dist", {"build-args": "--compatibility off"})
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "--compatibility off")
    backend.build_wheel("dist", None)
    assert backend.calls == [("wheel", {"build-args": "--compatibility off"}), ("wheel", None)]
    assert backend.get_requires_for_build_wheel() == []


def test_sdist_is_maturins(backend):
    import maturin

    assert backend.build_sdist is maturin.build_sdist


def test_editable_build_is_the_test_build(backend, monkeypatch):
    # The editable install (the test command) compiles the test-only
    # bindings (the test-layers feature) on every platform; explicit build
    # arguments are kept as given.
    on(monkeypatch, backend, system="darwin", libc="")
    backend.build_editable("dist", {"other": "1"})
    backend.build_editable("dist", {"build-args": "--features python"})
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "--release")
    backend.build_editable("dist", None)
    assert backend.calls == [
        ("wheel", {"other": "1", "maturin.build-args": ["--features", "python,test-layers"]}),
        ("wheel", {"build-args": "--features python"}),
        ("wheel", None),
    ]
