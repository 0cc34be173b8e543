"""Task shedding: which finished tasks a trace over its limit can leave out.

``Recorder`` starts a ``TaskShedder`` once the trace reaches three quarters of its limit
(see ``recorder``); from then on it hands the shedder the runtime's task, edge, sync and call
events, and removes the rows the shedder decided out (``dead_tids``, ``dead_cids``,
``dead_sync_cids``) in batches. The shedder never touches a table itself.

The clocks are the race check's (``happens_before``): leaving a task out must never take a
happens-before path away from two kept accesses (a false race) nor add one (a hidden race).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..runtime.kinds import SyncKind, TaskKind
from .happens_before import WAIT_TIMEOUTS, Clock, covers, host_key, join

#: While shedding, the first this many tasks of each signature (stream, kind, call site,
#: allocation sites touched, read/write) are kept; later ones may be left out.
TASK_KEEP_PER_SITE = 4

# Short names for the kinds (``runtime.kinds``) the shedder compares on every task and sync
# it sees: a module constant costs a tenth of an enum member's read.
_RECORD, WAIT, _RESET, _CALLBACK = (TaskKind.EVENT_RECORD, TaskKind.EVENT_WAIT,
                                    TaskKind.EVENT_RESET, TaskKind.CALLBACK)
_SYNC_STREAM, _SYNC_DEVICE, _SYNC_EVENT, _SYNC_REPORT, _SYNC_JOIN = (
    SyncKind.STREAM, SyncKind.DEVICE, SyncKind.EVENT, SyncKind.REPORT, SyncKind.JOIN)

#: What a point of the program is known to come after, as the race check will see it:
#: timeline key -> the latest *kept* task with memory accesses on that timeline. Streams are
#: keyed by object id, the host thread by ``_HOST``; tuple keys are tokens for what happened
#: before shedding started (all of it kept): ``("thread",)``, ``("stream", oid)``,
#: ``("task", id)``. Clocks are shared, never changed once made.
Know = Clock
#: A task's signature (stream, kind, call site, (allocation site, write) per access) and the
#: newest epoch of the allocation sites it touches when it was queued.
Sig = tuple[tuple[Any, ...], int]


class TaskShedder:
    """Decides, while shedding, which finished tasks can be left out of the trace.

    Why leaving a task out never makes the race check report a false race: the check orders
    two kept accesses when a happens-before path joins them. A path through a left-out task T
    on stream S runs (a) along S, (b) from T's submitting call, or (c) from the event record
    a left-out wait waited for. (a) still holds between the kept tasks around T (stream order
    by id). (b) is the host thread's program order, which every later call, sync and task
    submission of that thread carries anyway. (c) is the one thing only the wait carries, so
    a wait is left out only when its record's clock adds nothing to what its stream and the
    thread already knew (``covers``); a record is left out only when no kept wait refers to
    it, no later wait can (a newer record exists, every wait is placed), and a host sync by
    its own thread that resolved to it finds the same knowledge at the previous kept record;
    a host sync is left out only when it adds nothing to what the thread knew.

    The clocks are ``happens_before``'s, as in ``checks.ordering``: stream order, submission,
    event edges, stream/device/event syncs and host tasks, one clock per host thread. What
    the check orders beyond them (a thread's start after the first thread's calls, a join of
    a thread's last call, a callback's host code after its stream, a blocking callback's
    stream after the host, a sync that a later call's task overtook) enters these clocks as a
    fresh point of a "more" timeline: two clocks that agree on it come after the same such
    point, so ``covers`` stays true only where the check's clocks agree too. Calls the thread
    edges attach to stay: every thread's first call while shedding, and its newest call
    until it makes another one (``hold_call``). A wait whose streams the trace does not name
    (destroy_stream, a pageable copy's drain) is such a point too. What the clocks still
    cannot follow (a call that both waits and queues work, calls ending out of order) stops
    task shedding: from then on every task is kept, which is always safe.

    What can be missed (and the ``trace_truncated`` warning says so): a race whose two
    accesses are both at sites already kept ``TASK_KEEP_PER_SITE`` times (since the last new
    signature on their allocation sites), and a race whose *earlier* access is an instance of
    an old site left out before the new site appeared.
    """

    def __init__(self, rec: Any) -> None:
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
        #: Undecided stream tasks per stream (in id order), and host tasks per open call.
        self.pending: dict[int, deque[Any]] = {}
        self.host: dict[int, list[Any]] = {}
        #: Undecided task id -> (the thread's clock when it was queued, signature).
        self.info: dict[int, tuple[Know, Sig]] = {}
        #: Stream -> clock after its last decided task.
        self.tail: dict[int, Know] = {}
        #: Host thread -> its clock (made at its first call while shedding).
        self.thr: dict[int, Know] = {}
        #: Open call -> its thread; per thread its open calls (nested ones: inside a callback)
        #: and its newest call; the first call of each thread while shedding (never dropped:
        #: the race check's thread start edge goes to it).
        self.open_thread: dict[int, int] = {}
        self.stack: dict[int, list[int]] = {}
        self.last_call: dict[int, int] = {}
        self.firsts: set[int] = set()
        #: Per thread, its newest call when it may be left out: it is, once the thread makes
        #: another call (the race check's join edge leaves a thread's *last* call).
        self.held: dict[int, tuple[int, bool, int]] = {}
        #: A thread other than the first made a call since the first thread's newest call.
        self.worker_called = False
        #: Points of each thread / stream where the race check knows more than these clocks
        #: model (a thread's start and joins, callbacks): each gets a fresh point on the
        #: timeline ``("more", thread)`` / ``("more-stream", stream)``, so two clocks compare
        #: equal on what is not modelled only when they come after the same such point.
        self.more: dict[Any, int] = {}
        #: Stream -> call of its last decided task (a sync orders only tasks of earlier calls).
        self.tail_call: dict[int, int] = {}
        #: Event record / reset id -> the thread that queued it (until its row is decided).
        self.rec_thread: dict[int, int] = {}
        #: Blocking callback tasks whose callback ran (their stream then waited for the host).
        self.blocking: set[int] = set()
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
        #: Call id -> [undecided tasks, kept tasks, its thread]; its return code once it ended.
        self.call_tasks: dict[int, list[int]] = {}
        self.call_ret: dict[int, int] = {}
        #: Something an event row decision waits for changed (see ``_event_rows``).
        self.ev_dirty = False
        #: Syncs per open call: (kind, target).
        self.syncs: dict[int, list[tuple[int, int]]] = {}
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
        del view
        calls = rec.tables["calls"]
        #: Threads that made calls before shedding.
        self.old_threads = set(np.unique(np.frombuffer(calls.buf, dtype=calls.dtype)["thread"])
                               .tolist()) | {0}
        self.streams = set(self.old_streams)
        for obj in self.session.objects:  # waits queued before shedding, not placed yet
            for t in getattr(obj, "pending", ()) if hasattr(obj, "blocked_by") else ():
                if t.kind == WAIT and t.event is not None:
                    self.unplaced.setdefault(t.event.oid, set()).add(t.id)

    # ----------------------------------------------------------------- events from hooks
    def stop(self, why: str) -> None:
        """Keep every task from now on (undecided ones included)."""
        if self.off:
            return
        self.off = why
        for attr in ("pending", "info", "tail", "rec_k", "edge_of", "waits_on", "unplaced",
                     "ev_queue", "ev_kept", "call_tasks", "call_ret", "alloc_sites", "needed",
                     "synced", "kept", "seen", "site_epoch", "host", "syncs", "thr", "open_thread",
                     "stack", "last_call", "firsts", "held", "more", "tail_call", "rec_thread",
                     "blocking"):
            getattr(self, attr).clear()

    def _more(self, key: Any) -> Know:
        """A fresh point of the "more than modelled" timeline ``key`` (see ``more``)."""
        n = self.more.get(key, 0) + 1
        self.more[key] = n
        return {key: n}

    def on_call_begin(self, cid: int, th: int) -> bool:
        """A call began on thread ``th``; returns whether it is the thread's first here."""
        self.open_thread[cid] = th
        stack = self.stack.get(th)
        if stack is None:
            stack = self.stack[th] = []
        known = self.thr.get(th)
        first = known is None
        if known is None:
            # A thread from before shedding knows its own past; a new one starts after the
            # first thread's calls so far (the race check's thread start edge) and more.
            start: Know = ({("thread", th): 1} if th in self.old_threads
                           else self.thr.get(0, {}))
            clk = join(start, self._more(("more", th)))
            if th:
                self.firsts.add(cid)
        else:
            clk = known
        if not first and stack:
            # a call inside an open one: a host callback's code, after its stream's work
            clk = join(clk, self._more(("more", th)))
        if th == 0:
            if self.worker_called:  # the race check may join a thread that ended here
                self.worker_called = False
                clk = join(clk, self._more(("more", 0)))
        else:
            self.worker_called = True
            held = self.held.pop(th, None)
            if held is not None:  # its thread goes on: no longer its last call
                self._release(*held)
        self.thr[th] = clk
        stack.append(cid)
        self.last_call[th] = cid
        return first

    def hold_call(self, cid: int, th: int, sync: bool, nbytes: int) -> None:
        """Leave out call ``cid`` (and its syncs when ``sync``) of thread ``th`` as soon as
        it is not the thread's last call (at once for the first thread)."""
        if th and self.last_call.get(th) == cid:
            self.held[th] = (cid, sync, nbytes)
        else:
            self._release(cid, sync, nbytes)

    def _release(self, cid: int, sync: bool, nbytes: int) -> None:
        self.dead_cids.append(cid)
        if sync:
            self.dead_sync_cids.append(cid)
        self.dead_bytes += nbytes

    def on_callback(self, task: int, th: int) -> None:
        """A host callback ran on thread ``th``: the thread now comes after its stream's work
        queued before it, and a blocking callback's stream after the thread (not modelled:
        fresh "more" points)."""
        if th in self.thr:
            self.thr[th] = join(self.thr[th], self._more(("more", th)))
        t = self._task(task)
        if t is not None and t.stream is not None and getattr(t, "block", False):
            s = t.stream.oid
            if task < self.rec.shed_tid:
                self.tail[s] = join(self._tail(s), self._more(("more-stream", s)))
            else:
                self.blocking.add(task)

    def on_host_edge(self, src: int, dst: int) -> None:
        """Another thread's call ``src`` happens before call ``dst`` (a start, a join, a
        lock, an event, a queue item: ``HostEdge``): the thread of ``dst`` now comes after
        what that thread had done (not modelled: a fresh "more" point, as for callbacks)."""
        th = self.open_thread.get(dst)
        if th is not None and th in self.thr:
            self.thr[th] = join(self.thr[th], self._more(("more", th)))

    def _task(self, tid: int) -> Any:
        for dq in self.pending.values():
            for t in dq:
                if t.id == tid:
                    return t
        objs = self.session.objects
        for obj in objs:
            if hasattr(obj, "blocked_by"):
                b = obj.blocked_by
                if b is not None and b.id == tid:
                    return b
        return None

    def on_task(self, t: Any) -> None:
        """A task was queued: note its signature and the thread's clock."""
        kind = t.kind
        s = t.stream
        cid = t.call
        th = self.open_thread.get(cid)
        if th is None:
            self.stop("a task queued outside its call")
            return
        if kind == _CALLBACK:
            self.needed.add(t.id)  # its callbacks row names it
        if self._site[0] != cid:
            rec = self.rec
            call_site = rec.newest_site
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
        self.info[t.id] = (self.thr[th], (sig, epoch))
        ct = self.call_tasks.get(cid)
        if ct is None:
            self.call_tasks[cid] = [1, 0, th]
        else:
            ct[0] += 1
        if s is None:
            host = self.host.get(cid)
            if host is None:
                self.host[cid] = [t]
            else:
                host.append(t)
            return
        dq = self.pending.get(s.oid)
        if dq is None:
            dq = self.pending[s.oid] = deque()
            self.streams.add(s.oid)
        dq.append(t)
        if kind in (_RECORD, _RESET):
            self.rec_thread[t.id] = th
            q = self.ev_queue.get(t.event.oid)
            if q is None:
                q = self.ev_queue[t.event.oid] = deque()
            q.append(t)
        elif kind == WAIT:
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
        start = self.rec.shed_tid
        if wait >= start:
            self.edge_of[wait] = record
            if record >= start:
                self.waits_on[record] = self.waits_on.get(record, 0) + 1
        elif record >= start:
            self.needed.add(record)  # a wait from before shedding: kept, so is its record

    def on_call_end(self, cid: int, ret: int) -> None:
        """A call ended (effects applied up to the caller's clock): decide what finished."""
        self.settle()
        th = self.open_thread.pop(cid, None)
        if th is None:
            self.stop("a call that ended twice")
            return
        stack = self.stack[th]
        if stack and stack[-1] == cid:
            stack.pop()
        else:
            self.stop("calls of one thread that end out of order")
            return
        syncs = self.syncs.pop(cid, None)
        if syncs:
            if ret not in WAIT_TIMEOUTS:
                needed = [self._apply_sync(th, cid, kind, target) for kind, target in syncs]
                if any(t.call == cid for dq in self.pending.values() for t in dq):
                    self.stop("a call that both waits and queues work")
                elif (not any(needed) and ret == 0 and cid not in self.call_tasks
                      and cid not in self.firsts):
                    # The host already knew everything this wait tells: the race check needs
                    # neither its sync rows nor (if nothing else names it) its call.
                    tabs = self.rec.tables
                    self.hold_call(cid, th, True, tabs["syncs"].size * len(syncs)
                                   + tabs["calls"].size + 2 * tabs["args"].size)
            if self.off:
                return
        host = self.host.pop(cid, None)
        if host:
            for t in host:
                self._decide_host(t, th)
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
        if task < self.rec.shed_tid:
            return {("task", task): 1}
        return self.rec_k.get(task)

    def _apply_sync(self, th: int, cid: int, kind: int, target: int) -> bool:
        """Host thread ``th`` waited in call ``cid``: it now knows what the waited-for work
        knew. Returns whether the sync is needed (False: the thread knew all of that)."""
        objs = self.session.objects
        before = self.thr[th]
        if kind == _SYNC_EVENT:
            r = objs[target].last_record if 0 <= target < len(objs) else None
            if r is not None and r.call > cid:  # recorded by another thread meanwhile
                r = next((x for x in reversed(objs[target].records) if x.call < cid), None)
            if r is None:
                return False
            k = self._k_of(r.id)
            if k is None:
                self.stop("an event sync on a record not finished")
                return True
            after = self.thr[th] = join(before, k)
            if after is before:
                return False
            if r.id >= self.rec.shed_tid:
                if self.rec_thread.get(r.id, th) == th:
                    self.synced.add(r.id)
                else:
                    self.needed.add(r.id)  # synced by another thread than its own: keep
            return True
        if kind == _SYNC_REPORT:
            return True
        if kind == _SYNC_JOIN:  # stop_thread: after the joined thread (not modelled)
            self.thr[th] = join(before, self._more(("more", th)))
            return True
        if kind == _SYNC_STREAM and target >= 0:
            streams = [target]
        elif kind == _SYNC_DEVICE and 0 <= target < len(objs):
            dev = objs[target].device.index
            streams = [s for s in self.streams if objs[s].ctx.device.index == dev]
        else:
            # A wait whose stream the trace does not name (destroy_stream, a pageable copy):
            # the race check finds it from the call's arguments, or orders the host after
            # every stream done by then; either way more than these clocks model.
            self.thr[th] = join(before, self._more(("more", th)))
            return True
        clk = before
        for s in streams:
            dq = self.pending.get(s)
            if dq and dq[0].call < cid:
                self.stop("a sync before its stream's tasks finished")
                return True
            if self.tail_call.get(s, -1) > cid:
                # a later call's task is decided already: its clock is not the one the sync
                # waited for; the thread learns something not modelled
                clk = join(clk, self._more(("more", th)))
            else:
                clk = join(clk, self._tail(s))
        self.thr[th] = clk
        return clk is not before

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
                    if t.kind == WAIT:
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
            k = join(self._tail(s), snap)
            self.tail[s] = self.rec_k[t.id] = k  # its row is decided in _event_rows
            self.tail_call[s] = t.call
            self.ev_dirty = True
            return
        snap, sig = self.info.pop(t.id)
        before = join(self._tail(s), snap)
        keep = self._must_keep(t, sig)
        k = before
        if kr is not None:
            r = self.edge_of.pop(t.id)
            if not keep and not covers(before, kr):
                keep = True  # the wait brings its stream new ordering: it must stay
            k = join(before, kr)
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
        if kind == _CALLBACK and t.id in self.blocking:  # the stream waited for host code
            self.blocking.discard(t.id)
            k = join(k, self._more(("more-stream", s)))
        self.tail[s] = k
        self.tail_call[s] = t.call

    def _decide_host(self, t: Any, th: int) -> None:
        """A synchronous task (on no stream) of thread ``th``'s call that just ended."""
        sig = self.info.pop(t.id)[1]
        if t.end < 0 or self._must_keep(t, sig):
            if t.accesses:
                k = dict(self.thr[th])
                k[host_key(th)] = t.id
                self.thr[th] = k
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
        self.rec_thread.pop(t.id, None)
        keep = self._must_keep(t, sig)
        if not keep and t.id in self.synced:
            # A host sync found this record; without it the check finds the previous kept one.
            prev = self._ev_kept(ev)
            keep = not (covers(join(prev, snap), k) and covers(join(k, snap), prev))
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
            start = self.rec.shed_tid
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
        self.dead_bytes += rec.tables["tasks"].size + len(t.accesses) * rec.tables["accesses"].size
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
        if ct[1] or ret != 0 or cid in rec.freed_ptr_calls or cid in self.firsts:
            return
        tabs = rec.tables
        self.hold_call(cid, ct[2], False,
                       tabs["calls"].size + 4 * tabs["args"].size)  # (a typical arg count)
