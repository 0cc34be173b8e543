"""Threads under load: 16 threads x 2,000 mixed calls against one Session.

Half the workers are ``threading.Thread``s, half come from ``acl.util.start_thread``. Each has
its own context, stream, event and pinned buffer, and also uses the shared default context
and its stream: malloc/free, memcpy and memcpy_async, event record/wait/query/synchronize,
stream synchronize and set_context switches, in a seeded random order. Some calls fail on
purpose (a stream of the other context, a wait on a never-recorded event); every return code
is logged by the worker. The trace must hold every call exactly once, in its thread, with the
code the program got; nothing may deadlock; and the live allocations must agree three ways
(the workers' own books, the trace's allocs without a free, the memory system's counters).
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE, ACL_SUCCESS
from acl_lab.runtime.memory import _Extents
from acl_lab.runtime.resources import Resource
from acl_lab.runtime.session import Session

pytestmark = pytest.mark.timeout(240)

THREADS = 16
CALLS = 2_000
#: Allocations each worker leaves live on purpose (freed later by the main thread).
KEPT = 3
HOST_BYTES = 4096
H2D = ACL_MEMCPY_HOST_TO_DEVICE
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY
DEVICE_KIND = 0  # allocs.kind of device memory


class Worker:
    """One load thread: its objects, its live allocations and its log of (api, ret)."""

    def __init__(self, acl: ModuleType, index: int, shared_ctx: int, shared_stream: int,
                 events: list[int]) -> None:
        self.acl = acl
        self.index = index
        self.shared_ctx = shared_ctx
        self.shared_stream = shared_stream
        self.events = events  # every worker's event, filled in as workers create them
        self.rng = random.Random(1000 + index)
        self.log: list[tuple[str, int]] = []
        self.live: dict[int, int] = {}  # device pointer -> requested size
        self.error: BaseException | None = None
        self.name = ""

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Make one pyACL call and log its name and return code."""
        result = fn(*args)
        self.log.append((fn.__acl_name__,  # type: ignore[attr-defined]
                         result if isinstance(result, int) else result[-1]))
        return result

    def run(self, barrier: threading.Barrier) -> None:
        """The thread body: set up, wait for everyone, make CALLS mixed calls, tidy up."""
        try:
            self.name = threading.current_thread().name
            self._run(barrier)
        except BaseException as exc:  # reported by the test, not lost in a thread
            self.error = exc
            raise

    def _run(self, barrier: threading.Barrier) -> None:
        rt = self.acl.rt
        self.call(rt.get_device)  # 107002: a new thread has no context
        ctx, ret = self.call(rt.create_context, 0)
        assert ret == ACL_SUCCESS
        stream, _ = self.call(rt.create_stream)
        event, _ = self.call(rt.create_event)
        self.events[self.index] = event
        host, _ = self.call(rt.malloc_host, HOST_BYTES)
        assert self.call(rt.memset, host, HOST_BYTES, self.index, HOST_BYTES) == ACL_SUCCESS
        barrier.wait(timeout=60)
        current = ctx
        rng = self.rng
        start = len(self.log)
        while len(self.log) - start < CALLS:
            op = rng.randrange(15)
            mine = rng.choice(sorted(self.live)) if self.live else 0
            n = min(self.live.get(mine, 0), rng.choice((64, 256, HOST_BYTES)))
            if op <= 2 or not self.live:
                size = rng.choice((64, 100, 512, 4096, 8192))
                ptr, ret = self.call(rt.malloc, size, NORMAL)
                if ret == ACL_SUCCESS:
                    self.live[int(ptr)] = size
            elif op in (3, 14) and len(self.live) > KEPT:
                # Queued copies read the buffer later: synchronize before freeing it.
                self.call(rt.synchronize_stream, self.shared_stream)
                self.call(rt.synchronize_stream, stream)
                if self.call(rt.free, mine) == ACL_SUCCESS:
                    del self.live[mine]
            elif op == 4:
                self.call(rt.memcpy, mine, n, host, n, H2D)
            elif op in (5, 6):
                # Own stream; fails with 107003 while the shared context is current.
                self.call(rt.memcpy_async, mine, n, host, n, H2D, stream)
            elif op == 7:
                self.call(rt.memcpy_async, mine, n, host, n, H2D, self.shared_stream)
            elif op == 8:
                self.call(rt.record_event, event, stream)
            elif op == 9:
                other = self.events[rng.randrange(THREADS)] or event
                self.call(rt.stream_wait_event, stream, other)
            elif op == 10:
                self.call(rt.query_event_status, event)
            elif op == 11:
                current = ctx if current != ctx else self.shared_ctx
                self.call(rt.set_context, current)
            elif op == 12:
                self.call(rt.synchronize_event, event)
            elif op == 13:
                self.call(rt.get_context)
        assert self.call(rt.set_context, ctx) == ACL_SUCCESS
        self.call(rt.synchronize_stream, stream)
        assert self.call(rt.set_context, self.shared_ctx) == ACL_SUCCESS
        self.call(rt.synchronize_stream, self.shared_stream)
        assert self.call(rt.set_context, ctx) == ACL_SUCCESS
        for ptr in sorted(self.live)[KEPT:]:
            assert self.call(rt.free, ptr) == ACL_SUCCESS
            del self.live[ptr]
        assert self.call(rt.free_host, host) == ACL_SUCCESS
        assert self.call(rt.destroy_event, event) == ACL_SUCCESS
        # The event stays in ``events``: later waits on it must fail cleanly (507000).
        assert self.call(rt.destroy_stream, stream) == ACL_SUCCESS
        # The context stays: the leftover allocations were made in it or in the shared one.


