"""API fuzzing: random call sequences over the acl surface, checked against a model of codes.

A Hypothesis state machine drives init/finalize, devices, contexts, streams, events, memory,
copies and memsets (valid, invalid and stale handles and pointers, random sizes and kinds,
streams of other contexts), single ops (Add) and the zoo MLP, from the main thread and from a
second thread (a worker driven synchronously, one call at a time). A small model predicts each
return code: success, or the specific code for double free, freed or unknown pointers, size 0,
count > dest_max, no current context, a stream of another context, a legacy event never
recorded, ... (reference §2, §5 and §9.1). After every step:

- no Python exception escaped a well-typed call (each rule checks its calls);
- live device allocations never overlap, and the memory system's counters (and
  ``get_mem_info``) equal the sum of the live allocations' accounted sizes;
- every call made so far is in ``session.trace().calls``, in order, with the code it returned;
- in the task times, each stream runs its tasks in submission order without overlap, and
  every event wait ends no earlier than the record it waited for.

At teardown the devices are reset, ``acl.finalize`` returns 0 and ``session.finish()`` works.
Set ``HYPOTHESIS_PROFILE=long`` (``make fuzz``) for many more and longer examples.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import acl_lab
from acl_lab import zoo
from acl_lab.acl._boundary import registry
from acl_lab.runtime.memory import host_range_problem
from acl_lab.runtime.session import Session

OK = 0
E_PARAM = 100000             # ACL_ERROR_INVALID_PARAM
E_REPEAT_INIT = 100002       # ACL_ERROR_REPEAT_INITIALIZE
E_REPEAT_FINALIZE = 100037   # ACL_ERROR_REPEAT_FINALIZE
E_OP_NOT_FOUND = 100024      # ACL_ERROR_OP_NOT_FOUND
E_RT_PARAM = 107000          # ACL_ERROR_RT_PARAM_INVALID
E_DEVICE = 107001            # ACL_ERROR_RT_INVALID_DEVICEID
E_NO_CTX = 107002            # ACL_ERROR_RT_CONTEXT_NULL
E_STREAM_CTX = 107003        # ACL_ERROR_RT_STREAM_CONTEXT
E_MODEL_CTX = 107004         # ACL_ERROR_RT_MODEL_CONTEXT
E_TIMESTAMP = 107006         # ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
E_NOT_SUPPORTED = 207000     # ACL_ERROR_RT_FEATURE_NOT_SUPPORT
MASK64 = (1 << 64) - 1         # what the binding's k format does to a negative int
E_OOM = 207001               # ACL_ERROR_RT_MEMORY_ALLOCATION
E_INTERNAL = 507000          # ACL_ERROR_RT_INTERNAL_ERROR (bad stream / event handles)
E_MEM = 507053               # ACL_ERROR_RT_DEVICE_MEM_ERROR (out of bounds, freed in flight)

KIB, MIB = 1 << 10, 1 << 20
HUGE_PAGE = 2 * MIB
SIZE_MAX = (1 << 64) - 1
GARBAGE = 0xDEADBEEF
HUGE = (1 << 63) - 1          # a count no allocation can hold
#: No thread's virtual clock may pass this: the fuzz moves kilobytes, not terabytes.
MAX_CLOCK_NS = 10**12
ACL_EVENT_SYNC, ACL_EVENT_TIME_LINE = 0x1, 0x8
H2H, H2D, D2H, D2D = 0, 1, 2, 3
ACL_FLOAT, ACL_FORMAT_ND = 0, 2

_COMMON: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.filter_too_much],
}
PROFILES = {
    "default": settings(max_examples=75, stateful_step_count=40, **_COMMON),
    "long": settings(max_examples=600, stateful_step_count=80, **_COMMON),
}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")

WHO = st.sampled_from(["main", "main", "main", "worker"])
MALLOC_SIZES = st.one_of(
    st.sampled_from([1, 32, 33, 100, 4 * KIB, MIB, MIB + 1, HUGE_PAGE]),
    st.integers(1, 8 * KIB),
    st.sampled_from([0, -1, 1 << 40, 1 << 50, (1 << 63) - 1, SIZE_MAX - 64,
                     SIZE_MAX - 63]),  # 100000 / 207001
)


def rounded(size: int) -> int:
    """aclrtMalloc's usable size: up to 32, plus 32 (reference §5a)."""
    return ((size + 63) // 32) * 32


def accounted(size: int, policy: int) -> int:
    """Bytes the device's free memory drops by (reference §5a, §5g)."""
    huge = policy == 1 or (policy == 0 and size > MIB)
    n = rounded(size)
    return (n + HUGE_PAGE - 1) // HUGE_PAGE * HUGE_PAGE if huge else n


# ------------------------------------------------------------------------------ the model


#: Kinds the runtime accepts on an async copy with an unregistered (pageable) side, by
#: (source kind, destination kind); hicann/runtime api_error.cc MemcpyKindReviseMap. Pairs
#: without a pageable side have their kind corrected; kinds 4-7 are not checked.
ASYNC_ALLOWED = {
    ("pageable", "dev"): (H2D, D2D), ("dev", "pageable"): (D2H, D2D),
    ("host", "pageable"): (H2H, H2D), ("pageable", "host"): (H2H, D2H),
    ("pageable", "pageable"): (H2H, H2D, D2H, D2D),
}


def source_overread(s: Any, src: int, count: int) -> int | None:
    """A pageable source read past its buffer (copies.host_overread): copied like real ACL
    when the bytes that follow are mapped (OK), else 107000; None when it is not one."""
    if s.kind != "pageable" or src + count <= s.end:
        return None
    return E_RT_PARAM if host_range_problem(src, count, False) else OK


def async_kind_refused(kind: int, src: str, dst: str) -> int | None:
    """107000 when memcpy_async's kind contradicts its pointers and a side is pageable."""
    inferred = (D2D if src == dst == "dev" else H2D if dst == "dev"
                else D2H if src == "dev" else H2H)
    allowed = ASYNC_ALLOWED.get((src, dst))
    if kind in (H2H, H2D, D2H, D2D) and kind != inferred and allowed is not None \
            and kind not in allowed:
        return E_RT_PARAM
    return None


@dataclass(eq=False)
class MStream:
    """A stream as the model sees it (``handle`` None: a context's default stream)."""

    handle: int | None
    ctx: MCtx
    alive: bool = True
    busy: bool = False        # tasks submitted since it was last synchronized
    synced_by: str = ""       # the thread whose clock is past its last task (query is 0)
    err: int = 0              # a task that will certainly fail (reported at the next sync)
    maybe_err: bool = False   # a task that may fail (its memory was freed while queued)


@dataclass(eq=False)
class MCtx:
    """A context: the default one of set_device or one from create_context."""

    handle: int
    default: bool
    alive: bool = True
    streams: list[MStream] = field(default_factory=list)
    events: list[MEvent] = field(default_factory=list)
    default_stream: MStream | None = None


@dataclass(eq=False)
class MEvent:
    """An event: legacy (create_event / _with_flag) or new mode (_ex_with_flag)."""

    handle: int
    ctx: MCtx
    new_mode: bool
    flags: int
    alive: bool = True
    recorded: bool = False
    done: bool = False        # its latest record is known complete (synchronize_event)
    done_by: str = ""         # the thread that synchronized it (its clock is past the record)


@dataclass(eq=False)
class MAlloc:
    """Memory the program can point at: device, malloc_host or a pageable bytes buffer."""

    ptr: int
    size: int                 # usable bytes
    accounted: int
    kind: str                 # "dev", "host", "pageable"
    owner: str = "user"       # "user"; "model" (a loaded model's I/O); "op" (op_add's own)
    streams: set[int] = field(default_factory=set)  # ids of streams with queued tasks on it

    @property
    def end(self) -> int:
        return self.ptr + self.size


@dataclass(eq=False)
class MModel:
    """A loaded zoo MLP with its desc, datasets and I/O buffers."""

    mid: int
    ctx: MCtx
    internal: int             # accounted bytes of its weights and work memory
    desc: int
    in_ds: int
    out_ds: int
    bufs: list[int]
    io: list[MAlloc]
    alive: bool = True


class Worker:
    """A second host thread that runs one call at a time for the state machine."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[Any] = queue.Queue()
        self.done: queue.Queue[Any] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, name="fuzz-worker", daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, args = job
            try:
                self.done.put((fn(*args), None))
            except BaseException as e:  # handed back to the caller
                self.done.put((None, e))

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        self.jobs.put((fn, args))
        result, err = self.done.get(timeout=60)
        if err is not None:
            raise err
        return result

    def stop(self) -> None:
        self.jobs.put(None)
        self.thread.join(60)


def _ret(name: str, result: Any) -> int | None:
    out = registry()[name]["out"]
    if out == 0:
        return int(result)
    if out in ("value", "none"):
        return None
    return int(result[-1])


class ApiMachine(RuleBasedStateMachine):
    """Random pyACL call sequences against a model of their return codes."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session(watchdog=2.0)
        self.session.__enter__()
        self.acl: ModuleType = acl_lab.install()
        self.worker = Worker()
        self.log: list[tuple[str, int]] = []
        self.init_count = 0
        self.refcount = 0
        self.default_ctx: MCtx | None = None
        self.ctxs: list[MCtx] = []
        self.cur: dict[str, MCtx | None] = {"main": None, "worker": None}
        self.allocs: list[MAlloc] = []
        self.stale: list[int] = []
        self.stale_hosts: list[int] = []
        self.dead_handles: list[int] = []
        self.models: list[MModel] = []
        self.keep: list[Any] = []  # host buffers that must stay alive
        self.capacity = self.session.memory.devices[0].capacity
        self.work_size, self.weight_size = 0, 0

    # ------------------------------------------------------------------ calling
    def fn(self, name: str) -> Callable[..., Any]:
        obj: Any = self.acl
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj

    def call(self, who: str, name: str, *args: Any, trace_ret: int = OK) -> Any:
        """Make one well-typed call (in ``who``'s thread) and log it; nothing may escape."""
        fn = self.fn(name)
        result = fn(*args) if who == "main" else self.worker.run(fn, args)
        ret = _ret(name, result)
        self.log.append((name, trace_ret if ret is None else ret))
        return result

    def expect(self, got: int, want: int | set[int], what: str) -> None:
        ok = got in want if isinstance(want, set) else got == want
        assert ok, f"{what}: returned {got}, the model expects {want}"

    # ------------------------------------------------------------------ model helpers
    def live_streams(self) -> list[MStream]:
        return [s for c in self.ctxs if c.alive for s in c.streams if s.alive]

    def all_streams(self) -> list[MStream]:
        return [s for c in self.ctxs for s in [*c.streams, c.default_stream] if s is not None]

    def live_events(self) -> list[MEvent]:
        return [e for c in self.ctxs if c.alive for e in c.events if e.alive]

    def dev_allocs(self) -> list[MAlloc]:
        return [a for a in self.allocs if a.kind == "dev"]

    def find(self, ptr: int) -> MAlloc | None:
        for a in self.allocs:
            if a.ptr <= ptr < a.end:
                return a
        return None

    def new_ctx(self, handle: int, default: bool) -> MCtx:
        c = MCtx(handle, default)
        c.default_stream = MStream(None, c)
        self.ctxs.append(c)
        return c

    def kill_ctx(self, c: MCtx) -> None:
        c.alive = False
        self.dead_handles.append(c.handle)
        for s in c.streams:
            if s.alive and s.handle is not None:
                self.dead_handles.append(s.handle)
            s.alive = False
        if c.default_stream is not None:
            c.default_stream.alive = False
        for e in c.events:
            if e.alive:
                self.dead_handles.append(e.handle)
            e.alive = False
        for a in self.allocs:
            a.streams -= {id(s) for s in [*c.streams, c.default_stream]}
        for who, cur in self.cur.items():
            if cur is c:
                self.cur[who] = None

    def release_device(self) -> None:
        """What reset_device (at zero) and finalize do: every context and its streams and
        events end, and the device's memory is reclaimed (reference §5e)."""
        for c in self.ctxs:
            if c.alive:
                self.kill_ctx(c)
        for a in self.dev_allocs():
            self.stale.append(a.ptr)
        self.allocs = [a for a in self.allocs if a.kind != "dev"]
        for m in self.models:
            m.internal = 0
            m.io = []
        self.refcount = 0
        self.default_ctx = None
        for who in self.cur:
            self.cur[who] = None

    def synced(self, streams: list[MStream], who: str) -> int | set[int]:
        """The code synchronizing ``streams`` gives, and forget their queued work."""
        if any(s.err for s in streams):
            want: int | set[int] = next(s.err for s in streams if s.err)
        elif any(s.maybe_err for s in streams):
            want = {OK, E_MEM}
        else:
            want = OK
        ids = {id(s) for s in streams}
        for s in streams:
            s.err, s.maybe_err, s.busy, s.synced_by = 0, False, False, who
        for a in self.allocs:
            a.streams -= ids
        return want

    def resolve_stream(self, who: str, pick: Any, check_ctx: bool = True
                       ) -> tuple[set[int], MStream | None]:
        """(error codes that apply, the stream) for a stream argument (reference §5c)."""
        cur = self.cur[who]
        if cur is None:
            return {E_NO_CTX}, None
        if pick == 0:
            return set(), cur.default_stream
        if not isinstance(pick, MStream) or not pick.alive:
            return {E_INTERNAL}, None
        if check_ctx and pick.ctx is not cur:
            return {E_STREAM_CTX}, None
        return set(), pick

    @staticmethod
    def resolve_event(pick: Any) -> tuple[set[int], MEvent | None]:
        if pick == 0:
            return {E_PARAM}, None
        if not isinstance(pick, MEvent) or not pick.alive:
            return {E_INTERNAL}, None
        return set(), pick

    def draw_stream(self, data: st.DataObject) -> Any:
        """A live stream (any context), the default stream (0), a dead or garbage handle."""
        # Hypothesis favours the first options: live objects come first.
        options: list[Any] = [*self.live_streams(), 0, GARBAGE]
        if self.dead_handles:
            options.append(data.draw(st.sampled_from(self.dead_handles)))
        return data.draw(st.sampled_from(options))

    def draw_event(self, data: st.DataObject) -> Any:
        """A live event (recorded ones first), null, garbage or dead."""
        live = sorted(self.live_events(), key=lambda e: (not e.done, not e.recorded))
        options: list[Any] = [*live, 0, GARBAGE]
        if self.dead_handles:
            options.append(data.draw(st.sampled_from(self.dead_handles)))
        return data.draw(st.sampled_from(options))

    @staticmethod
    def handle_of(pick: Any) -> int:
        if isinstance(pick, MStream | MEvent):
            assert pick.handle is not None
            return pick.handle
        return int(pick)

    @staticmethod
    def outcome(errors: set[int]) -> int | set[int]:
        """The codes that apply, or success when none does."""
        return errors if errors else OK

    # ------------------------------------------------------------------ setup
    @initialize(worker_device=st.booleans())
    def setup(self, worker_device: bool) -> None:
        """acl.init, set_device(0) (in the worker too, sometimes), two streams, an event of
        each mode, device, pinned and pageable memory: the usual starting point."""
        assert self.call("main", "acl.init") == OK
        self.init_count = 1
        self.set_device("main", 0)
        if worker_device:
            self.set_device("worker", 0)
        for _ in range(2):
            self.create_stream("main")
        for kind in ("legacy", "sync", "new"):
            self.create_event("main", kind)
        self.malloc("main", 4 * KIB, 2)
        self.malloc("main", 100, 0)
        self.malloc_host("main", 4 * KIB)
        for _ in range(2):
            self.host_bytes("main", bytes(4 * KIB), owner="user")
        work, weight, ret = self.call("main", "acl.mdl.query_size", zoo.path("mlp"))
        assert ret == OK
        self.work_size, self.weight_size = work, weight

    # ------------------------------------------------------------------ init / finalize
    @rule(who=WHO)
    def init(self, who: str) -> None:
        ret = self.call(who, "acl.init")
        self.expect(ret, OK if self.init_count == 0 else E_REPEAT_INIT, "init")
        self.init_count += 1

    @rule(who=WHO, go=st.integers(0, 7), reference=st.booleans())
    def finalize(self, who: str, go: int, reference: bool) -> None:
        if go:  # rarely: it ends everything
            return
        if reference:
            count, ret = self.call(who, "acl.finalize_reference")
            self.expect(ret, OK if self.init_count >= 1 else E_REPEAT_FINALIZE, "finalize_ref")
            if ret == OK:
                self.init_count -= 1
                assert count == self.init_count
        else:
            ret = self.call(who, "acl.finalize")
            self.expect(ret, OK if self.init_count >= 1 else E_REPEAT_FINALIZE, "finalize")
            if ret == OK:
                self.init_count = 0
        if ret == OK and self.init_count == 0:
            self.release_device()
            for a in self.allocs:
                if a.kind == "host":
                    self.stale_hosts.append(a.ptr)
            self.allocs = [a for a in self.allocs if a.kind != "host"]

    # ------------------------------------------------------------------ devices / contexts
    @rule(who=WHO, dev=st.sampled_from([0, 0, 0, 1, -1]))
    def set_device(self, who: str, dev: int) -> None:
        ret = self.call(who, "acl.rt.set_device", dev)
        self.expect(ret, OK if dev == 0 else E_DEVICE, "set_device")
        if ret == OK:
            self.refcount += 1
            if self.default_ctx is None:
                ctx, r = self.call(who, "acl.rt.get_context")
                assert r == OK
                self.default_ctx = self.new_ctx(ctx, True)
            self.cur[who] = self.default_ctx

    @rule(who=WHO, dev=st.sampled_from([0, 0, 1]), force=st.booleans(), go=st.integers(0, 3))
    def reset_device(self, who: str, dev: int, force: bool, go: int) -> None:
        if go:  # less often: at zero it ends every context
            return
        name = "acl.rt.reset_device_force" if force else "acl.rt.reset_device"
        ret = self.call(who, name, dev)
        want = E_DEVICE if dev else (E_RT_PARAM if self.refcount <= 0 else OK)
        self.expect(ret, want, name)
        if ret == OK:
            self.refcount = 0 if force else self.refcount - 1
            if self.refcount == 0:
                self.release_device()

    @rule(who=WHO, dev=st.sampled_from([0, 0, 1]))
    def create_context(self, who: str, dev: int) -> None:
        ctx, ret = self.call(who, "acl.rt.create_context", dev)
        self.expect(ret, OK if dev == 0 else E_DEVICE, "create_context")
        if ret == OK:
            self.cur[who] = self.new_ctx(ctx, False)

    def draw_ctx(self, data: st.DataObject) -> Any:
        live = sorted((c for c in self.ctxs if c.alive), key=lambda c: c.default)
        options: list[Any] = [*live, 0, GARBAGE]
        dead = [c for c in self.ctxs if not c.alive]
        if dead:
            options.append(data.draw(st.sampled_from(dead)))
        return data.draw(st.sampled_from(options))

    @rule(who=WHO, data=st.data())
    def destroy_context(self, who: str, data: st.DataObject) -> None:
        pick = self.draw_ctx(data)
        handle = pick.handle if isinstance(pick, MCtx) else pick
        ret = self.call(who, "acl.rt.destroy_context", handle)
        if pick == 0:
            want = E_PARAM
        elif not isinstance(pick, MCtx) or not pick.alive or pick.default:
            want = E_RT_PARAM
        else:
            want = OK
        self.expect(ret, want, "destroy_context")
        if ret == OK:
            self.kill_ctx(pick)

    @rule(who=WHO, data=st.data())
    def set_context(self, who: str, data: st.DataObject) -> None:
        pick = self.draw_ctx(data)
        handle = pick.handle if isinstance(pick, MCtx) else pick
        ret = self.call(who, "acl.rt.set_context", handle)
        want = E_PARAM if pick == 0 else (
            OK if isinstance(pick, MCtx) and pick.alive else E_RT_PARAM)
        self.expect(ret, want, "set_context")
        if ret == OK:
            self.cur[who] = pick

    @rule(who=WHO)
    def get_context_and_device(self, who: str) -> None:
        cur = self.cur[who]
        ctx, ret = self.call(who, "acl.rt.get_context")
        self.expect(ret, OK if cur else E_NO_CTX, "get_context")
        assert ctx == (cur.handle if cur else 0)
        dev, ret = self.call(who, "acl.rt.get_device")
        self.expect(ret, OK if cur else E_NO_CTX, "get_device")
        assert dev == 0

    # ------------------------------------------------------------------ streams
    @rule(who=WHO)
    def create_stream(self, who: str) -> None:
        handle, ret = self.call(who, "acl.rt.create_stream")
        cur = self.cur[who]
        self.expect(ret, OK if cur else E_NO_CTX, "create_stream")
        if cur is not None:
            cur.streams.append(MStream(handle, cur))

    @rule(who=WHO, data=st.data(), force=st.booleans())
    def destroy_stream(self, who: str, data: st.DataObject, force: bool) -> None:
        pick = self.draw_stream(data)
        errors, s = self.resolve_stream(who, pick)
        if not errors and s is not None and s.handle is None:
            errors = {E_RT_PARAM}  # the default stream cannot be destroyed
        name = "acl.rt.destroy_stream_force" if force else "acl.rt.destroy_stream"
        ret = self.call(who, name, self.handle_of(pick))
        self.expect(ret, self.outcome(errors), name)
        if ret == OK and s is not None:
            self.synced([s], who)  # waited for (or its queued tasks dropped)
            s.alive = False
            assert s.handle is not None
            self.dead_handles.append(s.handle)

    @rule(who=WHO, data=st.data(), timeout=st.booleans())
    def synchronize_stream(self, who: str, data: st.DataObject, timeout: bool) -> None:
        pick = self.draw_stream(data)
        errors, s = self.resolve_stream(who, pick, check_ctx=False)  # §5c: accepted
        h = self.handle_of(pick)
        if timeout:
            ret = self.call(who, "acl.rt.synchronize_stream_with_timeout", h, -1)
        else:
            ret = self.call(who, "acl.rt.synchronize_stream", h)
        want = errors if errors else self.synced([s], who) if s is not None else OK
        self.expect(ret, want, "synchronize_stream")

    @rule(who=WHO)
    def synchronize_device(self, who: str) -> None:
        ret = self.call(who, "acl.rt.synchronize_device")
        if self.cur[who] is None:
            self.expect(ret, E_NO_CTX, "synchronize_device")
            return
        streams = [s for s in self.all_streams() if s.alive]
        self.expect(ret, self.synced(streams, who), "synchronize_device")

    @rule(who=WHO, data=st.data())
    def stream_query(self, who: str, data: st.DataObject) -> None:
        pick = self.draw_stream(data)
        errors, s = self.resolve_stream(who, pick)
        status, ret = self.call(who, "acl.rt.stream_query", self.handle_of(pick))
        self.expect(ret, self.outcome(errors), "stream_query")
        if ret == OK and s is not None and not s.busy and s.synced_by == who:
            assert status == 0, "a synchronized stream with no new work is not complete"

    # ------------------------------------------------------------------ events
    @rule(who=WHO, kind=st.sampled_from(["legacy", "sync", "timeline", "new"]))
    def create_event(self, who: str, kind: str) -> None:
        if kind == "legacy":
            handle, ret = self.call(who, "acl.rt.create_event")
        elif kind == "new":
            handle, ret = self.call(who, "acl.rt.create_event_ex_with_flag", ACL_EVENT_SYNC)
        else:
            flag = ACL_EVENT_SYNC if kind == "sync" else ACL_EVENT_TIME_LINE
            handle, ret = self.call(who, "acl.rt.create_event_with_flag", flag)
        cur = self.cur[who]
        self.expect(ret, OK if cur else E_NO_CTX, "create_event")
        if cur is not None:
            flags = {"legacy": 0, "sync": ACL_EVENT_SYNC, "timeline": ACL_EVENT_TIME_LINE,
                     "new": ACL_EVENT_SYNC}[kind]
            cur.events.append(MEvent(handle, cur, kind == "new", flags))

    @rule(who=WHO, data=st.data())
    def destroy_event(self, who: str, data: st.DataObject) -> None:
        pick = self.draw_event(data)
        errors, e = self.resolve_event(pick)
        ret = self.call(who, "acl.rt.destroy_event", self.handle_of(pick))
        self.expect(ret, self.outcome(errors), "destroy_event")
        if ret == OK and e is not None:
            e.alive = False
            self.dead_handles.append(e.handle)

    @rule(who=WHO, data=st.data())
    def record_event(self, who: str, data: st.DataObject) -> None:
        ep, sp = self.draw_event(data), self.draw_stream(data)
        e_err, e = self.resolve_event(ep)
        s_err, s = self.resolve_stream(who, sp)
        ret = self.call(who, "acl.rt.record_event", self.handle_of(ep), self.handle_of(sp))
        self.expect(ret, e_err or self.outcome(s_err), "record_event")
        if ret == OK and e is not None and s is not None:
            e.recorded, e.done, s.busy, s.synced_by = True, False, True, ""

    @rule(who=WHO, data=st.data())
    def stream_wait_event(self, who: str, data: st.DataObject) -> None:
        sp, ep = self.draw_stream(data), self.draw_event(data)
        s_err, s = self.resolve_stream(who, sp)
        e_err, e = self.resolve_event(ep)
        ret = self.call(who, "acl.rt.stream_wait_event", self.handle_of(sp), self.handle_of(ep))
        if s_err:
            want: int | set[int] = s_err
        elif e_err:
            want = e_err
        else:
            assert e is not None
            legacy_unusable = not e.new_mode and e.flags and not e.flags & ACL_EVENT_SYNC
            # §5d: a legacy event never recorded is 107000; a new-mode one is a no-op.
            want = E_RT_PARAM if legacy_unusable or (not e.new_mode and not e.recorded) else OK
        self.expect(ret, want, "stream_wait_event")
        if ret == OK and s is not None:
            s.busy, s.synced_by = True, ""

    @rule(who=WHO, data=st.data())
    def reset_and_rerecord(self, who: str, data: st.DataObject) -> None:
        """reset_event then record again at once, so no later wait can be left unsatisfiable
        (a wait on a reset event with no new record is a documented hang)."""
        ep, sp = self.draw_event(data), self.draw_stream(data)
        e_err, e = self.resolve_event(ep)
        s_err, s = self.resolve_stream(who, sp)
        ret = self.call(who, "acl.rt.reset_event", self.handle_of(ep), self.handle_of(sp))
        if e_err or s_err:
            self.expect(ret, e_err or s_err, "reset_event")
            return
        assert e is not None and s is not None
        no_sync = not e.new_mode and e.flags and not e.flags & ACL_EVENT_SYNC
        self.expect(ret, E_RT_PARAM if no_sync else OK, "reset_event")
        if ret == OK:
            again = self.call(who, "acl.rt.record_event", e.handle, self.handle_of(sp))
            self.expect(again, OK, "record_event after reset_event")
            e.recorded, e.done, s.busy, s.synced_by = True, False, True, ""

    @rule(who=WHO, data=st.data())
    def query_and_synchronize_event(self, who: str, data: st.DataObject) -> None:
        pick = self.draw_event(data)
        errors, e = self.resolve_event(pick)
        h = self.handle_of(pick)
        status, ret = self.call(who, "acl.rt.query_event_status", h)
        self.expect(ret, self.outcome(errors), "query_event_status")
        if e is not None and not e.recorded:
            # §5d: never recorded -> NOT_READY (0) for legacy, COMPLETE (1) for new mode
            assert status == (1 if e.new_mode else 0), (status, e)
        elif e is not None and e.done and e.done_by == who:
            assert status == 1, "an event this thread synchronized is not complete"
        ret = self.call(who, "acl.rt.synchronize_event", h)
        self.expect(ret, self.outcome(errors), "synchronize_event")
        if ret == OK and e is not None and e.recorded:
            e.done, e.done_by = True, who
            status, ret = self.call(who, "acl.rt.query_event_status", h)
            assert (status, ret) == (1, OK), "a synchronized event is not complete"

    @rule(who=WHO, data=st.data())
    def event_elapsed_time(self, who: str, data: st.DataObject) -> None:
        a, b = self.draw_event(data), self.draw_event(data)
        errors = self.resolve_event(a)[0] | self.resolve_event(b)[0]
        ms, ret = self.call(who, "acl.rt.event_elapsed_time", self.handle_of(a),
                            self.handle_of(b))
        if not errors:
            assert isinstance(a, MEvent) and isinstance(b, MEvent)
            if not (a.recorded and b.recorded):
                errors = {E_INTERNAL}  # §9.1: never recorded
            elif not (a.done and b.done and a.done_by == b.done_by == who):
                errors = {OK, E_TIMESTAMP}  # §9.1: 107006 while not complete (this clock)
        self.expect(ret, self.outcome(errors), "event_elapsed_time")
        assert isinstance(ms, float)

    # ------------------------------------------------------------------ memory
    @rule(who=WHO, size=MALLOC_SIZES, policy=st.sampled_from([0, 1, 2]))
    def malloc(self, who: str, size: int, policy: int) -> None:
        ptr, ret = self.call(who, "acl.rt.malloc", size, policy)
        if self.cur[who] is None:
            want = E_NO_CTX
        elif size % (SIZE_MAX + 1) == 0 or size % (SIZE_MAX + 1) + 64 > SIZE_MAX:
            # §2.6: size 0; §5a: only a size (a size_t: -1 is 2**64-1) whose rounding
            # overflows size_t is a parameter error, anything else is tried (207001)
            want = E_PARAM
        elif used(self) + accounted(size, policy) > self.capacity:
            want = E_OOM
        else:
            want = OK
        self.expect(ret, want, f"malloc({size}, {policy})")
        if ret == OK:
            assert ptr % 64 == 0 and self.find(ptr) is None, hex(ptr)
            self.allocs.append(MAlloc(ptr, rounded(size), accounted(size, policy), "dev"))
            if ptr in self.stale:
                self.stale.remove(ptr)
        else:
            assert ptr == 0

    @rule(who=WHO, size=st.sampled_from([0, -1, 1, 64, 100, 4 * KIB]))
    def malloc_host(self, who: str, size: int) -> None:
        ptr, ret = self.call(who, "acl.rt.malloc_host", size)
        # -1 wraps to 2**64-1 (the binding parses the size with k): more than the host has
        want = OK if size > 0 else E_PARAM if size == 0 else E_OOM
        self.expect(ret, want, "malloc_host")
        if ret == OK:
            assert ptr % 64 == 0
            self.allocs.append(MAlloc(ptr, size, 0, "host"))
            # Host addresses are real: keep the block's bytes alive after it is freed, so no
            # later host buffer reuses the address (a stale pointer then stays stale, and the
            # runs Hypothesis replays stay identical).
            region = self.session.memory.find(ptr)
            assert region is not None
            self.keep.append(region.buf)

    def idle(self, kind: str) -> list[MAlloc]:
        return [a for a in self.allocs if a.kind == kind and a.owner == "user" and not a.streams]

    def unused(self, p: int) -> bool:
        """No live memory holds ``p`` (a freed address can be reused, also by a model's own
        weights, which the program cannot see)."""
        return self.find(p) is None and self.session.memory.find(p) is None

    def stale_ptrs(self) -> list[int]:
        return [p for p in self.stale if self.unused(p)]

    @rule(who=WHO, data=st.data(), host=st.booleans())
    def free(self, who: str, data: st.DataObject, host: bool) -> None:
        """free / free_host of live, freed (double free), interior, foreign and null pointers."""
        mine, other = ("host", "dev") if host else ("dev", "host")
        options: list[tuple[str, int]] = [("live", a.ptr) for a in self.idle(mine)]
        options += [("null", 0), ("garbage", GARBAGE)]
        options += [("interior", a.ptr + 32) for a in self.idle(mine) if a.size > 32]
        options += [("wrong kind", a.ptr) for a in self.allocs if a.kind == other]
        stale = self.stale_hosts[-3:] if host else self.stale_ptrs()[-3:]
        options += [("double free", p) for p in stale]
        what, ptr = data.draw(st.sampled_from(options))
        name = "acl.rt.free_host" if host else "acl.rt.free"
        ret = self.call(who, name, ptr)
        # §2.6: null is 100000; §9.1(d): a freed or foreign pointer is 107000
        want = E_PARAM if what == "null" else OK if what == "live" else E_RT_PARAM
        self.expect(ret, want, f"{name} ({what})")
        if ret == OK:
            a = next(x for x in self.allocs if x.ptr == ptr and x.kind == mine)
            self.allocs.remove(a)
            (self.stale_hosts if host else self.stale).append(ptr)

    @precondition(lambda self: any(a.streams for a in self.dev_allocs() if a.owner == "user"))
    @rule(who=WHO, data=st.data())
    def free_in_flight(self, who: str, data: st.DataObject) -> None:
        """Free memory a queued task still uses: free returns at once (§5e); the task fails
        when it runs, unless it already ran (which depends on virtual time)."""
        busy = [a for a in self.dev_allocs() if a.owner == "user" and a.streams]
        a = data.draw(st.sampled_from(busy))
        self.expect(self.call(who, "acl.rt.free", a.ptr), OK, "free in flight")
        for s in self.all_streams():
            if id(s) in a.streams:
                s.maybe_err = True
        self.allocs.remove(a)
        self.stale.append(a.ptr)

    def draw_ptr(self, data: st.DataObject) -> int:
        live = [a for a in self.allocs if a.owner == "user"]
        options: list[int] = [a.ptr for a in live] + [a.ptr + 64 for a in live if a.size > 64]
        options += [0, GARBAGE]
        options += self.stale_ptrs()[-3:]
        options += self.stale_hosts[-2:]
        return data.draw(st.sampled_from(options))

    def copy_errors(self, dst: int, dest_max: int, src: int, count: int, kind: int
                    ) -> tuple[int | None, MAlloc | None, MAlloc | None]:
        """The code of a copy's argument checks (None: they pass), and the two allocations."""
        dest_max &= MASK64  # the binding parses sizes with k: -1 wraps to 2**64-1
        count &= MASK64
        if count == 0:
            return OK, None, None  # §2.6: succeeds and does nothing
        if dst == 0 or src == 0:
            return E_PARAM, None, None  # §2.6
        if count > dest_max:
            return E_RT_PARAM, None, None  # §2.6
        if count < 0 or dest_max < 0 or not 0 <= kind <= 7:
            return E_PARAM, None, None
        if dst == src:
            return OK, None, None  # §2.6: succeeds and does nothing
        d, s = self.find(dst), self.find(src)
        if d is None or s is None:
            return E_RT_PARAM, None, None  # freed or unknown pointer
        return None, d, s

    def draw_copy(self, data: st.DataObject) -> tuple[int, int, int, int, int]:
        dst, src = self.draw_ptr(data), self.draw_ptr(data)
        d, s = self.find(dst), self.find(src)
        room = min(d.end - dst if d else 64, s.end - src if s else 64)
        count = data.draw(st.sampled_from([max(1, room), 1, room + 1, 0, room + 100, HUGE]))
        big = min(count + 4096, HUGE)
        dest_max = data.draw(st.sampled_from([count, count, count - 1, big, -1]))
        kind = data.draw(st.sampled_from([H2H, H2D, D2H, D2D, 4, 9]))
        return dst, dest_max, src, count, kind

    @rule(who=WHO, data=st.data())
    def memcpy(self, who: str, data: st.DataObject) -> None:
        dst, dest_max, src, count, kind = self.draw_copy(data)
        ret = self.call(who, "acl.rt.memcpy", dst, dest_max, src, count, kind)
        if self.cur[who] is None:
            self.expect(ret, E_NO_CTX, "memcpy without a context")
            return
        code, d, s = self.copy_errors(dst, dest_max, src, count, kind)
        if code is None:
            assert d is not None and s is not None
            over = source_overread(s, src, count)
            oob = dst + count > d.end or (over is None and src + count > s.end)
            # refused out-of-bounds copy (documented deviation), but a host source over-read
            # is copied when mapped, 107000 when not
            code = over if over == E_RT_PARAM else E_MEM if oob else OK
        self.expect(ret, code, f"memcpy {dst:#x} <- {src:#x} ({count} of {dest_max})")

    @rule(who=WHO, data=st.data())
    def memcpy_async(self, who: str, data: st.DataObject) -> None:
        dst, dest_max, src, count, kind = self.draw_copy(data)
        sp = self.draw_stream(data)
        s_err, stream = self.resolve_stream(who, sp)
        ret = self.call(who, "acl.rt.memcpy_async", dst, dest_max, src, count, kind,
                        self.handle_of(sp))
        if s_err:
            self.expect(ret, s_err, "memcpy_async stream")
            return
        assert stream is not None
        code, d, s = self.copy_errors(dst, dest_max, src, count, kind)
        over = None
        if code is None:
            assert d is not None and s is not None
            over = source_overread(s, src, count)
            code = E_RT_PARAM if over == E_RT_PARAM else async_kind_refused(kind, s.kind,
                                                                           d.kind)
        if code is None:
            assert d is not None and s is not None
            if d.kind != "dev" and s.kind != "dev":
                code = E_NOT_SUPPORTED  # §2.6: host to host on a stream in EP mode
            else:
                code = OK
                stream.busy, stream.synced_by = True, ""
                if dst + count > d.end or (over is None and src + count > s.end):
                    stream.err = stream.err or E_MEM  # fails when it runs
                d.streams.add(id(stream))
                s.streams.add(id(stream))
        self.expect(ret, code, f"memcpy_async {dst:#x} <- {src:#x} ({count} of {dest_max})")

    def memset_errors(self, ptr: int, max_count: int, count: int) -> tuple[int | None,
                                                                           MAlloc | None]:
        if count == 0:
            return OK, None
        if ptr == 0:
            return E_PARAM, None
        if count > max_count:
            return E_RT_PARAM, None  # §2.6 (memset_async)
        if count < 0:
            return E_PARAM, None
        a = self.find(ptr)
        if a is None:
            return E_RT_PARAM, None
        return None, a

    def draw_memset(self, data: st.DataObject) -> tuple[int, int, int, int]:
        ptr = self.draw_ptr(data)
        a = self.find(ptr)
        room = a.end - ptr if a else 64
        count = data.draw(st.sampled_from([room, 1, room + 1, 0, HUGE]))
        max_count = data.draw(st.sampled_from([count, count, count - 1, 1 << 30]))
        return ptr, max_count, data.draw(st.integers(-300, 300)), count

    @rule(who=WHO, data=st.data())
    def memset(self, who: str, data: st.DataObject) -> None:
        ptr, max_count, value, count = self.draw_memset(data)
        ret = self.call(who, "acl.rt.memset", ptr, max_count, value, count)
        if self.cur[who] is None:
            self.expect(ret, E_NO_CTX, "memset without a context")
            return
        code, a = self.memset_errors(ptr, max_count, count)
        if code is None:
            assert a is not None
            code = E_MEM if ptr + count > a.end else OK
        self.expect(ret, code, f"memset {ptr:#x} ({count} of {max_count})")

    @rule(who=WHO, data=st.data())
    def memset_async(self, who: str, data: st.DataObject) -> None:
        ptr, max_count, value, count = self.draw_memset(data)
        sp = self.draw_stream(data)
        s_err, stream = self.resolve_stream(who, sp)
        ret = self.call(who, "acl.rt.memset_async", ptr, max_count, value, count,
                        self.handle_of(sp))
        if s_err:
            self.expect(ret, s_err, "memset_async stream")
            return
        assert stream is not None
        code, a = self.memset_errors(ptr, max_count, count)
        if code is None:
            assert a is not None
            oob = ptr + count > a.end
            if a.kind != "dev":
                code = E_MEM if oob else OK  # host memory is set at once (RT2)
            else:
                code = OK
                stream.busy, stream.synced_by = True, ""
                a.streams.add(id(stream))
                if oob:
                    stream.err = stream.err or E_MEM
        self.expect(ret, code, f"memset_async {ptr:#x} ({count} of {max_count})")

    @rule(who=WHO, attr=st.sampled_from([0, 0, 1, 99]))
    def get_mem_info(self, who: str, attr: int) -> None:
        free, total, ret = self.call(who, "acl.rt.get_mem_info", attr)
        if self.cur[who] is None:
            self.expect(ret, E_NO_CTX, "get_mem_info")
        elif attr == 99:
            self.expect(ret, E_PARAM, "get_mem_info(99)")
        else:  # the default profile has DDR; HBM asked of a DDR device reports DDR (§2.6)
            self.expect(ret, OK, "get_mem_info")
            assert total == self.capacity
            assert total - free == used(self), (total - free, used(self))

    # ------------------------------------------------------------------ operators
    def host_bytes(self, who: str, data: bytes, owner: str = "op") -> int:
        """A pageable host buffer (kept alive, and known to the model)."""
        self.keep.append(data)
        ptr = int(self.call(who, "acl.util.bytes_to_ptr", data))
        self.allocs.append(MAlloc(ptr, len(data), 0, "pageable", owner=owner))
        return ptr

    @precondition(lambda self: any(c is not None for c in self.cur.values()))
    @rule(who=WHO, data=st.data(), op=st.sampled_from(["Add", "Add", "NoSuchOp"]),
          n=st.integers(1, 4))
    def op_add(self, who: str, data: st.DataObject, op: str, n: int) -> None:
        """Add two float32 [n, 4] tensors with acl.op.execute_v2 (sample 7.4's flow)."""
        cur = self.cur[who]
        if cur is None:
            return
        nbytes = n * 4 * 4
        a = np.arange(n * 4, dtype=np.float32)
        b = np.full(n * 4, 0.5, dtype=np.float32)
        mem: list[MAlloc] = []
        for _ in range(3):
            p, ret = self.call(who, "acl.rt.malloc", nbytes, 2)
            self.expect(ret, OK, "malloc for Add")
            mem.append(MAlloc(p, rounded(nbytes), accounted(nbytes, 2), "dev"))
        self.allocs += mem
        ptrs = [x.ptr for x in mem]
        for p, arr in zip(ptrs, (a, b), strict=False):
            src = self.host_bytes(who, arr.tobytes())
            self.expect(self.call(who, "acl.rt.memcpy", p, nbytes, src, nbytes, H2D), OK,
                        "memcpy for Add")
        descs = [self.call(who, "acl.create_tensor_desc", ACL_FLOAT, [n, 4], ACL_FORMAT_ND)
                 for _ in range(3)]
        bufs = [self.call(who, "acl.create_data_buffer", p, nbytes) for p in ptrs]
        sp = data.draw(st.sampled_from([0, *(s for s in cur.streams if s.alive),
                                        *self.live_streams()]))
        s_err, stream = self.resolve_stream(who, sp)
        ret = self.call(who, "acl.op.execute_v2", op, descs[:2], bufs[:2], descs[2:], bufs[2:],
                        0, self.handle_of(sp))
        want: int | set[int] = s_err or (E_OP_NOT_FOUND if op != "Add" else OK)  # §9.1
        self.expect(ret, want, "execute_v2")
        if ret == OK:
            assert stream is not None
            stream.busy, stream.synced_by = True, ""
            for x in mem:
                x.streams.add(id(stream))
            h = self.call(who, "acl.rt.synchronize_stream", self.handle_of(sp))
            self.expect(h, self.synced([stream], who), "synchronize after Add")
            if h == OK:
                out = bytes(nbytes)
                dst = self.host_bytes(who, out)
                self.expect(self.call(who, "acl.rt.memcpy", dst, nbytes, ptrs[2], nbytes, D2H),
                            OK, "read the sum")
                np.testing.assert_array_equal(np.frombuffer(out, np.float32), a + b)
        for x in bufs:
            self.expect(self.call(who, "acl.destroy_data_buffer", x), OK, "destroy buffer")
        for d in descs:
            assert self.call(who, "acl.destroy_tensor_desc", d) is None

    # ------------------------------------------------------------------ models
    def live_models(self) -> list[MModel]:
        return [m for m in self.models if m.alive]

    @precondition(lambda self: sum(m.ctx.alive for m in self.live_models()) < 2)
    @rule(who=WHO)
    def load_model(self, who: str) -> None:
        """load_from_file the zoo MLP, then its desc and datasets (sample 7.1's flow)."""
        mid, ret = self.call(who, "acl.mdl.load_from_file", zoo.path("mlp"))
        cur = self.cur[who]
        self.expect(ret, OK if cur else E_NO_CTX, "load_from_file")
        if cur is None:
            return
        desc = self.call(who, "acl.mdl.create_desc")
        self.expect(self.call(who, "acl.mdl.get_desc", desc, mid), OK, "get_desc")
        sizes = [self.call(who, "acl.mdl.get_input_size_by_index", desc, 0),
                 self.call(who, "acl.mdl.get_output_size_by_index", desc, 0)]
        internal = accounted(self.work_size, 2) + accounted(self.weight_size, 2)
        m = MModel(mid, cur, internal, desc, 0, 0, [], [])
        for i, size in enumerate(sizes):
            p, ret = self.call(who, "acl.rt.malloc", size, 2)
            self.expect(ret, OK, "malloc for the model")
            a = MAlloc(p, rounded(size), accounted(size, 2), "dev", owner="model")
            self.allocs.append(a)
            m.io.append(a)
            buf = self.call(who, "acl.create_data_buffer", p, size)
            ds = self.call(who, "acl.mdl.create_dataset")
            _, ret = self.call(who, "acl.mdl.add_dataset_buffer", ds, buf)
            self.expect(ret, OK, "add_dataset_buffer")
            m.bufs.append(buf)
            if i == 0:
                m.in_ds = ds
            else:
                m.out_ds = ds
        self.models.append(m)

    def model_errors(self, who: str, m: MModel) -> set[int]:
        cur = self.cur[who]
        if cur is None:
            return {E_NO_CTX}
        if cur is not m.ctx:
            return {E_MODEL_CTX}  # load, execute and unload in one context (§5c)
        return set()

    @precondition(lambda self: bool(self.live_models()))
    @rule(who=WHO, data=st.data(), asynchronous=st.booleans())
    def execute_model(self, who: str, data: st.DataObject, asynchronous: bool) -> None:
        m = data.draw(st.sampled_from(self.live_models()))
        errors = self.model_errors(who, m)
        if asynchronous:
            sp = self.draw_stream(data)
            s_err, stream = self.resolve_stream(who, sp)
            ret = self.call(who, "acl.mdl.execute_async", m.mid, m.in_ds, m.out_ds,
                            self.handle_of(sp))
            want = errors or s_err
            self.expect(ret, self.outcome(want), "execute_async")
            if ret == OK:
                assert stream is not None
                stream.busy, stream.synced_by = True, ""
                for a in m.io:
                    a.streams.add(id(stream))
        else:
            ret = self.call(who, "acl.mdl.execute", m.mid, m.in_ds, m.out_ds)
            self.expect(ret, self.outcome(errors), "execute")

    @precondition(lambda self: bool(self.live_models()))
    @rule(who=WHO, data=st.data())
    def unload_model(self, who: str, data: st.DataObject) -> None:
        m = data.draw(st.sampled_from(self.live_models()))
        errors = self.model_errors(who, m)
        ret = self.call(who, "acl.mdl.unload", m.mid)
        self.expect(ret, self.outcome(errors), "unload")
        if ret != OK:
            return
        m.alive = False
        m.internal = 0
        for a in m.io:
            a.owner = "user"  # its buffers are now the program's to free
        for ds in (m.in_ds, m.out_ds):
            self.expect(self.call(who, "acl.mdl.destroy_dataset", ds), OK, "destroy_dataset")
        for b in m.bufs:
            self.expect(self.call(who, "acl.destroy_data_buffer", b), OK, "destroy buffer")
        self.expect(self.call(who, "acl.mdl.destroy_desc", m.desc), OK, "destroy_desc")

    # ------------------------------------------------------------------ badly typed calls
    @rule(who=WHO, case=st.sampled_from([
        ("acl.rt.malloc", ("1", 0)), ("acl.rt.free", (1.5,)),
        ("acl.rt.memcpy", (None, 1, 2, 3, 1)), ("acl.rt.create_stream_with_config", ("1", 0)),
        ("acl.rt.set_device", (1 << 31,)), ("acl.rt.record_event", ([1], 0)),
        ("acl.rt.malloc_host", (1.0,)), ("acl.init", (None,)),
    ]))
    def badly_typed(self, who: str, case: tuple[str, tuple[Any, ...]]) -> None:
        """TypeError("<name> args parse failed") and no call reaches the runtime (§1.4)."""
        name, args = case
        fn = self.fn(name)
        try:
            if who == "main":
                fn(*args)
            else:
                self.worker.run(fn, args)
        except TypeError as e:
            assert str(e) == f"{name} args parse failed", str(e)
        else:
            raise AssertionError(f"{name}{args} did not raise TypeError")

    # ------------------------------------------------------------------ invariants
    @invariant()
    def memory_accounting(self) -> None:
        mem = self.session.memory
        dev = mem.devices[0]
        assert dev.used == used(self), (dev.used, used(self))
        assert mem.pinned_used == sum(a.size for a in self.allocs if a.kind == "host")
        regions = sorted((r for r in mem.live_regions() if r.kind == 0), key=lambda r: r.addr)
        for r0, r1 in pairwise(regions):
            assert r0.addr + r0.accounted <= r1.addr, f"{r0.addr:#x} overlaps {r1.addr:#x}"
        starts = {r.addr for r in regions}
        assert {a.ptr for a in self.dev_allocs()} <= starts
        internal = sum(1 for m in self.models if m.internal)
        assert len(regions) == len(self.dev_allocs()) + 2 * internal

    @invariant()
    def clocks_stay_sane(self) -> None:
        """Refused copies move nothing: they must not push virtual time out by years."""
        clocks = [t.clock for t in self.session.thread_list]
        assert max(clocks, default=0) < MAX_CLOCK_NS, clocks

    @invariant()
    def trace_agrees(self) -> None:
        trace = self.session.trace()
        calls = trace.calls
        api = trace.api_calls()  # (the worker thread's queue operations aside)
        assert len(api) == len(self.log), (len(api), len(self.log))
        names = [trace.string(int(i)) for i in calls["name"][api]]
        assert names == [n for n, _ in self.log]
        assert calls["ret"][api].tolist() == [r for _, r in self.log]
        t = trace.tasks
        last_end: dict[int, int] = {}
        for i in np.nonzero(t["end_ns"] >= 0)[0].tolist():
            start, end = int(t["start_ns"][i]), int(t["end_ns"][i])
            assert start >= int(t["submit_ns"][i]) and end >= start, f"task {i}"
            s = int(t["stream"][i])
            if s >= 0:  # FIFO: a stream's tasks start in submission order, no overlap
                assert start >= last_end.get(s, 0), f"task {i} starts before stream {s} is free"
                last_end[s] = end
        for rec, wait in zip(trace.edges["record"].tolist(), trace.edges["wait"].tolist(),
                             strict=True):
            assert t["end_ns"][wait] >= t["end_ns"][rec] >= 0, f"wait {wait} before {rec}"
        assert set(trace.failures["code"].tolist()) <= {E_MEM}

    # ------------------------------------------------------------------ teardown
    def teardown(self) -> None:
        try:
            while self.refcount > 0:
                self.expect(self.call("main", "acl.rt.reset_device", 0), OK, "reset at exit")
                self.refcount -= 1
            if self.init_count == 0:
                self.expect(self.call("main", "acl.init"), OK, "init at exit")
            self.expect(self.call("main", "acl.finalize"), OK, "finalize at exit")
            mem = self.session.memory
            assert mem.devices[0].used == 0 and mem.pinned_used == 0
            trace = self.session.finish()
            api = trace.api_calls()
            assert len(api) == len(self.log)
            assert trace.calls["ret"][api].tolist() == [r for _, r in self.log]
        finally:
            self.worker.stop()
            acl_lab.uninstall()
            self.session.__exit__(None, None, None)


def used(m: ApiMachine) -> int:
    """Device bytes the model says are taken: live allocations plus loaded models' memory."""
    return sum(a.accounted for a in m.dev_allocs()) + sum(x.internal for x in m.models)


TestApiFuzz = ApiMachine.TestCase
TestApiFuzz.settings = PROFILES[PROFILE]
