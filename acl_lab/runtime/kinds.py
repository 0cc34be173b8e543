"""The runtime's named kinds: one IntEnum per family, the one place each is declared.

Every kind the runtime hands to its hooks is a member of one of these enums, and the trace
stores it as its integer value in the column named beside each family. The values are the
trace format (saved traces hold them), so a member's value never changes and a retired one
is never reused. The tracer's name tables (``tracer.schema``) are derived from these enums
through ``label`` / ``labels()``, never written again. The memcpy kinds are the header's
(``constants.MemcpyKind``, ``aclrtMemcpyKind``): a public ACL enum, not the runtime's own.

Families (trace column):

* ``SyncKind`` (``syncs.kind``): what a host wait waited for.
* ``ObjectKind`` (``objects.kind``): which handle object a row is, for every module that
  creates one (context, stream, ..., DVPP, VDEC/VENC and aclnn objects).
* ``AllocKind`` (``allocs.kind``): which memory a region is; ``Pool`` (``allocs.pool``):
  which page pool it came from.
* ``TaskKind`` (``tasks.kind``): what a stream task does; ``Engine`` (``tasks.engine``):
  which hardware unit it occupies.
* ``Ending`` (``destroys.how``, ``frees.how``): how a resource ended.

Reading a member (``TaskKind.H2D``) is an enum-class attribute lookup, about ten times a
module global's cost; code on a hot path binds the members it compares against to module
constants (``_H2D = TaskKind.H2D``) with a comment saying so. This module imports nothing.
"""

from __future__ import annotations

from enum import IntEnum, unique


class _Kind(IntEnum):
    """An IntEnum whose members also have the name the trace's views print."""

    @property
    def label(self) -> str:
        """The member's name as tables, views and messages print it (``host_pinned``)."""
        return self.name.lower()

    @classmethod
    def labels(cls) -> tuple[str, ...]:
        """Every member's ``label``, indexed by value (the family's values are 0, 1, ...)."""
        members = sorted(cls, key=int)
        if [int(m) for m in members] != list(range(len(members))):
            raise TypeError(f"{cls.__name__} values are not 0..n-1: use label_map()")
        return tuple(m.label for m in members)

    @classmethod
    def label_map(cls) -> dict[int, str]:
        """Value -> ``label`` for every member (for a family with gaps in its values)."""
        return {int(m): m.label for m in cls}


@unique
class SyncKind(_Kind):
    """What a host wait waited for (the trace's ``syncs.kind`` column)."""

    STREAM = 0   # a stream's tasks (synchronize_stream, a media channel draining its stream)
    DEVICE = 1   # synchronize_device: every stream of the caller's context
    EVENT = 2    # an event's record (synchronize_event)
    REPORT = 3   # process_report: a callback report
    JOIN = 4     # acl.util.stop_thread: the joined thread ended


@unique
class ObjectKind(_Kind):
    """Which handle object a row of the trace's ``objects`` table is.

    One numbering for every module that creates handle objects, so a number is never reused;
    the families are grouped by tens (10 is free: it was never used).
    """

    CONTEXT = 0
    STREAM = 1
    EVENT = 2
    THREAD = 3
    DATA_BUFFER = 4
    TENSOR_DESC = 5
    OP_ATTR = 6
    OP_HANDLE = 7
    MODEL_DESC = 8
    DATASET = 9
    MDL_AIPP = 11  # an aclmdlAIPP (acl.mdl.create_aipp)
    DVPP_CHANNEL_DESC = 20
    DVPP_CHANNEL = 21
    DVPP_PIC_DESC = 22
    DVPP_RESIZE_CONFIG = 23
    DVPP_ROI_CONFIG = 24
    DVPP_BATCH_PIC_DESC = 25
    DVPP_JPEGE_CONFIG = 26
    DVPP_STREAM_DESC = 27
    ACLNN_TENSOR = 30
    ACLNN_SCALAR = 31
    ACLNN_EXECUTOR = 32
    VDEC_CHANNEL_DESC = 40
    VDEC_CHANNEL = 41
    VDEC_FRAME_CONFIG = 42
    VENC_CHANNEL_DESC = 43
    VENC_CHANNEL = 44
    VENC_FRAME_CONFIG = 45