def live_device_allocs_in_trace(trace: Any) -> list[int]:
    """allocs rows of device memory with no frees row."""
    freed = set(trace.frees["alloc"].tolist())
    return [i for i in range(trace.allocs.rows)
            if int(trace.allocs["kind"][i]) == DEVICE_KIND and i not in freed]


def test_sixteen_threads_of_mixed_calls() -> None:
    """No lost or duplicated call, every return code right, no deadlock, one memory truth."""
    t0 = time.monotonic()
    with Session(watchdog=30.0) as s:
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            assert acl.rt.set_device(0) == ACL_SUCCESS
            shared_ctx, _ = acl.rt.get_context()
            shared_stream, _ = acl.rt.create_stream()
            events = [0] * THREADS
            workers = [Worker(acl, i, shared_ctx, shared_stream, events) for i in range(THREADS)]
            barrier = threading.Barrier(THREADS, timeout=60)
            plain = [threading.Thread(target=w.run, args=(barrier,), name=f"load-{w.index}",
                                      daemon=True) for w in workers[::2]]
            for t in plain:
                t.start()
            tids = []
            for w in workers[1::2]:
                tid, ret = acl.util.start_thread(w.run, barrier)
                assert ret == ACL_SUCCESS
                tids.append(tid)
            for t in plain:
                t.join(120)
                assert not t.is_alive(), f"{t.name} hangs"
            for tid in tids:
                assert acl.util.stop_thread(tid) == ACL_SUCCESS
            errors = [w.error for w in workers if w.error is not None]
            assert not errors, errors

            # --- memory: the workers' books, the trace and the memory system agree
            trace = s.trace()
            kept = {p: size for w in workers for p, size in w.live.items()}
            assert len(kept) == THREADS * KEPT
            rows = live_device_allocs_in_trace(trace)
            live = [r for r in s.memory.live_regions() if r.kind == DEVICE_KIND]
            assert sorted(int(trace.allocs["requested"][i]) for i in rows) \
                == sorted(r.requested for r in live) == sorted(kept.values())
            assert sorted(r.addr for r in live) == sorted(kept)
            assert s.memory.devices[0].used == sum(r.accounted for r in live) \
                == int(sum(int(trace.allocs["reserved"][i]) for i in rows))
            mem_free, total, ret = acl.rt.get_mem_info(0)
            assert ret == ACL_SUCCESS and total - mem_free == s.memory.devices[0].used

            for ptr in sorted(kept):
                assert acl.rt.free(ptr) == ACL_SUCCESS
            assert acl.rt.destroy_stream(shared_stream) == ACL_SUCCESS
            assert acl.rt.reset_device(0) == ACL_SUCCESS
            assert acl.finalize() == ACL_SUCCESS
            assert s.memory.devices[0].used == 0
            trace = s.trace()
            made = s.call_count
        finally:
            acl_lab.uninstall()
    elapsed = time.monotonic() - t0

    # --- every call exactly once, in its thread, in order, with its return code
    calls = trace.calls
    assert calls.rows == made
    assert (calls["end_ns"] >= calls["start_ns"]).all()
    names = [trace.string(int(i)) for i in trace.threads["name"]]
    assert len(set(names)) == len(names) == THREADS + 1
    by_thread: dict[str, list[tuple[str, int]]] = {n: [] for n in names}
    api = trace.api_calls()  # (the threads' own rows, Thread.start to Barrier.wait, aside)
    for cid in api.tolist():
        by_thread[names[int(calls["thread"][cid])]].append(
            (trace.call_name(cid), int(calls["ret"][cid])))
    for w in workers:
        assert by_thread[w.name] == w.log, w.name
    main_calls = len(by_thread["MainThread"])
    assert sum(len(w.log) for w in workers) + main_calls == len(api)
    assert not live_device_allocs_in_trace(trace)

    # --- the mix really was mixed: failures and successes of many kinds
    per_api = Counter(name for w in workers for name, _ in w.log)
    fails = Counter(ret for w in workers for _, ret in w.log if ret != ACL_SUCCESS)
    assert len(per_api) >= 14 and min(per_api[a] for a in ("acl.rt.malloc", "acl.rt.free",
                                                           "acl.rt.memcpy_async")) > 500
    assert {107002, 107003} <= set(fails)
    assert "deadlock" not in {trace.string(int(k)) for k in trace.diags["kind"]}
    nonzero = np.count_nonzero(calls["ret"])
    print(f"\nthreads {THREADS} (+ main), calls {calls.rows} ({sum(len(w.log) for w in workers)}"
          f" by workers, {main_calls} by main, {nonzero} failed), records {calls.rows} calls "
          f"+ {trace.tasks.rows} tasks + {trace.allocs.rows} allocs + {trace.frees.rows} "
          f"frees + {trace.edges.rows} edges + {trace.syncs.rows} syncs, {elapsed:.1f} s")


