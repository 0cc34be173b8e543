"""Host threads and the callbacks they run: subscribe/launch/process_report, start/stop_thread.

Functions over a ``Session`` (the state: its thread registry ``threads`` / ``thread_list``
and the ``acl_threads`` that ``acl.util.start_thread`` started). A callback task is placed on
its stream like any task; when it starts it is reported to the thread subscribed to the
stream, which runs it inside ``process_report`` without the session lock (the callback is
user code and calls the API). A blocking callback holds its stream until it returns.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..constants import ErrorCode
from . import costs, scheduler, streams, waits
from .errors import AclError, DeadlockError
from .kinds import Engine, TaskKind
from .objects import HostThread, Task

if TYPE_CHECKING:
    from .session import Session

#: What a thread in process_report is waiting for (its ``HostThread.wait`` label).
REPORT_WAIT = "a callback report"


# ------------------------------------------------------------------ callbacks


def subscribe_report(s: Session, th: HostThread, cid: int, tid: int, stream: int) -> None:
    """aclrtSubscribeReport: callbacks on ``stream`` will run in thread ``tid``."""
    st = streams.lookup(s, th, stream, check_ctx=False)
    target = thread_by_tid(s, tid)
    if st.subscriber is not None:
        raise AclError(ErrorCode.ACL_ERROR_RT_STREAM_SUBSCRIBE,
                       f"{st.label()} is already subscribed by {st.subscriber.label()}")
    st.subscriber = target
    target.subscriptions.append(st)


def unsubscribe_report(s: Session, th: HostThread, cid: int, tid: int, stream: int) -> None:
    """aclrtUnSubscribeReport (the subscribed thread may have exited already)."""
    st = streams.lookup(s, th, stream, check_ctx=False)
    if st.subscriber is not None and st.subscriber.ident == tid:
        target = st.subscriber
    else:
        target = thread_by_tid(s, tid)
    if st.subscriber is not target:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"{st.label()} is not subscribed by {target.label()}")
    st.subscriber = None
    target.subscriptions = [x for x in target.subscriptions if x is not st]


def thread_by_tid(s: Session, tid: int) -> HostThread:
    """The HostThread of the *running* thread whose API id (ident) is ``tid``.

    Only live threads are searched: at most one live thread has a given ident, while
    exited ones may share it with it.
    """
    for t in threading.enumerate():
        if t.ident == tid:
            th = s.threads.get(t)
            if th is None:
                th = s.register_thread(t, s.thread().clock, s.acl_parent(t) is not None)
            return th
    raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                   f"thread id {tid} is not a running thread (use the tid from "
                   "acl.util.start_thread or threading.get_ident())")


def launch_callback(s: Session, th: HostThread, cid: int, fn: Callable[..., Any],
                    user_data: Any, block: int, stream: int) -> None:
    """aclrtLaunchCallback: a host-callback task; ``block=1`` holds the stream."""
    if block not in (0, 1):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"block type {block} must be ACL_CALLBACK_NO_BLOCK (0) or "
                       "ACL_CALLBACK_BLOCK (1)")
    st = streams.lookup(s, th, stream)
    if st.subscriber is None:
        raise AclError(ErrorCode.ACL_ERROR_RT_STREAM_NO_CB_REG,
                       f"{st.label()} has no subscribed report thread: call "
                       "acl.rt.subscribe_report(tid, stream) first")
    t = Task(TaskKind.CALLBACK, st, cid, th.clock, Engine.NONE,
             costs.callback_ns(s.profile))
    t.callback = fn
    t.user_data = user_data
    t.block = bool(block)
    scheduler.submit(s, t)


def process_report(s: Session, th: HostThread, cid: int, timeout_ms: int) -> None:
    """aclrtProcessReport: run the callbacks reported to this thread (one call drains)."""
    if timeout_ms == 0 or timeout_ms < -1:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"timeout {timeout_ms} must be -1 (forever) or > 0 ms")
    if not th.subscriptions:
        raise AclError(ErrorCode.ACL_ERROR_RT_THREAD_SUBSCRIBE,
                       f"{th.label()} is not subscribed to any stream: call "
                       "acl.rt.subscribe_report(tid, stream) for it first")
    start = th.clock

    def ready() -> bool:
        return bool(th.reports) or not th.subscriptions

    def needs() -> waits.Needs:
        return [("any", "process_report waits for callbacks launched on "
                        + ", ".join(st.label() for st in th.subscriptions))]

    if not th.reports:
        deadline = time.monotonic() + (timeout_ms / 1000 if timeout_ms > 0 else 1e9)
        # A timed wait comes back by itself, so the thread still counts as running.
        th.state = "blocked" if timeout_ms < 0 else "polling"
        th.wait = (REPORT_WAIT, needs, ready)
        s.cond.notify_all()
        try:
            while not ready():
                if s.interrupt_pending:
                    s.deliver_interrupt()
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                if timeout_ms < 0 and waits.stuck(s, th, needs()):
                    raise waits.deadlock(s, th, cid, REPORT_WAIT, needs(),
                                         waits.stuck(s, th, needs()))
                if s.closed:
                    # A timed poll is not stuck: on real hardware the process exits and the
                    # polling thread dies with it (a video sample whose setup failed leaves
                    # its process_report(100) loop running). End the thread without a
                    # deadlock finding; an untimed wait is reported.
                    raise waits.deadlock(s, th, cid, REPORT_WAIT, needs(),
                                         "the session was closed while this thread waited",
                                         quiet=timeout_ms >= 0)
                s.cond.wait(min(left, 0.05))
        finally:
            th.state = "running"
            th.wait = None
            s.cond.notify_all()
        if not th.reports:
            frontier = max(t.clock for t in s.thread_list)
            th.clock = max(th.clock, min(th.clock + timeout_ms * 1_000_000, frontier))
            s.hooks.on_sync(cid, waits.SYNC_REPORT, -1, start, th.clock)
            raise AclError(ErrorCode.ACL_ERROR_RT_REPORT_TIMEOUT,
                           f"no callback arrived within {timeout_ms} ms")
    while th.reports:
        t = th.reports.popleft()
        run_callback(s, th, cid, t)
    s.hooks.on_sync(cid, waits.SYNC_REPORT, -1, start, th.clock)


def run_callback(s: Session, th: HostThread, cid: int, t: Task) -> None:
    """Run callback task ``t`` in ``th`` without the session lock, then finish the task."""
    report_at = t.start + costs.callback_ns(s.profile)
    th.clock = max(th.clock, report_at)
    begin = th.clock
    fn = t.callback
    err: BaseException | None = None
    fatal: BaseException | None = None
    # The callback is user code: run it without the session lock (it calls the API).
    depth = release_all(s)
    try:
        if fn is not None:
            fn(t.user_data)
    except Exception as exc:  # a failing callback must not kill the report thread
        err = exc
        traceback.print_exc()
    except BaseException as exc:  # KeyboardInterrupt, SystemExit: finish the task, re-raise
        err = fatal = exc
    finally:
        reacquire(s, depth)
        # The task has run: it keeps neither the function nor its data (a Task outlives
        # it in the stream and the event records; the user's objects must not).
        t.callback = t.user_data = fn = None
    th.clock += costs.api_call_ns(s.profile, False)
    s.hooks.on_callback(t.id, th.idx, begin, th.clock)
    if err is not None:
        s.diag(cid, "callback_exception",
               f"callback of task {t.id} raised {type(err).__name__}: {err}", level=2)
    callback_done(s, th, t)
    if fatal is not None:
        raise fatal


def callback_done(s: Session, th: HostThread, t: Task) -> None:
    """A callback returned (or raised): release the stream a blocking one held."""
    st = t.stream
    if t.block and st is not None and st.blocked_by is t:
        t.end = th.clock
        st.blocked_by = None
        st.tail_end = max(st.tail_end, t.end)
        s.hooks.on_task_placed(t)
        s.progress += 1
        if st.pending and st not in s.blocked_streams:  # the scheduler's queued streams
            s.blocked_streams.append(st)
        scheduler.pump(s)
    s.cond.notify_all()


def release_all(s: Session) -> int:
    """Release every level of the session lock this thread holds; returns how many."""
    depth = 0
    while True:
        try:
            s.lock.release()
            depth += 1
        except RuntimeError:
            return depth


def reacquire(s: Session, depth: int) -> None:
    """Take the session lock ``depth`` times again (after ``release_all``)."""
    for _ in range(depth):
        s.lock.acquire()


# ------------------------------------------------------------------ host threads


def start_thread(s: Session, th: HostThread, fn: Callable[..., Any], args: Any) -> int:
    """acl.util.start_thread: a daemon thread calling ``fn(args)`` (``fn()`` if None)."""
    info: dict[str, Any] = {"clock": th.clock, "error": None}

    def body() -> None:
        try:
            if args is None:
                fn()
            else:
                fn(args)
        except BaseException as exc:  # stored and re-raised by stop_thread
            info["error"] = exc
            if not (isinstance(exc, DeadlockError) and exc.quiet):  # a timed poll at close
                traceback.print_exc()
        finally:
            with s.lock:
                s.cond.notify_all()

    t = threading.Thread(target=body, daemon=True, name=f"acl-thread-{len(s.acl_threads)}")
    info["thread"] = t
    t.start()
    assert t.ident is not None
    # under the session lock: the worker's first API call (which reads this) waits for it
    s.acl_threads[t.ident] = info
    s.cond.notify_all()
    return t.ident


def note_join(s: Session, t: threading.Thread) -> None:
    """The calling thread joined ``t``: its clock moves past ``t``'s last call.

    Virtual time then shows what the host really did: a thread that joins its workers
    continues after them (a join is a happens-before the API never sees).
    """
    with s.lock:
        joined = s.threads.get(t)
        joiner = s.threads.get(threading.current_thread())
        if joined is not None and joiner is not None and joiner.clock < joined.clock:
            joiner.clock = joined.clock


def stop_thread(s: Session, th: HostThread, cid: int, tid: int) -> None:
    """acl.util.stop_thread: join the thread; re-raise its exception as RuntimeError."""
    info = s.acl_threads.get(tid)
    if info is None:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{tid} is not a thread started by acl.util.start_thread")
    t: threading.Thread = info["thread"]
    start = th.clock

    def needs() -> waits.Needs:
        # the worker's own HostThread once it has called the emulator, else the Thread
        # itself (a thread outside the emulator that can still finish)
        who: Any = s.threads.get(t, t)
        return [(who, f"stop_thread joins {t.name}, which is still running")]

    if t.is_alive():
        waits.block(s, th, cid, lambda: not t.is_alive(), needs, f"{t.name} to finish", -1, 0)
    t.join()
    target = s.threads.get(t)
    if target is not None:
        th.clock = max(th.clock, target.clock)
    s.hooks.on_sync(cid, waits.SYNC_JOIN, -1, start, th.clock)
    s.acl_threads.pop(tid, None)
    err = info["error"]
    if err is not None:
        raise RuntimeError(f"exception={type(err).__name__},msg=thread call failed;"
                           f" {err}") from err