@unique
class AllocKind(_Kind):
    """Which memory a region is (the trace's ``allocs.kind`` column)."""

    DEVICE = 0         # acl.rt.malloc (and the cached/aligned variants)
    HOST_PINNED = 1    # acl.rt.malloc_host
    DVPP = 2           # acl.media.dvpp_malloc
    HOST_PAGEABLE = 3  # pageable host memory the program owns (numpy, bytes, raw addresses)


@unique
class Pool(_Kind):
    """Which page pool an allocation came from (the trace's ``allocs.pool`` column)."""

    NORMAL = 0
    HUGE = 1
    HUGE1G = 2
    DVPP = 3
    HOST = 4


@unique
class TaskKind(_Kind):
    """What a stream task does (the trace's ``tasks.kind`` column)."""

    H2D = 0
    D2H = 1
    D2D = 2
    H2H = 3
    MEMSET = 4
    KERNEL = 5
    MODEL = 6
    EVENT_RECORD = 7
    EVENT_WAIT = 8
    EVENT_RESET = 9
    CALLBACK = 10
    DVPP = 11

    @property
    def label(self) -> str:
        """``H2D``, ``D2H``, ``D2D``, ``H2H`` for copies (a direction keeps its capitals, as in
        profilers), the lower-case name (``event_record``) for the others."""
        name = self.name
        return name if name[1:2] == "2" else name.lower()


@unique
class Engine(_Kind):
    """Which hardware unit a task occupies (the trace's ``tasks.engine`` column)."""

    NONE = 0
    COPY_H2D = 1
    COPY_D2H = 2
    COPY_D2D = 3
    AICORE = 4
    DVPP = 5
    HOST = 6


@unique
class Ending(_Kind):
    """How a resource ended (the trace's ``destroys.how`` and ``frees.how`` columns)."""

    EXPLICIT = 0   # the program destroyed or freed it
    RECLAIMED = 1  # reset_device / finalize / the session's end took it back



@unique
class Turn(_Kind):
    """Where a host thread stands in the host schedule (``HostThread.turn``,
    ``hostsched``); runtime state, not a trace column."""

    NEW = 0        # registered, not yet decided (external or controlled)
    RUNNING = 1    # its turn: running user code or inside a call
    READY = 2      # waiting for its turn
    BLOCKED = 3    # in a wait (``HostThread.sched_wait``)
    OUTSIDE = 4    # stepped out (a kernel thread between cells): may act again at its clock
    DETACHED = 5   # preempted by the fallback: runs outside the schedule until its next point
    EXITED = 6     # ended
    EXTERNAL = 7   # not controlled: never waits for a turn


@unique
class HostEdge(_Kind):
    """What orders two host threads (the trace's ``host_edges.kind`` column): everything the
    source thread did up to its ``src`` row happens before its ``dst`` row in the other
    thread, and so before all that thread does after it."""

    START = 0      # Thread.start / acl.util.start_thread -> the thread's first row
    JOIN = 1       # a thread's end -> Thread.join / acl.util.stop_thread that saw it end
    LOCK = 2       # Lock / RLock release -> a later acquire by another thread
    EVENT = 3      # Event.set -> a wait (or is_set) that saw the flag
    QUEUE = 4      # Queue.put -> the get that took that item
    NOTIFY = 5     # Condition.notify -> the wait it woke
    SEMAPHORE = 6  # Semaphore.release -> the acquire that took that count
    BARRIER = 7    # a party's arrival -> every party's leaving
    TASK_DONE = 8  # Queue.task_done -> the Queue.join it let go


__all__ = ["AllocKind", "Ending", "Engine", "HostEdge", "ObjectKind", "Pool", "SyncKind",
           "TaskKind", "Turn"]
