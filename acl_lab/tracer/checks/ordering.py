"""Ordering checks: data races, waits before records, and deadlocks.

``races`` is the stream sanitizer's analysis (PyTorch's CSAN) run over a finished trace.
Every stream and every host thread is a timeline; a task that touches memory gets the next
sequence number of its timeline, and every point of the program carries a vector clock
``{timeline: last sequence number known to have happened before}``. Happens-before comes from:

* stream order: a stream runs its tasks first-in first-out;
* submission: a task is ordered after everything its submitting thread had done (or waited
  for) when it called the API;
* events: a ``stream_wait_event`` task is ordered after its record (the ``edges`` table), and
  so after everything queued before the record on the recording stream;
* host waits (``syncs``): after ``synchronize_stream/device/event`` the host thread is ordered
  after the tasks it waited for; synchronous copies (tasks on stream -1) are host accesses;
* callbacks: a callback's host code is ordered after the work queued before it, and a
  *blocking* callback orders the rest of its stream after that host code.

The graph is walked once in a topological order (O(tasks + calls + edges)); per allocation an
interval map keeps, for every byte range, the last write and the reads since it (one per
timeline), so each access is checked against at most a few earlier ones. Two overlapping
accesses, at least one a write, with no happens-before path between them, are a race. The
virtual-time schedule of this run is never used to excuse a race: only guarantees count.
"""

from __future__ import annotations

import heapq
import re
from array import array
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ...constants import ErrorCode
from ...runtime.kinds import HostEdge, ObjectKind, SyncKind, TaskKind
from ..happens_before import (
    WAIT_TIMEOUTS,
    Clock,
    host_key,
    join_into,
    ordered,
    thread_of_key,
    tick,
)
from ..schema import TASK_KINDS
from .base import Finding, TraceIndex, human_bytes, int_array, site

#: Clocks and timeline keys are ``happens_before``'s (streams by object id, host threads by
#: ``host_key(thread)``).

#: One access as remembered in the interval map: (timeline key, sequence number, task).
Ref = tuple[int, int, int]

_EMPTY: tuple[Ref | None, tuple[Ref, ...]] = (None, ())
# Short names for the kinds the per-row loops compare (a module constant costs a tenth of an
# enum member's read).
_OBJ_STREAM, _OBJ_EVENT = ObjectKind.STREAM, ObjectKind.EVENT
_SYNC_STREAM, _SYNC_DEVICE, _SYNC_EVENT, _SYNC_JOIN = (
    SyncKind.STREAM, SyncKind.DEVICE, SyncKind.EVENT, SyncKind.JOIN)
_EDGE_START, _EDGE_JOIN = HostEdge.START, HostEdge.JOIN


# =============================================================================== races
@dataclass
class _Race:
    """One unordered pair: ``first`` was issued (call id) before ``second``."""

    first: Ref
    second: Ref
    first_write: bool
    second_write: bool
    alloc: int
    lo: int
    hi: int


def races(trace: Any) -> list[Finding]:
    """Accesses to overlapping bytes, one a write, that nothing orders (stream sanitizer)."""
    acc = trace.accesses
    if acc.rows == 0:
        return []
    found = _find_races(trace)
    groups: dict[tuple[Any, ...], list[_Race]] = defaultdict(list)
    for r in found:
        key = (_task_site(trace, r.first[2]), _task_site(trace, r.second[2]),
               _alloc_site(trace, r.alloc), r.first_write, r.second_write)
        groups[key].append(r)
    out = [_race_finding(trace, rs) for rs in groups.values()]
    out.sort(key=lambda f: (f.file, f.line, f.calls))
    return out


