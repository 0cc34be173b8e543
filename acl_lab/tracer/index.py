"""One index of derived views over a Trace, computed on first use and shared by the checks.

Several checks need the same things a trace does not store directly: a call's ``file:line``,
the string id of an API name, the decoded pointer arguments (allocation row and offset), which
call freed an allocation, the object row of a handle, the runtime's diagnostics of one kind,
how a thread is named. ``TraceIndex.of(trace)`` computes each of them once, when a check first
asks, and keeps it beside the trace: the trace itself stays immutable (the index never writes
a column, and views never see it), and the index refers to its trace weakly, so the cache never
keeps a trace alive.

Columns the index keeps are numpy arrays or ``array`` values (8 bytes a value), not lists of
Python ints: a million calls' file and line ids as lists would be tens of MB.
"""

from __future__ import annotations

import re
import weakref
from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .schema import ARG_INT, ARG_PTR, PTR_OFFSET_MASK, PTR_SHIFT

_MODEL_LOADED = re.compile(r"model (\d+) loaded")


def int_array(values: Any, small: bool = False) -> array[int]:
    """An int64 (``small``: int32) ``array`` of a numpy column or array: 8 (4) bytes a
    value, and a Python int only while one is read (a million calls' values as a list of
    Python ints would be tens of MB)."""
    out = array("i" if small else "q")
    data = np.ascontiguousarray(values, dtype=np.int32 if small else np.int64)
    out.frombytes(data.data.cast("B"))  # (a view of the data: no bytes copy in between)
    return out


@dataclass(frozen=True)
class PtrArgs:
    """Every pointer argument of the trace as three columns in argument order: the call that
    passed it, the allocation row it points into (int32 unless a table passes 2**31 rows)
    and the offset there (int64). Iterating
    gives ``(call, alloc, offset)`` tuples (two million of them as a list would hold hundreds
    of MB; vectorised checks read the columns)."""

    calls: np.ndarray
    allocs: np.ndarray
    offsets: np.ndarray

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return zip(int_array(self.calls), int_array(self.allocs), int_array(self.offsets),
                   strict=True)

    def __len__(self) -> int:
        return len(self.calls)


