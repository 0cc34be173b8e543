"""Deadlocks: where real ACL would hang forever, the emulator raises acl_lab.DeadlockError.

The architecture (section 2/3) documents this as the one place that raises instead of
returning a code; ``*_with_timeout`` calls return 507046 instead. Every test is bounded by a
timeout mark; the session fixture's watchdog is 2 s.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from acl_lab import DeadlockError
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_CALLBACK_NO_BLOCK,
    ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime import rawsync
from acl_lab.runtime.kinds import Turn
from acl_lab.runtime.session import Session
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve()
MiB = 1 << 20



def next_line() -> int:
    """The line number just after the caller's line (the call a test is about to make)."""
    return sys._getframe(1).f_lineno + 1


def noop(_: object) -> None:
    """A callback that does nothing."""


def by_watchdog(err: DeadlockError) -> bool:
    """Whether ``err`` came from the watchdog (no progress for ``session.watchdog`` s of real
    time, every thread's stack attached) rather than from a proof that the wait is hopeless.

    Tests tell the two apart by this, never by timing the call: a busy machine stretches
    real time, not the proof.
    """
    return "(watchdog)" in err.summary or bool(err.stacks)


def wait_for_state(session: Session, tid: int, state: str, steps: int = 100_000) -> None:
    """Let the host schedule run until thread ``tid`` waits inside the emulator.

    ``state`` is "blocked" (a wait without timeout) or "polling" (a timed wait). The calling
    thread sleeps 0.1 ms of virtual time per step, a scheduling point that gives the turn to
    threads whose clocks are behind: no real time passes, and the schedule is the same on
    every run.
    """
    for _ in range(steps):
        with session.lock:
            th = next((h for t, h in session.threads.items() if t.ident == tid), None)
            w = th.sched_wait if th is not None else None
            if th is not None and th.turn == Turn.BLOCKED and w is not None \
                    and (w.deadline < 0) == (state == "blocked"):
                return
        time.sleep(0.0001)
    raise AssertionError(f"thread {tid} never reached state {state!r}")


# ----------------------------------------------------------------------------- scenarios
# Each builds a stream that can never drain, in the main thread alone, and returns it.


def blocked_by_exited_subscriber(acl: ModuleType) -> int:
    """A blocking callback on a stream whose subscribed report thread has already exited."""
    stream = ok(acl.rt.create_stream())
    go = threading.Event()
    tid = ok(acl.util.start_thread(lambda: go.wait(10), None))
    assert acl.rt.subscribe_report(tid, stream) == ACL_SUCCESS
    go.set()
    assert acl.util.stop_thread(tid) == ACL_SUCCESS
    assert acl.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS
    return stream


def blocked_by_own_subscription(acl: ModuleType) -> int:
    """A blocking callback subscribed to the main thread, which then waits for the stream."""
    stream = ok(acl.rt.create_stream())
    assert acl.rt.subscribe_report(threading.get_ident(), stream) == ACL_SUCCESS
    assert acl.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS
    return stream


def waits_on_reset_event(acl: ModuleType) -> int:
    """Stream 3 reaches its wait only after stream 2 has reset the event (C-doc 07 figure)."""
    s1, s2, s3 = (ok(acl.rt.create_stream()) for _ in range(3))
    event = ok(acl.rt.create_event_with_flag(ACL_EVENT_SYNC))
    assert acl.rt.record_event(event, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert acl.rt.reset_event(event, s2) == ACL_SUCCESS
    n = 32 * MiB  # keeps stream 3 busy long after the reset
    host = ok(acl.rt.malloc_host(n))
    dev = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, s3) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s3, event) == ACL_SUCCESS
    return s3


