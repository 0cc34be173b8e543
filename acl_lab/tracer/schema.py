"""The trace schema: tables, their columns, storage types and what each id refers to.

One place defines the shape of a trace; the recorder appends to it, ``Trace`` freezes it and
``Trace.load`` validates files against it. Times are integer nanoseconds (``*_ns``), sizes are
bytes. Id columns hold row numbers of another table; ``-1`` means "none".

Before/after for one ``acl.rt.malloc(1000, 0)`` call::

    calls:  name=acl.rt.malloc  thread=0  file=prog.py  line=12  start_ns=..  ret=0
    args:   (int 1000) (int 0)
    allocs: kind=device  pool=normal  requested=1000  size=1056  call=<that call>
"""

from __future__ import annotations

from typing import NamedTuple

from ..runtime.objects import OBJ_KIND_NAMES

FORMAT = "acltrace"
VERSION = 1


class Column(NamedTuple):
    """One column: name, ``array`` typecode and the table its values point into (if any)."""

    name: str
    code: str
    ref: str | None = None


STR = "strings"

TABLES: dict[str, tuple[Column, ...]] = {
    "threads": (Column("name", "i", STR), Column("acl", "b")),
    "calls": (Column("name", "i", STR), Column("thread", "i", "threads"),
              Column("ctx", "i", "objects"), Column("file", "i", STR), Column("line", "i"),
              Column("start_ns", "q"), Column("end_ns", "q"), Column("ret", "i"),
              Column("arg_start", "q"), Column("arg_count", "b")),
    "args": (Column("kind", "b"), Column("value", "q")),
    "objects": (Column("kind", "b"), Column("handle", "q"), Column("device", "i"),
                Column("ctx", "i", "objects"), Column("flags", "q"),
                Column("call", "i", "calls"), Column("label", "i", STR)),
    "destroys": (Column("obj", "i", "objects"), Column("call", "i", "calls"),
                 Column("how", "b")),
    "allocs": (Column("kind", "b"), Column("device", "i"), Column("policy", "i"),
               Column("pool", "b"), Column("addr", "q"), Column("requested", "q"),
               Column("size", "q"), Column("reserved", "q"), Column("call", "i", "calls"),
               Column("ctx", "i", "objects")),
    "frees": (Column("alloc", "i", "allocs"), Column("call", "i", "calls"), Column("how", "b")),
    "tasks": (Column("call", "i", "calls"), Column("stream", "i", "objects"),
              Column("kind", "b"), Column("engine", "b"), Column("device", "b"),
              Column("submit_ns", "q"), Column("start_ns", "q"), Column("end_ns", "q"),
              Column("event", "i", "objects"), Column("pinned", "b")),
    "accesses": (Column("task", "i", "tasks"), Column("alloc", "i", "allocs"),
                 Column("offset", "q"), Column("length", "q"), Column("write", "b")),
    "failures": (Column("task", "i", "tasks"), Column("code", "i"),
                 Column("reason", "i", STR)),
    "uninit": (Column("task", "i", "tasks"), Column("alloc", "i", "allocs"),
               Column("bytes", "q")),
    "edges": (Column("record", "i", "tasks"), Column("wait", "i", "tasks")),
    "syncs": (Column("call", "i", "calls"), Column("kind", "b"), Column("target", "i"),
              Column("start_ns", "q"), Column("end_ns", "q")),
    "callbacks": (Column("task", "i", "tasks"), Column("thread", "i", "threads"),
                  Column("start_ns", "q"), Column("end_ns", "q")),
    "diags": (Column("call", "i", "calls"), Column("level", "b"), Column("kind", "i", STR),
              Column("message", "i", STR)),
}

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

#: diags.level values
LEVELS = ("note", "warning", "error", "fatal")

#: tasks.kind names (runtime.scheduler.TaskKind)
TASK_KINDS = ("H2D", "D2H", "D2D", "H2H", "memset", "kernel", "model", "event_record",
              "event_wait", "event_reset", "callback", "dvpp")
ENGINES = ("none", "copy_h2d", "copy_d2h", "copy_d2d", "aicore", "dvpp", "host")
#: objects.kind values -> names (the runtime owns the numbering)
OBJECT_KINDS = OBJ_KIND_NAMES
ALLOC_KINDS = ("device", "host_pinned", "dvpp", "host_pageable")
POOLS = ("normal", "huge", "huge1g", "dvpp", "host")
SYNC_KINDS = ("stream", "device", "event", "report", "join")
HOW = ("explicit", "reclaimed")
