"""Memory findings (``acl_lab.tracer.checks.memory``): each kind, its fixed twin, grouping.

Every mistake is a minimal program run in the test's own Session; the finding must name the
line of the main call (taken from the running frame), the other lines involved, the ids, and
the key words of the rule and the fix. Each fixed twin must give no memory finding at all.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_FORMAT_ND,
    ACL_INT32,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import CHECK_MODULES, CHECKS, Finding, memory

KINDS = ("double_free", "invalid_free", "use_after_free", "free_in_flight", "out_of_bounds",
         "uninitialized_read")
THIS = str(Path(__file__).resolve())
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY


def here() -> int:
    """The caller's current line number."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def site(line: int) -> str:
    """How a message names a line of this file."""
    return f"{THIS}:{line}"


def memory_findings(session: Session) -> list[Finding]:
    """The findings of the memory checks over the session's trace so far."""
    trace = session.trace()
    return [f for check in memory.CHECKS for f in check(trace)]


def describe(findings: list[Finding]) -> str:
    """One line per finding, for assertion messages."""
    return "\n".join(str(f) for f in findings) or "(no findings)"


def only(session: Session, kind: str) -> Finding:
    """The single memory finding of the session, asserting it has ``kind``."""
    found = memory_findings(session)
    assert len(found) == 1, describe(found)
    f = found[0]
    assert f.kind == kind, describe(found)
    assert Path(f.file).resolve() == Path(THIS)
    assert f.severity in ("error", "warning", "info")
    assert set(f.ids) == {"allocs", "tasks"}
    assert f.sites[0] == (f.file, f.line)
    return f


def assert_clean(session: Session) -> None:
    """No memory finding at all (the fixed twin)."""
    found = memory_findings(session)
    assert found == [], describe(found)


def alloc_row(session: Session, line: int) -> int:
    """The allocs row of the (single) allocation made at ``line`` of this file."""
    trace = session.trace()
    rows = [i for i in range(trace.allocs.rows)
            if trace.call_site(int(trace.allocs["call"][i])) == (THIS, line)]
    assert len(rows) == 1, rows
    return rows[0]


def call_at(session: Session, line: int) -> list[int]:
    """Ids of the calls made at ``line`` of this file."""
    trace = session.trace()
    return [c for c in range(trace.calls.rows) if trace.call_site(c) == (THIS, line)]


def test_memory_module_is_registered() -> None:
    """The memory checks run with every other check."""
    assert memory in CHECK_MODULES
    assert len(memory.CHECKS) == 7  # the six memcheck kinds and memcpy_kind_mismatch


# --------------------------------------------------------------------------- double_free
def test_double_free(ready: ModuleType, session: Session) -> None:
    """A second free of the same pointer names both frees and the allocating line."""
    acl = ready
    ptr, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    assert acl.rt.free(ptr) == 0; l_first = here()  # noqa: E702
    assert acl.rt.free(ptr) == 107000; l_second = here()  # noqa: E702
    f = only(session, "double_free")
    assert f.line == l_second
    assert site(l_first) in f.message and site(l_alloc) in f.message
    assert "already freed" in f.message and "Fix:" in f.message and "Rule:" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)
    assert set(f.calls) == set(call_at(session, l_alloc) + call_at(session, l_first)
                               + call_at(session, l_second))
    assert f.severity == "error"


def test_double_free_fixed(ready: ModuleType, session: Session) -> None:
    """One free per allocation: no finding."""
    acl = ready
    ptr, _ = acl.rt.malloc(100, NORMAL)
    assert acl.rt.free(ptr) == 0
    ptr = 0
    assert_clean(session)


def test_double_free_host(ready: ModuleType, session: Session) -> None:
    """free_host twice is a double free too."""
    acl = ready
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.free_host(host) == 0
    assert acl.rt.free_host(host) == 107000; line = here()  # noqa: E702
    f = only(session, "double_free")
    assert f.line == line and "free_host" in f.message