def _may_race(trace: Any) -> np.ndarray:
    """The access rows that can take part in a race, in task order (a stable sort).

    Left out, with the same findings (none of them can be half of a reported pair, and each
    allocation's interval map is its own): accesses of tasks that never ran (the walk skips
    them), empty ones and those of no allocation, and every access to an allocation that

    * only one timeline touches, or that nothing writes (a race needs two timelines and a
      write), or
    * one host thread and streams touch, where no two streams' accesses conflict (one stream,
      or the streams only read) and every host access comes from a call before the first
      call that queued a stream access to it, all of them calls of that thread: each
      conflicting pair is then a host task, ordered by the thread's program order before the
      call that queued the other task (the submission edge). A pinned buffer filled by the
      host and then read by a stream loop is this case.

    The walk then visits the happens-before graph only when some access is left, and ticks
    only the tasks that made one (a clock over fewer points orders them the same way).
    """
    acc, tasks, calls = trace.accesses, trace.tasks, trace.calls
    nt, nc, na = tasks.rows, calls.rows, trace.allocs.rows
    ran = tasks["start_ns"] >= 0
    ran[trace.failures["task"][(trace.failures["task"] >= 0)
                               & (trace.failures["task"] < nt)]] = False

    def gather(first: int, end: int) -> tuple[np.ndarray, ...]:
        """Access rows ``first..end`` that a walk would check, with what the rules read."""
        task = acc["task"][first:end].astype(np.int64)
        alloc = acc["alloc"][first:end].astype(np.int64)
        keep = (task >= 0) & (task < nt) & (alloc >= 0) & (alloc < na) & \
            (acc["length"][first:end] > 0)
        keep[keep] = ran[task[keep]]
        rows = np.nonzero(keep)[0]
        t, a = task[rows], alloc[rows]
        write = acc["write"][first:end][rows] != 0
        t_call = tasks["call"][t].astype(np.int64)
        call_ok = (t_call >= 0) & (t_call < nc)
        thread = np.where(call_ok, calls["thread"][np.where(call_ok, t_call, 0)], 0).astype(
            np.int64)
        stream = tasks["stream"][t].astype(np.int64)
        host = stream < 0
        key = np.where(host, host_key(0) - thread, stream)  # happens_before's timeline keys
        return rows + first, t, a, write, t_call, thread, host, key, call_ok

    # first, in slices (a million copies are two million accesses), the allocations two
    # timelines touch and something writes; only their accesses are gathered whole
    unset = np.iinfo(np.int64).min
    some_key = np.full(na, unset, dtype=np.int64)
    two = np.zeros(na, dtype=bool)
    written = np.zeros(na, dtype=bool)
    step = 1 << 18
    for start in range(0, acc.rows, step):
        _, _, a, write, _, _, _, key, _ = gather(start, start + step)
        new = some_key[a] == unset
        some_key[a[new]] = key[new]
        two[a[key != some_key[a]]] = True
        written[a[write]] = True
    two &= written
    if not two.any():
        return np.zeros(0, dtype=np.int64)
    parts = []
    for start in range(0, acc.rows, step):
        got = gather(start, start + step)
        parts.append(tuple(x[two[got[2]]] for x in got))
    rows, t, a, write, t_call, thread, host, key, call_ok = (
        np.concatenate([p[i] for p in parts]) for i in range(9))
    del parts
    task = acc["task"]
    # then per allocation (the rows sorted by it), minima and maxima: sentinels leave rows out
    by = np.argsort(a, kind="stable")
    rows, t, a, write, t_call, thread, host, key, call_ok = (
        x[by] for x in (rows, t, a, write, t_call, thread, host, key, call_ok))
    cuts = np.concatenate(([0], np.nonzero(a[1:] != a[:-1])[0] + 1))
    big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min

    def lo(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        return np.minimum.reduceat(values if mask is None else np.where(mask, values, big),
                                   cuts)

    def hi(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        return np.maximum.reduceat(values if mask is None else np.where(mask, values, small),
                                   cuts)

    contested = (lo(key) != hi(key)) & (hi(write.astype(np.int64)) > 0)
    stream_side = ~host
    one_host = (lo(key, host) == hi(key, host)) & (hi(key, host) != small)
    # the allocation's host thread (when it has one) beside each row
    host_thread = np.repeat(host_key(0) - hi(key, host), np.diff(np.append(cuts, len(a))))
    foreign = stream_side & (thread != host_thread)
    streams_agree = ((lo(key, stream_side) == hi(key, stream_side))
                     | (hi(write.astype(np.int64), stream_side) <= 0))
    ordered_by_program = (one_host & streams_agree & (hi(foreign.astype(np.int64)) == 0)
                          & (lo(call_ok.astype(np.int64)) == 1)
                          & (hi(t_call, host) < lo(t_call, stream_side)))
    contested &= ~ordered_by_program
    inv = np.repeat(np.arange(len(cuts)), np.diff(np.append(cuts, len(a))))
    rows = rows[contested[inv]]
    return rows[np.argsort(task[rows], kind="stable")]


def _find_races(trace: Any) -> list[_Race]:
    """Walk the happens-before graph once and check every access that may race (``_may_race``)
    against the interval map."""
    rows = _may_race(trace)
    if not len(rows):
        return []
    g = _Graph(trace)
    acc = trace.accesses
    nt = g.nt
    # Columns as int64 arrays, not lists: two million accesses as Python ints would be
    # hundreds of MB (an array holds 8 bytes per value and makes an int only when read).
    a_off, a_len = int_array(acc["offset"]), int_array(acc["length"])
    a_alloc, a_write = int_array(acc["alloc"], True), int_array(acc["write"], True)
    first = int_array(np.concatenate((
        [0], np.cumsum(np.bincount(acc["task"][rows].astype(np.int64), minlength=nt)))))
    order = int_array(rows)
    del rows
    ran = g.ran
    segs: dict[int, tuple[list[int], list[tuple[Ref | None, tuple[Ref, ...]]]]] = {}
    seen_pairs: set[tuple[int, int]] = set()
    found: list[_Race] = []
    t_call = g.t_call

    def report(prev: Ref, me: Ref, prev_w: bool, me_w: bool, alloc: int, lo: int,
               hi: int) -> None:
        pair = (prev[2], me[2])
        if pair in seen_pairs:
            return
        seen_pairs.add(pair)
        if (t_call[prev[2]], prev[2]) <= (t_call[me[2]], me[2]):
            found.append(_Race(prev, me, prev_w, me_w, alloc, lo, hi))
        else:
            found.append(_Race(me, prev, me_w, prev_w, alloc, lo, hi))

    def on_task(task: int, key: int, seq: int, clock: Clock) -> None:
        if not ran[task]:
            return
        me: Ref = (key, seq, task)
        for k in range(first[task], first[task + 1]):
            j = order[k]
            alloc = a_alloc[j]
            n = a_len[j]
            if alloc < 0 or n <= 0:
                continue
            lo, hi, write = a_off[j], a_off[j] + n, bool(a_write[j])
            sg = segs.get(alloc)
            if sg is None:
                sg = segs[alloc] = ([0], [_EMPTY])
            starts, states = sg
            i = bisect_right(starts, lo) - 1
            if starts[i] != lo:
                starts.insert(i + 1, lo)
                states.insert(i + 1, states[i])
                i += 1
            e = bisect_left(starts, hi)
            if e == len(starts) or starts[e] != hi:
                starts.insert(e, hi)
                states.insert(e, states[e - 1])
            memo: dict[int, tuple[Ref | None, tuple[Ref, ...]]] = {}
            # One state object for the whole written range, so the range coalesces back into
            # a single segment (identity-based merging below) and segments stay few.
            written: tuple[Ref | None, tuple[Ref, ...]] = (me, ())
            for s in range(i, e):
                st = states[s]
                new = memo.get(id(st))
                if new is None:
                    last_w, reads = st
                    seg_lo, seg_hi = starts[s], starts[s + 1]
                    if last_w is not None and last_w[0] != key and \
                            not ordered(clock, last_w[0], last_w[1]):
                        report(last_w, me, True, write, alloc, seg_lo, seg_hi)
                    if write:
                        for r in reads:
                            if r[0] != key and not ordered(clock, r[0], r[1]):
                                report(r, me, False, True, alloc, seg_lo, seg_hi)
                        new = written
                    else:
                        new = (last_w, (*(r for r in reads if r[0] != key), me))
                    memo[id(st)] = new
                states[s] = new
            # coalesce the range back into as few segments as possible
            s = i + 1
            while s < e:
                if states[s] is states[s - 1]:
                    del starts[s]
                    del states[s]
                    e -= 1
                else:
                    s += 1

    g.walk(on_task, first)
    return found


class _Graph:
    """The happens-before graph of a trace: tasks, calls and callback runs as nodes.

    Node ids: tasks ``0..nt-1``, calls ``nt..nt+nc-1``, then a begin and an end node per
    callback run. The edges are kept as one compressed sparse row table (``indptr``,
    ``indices``) in int64 arrays: a million tasks and calls cost tens of MB, not the
    hundreds a list of successor lists of Python ints would.
    """

    def __init__(self, trace: Any) -> None:
        self.trace = trace
        tasks, calls, objs = trace.tasks, trace.calls, trace.objects
        self.nt = nt = tasks.rows
        self.nc = nc = calls.rows
        t_call_np = tasks["call"].astype(np.int64)
        t_stream_np = tasks["stream"].astype(np.int64)
        t_start_np = tasks["start_ns"].astype(np.int64)
        c_thread_np = calls["thread"].astype(np.int64)
        self.t_call = t_call = int_array(t_call_np)
        # read only now and then (callbacks, syncs): the trace's own columns
        c_thread, c_start, c_ret = calls["thread"], calls["start_ns"], calls["ret"]
        self.ran = ran = bytearray((t_start_np >= 0).astype(np.uint8).tobytes())
        failed = trace.failures
        for t in failed["task"].tolist():
            if 0 <= t < nt:
                ran[t] = 0
        self.time = int_array(np.concatenate((
            np.where(t_start_np >= 0, t_start_np, tasks["submit_ns"].astype(np.int64)),
            calls["start_ns"].astype(np.int64))))
        call_ok = (t_call_np >= 0) & (t_call_np < nc)
        th_of_task = np.zeros(nt, dtype=np.int64)
        th_of_task[call_ok] = c_thread_np[t_call_np[call_ok]]
        on_stream = t_stream_np >= 0
        # streams are keyed by object id, host tasks by their thread (happens_before)
        # (host_key(th) is host_key(0) - th, here for a whole column at once)
        self.key = int_array(np.where(on_stream, t_stream_np, host_key(0) - th_of_task))
        del th_of_task, t_start_np
        #: Edge endpoints in blocks (numpy arrays), and single edges added one by one.
        blocks_src: list[np.ndarray] = []
        blocks_dst: list[np.ndarray] = []
        one_src, one_dst = array("q"), array("q")
        self.n = nt + nc

        def edge(a: int, b: int) -> None:
            one_src.append(a)
            one_dst.append(b)

        def new_node(time: int) -> int:
            self.time.append(time)
            self.n += 1
            return self.n - 1

        # --- streams: FIFO order, submission, per-stream and per-event task lists
        small = nt + nc + 2 * trace.callbacks.rows < 1 << 31  # node ids fit int32
        idt = np.int32 if small else np.int64
        sub = np.nonzero(on_stream & call_ok)[0]
        blocks_src.append((nt + t_call_np[sub]).astype(idt))
        blocks_dst.append(sub.astype(idt))
        st_idx = np.nonzero(on_stream)[0]
        st_order = st_idx[np.argsort(t_stream_np[st_idx], kind="stable")]
        st_sorted = t_stream_np[st_order]
        same = st_sorted[1:] == st_sorted[:-1]
        blocks_src.append(st_order[:-1][same].astype(idt))
        blocks_dst.append(st_order[1:][same].astype(idt))
        by_stream: dict[int, array[int]] = {}
        stream_calls: dict[int, array[int]] = {}
        cuts = np.nonzero(np.diff(st_sorted))[0] + 1
        for lo, hi in zip(np.concatenate(([0], cuts)).tolist(),
                          np.concatenate((cuts, [len(st_sorted)])).tolist(), strict=True):
            if hi > lo:
                s = int(st_sorted[lo])
                by_stream[s] = int_array(st_order[lo:hi])
                stream_calls[s] = int_array(t_call_np[st_order[lo:hi]])
        del st_idx, st_order, st_sorted, same, sub
        host_tasks: dict[int, list[int]] = defaultdict(list)
        for t in np.nonzero(~on_stream)[0].tolist():
            host_tasks[t_call[t]].append(t)
        records: dict[int, list[int]] = defaultdict(list)
        t_event_np = tasks["event"].astype(np.int64)
        for t in np.nonzero((tasks["kind"] == TaskKind.EVENT_RECORD) & (t_event_np >= 0))[0] \
                .tolist():
            records[int(t_event_np[t])].append(t)
        ed_rec = trace.edges["record"].astype(np.int64)
        ed_wait = trace.edges["wait"].astype(np.int64)
        ok = (ed_rec >= 0) & (ed_rec < nt) & (ed_wait >= 0) & (ed_wait < nt)
        blocks_src.append(ed_rec[ok])
        blocks_dst.append(ed_wait[ok])

        def last_before(s: int, c: int) -> int:
            lst = by_stream.get(s)
            if not lst:
                return -1
            i = bisect_left(stream_calls[s], c)
            return lst[i - 1] if i else -1

        def next_on_stream(t: int) -> int:
            lst = by_stream.get(int(t_stream_np[t]))
            if not lst:
                return -1
            i = bisect_left(lst, t)
            return lst[i + 1] if i + 1 < len(lst) and lst[i] == t else -1

        # --- host threads: program order, with callback runs spliced in
        thread_calls: dict[int, array[int]] = {
            th: int_array(np.nonzero(c_thread_np == th)[0])
            for th in np.unique(c_thread_np).tolist()}
        inserts: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        cb = trace.callbacks
        for k, u, b, e in zip(cb["task"].tolist(), cb["thread"].tolist(),
                              cb["start_ns"].tolist(), cb["end_ns"].tolist(), strict=True):
            begin, end = new_node(b), new_node(e)
            inserts[u].append((b, 1, begin))
            inserts[u].append((e, 0, end))
            if 0 <= k < nt:
                edge(k, begin)
                if self._blocking(k):
                    after = next_on_stream(k)
                    if after >= 0:
                        edge(end, after)
        #: call -> the last node of its stretch of its thread's chain (-1: none)
        exit_of = int_array(np.full(nc, -1, dtype=np.int64))
        for th, mine in thread_calls.items():
            extra = sorted(inserts.pop(th, []))
            chain = array("q")
            x = 0
            prev = -1
            for c in mine:
                while x < len(extra) and (extra[x][0] < c_start[c] or (
                        extra[x][0] == c_start[c] and (
                            extra[x][1] == 0
                            or trace.call_name(c) != "acl.rt.process_report"))):
                    chain.append(extra[x][2])
                    x += 1
                if prev >= 0:
                    exit_of[prev] = chain[-1]
                chain.append(nt + c)
                prev = c
                ht = host_tasks.get(c)
                if ht:
                    chain.extend(ht)
            chain.extend(e[2] for e in extra[x:])
            if prev >= 0:
                exit_of[prev] = chain[-1]
            ch = np.frombuffer(chain, dtype=np.int64) if len(chain) else np.zeros(0, np.int64)
            blocks_src.append(ch[:-1].astype(idt))
            blocks_dst.append(ch[1:].astype(idt))
            del chain, ch
        for left in inserts.values():  # callbacks of threads that made no call
            for x1, x2 in pairwise(sorted(left)):
                edge(x1[2], x2[2])
        self._exit = exit_of

        # --- the program's own synchronization (``host_edges``: thread start and join,
        #     locks, events, queue items, ...): the source call's stretch before the target
        he = trace.host_edges
        started: set[int] = set()
        joined_calls: set[int] = set()
        for a, b, k in zip(he["src"].tolist(), he["dst"].tolist(), he["kind"].tolist(),
                           strict=True):
            if 0 <= a < nc and 0 <= b < nc:
                edge(exit_of[a] if exit_of[a] >= 0 else nt + a, nt + b)
                if k == _EDGE_START:
                    started.add(int(c_thread[b]))
                elif k == _EDGE_JOIN:
                    joined_calls.add(b)

        # --- host waits
        stream_dev: dict[int, int] = {}
        handle_stream: dict[int, int] = {}
        default_stream: dict[int, int] = {}
        for o in range(objs.rows):
            if int(objs["kind"][o]) == _OBJ_STREAM:
                stream_dev[o] = int(objs["device"][o])
                handle_stream[int(objs["handle"][o])] = o
                if trace.string(int(objs["label"][o])).startswith("default stream"):
                    default_stream[int(objs["ctx"][o])] = o
        sy = trace.syncs
        for c, kind, target, sy_end in zip(sy["call"].tolist(), sy["kind"].tolist(),
                                           sy["target"].tolist(), sy["end_ns"].tolist(),
                                           strict=True):
            if not 0 <= c < nc or int(c_ret[c]) in WAIT_TIMEOUTS:
                continue
            froms: list[int] = []
            if kind == _SYNC_STREAM:
                streams = [target] if target >= 0 else self._stream_of_call(
                    c, handle_stream, default_stream)
                if streams is None:  # a drain: every stream done by the end of the wait
                    ends = trace.tasks["end_ns"]
                    for s in by_stream:
                        t = last_before(s, c)
                        if t >= 0 and 0 <= int(ends[t]) <= sy_end:
                            froms.append(t)
                else:
                    froms = [last_before(s, c) for s in streams]
            elif kind == _SYNC_DEVICE:  # target is the caller's context
                dev = int(objs["device"][target]) if 0 <= target < objs.rows else -1
                froms = [last_before(s, c) for s in by_stream if stream_dev.get(s) == dev]
            elif kind == _SYNC_EVENT:  # its latest record before the call
                lst = records.get(target, [])
                before = [t for t in lst if t_call[t] < c]
                froms = before[-1:]
            elif kind == _SYNC_JOIN and c not in joined_calls:
                # a stop_thread with no JOIN edge (an older trace): every thread whose last
                # call came before it
                me = int(c_thread[c])
                for th, mine in thread_calls.items():
                    if th != me and mine and mine[-1] < c:
                        froms.append(exit_of[mine[-1]])
            for f in froms:
                if f >= 0:
                    edge(f, nt + c)

        # --- threads whose start the trace holds (a START host edge): ordered exactly by
        #     the host edges below; the others (a trace of an older acl_lab, a C program's
        #     pthreads) are assumed forked from and joined by thread 0
        main = thread_calls.get(0, array("q"))
        for th, mine in thread_calls.items():
            if th == 0 or not mine or not main or th in started:
                continue
            i = bisect_left(main, mine[0])
            if i:
                edge(exit_of[main[i - 1]], nt + mine[0])
            i = bisect_left(main, mine[-1])
            if i < len(main):
                edge(exit_of[mine[-1]], nt + main[i])

        # --- the edges as one compressed sparse row table
        blocks_src.append(np.frombuffer(one_src, dtype=np.int64) if len(one_src)
                          else np.zeros(0, np.int64))
        blocks_dst.append(np.frombuffer(one_dst, dtype=np.int64) if len(one_dst)
                          else np.zeros(0, np.int64))
        n = self.n
        src = np.concatenate(blocks_src).astype(idt)
        dst = np.concatenate(blocks_dst).astype(idt)
        del blocks_src, blocks_dst
        order = np.argsort(src, kind="stable")
        self.indices = int_array(dst[order], small)
        del order
        self.indptr = int_array(np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n)))),
                            len(src) < 1 << 31)
        self.indeg = int_array(np.bincount(dst, minlength=n), small)

    def call_clocks(self, sources: set[int], targets: set[int]) -> dict[int, Clock]:
        """What each target call knows of the source calls: ``{thread: the latest source
        call of that thread that happens before it}`` (a source knows itself).

        One walk in a topological order (``_propagate``), with clocks over host threads that
        tick only at the sources (so they stay as small as the threads that made them).
        Source ``a`` happens before target ``b`` when ``clocks[b].get(thread of a, -1) >= a``
        (a thread's call ids grow in its program order). Does not consume the graph (``walk``
        does).
        """
        nt = self.nt
        thread = self.trace.calls["thread"]
        out: dict[int, Clock] = {}
        marks = bytearray(self.n)
        for c in sources | targets:
            if 0 <= c < self.nc:
                marks[nt + c] = 1

        def visit(u: int, clock: Clock) -> Clock:
            c = u - nt
            if c in sources:
                clock = dict(clock)
                clock[int(thread[c])] = c
            if c in targets:
                out[c] = clock
            return clock

        self._propagate(array("q", self.indeg), marks, visit)
        return out

    def _blocking(self, task: int) -> bool:
        c = int(self.trace.tasks["call"][task])
        args = self.trace.call_args(c) if 0 <= c < self.nc else []
        return len(args) > 2 and args[2] == 1

    def _stream_of_call(self, c: int, handle_stream: dict[int, int],
                        default_stream: dict[int, int]) -> list[int] | None:
        """The stream a wait with no recorded target was for, or None for a drain of all."""
        name = self.trace.call_name(c)
        args = self.trace.call_args(c)
        h: Any = None
        if name == "acl.rt.destroy_stream" and args:
            h = args[0]
        elif name == "acl.rt.memcpy_async" and len(args) > 5:
            h = args[5]
        if not isinstance(h, int):
            return None
        if h == 0:
            s = default_stream.get(int(self.trace.calls["ctx"][c]))
            return [s] if s is not None else None
        s = handle_stream.get(h)
        return [s] if s is not None else None

    def walk(self, on_task: Callable[[int, int, int, Clock], None], first: array[int]) -> None:
        """Visit nodes in a topological order, calling ``on_task`` for tasks with accesses."""
        nt = self.nt
        marks = bytearray(self.n)
        for u in range(nt):
            if first[u + 1] > first[u]:
                marks[u] = 1
        seqs: dict[int, int] = defaultdict(int)
        key = self.key

        def visit(u: int, clock: Clock) -> Clock:
            k = key[u]
            seq = seqs[k] + 1
            seqs[k] = seq
            clock = tick(clock, k, seq)
            on_task(u, k, seq, clock)
            return clock

        self._propagate(self.indeg, marks, visit)

    def _propagate(self, indeg: array[int], marks: bytearray,
                   visit: Callable[[int, Clock], Clock]) -> None:
        """The one happens-before walk: nodes in a topological order (earliest time first),
        each node's clock the join of its predecessors'; a marked node's clock is what
        ``visit(node, clock)`` returns. Consumes ``indeg``."""
        indptr, indices, time = self.indptr, self.indices, self.time
        n = self.n
        clocks: list[Clock | None] = [None] * n
        owned = bytearray(n)
        heap = [(time[i], i) for i in range(n) if indeg[i] == 0]
        heapq.heapify(heap)
        done = 0
        scan = 0
        empty: Clock = {}
        while done < n:
            if not heap:  # a cycle (should not happen): break it at the lowest node left
                while indeg[scan] < 0:
                    scan += 1
                heapq.heappush(heap, (time[scan], scan))
            _, u = heapq.heappop(heap)
            if indeg[u] < 0:
                continue
            indeg[u] = -1
            done += 1
            clock = clocks[u] or empty
            clocks[u] = None
            if marks[u]:
                clock = visit(u, clock)
            for v in indices[indptr[u]:indptr[u + 1]]:
                cv = clocks[v]
                if cv is None:
                    clocks[v] = clock
                elif cv is not clock:
                    if not owned[v]:
                        cv = dict(cv)
                        owned[v] = 1
                        clocks[v] = cv
                    join_into(cv, clock)
                if indeg[v] > 0:
                    indeg[v] -= 1
                    if indeg[v] == 0:
                        heapq.heappush(heap, (time[v], v))


