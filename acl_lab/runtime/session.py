"""The Session: all state of one emulated machine, and the operations on it.

A Session owns the device profile, host-thread registry (clocks and current contexts),
devices, contexts, streams, events, memory, the virtual-time scheduler, callbacks and hooks.
Its methods have Pythonic names and raise ``AclError`` (with the real ACL code) or
``DeadlockError``; the pyACL layer maps them to return codes. Nothing here imports the pyACL
layer, the tracer, plotly or ipywidgets.

Virtual time is integer nanoseconds. Each host thread has a clock advanced by the cost of its
API calls; device tasks are placed by a deterministic list scheduler (start = latest of stream
predecessor, awaited record, engine availability and submission). Data effects happen in
virtual-time order: a task reads its inputs at its start and writes its outputs at its end, and
the device is advanced to the caller's clock at the end of every API call, so a missing event
wait gives a wrong result, the same one every run.

Concurrency: one re-entrant lock guards everything; blocking waits release it through a
condition variable. A wait that can never be satisfied raises ``DeadlockError`` at once when no
thread that could help is still running, or after ``watchdog`` seconds without progress.
"""

from __future__ import annotations

import heapq
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from ..constants import MemcpyKind
from .errors import AccessError, AclError, DeadlockError, WaitEdge
from .hooks import Hooks
from .kinds import Ending, Engine, ObjectKind, SyncKind, TaskKind
from .memory import (
    DEVICE,
    DVPP,
    HOST_PAGEABLE,
    HOST_PINNED,
    KIND_NAMES,
    MemorySystem,
    Region,
)
from .objects import (
    LEGACY,
    NEW_MODE,
    Access,
    Context,
    DataBuffer,
    Device,
    Event,
    HostThread,
    Stream,
    Task,
)
from .profiles import DeviceProfile, get_profile

HANDLE_BASE = 0xA0_0000_0000
HANDLE_STEP = 0x40

# Short names for the kinds (``kinds`` declares them) that the session's code passes to its
# hooks; the copy, wait and object paths read them on every call, and a module constant costs
# a tenth of an enum member's read.
OBJ_CONTEXT, OBJ_STREAM, OBJ_EVENT, OBJ_DATA_BUFFER = (
    ObjectKind.CONTEXT, ObjectKind.STREAM, ObjectKind.EVENT, ObjectKind.DATA_BUFFER)
HOW_EXPLICIT, HOW_RECLAIMED = Ending.EXPLICIT, Ending.RECLAIMED
SYNC_STREAM, SYNC_DEVICE, SYNC_EVENT, SYNC_REPORT, SYNC_JOIN = (
    SyncKind.STREAM, SyncKind.DEVICE, SyncKind.EVENT, SyncKind.REPORT, SyncKind.JOIN)

ACL_EVENT_SYNC = 0x1
ACL_EVENT_TIME_LINE = 0x8
ACL_EVENT_EXTERNAL = 0x20
ACL_EVENT_IPC = 0x40
STREAM_NO_SYNC_FLAGS = 0x4 | 0x10 | 0x20  # PERSISTENT, CPU_SCHEDULE, DEVICE_USE_ONLY

#: memcpy kinds (``constants.MemcpyKind``, aclrtMemcpyKind), short for the copy path; typed
#: ``int``: the program passes a plain int
H2H: int = MemcpyKind.HOST_TO_HOST
H2D: int = MemcpyKind.HOST_TO_DEVICE
D2H: int = MemcpyKind.DEVICE_TO_HOST
D2D: int = MemcpyKind.DEVICE_TO_DEVICE
#: aclrtMemcpyKind -> the task kind of the copy
COPY_TASK: dict[int, TaskKind] = {H2H: TaskKind.H2H, H2D: TaskKind.H2D, D2H: TaskKind.D2H,
                                  D2D: TaskKind.D2D}

#: Kinds ``MemcpyKindReviseMap`` (hicann/runtime api_error.cc) allows for a pair with an
#: unregistered (pageable) side, keyed by (src pageable, dst pageable, src device, dst device).
_ALLOWED_KINDS: dict[tuple[bool, bool, bool, bool], tuple[int, ...]] = {
    (True, False, False, True): (H2D, D2D),          # unregistered -> device
    (False, True, True, False): (D2H, D2D),          # device -> unregistered
    (False, True, False, False): (H2H, H2D),         # host -> unregistered
    (True, False, False, False): (H2H, D2H),         # unregistered -> host
    (True, True, False, False): (H2H, H2D, D2H, D2D),  # unregistered -> unregistered
}

#: Session run modes: EP (``ACL_HOST``, a card in a server) and RC (``ACL_DEVICE``, on-board).
RUN_MODES = ("host", "device")

#: What a thread in process_report is waiting for (its ``HostThread.wait`` label).
REPORT_WAIT = "a callback report"

_current: Session | None = None
_current_lock = threading.Lock()


def first_unwritten(written: list[list[int]], start: int) -> int:
    """The first offset at or after ``start`` outside the sorted, merged ``written``
    ranges (a region's shadow): where a read of never-written bytes begins."""
    for lo, hi in written:
        if lo > start:
            break
        if hi > start:
            start = hi
    return start


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


_thread_join = threading.Thread.join


def _join_noticed(self: threading.Thread, timeout: float | None = None) -> None:
    """``threading.Thread.join``, then tell the current session who joined whom."""
    _thread_join(self, timeout)
    s = _current
    if s is not None and not self.is_alive():
        s.note_join(self)