def test_loop_double_free_is_one_grouped_finding(ready: ModuleType, session: Session) -> None:
    """The same double free made 10 times in a loop is one finding with the count 10."""
    acl = ready
    lines = {}
    for _ in range(10):
        ptr, _ = acl.rt.malloc(256, NORMAL)
        assert acl.rt.free(ptr) == 0
        assert acl.rt.free(ptr) == 107000; lines["second"] = here()  # noqa: E702
    f = only(session, "double_free")
    assert f.line == lines["second"]
    assert "10 times" in f.message
    assert len(f.ids["allocs"]) == 10
    assert len(f.calls) == 30


# --------------------------------------------------------------------------- invalid_free
def test_free_of_pointer_into_the_middle(ready: ModuleType, session: Session) -> None:
    """free(ptr + 8) is not an address malloc returned."""
    acl = ready
    ptr, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    assert acl.rt.free(ptr + 8) == 107000; line = here()  # noqa: E702
    assert acl.rt.free(ptr) == 0
    f = only(session, "invalid_free")
    assert f.line == line
    assert "8 bytes into" in f.message and site(l_alloc) in f.message
    assert "start" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)


def test_free_of_unknown_address(ready: ModuleType, session: Session) -> None:
    """An address nothing allocated."""
    acl = ready
    assert acl.rt.free(0x1234) == 107000; line = here()  # noqa: E702
    f = only(session, "invalid_free")
    assert f.line == line
    assert "0x1234" in f.message and "no allocator handed out" in f.message
    assert f.ids == {"allocs": (), "tasks": ()}


def test_free_of_pageable_memory(ready: ModuleType, session: Session) -> None:
    """A bytes buffer is Python's: acl.rt.free refuses it."""
    acl = ready
    data = bytes(256)
    ptr = acl.util.bytes_to_ptr(data); l_ptr = here()  # noqa: E702
    assert acl.rt.free(ptr) == 107000; line = here()  # noqa: E702
    f = only(session, "invalid_free")
    assert f.line == line
    assert "pageable" in f.message and site(l_ptr) in f.message
    assert "malloc_host" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_ptr),)


@pytest.mark.parametrize(("alloc", "wrong", "right"), [
    ("malloc", "free_host", "acl.rt.free("),
    ("malloc_host", "free", "acl.rt.free_host("),
    ("dvpp_malloc", "free_host", "acl.media.dvpp_free("),
    ("malloc_host", "dvpp_free", "acl.rt.free_host("),
])
def test_free_with_the_wrong_api(ready: ModuleType, session: Session, alloc: str, wrong: str,
                                 right: str) -> None:
    """free vs free_host vs dvpp_free mixed up: the finding names the right one."""
    acl = ready
    make, args = {"malloc": (acl.rt.malloc, (128, NORMAL)),
                  "malloc_host": (acl.rt.malloc_host, (128,)),
                  "dvpp_malloc": (acl.media.dvpp_malloc, (128,))}[alloc]
    release = {"free": acl.rt.free, "free_host": acl.rt.free_host,
               "dvpp_free": acl.media.dvpp_free}
    ptr, ret = make(*args); l_alloc = here()  # noqa: E702
    assert ret == 0
    assert release[wrong](ptr) == 107000; line = here()  # noqa: E702
    f = only(session, "invalid_free")
    assert f.line == line
    assert right in f.message and site(l_alloc) in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)


@pytest.mark.parametrize(("alloc", "wrong", "right"), [
    ("dvpp_malloc", "free", "acl.media.dvpp_free("),
    ("malloc", "dvpp_free", "acl.rt.free("),
])
def test_device_and_dvpp_frees_work_for_each_other_with_a_warning(
        ready: ModuleType, session: Session, alloc: str, wrong: str, right: str) -> None:
    """aclrtFree of DVPP memory, acldvppFree of device memory: the runtime frees both (one
    driver free), so the call returns 0 and the block is gone (a second free is a double
    free); the finding is a warning naming the documented free."""
    acl = ready
    make, args = {"malloc": (acl.rt.malloc, (128, NORMAL)),
                  "dvpp_malloc": (acl.media.dvpp_malloc, (128,))}[alloc]
    release = {"free": acl.rt.free, "dvpp_free": acl.media.dvpp_free}[wrong]
    ptr, ret = make(*args); l_alloc = here()  # noqa: E702
    assert ret == 0
    assert release(ptr) == 0; line = here()  # noqa: E702
    f = only(session, "invalid_free")
    assert (f.line, f.severity) == (line, "warning")
    assert right in f.message and site(l_alloc) in f.message and "anyway" in f.message
    assert release(ptr) == 107000
    found = session.finish().findings()
    assert sorted(x.kind for x in found if x.kind != "leak") == ["double_free", "invalid_free"]
    row = alloc_row(session, l_alloc)
    assert not [x for x in found if x.kind == "leak" and row in x.ids.get("allocs", ())]


