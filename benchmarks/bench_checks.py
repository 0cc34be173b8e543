"""Findings over a large trace: every check of ``acl_lab.tracer.checks`` on 100,000 tasks.

The program: four streams, each iteration copies a pinned buffer to device memory on one
stream, records an event, makes the next stream wait on it and copies device to device
there (a clean, ordered pipeline, so the race checker does full work without reporting),
with a synchronize every 1,000 iterations. Target: all checks under 5 s (issue 4).
"""

from __future__ import annotations

import time

from acl_lab.constants import (
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.tracer.checks import CHECKS

from .common import Row, acl_session, check

NAME = "checks"
SIZE = 256


def run(quick: bool) -> list[Row]:
    """Build the trace (100k tasks, 10k with ``quick``) and time every check once."""
    tasks_wanted = 10_000 if quick else 100_000
    with acl_session() as (s, acl):
        streams = []
        for _ in range(4):
            st, ret = acl.rt.create_stream()
            check(ret, "create_stream")
            streams.append(st)
        host, ret = acl.rt.malloc_host(SIZE)
        check(ret, "malloc_host")
        check(acl.rt.memset(host, SIZE, 1, SIZE), "memset")
        dev = []
        for _ in range(8):
            p, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)
            check(ret, "malloc")
            dev.append(p)
        event, ret = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
        check(ret, "create_event_with_flag")
        i = 0
        while s.task_count < tasks_wanted:
            a, b = streams[i % 4], streams[(i + 1) % 4]
            src, dst = dev[(2 * i) % 8], dev[(2 * i + 1) % 8]
            acl.rt.memcpy_async(src, SIZE, host, SIZE, ACL_MEMCPY_HOST_TO_DEVICE, a)
            acl.rt.record_event(event, a)
            acl.rt.stream_wait_event(b, event)
            acl.rt.memcpy_async(dst, SIZE, src, SIZE, ACL_MEMCPY_DEVICE_TO_DEVICE, b)
            i += 1
            if i % 1000 == 0:
                check(acl.rt.synchronize_device(), "synchronize_device")
        check(acl.rt.synchronize_device(), "synchronize_device")
        check(acl.rt.destroy_event(event), "destroy_event")
        for p in dev:
            check(acl.rt.free(p), "free")
        check(acl.rt.free_host(host), "free_host")
        for st in streams:
            check(acl.rt.destroy_stream(st), "destroy_stream")
        check(acl.rt.reset_device(0), "reset_device")
        check(acl.finalize(), "finalize")
        trace = s.trace()
    rows: list[Row] = []
    total = 0.0
    found = 0
    for fn in CHECKS:
        t0 = time.perf_counter()
        found += len(fn(trace))
        dt = time.perf_counter() - t0
        total += dt
        rows.append(Row(NAME, f"{fn.__name__}_s", dt, "s"))
    rows.append(Row(NAME, f"all_checks_{trace.tasks.rows}_tasks_s", total, "s",
                    5.0 if not quick else None))
    rows.append(Row(NAME, "findings_on_clean_pipeline", float(found), "count", 0.0))
    return rows
