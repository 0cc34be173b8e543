"""The recorder: the runtime hooks' subscriber that appends to columnar tables.

Append-only packed rows (one ``struct.pack`` per row into a bytearray per table), names
interned as integer ids, nothing formatted until a view asks. Rows for calls and tasks are
appended when they start and completed in place when their end becomes known; ``freeze()``
copies everything into an immutable ``Trace``. The recorder never changes runtime state.

Memory bound (``Session(trace_limit_bytes=...)``, env ``ACL_LAB_TRACE_LIMIT_MB``, default
512 MiB). When the tables and strings reach three quarters of the limit the recorder starts
*shedding*; below that point nothing differs from an unbounded trace.

* Calls: a call is dropped at its end (its row and arguments taken back off the tables) when
  it succeeded, wrote no row to any other table while it ran (no allocation, free, object,
  destroy, task, edge, sync, callback or diagnostic), has no pointer argument and is not one
  the checks read by name. Only the newest row is dropped this way, so nothing refers to it.
* Tasks (``_TaskShedder``): once a task has finished (its data effects applied) the recorder
  decides whether to keep it. It keeps every task that failed, read uninitialised bytes,
  touched memory that is already freed (a free in flight), that a kept event wait refers to,
  the first ``TASK_KEEP_PER_SITE`` tasks of each signature (stream, kind, call site, the
  allocation sites it touches and whether it writes them: findings are grouped by site, so
  every site keeps instances; a new signature makes the signatures sharing an allocation
  site keep that many again, so a race between a new site and an old one keeps both), and
  every event wait that brings its stream ordering the stream did not already have (vector
  clocks over the kept tasks, so leaving a task out never removes a happens-before path
  between kept tasks: no false race). Left-out tasks take their access rows, their event
  edge and, when nothing else refers to it, the call that queued them; a host wait
  (synchronize_*) that told the host thread nothing new goes with its sync rows the same
  way. Rows left out in the middle of a table are removed in batches (``_compact``), and the
  references past them renumbered. Task shedding needs the order of one host thread: it
  stops (every later task kept) once a second thread, a host callback or a wait whose target
  the trace cannot name appears.

Everything a finding needs is kept, whatever the limit. Dropped calls and tasks are counted
per API name in ``trace.meta["dropped_calls"]`` / ``["dropped_tasks"]`` and reported by the
``trace_truncated`` finding. Ids stay consistent: runtime call and task ids map to rows
(identity until shedding starts, then a sorted array of the kept ids, see ``row_of`` and
``task_row``).
"""

from __future__ import annotations

import struct
from array import array
from bisect import bisect_left
from collections import deque
from operator import attrgetter
from typing import Any

import numpy as np

from . import schema
from .schema import (
    ARG_BOOL,
    ARG_FLOAT,
    ARG_INT,
    ARG_NONE,
    ARG_OTHER,
    ARG_PTR,
    ARG_STR,
    TABLES,
    TASK_KINDS,
)
from .sites import cell_name
from .sources import SOURCE_LINES, capture