def test_invalid_frees_fixed(ready: ModuleType, session: Session) -> None:
    """Each allocator's own free, on the start address; pageable memory left to Python."""
    acl = ready
    dev, _ = acl.rt.malloc(128, NORMAL)
    host, _ = acl.rt.malloc_host(128)
    dvpp, _ = acl.media.dvpp_malloc(128)
    data = bytes(256)
    acl.util.bytes_to_ptr(data)
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0
    assert acl.media.dvpp_free(dvpp) == 0
    assert_clean(session)


# --------------------------------------------------------------------------- use_after_free
def test_use_after_free_in_memcpy(ready: ModuleType, session: Session) -> None:
    """Copying out of freed device memory: the copy's line, the free's, the malloc's."""
    acl = ready
    host, _ = acl.rt.malloc_host(100)
    dev, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    assert acl.rt.memset(dev, 100, 1, 100) == 0
    assert acl.rt.free(dev) == 0; l_free = here()  # noqa: E702
    ret = acl.rt.memcpy(host, 100, dev, 100, ACL_MEMCPY_DEVICE_TO_HOST); line = here()  # noqa: E702
    assert ret == 107000
    assert acl.rt.free_host(host) == 0
    f = only(session, "use_after_free")
    assert f.line == line
    assert site(l_free) in f.message and site(l_alloc) in f.message
    assert "after it was freed" in f.message and "107000" in f.message
    assert "Fix:" in f.message and "move the free after the last use" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)
    assert set(call_at(session, l_free)) <= set(f.calls)


