"""acl_lab.hardware, behind notebook 09: C names of a trace's calls, the emulator's differences."""

from __future__ import annotations

import inspect
from types import ModuleType

from acl_lab import hardware
from acl_lab.acl import _boundary
from acl_lab.runtime.session import Session


def test_differences_are_the_docstrings_own_sentences() -> None:
    reg = _boundary.registry()
    got = hardware.differences()
    assert sorted(got) == sorted(reg)
    assert all(got.values()), [n for n, t in got.items() if not t]
    doc = " ".join((inspect.getdoc(reg["acl.rt.malloc"]["impl"]) or "").split())
    assert got["acl.rt.malloc"] and doc.endswith(got["acl.rt.malloc"])
    assert "reads as zero" in got["acl.rt.malloc"]


def test_as_references_are_completed_and_unknown_names_said() -> None:
    got = hardware.differences(["acl.mdl.execute_async", "acl.rt.free_host", "acl.nope"])
    assert list(got) == ["acl.mdl.execute_async", "acl.rt.free_host", "acl.nope"]
    execute = hardware.differences(["acl.mdl.execute"])["acl.mdl.execute"]
    assert got["acl.mdl.execute_async"] == f"as acl.mdl.execute: {execute}"
    assert got["acl.rt.free_host"].startswith("as acl.rt.free: ")
    assert len(got["acl.rt.free_host"]) > len("as acl.rt.free: ") + 10
    assert got["acl.nope"] == "(not emulated)"


def test_c_calls_in_first_use_order_with_counts(ready: ModuleType, session: Session) -> None:
    for _ in range(3):
        ptr, ret = ready.rt.malloc(64, 0)
        assert ret == 0
        assert ready.rt.free(ptr) == 0
    ready.util.bytes_to_ptr(b"abc")
    assert hardware.c_calls(session.trace()) == [
        ("acl.init", "aclInit", 1), ("acl.rt.set_device", "aclrtSetDevice", 1),
        ("acl.rt.malloc", "aclrtMalloc", 3), ("acl.rt.free", "aclrtFree", 3),
        ("acl.util.bytes_to_ptr", "(pyACL only)", 1)]