class PackedTable:
    """An append-only table stored as packed little-endian rows in one bytearray.

    Appending a row is one ``struct.pack``; a row's later fields (an end time, a return
    code) can be completed in place with ``set``. ``columns()`` unpacks into numpy arrays.
    """

    __slots__ = ("buf", "dtype", "getters", "n", "name", "offsets", "pack", "size")

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
        self.getters = {c.name: (struct.Struct("<" + c.code).unpack_from, self.offsets[c.name])
                        for c in cols}

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
        unpack, offset = self.getters[name]
        return int(unpack(self.buf, row * self.size + offset)[0])

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
_ROWS = attrgetter("n")
#: "Not shedding": every call id is below it.
_NEVER = 1 << 62
#: Tables that only the call itself writes (every other table's rows make a call needed).
_OWN_TABLES = ("calls", "args")
#: While shedding, the first this many tasks of each signature (stream, kind, call site,
#: allocation sites touched, read/write) are kept; later ones may be left out.
TASK_KEEP_PER_SITE = 4
#: Rows left out of the middle of the tables are removed once the trace reaches this share
#: of its limit (in sixteenths) ...
_COMPACT_AT = 14
#: ... and at least this share of the limit (1/n) is waiting to be removed.
_COMPACT_MIN = 32


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
        self._bufs = [tab.buf for tab in self.tables.values()]  # (never replaced, only resized)
        #: Dropped calls per API name, and the site of the first one.
        self.dropped: dict[str, int] = {}
        self.first_dropped: tuple[str, int] | None = None
        #: Task shedding (``_TaskShedder``): None until shedding starts. From then on task ids
        #: map to rows like call ids: identity below ``_tshed_tid``, ``_row_tids`` above.
        self._ts: _TaskShedder | None = None
        self._tshed_tid = _NEVER
        self._tshed_row = 0
        self._row_tids = array("q")
        #: Row counts of every table when shedding started (rows before are never removed).
        self._zone: dict[str, int] = {}
        self._compact_above = limit_bytes // 16 * _COMPACT_AT
        self._compact_min = max(1, limit_bytes // _COMPACT_MIN)
        self._next_compact = 0
        #: Calls made while shedding with a pointer into freed memory (never dropped).
        self._freed_ptr_calls: set[int] = set()
        #: recorded file -> the name shown for it (a notebook cell's temporary file: the cell).
        self._shown_files: dict[str, str] = {}
        #: (call id, (file id, line)) of the newest call while shedding.
        self._call_site: tuple[int, tuple[int, int]] = (-1, (-1, 0))
        #: Largest footprint seen at a compaction check, and the tasks undecided then.
        self._peak_over: tuple[int, int] = (0, 0)
        #: Dropped tasks per API name, and the first one (task id, site).
        self.dropped_tasks: dict[str, int] = {}
        self._first_dropped_task: tuple[int, str, int] | None = None
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
        n = len(rows)
        if n and rows[n - 1] == cid:  # the newest call (the usual question while shedding)
            return self._shed_row + n - 1
        i = bisect_left(rows, cid)
        if i < n and rows[i] == cid:
            return self._shed_row + i
        return -1

    def task_row(self, tid: int) -> int:
        """The tasks row of runtime task id ``tid`` (-1 for a dropped task)."""
        if tid < self._tshed_tid:
            return tid
        rows = self._row_tids
        n = len(rows)
        if n and rows[n - 1] == tid:
            return self._tshed_row + n - 1
        i = bisect_left(rows, tid)
        if i < n and rows[i] == tid:
            return self._tshed_row + i
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
        """Bytes the trace holds: tables, the row maps and (estimated) interned strings."""
        return (self.nbytes() + self._string_bytes + len(self._row_cids) * 8
                + len(self._row_tids) * 8)

    def _other_rows(self) -> int:
        return sum(map(_ROWS, self._others))

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
            self._start_task_shedding()
        elif cid >= self._next_compact and self._ts is not None:
            self._maybe_compact(cid)
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

    def _start_task_shedding(self) -> None:
        """Shedding starts: remember where the tables stand and start deciding on tasks."""
        self._zone = {name: tab.n for name, tab in self.tables.items()}
        self._tshed_tid = self._tshed_row = self._tasks.n
        self._ts = _TaskShedder(self)

    def _maybe_compact(self, cid: int) -> None:
        """Remove left-out rows when the trace nears its limit (checked every few calls), and
        note the largest footprint seen."""
        ts = self._ts
        assert ts is not None
        used = self.footprint()
        if used >= self._compact_above and ts.dead_bytes and (
                ts.dead_bytes >= self._compact_min or used > self.limit_bytes):
            self._compact()
            used = self.footprint()
        if used > self._peak_over[0]:
            self._peak_over = (used, len(ts.info))
        room = self._compact_above - used
        # A call adds ~50-600 bytes: look again before the room left could be used up, or
        # once a worthwhile amount of rows could be waiting to be removed.
        self._next_compact = cid + max(1, (room if room > 0 else self._compact_min) >> 10)

    def _zone_rows(self, name: str) -> np.ndarray:
        """A writable copy of the rows of table ``name`` recorded since shedding started."""
        tab = self.tables[name]
        return np.frombuffer(tab.buf, dtype=tab.dtype,
                             offset=self._zone[name] * tab.size).copy()

    def _put_zone_rows(self, name: str, rows: np.ndarray) -> None:
        """Replace the rows of table ``name`` recorded since shedding started."""
        tab = self.tables[name]
        zs = self._zone[name]
        tab.buf[zs * tab.size:] = rows.tobytes()
        tab.n = zs + len(rows)

    def _compact(self) -> None:
        """Take the rows of left-out tasks and calls off the tables, with the access, edge and
        argument rows only they own, and renumber the references that point past them.

        A safety net first: a task still named by a failure, uninit, callback row or an edge
        whose wait stays, and a call still named by any kept row, are kept after all.
        """
        ts = self._ts
        assert ts is not None
        z = self._zone
        zt, zc, za = z["tasks"], z["calls"], z["args"]
        rows = {name: self._zone_rows(name) for name in self.tables}
        tids = np.array(self._row_tids, dtype=np.int64)
        tdead = np.isin(tids, np.array(ts.dead_tids, dtype=np.int64))
        for name in ("failures", "uninit", "callbacks"):
            ref = rows[name]["task"].astype(np.int64)
            tdead[ref[ref >= zt] - zt] = False
        ed = rows["edges"]
        rec, wait = ed["record"].astype(np.int64), ed["wait"].astype(np.int64)
        w_in, r_in = wait >= zt, rec >= zt
        w_dead = np.zeros(len(wait), dtype=bool)
        w_dead[w_in] = tdead[wait[w_in] - zt]
        tdead[rec[r_in & ~w_dead] - zt] = False  # a kept wait keeps its record
        r_dead = np.zeros(len(rec), dtype=bool)
        r_dead[r_in] = tdead[rec[r_in] - zt]
        tkeep = ~tdead
        a_task = rows["accesses"]["task"].astype(np.int64)
        akeep = np.ones(len(a_task), dtype=bool)
        m = a_task >= zt
        akeep[m] = tkeep[a_task[m] - zt]
        cids = np.array(self._row_cids, dtype=np.int64)
        cdead = np.isin(cids, np.array(ts.dead_cids, dtype=np.int64))
        quiet = np.array(ts.dead_sync_cids, dtype=np.int64)
        pos = np.searchsorted(cids, quiet)
        pos = pos[(pos < len(cids)) & (cids[np.minimum(pos, len(cids) - 1)] == quiet)]
        skeep = ~np.isin(rows["syncs"]["call"], zc + pos)
        for name, tab_rows in rows.items():
            for col in TABLES[name]:
                if col.ref == "calls":
                    ref = tab_rows[col.name].astype(np.int64)
                    if name == "tasks":
                        ref = ref[tkeep]
                    elif name == "syncs":
                        ref = ref[skeep]
                    cdead[ref[ref >= zc] - zc] = False
        ckeep = ~cdead
        cr = rows["calls"]
        argkeep = np.ones(len(rows["args"]), dtype=bool)
        d = np.nonzero(cdead)[0]
        if len(d):
            starts = cr["arg_start"][d].astype(np.int64) - za
            counts = cr["arg_count"][d].astype(np.int64)
            argkeep[np.repeat(starts - np.cumsum(counts) + counts, counts)
                    + np.arange(int(counts.sum()))] = False
        self._count_dropped(rows, tids[tdead], cids[cdead], tdead)
        keeps = {"tasks": tkeep, "calls": ckeep, "accesses": akeep, "args": argkeep,
                 "edges": ~(w_dead | r_dead), "syncs": skeep}
        targets = {"calls": (zc, ckeep), "tasks": (zt, tkeep)}
        for name, tab_rows in rows.items():
            keep = keeps.get(name)
            changed = keep is not None and not keep.all()
            for col in TABLES[name]:
                tgt = targets.get(col.ref or "")
                if tgt is not None and not tgt[1].all():
                    tab_rows[col.name] = _renumber(tab_rows[col.name], *tgt)
                    changed = True
            if name == "calls" and not argkeep.all():
                tab_rows["arg_start"] = _renumber(tab_rows["arg_start"], za, argkeep)
                changed = True
            if changed:
                self._put_zone_rows(name, tab_rows if keep is None else tab_rows[keep])
        self._row_tids = array("q", tids[tkeep].tobytes())
        self._row_cids = array("q", cids[ckeep].tobytes())
        ts.dead_tids.clear()
        ts.dead_cids.clear()
        ts.dead_sync_cids.clear()
        ts.dead_bytes = 0
        self._open.clear()  # their saved row numbers are stale: keep those calls
        self._freed_ptr_calls.intersection_update(ts.call_tasks)

    def _count_dropped(self, rows: dict[str, np.ndarray], tids: np.ndarray,
                       cids: np.ndarray, tdead: np.ndarray) -> None:
        """Count the tasks and calls ``_compact`` is about to remove, per API name."""
        zc = self._zone["calls"]
        cr = rows["calls"]
        get = self._calls.get

        def field(row: int, name: str) -> int:
            return int(cr[name][row - zc]) if row >= zc else get(row, name)

        task_calls = rows["tasks"]["call"][tdead].astype(np.int64)
        if len(task_calls):
            zone = task_calls >= zc
            names = np.empty(len(task_calls), dtype=np.int64)
            names[zone] = cr["name"][task_calls[zone] - zc]
            names[~zone] = [field(int(r), "name") if r >= 0 else -1
                            for r in task_calls[~zone]]
            for sid, n in zip(*np.unique(names, return_counts=True), strict=True):
                api = self.strings[int(sid)] if sid >= 0 else "?"
                self.dropped_tasks[api] = self.dropped_tasks.get(api, 0) + int(n)
            i = int(np.argmin(tids))
            first = self._first_dropped_task
            if first is None or int(tids[i]) < first[0]:
                row = int(task_calls[i])
                site = (self.strings[field(row, "file")], field(row, "line")) if row >= 0 \
                    else ("", 0)
                self._first_dropped_task = (int(tids[i]), *site)
        if len(cids):
            rows_of = np.searchsorted(np.array(self._row_cids, dtype=np.int64), cids)
            for sid, n in zip(*np.unique(cr["name"][rows_of], return_counts=True), strict=True):
                api = self.strings[int(sid)]
                self.dropped[api] = self.dropped.get(api, 0) + int(n)
            if self.first_dropped is None:
                r = int(rows_of[0])
                self.first_dropped = (self.strings[int(cr["file"][r])], int(cr["line"][r]))

    # --------------------------------------------------------------- hooks
    def on_thread(self, th: Any) -> None:
        if self._ts is not None:
            self._ts.stop("the program uses several host threads")
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
            # a notebook cell's temporary file is recorded as the cell (``cell In[5]``)
            shown = self._shown_files.get(file)
            if shown is None:
                shown = self._shown_files[file] = cell_name(file)
            f = self.s(shown)
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
                        r = mem.find(a)
                        if not r:
                            r = mem.find_freed(a)
                            if r is not None and cid >= self._shed_cid:
                                self._freed_ptr_calls.add(cid)  # never dropped
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
        if cid >= self._shed_cid:
            self._call_site = (cid, (f, line))  # the site of the tasks this call queues

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
            ts = self._ts
            if ts is not None and not ts.off:
                ts.on_call_end(cid, ret)
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
        if self._ts is not None:
            self._ts.alloc_sites.pop(r.id, None)
        self.tables["frees"].append(self.alloc_row(r.id), self.row_of(call), how)

    def on_task(self, t: Any) -> None:
        if self._ts is not None:
            self._on_task_shedding(t)
            return
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

    def _on_task_shedding(self, t: Any) -> None:
        """``on_task`` while shedding: rows through the task id map, then the decision."""
        stream = t.stream
        event = t.event
        tasks = self._tasks
        row = tasks.n
        tasks.buf += tasks.pack(self.row_of(t.call), stream.oid if stream is not None else -1,
                                t.kind, t.engine, t.device, t.submit, -1, -1,
                                event.oid if event is not None else -1, 1 if t.pinned else 0)
        tasks.n += 1
        self._row_tids.append(t.id)
        acc = self._acc
        rows = self._region_rows
        for a in t.accesses:
            acc.buf += acc.pack(row, rows.get(a.region.id, -1), a.offset, a.length,
                                1 if a.write else 0)
            acc.n += 1
        ts = self._ts
        if ts is not None and not ts.off:
            ts.on_task(t)

    def on_task_placed(self, t: Any) -> None:
        ts = self._ts
        if ts is None:
            self._set_task_times(t.id, t.start, t.end)
            return
        self._set_task_times(self.task_row(t.id), t.start, t.end)
        if not ts.off and t.kind == _WAIT:
            ts.placed(t)

    def on_task_status(self, t: Any) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.needed.add(t.id)
            if t.kind == _WAIT:
                ts.placed(t)  # a wait that never runs will not be placed: stop waiting for it
        self.tables["failures"].append(self.task_row(t.id), t.status, self.s(t.reason))

    def on_uninit(self, t: Any, region: Any, nbytes: int, first: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.needed.add(t.id)
        self.tables["uninit"].append(self.task_row(t.id), self.alloc_row(region.id), nbytes,
                                     first)

    def on_edge(self, record: int, wait: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.edge(record, wait)
        self.tables["edges"].append(self.task_row(record), self.task_row(wait))

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.syncs.append((call, kind, target))
        self.tables["syncs"].append(self.row_of(call), kind, target, start, end)

    def on_callback(self, task: int, thread: int, start: int, end: int) -> None:
        if self._ts is not None:
            self._ts.stop("the program uses host callbacks")
        self.tables["callbacks"].append(self.task_row(task), thread, start, end)

    def on_diag(self, call: int, level: int, kind: str, message: str) -> None:
        self.tables["diags"].append(self.row_of(call), level, self.s(kind), self.s(message))

    # --------------------------------------------------------------- output
    def nbytes(self) -> int:
        """Bytes held by the tables (the trace's in-memory size, strings excluded)."""
        return sum(map(len, self._bufs))

    def freeze(self) -> Any:
        """An immutable Trace of everything recorded so far."""
        from .trace import Trace
        meta = dict(self.meta)
        meta["virtual_time_ns"] = max((t.clock for t in self.session.thread_list), default=0)
        ts = self._ts
        if ts is not None and ts.dead_bytes:
            self._compact()
        if self.shedding:  # the bound was reached: say so (the trace_truncated finding)
            meta["trace_limit_bytes"] = self.limit_bytes
            meta["trace_bytes"] = used = self.footprint()
            if self.dropped:
                meta["dropped_calls"] = dict(sorted(self.dropped.items()))
            if self.first_dropped is not None:
                meta["dropped_first_file"], meta["dropped_first_line"] = self.first_dropped
            if self.dropped_tasks and self._first_dropped_task is not None:
                meta["dropped_tasks"] = dict(sorted(self.dropped_tasks.items()))
                tid, file, line = self._first_dropped_task
                meta["dropped_tasks_after"] = bisect_left(self._row_tids, tid) + self._tshed_row
                meta["dropped_task_first_file"], meta["dropped_task_first_line"] = file, line
                meta["task_keep_per_site"] = TASK_KEEP_PER_SITE
            if ts is not None and ts.off and used > self.limit_bytes:
                meta["task_shedding_stopped"] = ts.off
            peak, in_flight = self._peak_over
            if peak > self.limit_bytes and in_flight:
                meta["trace_peak_bytes"] = peak
                meta["tasks_in_flight_at_peak"] = in_flight
        cols = {name: t.columns() for name, t in self.tables.items()}
        # the cited lines' text, so the trace shows them from any folder (sources.py)
        meta[SOURCE_LINES] = capture(self.strings, cols["calls"]["file"], cols["calls"]["line"])
        return Trace.from_columns(self.strings, cols, meta)


_K = {name: i for i, name in enumerate(TASK_KINDS)}
_RECORD, _WAIT, _RESET, _CALLBACK = (_K["event_record"], _K["event_wait"], _K["event_reset"],
                                     _K["callback"])
#: syncs.kind values (runtime SYNC_*) and the return codes of a wait that timed out.
_SYNC_STREAM, _SYNC_DEVICE, _SYNC_EVENT, _SYNC_REPORT = 0, 1, 2, 3
_TIMEOUTS = (507046, 507047)
#: Knowledge key of the host thread's own timeline (the race check's ``-1 - thread``).
_HOST = -1

#: What a point of the program is known to come after, as the race check will see it:
#: timeline key -> the latest *kept* task with memory accesses on that timeline. Streams are
#: keyed by object id, the host thread by ``_HOST``; tuple keys are tokens for what happened
#: before shedding started (all of it kept): ``("thread",)``, ``("stream", oid)``,
#: ``("task", id)``. Clocks are shared, never changed once made.
Know = dict[Any, int]
#: A task's signature (stream, kind, call site, (allocation site, write) per access) and the
#: newest epoch of the allocation sites it touches when it was queued.
Sig = tuple[tuple[Any, ...], int]


def _join(a: Know, b: Know) -> Know:
    """Everything ``a`` or ``b`` knows (``a`` itself when ``b`` adds nothing)."""
    if not b or a is b:
        return a
    if not a:
        return b
    out: Know | None = None
    get = a.get
    for k, v in b.items():
        if get(k, -1) < v:
            if out is None:
                out = dict(a)
            out[k] = v
    return a if out is None else out


def _covers(a: Know, b: Know) -> bool:
    """Does ``a`` know everything ``b`` knows?"""
    get = a.get
    return all(get(k, -1) >= v for k, v in b.items())


class _TaskShedder:
    """Decides, while shedding, which finished tasks can be left out of the trace.

    Why leaving a task out never makes the race check report a false race: the check orders
    two kept accesses when a happens-before path joins them. With one host thread, a path
    through a left-out task T on stream S runs (a) along S, (b) from T's submitting call, or
    (c) from the event record a left-out wait waited for. (a) still holds between the kept
    tasks around T (stream order by id). (b) is the host thread's program order, which every
    later call, sync and task submission of that thread carries anyway. (c) is the one thing
    only the wait carries, so a wait is left out only when its record's clock adds nothing to
    what its stream and the thread already knew (``_covers``); a record is left out only when
    no kept wait refers to it, no later wait can (a newer record exists, every wait is
    placed), and a host sync that resolved to it finds the same knowledge at the previous
    kept record; a host sync is left out only when it adds nothing to what the thread knew.
    The clocks here mirror ``checks.ordering``: stream order, submission, event edges,
    stream/device/event syncs and host tasks. Anything they cannot follow (a second thread,
    callbacks, a drain whose streams the trace does not name) stops task shedding: from then
    on every task is kept, which is always safe.

    What can be missed (and the ``trace_truncated`` warning says so): a race whose two
    accesses are both at sites already kept ``TASK_KEEP_PER_SITE`` times (since the last new
    signature on their allocation sites), and a race whose *earlier* access is an instance of
    an old site left out before the new site appeared.
    """

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec
        self.session = rec.session
        #: Why task shedding stopped ("" while it runs).
        self.off = ""
        #: Kept tasks per signature.
        self.kept: dict[tuple[Any, ...], tuple[int, int]] = {}
        #: Signatures seen, and per allocation site the newest "epoch": a new signature that
        #: touches a site starts one, and every signature touching that site then keeps its
        #: first tasks again (a race needs both of its sites kept, the new one's partner too).
        self.seen: set[tuple[Any, ...]] = set()
        self.site_epoch: dict[tuple[int, int], int] = {}
        self.epoch = 0
        #: Undecided stream tasks per stream (in id order), and host tasks of the open call.
        self.pending: dict[int, deque[Any]] = {}
        self.host: list[Any] = []
        #: Undecided task id -> (the thread's clock when it was queued, signature).
        self.info: dict[int, tuple[Know, Sig]] = {}
        #: Stream -> clock after its last decided task.
        self.tail: dict[int, Know] = {}
        self.thr: Know = {("thread",): 1}
        #: Event record/reset ids whose clock is known -> that clock (until decided).
        self.rec_k: dict[int, Know] = {}
        #: Undecided wait -> the record its edge names; record -> undecided waits on it.
        self.edge_of: dict[int, int] = {}
        self.waits_on: dict[int, int] = {}
        #: Tasks that must stay: failed, read uninitialised bytes, named by a kept wait.
        self.needed: set[int] = set()
        #: Records an event sync resolved to.
        self.synced: set[int] = set()
        #: Event -> ids of its waits not placed yet; its records/resets awaiting a row decision;
        #: the clock of its latest kept record.
        self.unplaced: dict[int, set[int]] = {}
        self.ev_queue: dict[int, deque[Any]] = {}
        self.ev_kept: dict[int, Know] = {}
        #: Call id -> [undecided tasks, kept tasks]; its return code once it ended.
        self.call_tasks: dict[int, list[int]] = {}
        self.call_ret: dict[int, int] = {}
        #: Something an event row decision waits for changed (see ``_event_rows``).
        self.ev_dirty = False
        #: Syncs of the open call: (call, kind, target).
        self.syncs: list[tuple[int, int, int]] = []
        self.alloc_sites: dict[int, tuple[int, int]] = {}
        self._site: tuple[int, tuple[int, int]] = (-1, (-1, 0))
        #: Rows decided out and not yet removed (``Recorder._compact``), and their bytes.
        self.dead_tids: list[int] = []
        self.dead_cids: list[int] = []
        #: Calls whose sync rows go with them (waits that told the host nothing new).
        self.dead_sync_cids: list[int] = []
        self.dead_bytes = 0
        tasks = rec.tables["tasks"]
        view = np.frombuffer(tasks.buf, dtype=tasks.dtype)
        #: Streams with tasks from before shedding.
        self.old_streams = set(np.unique(view["stream"]).tolist()) - {-1}
        has_callbacks = bool(np.any(view["kind"] == _CALLBACK))
        del view
        self.streams = set(self.old_streams)
        if rec.tables["threads"].n > 1:
            self.stop("the program uses several host threads")
        elif has_callbacks:
            self.stop("the program uses host callbacks")
        for obj in self.session.objects:  # waits queued before shedding, not placed yet
            for t in getattr(obj, "pending", ()) if hasattr(obj, "blocked_by") else ():
                if t.kind == _WAIT and t.event is not None:
                    self.unplaced.setdefault(t.event.oid, set()).add(t.id)

    # ----------------------------------------------------------------- events from hooks
    def stop(self, why: str) -> None:
        """Keep every task from now on (undecided ones included)."""
        if self.off:
            return
        self.off = why
        for attr in ("pending", "info", "tail", "rec_k", "edge_of", "waits_on", "unplaced",
                     "ev_queue", "ev_kept", "call_tasks", "call_ret", "alloc_sites", "needed",
                     "synced", "kept", "seen", "site_epoch"):
            getattr(self, attr).clear()
        self.host.clear()
        self.syncs.clear()

    def on_task(self, t: Any) -> None:
        """A task was queued: note its signature and the thread's clock."""
        kind = t.kind
        if kind == _CALLBACK:
            self.stop("the program uses host callbacks")
            return
        s = t.stream
        cid = t.call
        if self._site[0] != cid:
            rec = self.rec
            call_site = rec._call_site
            if call_site[0] != cid:
                row = rec.row_of(cid)
                calls = rec.tables["calls"]
                call_site = (cid, (calls.get(row, "file"), calls.get(row, "line")) if row >= 0
                             else (-1, 0))
            self._site = call_site
        sites = self.alloc_sites
        acc = tuple([(sites.get(a.region.id) or self._alloc_site(a.region.id), a.write)
                     for a in t.accesses])
        sig = (s.oid if s is not None else -1, kind, self._site[1], acc)
        site_epoch = self.site_epoch
        if sig not in self.seen:
            self.seen.add(sig)
            if acc:
                self.epoch += 1
                for site, _ in acc:
                    site_epoch[site] = self.epoch
        epoch = max([site_epoch.get(site, 0) for site, _ in acc]) if acc else 0
        self.info[t.id] = (self.thr, (sig, epoch))
        ct = self.call_tasks.get(cid)
        if ct is None:
            self.call_tasks[cid] = [1, 0]
        else:
            ct[0] += 1
        if s is None:
            self.host.append(t)
            return
        dq = self.pending.get(s.oid)
        if dq is None:
            dq = self.pending[s.oid] = deque()
            self.streams.add(s.oid)
        dq.append(t)
        if kind in (_RECORD, _RESET):
            q = self.ev_queue.get(t.event.oid)
            if q is None:
                q = self.ev_queue[t.event.oid] = deque()
            q.append(t)
        elif kind == _WAIT:
            self.unplaced.setdefault(t.event.oid, set()).add(t.id)

    def _alloc_site(self, region: int) -> tuple[int, int]:
        site = self.alloc_sites.get(region)
        if site is None:
            rec = self.rec
            row = rec.alloc_row(region)
            call = rec.tables["allocs"].get(row, "call") if row >= 0 else -1
            calls = rec.tables["calls"]
            site = (calls.get(call, "file"), calls.get(call, "line")) if call >= 0 else (-1, 0)
            self.alloc_sites[region] = site
        return site

    def placed(self, t: Any) -> None:
        """A wait got its place in time (its edge is known) or will never run."""
        if t.event is not None:
            waits = self.unplaced.get(t.event.oid)
            if waits is not None:
                waits.discard(t.id)
                if not waits:
                    del self.unplaced[t.event.oid]
                    self.ev_dirty = True

    def edge(self, record: int, wait: int) -> None:
        """A wait ordered after a record (the edges table)."""
        start = self.rec._tshed_tid
        if wait >= start:
            self.edge_of[wait] = record
            if record >= start:
                self.waits_on[record] = self.waits_on.get(record, 0) + 1
        elif record >= start:
            self.needed.add(record)  # a wait from before shedding: kept, so is its record

    def on_call_end(self, cid: int, ret: int) -> None:
        """A call ended (effects applied up to the caller's clock): decide what finished."""
        self.settle()
        syncs = self.syncs
        if syncs:
            self.syncs = []
            if ret not in _TIMEOUTS:
                needed = [self._apply_sync(call, cid, kind, target)
                          for call, kind, target in syncs]
                if any(t.call == cid for dq in self.pending.values() for t in dq):
                    self.stop("a call that both waits and queues work")
                elif not any(needed) and ret == 0 and cid not in self.call_tasks:
                    # The host already knew everything this wait tells: the race check needs
                    # neither its sync rows nor (if nothing else names it) its call.
                    self.dead_sync_cids.append(cid)
                    self.dead_cids.append(cid)
                    rec = self.rec
                    self.dead_bytes += (rec.tables["syncs"].size * len(syncs) + rec._calls.size
                                        + 2 * rec._args.size)
            if self.off:
                return
        host = self.host
        if host:
            for t in host:
                self._decide_host(t)
            host.clear()
        if cid in self.call_tasks:
            self.call_ret[cid] = ret
            self._finish_call(cid)
        if self.ev_dirty:
            self.ev_dirty = False
            self._event_rows()

    # ----------------------------------------------------------------- knowledge
    def _tail(self, s: int) -> Know:
        k = self.tail.get(s)
        if k is None:
            k = {("stream", s): 1} if s in self.old_streams else {}
        return k

    def _k_of(self, task: int) -> Know | None:
        """The clock of an event record (None while it is not known yet)."""
        if task < self.rec._tshed_tid:
            return {("task", task): 1}
        return self.rec_k.get(task)

    def _apply_sync(self, call: int, cid: int, kind: int, target: int) -> bool:
        """The host thread waited: it now knows what the waited-for work knew. Returns
        whether the sync is needed (False: the thread knew all of that already)."""
        if call != cid:
            self.stop("a sync outside its call")
            return True
        objs = self.session.objects
        before = self.thr
        if kind == _SYNC_EVENT:
            r = objs[target].last_record if 0 <= target < len(objs) else None
            if r is None:
                return False
            k = self._k_of(r.id)
            if k is None:
                self.stop("an event sync on a record not finished")
                return True
            self.thr = _join(before, k)
            if self.thr is before:
                return False
            if r.id >= self.rec._tshed_tid:
                self.synced.add(r.id)
            return True
        if kind == _SYNC_REPORT:
            return True
        if kind == _SYNC_STREAM and target >= 0:
            streams = [target]
        elif kind == _SYNC_DEVICE and 0 <= target < len(objs):
            dev = objs[target].device.index
            streams = [s for s in self.streams if objs[s].ctx.device.index == dev]
        else:
            self.stop("a wait whose streams the trace does not name")
            return True
        for s in streams:
            if s in self.pending:
                self.stop("a sync before its stream's tasks finished")
                return True
            self.thr = _join(self.thr, self._tail(s))
        return self.thr is not before

    # ----------------------------------------------------------------- decisions
    def settle(self) -> None:
        """Decide every stream task that finished, in stream order."""
        applied = self.session.applied_ns
        moved = True
        pending = self.pending
        while moved and pending:
            moved = False
            for s, dq in list(pending.items()):
                while dq:
                    t = dq[0]
                    if t.end < 0 or (t.accesses and t.end > applied):
                        break
                    kr: Know | None = None
                    if t.kind == _WAIT:
                        r = self.edge_of.get(t.id)
                        if r is not None:
                            kr = self._k_of(r)
                            if kr is None:
                                break  # its record's stream is not decided that far yet
                    dq.popleft()
                    self._decide(t, s, kr)
                    moved = True
                if not dq:
                    del pending[s]

    def _must_keep(self, t: Any, key: Sig) -> bool:
        sig, epoch = key
        seen_epoch, n = self.kept.get(sig, (0, 0))
        if t.status != 0 or t.id in self.needed or n < TASK_KEEP_PER_SITE or epoch > seen_epoch:
            return True
        # Memory freed already: the task may have been in flight at the free.
        return any(not a.region.live for a in t.accesses)

    def _decide(self, t: Any, s: int, kr: Know | None) -> None:
        kind = t.kind
        if kind in (_RECORD, _RESET):
            snap = self.info[t.id][0]
            k = _join(self._tail(s), snap)
            self.tail[s] = self.rec_k[t.id] = k  # its row is decided in _event_rows
            self.ev_dirty = True
            return
        snap, sig = self.info.pop(t.id)
        before = _join(self._tail(s), snap)
        keep = self._must_keep(t, sig)
        k = before
        if kr is not None:
            r = self.edge_of.pop(t.id)
            if not keep and not _covers(before, kr):
                keep = True  # the wait brings its stream new ordering: it must stay
            k = _join(before, kr)
            n = self.waits_on.get(r)
            if n is not None:
                if n > 1:
                    self.waits_on[r] = n - 1
                else:
                    del self.waits_on[r]
                    self.ev_dirty = True
                if keep:
                    self.needed.add(r)
        if keep:
            if t.accesses:
                k = dict(k)
                k[s] = t.id
            self._keep(t, sig)
        else:
            self._drop(t)
        self.tail[s] = k

    def _decide_host(self, t: Any) -> None:
        """A synchronous task (on no stream) of the call that just ended."""
        sig = self.info.pop(t.id)[1]
        if t.end < 0 or self._must_keep(t, sig):
            if t.accesses:
                k = dict(self.thr)
                k[_HOST] = t.id
                self.thr = k
            self._keep(t, sig)
        else:
            self._drop(t)

    def _event_rows(self) -> None:
        """Decide the rows of event records and resets no later wait or sync can name."""
        objs = self.session.objects
        for ev in list(self.ev_queue):
            q = self.ev_queue[ev]
            last = objs[ev].last_record
            last_id = last.id if last is not None else -1
            while q:
                t = q[0]
                if (t.id not in self.rec_k or t.id >= last_id or ev in self.unplaced
                        or t.id in self.waits_on):
                    break
                q.popleft()
                self._event_row(t, ev)
            if not q:
                del self.ev_queue[ev]

    def _event_row(self, t: Any, ev: int) -> None:
        k = self.rec_k.pop(t.id)
        snap, sig = self.info.pop(t.id)
        keep = self._must_keep(t, sig)
        if not keep and t.id in self.synced:
            # A host sync found this record; without it the check finds the previous kept one.
            prev = self._ev_kept(ev)
            keep = not (_covers(_join(prev, snap), k) and _covers(_join(k, snap), prev))
        self.needed.discard(t.id)
        self.synced.discard(t.id)
        if keep:
            if t.kind == _RECORD:
                self.ev_kept[ev] = k
            self._keep(t, sig)
        else:
            self._drop(t)

    def _ev_kept(self, ev: int) -> Know:
        k = self.ev_kept.get(ev)
        if k is None:
            start = self.rec._tshed_tid
            old = [r.id for r in self.session.objects[ev].records if r.id < start]
            k = {("task", old[-1]): 1} if old else {}
        return k

    def _keep(self, t: Any, key: Sig) -> None:
        sig, epoch = key
        seen_epoch, n = self.kept.get(sig, (0, 0))
        self.kept[sig] = (epoch, 1) if epoch > seen_epoch else (seen_epoch, n + 1)
        self.needed.discard(t.id)
        ct = self.call_tasks.get(t.call)
        if ct is not None:
            ct[0] -= 1
            ct[1] += 1
            self._finish_call(t.call)

    def _drop(self, t: Any) -> None:
        rec = self.rec
        self.dead_tids.append(t.id)
        self.dead_bytes += rec._tasks.size + len(t.accesses) * rec._acc.size
        ct = self.call_tasks.get(t.call)
        if ct is not None:
            ct[0] -= 1
            self._finish_call(t.call)

    def _finish_call(self, cid: int) -> None:
        """Once every task of a call is decided: drop the call too if nothing needs it."""
        ct = self.call_tasks.get(cid)
        if ct is None or ct[0] or cid not in self.call_ret:
            return
        del self.call_tasks[cid]
        ret = self.call_ret.pop(cid)
        rec = self.rec
        if ct[1] or ret != 0 or cid in rec._freed_ptr_calls:
            return
        self.dead_cids.append(cid)
        self.dead_bytes += rec._calls.size + 4 * rec._args.size  # (a typical argument count)


def _renumber(values: np.ndarray, start: int, keep: np.ndarray) -> np.ndarray:
    """Row references after removing the rows ``start + i`` where ``keep[i]`` is False.

    References below ``start`` (and -1) stay; the others become the number of kept rows
    before them, so a position just past the table (an empty argument list) also works.
    """
    v = values.astype(np.int64)
    before = np.concatenate(([0], np.cumsum(keep)))
    m = v >= start
    v[m] = start + before[v[m] - start]
    return v.astype(values.dtype)


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