def test_use_after_free_memset_async(ready: ModuleType, session: Session) -> None:
    """memset_async on a freed pointer (with an offset) is a use after free."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    dev, _ = acl.rt.malloc(256, NORMAL)
    assert acl.rt.free(dev) == 0
    assert acl.rt.memset_async(dev + 64, 64, 0, 64, stream) == 107000; line = here()  # noqa: E702
    assert acl.rt.destroy_stream(stream) == 0
    f = only(session, "use_after_free")
    assert f.line == line and "memset_async" in f.message


def test_use_after_free_fixed(ready: ModuleType, session: Session) -> None:
    """The same copy before the free: no finding."""
    acl = ready
    host, _ = acl.rt.malloc_host(100)
    dev, _ = acl.rt.malloc(100, NORMAL)
    assert acl.rt.memset(dev, 100, 1, 100) == 0
    assert acl.rt.memcpy(host, 100, dev, 100, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0
    assert_clean(session)


# --------------------------------------------------------------------------- free_in_flight
def test_free_in_flight(ready: ModuleType, session: Session) -> None:
    """Freeing the destination of a queued copy: the free, the enqueuing call, the stream."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(4096)
    dev, _ = acl.rt.malloc(4096, NORMAL); l_alloc = here()  # noqa: E702
    ret = acl.rt.memcpy_async(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream); l_enq = here()  # noqa: E501, E702
    assert ret == 0
    assert acl.rt.free(dev) == 0; line = here()  # noqa: E702
    assert acl.rt.synchronize_stream(stream) == 507053
    f = only(session, "free_in_flight")
    assert f.line == line
    assert site(l_enq) in f.message and site(l_alloc) in f.message
    assert "memcpy_async" in f.message and "stream 0x" in f.message
    assert "synchronize_stream" in f.message and "event" in f.message
    trace = session.trace()
    (task,) = f.ids["tasks"]
    assert trace.call_site(int(trace.tasks["call"][task])) == (THIS, l_enq)
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)
    assert set(call_at(session, l_enq)) <= set(f.calls)
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_free_in_flight_of_a_source_buffer(ready: ModuleType, session: Session) -> None:
    """Freeing the device source of a queued device-to-host copy is also in flight."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(4096)
    dev, _ = acl.rt.malloc(4096, NORMAL)
    assert acl.rt.memset(dev, 4096, 0, 4096) == 0
    assert acl.rt.memcpy_async(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.free(dev) == 0; line = here()  # noqa: E702
    acl.rt.synchronize_stream(stream)
    f = only(session, "free_in_flight")
    assert f.line == line


@pytest.mark.parametrize("wait", ["stream", "event"])
def test_free_in_flight_fixed(ready: ModuleType, session: Session, wait: str) -> None:
    """Synchronizing the stream, or an event recorded after the copy, before the free."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(4096)
    dev, _ = acl.rt.malloc(4096, NORMAL)
    assert acl.rt.memcpy_async(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(host, 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    if wait == "stream":
        assert acl.rt.synchronize_stream(stream) == 0
    else:
        assert acl.rt.record_event(event, stream) == 0
        assert acl.rt.synchronize_event(event) == 0
    assert acl.rt.free(dev) == 0
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert_clean(session)


# --------------------------------------------------------------------------- out_of_bounds
def test_out_of_bounds_memcpy(ready: ModuleType, session: Session) -> None:
    """A synchronous copy that runs 32 bytes past the usable end (160 bytes for 100)."""
    acl = ready
    host, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    ret = acl.rt.memcpy(dev + 128, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE); line = here()  # noqa: E702
    assert ret == 507053
    f = only(session, "out_of_bounds")
    assert f.line == line
    assert "32 bytes past" in f.message and "160 bytes" in f.message
    assert site(l_alloc) in f.message and "allocate at least" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)
    assert len(f.ids["tasks"]) == 1


def test_out_of_bounds_memset_and_async_copy(ready: ModuleType, session: Session) -> None:
    """memset past the end and a queued copy past the end: one finding at each line."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(256)
    dev, _ = acl.rt.malloc(100, NORMAL)
    assert acl.rt.memset(dev, 300, 0, 300) == 507053; l_set = here()  # noqa: E702
    ret = acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, stream); l_cp = here()  # noqa: E702
    assert ret == 0
    assert acl.rt.synchronize_stream(stream) == 507053
    found = memory_findings(session)
    assert sorted((f.kind, f.line) for f in found) == [("out_of_bounds", l_set),
                                                       ("out_of_bounds", l_cp)], describe(found)
    by_line = {f.line: f for f in found}
    assert "140 bytes past" in by_line[l_set].message
    assert "96 bytes past" in by_line[l_cp].message


def test_out_of_bounds_host_memset_async(ready: ModuleType, session: Session) -> None:
    """memset_async of pinned host memory is done at once: refused with no task."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(64); l_alloc = here()  # noqa: E702
    assert acl.rt.memset_async(host, 128, 0, 128, stream) == 507053; line = here()  # noqa: E702
    f = only(session, "out_of_bounds")
    assert f.line == line and "64 bytes past" in f.message
    assert f.ids == {"allocs": (alloc_row(session, l_alloc),), "tasks": ()}


def _add_op(acl: ModuleType, out_ptr: int, out_size: int) -> int:
    """Queue Add over two int32[64] device tensors into ``out_ptr``; return the stream."""
    n = 64
    data = np.arange(n, dtype=np.int32).tobytes()
    descs, bufs = [], []
    for _ in range(2):
        ptr, _ = acl.rt.malloc(len(data), NORMAL)
        assert acl.rt.memcpy(ptr, len(data), acl.util.bytes_to_ptr(data), len(data),
                             ACL_MEMCPY_HOST_TO_DEVICE) == 0
        descs.append(acl.create_tensor_desc(ACL_INT32, [n], ACL_FORMAT_ND))
        bufs.append(acl.create_data_buffer(ptr, len(data)))
    out_desc = acl.create_tensor_desc(ACL_INT32, [n], ACL_FORMAT_ND)
    out_buf = acl.create_data_buffer(out_ptr, out_size)
    stream, _ = acl.rt.create_stream()
    attr = acl.op.create_attr()
    assert acl.op.execute_v2("Add", descs, bufs, [out_desc], [out_buf], attr, stream) == 0
    return int(stream)


def test_out_of_bounds_op_output(ready: ModuleType, session: Session) -> None:
    """An op whose output data buffer claims more bytes than its allocation holds."""
    acl = ready
    out, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    stream = _add_op(acl, out, 256)
    assert acl.rt.synchronize_stream(stream) == 507053
    found = memory_findings(session)
    assert [f.kind for f in found] == ["out_of_bounds"], describe(found)
    f = found[0]
    assert session.trace().call_name(f.calls[0]) == "acl.op.execute_v2"
    assert "96 bytes past" in f.message and site(l_alloc) in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)


