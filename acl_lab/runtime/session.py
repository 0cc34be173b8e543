"""The Session: all state of one emulated machine (the environment, not the machine).

A Session owns the device profile, host-thread registry (clocks and current contexts),
devices, memory, the handle registry (``register`` / ``lookup`` / ``retire``), the scheduler's
queues and hooks, and the API bracket (``api_enter`` / ``api_exit`` / ``fail`` / ``diag``). The
behaviour lives in subsystem modules of plain functions that take the session first:
``devices`` (init, devices, contexts), ``streams``, ``events``, ``waits`` (synchronisation and
deadlock detection), ``threads`` (callbacks and host threads), ``alloc``, ``copies``,
``buffers``, ``scheduler`` and the media and model modules. They raise ``AclError`` (with the
real ACL code) or ``DeadlockError``; the pyACL layer maps them to return codes. Nothing here
imports the pyACL layer, the tracer, plotly or ipywidgets.

Virtual time is integer nanoseconds. Each host thread has a clock advanced by the cost of its
API calls; device tasks are placed by a deterministic list scheduler (start = latest of stream
predecessor, awaited record, engine availability and submission). Data effects happen in
virtual-time order: a task reads its inputs at its start and writes its outputs at its end, and
the device is advanced to the caller's clock at the end of every API call, so a missing event
wait gives a wrong result, the same one every run.

Concurrency: one re-entrant lock guards everything. The program's host threads take turns
(``hostsched``, the host scheduler ``sched``): one runs at a time, the others wait for their
turn releasing the lock, and whose turn comes next is decided by the threads' virtual clocks
and the session's seed, so threaded programs are as reproducible as single-threaded ones. A
wait that can never be satisfied raises ``DeadlockError`` as soon as no thread can run.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..constants import ErrorCode
from . import devices, hostsched, rawsync, scheduler
from .errors import AccessError, AclError, DeadlockError
from .hooks import Hooks
from .kinds import Ending
from .memory import HOST_PINNED, MemorySystem
from .objects import Device, HostThread, Stream, Task
from .profiles import DeviceProfile, get_profile

HANDLE_BASE = 0xA0_0000_0000
HANDLE_STEP = 0x40

#: Session run modes: EP (``ACL_HOST``, a card in a server) and RC (``ACL_DEVICE``, on-board).
RUN_MODES = ("host", "device")

_T = TypeVar("_T")

#: Makes the trace recorder of a Session created with ``record=True``. The tracer is
#: attached from outside: ``acl_lab/__init__`` wires its Recorder here, so the runtime imports
#: nothing from the tracer (and any hook subscriber with the Recorder's signature could be).
_recorder_factory: Callable[[Session, int], Any] | None = None


def set_recorder_factory(factory: Callable[[Session, int], Any] | None) -> None:
    """Wire what ``Session(record=True)`` records with: ``factory(session, limit_bytes)``
    returns a hook subscriber (``acl_lab`` wires ``tracer.recorder.Recorder``)."""
    global _recorder_factory
    _recorder_factory = factory


class _Condition(threading.Condition):
    """The session's condition variable: ``notify_all`` with no thread waiting returns at
    once (every record_event and callback task notifies; most programs have no waiter)."""

    def notify_all(self) -> None:
        """Wake every waiting thread (none: nothing to do)."""
        if self._waiters:  # type: ignore[attr-defined]
            super().notify_all()


_current: Session | None = None
_current_lock = threading.Lock()


def current_session(create: bool = True) -> Session | None:
    """The session the pyACL layer talks to; created on first use when ``create``.

    None during interpreter shutdown when no session is bound: building one then would
    import (``sys.meta_path`` is None by then), so the boundary answers the late call itself.
    """
    global _current
    s = _current
    if s is None and create:
        if sys.is_finalizing():
            return None
        with _current_lock:
            if _current is None:
                _current = Session()
            s = _current
    return s


def set_current_session(session: Session | None) -> Session | None:
    """Bind ``session`` as the one the pyACL layer uses; returns the previous one."""
    global _current
    with _current_lock:
        prev, _current = _current, session
    return prev


#: Default memory bound of a session's trace, in MiB (env ``ACL_LAB_TRACE_LIMIT_MB``).
DEFAULT_TRACE_LIMIT_MB = 512


def _env_float(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def _env_seed() -> int:
    """``ACL_LAB_SEED`` as an int (0 when unset or not a number)."""
    try:
        return int(os.environ.get("ACL_LAB_SEED", "0"))
    except ValueError:
        return 0


class Session:
    """One emulated machine: devices, memory, threads, streams, events, clocks and hooks.

    Use it directly in tests and notebooks::

        with acl_lab.Session(profile="Ascend310P3") as s:
            import acl
            acl.init(); ...
        trace = s.trace()

    Args:
        profile: a profile name (``Ascend310``, ``Ascend310P3``, ``Ascend910B1``) or object.
        device_count: how many devices ``get_device_count`` reports.
        pageable_async: ``"async"`` (CANN 7/8 rule: accepted, slow, flagged) or ``"sync"``
            (newest runtime: the stream is synchronised and the copy done synchronously).
        run_mode: ``"host"`` (EP: a PCIe card in a server, ``acl.rt.get_run_mode`` says
            ``ACL_HOST``) or ``"device"`` (RC: the program runs on the board, host and device
            memory are one, ``ACL_DEVICE``; acl.util reads and writes device memory
            directly and copy kinds are not checked against the pointers).
        watchdog: seconds a multi-threaded wait may make no progress before it is reported
            as a deadlock with every thread's stack (env ``ACL_LAB_WATCHDOG``).
        record: attach a trace recorder (the normal case).
        trace_limit_bytes: memory bound of the trace (env ``ACL_LAB_TRACE_LIMIT_MB``, default
            512 MiB). Past three quarters of it the recorder leaves out successful calls that
            nothing else refers to and reports a ``trace_truncated`` finding; the rows every
            other finding needs are always kept.
        seed: the host schedule's seed (env ``ACL_LAB_SEED``, default 0): 0 is the plain
            schedule, any other seed a perturbed one that ``--seed`` replays (``hostsched``).
        preempt_s: real seconds a thread may run without a scheduling point while others
            wait for their turn before the scheduler's fallback preempts it (env
            ``ACL_LAB_PREEMPT_MS``, default 0.5 s).
    """

    def __init__(self, profile: str | DeviceProfile | None = None, device_count: int = 1,
                 pageable_async: str = "async", watchdog: float | None = None,
                 record: bool = True, trace_limit_bytes: int | None = None,
                 run_mode: str = "host", seed: int | None = None,
                 preempt_s: float | None = None) -> None:
        self.profile = get_profile(profile)
        if run_mode not in RUN_MODES:
            raise ValueError("run_mode must be 'host' or 'device'")
        self.run_mode = run_mode
        if trace_limit_bytes is None:
            mb = _env_float("ACL_LAB_TRACE_LIMIT_MB", DEFAULT_TRACE_LIMIT_MB)
            ok_mb = 0 < mb < 1e12  # NaN, inf and nonsense fall back to the default
            trace_limit_bytes = int(mb * (1 << 20)) if ok_mb else DEFAULT_TRACE_LIMIT_MB << 20
        if trace_limit_bytes <= 0:
            raise ValueError("trace_limit_bytes must be a positive number of bytes")
        self.trace_limit_bytes = trace_limit_bytes
        if not 1 <= device_count <= 16:
            raise ValueError("device_count must be between 1 and 16")
        if pageable_async not in ("async", "sync"):
            raise ValueError("pageable_async must be 'async' or 'sync'")
        self.pageable_async = pageable_async
        self.watchdog = watchdog if watchdog is not None else _env_float("ACL_LAB_WATCHDOG", 5.0)
        self.lock = rawsync.RLock()
        self.cond = _Condition(self.lock)
        if preempt_s is None:
            preempt_s = _env_float("ACL_LAB_PREEMPT_MS", hostsched.DEFAULT_PREEMPT_S * 1e3) / 1e3
        #: the host schedule (who runs when; see ``hostsched``)
        self.sched = hostsched.HostScheduler(_env_seed() if seed is None else seed,
                                             max(preempt_s, 0.01),
                                             owner=threading.current_thread())
        self.hooks = Hooks()
        #: the program's file descriptors are this process's (False in ``acl-lab grade``'s
        #: server, where the program runs in its sandbox: an fd it passes names nothing here)
        self.own_fds = True
        self.memory = MemorySystem(self.profile, device_count)
        self.devices = [Device(d, self.profile.copy_engines, self.profile.aicore_count)
                        for d in range(device_count)]
        #: host threads by their ``threading.Thread`` object: an identity Python never reuses
        #: (thread idents are reused as soon as a thread has exited), see ``thread()``
        self.threads: dict[threading.Thread, HostThread] = {}
        self.tls = threading.local()
        self.thread_list: list[HostThread] = []
        self.handles: dict[int, Any] = {}
        self.objects: list[Any] = []
        #: tasks submitted so far (a task's id is its number); the Task objects themselves are
        #: not kept once done, so a runaway loop does not grow the process (see TaskLog)
        self.task_count = 0
        self.init_count = 0
        self.finalized = False
        self.closed = False
        self.call_count = 0
        self.progress = 0
        self.applied_ns = 0
        self.effects: list[tuple[int, int, int, Task]] = []
        self.effect_seq = 0
        self._next_handle = HANDLE_BASE
        self.blocked_streams: list[Stream] = []
        self._background = {t for t in threading.enumerate()
                            if t is not threading.current_thread()}
        #: threads of acl.util.start_thread by the tid the API hands out (the ident); each
        #: entry's "thread" is the Thread object, compared by identity before it is trusted
        self.acl_threads: dict[int, dict[str, Any]] = {}
        self._prev_session: Session | None = None
        #: a SIGINT that arrived while this thread held the lock inside an API call (set by
        #: ``acl-lab run``'s handler); raised once the call's records are complete
        self.interrupt_pending = False
        #: ``finish()`` ran: the program's exit released everything, as ``aclFinalize`` would
        self.finished = False
        self.recorder: Any = None
        self.op_model_dir: str | None = None
        self.models: dict[int, Any] = {}
        self.next_model_id = 1
        if record:
            if _recorder_factory is None:
                raise RuntimeError("no trace recorder is wired (acl_lab's package import "
                                   "wires one: set_recorder_factory)")
            self.recorder = _recorder_factory(self, trace_limit_bytes)
            self.hooks.subscribe(self.recorder)

    # ================================================================== session plumbing
    def __enter__(self) -> Session:
        self._prev_session = set_current_session(self)
        return self

    def __exit__(self, *exc: object) -> None:
        set_current_session(self._prev_session)
        self.close()

    def close(self) -> None:
        """Stop accepting waits: blocked threads are released with a DeadlockError, and the
        program's threads no longer take turns."""
        with self.lock:
            self.closed = True
            hostsched.close(self)
            self.cond.notify_all()

    def trace(self) -> Any:
        """A frozen, immutable Trace of everything recorded so far (with leak findings)."""
        if self.recorder is None:
            raise RuntimeError("this session was created with record=False")
        with self.lock:
            return self.recorder.freeze()

    @property
    def background_threads(self) -> set[threading.Thread]:
        """Threads that already ran when the session was made (not the program's), and
        acl_lab's own threads (the scheduler's watchdog)."""
        return set(self._background)

    def add_background(self, t: threading.Thread) -> None:
        """Count ``t`` (a thread of acl_lab's own) among the background threads."""
        self._background.add(t)

    def finish(self) -> Any:
        """End of the program: release what is still open (recorded as leaked) and freeze.

        Called by ``acl-lab run`` at exit (and by tests); the teardown is recorded as one
        pseudo-call ``acl_lab.exit`` so every release has a call to point at. Afterwards the
        session answers like a process after ``aclFinalize``: every handle is released, a
        later ``acl.finalize`` returns 100037 (``aclFinalizeImpl`` sees ``aclFinalizeFlag``,
        hicann/runtime ``src/acl/aclrt_impl/acl.cpp``), and no call raises.
        """
        with self.lock:
            self.interrupt_pending = False  # the run is over: nothing left to interrupt
            # the schedule ends first: the teardown's own calls (made by whichever thread
            # finishes, a grader's or a server's) never wait for a turn, and threads left
            # over run on their own from here
            hostsched.close(self)
            open_devices = any(d.is_open or d.contexts for d in self.devices)
            pinned = any(r.kind == HOST_PINNED for r in self.memory.live_regions())
            if open_devices or pinned:
                th, cid, _ = self.api_enter("acl_lab.exit", 0, (), "", "<exit>", 0)
                devices.teardown(self, th, cid, "exit")
                self.api_exit(th, cid, 0)
            self.init_count = 0
            self.finalized = self.finished = True
            return self.trace()

    def thread(self) -> HostThread:
        """The calling thread's HostThread, registered on first use."""
        th: HostThread | None = getattr(self.tls, "th", None)
        if th is not None:
            return th
        me = threading.current_thread()
        th = self.threads.get(me)
        if th is None:
            clock = max((t.clock for t in self.thread_list), default=0)
            th = self.register_thread(me, clock, False)
        self.tls.th = th
        if th.turn == hostsched.NEW:
            with self.lock:
                hostsched.decide(self, th)
        return th

    def acl_parent(self, t: threading.Thread) -> dict[str, Any] | None:
        """The start_thread record of ``t`` (None for a thread acl.util did not start).

        Looked up by ident, then confirmed by identity: an exited thread's ident is reused by
        the next thread Python starts, so an ident alone never names a thread.
        """
        info = self.acl_threads.get(t.ident or 0)
        return info if info is not None and info["thread"] is t else None

    def register_thread(self, t: threading.Thread, clock: int, by_acl: bool) -> HostThread:
        """A new HostThread for the Python thread ``t`` (not registered yet)."""
        th = HostThread(len(self.thread_list), t, clock)
        th.started_by_acl = by_acl
        self.threads[t] = th
        self.thread_list.append(th)
        self.hooks.on_thread(th)
        return th

    # ================================================================== handles
    def register(self, obj: Any, kind: int | None = None, cid: int = -1,
                 label: str | Callable[[], str] = "", *, device: int = -1, ctx: int = -1,
                 param: int = 0) -> int:
        """Give ``obj`` a handle (``obj.handle``, returned) for ``lookup``.

        With a ``kind`` (an ``ObjectKind``) the object also gets an object id (``obj.oid``, its
        row in the trace's objects table) and is announced to the hooks with call ``cid``,
        ``label`` (a string, or a function called once the handle is set, for labels that
        name it), the owning ``device`` and context oid ``ctx`` and a kind-specific ``param``
        (flags). Without one it only gets the handle (profiling configs, not in the trace).
        """
        if kind is not None:
            obj.oid = len(self.objects)
            self.objects.append(obj)
        h = self._next_handle
        self._next_handle = h + HANDLE_STEP
        self.handles[h] = obj
        obj.handle = h
        if kind is not None:
            text = label if isinstance(label, str) else label()
            self.hooks.on_object(obj.oid, kind, h, device, ctx, param, cid, text)
        return h

    def lookup(self, handle: int, cls: type[_T], what: str,
               code: int = ErrorCode.ACL_ERROR_INVALID_PARAM, *,
               null_code: int = ErrorCode.ACL_ERROR_INVALID_PARAM, gone: str = "",
               live: bool = True) -> _T:
        """The object of ``cls`` that ``handle`` names, or AclError.

        Raises:
            AclError: ``null_code`` for a null (or non-int) handle ("<what> is null"),
                ``code`` for a handle of nothing or of another kind ("<h> is not a live
                <what>") and, when ``live``, for a retired object ("<what> <h> was already
                destroyed<gone>"). With ``live=False`` a retired object is returned (for
                callers whose code for it differs).
        """
        if not isinstance(handle, int) or handle == 0:
            raise AclError(null_code, f"{what} is null")
        obj = self.handles.get(handle)
        if not isinstance(obj, cls):
            raise AclError(code, f"{handle:#x} is not a live {what}")
        if live and not getattr(obj, "alive", True):
            raise AclError(code, f"{what} {handle:#x} was already destroyed{gone}")
        return obj

    def retire(self, obj: Any, cid: int, how: int = Ending.EXPLICIT) -> None:
        """``obj`` ended (``how``: an ``Ending``): ``lookup`` refuses it from now on, and the
        hooks record its end. The handle is never given out again."""
        obj.alive = False
        self.hooks.on_destroy(obj.oid, cid, how)

    # ================================================================== API bracket
    def api_enter(self, name: str, cost: int, args: tuple[Any, ...], fmt: str,
                  file: str, line: int) -> tuple[HostThread, int, int]:
        """Start an API call: a scheduling point (``hostsched.point``), then register the
        call and charge the host cost to the caller's clock.

        ``acl._boundary.InProcess`` writes this and ``api_exit`` out in every generated
        call (the hot path); a change here goes there too."""
        th = getattr(self.tls, "th", None) or self.thread()
        if self.sched.multi and th.controlled:
            hostsched.point(self, th)
        cid = self.call_count
        self.call_count = cid + 1
        start = th.clock
        th.clock = start + cost
        ctx = th.ctx
        self.hooks.on_call_begin(cid, name, th.idx, ctx.oid if ctx is not None else -1,
                                 file, line, start, args, fmt)
        return th, cid, start

    def api_exit(self, th: HostThread, cid: int, ret: int) -> None:
        """Finish an API call: record its end and result, advance the device to the caller."""
        if self.effects and self.effects[0][0] <= th.clock:
            scheduler.advance(self, th.clock)
        self.hooks.on_call_end(cid, th.clock, ret)
        if not th.controlled and self.sched.running is None:
            hostsched.kick(self)  # a thread outside the schedule may have ended a wait
        if self.interrupt_pending:
            self.deliver_interrupt()

    def deliver_interrupt(self) -> None:
        """Raise the KeyboardInterrupt held back while the API's records were half-written
        (only at points where the trace and the runtime state are complete)."""
        self.interrupt_pending = False
        raise KeyboardInterrupt

    def fail(self, th: HostThread, cid: int, err: AclError) -> int:
        """Record an AclError as the thread's recent error message and as a diagnostic."""
        th.err_msg = err.message
        self.hooks.on_diag(cid, 2, "error", f"{err.code}: {err.message}")
        return err.code

    def diag(self, cid: int, kind: str, message: str, level: int = 1) -> None:
        """Put a warning (level 1) or note (level 0) in the trace."""
        self.hooks.on_diag(cid, level, kind, message)



__all__ = ["AccessError", "AclError", "DeadlockError", "Session", "current_session",
           "set_current_session"]