def call_order(trace: Any, sources: set[int], targets: set[int]) -> dict[int, Clock]:
    """``_Graph.call_clocks`` over ``trace``'s happens-before graph: for each target call,
    ``{thread: latest source call of that thread ordered before it}``."""
    if not sources or not targets:
        return {t: {} for t in targets}
    return _Graph(trace).call_clocks(sources, targets)


def before(clocks: dict[int, Clock], trace: Any, a: int, b: int) -> bool:
    """Whether source call ``a`` happens before target call ``b`` (``call_order``)."""
    return clocks.get(b, {}).get(int(trace.calls["thread"][a]), -1) >= a


def _task_site(trace: Any, task: int) -> tuple[str, int]:
    return site(trace, int(trace.tasks["call"][task]))


def _alloc_site(trace: Any, alloc: int) -> tuple[str, int]:
    return site(trace, int(trace.allocs["call"][alloc]))


def _stream_name(trace: Any, oid: int) -> str:
    label = trace.string(int(trace.objects["label"][oid])).split(" of ")[0]
    c = int(trace.objects["call"][oid])
    if label.startswith("default stream") or c < 0:
        return f"the {label}" if label.startswith("default") else label
    f, ln = site(trace, c)
    return f"{label} (created at {f}:{ln})"


def _thread_name(trace: Any, th: int) -> str:
    return TraceIndex.of(trace).thread_name(th)


