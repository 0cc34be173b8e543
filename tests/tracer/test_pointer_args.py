"""Pointer arguments are recorded relative to their allocation. The recorder answers the
start of a live allocation from its own start -> allocs row map (no second resolution);
this checks that map through a free, the reuse of the address and a host buffer."""

from __future__ import annotations

import acl_lab
from acl_lab import Session


def test_pointer_rows_across_free_reuse_and_a_host_buffer() -> None:
    with Session() as s:
        acl = acl_lab.install(s)
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        p, _ = acl.rt.malloc(1024, 0)
        acl.rt.memset(p, 1024, 0, 1024)            # allocs row 0, at its start
        acl.rt.memset(p + 8, 1016, 0, 16)          # inside it: offset 8
        acl.rt.free(p)
        acl.rt.memset(p, 1024, 0, 1024)            # use after free: still row 0
        q, _ = acl.rt.malloc(1024, 0)              # the same address, a new allocation
        acl.rt.memset(q, 1024, 0, 1024)
        data = bytes(range(64))
        h = acl.util.bytes_to_ptr(data)            # a pageable region with a row of its own
        acl.rt.memcpy(q, 64, h, 64, 1)
        acl.rt.free(q)
        acl.rt.reset_device(0)
        acl.finalize()
        trace = s.finish()
    memsets = trace.calls_named("acl.rt.memset")
    args = [trace.call_args(int(c))[0] for c in memsets]
    assert q == p
    assert args == [("ptr", 0, 0), ("ptr", 0, 8), ("ptr", 0, 0), ("ptr", 1, 0)]
    copy = trace.call_args(int(trace.calls_named("acl.rt.memcpy")[0]))
    assert copy[0] == ("ptr", 1, 0)
    assert copy[2][0] == "ptr" and copy[2][1] == 2 and copy[2][2] == 0
    assert int(trace.allocs["kind"][2]) == 3  # host pageable