# --------------------------------------------------------------------------- load fixes
def _first_fit_reference(busy: list[tuple[int, int]], ready: int, duration: int) -> int:
    """The earliest start >= ready where [start, start+max(duration,1)) meets no interval."""
    need = max(duration, 1)
    for c in sorted({ready} | {e for _, e in busy if e > ready}):
        if all(e <= c or s >= c + need for s, e in busy):
            return c
    raise AssertionError("unreachable: the end of the last interval is always free")


def test_single_unit_engine_fits_like_first_fit_and_stays_small() -> None:
    """A one-unit engine (the DMA engine of most profiles) places every task where the
    brute-force definition does, and keeps touching bookings merged: under load its state
    is a few blocks, not one entry per task (the 16-thread test took minutes before)."""
    rng = random.Random(5)
    for _ in range(300):
        res = Resource("copy", 1)
        booked: list[tuple[int, int]] = []
        for _ in range(rng.randint(1, 60)):
            ready, dur = rng.randint(0, 500), rng.choice((0, 1, 3, 10, rng.randint(0, 80)))
            want = _first_fit_reference(booked, ready, dur)
            assert res.fit(ready, dur) == want
            if dur:
                booked.append((want, want + dur))
    res = Resource("copy", 1)
    for i in range(10_000):  # back-to-back copies from a lagging thread: one block
        res.fit(i % 7, 100)
    assert len(res.busy) == 1 and res.horizon == 1_000_000


def test_freed_extents_merge_with_their_neighbours_only() -> None:
    """Freeing blocks in random order leaves a sorted free list with no touching extents,
    and freeing everything gives back the one original extent."""
    rng = random.Random(9)
    ext = _Extents(1 << 20, 1 << 30)
    blocks = [(ext.take(size, 64), size)
              for size in (rng.choice((64, 128, 4096, 100_032)) for _ in range(2_000))]
    rng.shuffle(blocks)
    for addr, size in blocks:
        ext.give(addr, size)
        free = ext.free
        assert all(a[0] + a[1] < b[0] for a, b in pairwise(free))
    assert ext.free == [[1 << 20, 1 << 30]]
