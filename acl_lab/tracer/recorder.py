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
* Tasks (``shedding.TaskShedder``): once a task has finished (its data effects applied) the recorder
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
  references past them renumbered. The decisions keep one clock per host thread, so they
  go on with several threads and host callbacks (``shedding``); a thread's first call and
  its newest one stay (the race check's thread edges attach there).

After ``Session.finish`` the frozen trace's columns are the only copy of the rows: the
packed tables are emptied and packed back from that trace if anything is recorded later.

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
from operator import attrgetter
from typing import Any

import numpy as np

from ..runtime.hooks import HOOK_NAMES
from ..runtime.objects import CopyTask
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
)
from .shedding import TASK_KEEP_PER_SITE, WAIT, TaskShedder
from .sites import cell_name
from .sources import SOURCE_LINES, capture


class PackedTable:
    """An append-only table stored as packed little-endian rows in one bytearray.

    Appending a row is one ``struct.pack``; a row's later fields (an end time, a return
    code) can be completed in place (``packer``). ``columns()`` unpacks into numpy arrays.
    """

    __slots__ = ("buf", "codes", "dtype", "getters", "n", "name", "offsets", "pack", "size")

    def __init__(self, name: str) -> None:
        cols = TABLES[name]
        self.codes = "".join(c.code for c in cols)
        st = struct.Struct("<" + self.codes)
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

    def packer(self, *names: str) -> tuple[Any, int]:
        """``(pack_into, offset)`` for adjacent columns ``names``: row ``r`` gets them with
        ``pack_into(buf, r * size + offset, *values)`` (how a row's later fields, an end
        time or a return code, are completed in place)."""
        codes = "".join(next(c.code for c in TABLES[self.name] if c.name == n) for n in names)
        return struct.Struct("<" + codes).pack_into, self.offsets[names[0]]

    def get(self, row: int, name: str) -> int:
        """One value (for the recorder's own lookups while recording)."""
        unpack, offset = self.getters[name]
        return int(unpack(self.buf, row * self.size + offset)[0])

    def columns(self) -> dict[str, np.ndarray]:
        """Copy the rows out as one numpy array per column.

        The rows are read through a view of the buffer (no copy of the whole table first);
        the view is gone before this returns, so the buffer can grow again.
        """
        rows = np.frombuffer(self.buf, dtype=self.dtype)
        try:
            return {name: rows[name].astype(_NP_OUT[self.dtype.fields[name][0].char])  # type: ignore[index]
                    for name in self.dtype.names or ()}
        finally:
            del rows


_NP = {"b": "i1", "i": "i4", "q": "i8"}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_NP_OUT = {"b": np.int8, "i": np.int32, "l": np.int64, "q": np.int64}

