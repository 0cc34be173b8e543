"""Device provenance over a run with many copies back: linear in the trace.

``acl-lab grade`` asks, for every device-to-host copy of a run, which task last wrote what the
copy read (``grading.provenance``), in the parent, outside any time limit. It scanned every
access once per copy (quadratic: 20,000 copies took 2.1 s, 80,000 took 39 s); the writer
index answers each copy with a binary search. The program: an operator-free loop that fills a
slice of a device buffer from the host and copies it back, ``n`` times. Target: four times the
copies cost at most six times the time (linear is 4, quadratic 16).
"""

from __future__ import annotations

import time

import numpy as np

from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.grading.provenance import WriterIndex, origins
from acl_lab.runtime.kinds import TaskKind
from acl_lab.tracer.trace import Trace

from .common import Row, acl_session, check

NAME = "provenance"
SIZE = 4096
SLICE = 64


def _trace(copies: int) -> Trace:
    with acl_session() as (s, acl):
        host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "malloc_host")
        dev, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)
        check(ret, "malloc")
        stream, ret = acl.rt.create_stream()
        check(ret, "create_stream")
        for i in range(copies):
            off = (i * SLICE) % SIZE
            acl.rt.memcpy_async(dev + off, SLICE, host + off, SLICE, ACL_MEMCPY_HOST_TO_DEVICE,
                                stream)
            acl.rt.memcpy_async(host + off, SLICE, dev + off, SLICE, ACL_MEMCPY_DEVICE_TO_HOST,
                                stream)
        check(acl.rt.synchronize_stream(stream), "synchronize_stream")
        return s.trace()


def _provenance_s(copies: int) -> float:
    trace = _trace(copies)
    t0 = time.perf_counter()
    WriterIndex.of(trace)  # built once, then every copy back asks it
    d2h = np.nonzero(np.asarray(trace.tasks["kind"]) == TaskKind.D2H)[0]
    for row in d2h.tolist():
        origins(trace, row)
    return time.perf_counter() - t0


def run(quick: bool) -> list[Row]:
    """Provenance of every copy back for ``n`` and ``4n`` copies (n = 20,000; 2,000 quick)."""
    n = 2_000 if quick else 20_000
    small, large = _provenance_s(n), _provenance_s(4 * n)
    return [Row(NAME, f"copies_{n}_s", small, "s"),
            Row(NAME, f"copies_{4 * n}_s", large, "s"),
            Row(NAME, "four_times_the_copies_vs_time", large / small, "x", 6.0)]