def _where(trace: Any, key: int) -> str:
    if key >= 0:
        return _stream_name(trace, key)
    return f"the host ({_thread_name(trace, thread_of_key(key))})"


def _describe(trace: Any, ref: Ref, write: bool) -> str:
    task = ref[2]
    c = int(trace.tasks["call"][task])
    f, ln = site(trace, c)
    kind = TASK_KINDS[int(trace.tasks["kind"][task])]
    verb = "writes" if write else "reads"
    how = "queued on" if ref[0] >= 0 else "done synchronously by"
    what = "copy" if kind in ("H2D", "D2H", "D2D", "H2H") else "task"
    return f"{trace.call_name(c)} at {f}:{ln} ({kind} {what} {how} {_where(trace, ref[0])}) {verb}"


def _race_finding(trace: Any, rs: list[_Race]) -> Finding:
    r = rs[0]
    tasks = trace.tasks
    c1, c2 = int(tasks["call"][r.first[2]]), int(tasks["call"][r.second[2]])
    f1, l1 = site(trace, c1)
    f2, l2 = site(trace, c2)
    a = trace.allocs
    af, al = _alloc_site(trace, r.alloc)
    acall = int(a["call"][r.alloc])
    api = trace.call_name(acall) if acall >= 0 else "?"
    size = int(a["requested"][r.alloc])
    hazard = ("write-write" if r.first_write and r.second_write else
              "read-after-write" if r.first_write else "write-after-read")
    n = len(rs)
    times = f" It happened {n} times at the same two lines (e.g. in a loop)." if n > 1 else ""
    msg = (f"Data race ({hazard}) on the {human_bytes(size)} buffer allocated at {af}:{al} "
           f"({api}): bytes [{r.lo}, {r.hi}) are touched by two operations that nothing "
           f"orders.{times}\n"
           f"  first:  {_describe(trace, r.first, r.first_write)}\n"
           f"  second: {_describe(trace, r.second, r.second_write)}\n"
           "Rule: tasks on different streams, and a stream and the host, run in any order "
           "unless an event (record_event + stream_wait_event) or a synchronize orders them; "
           "this run's timing is luck, not a guarantee.\n"
           f"Fix: {_race_fix(trace, r, (f1, l1), (f2, l2))}")
    calls = tuple(sorted({int(tasks["call"][x.first[2]]) for x in rs}
                         | {int(tasks["call"][x.second[2]]) for x in rs}))
    streams = tuple(sorted({k for x in rs for k in (x.first[0], x.second[0]) if k >= 0}))
    threads = tuple(sorted({int(trace.calls["thread"][c]) for c in calls}))
    ids = {"tasks": tuple(sorted({t for x in rs for t in (x.first[2], x.second[2])})),
           "allocs": tuple(sorted({x.alloc for x in rs})), "streams": streams,
           "threads": threads}
    return Finding("race", "error", msg, f2, l2, calls, ids, ((f1, l1), (f2, l2), (af, al)))


