"""Host threads and the callbacks they run: subscribe/launch/process_report, start/stop_thread.

Functions over a ``Session`` (the state: its thread registry ``threads`` / ``thread_list``
and the ``acl_threads`` that ``acl.util.start_thread`` started). A callback task is placed on
its stream like any task; when it starts it is reported to the thread subscribed to the
stream, which runs it inside ``process_report`` without the session lock (the callback is
user code and calls the API). A blocking callback holds its stream until it returns.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..constants import ErrorCode
from . import costs, hostsched, pysync, rawsync, scheduler, streams, waits
from .errors import AclError, DeadlockError
from .kinds import Engine, TaskKind
from .objects import HostThread, Task

if TYPE_CHECKING:
    from .session import Session

#: What a thread in process_report is waiting for (its wait's label).
REPORT_WAIT = "a callback report"
#: The note (diagnostic kind) naming the thread a subscribe/unsubscribe_report is about:
#: the trace records the ``tid`` the program passed, the checks need the thread.
REPORT_THREAD_NOTE = "report_thread"


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
    s.diag(cid, REPORT_THREAD_NOTE, str(target.idx), level=0)  # for the ordering checks


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
    s.diag(cid, REPORT_THREAD_NOTE, str(target.idx), level=0)


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
    """aclrtProcessReport: run the callbacks reported to this thread (one call drains).

    As in the runtime (``ApiImpl::ProcessReport``, hicann/runtime
    ``src/runtime/api/impl/api_impl.cc``): a thread with no subscription gets 107012 at once
    (``GetGroupIdByThreadId``); otherwise it waits for a report (``CqReportIrqWait``) until
    one comes or the timeout passes (107011), whatever happens to its subscriptions
    meanwhile: an ``unsubscribe_report`` does not end the wait, so a thread in
    ``process_report(-1)`` whose stream is unsubscribed waits forever.
    """
    if timeout_ms == 0 or timeout_ms < -1:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"timeout {timeout_ms} must be -1 (forever) or > 0 ms")
    if not th.subscriptions:
        raise AclError(ErrorCode.ACL_ERROR_RT_THREAD_SUBSCRIBE,
                       f"{th.label()} is not subscribed to any stream: call "
                       "acl.rt.subscribe_report(tid, stream) for it first")
    start = th.clock

    def ready() -> bool:
        return bool(th.reports)

    def needs() -> waits.Needs:
        if not th.subscriptions:
            return [("none", f"process_report of {th.label()} waits for a callback report, "
                             "but the thread is no longer subscribed to any stream "
                             "(unsubscribe_report), so nothing can report to it")]
        return [("any", "process_report waits for callbacks launched on "
                        + ", ".join(st.label() for st in th.subscriptions))]

    def delivered() -> int:
        return th.reports[0].start + costs.callback_ns(s.profile) if th.reports else th.clock

    if not th.reports:
        timeout_ns = timeout_ms * 1_000_000 if timeout_ms > 0 else -1
        waits.block(s, th, cid, ready, needs, REPORT_WAIT, timeout_ns,
                    ErrorCode.ACL_ERROR_RT_REPORT_TIMEOUT, delivered, waits.SYNC_REPORT)
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


def start_thread(s: Session, th: HostThread, cid: int, fn: Callable[..., Any],
                 args: Any) -> int:
    """acl.util.start_thread: a daemon thread calling ``fn(args)`` (``fn()`` if None).

    The thread takes part in the host schedule from its start (``pysync.start``): its first
    row comes after this call, at the caller's clock plus the profile's start latency.
    """
    info: dict[str, Any] = {"clock": th.clock, "error": None}

    def body() -> None:
        me: HostThread | None = None
        try:
            with s.lock:
                me = s.thread()
                hostsched.enter(s, me)
                begin = s.api_enter("threading.Thread.begin", 0, (), "", *_fn_site(fn))[1]
                pysync.enter(s, me, begin)
                s.api_exit(me, begin, 0)
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
                if me is not None and me.turn != hostsched.EXTERNAL:
                    end = s.api_enter("threading.Thread.end", 0, (), "", *_fn_site(fn))[1]
                    pysync.leave(s, me, end)
                s.cond.notify_all()

    t = threading.Thread(target=body, daemon=True, name=f"acl-thread-{len(s.acl_threads)}")
    info["thread"] = t
    child = pysync.start(s, th, cid, t)
    child.started_by_acl = True
    rawsync.start(t)  # its turn comes through the scheduler, not the operating system
    assert t.ident is not None
    # under the session lock: the worker's first API call (which reads this) waits for it
    s.acl_threads[t.ident] = info
    s.cond.notify_all()
    return t.ident


def _fn_site(fn: Any) -> tuple[str, int]:
    """Where a thread function is defined (its rows' site)."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__func__", None),
                                                    "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else ("<thread>", 0)


def stop_thread(s: Session, th: HostThread, cid: int, tid: int) -> None:
    """acl.util.stop_thread: join the thread; re-raise its exception as RuntimeError."""
    info = s.acl_threads.get(tid)
    if info is None:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"{tid} is not a thread started by acl.util.start_thread")
    t: threading.Thread = info["thread"]
    start = th.clock
    target = s.threads.get(t)
    if target is not None and target.controlled and th.controlled and not s.sched.closed:
        pysync.join(s, th, cid, target, -1)
    else:
        def needs() -> waits.Needs:
            who: Any = s.threads.get(t, t)
            return [(who, f"stop_thread joins {t.name}, which is still running")]

        if t.is_alive():
            waits.block(s, th, cid, lambda: not t.is_alive(), needs, f"{t.name} to finish",
                        -1, 0)
    depth = release_all(s)
    try:
        rawsync.join(t)  # the thread's last bytecodes after its end row
    finally:
        reacquire(s, depth)
    if target is not None:
        th.clock = max(th.clock, target.clock)
    s.hooks.on_sync(cid, waits.SYNC_JOIN, -1, start, th.clock)
    s.acl_threads.pop(tid, None)
    err = info["error"]
    if err is not None:
        raise RuntimeError(f"exception={type(err).__name__},msg=thread call failed;"
                           f" {err}") from err
