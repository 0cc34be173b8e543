"""The emulated machine's objects: host threads, devices, contexts, streams, events, tasks.

Plain state holders. Behaviour lives in ``Session``; these classes only name the state so the
session reads like the domain. Every object that a handle can name has ``oid`` (its row in the
trace's ``objects`` table, whose ``kind`` is a ``kinds.ObjectKind``) and ``handle`` (the int
the program sees).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from .kinds import Engine, TaskKind, Turn
from .memory import Region
from .resources import Resource

# Event modes.
LEGACY = 0
NEW_MODE = 1


class HostThread:
    """A Python thread known to the emulator: its clock, its current context and its place in
    the host schedule (``hostsched``).

    ``turn`` is a ``hostsched.Turn``; ``controlled`` tells whether it takes part in the
    schedule (``sched_wait`` is its wait while ``BLOCKED``, ``cond`` where it sleeps until
    its turn, ``prio`` its tie-break priority, ``permit`` a wake that came before its wait).
    ``start_cid`` is the call that started it (``threading.Thread.start``,
    ``acl.util.start_thread``; -1: unknown) and ``end_cid`` its ``threading.Thread.end`` row
    once it ended, the ends of the happens-before edges of its start and of joins.
    """

    __slots__ = ("clock", "closed_reported", "cond", "controlled", "ctx", "device",
                 "end_cid", "err_msg", "idx", "name", "permit", "prio", "pythread", "reports",
                 "sched_wait", "start_cid", "started_by_acl", "subscriptions", "turn")

    def __init__(self, idx: int, pythread: threading.Thread, clock: int) -> None:
        self.idx = idx
        self.name = pythread.name
        self.pythread = pythread
        self.clock = clock
        self.ctx: Context | None = None
        self.device = -1
        self.err_msg = ""
        #: a ``hostsched.Turn`` (NEW: decided at the thread's first call)
        self.turn: int = Turn.NEW
        self.controlled = False
        self.sched_wait: Any = None
        self.cond: Any = None
        self.prio = 0.0
        self.permit = False
        self.start_cid = -1
        self.end_cid = -1
        self.subscriptions: list[Stream] = []
        self.reports: deque[Task] = deque()
        self.started_by_acl = False
        self.closed_reported = False

    @property
    def ident(self) -> int:
        """The thread's id as ``threading.get_ident()`` gives it (0 before it started)."""
        return self.pythread.ident or 0

    @property
    def alive(self) -> bool:
        """True while the Python thread runs (or is about to: started, its turn not come)."""
        return self.pythread.is_alive() or (self.controlled and self.turn == Turn.READY)

    def label(self) -> str:
        """How reports name this thread."""
        return f"thread {self.idx} ({self.name})"


class Device:
    """One emulated NPU: reference count, default context and its engines."""

    def __init__(self, index: int, copy_engines: int, aicores: int) -> None:
        self.index = index
        self.refcount = 0
        self.default_ctx: Context | None = None
        self.contexts: list[Context] = []
        self.engines: dict[Engine, Resource] = {
            Engine.COPY_H2D: Resource("copy H2D", copy_engines),
            Engine.COPY_D2H: Resource("copy D2H", copy_engines),
            Engine.COPY_D2D: Resource("copy D2D", copy_engines),
            Engine.AICORE: Resource("AI cores", aicores),
            Engine.DVPP: Resource("DVPP", 1),
        }

    @property
    def is_open(self) -> bool:
        """True while a set_device reference or an explicit context keeps it open."""
        return self.refcount > 0 or any(c.alive for c in self.contexts)


class Context:
    """A device context: the default one of ``set_device`` or one from ``create_context``."""

    def __init__(self, oid: int, handle: int, device: Device, is_default: bool) -> None:
        self.oid = oid
        self.handle = handle
        self.device = device
        self.is_default = is_default
        self.alive = True
        self.default_stream: Stream | None = None
        self.streams: list[Stream] = []
        self.events: list[Event] = []

    def label(self) -> str:
        """How reports name this context."""
        kind = "default context" if self.is_default else "context"
        return f"{kind} {self.handle:#x} (device {self.device.index})"


class Stream:
    """A FIFO task queue bound to the context that was current at creation."""

    def __init__(self, oid: int, handle: int, ctx: Context, is_default: bool,
                 flags: int = 0) -> None:
        self.oid = oid
        self.handle = handle
        self.ctx = ctx
        #: the index of the device (every task of the stream runs there) and its engines
        self.device = ctx.device.index
        self.engines = ctx.device.engines
        self.is_default = is_default
        self.flags = flags
        self.alive = True
        #: tasks submitted but not yet placed in time (waiting on something)
        self.pending: deque[Task] = deque()
        #: end time of the last placed task; FIFO, so it only grows
        self.tail_end = 0
        #: a blocking callback that is running or waiting for its thread; holds the stream
        self.blocked_by: Task | None = None
        self.subscriber: HostThread | None = None
        #: code of the first task that failed since the last synchronize
        self.error = 0

    def label(self) -> str:
        """How reports name this stream."""
        kind = "default stream" if self.is_default else "stream"
        return f"{kind} {self.handle:#x}"

    @property
    def idle(self) -> bool:
        """True when nothing is pending (placed tasks may still run in the future)."""
        return not self.pending and self.blocked_by is None


