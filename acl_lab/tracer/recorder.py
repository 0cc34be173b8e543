"""The recorder: the runtime hooks' subscriber that appends to columnar tables.

Append-only packed rows (one ``struct.pack`` per row into a bytearray per table), names
interned as integer ids, nothing formatted until a view asks. Rows for calls and tasks are
appended when they start and completed in place when their end becomes known; ``freeze()``
copies everything into an immutable ``Trace``. The recorder never changes runtime state.

Memory bound (``Session(trace_limit_bytes=...)``, env ``ACL_LAB_TRACE_LIMIT_MB``, default
512 MiB). When the tables and strings reach three quarters of the limit the recorder starts
*shedding*: a call is then dropped at its end (its row and arguments taken back off the
tables) only when it succeeded, wrote no row to any other table while it ran (no allocation,
free, object, destroy, task, edge, sync, callback or diagnostic), has no pointer argument and
is not one the checks read by name. Everything the findings need is kept, whatever the limit.
Dropped calls are counted per API name in ``trace.meta["dropped_calls"]`` and reported by the
``trace_truncated`` finding. Call ids stay consistent: only the newest row is ever dropped, so
nothing refers to it, and runtime call ids map to rows (identity until shedding starts, then a
sorted array of the kept ids).
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from typing import Any

import numpy as np

from . import schema
from .schema import ARG_BOOL, ARG_FLOAT, ARG_INT, ARG_NONE, ARG_OTHER, ARG_PTR, ARG_STR, TABLES


class PackedTable:
    """An append-only table stored as packed little-endian rows in one bytearray.

    Appending a row is one ``struct.pack``; a row's later fields (an end time, a return
    code) can be completed in place with ``set``. ``columns()`` unpacks into numpy arrays.
    """

    __slots__ = ("buf", "dtype", "n", "name", "offsets", "pack", "size")

    def __init__(self, name: str) -> None:
        cols = TABLES[name]
        st = struct.Struct("<" + "".join(c.code for c in cols))
        self.name = name
        self.pack = st.pack
        self.size = st.size
        self.buf = bytearray()
        self.n = 0
        self.dtype = np.dtype([(c.name, "<" + _NP[c.code]) for c in cols])
        self.offsets = {c.name: self.dtype.fields[c.name][1] for c in cols}  # type: ignore[index]

    def append(self, *values: int) -> int:
        """Append one row; returns its row number."""
        self.buf += self.pack(*values)
        self.n += 1
        return self.n - 1

    def setter(self, *names: str) -> Any:
        """A function ``f(row, *values)`` writing adjacent columns ``names`` of one row."""
        codes = "".join(next(c.code for c in TABLES[self.name] if c.name == n) for n in names)
        st = struct.Struct("<" + codes)
        base = self.offsets[names[0]]
        size = self.size
        buf = self.buf
        pack_into = st.pack_into

        def set_fields(row: int, *values: int) -> None:
            pack_into(buf, row * size + base, *values)
        return set_fields

    def get(self, row: int, name: str) -> int:
        """One value (for the recorder's own lookups while recording)."""
        code = next(c.code for c in TABLES[self.name] if c.name == name)
        return int(struct.unpack_from("<" + code, self.buf, row * self.size
                                      + self.offsets[name])[0])

    def columns(self) -> dict[str, np.ndarray]:
        """Copy the rows out as one numpy array per column."""
        rows = np.frombuffer(bytes(self.buf), dtype=self.dtype)
        return {name: rows[name].astype(_NP_OUT[self.dtype.fields[name][0].char])  # type: ignore[index]
                for name in self.dtype.names or ()}


_NP = {"b": "i1", "i": "i4", "q": "i8"}
_NP_OUT = {"b": np.int8, "i": np.int32, "l": np.int64, "q": np.int64}

MiB = 1 << 20
#: The default memory bound of a trace (``ACL_LAB_TRACE_LIMIT_MB`` overrides it).
DEFAULT_TRACE_LIMIT_BYTES = 512 * MiB
#: Calls the checks read by name although they write no other row: never dropped.
KEEP_CALLS = frozenset({"acl.mdl.add_dataset_buffer"})
#: Rough cost of one interned string beyond its characters (list slot, dict entry, header).
STRING_OVERHEAD = 100
#: "Not shedding": every call id is below it.
_NEVER = 1 << 62
#: Tables that only the call itself writes (every other table's rows make a call needed).
_OWN_TABLES = ("calls", "args")


class Recorder:
    """Subscribes to a Session's hooks and records every event into packed tables."""

    def __init__(self, session: Any, limit_bytes: int = DEFAULT_TRACE_LIMIT_BYTES) -> None:
        if limit_bytes <= 0:
            raise ValueError("the trace limit must be a positive number of bytes")
        self.session = session
        self.strings: list[str] = []
        self._intern: dict[str, int] = {}
        self._string_bytes = 0
        self.tables: dict[str, PackedTable] = {t: PackedTable(t) for t in TABLES}
        #: The memory bound; shedding starts at three quarters of it.
        self.limit_bytes = limit_bytes
        self._shed_above = limit_bytes - limit_bytes // 4
        #: Call id at which ``on_call_begin`` looks at the bound again (0 while shedding).
        self._next_check = 0
        #: First call id recorded while shedding (``_NEVER`` before) and its row.
        self._shed_cid = _NEVER
        self._shed_row = 0
        #: Call ids of the rows from ``_shed_row`` on (sorted: calls begin in id order).
        self._row_cids = array("q")
        #: Droppable calls open while shedding: cid -> (name, row, args rows, strings, rows of
        #: the other tables) at the call's start.
        self._open: dict[int, tuple[str, int, int, int, int]] = {}
        self._others = [tab for name, tab in self.tables.items() if name not in _OWN_TABLES]
        #: Dropped calls per API name, and the site of the first one.
        self.dropped: dict[str, int] = {}
        self.first_dropped: tuple[str, int] | None = None
        t = self.tables
        self._calls = t["calls"]
        self._args = t["args"]
        self._tasks = t["tasks"]
        self._acc = t["accesses"]
        self._set_call_end = t["calls"].setter("end_ns", "ret")
        self._set_task_times = t["tasks"].setter("start_ns", "end_ns")
        self._arg_structs: dict[int, Any] = {}
        self._region_rows: dict[int, int] = {}
        self.meta: dict[str, Any] = {
            "profile": session.profile.name, "soc": session.profile.soc_name,
            "device_count": len(session.devices),
        }

    # --------------------------------------------------------------- helpers
    def s(self, text: str) -> int:
        """Intern a string; return its id."""
        i = self._intern.get(text)
        if i is None:
            i = len(self.strings)
            self._intern[text] = i
            self.strings.append(text)
            self._string_bytes += len(text) + STRING_OVERHEAD
        return i

    def row_of(self, cid: int) -> int:
        """The calls row of runtime call id ``cid`` (-1 for a dropped call)."""
        if cid < self._shed_cid:
            return cid
        rows = self._row_cids
        i = bisect_left(rows, cid)
        if i < len(rows) and rows[i] == cid:
            return self._shed_row + i
        return -1

    def call_site(self, cid: int) -> tuple[str, int]:
        """(file, line) of a recorded call."""
        calls = self._calls
        row = self.row_of(cid)
        if 0 <= row < calls.n:
            return self.strings[calls.get(row, "file")], calls.get(row, "line")
        return "", 0

    # --------------------------------------------------------------- memory bound
    @property
    def shedding(self) -> bool:
        """True once the trace reached the shedding threshold (three quarters of the limit)."""
        return self._shed_cid != _NEVER

    def footprint(self) -> int:
        """Bytes the trace holds: tables, the row map and (estimated) interned strings."""
        return self.nbytes() + self._string_bytes + len(self._row_cids) * 8

    def _other_rows(self) -> int:
        return sum(t.n for t in self._others)

    def _before_call(self, cid: int, name: str, ptrs: int) -> None:
        """Slow path of ``on_call_begin``: look at the bound, or note a call while shedding."""
        if cid < self._shed_cid:
            used = self.footprint()
            if used < self._shed_above:
                # Look again after a share of the room left (a call adds ~50-200 bytes).
                self._next_check = cid + max(1, (self._shed_above - used) >> 12)
                return
            self._shed_cid = cid
            self._shed_row = self._calls.n
            self._next_check = 0
        self._row_cids.append(cid)
        if not ptrs and name not in KEEP_CALLS:
            self._open[cid] = (name, self._calls.n, self._args.n, len(self.strings),
                               self._other_rows())

    def _end_shed_call(self, cid: int, end: int, ret: int) -> None:
        """Complete a call made while shedding; drop it when nothing needs it."""
        row = self.row_of(cid)
        if row >= 0:
            self._set_call_end(row, end, ret if -(1 << 31) <= ret < (1 << 31) else -1)
        opened = self._open.pop(cid, None)
        if opened is None or ret != 0:
            return
        name, row, arg_start, nstrings, others = opened
        calls, args = self._calls, self._args
        if row != calls.n - 1 or others != self._other_rows():
            return  # a later call's row follows it (and its args), or another row needs it
        if self.first_dropped is None:
            self.first_dropped = (self.strings[calls.get(row, "file")], calls.get(row, "line"))
        self.dropped[name] = self.dropped.get(name, 0) + 1
        del calls.buf[row * calls.size:]
        calls.n = row
        del args.buf[arg_start * args.size:]
        args.n = arg_start
        self._row_cids.pop()
        if len(self.strings) > nstrings:
            for text in self.strings[nstrings:]:
                del self._intern[text]
                self._string_bytes -= len(text) + STRING_OVERHEAD
            del self.strings[nstrings:]

    # --------------------------------------------------------------- hooks
    def on_thread(self, th: Any) -> None:
        self.tables["threads"].append(self.s(th.name), 1 if th.started_by_acl else 0)

    def on_call_begin(self, cid: int, name: str, thread: int, ctx: int, file: str, line: int,
                      start: int, args: tuple[Any, ...], ptrs: int) -> None:
        if cid >= self._next_check:
            self._before_call(cid, name, ptrs)
        intern = self._intern
        n = intern.get(name)
        if n is None:
            n = self.s(name)
        f = intern.get(file)
        if f is None:
            f = self.s(file)
        args_tab = self._args
        arg_start = args_tab.n
        nargs = len(args)
        if nargs:
            flat: list[int] = []
            for i, a in enumerate(args):
                if type(a) is int:
                    if ptrs >> i & 1 and a:
                        mem = self.session.memory
                        # A pointer into a freed allocation is recorded relative to it too:
                        # comparing the call with the free says "use after free".
                        r = mem.find(a) or mem.find_freed(a)
                        row = self._region_rows.get(r.id) if r is not None else None
                        if row is not None:
                            flat += (ARG_PTR, (row << schema.PTR_SHIFT) | (a - r.addr))
                            continue
                    if -(1 << 63) <= a < (1 << 63):
                        flat += (ARG_INT, a)
                    else:
                        flat += (ARG_OTHER, self.s(str(a)))
                else:
                    flat += self._encode(a)
            st = self._arg_structs.get(nargs)
            if st is None:
                st = self._arg_structs[nargs] = struct.Struct("<" + "bq" * nargs).pack
            args_tab.buf += st(*flat)
            args_tab.n += nargs
        self._calls.buf += self._calls.pack(n, thread, ctx, f, line, start, -1, 0, arg_start,
                                            min(nargs, 127))
        self._calls.n += 1

    def _encode(self, a: Any) -> tuple[int, int]:
        if a is None:
            return ARG_NONE, 0
        if type(a) is bool:
            return ARG_BOOL, int(a)
        if type(a) is str:
            return ARG_STR, self.s(a if len(a) <= 200 else a[:197] + "...")
        if type(a) is float:
            return ARG_FLOAT, self.s(repr(a))
        return ARG_OTHER, self.s(_short_repr(a))

    def on_call_end(self, cid: int, end: int, ret: int) -> None:
        if cid >= self._shed_cid:
            self._end_shed_call(cid, end, ret)
            return
        self._set_call_end(cid, end, ret if -(1 << 31) <= ret < (1 << 31) else -1)

    def on_object(self, oid: int, kind: int, handle: int, device: int, ctx: int, flags: int,
                  call: int, label: str) -> None:
        self.tables["objects"].append(kind, handle, device, ctx, flags, self.row_of(call),
                                      self.s(label))

    def on_destroy(self, oid: int, call: int, how: int) -> None:
        self.tables["destroys"].append(oid, self.row_of(call), how)

    def on_alloc(self, r: Any, call: int) -> None:
        # Every region is announced once; its allocs row is remembered for later references.
        self._region_rows[r.id] = self.tables["allocs"].append(
            r.kind, r.device, r.policy, r.pool, r.display_addr, r.requested, r.size,
            r.accounted, self.row_of(call), r.ctx)

    def alloc_row(self, region_id: int) -> int:
        """The allocs row of a runtime region id (-1 if it was never announced)."""
        return self._region_rows.get(region_id, -1)

    def on_free(self, r: Any, call: int, how: int) -> None:
        self.tables["frees"].append(self.alloc_row(r.id), self.row_of(call), how)

    def on_task(self, t: Any) -> None:
        stream = t.stream
        event = t.event
        tasks = self._tasks
        call = t.call
        if call >= self._shed_cid:
            call = self.row_of(call)
        tasks.buf += tasks.pack(call, stream.oid if stream is not None else -1, t.kind,
                                t.engine, t.device, t.submit, -1, -1,
                                event.oid if event is not None else -1, 1 if t.pinned else 0)
        tasks.n += 1
        acc = self._acc
        rows = self._region_rows
        for a in t.accesses:
            acc.buf += acc.pack(t.id, rows.get(a.region.id, -1), a.offset, a.length,
                                1 if a.write else 0)
            acc.n += 1

    def on_task_placed(self, t: Any) -> None:
        self._set_task_times(t.id, t.start, t.end)

    def on_task_status(self, t: Any) -> None:
        self.tables["failures"].append(t.id, t.status, self.s(t.reason))

    def on_uninit(self, t: Any, region: Any, nbytes: int) -> None:
        self.tables["uninit"].append(t.id, self.alloc_row(region.id), nbytes)

    def on_edge(self, record: int, wait: int) -> None:
        self.tables["edges"].append(record, wait)

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        self.tables["syncs"].append(self.row_of(call), kind, target, start, end)

    def on_callback(self, task: int, thread: int, start: int, end: int) -> None:
        self.tables["callbacks"].append(task, thread, start, end)

    def on_diag(self, call: int, level: int, kind: str, message: str) -> None:
        self.tables["diags"].append(self.row_of(call), level, self.s(kind), self.s(message))

    # --------------------------------------------------------------- output
    def nbytes(self) -> int:
        """Bytes held by the tables (the trace's in-memory size, strings excluded)."""
        return sum(len(t.buf) for t in self.tables.values())

    def freeze(self) -> Any:
        """An immutable Trace of everything recorded so far."""
        from .trace import Trace
        meta = dict(self.meta)
        meta["virtual_time_ns"] = max((t.clock for t in self.session.thread_list), default=0)
        if self.shedding:  # the bound was reached: say so (the trace_truncated finding)
            meta["trace_limit_bytes"] = self.limit_bytes
            meta["trace_bytes"] = self.footprint()
            if self.dropped:
                meta["dropped_calls"] = dict(sorted(self.dropped.items()))
            if self.first_dropped is not None:
                meta["dropped_first_file"], meta["dropped_first_line"] = self.first_dropped
        cols = {name: t.columns() for name, t in self.tables.items()}
        return Trace.from_columns(self.strings, cols, meta)


def _short_repr(obj: Any) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if callable(obj) and name:
        return f"<function {name}>"
    text = f"<{type(obj).__name__}>"
    if isinstance(obj, (list, tuple, dict)) and len(obj) <= 8:
        try:
            r = repr(obj)
        except Exception:
            return text
        return r if len(r) <= 120 else r[:117] + "..."
    return text