class TraceIndex:
    """Derived views of one trace, each computed when first read and kept (see the module)."""

    def __init__(self, trace: Any) -> None:
        self._trace_ref = weakref.ref(trace)
        self._diags: dict[str, list[tuple[int, int, str]]] = {}
        #: Results a check computes once per trace and others reuse (keyed by the check).
        self.memo: dict[str, Any] = {}

    @classmethod
    def of(cls, trace: Any) -> TraceIndex:
        """The index of ``trace``, made on the first call and shared by every later one."""
        ix = _INDEXES.get(trace)
        if ix is None:
            ix = _INDEXES[trace] = cls(trace)
        return ix

    @property
    def trace(self) -> Any:
        """The trace this index describes."""
        trace = self._trace_ref()
        assert trace is not None, "the trace of an index is gone"
        return trace

    # ------------------------------------------------------------------ strings and names
    @cached_property
    def string_ids(self) -> dict[str, int]:
        """Interned string -> its id (the first, should a string be interned twice)."""
        out: dict[str, int] = {}
        for i, s in enumerate(self.trace.strings):
            out.setdefault(s, i)
        return out

    def string_id(self, text: str) -> int | None:
        """The id of an interned string, or None when the trace never interned it."""
        return self.string_ids.get(text)

    def ids_of(self, names: Iterable[str]) -> dict[int, str]:
        """String id -> name for those of ``names`` the trace interned."""
        ids = self.string_ids
        return {ids[n]: n for n in names if n in ids}

    def call_name(self, cid: int) -> str:
        """The pyACL name of call ``cid``."""
        return str(self.trace.strings[self.names[cid]])

    @cached_property
    def names(self) -> array[int]:
        """calls.name as an int32 array (string ids; the column is int32)."""
        return int_array(self.trace.calls["name"], small=True)

    def calls_named(self, name: str) -> np.ndarray:
        """Ids of every call to ``name``, in call order."""
        sid = self.string_id(name)
        if sid is None:
            return np.zeros(0, dtype=np.int64)
        return np.nonzero(self.trace.calls["name"] == sid)[0]

    def ok_calls(self, name: str) -> np.ndarray:
        """Ids of the calls to ``name`` that succeeded."""
        ids = self.calls_named(name)
        return ids[self.trace.calls["ret"][ids] == 0] if len(ids) else ids

    def thread_name(self, thread: int) -> str:
        """How messages name a host thread: ``thread 1 (worker)``."""
        th = self.trace.threads
        if 0 <= thread < th.rows:
            return f"thread {thread} ({self.trace.strings[int(th['name'][thread])]})"
        return f"thread {thread}"

    # ------------------------------------------------------------------ call sites
    @cached_property
    def files(self) -> array[int]:
        """calls.file as an int32 array (string ids; the column is int32)."""
        return int_array(self.trace.calls["file"], small=True)

    @cached_property
    def lines(self) -> array[int]:
        """calls.line as an int32 array (the column is int32)."""
        return int_array(self.trace.calls["line"], small=True)

    def site(self, cid: int) -> tuple[str, int]:
        """(file, line) of call ``cid``; ``("", 0)`` for ``-1`` (no call)."""
        if cid < 0:
            return "", 0
        return self.trace.strings[self.files[cid]], self.lines[cid]

    def where(self, cid: int) -> str:
        """``file:line`` of call ``cid`` (the file alone when the line is unknown, 0: a C
        program without debug information, whose file is ``object(function+offset)``)."""
        file, line = self.site(cid)
        return f"{file}:{line}" if line else file

    # ------------------------------------------------------------------ arguments
    def _arg_range(self, cid: int) -> range:
        calls = self.trace.calls
        start = int(calls["arg_start"][cid])
        return range(start, start + int(calls["arg_count"][cid]))

    def call_ints(self, cid: int) -> list[int]:
        """The plain integer arguments of a call (handles, ids, sizes), in order."""
        kinds, vals = self.trace.args["kind"], self.trace.args["value"]
        return [int(vals[i]) for i in self._arg_range(cid) if int(kinds[i]) == ARG_INT]

    def call_ptrs(self, cid: int) -> list[tuple[int, int]]:
        """``(alloc row, offset)`` of every pointer argument of a call, in order."""
        kinds, vals = self.trace.args["kind"], self.trace.args["value"]
        return [(int(vals[i]) >> PTR_SHIFT, int(vals[i]) & PTR_OFFSET_MASK)
                for i in self._arg_range(cid) if int(kinds[i]) == ARG_PTR]

    @cached_property
    def ptr_args(self) -> PtrArgs:
        """Every pointer argument, decoded once (see ``PtrArgs``)."""
        t = self.trace
        kinds, values, starts = t.args["kind"], t.args["value"], t.calls["arg_start"]
        n = int(np.count_nonzero(kinds == ARG_PTR)) if t.calls.rows else 0
        # call and allocation rows fit int32 unless a table passes 2**31 rows; filled in
        # slices, so no whole-column temporaries (a million copies pass two million pointers)
        small = max(t.calls.rows, t.allocs.rows) < 1 << 31
        out = PtrArgs(np.empty(n, np.int32 if small else np.int64),
                      np.empty(n, np.int32 if small else np.int64), np.empty(n, np.int64))
        at, step = 0, 1 << 18
        for lo in range(0, len(kinds) if n else 0, step):
            rows = np.nonzero(kinds[lo:lo + step] == ARG_PTR)[0] + lo
            v = values[rows].astype(np.int64)
            end = at + len(rows)
            out.calls[at:end] = np.searchsorted(starts, rows, side="right") - 1
            out.allocs[at:end] = v >> PTR_SHIFT
            out.offsets[at:end] = v & PTR_OFFSET_MASK
            at = end
        return out

    # ------------------------------------------------------------------ memory
    @cached_property
    def alloc_calls(self) -> list[int]:
        """allocs.call as a list (the call that made each allocation)."""
        return list(self.trace.allocs["call"].tolist())

    @cached_property
    def alloc_kinds(self) -> list[int]:
        """allocs.kind as a list."""
        return list(self.trace.allocs["kind"].tolist())

    def alloc_call(self, alloc: int) -> int:
        """The call that made allocation row ``alloc``."""
        return self.alloc_calls[alloc]

    def alloc_kind(self, alloc: int) -> int:
        """allocs.kind of ``alloc``."""
        return self.alloc_kinds[alloc]

    @cached_property
    def freed_by(self) -> dict[int, int]:
        """Allocation row -> the call that first freed it explicitly (``frees.how == 0``)."""
        f = self.trace.frees
        out: dict[int, int] = {}
        for i, how, c in zip(f["alloc"].tolist(), f["how"].tolist(), f["call"].tolist(),
                             strict=True):
            if i >= 0 and how == 0:
                out.setdefault(i, c)
        return out

    # ------------------------------------------------------------------ objects
    @cached_property
    def handle_rows(self) -> dict[int, int]:
        """Object handle -> objects row (the last row, should a handle be reused)."""
        return {int(h): i for i, h in enumerate(self.trace.objects["handle"].tolist())}

    def objects_by_handle(self, kind: int) -> dict[int, list[tuple[int, int]]]:
        """Handle -> ``[(creating call, object row)]`` in creation order, for one kind."""
        key = f"objects_by_handle:{kind}"
        got = self.memo.get(key)
        if got is None:
            o = self.trace.objects
            got = defaultdict(list)
            for i in np.nonzero(o["kind"] == kind)[0].tolist():
                got[int(o["handle"][i])].append((int(o["call"][i]), i))
            self.memo[key] = got
        out: dict[int, list[tuple[int, int]]] = got
        return out

    # ------------------------------------------------------------------ streams
    @cached_property
    def stream_tasks(self) -> dict[int, np.ndarray]:
        """Stream (its objects row) -> the ids of its tasks in queue order (ascending: a
        stream runs its tasks first-in first-out)."""
        stream = self.trace.tasks["stream"]
        rows = np.nonzero(stream >= 0)[0]
        order = rows[np.argsort(stream[rows], kind="stable")]
        keys = stream[order]
        cuts = np.nonzero(np.diff(keys))[0] + 1
        return {int(stream[part[0]]): part for part in np.split(order, cuts) if len(part)}

    # ------------------------------------------------------------------ diagnostics
    def diags_of(self, kind: str) -> list[tuple[int, int, str]]:
        """``(call, level, message)`` of every runtime diagnostic of ``kind``, in trace
        order."""
        got = self._diags.get(kind)
        if got is None:
            dg, sid = self.trace.diags, self.string_id(kind)
            strings = self.trace.strings
            got = [] if sid is None else [
                (int(dg["call"][j]), int(dg["level"][j]), strings[int(dg["message"][j])])
                for j in np.nonzero(dg["kind"] == sid)[0].tolist()]
            self._diags[kind] = got
        return got

    @cached_property
    def model_loads(self) -> dict[int, int]:
        """Model id -> the call that loaded it (from the runtime's ``model_loaded`` notes)."""
        out: dict[int, int] = {}
        for cid, _level, text in self.diags_of("model_loaded"):
            m = _MODEL_LOADED.match(text)
            if m:
                out[int(m.group(1))] = cid
        return out


#: The index of each live trace (weak keys: an index never keeps its trace alive).
_INDEXES: weakref.WeakKeyDictionary[Any, TraceIndex] = weakref.WeakKeyDictionary()
