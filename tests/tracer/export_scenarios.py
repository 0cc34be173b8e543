"""Traces the export tests and the real-importer tests share: a blocked wait, a record/wait
loop and a deadlock (an event cycle whose records are queued behind the waits)."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import acl_lab
from acl_lab import DeadlockError
from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_DEVICE_TO_DEVICE
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace
from tests.acl.test_deadlocks import event_cycle
from tests.helpers import ok

BIG = 1 << 22  # a copy long enough that the other stream's wait is blocked behind it


def traced(program: Callable[[ModuleType], None]) -> Trace:
    """The finished trace of ``program(acl)`` run in a fresh Session."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            program(acl)
            return s.finish()
        finally:
            acl_lab.uninstall()


def blocked_wait(acl: ModuleType) -> None:
    """s2 waits for a record that s1 makes after a long copy: the wait starts first."""
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    ev = ok(acl.rt.create_event())
    a = ok(acl.rt.malloc(BIG, ACL_MEM_MALLOC_NORMAL_ONLY))
    b = ok(acl.rt.malloc(BIG, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy_async(b, BIG, a, BIG, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == 0
    assert acl.rt.record_event(ev, s1) == 0
    assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.memcpy_async(a, BIG, b, BIG, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
    assert acl.rt.synchronize_stream(s2) == 0
    for p in (a, b):
        assert acl.rt.free(p) == 0
    assert acl.rt.destroy_event(ev) == 0
    for s in (s1, s2):
        assert acl.rt.destroy_stream(s) == 0
    assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0


def record_wait_loop(n: int) -> Callable[[ModuleType], None]:
    """``n`` iterations of record on s1, wait on s2 (one arrow each)."""

    def program(acl: ModuleType) -> None:
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
        ev = ok(acl.rt.create_event())
        for _ in range(n):
            acl.rt.record_event(ev, s1)
            acl.rt.stream_wait_event(s2, ev)
        assert acl.rt.synchronize_stream(s2) == 0
        assert acl.rt.destroy_event(ev) == 0
        for s in (s1, s2):
            assert acl.rt.destroy_stream(s) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0

    return program


def deadlock(acl: ModuleType) -> None:
    """An event cycle: synchronize_stream raises DeadlockError; the program goes on a little
    (on hardware it would hang there forever) and ends."""
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    t1, _ = event_cycle(acl)
    try:
        acl.rt.synchronize_stream(t1)
    except DeadlockError:
        pass
    else:
        raise AssertionError("the event cycle did not deadlock")
    host = ok(acl.rt.malloc_host(64))
    assert acl.rt.free_host(host) == 0