def _race_fix(trace: Any, r: _Race, s1: tuple[str, int], s2: tuple[str, int]) -> str:
    k1, k2 = r.first[0], r.second[0]
    calls = trace.calls
    th1 = int(calls["thread"][int(trace.tasks["call"][r.first[2]])])
    th2 = int(calls["thread"][int(trace.tasks["call"][r.second[2]])])
    x = f"the call at line {s1[1]}"
    y = f"the call at line {s2[1]}"
    threads = ""
    if th1 != th2:
        threads = (f" The two calls are made by different threads ({_thread_name(trace, th1)}"
                   f" and {_thread_name(trace, th2)}): the record_event must also be issued "
                   "before the stream_wait_event, so order the threads too (join the first, or "
                   "a threading.Event).")
    if k1 >= 0 and k2 >= 0:
        a, b = _stream_name(trace, k1), _stream_name(trace, k2)
        return (f"record an event on {a} after {x} (acl.rt.record_event(event, stream_a)) "
                f"and make {b} wait on it (acl.rt.stream_wait_event(stream_b, event)) before "
                f"{y}; or call acl.rt.synchronize_stream(stream_a) between them." + threads)
    if k1 >= 0:
        a = _stream_name(trace, k1)
        return (f"call acl.rt.synchronize_stream on {a} (or record an event after {x} and "
                f"acl.rt.synchronize_event it) before {y}, so the host only touches the "
                "buffer once the stream is done with it." + threads)
    if k2 >= 0:
        b = _stream_name(trace, k2)
        return (f"make sure {x} (on the host) has finished before {y} queues work on {b}: "
                "issue both from one thread, or join the first thread (threading.Event, "
                "Thread.join) before queueing." + threads)
    return (f"the two host threads touch the buffer without any ordering: finish {x} before "
            f"{y} (join the thread, or a threading.Event / Lock)." + threads)


# =============================================================================== waits
def waits_before_record(trace: Any) -> list[Finding]:
    """stream_wait_event before any record_event: 107000 (legacy) or a wait that does nothing."""
    ix = TraceIndex.of(trace)
    hits: dict[tuple[str, int, bool], list[int]] = defaultdict(list)
    # (each group holds one kind of diagnostic, in trace order: the two kinds are read apart)
    for c, _level, _text in ix.diags_of("wait_before_record"):
        if c >= 0:
            f, ln = ix.site(c)
            hits[(f, ln, True)].append(c)
    for c, _level, text in ix.diags_of("error"):
        if c >= 0 and "has not been recorded" in text and \
                ix.call_name(c) == "acl.rt.stream_wait_event":
            f, ln = ix.site(c)
            hits[(f, ln, False)].append(c)
    out: list[Finding] = []
    for (f, ln, new_mode), cs in sorted(hits.items()):
        out.append(_wait_finding(trace, f, ln, new_mode, cs))
    return out


