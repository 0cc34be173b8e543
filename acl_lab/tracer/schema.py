"""The trace schema: tables, their columns, storage types and the values each may hold.

One place defines the shape of a trace; the recorder appends to it, ``Trace`` freezes it and
``Trace.load`` validates files against it. Times are integer nanoseconds (``*_ns``), sizes are
bytes. Id columns hold row numbers of another table; ``-1`` means "none" where the column
allows it. Every column also declares its value domain (an enum's members, a range, or the
table it refers to), so that whatever ``Trace.load`` accepts, every check, view and export can
index with it: no lookup past a name table, no device number that is not a device, no time or
size whose arithmetic overflows int64. ``META`` does the same for the meta entries the checks
and views read.

Before/after for one ``acl.rt.malloc(1000, 0)`` call::

    calls:  name=acl.rt.malloc  thread=0  file=prog.py  line=12  start_ns=..  ret=0
    args:   (int 1000) (int 0)
    allocs: kind=device  pool=normal  requested=1000  size=1056  call=<that call>
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..runtime.kinds import (
    AllocKind,
    Ending,
    Engine,
    HostEdge,
    ObjectKind,
    Pool,
    SyncKind,
    TaskKind,
)
from ..runtime.memory import MAX_DEVICES

FORMAT = "acltrace"
VERSION = 1

#: Largest time a trace may hold: 2**62 ns (146 years), so a difference of two times (or a
#: time plus a duration) never overflows int64.
MAX_NS = 1 << 62
#: Largest byte count or offset a trace may hold (4 EiB): sums of two stay inside int64.
MAX_BYTES = 1 << 62
#: ``hi`` of a column whose values are device numbers: below ``meta.device_count`` (or
#: ``MAX_DEVICES`` when the meta does not say), so views sized per device stay small.
DEVICES = "devices"


class Column(NamedTuple):
    """One column: name, ``array`` typecode and its value domain.

    ``ref`` names the table whose row numbers the values are (``-1`` allowed when ``null``);
    otherwise values lie in ``lo..hi`` (inclusive; ``hi`` may be ``DEVICES``) and, when
    ``members`` is set, are one of them. ``None`` bounds leave the storage type's range.
    """

    name: str
    code: str
    ref: str | None = None
    null: bool = True
    lo: int | None = None
    hi: int | str | None = None
    members: frozenset[int] | None = None


STR = "strings"


def ref(name: str, table: str, *, null: bool = True, code: str = "i") -> Column:
    """A column of row numbers of ``table`` (``-1`` = none unless ``null=False``)."""
    return Column(name, code, table, null=null and table != STR)


def enum(name: str, members: Iterable[int] | tuple[str, ...]) -> Column:
    """An int8 column holding an index into a name tuple, or one of the given numbers."""
    values = range(len(members)) if isinstance(members, tuple) else members
    got = frozenset(values)
    return Column(name, "b", lo=min(got), hi=max(got), members=got)


def flag(name: str) -> Column:
    """An int8 column holding 0 or 1."""
    return Column(name, "b", lo=0, hi=1)


def time(name: str, *, unset: bool = True) -> Column:
    """An int64 time in ns: ``0..MAX_NS``, or ``-1`` for "not yet" when ``unset``."""
    return Column(name, "q", lo=-1 if unset else 0, hi=MAX_NS)


def size(name: str) -> Column:
    """An int64 byte count or offset: ``0..MAX_BYTES``."""
    return Column(name, "q", lo=0, hi=MAX_BYTES)


def device(name: str, code: str = "i") -> Column:
    """A device number, or ``-1`` for none (host memory, host tasks)."""
    return Column(name, code, lo=-1, hi=DEVICES)


class Span(NamedTuple):
    """Columns ``start`` and ``length`` of ``table`` give rows ``start .. start + length`` of
    table ``into`` (``length`` may be 0): the whole range must lie in ``into``."""

    table: str
    start: str
    length: str
    into: str


class Meta(NamedTuple):
    """One meta entry the checks or views read: its type and (for ints) its bounds."""

    kind: type
    lo: int | None = None
    hi: int | None = None


# args.kind values
ARG_INT = 0
ARG_STR = 1
ARG_NONE = 2
ARG_FLOAT = 3
ARG_PTR = 4
ARG_OTHER = 5
ARG_BOOL = 6
PTR_SHIFT = 40
PTR_OFFSET_MASK = (1 << PTR_SHIFT) - 1
ARG_KINDS = ("int", "str", "none", "float", "ptr", "other", "bool")

#: diags.level values
LEVELS = ("note", "warning", "error", "fatal")

# The runtime owns the numbering of every kind below (``runtime.kinds``); these are the
# name tables the views print, indexed by the stored value.
#: tasks.kind names (``TaskKind``: "H2D", ..., "memset", "kernel", ...)
TASK_KINDS = TaskKind.labels()
#: tasks.engine names (``Engine``)
ENGINES = Engine.labels()
#: objects.kind values -> names (``ObjectKind``; its values have gaps)
OBJECT_KINDS = ObjectKind.label_map()
#: allocs.kind names (``AllocKind``)
ALLOC_KINDS = AllocKind.labels()
#: allocs.pool names (``Pool``)
POOLS = Pool.labels()
#: syncs.kind names (``SyncKind``)
SYNC_KINDS = SyncKind.labels()
#: host_edges.kind names (``HostEdge``)
HOST_EDGES = HostEdge.labels()
#: destroys.how / frees.how names (``Ending``)
HOW = Ending.labels()

#: A reference the recorder always fills (the row of the call that made an allocation, the
#: task a failure belongs to, ...) is declared ``null=False``: the checks index with it. Those
#: that may say "none" (a call outside any context, a task on no stream, an access or free of
#: memory the trace never saw allocated) keep ``-1``.
TABLES: dict[str, tuple[Column, ...]] = {
    "threads": (ref("name", STR), flag("acl")),
    "calls": (ref("name", STR), ref("thread", "threads", null=False), ref("ctx", "objects"),
              ref("file", STR), Column("line", "i"), time("start_ns", unset=False),
              time("end_ns"), Column("ret", "i"), Column("arg_start", "q", lo=0),
              Column("arg_count", "b", lo=0)),
    "args": (enum("kind", ARG_KINDS), Column("value", "q")),
    "objects": (enum("kind", OBJECT_KINDS), Column("handle", "q"), device("device"),
                ref("ctx", "objects"), Column("flags", "q"), ref("call", "calls", null=False),
                ref("label", STR)),
    "destroys": (ref("obj", "objects", null=False), ref("call", "calls", null=False),
                 enum("how", HOW)),
    "allocs": (enum("kind", ALLOC_KINDS), device("device"), Column("policy", "i"),
               enum("pool", POOLS), Column("addr", "q"), size("requested"), size("size"),
               size("reserved"), ref("call", "calls", null=False), ref("ctx", "objects")),
    "frees": (ref("alloc", "allocs"), ref("call", "calls", null=False), enum("how", HOW)),
    "tasks": (ref("call", "calls", null=False), ref("stream", "objects"), enum("kind", TASK_KINDS),
              enum("engine", ENGINES), device("device", "b"), time("submit_ns", unset=False),
              time("start_ns"), time("end_ns"), ref("event", "objects"), flag("pinned")),
    "accesses": (ref("task", "tasks", null=False), ref("alloc", "allocs"), size("offset"),
                 size("length"), flag("write")),
    "failures": (ref("task", "tasks", null=False), Column("code", "i"), ref("reason", STR)),
    # ``first``: offset in the allocation of the first never-written byte the task read,
    # so a check can tell a trailing run (rows past a partial batch) from holes.
    "uninit": (ref("task", "tasks", null=False), ref("alloc", "allocs"), size("bytes"),
               size("first")),
    "edges": (ref("record", "tasks", null=False), ref("wait", "tasks", null=False)),
    # what orders two host threads: the program's Thread.start/join, locks, events, queue
    # items, ... (``HostEdge``): everything of ``src``'s thread up to ``src`` happens before
    # ``dst`` in another thread
    "host_edges": (ref("src", "calls", null=False), ref("dst", "calls", null=False),
                   enum("kind", HOST_EDGES)),
    "syncs": (ref("call", "calls", null=False), enum("kind", SYNC_KINDS), Column("target", "i"),
              time("start_ns", unset=False), time("end_ns")),
    "callbacks": (ref("task", "tasks", null=False), ref("thread", "threads", null=False),
                  time("start_ns"), time("end_ns")),
    "diags": (ref("call", "calls", null=False), enum("level", LEVELS), ref("kind", STR),
              ref("message", STR)),
}

#: Tables a trace file written before they existed may lack (loaded as empty).
OPTIONAL_TABLES = frozenset({"host_edges"})

#: Row ranges one table's columns describe in another (checked without int64 overflow).
SPANS = (Span("calls", "arg_start", "arg_count", "args"),)

#: The meta entries with a fixed type: any other key may hold any JSON scalar. (The two
#: per-API count objects, ``dropped_calls`` and ``dropped_tasks``, are checked by the loader.)
META: dict[str, Meta] = {
    "profile": Meta(str), "soc": Meta(str), "device_count": Meta(int, 1, MAX_DEVICES),
    "virtual_time_ns": Meta(int, 0, MAX_NS), "trace_limit_bytes": Meta(int, 0, MAX_BYTES),
    "trace_bytes": Meta(int, 0, MAX_BYTES), "trace_peak_bytes": Meta(int, 0, MAX_BYTES),
    "dropped_first_file": Meta(str), "dropped_first_line": Meta(int),
    "dropped_task_first_file": Meta(str), "dropped_task_first_line": Meta(int),
    "dropped_tasks_after": Meta(int, 0), "task_keep_per_site": Meta(int, 0),
    "tasks_in_flight_at_peak": Meta(int, 0), "task_shedding_stopped": Meta(str),
    "schedule_seed": Meta(int, -(1 << 63), (1 << 63) - 1), "schedule_threads": Meta(int, 0),
    "schedule_switches": Meta(int, 0), "schedule_preemptions": Meta(int, 0),
}