def event_cycle(acl: ModuleType) -> tuple[int, int]:
    """Two streams each waiting for a record the other can only make after its own wait.

    Both events are recorded, then reset on a third stream, so each later wait needs a *new*
    record; those new records are queued behind the other stream's wait: a cycle.
    """
    a, b = (ok(acl.rt.create_event_with_flag(ACL_EVENT_SYNC)) for _ in range(2))
    t1, t2, resetter = (ok(acl.rt.create_stream()) for _ in range(3))
    assert acl.rt.record_event(a, t1) == ACL_SUCCESS
    assert acl.rt.record_event(b, t2) == ACL_SUCCESS
    assert acl.rt.reset_event(a, resetter) == ACL_SUCCESS
    assert acl.rt.reset_event(b, resetter) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(t1, b) == ACL_SUCCESS
    assert acl.rt.record_event(a, t1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(t2, a) == ACL_SUCCESS
    assert acl.rt.record_event(b, t2) == ACL_SUCCESS
    return t1, t2


SCENARIOS: list[Callable[[ModuleType], int]] = [
    blocked_by_exited_subscriber, blocked_by_own_subscription, waits_on_reset_event,
    lambda acl: event_cycle(acl)[0],
]
IDS = ["exited_subscriber", "own_subscription", "reset_event", "event_cycle"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_hopeless_synchronize_raises_deadlock_error(ready: ModuleType, session: Session,
                                                    scenario: Callable[[ModuleType], int]
                                                    ) -> None:
    """synchronize_stream on a stream that can never drain raises DeadlockError at once."""
    stream = scenario(ready)
    with pytest.raises(DeadlockError) as info:
        ready.rt.synchronize_stream(stream)
    assert not by_watchdog(info.value)  # proven stuck, not the watchdog


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_hopeless_synchronize_with_timeout_returns_507046(
        ready: ModuleType, scenario: Callable[[ModuleType], int]) -> None:
    """synchronize_stream_with_timeout returns 507046 instead of raising."""
    stream = scenario(ready)
    assert ready.rt.synchronize_stream_with_timeout(stream, 100) == \
        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_timeout_minus_one_waits_forever_so_it_raises(
        ready: ModuleType, scenario: Callable[[ModuleType], int]) -> None:
    """synchronize_stream_with_timeout(s, -1) means forever: DeadlockError, like plain sync."""
    stream = scenario(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream_with_timeout(stream, -1)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_deadlock_report_names_thread_and_call_site(ready: ModuleType,
                                                    scenario: Callable[[ModuleType], int]
                                                    ) -> None:
    """The report names the stuck thread and the file:line of the waiting call."""
    stream = scenario(ready)
    with pytest.raises(DeadlockError) as info:
        line = next_line()
        ready.rt.synchronize_stream(stream)
    err = info.value
    assert Path(err.file).resolve() == HERE and err.line == line
    assert threading.current_thread().name in err.thread
    assert f"{err.file}:{line}" in err.report
    assert threading.current_thread().name in err.report
    assert str(err) == err.report


def test_deadlock_is_recorded_in_the_trace(ready: ModuleType, session: Session) -> None:
    """The failed synchronize_stream is a call in the trace with a deadlock diagnostic."""
    stream = blocked_by_own_subscription(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(stream)
    trace = session.trace()
    last = trace.calls.rows - 1
    assert trace.call_name(last) == "acl.rt.synchronize_stream"
    assert trace.calls["ret"][last] != ACL_SUCCESS
    kinds = {trace.string(int(k)) for k in trace.diags["kind"]}
    assert "deadlock" in kinds


def test_cycle_report_names_both_streams(ready: ModuleType) -> None:
    """The explanation of a two-stream event cycle names both streams of the cycle."""
    t1, t2 = event_cycle(ready)
    with pytest.raises(DeadlockError) as info:
        ready.rt.synchronize_stream(t1)
    assert f"{t1:#x}" in info.value.report
    assert f"{t2:#x}" in info.value.report


def test_stuck_stream_can_still_be_resolved_by_the_main_thread(ready: ModuleType) -> None:
    """After the DeadlockError, process_report in the subscribed thread unblocks the stream."""
    stream = blocked_by_own_subscription(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(stream)
    assert ready.rt.process_report(100) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS


def test_new_record_after_reset_unblocks_the_waiting_stream(ready: ModuleType) -> None:
    """A wait whose event was reset is satisfied by a later record_event (not a deadlock)."""
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event_with_flag(ACL_EVENT_SYNC))
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    assert ready.rt.reset_event(event, s1) == ACL_SUCCESS
    assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(s2) == ACL_SUCCESS


# ----------------------------------------------------------------------------- several threads


def test_stop_thread_of_worker_stuck_in_process_report_raises(ready: ModuleType,
                                                              session: Session) -> None:
    """Joining a worker blocked forever in process_report(-1) is a deadlock, found quickly."""
    stream = ok(ready.rt.create_stream())
    go = threading.Event()
    rets: list[int] = []

    def body() -> None:
        go.wait(10)
        rets.append(ready.rt.process_report(-1))

    tid = ok(ready.util.start_thread(body, None))
    assert ready.rt.subscribe_report(tid, stream) == ACL_SUCCESS
    go.set()
    wait_for_state(session, tid, "blocked")
    with pytest.raises(DeadlockError) as info:
        ready.util.stop_thread(tid)
    assert not by_watchdog(info.value)  # proven stuck, not the watchdog
    assert threading.current_thread().name in info.value.thread
    # Give the worker's process_report something to do; then it ends and joins cleanly.
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_NO_BLOCK, stream) == ACL_SUCCESS
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert rets == [ACL_SUCCESS]


def test_two_threads_waiting_on_each_others_callbacks(ready: ModuleType,
                                                      session: Session) -> None:
    """Main waits for stream A, whose blocking callback needs the worker; the worker waits for
    stream B, whose blocking callback needs main: DeadlockError in the thread that closes it."""
    ctx = ok(ready.rt.get_context())
    stream_a, stream_b = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.subscribe_report(threading.get_ident(), stream_b) == ACL_SUCCESS
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream_b) == ACL_SUCCESS
    stop = threading.Event()
    rets: list[int] = []

    def body() -> None:
        rets.append(ready.rt.set_context(ctx))
        rets.append(ready.rt.synchronize_stream(stream_b))  # needs main's process_report
        while not stop.is_set():
            rets.append(ready.rt.process_report(20))

    tid = ok(ready.util.start_thread(body, None))
    assert ready.rt.subscribe_report(tid, stream_a) == ACL_SUCCESS
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream_a) == ACL_SUCCESS
    wait_for_state(session, tid, "blocked")
    with pytest.raises(DeadlockError) as info:
        ready.rt.synchronize_stream(stream_a)
    assert not by_watchdog(info.value)  # proven stuck, not the watchdog
    # Main breaks the cycle: it runs B's callback, the worker then runs A's.
    assert ready.rt.process_report(1000) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream_a) == ACL_SUCCESS
    stop.set()
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert rets[:2] == [ACL_SUCCESS, ACL_SUCCESS]


