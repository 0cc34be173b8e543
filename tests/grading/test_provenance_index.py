"""Provenance's writer index gives what a scan of every access gives, for every copy back."""

from __future__ import annotations

from typing import Any

import numpy as np

import acl_lab
from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.grading.provenance import MAX_HOPS, WriterIndex, origins
from acl_lab.runtime.kinds import TaskKind
from acl_lab.runtime.session import Session
from acl_lab.tracer.schema import TASK_KINDS
from acl_lab.tracer.trace import Trace
from tests.helpers import ok

N = 256


def scanned(trace: Trace, task: int, hops: int = MAX_HOPS) -> list[tuple[str, int]]:
    """The reference: every access scanned for each range the task read."""
    tasks, acc = trace.tasks, trace.accesses
    a_task, a_alloc = acc["task"], acc["alloc"]
    a_off, a_len, a_write = acc["offset"], acc["length"], acc["write"]
    start = int(tasks["start_ns"][task])
    out: list[tuple[str, int]] = []
    for j in np.nonzero((a_task == task) & (a_write == 0))[0].tolist():
        alloc, lo = int(a_alloc[j]), int(a_off[j])
        hi = lo + int(a_len[j])
        best, best_end = -1, -1
        for w in np.nonzero((a_alloc == alloc) & (a_write == 1) & (a_task != task)
                            & (a_off < hi) & (a_off + a_len > lo))[0].tolist():
            wt = int(a_task[w])
            end = int(tasks["end_ns"][wt])
            if 0 <= end <= start and (end, wt) > (best_end, best):
                best, best_end = wt, end
        if best < 0:
            out.append(("unwritten", -1))
        elif int(tasks["kind"][best]) == TaskKind.D2D and hops > 0:
            out += scanned(trace, best, hops - 1)
        else:
            out.append((TASK_KINDS[int(tasks["kind"][best])], best))
    return out


def copies(acl: Any, rng: np.random.Generator) -> None:
    """Random slices of three device buffers filled from the host, memset, copied between
    them on two streams and copied back."""
    host = ok(acl.rt.malloc_host(N))
    back = ok(acl.rt.malloc_host(N))
    bufs = [ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3)]
    streams = [ok(acl.rt.create_stream()) for _ in range(2)]
    for _ in range(300):
        lo = int(rng.integers(0, N - 16))
        n = int(rng.integers(1, N - lo))
        a, b = (int(i) for i in rng.integers(0, 3, 2))
        st = streams[int(rng.integers(0, 2))]
        op = int(rng.integers(0, 4))
        if op == 0:
            acl.rt.memcpy_async(bufs[a] + lo, n, host + lo, n, ACL_MEMCPY_HOST_TO_DEVICE, st)
        elif op == 1:
            acl.rt.memset_async(bufs[a] + lo, n, 3, n, st)
        elif op == 2:
            acl.rt.memcpy_async(bufs[b] + lo, n, bufs[a] + lo, n, ACL_MEMCPY_DEVICE_TO_DEVICE,
                                st)
        else:
            acl.rt.memcpy_async(back + lo, n, bufs[a] + lo, n, ACL_MEMCPY_DEVICE_TO_HOST, st)
        if rng.random() < 0.1:
            acl.rt.synchronize_stream(st)
    for st in streams:
        acl.rt.synchronize_stream(st)


def test_the_index_finds_the_writers_a_scan_finds() -> None:
    """For every device-to-host copy of random slice traffic (overlapping ranges, two
    streams, copies between buffers), the indexed walk names the writers the full scan
    names, in the same order."""
    for seed in range(3):
        with Session(seed=seed) as s:
            acl = acl_lab.install()
            try:
                assert acl.init() == 0 and acl.rt.set_device(0) == 0
                copies(acl, np.random.default_rng(seed))
            finally:
                acl_lab.uninstall()
            trace = s.finish()
        assert WriterIndex.of(trace) is WriterIndex.of(trace)  # built once per trace
        d2h = np.nonzero(np.asarray(trace.tasks["kind"]) == TaskKind.D2H)[0].tolist()
        assert len(d2h) > 40
        kinds = set()
        for row in d2h:
            got = origins(trace, row)
            assert got == scanned(trace, row), row
            kinds |= {k for k, _ in got}
        assert {"H2D", "memset"} <= kinds  # the traffic exercised several writer kinds