def test_out_of_bounds_fixed(ready: ModuleType, session: Session) -> None:
    """The same copies, memsets and op within their allocations: no finding."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(256)
    dev, _ = acl.rt.malloc(256, NORMAL)
    assert acl.rt.memset(dev, 256, 0, 256) == 0
    assert acl.rt.memcpy(dev + 128, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE) == 0
    assert acl.rt.memcpy_async(dev, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memset_async(host, 64, 0, 64, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    out, _ = acl.rt.malloc(256, NORMAL)
    op_stream = _add_op(acl, out, 256)
    assert acl.rt.synchronize_stream(op_stream) == 0
    assert_clean(session)


# --------------------------------------------------------------------------- uninitialized_read
def test_uninitialized_read(ready: ModuleType, session: Session) -> None:
    """Copying device memory back before anything wrote it."""
    acl = ready
    host, _ = acl.rt.malloc_host(100)
    dev, _ = acl.rt.malloc(100, NORMAL); l_alloc = here()  # noqa: E702
    ret = acl.rt.memcpy(host, 100, dev, 100, ACL_MEMCPY_DEVICE_TO_HOST); line = here()  # noqa: E702
    assert ret == 0
    f = only(session, "uninitialized_read")
    assert f.line == line and f.severity == "warning"  # a copy of nothing but garbage
    assert "100 bytes" in f.message and site(l_alloc) in f.message
    assert "never" in f.message or "nothing had written" in f.message
    assert "memset" in f.message
    assert f.ids["allocs"] == (alloc_row(session, l_alloc),)
    assert len(f.ids["tasks"]) == 1


def test_partly_uninitialized_read(ready: ModuleType, session: Session) -> None:
    """memset of 60 bytes, then a copy of 100: 40 bytes were never written."""
    acl = ready
    host, _ = acl.rt.malloc_host(100)
    dev, _ = acl.rt.malloc(100, NORMAL)
    assert acl.rt.memset(dev, 100, 7, 60) == 0
    ret = acl.rt.memcpy(host, 100, dev, 100, ACL_MEMCPY_DEVICE_TO_HOST); line = here()  # noqa: E702
    assert ret == 0
    f = only(session, "uninitialized_read")
    assert f.line == line and "40 bytes" in f.message
    # a copy moving some never-written bytes beside written ones is not itself a bug
    assert f.severity == "info" and "not itself a bug" in f.message


def test_loop_uninitialized_reads_grouped(ready: ModuleType, session: Session) -> None:
    """Ten reads of fresh buffers from one line: one finding with the count 10."""
    acl = ready
    host, _ = acl.rt.malloc_host(64)
    lines = {}
    for _ in range(10):
        dev, _ = acl.rt.malloc(64, NORMAL)
        acl.rt.memcpy(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST); lines["read"] = here()  # noqa: E702
        assert acl.rt.free(dev) == 0
    f = only(session, "uninitialized_read")
    assert f.line == lines["read"]
    assert "10 times" in f.message
    assert len(f.ids["tasks"]) == 10 and len(f.ids["allocs"]) == 10


def test_uninitialized_read_fixed(ready: ModuleType, session: Session) -> None:
    """Writing the buffer first (memset or a copy in) then reading it: no finding."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(100)
    a, _ = acl.rt.malloc(100, NORMAL)
    b, _ = acl.rt.malloc(100, NORMAL)
    assert acl.rt.memset(a, 100, 0, 100) == 0
    assert acl.rt.memcpy(host, 100, a, 100, ACL_MEMCPY_DEVICE_TO_HOST) == 0
    assert acl.rt.memcpy_async(b, 100, host, 100, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.memcpy_async(host, 100, b, 100, ACL_MEMCPY_DEVICE_TO_HOST, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert_clean(session)


# --------------------------------------------------------------------------- Finding API
def test_memory_findings_summaries(ready: ModuleType, session: Session) -> None:
    """Every memory kind in one trace; each ``to_summary()`` has the schema, each HTML renders."""
    acl = ready
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(256)
    a, _ = acl.rt.malloc(100, NORMAL)
    acl.rt.memcpy(host, 100, a, 100, ACL_MEMCPY_DEVICE_TO_HOST)        # uninitialized_read
    acl.rt.memset(a, 300, 0, 300)                                       # out_of_bounds
    acl.rt.free(a + 4)                                                  # invalid_free
    acl.rt.memcpy_async(a, 100, host, 100, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    acl.rt.free(a)                                                      # free_in_flight
    acl.rt.synchronize_stream(stream)
    acl.rt.free(a)                                                      # double_free
    acl.rt.memset(a, 100, 0, 100)                                       # use_after_free
    found = memory_findings(session)
    assert sorted(f.kind for f in found) == sorted(KINDS), describe(found)
    for f in found:
        summary = f.to_summary()
        assert set(summary) == {"kind", "severity", "message", "file", "line"}
        assert summary["kind"] in KINDS and summary["severity"] in ("error", "warning")
        assert Path(summary["file"]).resolve() == Path(THIS)
        assert type(summary["line"]) is int and summary["line"] > 0
        assert f.kind in f._repr_html_()
        assert f.calls and all(isinstance(c, int) for c in f.calls)
    # Every check of the package runs the memory checks.
    assert all(c in CHECKS for c in memory.CHECKS)


def test_clean_pipeline_has_no_memory_findings(ready: ModuleType, session: Session) -> None:
    """Two streams, an event, pinned and pageable buffers, synchronised frees: nothing."""
    acl = ready
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    event, _ = acl.rt.create_event()
    data = np.arange(256, dtype=np.float32)
    nbytes = data.nbytes
    host, _ = acl.rt.malloc_host(nbytes)
    for _ in range(3):
        d1, _ = acl.rt.malloc(nbytes, NORMAL)
        d2, _ = acl.rt.malloc(nbytes, NORMAL)
        assert acl.rt.memcpy(d1, nbytes, acl.util.bytes_to_ptr(data.tobytes()), nbytes,
                             ACL_MEMCPY_HOST_TO_DEVICE) == 0
        assert acl.rt.memcpy_async(d2, nbytes, d1, nbytes, 3, s1) == 0
        assert acl.rt.record_event(event, s1) == 0
        assert acl.rt.stream_wait_event(s2, event) == 0
        assert acl.rt.memcpy_async(host, nbytes, d2, nbytes, ACL_MEMCPY_DEVICE_TO_HOST,
                                   s2) == 0
        assert acl.rt.synchronize_stream(s2) == 0
        assert acl.rt.synchronize_stream(s1) == 0
        assert acl.rt.free(d1) == 0
        assert acl.rt.free(d2) == 0
    out = bytes(nbytes)
    assert acl.rt.memcpy(acl.util.bytes_to_ptr(out), nbytes, host, nbytes, 0) == 0
    assert np.array_equal(np.frombuffer(out, dtype=np.float32), data)
    assert acl.rt.free_host(host) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(s1) == 0
    assert acl.rt.destroy_stream(s2) == 0
    assert_clean(session)