def _event_of_call(trace: Any, c: int, arg: int,
                   events: dict[int, list[tuple[int, int]]] | None = None) -> int:
    """The event object passed as argument ``arg`` of call ``c`` (-1 if unknown)."""
    args = trace.call_args(c)
    h = args[arg] if len(args) > arg else None
    if events is None:
        events = _events_by_handle(trace)
    best = -1
    for created, oid in events.get(h, []) if isinstance(h, int) else []:
        if created <= c:
            best = oid
    return best


def _events_by_handle(trace: Any) -> dict[int, list[tuple[int, int]]]:
    """Event handle -> [(creating call, object id)] in creation order."""
    return TraceIndex.of(trace).objects_by_handle(_OBJ_EVENT)


def _wait_finding(trace: Any, f: str, ln: int, new_mode: bool, cs: list[int]) -> Finding:
    c = cs[0]
    events = _events_by_handle(trace)
    ev = _event_of_call(trace, c, 1, events)
    o = trace.objects
    ev_txt = "the event"
    ids: dict[str, tuple[int, ...]] = {}
    later = ""
    if ev >= 0:
        label = trace.string(int(o["label"][ev]))
        ec = int(o["call"][ev])
        ef, el = site(trace, ec)
        ev_txt = f"{label} (created at {ef}:{el} by {trace.call_name(ec)})"
        ids["events"] = (ev,)
        for r in TraceIndex.of(trace).calls_named("acl.rt.record_event"):
            r = int(r)
            if r > c and int(trace.calls["ret"][r]) == 0 and \
                    _event_of_call(trace, r, 0, events) == ev:
                rf, rl = site(trace, r)
                later = (f" It is recorded only later, by acl.rt.record_event at {rf}:{rl}: "
                         "move that record (after the work to wait for) before the wait.")
                break
    n = len(cs)
    times = f" ({n} times at this line)" if n > 1 else ""
    if new_mode:
        msg = (f"acl.rt.stream_wait_event at {f}:{ln}{times} waits on {ev_txt}, a new-mode "
               "event (create_event_ex_with_flag) that had never been recorded: the call "
               "returns success but the wait does nothing, so it orders nothing — the stream "
               "goes ahead without waiting for anything. Rule: record first "
               "(acl.rt.record_event(event, producer_stream) after the producer's work), then "
               "wait; a new-mode wait uses the latest record made before it." + later +
               " Fix: call acl.rt.record_event on the producing stream before "
               "acl.rt.stream_wait_event.")
        sev = "warning"
    else:
        msg = (f"acl.rt.stream_wait_event at {f}:{ln}{times} returned "
               f"{ErrorCode.ACL_ERROR_RT_PARAM_INVALID:d} "
               f"(ACL_ERROR_RT_PARAM_INVALID): {ev_txt} had never been recorded. Rule: a "
               "legacy event (create_event / create_event_with_flag) must be recorded with "
               "acl.rt.record_event before any stream waits on it; waiting first is an error, "
               "not a wait, so nothing was ordered." + later +
               " Fix: call acl.rt.record_event(event, producer_stream) after the work to wait "
               "for, then acl.rt.stream_wait_event(consumer_stream, event), and check ret.")
        sev = "warning"
    return Finding("wait_before_record", sev, msg, f, ln, tuple(cs), ids, ((f, ln),))


# =============================================================================== deadlocks
_THREAD_RE = re.compile(r"^thread (\d+) ")


def deadlocks(trace: Any) -> list[Finding]:
    """Deadlocks the runtime detected (each one ended a wait with DeadlockError).

    The message gives the stuck thread and call, then the wait-for chain from the trace —
    each stream's stuck task with the call (file:line) that queued it, the event it waits
    for and the record/reset calls involved — ending in a cycle or an unsatisfiable wait.
    """
    return [_deadlock_finding(trace, cid, text)
            for cid, _level, text in TraceIndex.of(trace).diags_of("deadlock")]


def _deadlock_finding(trace: Any, cid: int, report: str) -> Finding:
    file, line = site(trace, cid) if cid >= 0 else ("", 0)
    lines = report.splitlines()
    summary = lines[0].removeprefix("deadlock: ") if lines else "a wait can never finish"
    sites: list[tuple[str, int]] = [(file, line)]
    calls: list[int] = [cid] if cid >= 0 else []
    ids: dict[str, set[int]] = defaultdict(set)
    parts = [f"Deadlock: {summary}."]
    if cid >= 0:
        th = int(trace.calls["thread"][cid])
        ids["threads"].add(th)
        parts.append(f"Stuck: {_thread_name(trace, th)} in {trace.call_name(cid)} at "
                     f"{file}:{line}, which would never return on real hardware.")
    chain, rule = _wait_chain(trace, cid, ids, calls) if cid >= 0 else ([], "")
    if chain:
        parts.append("Wait-for chain:")
        parts.extend(f"  {i + 1}. {text}" for i, text in enumerate(chain))
    others = [ln for ln in lines[1:] if "blocked in the emulator" in ln]
    for ln in others:
        m = _THREAD_RE.match(ln.strip())
        if m:
            th = int(m.group(1))
            ids["threads"].add(th)
            oc = _last_wait_call(trace, th, cid)
            if oc >= 0:
                of, ol = site(trace, oc)
                sites.append((of, ol))
                calls.append(oc)
                parts.append(f"Also stuck: {_thread_name(trace, th)} in "
                             f"{trace.call_name(oc)} at {of}:{ol}.")
                continue
        parts.append("Also stuck: " + ln.strip())
    if not chain:
        parts.append("Runtime report:\n" + "\n".join(lines[1:]))
    if rule:
        parts.append(rule)
    for c in calls[1:]:
        s = site(trace, c)
        if s not in sites:
            sites.append(s)
    return Finding("deadlock", "error", "\n".join(parts), file, line,
                   tuple(dict.fromkeys(calls)), {k: tuple(sorted(v)) for k, v in ids.items()},
                   tuple(sites))


_WAITS = ("acl.rt.synchronize", "acl.rt.process_report", "acl.util.stop_thread",
          "acl.rt.destroy", "acl.rt.reset_device", "acl.finalize")


def _last_wait_call(trace: Any, th: int, cid: int) -> int:
    calls = trace.calls
    limit = int(calls["end_ns"][cid]) if cid >= 0 else 1 << 62
    best = -1
    for c in range(calls.rows):
        if int(calls["thread"][c]) == th and int(calls["start_ns"][c]) <= limit and \
                trace.call_name(c).startswith(_WAITS):
            best = c
    return best


