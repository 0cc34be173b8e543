"""Ordering findings: races (vector clocks), waits before records, and deadlock reports.

Each test is a minimal program run with the ``ready`` fixture; the line a finding must point
at is taken with ``next_line()`` just before the call.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Any

import pytest

from acl_lab import DeadlockError
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import Finding
from acl_lab.tracer.checks.ordering import deadlocks, races, waits_before_record
from tests.acl.test_deadlocks import event_cycle
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

N = 4096
D2D = ACL_MEMCPY_DEVICE_TO_DEVICE



def next_line() -> int:
    """The line number just after the caller's line (the call a test is about to make)."""
    return sys._getframe(1).f_lineno + 1


def buffers(acl: ModuleType, n: int = 3) -> list[int]:
    """``n`` device buffers, the first one initialised from the host."""
    host = ok(acl.rt.malloc_host(N))
    devs = [ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(n)]
    assert acl.rt.memcpy(devs[0], N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    return devs


def race_findings(session: Session) -> list[Finding]:
    """The race findings of the session's trace so far."""
    return races(session.trace())


# ----------------------------------------------------------------------------- races
def test_missing_wait_between_two_streams_is_one_race(ready: ModuleType,
                                                      session: Session) -> None:
    """Copy A->B on stream 1, B->C on stream 2 with no event: one race naming both."""
    a, c = buffers(ready, 2)
    alloc_line = next_line()
    b = ok(ready.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    x = next_line()
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    y = next_line()
    assert ready.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
    ready.rt.synchronize_stream(s1)
    ready.rt.synchronize_stream(s2)
    (f,) = race_findings(session)
    assert (f.kind, f.severity, f.line) == ("race", "error", y)
    assert [ln for _, ln in f.sites[:2]] == [x, y]
    assert f"{__file__}:{x}" in f.message and f"{__file__}:{y}" in f.message
    assert f"{__file__}:{alloc_line}" in f.message  # where B was allocated
    assert "read-after-write" in f.message
    assert len(f.ids["streams"]) == 2
    for handle in (s1, s2):
        assert f"stream {handle:#x}" in f.message
    assert "acl.rt.record_event" in f.message and "acl.rt.stream_wait_event" in f.message
    assert f"after the call at line {x}" in f.message
    assert f"before the call at line {y}" in f.message


def test_record_and_wait_orders_the_streams(ready: ModuleType, session: Session) -> None:
    """The fixed twin: record on stream 1 after the copy, wait on stream 2 before: no race."""
    a, b, c = buffers(ready)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert ready.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
    ready.rt.synchronize_stream(s2)
    ready.rt.synchronize_stream(s1)
    assert race_findings(session) == []


def test_synchronize_stream_between_orders_them(ready: ModuleType, session: Session) -> None:
    """synchronize_stream(s1) between the two copies: no race."""
    a, b, c = buffers(ready)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(s1) == ACL_SUCCESS
    assert ready.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
    assert ready.rt.synchronize_device() == ACL_SUCCESS
    assert ready.rt.memcpy(b, N, c, N, D2D) == ACL_SUCCESS
    assert race_findings(session) == []


def test_synchronize_event_orders_the_host(ready: ModuleType, session: Session) -> None:
    """The host reads after synchronize_event on a record made after the copy: no race."""
    a, b = buffers(ready, 2)
    host = ok(ready.rt.malloc_host(N))
    s1 = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    assert ready.rt.synchronize_event(event) == ACL_SUCCESS
    assert ready.rt.memcpy(host, N, b, N, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    assert race_findings(session) == []


def test_host_read_without_synchronize_races_with_the_stream(ready: ModuleType,
                                                             session: Session) -> None:
    """A synchronous D2H copy of a buffer an async copy may still be writing: stream vs host."""
    a, b = buffers(ready, 2)
    host = ok(ready.rt.malloc_host(N))
    s1 = ok(ready.rt.create_stream())
    x = next_line()
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    y = next_line()
    assert ready.rt.memcpy(host, N, b, N, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    ready.rt.synchronize_stream(s1)
    (f,) = race_findings(session)
    assert (f.line, [ln for _, ln in f.sites[:2]]) == (y, [x, y])
    assert "the host (thread 0" in f.message
    assert "acl.rt.synchronize_stream" in f.message
    assert f"before the call at line {y}" in f.message


def test_write_write_race(ready: ModuleType, session: Session) -> None:
    """Two streams write the same buffer with nothing between them."""
    a, b, c = buffers(ready)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.memcpy(c, N, a, N, D2D) == ACL_SUCCESS
    x = next_line()
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    y = next_line()
    assert ready.rt.memset_async(b, N, 0, N // 2, s2) == ACL_SUCCESS
    ready.rt.synchronize_device()
    (f,) = race_findings(session)
    assert (f.line, [ln for _, ln in f.sites[:2]]) == (y, [x, y])
    assert "write-write" in f.message and f"[0, {N // 2})" in f.message


def test_reads_only_never_race(ready: ModuleType, session: Session) -> None:
    """Two streams reading the same buffer at once is fine."""
    a, b, c = buffers(ready)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.memcpy_async(c, N, a, N, D2D, s2) == ACL_SUCCESS
    ready.rt.synchronize_device()
    assert race_findings(session) == []


def test_disjoint_ranges_do_not_race(ready: ModuleType, session: Session) -> None:
    """Two streams writing different halves of one buffer do not race."""
    a, b = buffers(ready, 2)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    half = N // 2
    assert ready.rt.memcpy_async(b, half, a, half, D2D, s1) == ACL_SUCCESS
    assert ready.rt.memcpy_async(b + half, half, a, half, D2D, s2) == ACL_SUCCESS
    ready.rt.synchronize_device()
    assert race_findings(session) == []


def test_a_racing_loop_is_one_finding_with_a_count(ready: ModuleType,
                                                   session: Session) -> None:
    """Ten iterations of the same missing wait: one finding, counted ten times."""
    a, b, c = buffers(ready)
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    lines = []
    for _ in range(10):
        lines = [next_line(), next_line() + 1]
        assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
        assert ready.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
        ready.rt.synchronize_stream(s1)
        ready.rt.synchronize_stream(s2)
    (f,) = race_findings(session)
    assert [ln for _, ln in f.sites[:2]] == lines
    assert "10 times" in f.message
    assert len(f.ids["tasks"]) == 20


def test_blocking_callback_orders_the_rest_of_its_stream(ready: ModuleType,
                                                         session: Session) -> None:
    """Host work in a blocking callback happens before the stream's next task: no race."""
    a, b = buffers(ready, 2)
    host = ok(ready.rt.malloc_host(N))
    s1 = ok(ready.rt.create_stream())
    done = threading.Event()
    ctx = ok(ready.rt.get_context())

    def reporter() -> None:
        ready.rt.set_context(ctx)
        while not done.is_set():
            ready.rt.process_report(20)

    worker = threading.Thread(target=reporter)
    worker.start()
    assert ready.rt.subscribe_report(worker.ident, s1) == ACL_SUCCESS

    def callback(_: object) -> None:
        assert ready.rt.memcpy(b, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS

    assert ready.rt.launch_callback(callback, None, ACL_CALLBACK_BLOCK, s1) == ACL_SUCCESS
    assert ready.rt.memcpy_async(a, N, b, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(s1) == ACL_SUCCESS
    done.set()
    worker.join()
    assert ready.rt.unsubscribe_report(worker.ident, s1) == ACL_SUCCESS
    assert race_findings(session) == []


def run_threads(acl: ModuleType, bodies: list[Any]) -> None:
    """Run each ``body(stream)`` in its own thread with its own stream; join them all."""
    ctx = ok(acl.rt.get_context())
    errors: list[BaseException] = []

    def main(body: Any) -> None:
        try:
            assert acl.rt.set_context(ctx) == ACL_SUCCESS
            stream = ok(acl.rt.create_stream())
            body(stream)
            assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
            assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
        except BaseException as exc:  # surfaced in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=main, args=(b,)) for b in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_two_threads_writing_one_buffer_race(ready: ModuleType, session: Session) -> None:
    """Each thread queues a write to the same buffer on its own stream, no events: a race."""
    a, b, c = buffers(ready)
    line = next_line()
    body = [lambda s: ready.rt.memcpy_async(c, N, a, N, D2D, s),
            lambda s: ready.rt.memcpy_async(c, N, b, N, D2D, s)]
    run_threads(ready, body)
    (f,) = race_findings(session)
    assert [ln for _, ln in f.sites[:2]] == [line, line + 1]
    assert "write-write" in f.message and "different threads" in f.message
    assert len(f.ids["threads"]) == 2 and len(f.ids["streams"]) == 2


def test_threads_on_their_own_buffers_do_not_race(ready: ModuleType,
                                                  session: Session) -> None:
    """Shared input, one output per thread, results read after the joins: no race."""
    a, b, c = buffers(ready)
    host = ok(ready.rt.malloc_host(N))
    body = [lambda s: ready.rt.memcpy_async(b, N, a, N, D2D, s),
            lambda s: ready.rt.memcpy_async(c, N, a, N, D2D, s)]
    run_threads(ready, body)
    for out in (b, c):
        assert ready.rt.memcpy(host, N, out, N, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    assert race_findings(session) == []


# ----------------------------------------------------------------------------- waits
def test_legacy_wait_before_record_is_107000(ready: ModuleType, session: Session) -> None:
    """A legacy event waited on before any record: 107000, explained with the later record."""
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    line = next_line()
    assert ready.rt.stream_wait_event(s2, event) == 107000
    rec = next_line()
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    ready.rt.synchronize_device()
    (f,) = waits_before_record(session.trace())
    assert (f.kind, f.severity, f.line) == ("wait_before_record", "warning", line)
    assert "107000" in f.message and "record_event" in f.message
    assert "legacy" in f.message and f"{__file__}:{rec}" in f.message


def test_new_mode_wait_before_record_orders_nothing(ready: ModuleType,
                                                    session: Session) -> None:
    """A new-mode event waited on before its first record: success, but it orders nothing."""
    s2 = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event_ex_with_flag(ACL_EVENT_SYNC))
    line = next_line()
    assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    (f,) = waits_before_record(session.trace())
    assert (f.kind, f.line) == ("wait_before_record", line)
    assert "does nothing" in f.message and "orders nothing" in f.message


def test_record_then_wait_is_not_reported(ready: ModuleType, session: Session) -> None:
    """Both kinds of event, recorded first: no wait_before_record."""
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    for event in (ok(ready.rt.create_event()),
                  ok(ready.rt.create_event_ex_with_flag(ACL_EVENT_SYNC))):
        assert ready.rt.record_event(event, s1) == ACL_SUCCESS
        assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    ready.rt.synchronize_device()
    trace = session.trace()
    assert waits_before_record(trace) == [] and races(trace) == [] and deadlocks(trace) == []


# ----------------------------------------------------------------------------- deadlocks
def test_deadlock_on_a_reset_event_names_every_call(ready: ModuleType,
                                                    session: Session) -> None:
    """A wait queued after a reset: the finding walks the chain with each call's line."""
    event = ok(ready.rt.create_event_with_flag(ACL_EVENT_SYNC))
    s1, s2, s3 = (ok(ready.rt.create_stream()) for _ in range(3))
    rec = next_line()
    ready.rt.record_event(event, s1)
    ready.rt.synchronize_stream(s1)
    reset = next_line()
    ready.rt.reset_event(event, s3)
    ready.rt.synchronize_stream(s3)
    wait = next_line()
    ready.rt.stream_wait_event(s2, event)
    with pytest.raises(DeadlockError):
        line = next_line()
        ready.rt.synchronize_stream(s2)
    (f,) = deadlocks(session.trace())
    assert (f.kind, f.severity, f.line) == ("deadlock", "error", line)
    assert f"{__file__}:{line}" in f.message and "thread 0 (MainThread)" in f.message
    for ln in (wait, rec, reset):
        assert f"{__file__}:{ln}" in f.message
    assert "reset" in f.message and "Fix:" in f.message
    assert f.ids["threads"] == (0,)
    assert {ln for _, ln in f.sites} >= {line, wait, rec, reset}


def test_deadlock_cycle_names_both_streams(ready: ModuleType, session: Session) -> None:
    """Two streams waiting on each other's records: the chain closes into a cycle."""
    t1, t2 = event_cycle(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(t1)
    (f,) = deadlocks(session.trace())
    assert "cycle" in f.message
    for handle in (t1, t2):
        assert f"stream {handle:#x}" in f.message