MiB = 1 << 20
#: The allocs-row map's entry of a region id never announced.
_UNKNOWN = array("q", [-1])
#: The default memory bound of a trace (``ACL_LAB_TRACE_LIMIT_MB`` overrides it).
DEFAULT_TRACE_LIMIT_BYTES = 512 * MiB
#: Calls the checks read by name although they write no other row: never dropped.
KEEP_CALLS = frozenset({"acl.mdl.add_dataset_buffer"})
#: Calls a happens-before edge may point at long after they ended (``host_edges``): never
#: dropped either: ``acl.util`` thread starts and joins, the program's threading and queue
#: operations and sleeps.
EDGE_CALLS = frozenset({"acl.util.start_thread", "acl.util.stop_thread"})
EDGE_PREFIXES = ("threading.", "queue.", "time.sleep", "os.read")
#: Rough cost of one interned string beyond its characters (list slot, dict entry, header).
STRING_OVERHEAD = 100
_ROWS = attrgetter("n")
#: "Not shedding": every call id is below it.
_NEVER = 1 << 62
#: Tables that only the call itself writes (every other table's rows make a call needed).
_OWN_TABLES = ("calls", "args")
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
        #: the other tables at the call's start, thread).
        self._open: dict[int, tuple[str, int, int, int, int, int]] = {}
        self._others = [tab for name, tab in self.tables.items() if name not in _OWN_TABLES]
        self._bufs = [tab.buf for tab in self.tables.values()]  # (never replaced, only resized)
        #: Dropped calls per API name, and the site of the first one.
        self.dropped: dict[str, int] = {}
        self.first_dropped: tuple[str, int] | None = None
        #: Task shedding (``TaskShedder``): None until shedding starts. From then on task ids
        #: map to rows like call ids: identity below ``shed_tid``, ``_row_tids`` above.
        self._ts: TaskShedder | None = None
        self.shed_tid = _NEVER
        self._tshed_row = 0
        self._row_tids = array("q")
        #: Row counts of every table when shedding started (rows before are never removed).
        self._zone: dict[str, int] = {}
        self._compact_above = limit_bytes // 16 * _COMPACT_AT
        self._compact_min = max(1, limit_bytes // _COMPACT_MIN)
        self._next_compact = 0
        #: Calls made while shedding with a pointer into freed memory (never dropped).
        self.freed_ptr_calls: set[int] = set()
        #: recorded file -> the name shown for it (a notebook cell's temporary file: the cell).
        self._shown_files: dict[str, str] = {}
        #: (call id, (file id, line)) of the newest call while shedding.
        self.newest_site: tuple[int, tuple[int, int]] = (-1, (-1, 0))
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
        self._allocs = t["allocs"]
        self._frees = t["frees"]
        self._end_into, self._end_at = t["calls"].packer("end_ns", "ret")
        self._two_accesses = struct.Struct("<" + t["accesses"].codes * 2).pack
        self._arg_fn = self._arg  # bound once: on_call_begin hands it to every encoder
        self._times_into, self._times_at = t["tasks"].packer("start_ns", "end_ns")
        #: (format, argument count) -> the encoder of such an argument tuple
        self._encoders: dict[tuple[str, int], Any] = {}
        #: allocs row by runtime region id (-1: never announced): an array, 8 bytes a region,
        #: since a long malloc/free loop announces a region per pair
        self._region_rows = array("q")
        #: start address -> (allocs row, region) of the newest allocation there: a pointer
        #: argument at the start of a live one is recorded without resolving it (a stale
        #: entry, its region no longer live, is resolved through the memory system)
        self._start_rows: dict[int, tuple[int, Any]] = {}
        #: The trace frozen at the session's end while the packed tables are empty (see
        #: ``freeze``), else None.
        self._released: Any = None
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
        if tid < self.shed_tid:
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
        if self._released is not None:
            self._restore()
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

    def _before_call(self, cid: int, name: str, fmt: str, thread: int) -> None:
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
        ts = self._ts
        if ts is not None and not ts.off and ts.on_call_begin(cid, thread) and thread:
            return  # a thread's first call: the race check's thread start edge needs it
        if "p" not in fmt and name not in KEEP_CALLS and name not in EDGE_CALLS \
                and not name.startswith(EDGE_PREFIXES):  # (a call with a pointer is kept)
            self._open[cid] = (name, self._calls.n, self._args.n, len(self.strings),
                               self._other_rows(), thread)

    def _end_shed_call(self, cid: int, end: int, ret: int) -> None:
        """Complete a call made while shedding; drop it when nothing needs it."""
        row = self.row_of(cid)
        if row >= 0:
            calls = self._calls
            self._end_into(calls.buf, row * calls.size + self._end_at, end, _int32(ret))
        opened = self._open.pop(cid, None)
        if opened is None or ret != 0:
            return
        name, row, arg_start, nstrings, others, thread = opened
        calls, args = self._calls, self._args
        if row != calls.n - 1 or others != self._other_rows():
            return  # a later call's row follows it (and its args), or another row needs it
        ts = self._ts
        if thread and ts is not None and not ts.off:
            # Not yet: the newest call of a thread other than the first may be its last one,
            # which the race check's join edge leaves from (compaction removes it later).
            ts.hold_call(cid, thread, False, calls.size + (args.n - arg_start) * args.size)
            return
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
        self.shed_tid = self._tshed_row = self._tasks.n
        self._ts = TaskShedder(self)

    def _maybe_compact(self, cid: int) -> None:
        """Remove left-out rows when the trace nears its limit (checked every few calls), and
        note the largest footprint seen."""
        ts = self._ts
        assert ts is not None
        used = self.footprint()
        dead = ts.dead_bytes
        # Over the limit, a smaller batch is removed too, but only when that brings the trace
        # back under it: when the rows every finding needs pass the limit by themselves, a
        # compaction per few calls (each one copies every row since shedding started) made
        # a long run quadratic, and bought nothing.
        if used >= self._compact_above and dead and (
                dead >= self._compact_min or self.limit_bytes < used <= self.limit_bytes + dead):
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
        self.freed_ptr_calls.intersection_update(ts.call_tasks)

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
        self.tables["threads"].append(self.s(th.name), 1 if th.started_by_acl else 0)

    def on_call_begin(self, cid: int, name: str, thread: int, ctx: int, file: str, line: int,
                      start: int, args: tuple[Any, ...], fmt: str) -> None:
        if cid >= self._next_check:
            self._before_call(cid, name, fmt, thread)
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
            enc = self._encoders.get((fmt, nargs))
            if enc is None:
                enc = self._encoders[fmt, nargs] = _encoder(fmt, nargs)
            args_tab.buf += enc(args, self._start_rows, self._arg_fn, cid)
            args_tab.n += nargs
        self._calls.buf += self._calls.pack(n, thread, ctx, f, line, start, -1, 0, arg_start,
                                            min(nargs, 127))
        self._calls.n += 1
        if cid >= self._shed_cid:
            self.newest_site = (cid, (f, line))  # the site of the tasks this call queues

    def _arg(self, cid: int, a: Any, pointer: bool) -> tuple[int, int]:
        """``(kind, value)`` of an argument the encoder's straight line does not take: a
        pointer that is not the start of a live allocation, an int past int64, any other
        object."""
        if pointer and type(a) is int and a:
            return self._pointer(cid, a)
        return self._encode(a)

    def _pointer(self, cid: int, a: int) -> tuple[int, int]:
        """A pointer argument that is not the start of a live allocation: recorded
        relative to the allocation that holds it, live or freed (comparing the call with the
        free says "use after free"), else as a plain int (raw host memory)."""
        if not _INT64_MIN <= a <= _INT64_MAX:
            return self._encode(a)
        mem = self.session.memory
        r = mem.find(a)
        if not r:
            r = mem.find_freed(a)
            if r is not None and cid >= self._shed_cid:
                self.freed_ptr_calls.add(cid)  # never dropped
        row = self.alloc_row(r.id) if r is not None else -1
        if row >= 0:
            return ARG_PTR, (row << schema.PTR_SHIFT) | (a - r.addr)
        return ARG_INT, a

    def _encode(self, a: Any) -> tuple[int, int]:
        if type(a) is int:
            if _INT64_MIN <= a <= _INT64_MAX:
                return ARG_INT, a
            return ARG_OTHER, self.s(str(a))  # past int64: kept as its text
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
        calls = self._calls
        self._end_into(calls.buf, cid * calls.size + self._end_at, end,
                       ret if -0x80000000 <= ret < 0x80000000 else -1)  # _int32, in line

    def on_object(self, oid: int, kind: int, handle: int, device: int, ctx: int, flags: int,
                  call: int, label: str) -> None:
        self.tables["objects"].append(kind, handle, device, ctx, flags, self.row_of(call),
                                      self.s(label))

    def on_destroy(self, oid: int, call: int, how: int) -> None:
        self.tables["destroys"].append(oid, self.row_of(call), how)

    def on_alloc(self, r: Any, call: int) -> None:
        # Every region is announced once; its allocs row is remembered for later references.
        allocs = self._allocs
        row = allocs.n
        allocs.buf += allocs.pack(r.kind, r.device, r.policy, r.pool, r.display_addr,
                                  r.requested, r.size, r.accounted,
                                  call if call < self._shed_cid else self.row_of(call), r.ctx)
        allocs.n = row + 1
        rows = self._region_rows
        rid = r.id
        n = len(rows)
        if rid == n:  # the usual case: regions are announced in the order they are made
            rows.append(row)
        elif rid > n:
            rows.extend(_UNKNOWN * (rid - n))
            rows.append(row)
        elif rid >= 0:
            rows[rid] = row
        if r.size:
            self._start_rows[r.addr] = (row, r)

    def alloc_row(self, region_id: int) -> int:
        """The allocs row of a runtime region id (-1 if it was never announced)."""
        rows = self._region_rows
        return rows[region_id] if 0 <= region_id < len(rows) else -1

    def on_free(self, r: Any, call: int, how: int) -> None:
        if self._ts is not None:
            self._ts.alloc_sites.pop(r.id, None)
        row = self.alloc_row(r.id)
        hit = self._start_rows.get(r.addr)
        if hit is not None and hit[0] == row:
            del self._start_rows[r.addr]
        frees = self._frees
        frees.buf += frees.pack(row, call if call < self._shed_cid else self.row_of(call), how)
        frees.n += 1

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
                                t.engine, t.device, t.submit, t.start, t.end,
                                event.oid if event is not None else -1, t.pinned)
        tasks.n += 1
        acc = self._acc
        if type(t) is CopyTask:  # its read and write rows in one pack, from its fields
            rows = self._region_rows
            nrows = len(rows)
            tid = t.id
            ra = t.src.id
            rb = t.dst.id
            n = t.nbytes
            acc.buf += self._two_accesses(tid, rows[ra] if 0 <= ra < nrows else -1, t.src_off,
                                          n, False, tid, rows[rb] if 0 <= rb < nrows else -1,
                                          t.dst_off, n, True)
            acc.n += 2
            return
        alloc_row = self.alloc_row
        for a in t.accesses:
            acc.buf += acc.pack(t.id, alloc_row(a.region.id), a.offset, a.length, a.write)
            acc.n += 1

    def _on_task_shedding(self, t: Any) -> None:
        """``on_task`` while shedding: rows through the task id map, then the decision."""
        stream = t.stream
        event = t.event
        tasks = self._tasks
        row = tasks.n
        tasks.buf += tasks.pack(self.row_of(t.call), stream.oid if stream is not None else -1,
                                t.kind, t.engine, t.device, t.submit, t.start, t.end,
                                event.oid if event is not None else -1, t.pinned)
        tasks.n += 1
        self._row_tids.append(t.id)
        acc = self._acc
        alloc_row = self.alloc_row
        for a in t.accesses:
            acc.buf += acc.pack(row, alloc_row(a.region.id), a.offset, a.length,
                                1 if a.write else 0)
            acc.n += 1
        ts = self._ts
        if ts is not None and not ts.off:
            ts.on_task(t)

    def on_task_placed(self, t: Any) -> None:
        ts = self._ts
        tasks = self._tasks
        row = t.id if ts is None else self.task_row(t.id)
        self._times_into(tasks.buf, row * tasks.size + self._times_at, t.start, t.end)
        if ts is not None and not ts.off and t.kind == WAIT:
            ts.placed(t)

    def on_task_status(self, t: Any) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.needed.add(t.id)
            if t.kind == WAIT:
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

    def on_host_edge(self, src: int, dst: int, kind: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.on_host_edge(src, dst)
        s, d = self.row_of(src), self.row_of(dst)
        if s >= 0 and d >= 0:
            self.tables["host_edges"].append(s, d, kind)

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off and call in ts.open_thread:
            syncs = ts.syncs.get(call)
            if syncs is None:
                ts.syncs[call] = [(kind, target)]
            else:
                syncs.append((kind, target))
        self.tables["syncs"].append(self.row_of(call), kind, target, start, end)

    def on_callback(self, task: int, thread: int, start: int, end: int) -> None:
        ts = self._ts
        if ts is not None and not ts.off:
            ts.on_callback(task, thread)
        self.tables["callbacks"].append(self.task_row(task), thread, start, end)

    def on_diag(self, call: int, level: int, kind: str, message: str) -> None:
        self.tables["diags"].append(self.row_of(call), level, self.s(kind), self.s(message))

    # --------------------------------------------------------------- output
    def nbytes(self) -> int:
        """Bytes held by the tables (the trace's in-memory size, strings excluded)."""
        return sum(map(len, self._bufs))

    def freeze(self) -> Any:
        """An immutable Trace of everything recorded so far.

        Once the session has finished, the Trace's columns become the only copy of the rows:
        the packed tables are emptied (``_release``) and packed again from that Trace if
        anything is recorded or asked later (``_restore``).
        """
        from .trace import Trace
        if self._released is not None:
            self._restore()
        meta = dict(self.meta)
        meta["virtual_time_ns"] = max((t.clock for t in self.session.thread_list), default=0)
        sched = getattr(self.session, "sched", None)
        if sched is not None:  # the host schedule this run had (``hostsched``)
            meta["schedule_seed"] = sched.seed
            meta["schedule_threads"] = len(sched.threads)
            meta["schedule_switches"] = sched.switches
            meta["schedule_preemptions"] = sched.preemptions
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
        finished = getattr(self.session, "finished", False)
        cols: dict[str, dict[str, np.ndarray]] = {}
        for name, t in self.tables.items():
            cols[name] = t.columns()
            if finished:  # the Trace will hold the only copy (``_release``): free the packed
                del t.buf[:]  # rows table by table, so the two copies never coexist whole
        # the cited lines' text, so the trace shows them from any folder (sources.py)
        meta[SOURCE_LINES] = capture(self.strings, cols["calls"]["file"], cols["calls"]["line"])
        trace = Trace.from_columns(self.strings, cols, meta)
        del cols
        if getattr(self.session, "finished", False):
            self._release(trace)
        return trace

    def _release(self, trace: Any) -> None:
        """Empty the packed tables: ``trace`` (frozen from them) holds every row. Until
        ``_restore`` the recorder's hooks are shims that restore first."""
        self._released = trace
        for tab in self.tables.values():
            del tab.buf[:]  # in place: the setters and ``_bufs`` hold these bytearrays
        for name in HOOK_NAMES:
            real = getattr(self, name, None)
            if real is not None:
                setattr(self, name, self._restoring(real))
        self._rewire()

    def _restoring(self, real: Any) -> Any:
        def hook(*args: Any) -> None:
            self._restore()
            real(*args)
        return hook

    def _restore(self) -> None:
        """Pack the rows back from the released trace (the tables as they were)."""
        trace = self._released
        if trace is None:
            return
        self._released = None
        for name in HOOK_NAMES:
            self.__dict__.pop(name, None)
        for name, tab in self.tables.items():
            t = trace.tables[name]
            rows = np.empty(t.rows, dtype=tab.dtype)
            for col in tab.dtype.names or ():
                rows[col] = t[col]
            tab.buf[:] = rows.tobytes()
        self._rewire()

    def _rewire(self) -> None:
        """Hand the session's hooks this recorder's current methods."""
        hooks = self.session.hooks
        hooks.unsubscribe(self)
        hooks.subscribe(self)


#: Format letters whose parsed argument is an int within int64 (``acl._boundary``'s rules:
#: range-checked, or masked to 32 bits or fewer).
_INT64_LETTERS = "ihblLIHB"
#: Letters of an unsigned 64-bit int (masked, so it may exceed int64).
_UINT64_LETTERS = "kK"


def _encoder(fmt: str, nargs: int) -> Any:
    """The function that packs ``nargs`` arguments of format ``fmt`` into ``args`` rows:
    ``enc(args, start_rows, arg, cid) -> bytes``.

    Generated as one straight line per format (a loop over the arguments cost four times as
    much, and every call records its arguments). The arguments are parsed (``fmt`` is the
    binding's, see ``acl._boundary``), so an int of an int32-or-smaller letter is recorded
    as it is, an unsigned 64-bit one when it fits int64, a pointer (``p``) at the start of a
    live allocation as ``ARG_PTR`` at offset 0; anything else goes to ``arg(cid, value,
    is_pointer)`` (``Recorder._arg``), as does every argument of a call without a format.
    """
    letters = fmt.replace("|", "")[:nargs].ljust(nargs, "O")
    lines = ["def enc(args, starts, arg, cid):",
             f"    {', '.join(f'a{i}' for i in range(nargs))}{',' if nargs == 1 else ''} = args"]
    for i, c in enumerate(letters):
        a = f"a{i}"
        if c == "p":
            lines += [f"    h = starts.get({a})",
                      "    if h is not None and h[1].live:",
                      f"        k{i}, v{i} = {ARG_PTR}, h[0] << {schema.PTR_SHIFT}",
                      "    else:",
                      f"        k{i}, v{i} = arg(cid, {a}, True)"]
        elif c in _INT64_LETTERS:
            lines.append(f"    k{i}, v{i} = {ARG_INT}, {a}")
        elif c in _UINT64_LETTERS:
            lines += [f"    if {a} <= {_INT64_MAX}:",
                      f"        k{i}, v{i} = {ARG_INT}, {a}",
                      "    else:",
                      f"        k{i}, v{i} = arg(cid, {a}, False)"]
        else:
            lines.append(f"    k{i}, v{i} = arg(cid, {a}, False)")
    lines.append(f"    return PACK({', '.join(f'k{i}, v{i}' for i in range(nargs))})")
    env: dict[str, Any] = {"PACK": struct.Struct("<" + "bq" * nargs).pack}
    exec(compile("\n".join(lines), f"<args encoder {fmt or '-'}/{nargs}>", "exec"), env)
    return env["enc"]


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


def _int32(ret: int) -> int:
    """A return code as the calls table's int32 column holds it (-1 for one out of range)."""
    return ret if -0x80000000 <= ret < 0x80000000 else -1


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