#: What a stream's stuck task waits for (``Blocker.kind``).
NEVER_RECORDED = "never_recorded"    # a wait on an event no record_event precedes
RECORD_STUCK = "record_stuck"        # the record it needs is queued behind a stuck task
RERECORD_STUCK = "rerecord_stuck"    # reset after the record; the next record is stuck
RESET_FOREVER = "reset_forever"      # reset after the record, and no record comes later
RECORDED = "recorded"                # the record ran: nothing in the trace explains the wait
CALLBACK = "callback"                # a blocking callback nobody will run
OTHER_TASK = "other_task"            # any other task kind


@dataclass(frozen=True)
class Blocker:
    """What the stuck task ``head`` of a stream waits for: one step of a deadlock's chain.

    ``record`` is the last record of the event queued before the wait, ``reset`` the reset
    that undid it, ``next_record`` the record the wait needs after that reset and
    ``next_stream`` the stream to follow (``RECORD_STUCK``: the record's, ``RERECORD_STUCK``:
    the next record's); -1 where there is none. The deadlock finding writes these steps as
    sentences, the wait graph (``views.graphs``) as edges.
    """

    kind: str
    head: int
    event: int = -1
    record: int = -1
    reset: int = -1
    next_record: int = -1
    next_stream: int = -1


def stuck_on(trace: Any, head: int) -> Blocker:
    """What the stuck task ``head`` waits for (see ``Blocker``).

    A wait needs the last record of its event queued before it; a reset of the event placed
    between that record and the wait undoes it, and then the wait needs the first record
    queued after the reset (``scheduler.wait_resolves_at``, read back from the trace).
    """
    t = trace.tasks
    kinds, events, starts, streams = t["kind"], t["event"], t["start_ns"], t["stream"]
    kind = TASK_KINDS[int(kinds[head])]
    if kind == "callback":
        return Blocker(CALLBACK, head)
    if kind != "event_wait":
        return Blocker(OTHER_TASK, head)
    ev = int(events[head])
    is_ev = events == ev
    recs = np.nonzero(is_ev[:head] & (kinds[:head] == TaskKind.EVENT_RECORD))[0]
    if len(recs) == 0:
        return Blocker(NEVER_RECORDED, head, ev)
    rec = int(recs[-1])
    if int(starts[rec]) < 0:
        return Blocker(RECORD_STUCK, head, ev, rec, next_stream=int(streams[rec]))
    resets = [int(x) for x in np.nonzero(is_ev & (kinds == TaskKind.EVENT_RESET))[0]
              if rec < x < head and int(starts[x]) >= 0]
    if not resets:
        return Blocker(RECORDED, head, ev, rec)
    later = [int(x) for x in np.nonzero(is_ev & (kinds == TaskKind.EVENT_RECORD))[0]
             if x > resets[0]]
    if later and int(starts[later[0]]) < 0:
        return Blocker(RERECORD_STUCK, head, ev, rec, resets[0], later[0],
                       int(streams[later[0]]))
    return Blocker(RESET_FOREVER, head, ev, rec, resets[0])


def _wait_chain(trace: Any, cid: int, ids: dict[str, set[int]],
                calls: list[int]) -> tuple[list[str], str]:
    """Each stuck stream's blocking task, followed from the waiting call; and the rule."""
    tasks = trace.tasks
    nt = tasks.rows
    t_stream, t_call = tasks["stream"], tasks["call"]
    t_start, t_end, t_kind, t_event = (tasks["start_ns"], tasks["end_ns"], tasks["kind"],
                                       tasks["event"])
    name = trace.call_name(cid)
    args = trace.call_args(cid)

    def stuck_head(s: int) -> int:
        """The stream's first task queued before the call that has not run to its end."""
        mine = TraceIndex.of(trace).stream_tasks.get(s)
        if mine is None:
            return -1
        stuck = np.nonzero((t_call[mine] < cid)
                           & ((t_start[mine] < 0) | (t_end[mine] < 0)))[0]
        return int(mine[stuck[0]]) if len(stuck) else -1

    def stream_by_handle(h: Any) -> int:
        o = trace.objects
        if h == 0:
            ctx = int(trace.calls["ctx"][cid])
            for i in range(o.rows):
                if int(o["kind"][i]) == _OBJ_STREAM and int(o["ctx"][i]) == ctx and \
                        trace.string(int(o["label"][i])).startswith("default stream"):
                    return i
        for i in range(o.rows):
            if int(o["kind"][i]) == _OBJ_STREAM and int(o["handle"][i]) == h:
                return i
        return -1

    start: list[int] = []
    if name.startswith(("acl.rt.synchronize_stream", "acl.rt.destroy_stream")) and args:
        s = stream_by_handle(args[0])
        if s >= 0:
            start = [s]
    elif name.startswith("acl.rt.synchronize_event"):
        ev = _event_of_call(trace, cid, 0)
        recs = [t for t in range(nt) if int(t_event[t]) == ev and int(t_call[t]) < cid
                and int(t_kind[t]) == TaskKind.EVENT_RECORD]
        if recs:
            start = [int(t_stream[recs[-1]])]
    elif not name.startswith(("acl.rt.process_report", "acl.util.stop_thread")):
        start = sorted({int(t_stream[t]) for t in range(nt) if int(t_stream[t]) >= 0
                        and int(t_call[t]) < cid and int(t_start[t]) < 0})
    out: list[str] = []
    rule = ""
    first = True
    for s0 in start:
        seen: list[int] = []
        s = s0
        while s >= 0:
            if s in seen:
                out.append(f"... which is {_stream_name(trace, s)} again: a cycle, so none of "
                           "these streams can ever move.")
                rule = ("Rule: a stream runs its tasks in order, so a wait queued before the "
                        "record it depends on (directly or through other streams) can never "
                        "finish. Fix: queue each record_event before any wait that depends on "
                        "it, or reset events only after every wait on them has run.")
                break
            seen.append(s)
            ids["streams"].add(s)
            head = stuck_head(s)
            who = _thread_name(trace, int(trace.calls["thread"][cid]))
            prefix = (f"{who} waits (in {name}) for {_stream_name(trace, s)}, "
                      if first else f"{_stream_name(trace, s)}, ")
            first = False
            if head < 0:
                out.append(prefix + "which has no stuck task in the trace.")
                break
            ids["tasks"].add(head)
            hc = int(t_call[head])
            calls.append(hc)
            hf, hl = site(trace, hc)
            b = stuck_on(trace, head)
            if b.event >= 0:
                ev = b.event
                ids["events"].add(ev)
                evl = trace.string(int(trace.objects["label"][ev]))
                text = (prefix + f"which is stuck at its stream_wait_event on {evl} queued by "
                        f"{trace.call_name(hc)} at {hf}:{hl}")
                if b.kind == NEVER_RECORDED:
                    out.append(text + ", and that event is never recorded.")
                    break
                rc = int(t_call[b.record])
                calls.append(rc)
                rf, rl = site(trace, rc)
                if b.kind == RECORD_STUCK:
                    out.append(text + f"; the record it needs (acl.rt.record_event at {rf}:{rl}) "
                               f"is queued on {_stream_name(trace, b.next_stream)} behind "
                               "a task that cannot run:")
                    s = b.next_stream
                    continue
                zc = int(t_call[b.reset]) if b.reset >= 0 else -1
                if b.kind == RERECORD_STUCK:
                    nc = int(t_call[b.next_record])
                    zf, zl = site(trace, zc)
                    rf, rl = site(trace, nc)
                    calls.extend((zc, nc))
                    text += (f"; the event was reset by acl.rt.reset_event at {zf}:{zl}, so "
                             f"the wait needs the next record, acl.rt.record_event at "
                             f"{rf}:{rl}, which is queued on "
                             f"{_stream_name(trace, b.next_stream)} behind a task that "
                             "cannot run:")
                    out.append(text)
                    s = b.next_stream
                    continue
                if b.kind == RESET_FOREVER:
                    calls.append(zc)
                    zf, zl = site(trace, zc)
                    out.append(text + f"; the event was recorded by acl.rt.record_event at "
                               f"{rf}:{rl}, then reset by acl.rt.reset_event at {zf}:{zl} "
                               f"(on {_stream_name(trace, int(t_stream[b.reset]))}) before "
                               "this wait ran, and no later record_event is queued"
                               ": this wait can never be satisfied.")
                    rule = ("Rule: reset_event returns the event to 'not recorded'; a wait "
                            "queued after the reset needs a new record_event. Fix: reset the "
                            "event only after every stream that waits on it has waited (reset "
                            "it on the waiting stream right after stream_wait_event), or record "
                            "it again before the wait.")
                else:
                    out.append(text + f" (record at {rf}:{rl}).")
                break
            if b.kind == CALLBACK:
                out.append(prefix + f"which is held by a blocking callback launched by "
                           f"{trace.call_name(hc)} at {hf}:{hl}: it can only run in its "
                           "subscribed thread's acl.rt.process_report, and that thread cannot "
                           "call it (it has exited, is not subscribed, or is the one waiting).")
                rule = ("Rule: ACL_CALLBACK_BLOCK holds the stream until the callback returns, "
                        "and the callback runs only inside acl.rt.process_report of the thread "
                        "subscribed to that stream. Fix: keep a separate report thread "
                        "subscribed and calling process_report until after the last "
                        "synchronize, and unsubscribe only then.")
                break
            out.append(prefix + f"which is stuck at task {head} "
                       f"({TASK_KINDS[int(t_kind[head])]}) queued by "
                       f"{trace.call_name(hc)} at {hf}:{hl}.")
            break
    return out, rule


