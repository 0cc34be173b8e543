"""Host waits and deadlock detection: synchronize_stream / synchronize_device and ``block``.

Functions over a ``Session``. Every wait of the emulator goes through ``block``. A thread
that takes part in the host schedule (``hostsched``) waits there: it gives up its turn and
is woken when its condition holds, or, for a timed wait, when its deadline is the earliest
thing that can happen in virtual time (no wall clock is involved). When every thread waits
and no deadline is pending, the wait can never finish: the scheduler wakes the thread that
waited last with a deadlock, reported as a ``DeadlockError`` (or, for a timed wait, as the
wait's timeout code) with who waits for whom. A thread outside the schedule (one that ran
before the session was made) waits on the session's condition variable as before, and is
reported after the session's ``watchdog`` seconds of real time without progress.

A wait's ``needs`` lists who must act for it to finish (``hostsched.Needs``):
``(HostThread, why)`` for one thread (a callback's subscribed thread), ``(threading.Thread,
why)`` for a Python thread the emulator has not seen yet, ``("any", why)`` for any running
thread, ``("none", why)`` when nobody can (a blocking callback on a stream no thread is
subscribed to) and ``("cycle", why)`` for streams waiting on each other through events.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..constants import ErrorCode
from . import devices, hostsched, scheduler, streams
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
Needs = hostsched.Needs


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

    def wake_at() -> int:
        return max([st.tail_end for st in waited], default=0) + s.profile.sync_wake_ns

    if not done():
        block(s, th, cid, done, needs, what, timeout_ns,
              ErrorCode.ACL_ERROR_RT_STREAM_SYNC_TIMEOUT if kind != SYNC_EVENT
              else ErrorCode.ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, wake_at, kind)
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
          needs: Callable[[], Needs], what: str, timeout_ns: int, timeout_code: int,
          wake_at: Callable[[], int] | None = None, kind: int = SYNC_STREAM) -> None:
    """Wait (giving up the turn, and the lock) until ``done()``.

    ``timeout_ns`` < 0 waits forever. ``wake_at`` is the virtual time the waiter continues
    at once ``done()`` holds (default: its own clock); ``kind`` the sync row a timeout
    records.

    Raises:
        AclError: ``timeout_code`` when a timed wait (``timeout_ns`` >= 0) reaches its
            deadline first, or can never finish.
        DeadlockError: when an untimed wait can never finish, or the session was closed.
    """
    if done():
        return
    if not th.controlled or s.sched.closed:
        _block_outside(s, th, cid, done, needs, what, timeout_ns, timeout_code)
        return
    start = th.clock
    deadline = start + timeout_ns if timeout_ns >= 0 else -1
    w = hostsched.Wait(what, needs, done, deadline, wake_at, cid)
    why = hostsched.block(s, th, w)
    if why == hostsched.WOKE_READY:
        return
    if why == hostsched.WOKE_TIMEOUT:
        s.hooks.on_sync(cid, kind, -1, start, th.clock)
        raise AclError(timeout_code, f"{what} did not finish within {timeout_ns / 1e6:g} ms")
    if why == hostsched.WOKE_DEADLOCK:
        reason = explain(s, th, needs())
        if timeout_ns >= 0:  # nothing can end it: it times out (the clock moves to then)
            th.clock = max(th.clock, deadline)
            s.hooks.on_sync(cid, kind, -1, start, th.clock)
            raise AclError(timeout_code, f"{what} cannot finish: {reason}")
        raise deadlock(s, th, cid, what, needs(), reason)
    if why == hostsched.WOKE_WATCHDOG:
        if timeout_ns >= 0:
            th.clock = max(th.clock, deadline)
            raise AclError(timeout_code, f"{what} made no progress")
        raise deadlock(s, th, cid, what, needs(), WATCHDOG_WHY.format(s.watchdog), stacks=True)
    raise deadlock(s, th, cid, what, needs(), "the session was closed while this thread waited",
                   quiet=timeout_ns >= 0)


#: Why the watchdog reported a wait (``session.watchdog`` seconds of real time).
WATCHDOG_WHY = "no progress for {:g} s of real time (watchdog)"


def _block_outside(s: Session, th: HostThread, cid: int, done: Callable[[], bool],
                   needs: Callable[[], Needs], what: str, timeout_ns: int,
                   timeout_code: int) -> None:
    """``block`` for a thread outside the schedule (or after it closed): wait on the
    session's condition variable until ``done()``; a wait that makes no progress for the
    session's ``watchdog`` seconds of real time is reported with every thread's stack."""
    last_progress = s.progress
    quiet_since = time.monotonic()
    while not done():
        if s.interrupt_pending:
            s.deliver_interrupt()
        if s.closed:
            raise deadlock(s, th, cid, what, needs(),
                           "the session was closed while this thread waited",
                           quiet=timeout_ns >= 0)
        hostsched.kick(s)
        s.cond.wait(0.05)
        if s.progress != last_progress:
            last_progress = s.progress
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > s.watchdog:
            if timeout_ns >= 0:
                th.clock += timeout_ns
                raise AclError(timeout_code, f"{what} made no progress")
            raise deadlock(s, th, cid, what, needs(), WATCHDOG_WHY.format(s.watchdog),
                           stacks=True)


def explain(s: Session, th: HostThread, needs: Needs) -> str:
    """Why ``th``'s wait can never finish, from who it needs (every thread is waiting)."""
    parts: list[str] = []
    for who, why in needs:
        if who == "cycle":
            return why
        if who == "none":
            parts.append(why + ", but no thread is subscribed to that stream")
        elif isinstance(who, HostThread):
            if who is th:
                tail = "call process_report" if "process_report" in why else "do that"
                parts.append(why + f"; that thread is {th.label()}, the one waiting here, so "
                             f"it can never {tail}")
            elif who.turn == hostsched.EXITED or not who.alive:
                parts.append(why + f"; {who.label()} has exited")
            elif who.sched_wait is not None:
                inner = "; ".join(r for _, r in who.sched_wait.needs())
                parts.append(why + f"; {who.label()} is itself waiting in "
                             f"{who.sched_wait.what}" + (f": {inner}" if inner else ""))
            else:
                parts.append(why)
        elif isinstance(who, threading.Thread):
            parts.append(why + f"; {who.name} has exited")
        else:
            parts.append(why)
    if not parts:
        return "nothing can end it"
    return "; ".join(parts) + " — and every other thread is itself waiting or has exited"


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
    for other in hostsched.waiting_threads(s):
        w = other.sched_wait
        if other is not th and w is not None:
            needs_other = w.needs()
            why_other = "; ".join(r for _, r in needs_other) or "blocked in the emulator"
            edges.append(WaitEdge(other.label(), w.what, why_other))
            for who, reason in needs_other:  # a held lock's holder, a joined thread
                if isinstance(who, HostThread) and who is not other:
                    edges.append(WaitEdge(w.what, who.label(), reason))
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