def test_join_right_after_releasing_the_worker_is_not_a_deadlock(ready: ModuleType,
                                                                 session: Session) -> None:
    """A worker waiting for a callback that main then runs is free: joining it must succeed.

    The worker blocks in synchronize_stream(B), whose blocking callback is subscribed to the
    main thread. Main runs it with process_report, which releases the worker's wait, and
    joins the worker at once. The worker may not have woken up yet, but its wait is already
    satisfied, so this is not a deadlock.
    """
    ctx = ok(ready.rt.get_context())
    stream_b = ok(ready.rt.create_stream())
    assert ready.rt.subscribe_report(threading.get_ident(), stream_b) == ACL_SUCCESS
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream_b) == ACL_SUCCESS
    rets: list[int] = []

    def body() -> None:
        rets.append(ready.rt.set_context(ctx))
        rets.append(ready.rt.synchronize_stream(stream_b))

    tid = ok(ready.util.start_thread(body, None))
    wait_for_state(session, tid, "blocked")
    assert ready.rt.process_report(1000) == ACL_SUCCESS
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert rets == [ACL_SUCCESS, ACL_SUCCESS]


def test_polling_worker_is_not_a_deadlock(ready: ModuleType, session: Session) -> None:
    """Joining a worker that polls process_report(50) and then ends is not a deadlock."""
    stream = ok(ready.rt.create_stream())
    go = threading.Event()
    rets: list[int] = []

    def body() -> None:
        go.wait(10)
        for _ in range(5):
            rets.append(ready.rt.process_report(50))

    tid = ok(ready.util.start_thread(body, None))
    assert ready.rt.subscribe_report(tid, stream) == ACL_SUCCESS
    go.set()
    wait_for_state(session, tid, "polling")
    assert ready.util.stop_thread(tid) == ACL_SUCCESS  # waits while the worker polls
    assert rets == [ACL_ERROR_RT_REPORT_TIMEOUT] * 5


def test_flagged_polling_worker_stops_cleanly(ready: ModuleType, session: Session) -> None:
    """The sample's loop: poll process_report(50) until a flag is set; main sets it and joins."""
    stream = ok(ready.rt.create_stream())
    go, stop = threading.Event(), threading.Event()
    rets: list[int] = []

    def body() -> None:
        go.wait(10)
        while not stop.is_set():
            rets.append(ready.rt.process_report(50))

    tid = ok(ready.util.start_thread(body, None))
    assert ready.rt.subscribe_report(tid, stream) == ACL_SUCCESS
    go.set()
    wait_for_state(session, tid, "polling")
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    stop.set()
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert ACL_SUCCESS in rets
    assert set(rets) <= {ACL_SUCCESS, ACL_ERROR_RT_REPORT_TIMEOUT}


def test_watchdog_reports_a_wait_it_cannot_prove(ready: ModuleType, session: Session) -> None:
    """With a Python thread alive outside the schedule (a library's, not the program's) the
    emulator cannot prove a hang; the watchdog reports it after ``session.watchdog`` seconds
    of real time without progress, with every thread's stack."""
    stream = waits_on_reset_event(ready)
    release = rawsync.Event()
    bystander = threading.Thread(target=release.wait, args=(60,), name="bystander")
    bystander._acl_lab_external = True  # type: ignore[attr-defined]  # not the program's
    bystander.start()
    try:
        t0 = rawsync.monotonic()
        with pytest.raises(DeadlockError) as info:
            ready.rt.synchronize_stream(stream)
        elapsed = rawsync.monotonic() - t0
    finally:
        release.set()
        bystander.join(60)
    assert elapsed >= session.watchdog  # never early; load may only make it later
    assert by_watchdog(info.value)
    assert "bystander" in info.value.stacks
    assert "bystander" in info.value.report


def test_a_program_thread_in_a_timed_wait_does_not_hide_a_deadlock(ready: ModuleType,
                                                                 session: Session) -> None:
    """A thread of the program waiting 20 s on an Event nobody sets ends its wait in virtual
    time, so the hopeless synchronize is proven stuck at once, not by the watchdog."""
    stream = waits_on_reset_event(ready)
    release = threading.Event()
    bystander = threading.Thread(target=release.wait, args=(20,), name="bystander")
    bystander.start()
    with pytest.raises(DeadlockError) as info:
        ready.rt.synchronize_stream(stream)
    assert not by_watchdog(info.value)
    bystander.join()
    assert not bystander.is_alive()
