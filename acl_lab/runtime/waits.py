"""Host waits and deadlock detection: synchronize_stream / synchronize_device and ``block``.

Functions over a ``Session``. Every wait of the emulator goes through ``block``: it releases
the session lock (through the session's condition variable) until its condition holds, and
asks, each time it wakes, whether any thread could still make the condition true. A wait no
thread can help is reported at once as a ``DeadlockError`` (or, for a timed wait, as the
wait's timeout code), with who waits for whom; a wait that makes no progress for the
session's ``watchdog`` seconds of real time is reported with every thread's stack. A wait is
never reported while a thread that could help is still running (no false deadlock).

A wait's ``needs`` lists who must act for it to finish: ``(HostThread, why)`` for one
thread (a callback's subscribed thread), ``(threading.Thread, why)`` for a Python thread the
emulator has not seen yet, ``("any", why)`` for any running thread, ``("none", why)`` when
nobody can (a blocking callback on a stream no thread is subscribed to) and
``("cycle", why)`` for streams waiting on each other through events.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..constants import ErrorCode
from . import devices, scheduler, streams
from .errors import AclError, DeadlockError, WaitEdge
from .kinds import SyncKind, TaskKind
from .objects import HostThread, Stream, Task

if TYPE_CHECKING:
    from .session import Session

# Short names for the sync kinds (``kinds.SyncKind``, the trace's ``syncs.kind`` column) the
# waits pass to their hooks: a module constant costs a tenth of an enum member's read.
SYNC_STREAM, SYNC_DEVICE, SYNC_EVENT, SYNC_REPORT, SYNC_JOIN = (
    SyncKind.STREAM, SyncKind.DEVICE, SyncKind.EVENT, SyncKind.REPORT, SyncKind.JOIN)

#: Stream flags whose streams synchronize_stream returns for at once:
#: PERSISTENT, CPU_SCHEDULE, DEVICE_USE_ONLY
STREAM_NO_SYNC_FLAGS = 0x4 | 0x10 | 0x20

#: who must act for a wait to finish, and why (see the module notes)
Needs = list[tuple[Any, str]]


def synchronize_stream(s: Session, th: HostThread, cid: int, stream: int,
                       timeout_ns: int) -> None:
    """aclrtSynchronizeStream(WithTimeout): streams of other contexts are accepted."""
    st = streams.lookup(s, th, stream, check_ctx=False)
    if st.flags & STREAM_NO_SYNC_FLAGS:
        return
    wait_streams(s, th, cid, [st], st.label(), timeout_ns, SYNC_STREAM, st.oid)
    err, st.error = st.error, 0
    if err:
        raise AclError(err, f"a task on {st.label()} failed (see the trace)")


def synchronize_device(s: Session, th: HostThread, cid: int, timeout_ns: int) -> None:
    """aclrtSynchronizeDevice(WithTimeout): every stream of the current device."""
    ctx = devices.require_ctx(s, th)
    live = [st for c in ctx.device.contexts for st in c.streams if st.alive]
    wait_streams(s, th, cid, live, f"device {ctx.device.index}", timeout_ns, SYNC_DEVICE,
                 ctx.oid)
    errs = [st.error for st in live if st.error]
    for st in live:
        st.error = 0
    if errs:
        raise AclError(errs[0], "a task on the device failed (see the trace)")


def wait_streams(s: Session, th: HostThread, cid: int, waited: list[Stream], what: str,
                 timeout_ns: int, kind: int = SYNC_STREAM, target: int = -1) -> None:
    """Block until every stream of ``waited`` is idle; move the caller's clock past them.

    ``timeout_ns`` < 0 waits forever; a wait that would need longer than ``timeout_ns`` of
    virtual time ends at the timeout with 507046. ``kind`` and ``target`` are the sync row's.
    """
    start = th.clock

    def done() -> bool:
        return all(st.idle for st in waited)

    def needs() -> Needs:
        out: Needs = []
        for st in waited:
            if not st.idle:
                out.extend(needs_for_stream(s, st, th))
        return out

    if not done():
        block(s, th, cid, done, needs, what, timeout_ns,
              ErrorCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT if kind != SYNC_EVENT
              else ErrorCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)
    end = max([st.tail_end for st in waited], default=0)
    if end > th.clock:
        if timeout_ns >= 0 and end > start + timeout_ns:
            th.clock = start + timeout_ns
            scheduler.advance(s, th.clock)
            s.hooks.on_sync(cid, kind, target, start, th.clock)
            raise AclError(ErrorCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                           f"{what} did not finish within {timeout_ns / 1e6:g} ms (it needs "
                           f"until {end / 1e3:.1f} µs)")
        th.clock = end + s.profile.sync_wake_ns
    scheduler.advance(s, th.clock)
    s.hooks.on_sync(cid, kind, target, start, th.clock)


def needs_for_task(s: Session, t: Task, waiter: HostThread) -> Needs:
    """Who must act for task ``t`` to be placed (nothing for a task on no stream)."""
    if t.stream is None:
        return []
    return needs_for_stream(s, t.stream, waiter)


def needs_for_stream(s: Session, st: Stream, waiter: HostThread,
                     seen: set[int] | None = None) -> Needs:
    """Who must act for ``st`` to make progress: [(HostThread | "any", why)]."""
    seen = seen if seen is not None else set()
    if st.oid in seen:
        return [("cycle", f"{st.label()} waits (through events) on itself")]
    seen.add(st.oid)
    cb = st.blocked_by
    if cb is not None:
        sub = st.subscriber
        if cb.end < 0:
            who = sub if sub is not None else "none"
            return [(who, f"{st.label()} is held by a blocking callback (task {cb.id}) "
                          "that must run in its subscribed thread's process_report")]
    if not st.pending:
        return []
    head = st.pending[0]
    if head.kind == TaskKind.EVENT_WAIT and head.record is not None:
        # Records may have been queued since the wait was last tried: look again.
        scheduler.wait_resolves_at(head, max(st.tail_end,
                                             head.submit + s.profile.launch_latency_ns))
        rec = head.awaiting or head.record
        if rec.placed:
            return [("any", f"{st.label()}: {head.reason}")]
        if rec.stream is not None:
            inner = needs_for_stream(s, rec.stream, waiter, seen)
            return [(w, f"{st.label()} waits for {head.event.label() if head.event else ''}"
                        f" recorded on {rec.stream.label()}; {why}") for w, why in inner] \
                or [("any", f"{st.label()}: {head.reason}")]
    return [("any", f"{st.label()} has pending task {head.id}")]


def block(s: Session, th: HostThread, cid: int, done: Callable[[], bool],
          needs: Callable[[], Needs], what: str, timeout_ns: int, timeout_code: int) -> None:
    """Wait (releasing the lock) until ``done()``; detect waits that can never finish.

    Raises:
        AclError: ``timeout_code`` when a timed wait (``timeout_ns`` >= 0) cannot finish.
        DeadlockError: when an untimed wait cannot finish, or the session was closed.
    """
    if done():
        return
    th.state = "blocked"
    th.wait = (what, needs, done)
    s.cond.notify_all()
    last_progress = s.progress
    quiet_since = time.monotonic()
    try:
        while not done():
            if s.interrupt_pending:
                s.deliver_interrupt()
            if s.closed:
                raise deadlock(s, th, cid, what, needs(),
                               "the session was closed while this thread waited")
            why = stuck(s, th, needs())
            if why:
                if timeout_ns >= 0:
                    th.clock += timeout_ns
                    s.hooks.on_sync(cid, SYNC_STREAM, -1, th.clock - timeout_ns, th.clock)
                    raise AclError(timeout_code, f"{what} cannot finish: {why}")
                raise deadlock(s, th, cid, what, needs(), why)
            s.cond.wait(0.05)
            if s.progress != last_progress:
                last_progress = s.progress
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > s.watchdog:
                if timeout_ns >= 0:
                    th.clock += timeout_ns
                    raise AclError(timeout_code, f"{what} made no progress")
                raise deadlock(s, th, cid, what, needs(),
                               f"no progress for {s.watchdog:g} s of real time (watchdog)",
                               stacks=True)
    finally:
        th.state = "running"
        th.wait = None
        s.cond.notify_all()


def stuck(s: Session, th: HostThread, needs: Needs) -> str:
    """Why the wait can never finish, or "" while some thread could still help."""
    live = live_threads(s)
    for who, why in needs:
        if who == "cycle":
            return why
        if who == "none":
            return why + ", but no thread is subscribed to that stream"
        if isinstance(who, threading.Thread):
            if who.is_alive():
                return ""       # a thread outside the emulator can still finish
            continue
        if isinstance(who, HostThread):
            if who is th:
                return why + f"; that thread is {th.label()}, the one waiting here, so it " \
                             "can never call process_report"
            if not who.alive:
                return why + f"; {who.label()} has exited"
            if who in live:
                return ""
            continue
        if any(x is not th for x in live) or foreign_threads_running(s):
            return ""
    if not needs:
        return ""
    return "; ".join(why for _, why in needs) + \
        " — and every other thread is itself blocked in the emulator or has exited"


def live_threads(s: Session) -> set[HostThread]:
    """Threads that can still act: running, or in a wait that can still progress."""
    live = {t for t in s.thread_list if t.alive and t.state in ("running", "polling")}
    waiting = [t for t in s.thread_list if t.alive and t.state == "blocked"]
    # A waiter whose condition already holds is about to wake up (and a thread in
    # process_report with a report queued for it is about to run it).
    live |= {t for t in waiting if t.wait is not None and t.wait[2]()}
    changed = True
    while changed:
        changed = False
        for t in waiting:
            if t in live or t.wait is None:
                continue
            _, needs, _ = t.wait
            for who, _ in needs():
                helped = (who == "any" and any(x is not t for x in live)) or (
                    isinstance(who, HostThread) and who in live and who is not t)
                if helped:
                    live.add(t)
                if t in live:
                    changed = True
                    break
    return live


def foreign_threads_running(s: Session) -> bool:
    """Python threads that never called the emulator but could (started after us)."""
    background = s.background_threads
    return any(t not in s.threads and t not in background and t.is_alive()
               and not t.daemon for t in threading.enumerate())


def deadlock(s: Session, th: HostThread, cid: int, what: str, needs: Needs, why: str,
             stacks: bool = False, quiet: bool = False) -> DeadlockError:
    """The DeadlockError for ``th``'s wait (with a ``deadlock`` diagnostic unless ``quiet``).

    ``stacks`` adds every Python thread's stack (the watchdog's report).
    """
    file, line = s.recorder.call_site(cid) if s.recorder is not None else ("", 0)
    edges = [WaitEdge(th.label(), what, why, file, line)]
    for who, reason in needs:
        target = (who.label() if isinstance(who, HostThread)
                  else who.name if isinstance(who, threading.Thread)
                  else "another thread" if who == "any" else str(who))
        edges.append(WaitEdge(what, target, reason))
    for other in s.thread_list:
        if other is not th and other.alive and other.state == "blocked" and other.wait:
            edges.append(WaitEdge(other.label(), other.wait[0], "blocked in the emulator"))
    text = ""
    if stacks:
        frames = sys._current_frames()
        parts = []
        for t in threading.enumerate():
            f = frames.get(t.ident or -1)
            if f is not None:
                parts.append(f"--- {t.name}\n" + "".join(traceback.format_stack(f)))
        text = "\n".join(parts)
    summary = f"{th.label()} waits for {what} forever: {why}"
    err = DeadlockError(summary, edges, text, th.label(), file, line, quiet)
    if not quiet and not (s.closed and th.closed_reported):
        s.hooks.on_diag(cid, 3, "deadlock", err.report)
    th.closed_reported = s.closed
    return err