def _notice_joins() -> None:
    """Route plain ``Thread.join`` calls through ``_join_noticed`` (once per process).

    A join is a host synchronisation the pyACL API never sees, yet after it the joiner's
    calls really come after everything the joined thread did. Without it the virtual clocks
    would show the main thread's teardown at the same time as its workers' last calls.
    """
    if threading.Thread.join is not _join_noticed:
        threading.Thread.join = _join_noticed  # type: ignore[method-assign]


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
    """

    def __init__(self, profile: str | DeviceProfile | None = None, device_count: int = 1,
                 pageable_async: str = "async", watchdog: float | None = None,
                 record: bool = True, trace_limit_bytes: int | None = None,
                 run_mode: str = "host") -> None:
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
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.hooks = Hooks()
        self.memory = MemorySystem(self.profile, device_count)
        self.devices = [Device(d, self.profile.copy_engines, self.profile.aicore_count)
                        for d in range(device_count)]
        #: host threads by their ``threading.Thread`` object: an identity Python never reuses
        #: (thread idents are reused as soon as a thread has exited), see ``thread()``
        self.threads: dict[threading.Thread, HostThread] = {}
        self._tls = threading.local()
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
        self._effects: list[tuple[int, int, int, Task]] = []
        self._effect_seq = 0
        self._next_handle = HANDLE_BASE
        self._blocked_streams: list[Stream] = []
        self._background = {t for t in threading.enumerate()
                            if t is not threading.current_thread()}
        #: threads of acl.util.start_thread by the tid the API hands out (the ident); each
        #: entry's "thread" is the Thread object, compared by identity before it is trusted
        self._acl_threads: dict[int, dict[str, Any]] = {}
        self._prev_session: Session | None = None
        #: a SIGINT that arrived while this thread held the lock inside an API call (set by
        #: ``acl-lab run``'s handler); raised once the call's records are complete
        self.interrupt_pending = False
        #: ``finish()`` ran: the program's exit released everything, as ``aclFinalize`` would
        self.finished = False
        self._entered = False
        self.recorder: Any = None
        self.op_model_dir: str | None = None
        self.models: dict[int, Any] = {}
        self.next_model_id = 1
        if record:
            from ..tracer.recorder import Recorder  # runtime -> tracer only at wiring time
            self.recorder = Recorder(self, trace_limit_bytes)
            self.hooks.subscribe(self.recorder)

    # ================================================================== session plumbing
    def __enter__(self) -> Session:
        self._prev_session = set_current_session(self)
        self._entered = True
        return self

    def __exit__(self, *exc: object) -> None:
        set_current_session(self._prev_session)
        self._entered = False
        self.close()

    def close(self) -> None:
        """Stop accepting waits: blocked threads are released with a DeadlockError."""
        with self.lock:
            self.closed = True
            self.cond.notify_all()

    def trace(self) -> Any:
        """A frozen, immutable Trace of everything recorded so far (with leak findings)."""
        if self.recorder is None:
            raise RuntimeError("this session was created with record=False")
        with self.lock:
            return self.recorder.freeze()

    @property
    def background_threads(self) -> set[threading.Thread]:
        """Threads that already ran when the session was made (not the program's)."""
        return set(self._background)

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
            open_devices = any(d.is_open or d.contexts for d in self.devices)
            pinned = any(r.kind == HOST_PINNED for r in self.memory.live_regions())
            if open_devices or pinned:
                th, cid, _ = self.api_enter("acl_lab.exit", 0, (), 0, "<exit>", 0)
                self._teardown(th, cid, "exit")
                self.api_exit(th, cid, 0)
            self.init_count = 0
            self.finalized = self.finished = True
            return self.trace()

    def thread(self) -> HostThread:
        """The calling thread's HostThread, registered on first use."""
        th: HostThread | None = getattr(self._tls, "th", None)
        if th is not None:
            return th
        me = threading.current_thread()
        th = self.threads.get(me)
        if th is None:
            clock = max((t.clock for t in self.thread_list), default=0)
            parent = self._acl_parent(me)
            if parent is not None:
                clock = parent["clock"]
            th = self._register_thread(me, clock, parent is not None)
        self._tls.th = th
        return th

    def _acl_parent(self, t: threading.Thread) -> dict[str, Any] | None:
        """The start_thread record of ``t`` (None for a thread acl.util did not start).

        Looked up by ident, then confirmed by identity: an exited thread's ident is reused by
        the next thread Python starts, so an ident alone never names a thread.
        """
        info = self._acl_threads.get(t.ident or 0)
        return info if info is not None and info["thread"] is t else None

    def _register_thread(self, t: threading.Thread, clock: int, by_acl: bool) -> HostThread:
        """A new HostThread for the Python thread ``t`` (not registered yet)."""
        if self.thread_list:
            _notice_joins()  # a second host thread: joins now order virtual time
        th = HostThread(len(self.thread_list), t, clock)
        th.started_by_acl = by_acl
        self.threads[t] = th
        self.thread_list.append(th)
        self.hooks.on_thread(th)
        return th

    def _handle(self, obj: Any) -> int:
        h = self._next_handle
        self._next_handle += HANDLE_STEP
        self.handles[h] = obj
        return h

    def _new_oid(self, obj: Any) -> int:
        self.objects.append(obj)
        return len(self.objects) - 1

    # ================================================================== API bracket
    def api_enter(self, name: str, cost: int, args: tuple[Any, ...], ptrs: int,
                  file: str, line: int) -> tuple[HostThread, int, int]:
        """Start an API call: register it and charge the host cost to the caller's clock."""
        th = getattr(self._tls, "th", None) or self.thread()
        cid = self.call_count
        self.call_count = cid + 1
        start = th.clock
        th.clock = start + cost
        ctx = th.ctx
        self.hooks.on_call_begin(cid, name, th.idx, ctx.oid if ctx is not None else -1,
                                 file, line, start, args, ptrs)
        return th, cid, start

    def api_exit(self, th: HostThread, cid: int, ret: int) -> None:
        """Finish an API call: record its end and result, advance the device to the caller."""
        if self._effects and self._effects[0][0] <= th.clock:
            self.advance(th.clock)
        self.hooks.on_call_end(cid, th.clock, ret)
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

    # ================================================================== init / finalize
    def init(self, th: HostThread, cid: int, config_path: str | None) -> int:
        """aclInit: reference-counted; a repeat returns 100002."""
        if config_path is not None and config_path != "" and not os.path.isfile(config_path):
            raise AclError(100003, f"config file {config_path!r} does not exist")
        self.init_count += 1
        if self.init_count > 1:
            raise AclError(100002, "acl.init was already called (repeat init is harmless; "
                                   "many programs ignore 100002)")
        self.finalized = False
        return 0

    def finalize(self, th: HostThread, cid: int, reference: bool = False) -> int:
        """aclFinalize (or aclFinalizeReference when ``reference``): returns the new count."""
        if self.init_count < 1:
            raise AclError(100037, "acl.finalize was already called (or acl.init never was)")
        self.init_count = self.init_count - 1 if reference else 0
        if self.init_count == 0:
            self._teardown(th, cid, "finalize")
            self.finalized = True
        return self.init_count

    def _teardown(self, th: HostThread, cid: int, why: str) -> None:
        """Release everything still open: devices, contexts, streams, events, memory."""
        for dev in self.devices:
            if dev.is_open or dev.contexts:
                self._release_device(th, cid, dev, why)
        for r in self.memory.live_regions():
            if r.kind == HOST_PINNED:
                self._reclaim_region(r, cid)

    # ================================================================== devices
    def _device(self, index: int) -> Device:
        if not isinstance(index, int) or not 0 <= index < len(self.devices):
            raise AclError(107001, f"device id {index} is invalid: this machine has "
                                   f"{len(self.devices)} device(s), numbered from 0")
        return self.devices[index]

    def set_device(self, th: HostThread, cid: int, index: int) -> None:
        """aclrtSetDevice: bind the device's default context to this thread (ref-counted)."""
        dev = self._device(index)
        dev.refcount += 1
        if dev.default_ctx is None or not dev.default_ctx.alive:
            dev.default_ctx = self._make_context(dev, True, cid)
        th.ctx = dev.default_ctx
        th.device = index

    def reset_device(self, th: HostThread, cid: int, index: int, force: bool = False) -> None:
        """aclrtResetDevice(Force): drop a reference; at zero release everything of it."""
        dev = self._device(index)
        if dev.refcount <= 0:
            raise AclError(107000, f"device {index} is not set (reset without a matching "
                                   "set_device, or reset twice)")
        dev.refcount = 0 if force else dev.refcount - 1
        if dev.refcount == 0:
            self._release_device(th, cid, dev, "reset_device")

    def _release_device(self, th: HostThread, cid: int, dev: Device, why: str) -> None:
        for ctx in list(dev.contexts):
            if ctx.alive:
                if why == "exit":
                    self._drop_pending(ctx, "the program exited")
                else:
                    self._drain_context(th, cid, ctx)
        for ctx in list(dev.contexts):
            if ctx.alive:
                # The default context is released by reset_device by design; anything else
                # still alive here was leaked.
                ok = ctx.is_default and why == "reset_device"
                self._destroy_context_now(ctx, cid, HOW_EXPLICIT if ok else HOW_RECLAIMED)
        dev.contexts = []
        dev.default_ctx = None
        dev.refcount = 0
        for r in self.memory.live_regions():
            if r.kind in (DEVICE, DVPP) and r.device == dev.index:
                self._reclaim_region(r, cid)
        for t in self.thread_list:
            if t.ctx is not None and t.ctx.device is dev:
                t.ctx = None
                t.device = -1

    def _reclaim_region(self, r: Region, cid: int) -> None:
        self.memory.free(r)
        self.hooks.on_free(r, cid, HOW_RECLAIMED)

    def get_device(self, th: HostThread) -> int:
        """aclrtGetDevice: the thread's device, 107002 if it has no context."""
        if th.ctx is None:
            raise AclError(107002, "this thread has no current context or device: call "
                                   "acl.rt.set_device or acl.rt.set_context in this thread")
        return th.ctx.device.index

    def require_ctx(self, th: HostThread) -> Context:
        """The thread's current context, or 107002 explained."""
        ctx = th.ctx
        if ctx is None:
            where = ("a thread started by acl.util.start_thread" if th.started_by_acl
                     else f"{th.label()}")
            raise AclError(107002, f"no current context in {where}: a new thread starts with "
                                   "none; call acl.rt.set_context(ctx) (or acl.rt.set_device) "
                                   "in this thread first")
        return ctx

    # ================================================================== contexts
    def _make_context(self, dev: Device, is_default: bool, cid: int) -> Context:
        ctx = Context(-1, 0, dev, is_default)
        ctx.oid = self._new_oid(ctx)
        ctx.handle = self._handle(ctx)
        dev.contexts.append(ctx)
        label = ctx.label()
        self.hooks.on_object(ctx.oid, OBJ_CONTEXT, ctx.handle, dev.index, -1,
                             int(is_default), cid, label)
        ctx.default_stream = self._make_stream(ctx, True, 0, cid)
        return ctx

    def create_context(self, th: HostThread, cid: int, index: int) -> int:
        """aclrtCreateContext: a new context that becomes current for this thread."""
        dev = self._device(index)
        ctx = self._make_context(dev, False, cid)
        th.ctx = ctx
        th.device = index
        return ctx.handle

    def context(self, handle: int) -> Context:
        """Resolve a context handle (107000 for unknown or destroyed ones)."""
        if not isinstance(handle, int) or handle == 0:
            raise AclError(100000, "context handle is null")
        obj = self.handles.get(handle)
        if not isinstance(obj, Context):
            raise AclError(107000, f"{handle:#x} is not a context handle")
        if not obj.alive:
            raise AclError(107000, f"context {handle:#x} was already destroyed (or its "
                                   "device was reset)")
        return obj

    def destroy_context(self, th: HostThread, cid: int, handle: int) -> None:
        """aclrtDestroyContext: only explicit contexts; waits for their streams first."""
        ctx = self.context(handle)
        if ctx.is_default:
            raise AclError(107000, "the default context of set_device cannot be destroyed; "
                                   "call acl.rt.reset_device instead")
        self._drain_context(th, cid, ctx)
        self._destroy_context_now(ctx, cid, HOW_EXPLICIT)
        for t in self.thread_list:
            if t.ctx is ctx:
                t.ctx = None

    def _drop_pending(self, ctx: Context, why: str) -> None:
        """Cancel tasks that never got to run (at process exit nothing waits for them)."""
        for st in ctx.streams:
            for t in st.pending:
                t.status = 507903
                t.reason = f"never ran: {why}"
                t.callback = t.user_data = None
                self.hooks.on_task_status(t)
            st.pending.clear()
            st.blocked_by = None
            if st in self._blocked_streams:
                self._blocked_streams.remove(st)

    def _drain_context(self, th: HostThread, cid: int, ctx: Context) -> None:
        streams = [s for s in ctx.streams if s.alive]
        self._wait_streams(th, cid, streams, f"{ctx.label()} being released", timeout_ns=-1)

    def _destroy_context_now(self, ctx: Context, cid: int, how: int) -> None:
        for s in ctx.streams:
            if s.alive and not s.is_default:
                self._destroy_stream_now(s, cid, HOW_RECLAIMED)
        for e in ctx.events:
            if e.alive:
                e.alive = False
                self.hooks.on_destroy(e.oid, cid, HOW_RECLAIMED)
        if ctx.default_stream is not None and ctx.default_stream.alive:
            self._destroy_stream_now(ctx.default_stream, cid, how)
        ctx.alive = False
        self.hooks.on_destroy(ctx.oid, cid, how)
        for t in self.thread_list:
            if t.ctx is ctx:
                t.ctx = None

    def set_context(self, th: HostThread, handle: int) -> None:
        """aclrtSetCurrentContext: the thread's context (and device) become ``handle``'s."""
        ctx = self.context(handle)
        th.ctx = ctx
        th.device = ctx.device.index

    # ================================================================== streams
    def _make_stream(self, ctx: Context, is_default: bool, flags: int, cid: int) -> Stream:
        dev = ctx.device
        count = sum(1 for c in dev.contexts for s in c.streams if s.alive)
        if count >= self.profile.max_streams:
            raise AclError(207008, f"no stream resources left: {count} streams exist on "
                                   f"device {dev.index} (limit {self.profile.max_streams}, "
                                   "default streams included)")
        s = Stream(-1, 0, ctx, is_default, flags)
        s.oid = self._new_oid(s)
        s.handle = self._handle(s)
        ctx.streams.append(s)
        self.hooks.on_object(s.oid, OBJ_STREAM, s.handle, dev.index, ctx.oid, flags, cid,
                             s.label() + (f" of {ctx.label()}" if is_default else ""))
        return s

    def create_stream(self, th: HostThread, cid: int, flags: int = 0) -> int:
        """aclrtCreateStream(WithConfig): a stream of the current context."""
        ctx = self.require_ctx(th)
        return self._make_stream(ctx, False, flags, cid).handle

    def stream(self, th: HostThread, handle: int, check_ctx: bool = True) -> Stream:
        """Resolve a stream handle; 0 is the current context's default stream.

        Raises:
            AclError: 107002 without a current context, 507000 for a garbage or destroyed
                handle, 107003 when the stream belongs to another context (``check_ctx``).
        """
        ctx = self.require_ctx(th)
        if handle == 0:
            assert ctx.default_stream is not None
            return ctx.default_stream
        obj = self.handles.get(handle)
        if not isinstance(obj, Stream):
            raise AclError(507000, f"{handle:#x} is not a stream handle")
        if not obj.alive:
            raise AclError(507000, f"stream {handle:#x} was already destroyed")
        if check_ctx and obj.ctx is not ctx:
            raise AclError(107003, f"{obj.label()} belongs to {obj.ctx.label()}, but the "
                                   f"current context of this thread is {ctx.label()}: call "
                                   "acl.rt.set_context with the stream's context first")
        return obj

    def destroy_stream(self, th: HostThread, cid: int, handle: int, force: bool) -> None:
        """aclrtDestroyStream(Force): waits for (or, forced, drops) pending tasks."""
        s = self.stream(th, handle)
        if s.is_default:
            raise AclError(107000, "the default stream cannot be destroyed")
        if force:
            for t in s.pending:
                t.status = 507903
                t.reason = "dropped by destroy_stream_force"
                self.hooks.on_task_status(t)
            s.pending.clear()
            if s.blocked_by is not None:
                s.blocked_by = None
        else:
            self._wait_streams(th, cid, [s], f"{s.label()} being destroyed", timeout_ns=-1)
        self._destroy_stream_now(s, cid, HOW_EXPLICIT)

    def _destroy_stream_now(self, s: Stream, cid: int, how: int) -> None:
        s.alive = False
        if s.subscriber is not None:
            s.subscriber.subscriptions = [x for x in s.subscriber.subscriptions if x is not s]
            s.subscriber = None
        self.hooks.on_destroy(s.oid, cid, how)

    def stream_done_at(self, s: Stream, t: int) -> bool:
        """True when every task of ``s`` has finished by virtual time ``t``."""
        return s.idle and s.tail_end <= t

    # ================================================================== events
    def create_event(self, th: HostThread, cid: int, flags: int, mode: int) -> int:
        """aclrtCreateEvent(WithFlag / ExWithFlag) in the current context."""
        ctx = self.require_ctx(th)
        live = sum(1 for c in ctx.device.contexts for e in c.events if e.alive)
        if live >= self.profile.max_events:
            raise AclError(207007, f"no event resources left ({live} events, limit "
                                   f"{self.profile.max_events})")
        e = Event(-1, 0, ctx, flags, mode)
        e.oid = self._new_oid(e)
        e.handle = self._handle(e)
        ctx.events.append(e)
        self.hooks.on_object(e.oid, OBJ_EVENT, e.handle, ctx.device.index, ctx.oid,
                             flags | (mode << 16), cid, e.label())
        return e.handle

    def event(self, handle: int) -> Event:
        """Resolve an event handle (507000 for garbage or destroyed handles)."""
        if not isinstance(handle, int) or handle == 0:
            raise AclError(100000, "event handle is null")
        obj = self.handles.get(handle)
        if not isinstance(obj, Event):
            raise AclError(507000, f"{handle:#x} is not an event handle")
        if not obj.alive:
            raise AclError(507000, f"event {handle:#x} was already destroyed")
        return obj

    def destroy_event(self, th: HostThread, cid: int, handle: int) -> None:
        """aclrtDestroyEvent: does not wait; queued records still complete."""
        e = self.event(handle)
        e.alive = False
        self.hooks.on_destroy(e.oid, cid, HOW_EXPLICIT)

    def record_event(self, th: HostThread, cid: int, ev: int, stream: int) -> None:
        """aclrtRecordEvent: capture every task already submitted to the stream."""
        e = self.event(ev)
        s = self.stream(th, stream)
        t = self._new_task(TaskKind.EVENT_RECORD, s, cid, th.clock, Engine.NONE,
                           self.profile.event_task_ns)
        t.event = e
        e.records.append(t)
        self._submit(t)  # gives t its id
        if len(e.records) % 64 == 0:
            e.forget_old()

    def reset_event(self, th: HostThread, cid: int, ev: int, stream: int) -> None:
        """aclrtResetEvent: queued on the stream; later waits need a new record."""
        e = self.event(ev)
        s = self.stream(th, stream)
        if e.mode == LEGACY and e.flags and not e.flags & ACL_EVENT_SYNC:
            raise AclError(107000, f"{e.label()} was created without ACL_EVENT_SYNC, so it "
                                   "cannot be reset (C-doc 07)")
        if e.mode == LEGACY and not e.flags:
            self.diag(cid, "reset_legacy_event",
                      f"reset_event on {e.label()} made by create_event: the docs call this "
                      "undefined; create it with create_event_with_flag(ACL_EVENT_SYNC)")
        t = self._new_task(TaskKind.EVENT_RESET, s, cid, th.clock, Engine.NONE,
                           self.profile.event_task_ns)
        t.event = e
        e.resets.append(t)
        self._submit(t)

    def stream_wait_event(self, th: HostThread, cid: int, stream: int, ev: int) -> None:
        """aclrtStreamWaitEvent: later tasks on the stream wait for the event's record."""
        s = self.stream(th, stream)
        e = self.event(ev)
        if e.mode == LEGACY and e.flags and not e.flags & ACL_EVENT_SYNC:
            raise AclError(107000, f"{e.label()} was created without ACL_EVENT_SYNC, so "
                                   "stream_wait_event cannot use it (C-doc 07)")
        rec = e.last_record
        if rec is None:
            if e.mode == LEGACY:
                raise AclError(107000, f"{e.label()} has not been recorded: call "
                                       "acl.rt.record_event before acl.rt.stream_wait_event")
            self.diag(cid, "wait_before_record",
                      f"{e.label()} (new mode) was never recorded: this wait does nothing",
                      level=0)
            return
        t = self._new_task(TaskKind.EVENT_WAIT, s, cid, th.clock, Engine.NONE,
                           self.profile.event_task_ns)
        t.event = e
        t.record = rec
        e.waiting.append(t)
        self._submit(t)

    def _event_complete_at(self, e: Event, t: int) -> bool:
        """Is the event's flag set at virtual time ``t`` (latest record done, no reset after)?"""
        rec = e.last_record
        if rec is None:
            return e.mode == NEW_MODE
        if not rec.placed or rec.end > t:
            return False
        return not any(r.placed and r.id > rec.id and r.start <= t for r in e.resets)

    def query_event(self, th: HostThread, ev: int) -> bool:
        """True when the event's latest record has completed by the caller's clock."""
        return self._event_complete_at(self.event(ev), th.clock)

    def synchronize_event(self, th: HostThread, cid: int, ev: int, timeout_ns: int) -> None:
        """aclrtSynchronizeEvent(WithTimeout): block until the latest record completes."""
        e = self.event(ev)
        rec = e.last_record
        if rec is None:
            return
        start = th.clock

        def done() -> bool:
            return rec.placed

        self._block(th, cid, done, lambda: self._needs_for_task(rec, th),
                    f"{e.label()} to complete", timeout_ns, 507047)
        if rec.end > th.clock:
            if timeout_ns >= 0 and rec.end > start + timeout_ns:
                th.clock = start + timeout_ns
                self.hooks.on_sync(cid, SYNC_EVENT, e.oid, start, th.clock)
                raise AclError(507047, f"{e.label()} did not complete within "
                                       f"{timeout_ns / 1e6:g} ms")
            th.clock = rec.end + self.profile.sync_wake_ns
        self.advance(th.clock)
        self.hooks.on_sync(cid, SYNC_EVENT, e.oid, start, th.clock)

    def event_elapsed_ms(self, th: HostThread, start_ev: int, end_ev: int) -> float:
        """aclrtEventElapsedTime: milliseconds between two completed records."""
        a, b = self.event(start_ev), self.event(end_ev)
        ra, rb = a.last_record, b.last_record
        if ra is None or rb is None:
            which = a if ra is None else b
            raise AclError(507000, f"{which.label()} was never recorded")
        for r, e in ((ra, a), (rb, b)):
            if not r.placed or r.end > th.clock:
                raise AclError(107006, f"{e.label()} is recorded but not complete yet: "
                                       "synchronize the stream (or event) first")
        return (rb.end - ra.end) / 1e6

    # ================================================================== memory
    def malloc(self, th: HostThread, cid: int, size: int, policy: int, kind: str) -> int:
        """aclrtMalloc / MallocAlign32 / MallocCached, and acldvppMalloc (``kind='dvpp'``)."""
        ctx = self.require_ctx(th)
        r = self.memory.alloc_device(ctx.device.index, size, policy, cid, ctx.oid,
                                     align32_only=(kind == "align32"), dvpp=(kind == "dvpp"))
        self.hooks.on_alloc(r, cid)
        return r.addr

    def malloc_host(self, th: HostThread, cid: int, size: int) -> int:
        """aclrtMallocHost: page-locked host memory, 64-byte aligned, uninitialised."""
        r = self.memory.alloc_pinned(size, cid)
        self.hooks.on_alloc(r, cid)
        return r.addr

    def free(self, th: HostThread, cid: int, ptr: int, kind: str) -> None:
        """aclrtFree / aclrtFreeHost / acldvppFree: release at once (no wait for tasks)."""
        api = {"device": "acl.rt.free", "host": "acl.rt.free_host",
               "dvpp": "acl.media.dvpp_free"}[kind]
        if ptr == 0:
            raise AclError(100000, f"{api} got a null pointer")
        r = self.memory.find(ptr)
        if r is None or r.addr != ptr:
            dead = self.memory.find_freed(ptr)
            if r is None and dead is not None and dead.addr == ptr:
                raise AclError(107000, f"{api}({ptr:#x}): allocation #{dead.id} was already "
                                       "freed (double free)")
            if r is not None:
                raise AclError(107000, f"{api}({ptr:#x}) points {ptr - r.addr} bytes into "
                                       f"allocation #{r.id}: free takes the start address")
            raise AclError(107000, f"{api}({ptr:#x}): not an address this allocator handed "
                                   "out")
        # aclrtFree and acldvppFree both end in the driver's device free and check no
        # allocator (CANN runtime: aclrtFreeImpl -> rtFree -> ApiImpl::DevFree in
        # src/acl/aclrt_impl/memory.cpp and src/runtime/api/impl/api_impl.cc; DevDvppFree
        # checks only that the pointer is device memory): either frees the other's memory
        # and returns 0, and the trace's invalid_free check warns about the mismatch
        want = {"device": (DEVICE, DVPP), "host": (HOST_PINNED,), "dvpp": (DVPP, DEVICE)}[kind]
        if r.kind not in want:
            hint = {DEVICE: "acl.rt.free", HOST_PINNED: "acl.rt.free_host",
                    DVPP: "acl.media.dvpp_free",
                    HOST_PAGEABLE: "nothing (Python owns that buffer)"}[r.kind]
            raise AclError(107000, f"{api}({ptr:#x}) was given {KIND_NAMES[r.kind]} memory "
                                   f"(allocation #{r.id}); release it with {hint}")
        self.memory.free(r)
        self.hooks.on_free(r, cid, HOW_EXPLICIT)

    def mem_info(self, th: HostThread, attr: int) -> tuple[int, int]:
        """aclrtGetMemInfo: (free, total) of the current device for an aclrtMemAttr.

        The device's own kind (DDR on 310-class, HBM on 910-class) and its huge/normal
        variants report the shared capacity; HBM asked of a DDR device reports DDR (C-doc
        11-01); anything the device lacks (DDR on an HBM device, P2P and 1 GiB pools where
        unsupported) gives (0, 0).
        """
        ctx = self.require_ctx(th)
        mem = self.memory.devices[ctx.device.index]
        if not 0 <= attr <= 17:
            raise AclError(100000, f"memory attribute {attr} is not an aclrtMemAttr value "
                                   "(0-17)")
        hbm = self.profile.memory_kind == "hbm"
        ddr_attrs = {0, 2, 3}            # DDR, DDR_HUGE, DDR_NORMAL
        hbm_attrs = {1, 4, 5}            # HBM, HBM_HUGE, HBM_NORMAL
        generic = {12, 13}               # MEM_NORMAL, MEM_HUGE
        huge1g = {10, 14}                # HBM_HUGE1G, MEM_HUGE1G
        supported = generic | hbm_attrs | (set() if hbm else ddr_attrs)
        if self.profile.supports_huge1g:
            supported |= huge1g
        if attr in supported:
            return mem.free_bytes, mem.capacity
        return 0, 0

    # ------------------------------------------------------------------ copies
    def _resolve(self, ptr: int, nbytes: int, what: str) -> Region:
        r = self.memory.find(ptr)
        if r is not None and ptr + nbytes <= r.end:
            return r
        return self.memory.resolve(ptr, nbytes, what)

    def _copy_regions(self, dst: int, src: int, count: int) -> tuple[Region, Region, int]:
        """Resolve the start of both sides; returns (dst region, src region, inferred kind).

        Raw host memory (no region holds it) is resolved for the whole ``count``: its pages
        must be mapped (see ``MemorySystem.raw_region``)."""
        rd = self.memory.find(dst)
        if rd is None:
            rd = self.memory.resolve(dst, count, "destination")
        rs = self.memory.find(src)
        if rs is None:
            rs = self.memory.resolve(src, count, "source")
        d_dev = rd.kind in (DEVICE, DVPP)
        s_dev = rs.kind in (DEVICE, DVPP)
        kind = (D2D if d_dev else D2H) if s_dev else (H2D if d_dev else H2H)
        return rd, rs, kind

    def _copy_checks(self, cid: int, dst: int, dest_max: int, src: int, count: int,
                     kind: int, asynchronous: bool = False) -> tuple[Region, Region, int] | None:
        if count == 0:
            return None
        if dst == 0 or src == 0:
            raise AclError(100000, "memcpy got a null " + ("destination" if dst == 0
                                                             else "source") + " pointer")
        if count > dest_max:
            raise AclError(107000, f"count ({count}) is larger than dest_max ({dest_max}): "
                                   "the copy would overflow the destination")
        if count < 0 or dest_max < 0:
            raise AclError(100000, "sizes must not be negative")
        if not 0 <= kind <= 7:
            raise AclError(100000, f"memcpy kind {kind} is not an aclrtMemcpyKind value (0-7)")
        if dst == src:
            return None
        rd, rs, inferred = self._copy_regions(dst, src, count)
        if rs.kind == HOST_PAGEABLE and not rs.raw and src + count > rs.end:
            rs = self._host_overread(cid, rs, src, count)
        self._refuse_read_only(cid, rd, dst, "memcpy destination")
        # MemcpyAsyncCheckLocation checks kinds only in RT_RUN_MODE_ONLINE (EP); on the
        # board (RC) host and device memory are one and any kind moves the bytes.
        if kind in (H2H, H2D, D2H, D2D) and kind != inferred and self.run_mode == "host":
            self._check_kind(cid, kind, inferred, rs, rd, asynchronous)
        return rd, rs, inferred

    def _host_overread(self, cid: int, rs: Region, src: int, count: int) -> Region:
        """A copy source that starts in a host buffer (``acl.util.bytes_to_ptr`` /
        ``numpy_to_ptr``) and runs past its end: copied like real ACL, with a finding.

        Real ACL does not know a host pointer's size (the copy is the driver's,
        ``drvMemcpy``, closed source): it copies the bytes that follow the buffer, whatever
        lies there, or crashes if they are unmapped. The emulator copies the same bytes when
        they are mapped readable and refuses an unmapped range with the raw-address code
        (107000, ``MemorySystem.raw_region``). Only sources: a host destination that runs
        past its buffer stays refused (507053), since the emulator never writes memory the
        program may not write. The ``host_overread`` diagnostic (error level) carries the
        overrun for the ``out_of_bounds`` finding.
        """
        over = src + count - rs.end
        where = f" (+{src - rs.addr})" if src != rs.addr else ""
        head = (f"memcpy source{where}: range of {count} bytes runs {over} bytes past the end "
                f"of {KIND_NAMES[rs.kind]} allocation #{rs.id} ({rs.size} bytes)")
        try:
            raw = self.memory.host_overread(rs, src, count, "memcpy source")
        except AccessError:
            self.diag(cid, "host_overread", f"{head}; the bytes that follow are not mapped: "
                                            "refused with 107000", level=2)
            raise
        self.diag(cid, "host_overread", f"{head}; the {over} bytes that follow it were "
                                        "copied, as real ACL copies them", level=2)
        return raw

    def _check_kind(self, cid: int, kind: int, inferred: int, rs: Region, rd: Region,
                    asynchronous: bool) -> None:
        """A copy kind that does not match its pointers: corrected, accepted or refused.

        Real runtime (hicann/runtime ``src/runtime/api/impl/api_error.cc``): an asynchronous
        copy goes through ``MemcpyAsyncCheckLocation`` -> ``MemcpyKindAutoCorrect``, whose
        ``MemcpyKindReviseMap`` forces the kind of every registered combination (device or
        page-locked host on both sides) with only an INFO log, and for a side that is
        unregistered (pageable) host memory accepts only the kinds listed for that pair
        (``allowedKinds``), returning ``RT_ERROR_INVALID_VALUE`` otherwise, which
        ``errcode_manage.cc`` maps to 107000 (ACL_ERROR_RT_PARAM_INVALID). A synchronous
        ``rtMemcpy`` (``MemCopySync``) does not call it: the driver's copy goes by the
        addresses, so a wrong kind is silently corrected there. Either way nothing tells
        the program, so the emulator leaves a ``memcpy_kind_mismatch`` diagnostic.
        """
        names = ("HOST_TO_HOST", "HOST_TO_DEVICE", "DEVICE_TO_HOST", "DEVICE_TO_DEVICE")
        pair = f"{KIND_NAMES[rs.kind]} -> {KIND_NAMES[rd.kind]}"
        allowed = _ALLOWED_KINDS.get((rs.kind == HOST_PAGEABLE, rd.kind == HOST_PAGEABLE,
                                      rs.kind in (DEVICE, DVPP), rd.kind in (DEVICE, DVPP)))
        if asynchronous and allowed is not None and kind not in allowed:
            text = (f"kind ACL_MEMCPY_{names[kind]} does not match the pointers ({pair}) and "
                    "the runtime refuses it for unregistered (pageable) host memory: it "
                    "accepts only " + " or ".join(f"ACL_MEMCPY_{names[k]}" for k in allowed))
            self.diag(cid, "memcpy_kind_mismatch", text, level=2)
            raise AclError(107000, text)
        how = ("accepts it and copies by the addresses" if allowed is not None
               else f"corrects it to ACL_MEMCPY_{names[inferred]} without a word")
        self.diag(cid, "memcpy_kind_mismatch",
                  f"kind ACL_MEMCPY_{names[kind]} does not match the pointers ({pair}): the "
                  f"runtime {how}, so the copy is ACL_MEMCPY_{names[inferred]}")

    def _copy_cost(self, kind: int, count: int, pinned: bool) -> tuple[Engine, int]:
        p = self.profile
        if kind == H2D:
            bw, eng = p.h2d_pinned_bw, Engine.COPY_H2D
        elif kind == D2H:
            bw, eng = p.d2h_pinned_bw, Engine.COPY_D2H
        elif kind == D2D:
            bw, eng = p.device_mem_bw / 2, Engine.COPY_D2D
        else:
            bw, eng = 10.0, Engine.HOST
        if not pinned and kind in (H2D, D2H):
            bw *= p.pageable_factor
        return eng, p.copy_setup_ns + int(count / bw)

    def memcpy(self, th: HostThread, cid: int, dst: int, dest_max: int, src: int, count: int,
               kind: int) -> None:
        """aclrtMemcpy: synchronous; the host blocks until the copy is done."""
        self.require_ctx(th)
        checked = self._copy_checks(cid, dst, dest_max, src, count, kind)
        if checked is None:
            return
        rd, rs, k = checked
        pinned = not (rd.kind == HOST_PAGEABLE or rs.kind == HOST_PAGEABLE)
        eng, dur = self._copy_cost(k, count, pinned)
        task = self._new_task(COPY_TASK[k], None, cid, th.clock, eng, dur)
        task.pinned = pinned
        task.nbytes = count
        self._sync_task(th, task, [(rs, src - rs.addr, count, False),
                                   (rd, dst - rd.addr, count, True)])

    def memset(self, th: HostThread, cid: int, ptr: int, max_count: int, value: int,
               count: int) -> None:
        """aclrtMemset: synchronous; only the low 8 bits of ``value`` are used."""
        self.require_ctx(th)
        r = self._memset_checks(ptr, max_count, count)
        if r is None:
            return
        self._refuse_read_only(cid, r, ptr, "memset pointer")
        if r.kind in (HOST_PINNED, HOST_PAGEABLE):
            self._check_range(r, ptr, count)
            self.memory.fill(r, ptr - r.addr, value, count)
            return
        task = self._new_task(TaskKind.MEMSET, None, cid, th.clock, Engine.COPY_D2D,
                              self.profile.copy_setup_ns
                              + int(count / self.profile.device_mem_bw))
        task.fill = value
        task.nbytes = count
        self._sync_task(th, task, [(r, ptr - r.addr, count, True)])

    def _refuse_read_only(self, cid: int, r: Region, ptr: int, what: str) -> None:
        """Refuse a write into memory the program may not write, before a byte moves.

        Real ACL has no check of its own: the driver's copy into a read-only page fails
        (``drvMemcpy``, closed source; its invalid-value error maps to 107000 in
        ``errcode_manage.cc``) or the process dies with SIGSEGV; a write into a ``bytes``
        object silently changes an immutable (maybe interned) object. The emulator refuses
        with 107000 and a ``read_only_destination`` diagnostic for the finding.
        """
        why = self.memory.may_write(r)
        if why:
            # No address in the text: host addresses differ from run to run, the trace not.
            at = f" (+{ptr - r.addr})" if ptr != r.addr else ""
            self.diag(cid, "read_only_destination", f"the {what}{at} is {why}", level=2)
            raise AclError(107000, f"the {what}{at} is {why}: the program may not write it, "
                                   "so nothing was written")

    def _memset_checks(self, ptr: int, max_count: int, count: int) -> Region | None:
        if count == 0:
            return None
        if ptr == 0:
            raise AclError(100000, "memset got a null pointer")
        if count > max_count:
            raise AclError(107000, f"count ({count}) is larger than max_count ({max_count})")
        if count < 0:
            raise AclError(100000, "count must not be negative")
        r = self.memory.find(ptr)
        if r is None:
            r = self.memory.resolve(ptr, count, "memset pointer")
        return r

    def memcpy_async(self, th: HostThread, cid: int, dst: int, dest_max: int, src: int,
                     count: int, kind: int, stream: int) -> None:
        """aclrtMemcpyAsync: a copy task on the stream (see the module notes on pageable)."""
        s = self.stream(th, stream)
        checked = self._copy_checks(cid, dst, dest_max, src, count, kind, asynchronous=True)
        if checked is None:
            return
        rd, rs, k = checked
        if k == H2H and self.run_mode == "host":
            # api_error.cc MemcpyAsync: "H2H is not supported" only when runMode is ONLINE.
            raise AclError(207000, "memcpy_async between two host buffers is not supported "
                                   "in EP mode; use acl.rt.memcpy (synchronous)")
        host = rs if k == H2D else rd if k == D2H else None
        pinned = host is None or host.kind == HOST_PINNED
        if host is not None and host.kind == HOST_PAGEABLE:
            self.diag(cid, "pageable_async_copy",
                      "memcpy_async with pageable host memory ("
                      + ("raw host memory" if host.raw else f"host buffer #{host.id}") + "): the "
                      "copy is staged and slower, and CANN 7/8 documents unpredictable errors; "
                      "use acl.rt.malloc_host for buffers of async copies")
        for side, ptr, reg in (("destination", dst, rd), ("source", src, rs)) \
                if (dst | src) % 64 else ():
            # Pageable buffers sit wherever Python put them (already flagged above); noting
            # their alignment would make traces differ from run to run.
            if ptr % 64 and reg.kind != HOST_PAGEABLE:
                self.diag(cid, "misaligned_async_copy",
                          f"memcpy_async {side} ({KIND_NAMES[reg.kind]} #{reg.id} + "
                          f"{ptr - reg.addr}) is {ptr % 64} bytes past a 64-byte boundary; "
                          "the docs require 64-byte aligned source and destination")
        if not pinned and self.pageable_async == "sync":
            self._wait_streams(th, cid, [s], f"{s.label()} before a pageable copy",
                               timeout_ns=-1)
            self.memcpy(th, cid, dst, dest_max, src, count, k)  # kind already checked
            return
        # On the board (device run mode) a stream's host-to-host copy is the device's DMA.
        eng, dur = self._copy_cost(D2D if k == H2H else k, count, pinned)
        t = Task(COPY_TASK[k], s, cid, th.clock, eng, dur)
        if not pinned:
            t.pinned = False
        t.nbytes = count
        t.accesses = [Access(rs, src - rs.addr, count, False), Access(rd, dst - rd.addr, count,
                                                                       True)]
        self._submit(t)

    def memset_async(self, th: HostThread, cid: int, ptr: int, max_count: int, value: int,
                     count: int, stream: int) -> None:
        """aclrtMemsetAsync: a task for device memory; host memory is set at once (RT2)."""
        s = self.stream(th, stream)
        r = self._memset_checks(ptr, max_count, count)
        if r is None:
            return
        self._refuse_read_only(cid, r, ptr, "memset pointer")
        if r.kind in (HOST_PINNED, HOST_PAGEABLE):
            self._check_range(r, ptr, count)
            self.memory.fill(r, ptr - r.addr, value, count)
            return
        t = self._new_task(TaskKind.MEMSET, s, cid, th.clock, Engine.COPY_D2D,
                           self.profile.copy_setup_ns + int(count / self.profile.device_mem_bw))
        t.fill = value
        t.nbytes = count
        self._add_access(t, r, ptr - r.addr, count, True)
        self._submit(t)

    def _check_range(self, r: Region, ptr: int, count: int) -> None:
        if ptr + count > r.end:
            self.memory.resolve(ptr, count, "memset range", code=507053)

    # ================================================================== tasks and time
    def _new_task(self, kind: TaskKind, stream: Stream | None, cid: int, submit: int,
                  engine: Engine, duration: int) -> Task:
        return Task(kind, stream, cid, submit, engine, duration)

    def _register_task(self, t: Task) -> None:
        """Give a task its id (= its row in the trace) and announce it."""
        t.id = self.task_count
        self.task_count += 1
        self.hooks.on_task(t)

    @staticmethod
    def _add_access(t: Task, r: Region, offset: int, length: int, write: bool) -> None:
        t.accesses.append(Access(r, offset, length, write))

    def _submit(self, t: Task) -> None:
        s = t.stream
        assert s is not None
        s.last_task = t
        self._refuse_out_of_bounds(t)
        self._register_task(t)
        if s.pending or s.blocked_by is not None or not self._place(t):
            s.pending.append(t)
            if s not in self._blocked_streams:
                self._blocked_streams.append(s)
        else:
            self._after_place(t)

    @staticmethod
    def _refuse_out_of_bounds(t: Task) -> None:
        """A task whose range already runs past its allocation fails at its start and moves
        nothing: it takes 1 ns, not the cost of its count (which must not hold the engine or
        push the clock out by years; a start before the end keeps the effect order)."""
        if any(a.offset + a.length > a.region.size for a in t.accesses):
            t.duration = min(t.duration, 1)

    def _after_place(self, t: Task) -> None:
        if t.kind in (TaskKind.EVENT_RECORD, TaskKind.EVENT_RESET) and self._blocked_streams:
            self._pump()

    def _pump(self) -> None:
        """Place every pending head that can be placed, until nothing changes."""
        changed = True
        while changed:
            changed = False
            for s in list(self._blocked_streams):
                while s.pending and s.blocked_by is None:
                    t = s.pending[0]
                    if not self._place(t):
                        break
                    s.pending.popleft()
                    changed = True
                if s.idle and s in self._blocked_streams:
                    self._blocked_streams.remove(s)

    def _place(self, t: Task) -> bool:
        """Give a task its start and end in virtual time if its dependencies allow."""
        s = t.stream
        assert s is not None
        p = self.profile
        ready = max(s.tail_end, t.submit + p.launch_latency_ns)
        kind = t.kind
        if kind == TaskKind.EVENT_WAIT:
            done = self._wait_resolves_at(t, ready)
            if done is None:
                return False
            t.start, t.end = ready, max(done, ready) + t.duration
            assert t.record is not None and t.event is not None
            t.event.waiting.remove(t)
            self.hooks.on_edge(t.record.id, t.id)
        elif kind == TaskKind.CALLBACK:
            t.start = ready
            report_at = ready + p.callback_task_ns
            sub = s.subscriber
            if t.block:
                s.blocked_by = t
                t.end = -1
            else:
                t.end = report_at
            if sub is not None:
                sub.reports.append(t)
            self.cond.notify_all()
            if t.block:
                self.hooks.on_task_placed(t)
                self.progress += 1
                return True
        elif t.engine == Engine.NONE:
            t.start, t.end = ready, ready + t.duration
        else:
            res = s.ctx.device.engines[t.engine]
            if len(res.busy) > 64:
                res.prune(min((x.clock for x in self.thread_list if x.alive), default=0))
            t.start = res.fit(ready, t.duration, t.units)
            t.end = t.start + t.duration
        s.tail_end = t.end
        self._schedule_effects(t)
        self.hooks.on_task_placed(t)
        self.progress += 1
        if kind == TaskKind.EVENT_RECORD or kind == TaskKind.CALLBACK:
            self.cond.notify_all()
        return True

    def _wait_resolves_at(self, t: Task, ready: int) -> int | None:
        """When a wait task's event is set for it, or None while that is unknown."""
        e = t.event
        rec = t.record
        assert e is not None and rec is not None
        t.awaiting = None
        while True:
            if not rec.placed:
                t.reason = f"waits for the record of {e.label()} on {rec.stream.label()}" \
                    if rec.stream is not None else "waits for a record"
                t.awaiting = rec
                return None
            check = max(ready, rec.end)
            killer = None
            for r in e.resets:
                if r.placed and r.id > rec.id and rec.end <= r.start <= check:
                    killer = r
                    break
            if killer is None:
                return check
            later = [x for x in e.records if x.id > killer.id]
            if not later:
                rs = killer.stream.label() if killer.stream is not None else "?"
                t.reason = (f"{e.label()} was reset (reset_event on {rs}) before this wait "
                            "ran, and no later record_event is queued")
                return None
            rec = later[0]

    def _schedule_effects(self, t: Task) -> None:
        if not t.accesses:
            return
        seq = self._effect_seq
        self._effect_seq = seq + 1
        # At equal times writes (phase 0) come before reads (phase 1): a task that starts
        # when its predecessor ends sees the predecessor's output.
        heapq.heappush(self._effects, (t.start, 1, seq, t))
        heapq.heappush(self._effects, (t.end, 0, seq, t))

    def _effect_start(self, t: Task) -> None:
        """Read a task's inputs at its start; fail the task if any range is no longer valid."""
        for a in t.accesses:
            r = a.region
            if not r.live or a.offset + a.length > r.size:
                self._fail_task(t, a)
                return
            # Raw host pages may have been unmapped since the call queued the task (a task on
            # no stream runs within its call, right after the check); and no write may reach
            # memory the program may not write (the calls refuse it; this is the last guard).
            why = (self.memory.still_mapped(r, a.write) if t.stream is not None else "") or (
                self.memory.may_write(r) if a.write else "")
            if why:
                self._fail_task(t, a, why)
                return
        kernel = t.kernel is not None
        if kernel:
            t.inputs = []
        for a in t.accesses:
            if not a.write:
                r = a.region
                if r.written is not None:
                    missing = r.unwritten(a.offset, a.offset + a.length)
                    if missing:
                        self.hooks.on_uninit(t, r, missing,
                                             first_unwritten(r.written, a.offset))
                if kernel:
                    assert t.inputs is not None
                    t.inputs.append(r.buf[a.offset:a.offset + a.length].tobytes())
                elif t.payload is None:
                    t.payload = r.buf[a.offset:a.offset + a.length].tobytes()

    def _effect_end(self, t: Task) -> None:
        """Write a task's outputs at its end."""
        if t.status:
            return
        outputs: list[bytes] = []
        if t.kernel is not None:
            try:
                outputs = t.kernel(t.inputs or [])
            except Exception as exc:  # a kernel bug must not take the program down
                unit = "the DVPP engine" if t.engine == Engine.DVPP else "the AI core"
                t.status = 507899 if t.engine == Engine.DVPP else 507015
                t.reason = f"{t.label} failed on {unit}: {type(exc).__name__}: {exc}"
                self.hooks.on_task_status(t)
                if t.stream is not None and not t.stream.error:
                    t.stream.error = t.status
                return
            t.inputs = None
        out_i = 0
        for a in t.accesses:
            if a.write:
                r = a.region
                if not r.live:
                    self._fail_task(t, a)
                    return
                if t.kernel is not None:
                    data = outputs[out_i][:a.length]
                    out_i += 1
                    self.memory.write(r, a.offset, data)
                elif t.kind == TaskKind.MEMSET:
                    self.memory.fill(r, a.offset, t.fill, a.length)
                elif t.payload is not None:
                    self.memory.write(r, a.offset, t.payload)
                    self.hooks.on_landed(t, r, a.offset, t.payload)
        t.payload = None

    def _fail_task(self, t: Task, a: Access, why: str = "") -> None:
        r = a.region
        if why:
            why = f"{'destination' if a.write else 'source'} host memory: {why}"
        elif not r.live:
            why = (f"{KIND_NAMES[r.kind]} allocation #{r.id} was freed before the task ran "
                   "(free does not wait for queued tasks: synchronize first)")
        else:
            why = (f"range [{a.offset}, {a.offset + a.length}) runs "
                   f"{a.offset + a.length - r.size} bytes past the end of "
                   f"{KIND_NAMES[r.kind]} allocation #{r.id} ({r.size} bytes)")
        t.status = 507053
        t.reason = why
        if t.stream is not None and not t.stream.error:
            t.stream.error = 507053
        self.hooks.on_task_status(t)
        self.hooks.on_diag(t.call, 2, "task_failed",
                           f"task {t.id} ({t.kind.name}) failed with 507053: {why}")

    def advance(self, t: int) -> None:
        """Apply every data effect due at or before virtual time ``t``."""
        eff = self._effects
        pop = heapq.heappop
        while eff and eff[0][0] <= t:
            _, phase, _, task = pop(eff)
            if phase:
                self._effect_start(task)
            else:
                self._effect_end(task)
        if t > self.applied_ns:
            self.applied_ns = t

    def _sync_task(self, th: HostThread, task: Task,
                   accesses: list[tuple[Region, int, int, bool]]) -> None:
        """Run a synchronous copy/memset now: the host waits for the engine."""
        for r, off, n, write in accesses:
            self._add_access(task, r, off, n, write)
        self.run_sync_task(th, task)

    def run_sync_task(self, th: HostThread, task: Task) -> None:
        """Run a task on no stream (synchronous copy, memset or model execute) now."""
        task.device = th.ctx.device.index if th.ctx is not None else 0
        self._refuse_out_of_bounds(task)
        self._register_task(task)
        ready = th.clock + self.profile.copy_setup_ns // 2
        if task.engine == Engine.HOST:
            task.start = ready
        else:
            dev = self.devices[task.device]
            task.start = dev.engines[task.engine].fit(ready, task.duration, task.units)
        task.end = task.start + task.duration
        self.hooks.on_task_placed(task)
        self.progress += 1
        self.advance(task.start)
        for a in task.accesses:
            r = a.region
            if a.offset + a.length > r.size:
                self._fail_task(task, a)
                th.clock = task.end
                raise AclError(507053, task.reason)
        self._effect_start(task)
        self.advance(task.end)
        self._effect_end(task)
        th.clock = task.end
        if task.status:
            raise AclError(task.status, task.reason)

    # ================================================================== waiting
    def synchronize_stream(self, th: HostThread, cid: int, stream: int,
                           timeout_ns: int) -> None:
        """aclrtSynchronizeStream(WithTimeout): streams of other contexts are accepted."""
        s = self.stream(th, stream, check_ctx=False)
        if s.flags & STREAM_NO_SYNC_FLAGS:
            return
        self._wait_streams(th, cid, [s], s.label(), timeout_ns, SYNC_STREAM, s.oid)
        err, s.error = s.error, 0
        if err:
            raise AclError(err, f"a task on {s.label()} failed (see the trace)")

    def synchronize_device(self, th: HostThread, cid: int, timeout_ns: int) -> None:
        """aclrtSynchronizeDevice(WithTimeout): every stream of the current device."""
        ctx = self.require_ctx(th)
        streams = [s for c in ctx.device.contexts for s in c.streams if s.alive]
        self._wait_streams(th, cid, streams, f"device {ctx.device.index}", timeout_ns,
                           SYNC_DEVICE, ctx.oid)
        errs = [s.error for s in streams if s.error]
        for s in streams:
            s.error = 0
        if errs:
            raise AclError(errs[0], "a task on the device failed (see the trace)")

    def stream_query(self, th: HostThread, stream: int) -> bool:
        """aclrtStreamQuery: True when the stream's tasks are done by the caller's clock."""
        s = self.stream(th, stream)
        return self.stream_done_at(s, th.clock)

    def _wait_streams(self, th: HostThread, cid: int, streams: list[Stream], what: str,
                      timeout_ns: int, kind: int = SYNC_STREAM, target: int = -1) -> None:
        start = th.clock

        def done() -> bool:
            return all(s.idle for s in streams)

        def needs() -> list[tuple[Any, str]]:
            out: list[tuple[Any, str]] = []
            for s in streams:
                if not s.idle:
                    out.extend(self._needs_for_stream(s, th))
            return out

        if not done():
            self._block(th, cid, done, needs, what, timeout_ns,
                        507046 if kind != SYNC_EVENT else 507047)
        end = max([s.tail_end for s in streams], default=0)
        if end > th.clock:
            if timeout_ns >= 0 and end > start + timeout_ns:
                th.clock = start + timeout_ns
                self.advance(th.clock)
                self.hooks.on_sync(cid, kind, target, start, th.clock)
                raise AclError(507046, f"{what} did not finish within {timeout_ns / 1e6:g} ms "
                                       f"(it needs until {end / 1e3:.1f} µs)")
            th.clock = end + self.profile.sync_wake_ns
        self.advance(th.clock)
        self.hooks.on_sync(cid, kind, target, start, th.clock)

    def _needs_for_task(self, t: Task, waiter: HostThread) -> list[tuple[Any, str]]:
        if t.stream is None:
            return []
        return self._needs_for_stream(t.stream, waiter)

    def _needs_for_stream(self, s: Stream, waiter: HostThread,
                          seen: set[int] | None = None) -> list[tuple[Any, str]]:
        """Who must act for ``s`` to make progress: [(HostThread | "any", why)]."""
        seen = seen if seen is not None else set()
        if s.oid in seen:
            return [("cycle", f"{s.label()} waits (through events) on itself")]
        seen.add(s.oid)
        cb = s.blocked_by
        if cb is not None:
            sub = s.subscriber
            if cb.end < 0:
                who = sub if sub is not None else "none"
                return [(who, f"{s.label()} is held by a blocking callback (task {cb.id}) "
                              "that must run in its subscribed thread's process_report")]
        if not s.pending:
            return []
        head = s.pending[0]
        if head.kind == TaskKind.EVENT_WAIT and head.record is not None:
            # Records may have been queued since the wait was last tried: look again.
            self._wait_resolves_at(head, max(s.tail_end,
                                             head.submit + self.profile.launch_latency_ns))
            rec = head.awaiting or head.record
            if rec.placed:
                return [("any", f"{s.label()}: {head.reason}")]
            if rec.stream is not None:
                inner = self._needs_for_stream(rec.stream, waiter, seen)
                return [(w, f"{s.label()} waits for {head.event.label() if head.event else ''}"
                            f" recorded on {rec.stream.label()}; {why}") for w, why in inner] \
                    or [("any", f"{s.label()}: {head.reason}")]
        return [("any", f"{s.label()} has pending task {head.id}")]

    def _block(self, th: HostThread, cid: int, done: Callable[[], bool],
               needs: Callable[[], list[tuple[Any, str]]], what: str, timeout_ns: int,
               timeout_code: int) -> None:
        """Wait (releasing the lock) until ``done()``; detect waits that can never finish."""
        if done():
            return
        th.state = "blocked"
        th.wait = (what, needs, done)
        th.wait_since = time.monotonic()
        self.cond.notify_all()
        last_progress = self.progress
        quiet_since = time.monotonic()
        try:
            while not done():
                if self.interrupt_pending:
                    self.deliver_interrupt()
                if self.closed:
                    raise self._deadlock(th, cid, what, needs(),
                                         "the session was closed while this thread waited")
                stuck = self._stuck(th, needs())
                if stuck:
                    if timeout_ns >= 0:
                        th.clock += timeout_ns
                        self.hooks.on_sync(cid, SYNC_STREAM, -1, th.clock - timeout_ns,
                                           th.clock)
                        raise AclError(timeout_code, f"{what} cannot finish: {stuck}")
                    raise self._deadlock(th, cid, what, needs(), stuck)
                self.cond.wait(0.05)
                if self.progress != last_progress:
                    last_progress = self.progress
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > self.watchdog:
                    if timeout_ns >= 0:
                        th.clock += timeout_ns
                        raise AclError(timeout_code, f"{what} made no progress")
                    raise self._deadlock(th, cid, what, needs(),
                                         f"no progress for {self.watchdog:g} s of real time "
                                         "(watchdog)", stacks=True)
        finally:
            th.state = "running"
            th.wait = None
            self.cond.notify_all()

    def _stuck(self, th: HostThread, needs: list[tuple[Any, str]]) -> str:
        """Why the wait can never finish, or "" while some thread could still help."""
        live = self._live_threads()
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
                    return why + f"; that thread is {th.label()}, the one waiting here, so " \
                                 "it can never call process_report"
                if not who.alive:
                    return why + f"; {who.label()} has exited"
                if who in live:
                    return ""
                continue
            if any(x is not th for x in live) or self._foreign_threads_running():
                return ""
        if not needs:
            return ""
        return "; ".join(why for _, why in needs) + \
            " — and every other thread is itself blocked in the emulator or has exited"

    def _live_threads(self) -> set[HostThread]:
        """Threads that can still act: running, or in a wait that can still progress."""
        live = {t for t in self.thread_list if t.alive and t.state in ("running", "polling")}
        waiting = [t for t in self.thread_list if t.alive and t.state == "blocked"]
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

    def _foreign_threads_running(self) -> bool:
        """Python threads that never called the emulator but could (started after us)."""
        return any(t not in self.threads and t not in self._background and t.is_alive()
                   and not t.daemon for t in threading.enumerate())

    def _deadlock(self, th: HostThread, cid: int, what: str, needs: list[tuple[Any, str]],
                  why: str, stacks: bool = False, quiet: bool = False) -> DeadlockError:
        file, line = self.recorder.call_site(cid) if self.recorder is not None else ("", 0)
        edges = [WaitEdge(th.label(), what, why, file, line)]
        for who, reason in needs:
            target = (who.label() if isinstance(who, HostThread)
                      else who.name if isinstance(who, threading.Thread)
                      else "another thread" if who == "any" else str(who))
            edges.append(WaitEdge(what, target, reason))
        for other in self.thread_list:
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
        if not quiet and not (self.closed and th.closed_reported):
            self.hooks.on_diag(cid, 3, "deadlock", err.report)
        th.closed_reported = self.closed
        return err

    # ================================================================== callbacks
    def subscribe_report(self, th: HostThread, cid: int, tid: int, stream: int) -> None:
        """aclrtSubscribeReport: callbacks on ``stream`` will run in thread ``tid``."""
        s = self.stream(th, stream, check_ctx=False)
        target = self._thread_by_tid(tid)
        if s.subscriber is not None:
            raise AclError(107011, f"{s.label()} is already subscribed by "
                                   f"{s.subscriber.label()}")
        s.subscriber = target
        target.subscriptions.append(s)

    def unsubscribe_report(self, th: HostThread, cid: int, tid: int, stream: int) -> None:
        """aclrtUnSubscribeReport (the subscribed thread may have exited already)."""
        s = self.stream(th, stream, check_ctx=False)
        if s.subscriber is not None and s.subscriber.ident == tid:
            target = s.subscriber
        else:
            target = self._thread_by_tid(tid)
        if s.subscriber is not target:
            raise AclError(107000, f"{s.label()} is not subscribed by {target.label()}")
        s.subscriber = None
        target.subscriptions = [x for x in target.subscriptions if x is not s]

    def _thread_by_tid(self, tid: int) -> HostThread:
        """The HostThread of the *running* thread whose API id (ident) is ``tid``.

        Only live threads are searched: at most one live thread has a given ident, while
        exited ones may share it with it.
        """
        for t in threading.enumerate():
            if t.ident == tid:
                th = self.threads.get(t)
                if th is None:
                    th = self._register_thread(t, self.thread().clock,
                                               self._acl_parent(t) is not None)
                return th
        raise AclError(100000, f"thread id {tid} is not a running thread (use the tid from "
                               "acl.util.start_thread or threading.get_ident())")

    def launch_callback(self, th: HostThread, cid: int, fn: Callable[..., Any], user_data: Any,
                        block: int, stream: int) -> None:
        """aclrtLaunchCallback: a host-callback task; ``block=1`` holds the stream."""
        if block not in (0, 1):
            raise AclError(100000, f"block type {block} must be ACL_CALLBACK_NO_BLOCK (0) or "
                                   "ACL_CALLBACK_BLOCK (1)")
        s = self.stream(th, stream)
        if s.subscriber is None:
            raise AclError(107015, f"{s.label()} has no subscribed report thread: call "
                                   "acl.rt.subscribe_report(tid, stream) first")
        t = self._new_task(TaskKind.CALLBACK, s, cid, th.clock, Engine.NONE,
                           self.profile.callback_task_ns)
        t.callback = fn
        t.user_data = user_data
        t.block = bool(block)
        self._submit(t)

    def process_report(self, th: HostThread, cid: int, timeout_ms: int) -> None:
        """aclrtProcessReport: run the callbacks reported to this thread (one call drains)."""
        if timeout_ms == 0 or timeout_ms < -1:
            raise AclError(100000, f"timeout {timeout_ms} must be -1 (forever) or > 0 ms")
        if not th.subscriptions:
            raise AclError(107012, f"{th.label()} is not subscribed to any stream: call "
                                   "acl.rt.subscribe_report(tid, stream) for it first")
        start = th.clock

        def ready() -> bool:
            return bool(th.reports) or not th.subscriptions

        def needs() -> list[tuple[Any, str]]:
            return [("any", "process_report waits for callbacks launched on "
                            + ", ".join(s.label() for s in th.subscriptions))]

        if not th.reports:
            deadline = time.monotonic() + (timeout_ms / 1000 if timeout_ms > 0 else 1e9)
            # A timed wait comes back by itself, so the thread still counts as running.
            th.state = "blocked" if timeout_ms < 0 else "polling"
            th.wait = (REPORT_WAIT, needs, ready)
            self.cond.notify_all()
            try:
                while not ready():
                    if self.interrupt_pending:
                        self.deliver_interrupt()
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    if timeout_ms < 0 and self._stuck(th, needs()):
                        raise self._deadlock(th, cid, REPORT_WAIT, needs(),
                                             self._stuck(th, needs()))
                    if self.closed:
                        # A timed poll is not stuck: on real hardware the process exits and
                        # the polling thread dies with it (a video sample whose setup failed
                        # leaves its process_report(100) loop running). End the thread
                        # without a deadlock finding; an untimed wait is reported.
                        raise self._deadlock(th, cid, REPORT_WAIT, needs(),
                                             "the session was closed while this thread waited",
                                             quiet=timeout_ms >= 0)
                    self.cond.wait(min(left, 0.05))
            finally:
                th.state = "running"
                th.wait = None
                self.cond.notify_all()
            if not th.reports:
                frontier = max(t.clock for t in self.thread_list)
                th.clock = max(th.clock, min(th.clock + timeout_ms * 1_000_000, frontier))
                self.hooks.on_sync(cid, SYNC_REPORT, -1, start, th.clock)
                raise AclError(507012, f"no callback arrived within {timeout_ms} ms")
        while th.reports:
            t = th.reports.popleft()
            self._run_callback(th, cid, t)
        self.hooks.on_sync(cid, SYNC_REPORT, -1, start, th.clock)

    def _run_callback(self, th: HostThread, cid: int, t: Task) -> None:
        report_at = t.start + self.profile.callback_task_ns
        th.clock = max(th.clock, report_at)
        begin = th.clock
        fn = t.callback
        err: BaseException | None = None
        fatal: BaseException | None = None
        # The callback is user code: run it without the session lock (it calls the API).
        depth = self._release_all()
        try:
            if fn is not None:
                fn(t.user_data)
        except Exception as exc:  # a failing callback must not kill the report thread
            err = exc
            traceback.print_exc()
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: finish the task, re-raise
            err = fatal = exc
        finally:
            self._reacquire(depth)
            # The task has run: it keeps neither the function nor its data (a Task outlives
            # it in the stream and the event records; the user's objects must not).
            t.callback = t.user_data = fn = None
        th.clock += self.profile.api_call_ns
        self.hooks.on_callback(t.id, th.idx, begin, th.clock)
        if err is not None:
            self.diag(cid, "callback_exception",
                      f"callback of task {t.id} raised {type(err).__name__}: {err}", level=2)
        self._callback_done(th, t)
        if fatal is not None:
            raise fatal

    def _callback_done(self, th: HostThread, t: Task) -> None:
        """A callback returned (or raised): release the stream a blocking one held."""
        s = t.stream
        if t.block and s is not None and s.blocked_by is t:
            t.end = th.clock
            s.blocked_by = None
            s.tail_end = max(s.tail_end, t.end)
            self.hooks.on_task_placed(t)
            self.progress += 1
            if s.pending and s not in self._blocked_streams:
                self._blocked_streams.append(s)
            self._pump()
        self.cond.notify_all()

    def _release_all(self) -> int:
        depth = 0
        while True:
            try:
                self.lock.release()
                depth += 1
            except RuntimeError:
                return depth

    def _reacquire(self, depth: int) -> None:
        for _ in range(depth):
            self.lock.acquire()

    # ================================================================== host threads
    def start_thread(self, th: HostThread, fn: Callable[..., Any], args: Any) -> int:
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
                with self.lock:
                    self.cond.notify_all()

        t = threading.Thread(target=body, daemon=True, name=f"acl-thread-{len(self._acl_threads)}")
        info["thread"] = t
        t.start()
        assert t.ident is not None
        # under the session lock: the worker's first API call (which reads this) waits for it
        self._acl_threads[t.ident] = info
        self.cond.notify_all()
        return t.ident

    def note_join(self, t: threading.Thread) -> None:
        """The calling thread joined ``t``: its clock moves past ``t``'s last call.

        Virtual time then shows what the host really did: a thread that joins its workers
        continues after them (a join is a happens-before the API never sees).
        """
        with self.lock:
            joined = self.threads.get(t)
            joiner = self.threads.get(threading.current_thread())
            if joined is not None and joiner is not None and joiner.clock < joined.clock:
                joiner.clock = joined.clock

    def stop_thread(self, th: HostThread, cid: int, tid: int) -> None:
        """acl.util.stop_thread: join the thread; re-raise its exception as RuntimeError."""
        info = self._acl_threads.get(tid)
        if info is None:
            raise AclError(100000, f"{tid} is not a thread started by acl.util.start_thread")
        t: threading.Thread = info["thread"]
        start = th.clock

        def needs() -> list[tuple[Any, str]]:
            # the worker's own HostThread once it has called the emulator, else the Thread
            # itself (a thread outside the emulator that can still finish)
            who: Any = self.threads.get(t, t)
            return [(who, f"stop_thread joins {t.name}, which is still running")]

        if t.is_alive():
            self._block(th, cid, lambda: not t.is_alive(), needs, f"{t.name} to finish", -1,
                        0)
        t.join()
        target = self.threads.get(t)
        if target is not None:
            th.clock = max(th.clock, target.clock)
        self.hooks.on_sync(cid, SYNC_JOIN, -1, start, th.clock)
        self._acl_threads.pop(tid, None)
        err = info["error"]
        if err is not None:
            raise RuntimeError(f"exception={type(err).__name__},msg=thread call failed;"
                               f" {err}") from err

    # ================================================================== data buffers
    def create_data_buffer(self, cid: int, addr: int, size: int) -> int:
        """aclCreateDataBuffer: no validation at all (RT-impl data_buffer.cpp)."""
        b = DataBuffer(-1, 0, addr, size)
        b.oid = self._new_oid(b)
        b.handle = self._handle(b)
        self.hooks.on_object(b.oid, OBJ_DATA_BUFFER, b.handle, -1, -1, 0, cid,
                             f"data buffer {b.handle:#x}")
        return b.handle

    def data_buffer(self, handle: int) -> DataBuffer:
        """Resolve a data-buffer handle (100000 for null, unknown or destroyed)."""
        if handle == 0:
            raise AclError(100000, "data buffer is null")
        obj = self.handles.get(handle)
        if not isinstance(obj, DataBuffer) or not obj.alive:
            raise AclError(100000, f"{handle:#x} is not a live data buffer")
        return obj

    def destroy_data_buffer(self, cid: int, handle: int) -> None:
        """aclDestroyDataBuffer: deletes the wrapper only; the memory is not freed."""
        b = self.data_buffer(handle)
        b.alive = False
        self.hooks.on_destroy(b.oid, cid, HOW_EXPLICIT)

    # ================================================================== misc
    def host_view(self, ptr: int, nbytes: int, what: str) -> tuple[Region, np.ndarray]:
        """A view of host memory ``[ptr, ptr+nbytes)`` (pinned or pageable) for acl.util.

        In the device run mode (RC) device memory is host memory too, so a device address
        gives a view of the device buffer."""
        if ptr != 0 and self.run_mode == "host" and self.memory.is_device_addr(ptr):
            raise AclError(107000, f"{what}: {ptr:#x} is a device address; copy it to host "
                                   "memory first with acl.rt.memcpy")
        if nbytes < 0:
            raise AclError(100000, f"{what}: size {nbytes} is negative")
        r = self._resolve(ptr, nbytes, what)
        off = ptr - r.addr
        return r, r.buf[off:off + nbytes]


__all__ = ["AccessError", "AclError", "DeadlockError", "Session", "current_session",
           "set_current_session"]
