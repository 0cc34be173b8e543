"""Events: create, record, reset, wait for and time the markers of a stream.

Functions over a ``Session``. A record captures every task already submitted to its stream;
a wait task holds later tasks of its stream until the record it saw completes (and no reset
came after it). Legacy events (``create_event`` / ``create_event_with_flag``) and new-mode
ones (``create_event_ex_with_flag``) differ in what an unrecorded event means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..constants import ErrorCode
from . import costs, devices, scheduler, streams, waits
from .errors import AclError
from .kinds import Engine, ObjectKind, TaskKind
from .objects import LEGACY, NEW_MODE, Event, HostThread, Task

if TYPE_CHECKING:
    from .session import Session

ACL_EVENT_SYNC = 0x1
ACL_EVENT_TIME_LINE = 0x8
ACL_EVENT_EXTERNAL = 0x20
ACL_EVENT_IPC = 0x40

_INTERNAL = ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR  # 507000: a garbage or destroyed handle
# Read once: an enum member read through its class costs ~100 ns (Python 3.11), and a
# record_event reads two.
_RECORD, _RESET, _WAIT, _NO_ENGINE = (TaskKind.EVENT_RECORD, TaskKind.EVENT_RESET,
                                      TaskKind.EVENT_WAIT, Engine.NONE)


def create(s: Session, th: HostThread, cid: int, flags: int, mode: int) -> int:
    """aclrtCreateEvent(WithFlag / ExWithFlag) in the current context."""
    ctx = devices.require_ctx(s, th)
    live = sum(1 for c in ctx.device.contexts for e in c.events if e.alive)
    if live >= s.profile.max_events:
        raise AclError(ErrorCode.ACL_ERROR_RT_NO_EVENT_RESOURCE,
                       f"no event resources left ({live} events, limit "
                       f"{s.profile.max_events})")
    e = Event(-1, 0, ctx, flags, mode)
    s.register(e, ObjectKind.EVENT, cid, e.label, device=ctx.device.index, ctx=ctx.oid,
               param=flags | (mode << 16))
    ctx.events.append(e)
    return e.handle


def lookup(s: Session, handle: int) -> Event:
    """Resolve an event handle (100000 for null, 507000 for garbage or destroyed ones)."""
    e: Event = s.lookup(handle, Event, "event", _INTERNAL)
    return e


def destroy(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclrtDestroyEvent: does not wait; queued records still complete."""
    s.retire(lookup(s, handle), cid, devices.HOW_EXPLICIT)


def _not_sync(e: Event) -> bool:
    """A legacy event made with flags but without ACL_EVENT_SYNC (no reset, no wait)."""
    return e.mode == LEGACY and bool(e.flags) and not e.flags & ACL_EVENT_SYNC


def record(s: Session, th: HostThread, cid: int, ev: int, stream: int) -> None:
    """aclrtRecordEvent: capture every task already submitted to the stream."""
    e = lookup(s, ev)
    st = streams.lookup(s, th, stream)
    t = Task(_RECORD, st, cid, th.clock, _NO_ENGINE,
             costs.event_task_ns(s.profile))
    t.event = e
    e.records.append(t)
    scheduler.submit(s, t)  # gives t its id
    if len(e.records) % 64 == 0:
        e.forget_old()


def reset(s: Session, th: HostThread, cid: int, ev: int, stream: int) -> None:
    """aclrtResetEvent: queued on the stream; later waits need a new record."""
    e = lookup(s, ev)
    st = streams.lookup(s, th, stream)
    if _not_sync(e):
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"{e.label()} was created without ACL_EVENT_SYNC, so it cannot be "
                       "reset (C-doc 07)")
    if e.mode == LEGACY and not e.flags:
        s.diag(cid, "reset_legacy_event",
               f"reset_event on {e.label()} made by create_event: the docs call this "
               "undefined; create it with create_event_with_flag(ACL_EVENT_SYNC)")
    t = Task(_RESET, st, cid, th.clock, _NO_ENGINE,
             costs.event_task_ns(s.profile))
    t.event = e
    e.resets.append(t)
    scheduler.submit(s, t)


def stream_wait(s: Session, th: HostThread, cid: int, stream: int, ev: int) -> None:
    """aclrtStreamWaitEvent: later tasks on the stream wait for the event's record."""
    st = streams.lookup(s, th, stream)
    e = lookup(s, ev)
    if _not_sync(e):
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"{e.label()} was created without ACL_EVENT_SYNC, so "
                       "stream_wait_event cannot use it (C-doc 07)")
    rec = e.last_record
    if rec is None:
        if e.mode == LEGACY:
            raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                           f"{e.label()} has not been recorded: call acl.rt.record_event "
                           "before acl.rt.stream_wait_event")
        s.diag(cid, "wait_before_record",
               f"{e.label()} (new mode) was never recorded: this wait does nothing", level=0)
        return
    t = Task(_WAIT, st, cid, th.clock, _NO_ENGINE,
             costs.event_task_ns(s.profile))
    t.event = e
    t.record = rec
    e.waiting.append(t)
    scheduler.submit(s, t)


def complete_at(e: Event, t: int) -> bool:
    """Is the event's flag set at virtual time ``t`` (latest record done, no reset after)?"""
    rec = e.last_record
    if rec is None:
        return e.mode == NEW_MODE
    if not rec.placed or rec.end > t:
        return False
    return not any(r.placed and r.id > rec.id and r.start <= t for r in e.resets)


def query(s: Session, th: HostThread, ev: int) -> bool:
    """True when the event's latest record has completed by the caller's clock."""
    return complete_at(lookup(s, ev), th.clock)


def synchronize(s: Session, th: HostThread, cid: int, ev: int, timeout_ns: int) -> None:
    """aclrtSynchronizeEvent(WithTimeout): block until the latest record completes."""
    e = lookup(s, ev)
    rec = e.last_record
    if rec is None:
        return
    start = th.clock

    def done() -> bool:
        return rec.placed

    waits.block(s, th, cid, done, lambda: waits.needs_for_task(s, rec, th),
                f"{e.label()} to complete", timeout_ns,
                ErrorCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                lambda: rec.end + s.profile.sync_wake_ns, waits.SYNC_EVENT)
    if rec.end > th.clock:
        if timeout_ns >= 0 and rec.end > start + timeout_ns:
            th.clock = start + timeout_ns
            s.hooks.on_sync(cid, waits.SYNC_EVENT, e.oid, start, th.clock)
            raise AclError(ErrorCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                           f"{e.label()} did not complete within {timeout_ns / 1e6:g} ms")
        th.clock = rec.end + s.profile.sync_wake_ns
    scheduler.advance(s, th.clock)
    s.hooks.on_sync(cid, waits.SYNC_EVENT, e.oid, start, th.clock)


def elapsed_ms(s: Session, th: HostThread, start_ev: int, end_ev: int) -> float:
    """aclrtEventElapsedTime: milliseconds between two completed records."""
    a, b = lookup(s, start_ev), lookup(s, end_ev)
    ra, rb = a.last_record, b.last_record
    if ra is None or rb is None:
        which = a if ra is None else b
        raise AclError(_INTERNAL, f"{which.label()} was never recorded")
    for r, e in ((ra, a), (rb, b)):
        if not r.placed or r.end > th.clock:
            raise AclError(ErrorCode.ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                           f"{e.label()} is recorded but not complete yet: synchronize the "
                           "stream (or event) first")
    return (rb.end - ra.end) / 1e6