# ============================================================================ event resets
def resets_unordered(trace: Any) -> list[Finding]:
    """A reset_event that nothing orders against the records and waits around it: after the
    event's last record queued before it and the waits on that record queued between the two,
    and before the next record queued after it.

    Without that order the outcome is the hardware's timing, not the program's: the reset may
    run before the record it follows in the program (it clears nothing) or after a record it
    precedes (it clears that one), and a stream waiting on the record then waits forever.
    One run shows one of these; this finding is there on every run. A reset on the stream
    that records (FIFO), on a stream after its own wait, or after the host synchronized the
    waiting streams is ordered.
    """
    tasks = trace.tasks
    if not tasks.rows:
        return []
    kinds = np.asarray(tasks["kind"])
    events = np.asarray(tasks["event"])
    pairs: list[tuple[int, int, int]] = []  # (task before, task after, the reset)
    is_record = kinds == TaskKind.EVENT_RECORD
    for r in np.nonzero(kinds == TaskKind.EVENT_RESET)[0].tolist():
        ev = int(events[r])
        if ev < 0:
            continue
        same = np.nonzero(events == ev)[0]
        recs = same[is_record[same] & (same < r)]
        if len(recs):
            rec = int(recs[-1])
            pairs.append((rec, r, r))
            pairs += [(int(w), r, r) for w in
                      same[(kinds[same] == TaskKind.EVENT_WAIT) & (same > rec) & (same < r)]]
        later = same[is_record[same] & (same > r)]
        if len(later):
            pairs.append((r, int(later[0]), r))
    if not pairs:
        return []
    g = _Graph(trace)
    marked = np.zeros(g.nt, dtype=np.int64)
    marked[[t for p in pairs for t in p[:2]]] = 1
    first = int_array(np.concatenate(([0], np.cumsum(marked))))
    seen: dict[int, tuple[int, int, Clock]] = {}

    def on_task(task: int, key: int, seq: int, clock: Clock) -> None:
        seen[task] = (key, seq, clock)

    g.walk(on_task, first)
    loose: dict[int, list[int]] = defaultdict(list)  # reset -> the tasks it is loose against
    for a, b, r in pairs:
        if a in seen and b in seen and seen[a][0] != seen[b][0] and \
                not ordered(seen[b][2], seen[a][0], seen[a][1]):
            loose[r].append(b if a == r else a)
    by_site: dict[tuple[str, int], list[int]] = defaultdict(list)
    for r in loose:
        by_site[_task_site(trace, r)].append(r)
    return [_reset_finding(trace, f, ln, rs, loose) for (f, ln), rs in sorted(by_site.items())]


def _reset_finding(trace: Any, f: str, ln: int, resets: list[int],
                   loose: dict[int, list[int]]) -> Finding:
    r = resets[0]
    t_stream, kinds = trace.tasks["stream"], trace.tasks["kind"]
    after, before = [], []
    for a in loose[r]:
        af, al = _task_site(trace, a)
        name = _stream_name(trace, int(t_stream[a]))
        if int(kinds[a]) != TaskKind.EVENT_RECORD:
            after.append(f"the wait at {af}:{al} (on {name})")
        elif a < r:
            after.append(f"the record at {af}:{al} (on {name})")
        else:
            before.append(f"the next record at {af}:{al} (on {name})")
    loose_txt = " and ".join(
        ([f"not ordered after {' or '.join(after)}"] if after else [])
        + ([f"not ordered before {' or '.join(before)}"] if before else []))
    n = len(resets)
    times = f" ({n} times at this line)" if n > 1 else ""
    msg = (f"acl.rt.reset_event at {f}:{ln}{times} (on "
           f"{_stream_name(trace, int(t_stream[r]))}) is {loose_txt}: nothing in the program "
           "fixes which runs first. Depending on timing the reset clears nothing, or clears a "
           "record a waiting stream still needs, and that stream waits forever; this run "
           "showed only one of these. Rule: reset an event where it is ordered after its "
           "record and every wait on it, and before the next record: on the recording stream "
           "(after the waits were synchronized), or on the last waiting stream after its "
           "wait. Fix: put acl.rt.reset_event on the stream that records the event, after "
           "acl.rt.synchronize_stream of every stream that waits on it.")
    calls = tuple(int(trace.tasks["call"][x]) for x in resets)
    sites = ((f, ln), *(_task_site(trace, a) for a in loose[r]))
    return Finding("reset_unordered", "warning", msg, f, ln, calls,
                   {"tasks": (*resets, *loose[r])}, tuple(dict.fromkeys(sites)))


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (races, waits_before_record,
                                                      resets_unordered, deadlocks)