class Event:
    """An event: legacy (``create_event``/``_with_flag``) or new-mode (``_ex_with_flag``)."""

    def __init__(self, oid: int, handle: int, ctx: Context, flags: int, mode: int) -> None:
        self.oid = oid
        self.handle = handle
        self.ctx = ctx
        self.flags = flags
        self.mode = mode
        self.alive = True
        self.records: list[Task] = []
        self.resets: list[Task] = []
        #: stream_wait_event tasks on this event not placed yet (they may still look back)
        self.waiting: list[Task] = []

    def label(self) -> str:
        """How reports name this event."""
        return f"event {self.handle:#x}"

    @property
    def last_record(self) -> Task | None:
        """The most recently submitted record task, if any."""
        return self.records[-1] if self.records else None

    def forget_old(self) -> None:
        """Drop records and resets no wait can consult any more.

        A wait looks only at records and resets after its own record, and every future wait
        takes the latest record; so everything older than the oldest record an unplaced wait
        holds (or the latest record) is history, kept only by the trace. Called every 64
        records, so an event recorded in a long loop holds a bounded list.
        """
        floor = min([w.record.id for w in self.waiting if w.record is not None]
                    + [self.records[-1].id])
        self.records = [r for r in self.records if r.id >= floor]
        self.resets = [r for r in self.resets if r.id >= floor]


class Access:
    """One region range a task reads or writes."""

    __slots__ = ("length", "offset", "region", "write")

    def __init__(self, region: Region, offset: int, length: int, write: bool) -> None:
        self.region = region
        self.offset = offset
        self.length = length
        self.write = write


class Task:
    """One unit of device work on a stream (or a synchronous copy on no stream).

    Rarely used fields live as class-level defaults so creating a task stays cheap.
    """

    event: Event | None = None
    record: Task | None = None
    #: for a wait whose captured record was reset away: the later record it now waits for
    awaiting: Task | None = None
    callback: Callable[..., Any] | None = None
    user_data: Any = None
    block = False
    fill = 0
    pinned = True
    payload: bytes | None = None
    #: for kernel and model tasks: input bytes (read at start) -> output bytes (at end)
    kernel: Callable[[list[bytes]], list[bytes]] | None = None
    inputs: list[bytes] | None = None
    #: a label for the timeline (op type or model name)
    label = ""
    #: the region ranges the task reads and writes, in order (``add_access``); none by default
    accesses: Sequence[Access] = ()
    reason = ""
    status = 0
    units = 1
    nbytes = 0
    start = -1
    end = -1
    id = -1

    def __init__(self, kind: TaskKind, stream: Stream | None, call: int, submit: int,
                 engine: Engine = Engine.NONE, duration: int = 0) -> None:
        self.kind = kind
        self.stream = stream
        self.call = call
        self.submit = submit
        self.engine = engine
        self.duration = duration
        self.device = stream.device if stream is not None else -1

    @property
    def placed(self) -> bool:
        """True once start and end are known."""
        return self.end >= 0

    def add_access(self, region: Region, offset: int, length: int, write: bool) -> None:
        """Add a region range this task reads (``write`` False) or writes."""
        self.accesses = [*self.accesses, Access(region, offset, length, write)]


class CopyTask(Task):
    """A copy: ``nbytes`` read from ``src`` at ``src_off``, then written to ``dst`` at
    ``dst_off`` (offsets into the regions).

    The commonest task, so its two ranges are fields and ``accesses`` (the source read, then
    the destination written, as for every task) is made only when something asks for it:
    the copy path (submission, placement, both phases, its trace rows) reads the fields.
    """

    def __init__(self, kind: TaskKind, stream: Stream | None, call: int, submit: int,
                 engine: Engine, duration: int, src: Region, src_off: int, dst: Region,
                 dst_off: int, nbytes: int) -> None:
        Task.__init__(self, kind, stream, call, submit, engine, duration)
        self.src = src
        self.src_off = src_off
        self.dst = dst
        self.dst_off = dst_off
        self.nbytes = nbytes

    @cached_property
    def accesses(self) -> Sequence[Access]:  # type: ignore[override]
        """The source read and the destination write, as ``Access`` objects."""
        return [Access(self.src, self.src_off, self.nbytes, False),
                Access(self.dst, self.dst_off, self.nbytes, True)]


class DataBuffer:
    """An aclDataBuffer: a (pointer, size) pair. It owns no memory."""

    def __init__(self, oid: int, handle: int, addr: int, size: int) -> None:
        self.oid = oid
        self.handle = handle
        self.addr = addr
        self.size = size
        self.alive = True
