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

Concurrency: one re-entrant lock guards everything; blocking waits release it through a
condition variable. A wait that can never be satisfied raises ``DeadlockError`` at once when no
thread that could help is still running, or after ``watchdog`` seconds without progress.
"""

from __future__ import annotations

import heapq
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..constants import ErrorCode, MemcpyKind
from . import devices, streams, threads, waits
from .errors import AccessError, AclError, DeadlockError
from .hooks import Hooks
from .kinds import Ending, Engine, TaskKind
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
    Access,
    Device,
    HostThread,
    Stream,
    Task,
)
from .profiles import DeviceProfile, get_profile

HANDLE_BASE = 0xA0_0000_0000
HANDLE_STEP = 0x40

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

_T = TypeVar("_T")

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
        threads.note_join(s, self)


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
        self.acl_threads: dict[int, dict[str, Any]] = {}
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
                devices.teardown(self, th, cid, "exit")
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
            parent = self.acl_parent(me)
            if parent is not None:
                clock = parent["clock"]
            th = self.register_thread(me, clock, parent is not None)
        self._tls.th = th
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
        if self.thread_list:
            _notice_joins()  # a second host thread: joins now order virtual time
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
        devices.require_ctx(self, th)
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
        devices.require_ctx(self, th)
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
        s = streams.lookup(self, th, stream)
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
            waits.wait_streams(self, th, cid, [s], f"{s.label()} before a pageable copy",
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
        s = streams.lookup(self, th, stream)
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



__all__ = ["AccessError", "AclError", "DeadlockError", "Session", "current_session",
           "set_current_session"]
