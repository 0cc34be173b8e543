"""Timeline view scale: a synthetic 1,000,000-task trace (100,000 with ``--quick``).

The trace is built directly with ``Trace.from_columns`` (no emulation): 8 streams and a
sync-copy lane on one device, two host threads with one API call per task, every task kind,
record -> wait edges, host waits and callbacks. Measured: the time to build
``timeline(trace)`` (target < 5 s, median of repeats) and the size of ``fig.to_json()`` (target
< 30 MB), both in WebGL mode; plus, for reference, the SVG build of a 3,000-item window.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from acl_lab.runtime.kinds import ObjectKind
from acl_lab.tracer.schema import TASK_KINDS
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.timeline import timeline

from .common import Row, median, quiet_gc

NAME = "views_timeline"
N_TASKS = 1_000_000
N_TASKS_QUICK = 100_000
BUILD_TARGET_S = 5.0
JSON_TARGET_MB = 30.0

#: Call name per task kind (strings table ids follow this order).
_CALL_FOR_KIND = {
    "H2D": "acl.rt.memcpy_async", "D2H": "acl.rt.memcpy_async", "D2D": "acl.rt.memcpy_async",
    "H2H": "acl.rt.memcpy_async", "memset": "acl.rt.memset_async", "kernel": "acl.op.execute_v2",
    "model": "acl.mdl.execute_async", "event_record": "acl.rt.record_event",
    "event_wait": "acl.rt.stream_wait_event", "event_reset": "acl.rt.reset_event",
    "callback": "acl.rt.launch_callback", "dvpp": "acl.media.dvpp_vpc_resize_async",
}
#: Relative frequency of each kind (kernels and copies dominate, as in a pipeline).
_WEIGHTS = {"H2D": 6, "D2H": 6, "D2D": 2, "H2H": 1, "memset": 1, "kernel": 12, "model": 2,
            "event_record": 2, "event_wait": 2, "event_reset": 1, "callback": 1, "dvpp": 1}
_ENGINE_FOR_KIND = {"H2D": 1, "D2H": 2, "D2D": 3, "H2H": 6, "memset": 3, "kernel": 4,
                    "model": 4, "dvpp": 5, "callback": 6}


def synthetic_trace(n_tasks: int, n_streams: int = 8, seed: int = 0) -> Trace:
    """A consistent-looking trace of ``n_tasks`` tasks, built from numpy columns.

    Every task has its own API call (threads 0 and 1 alternate); stream tasks run back to
    back with random gaps; every 64th task is a synchronous copy (``stream -1``). Each event
    record gets an edge to the next event wait; callbacks run on thread 1; thread 0 blocks in
    a synchronize every 500 tasks.
    """
    rng = np.random.default_rng(seed)
    kinds_p = np.array([_WEIGHTS[k] for k in TASK_KINDS], dtype=np.float64)
    kind = rng.choice(len(TASK_KINDS), size=n_tasks, p=kinds_p / kinds_p.sum()).astype(np.int8)
    stream_slot = np.arange(n_tasks) % n_streams
    sync_copy = (np.arange(n_tasks) % 64) == 63
    kind[sync_copy] = TASK_KINDS.index("H2D")
    dur = rng.integers(1_000, 20_000, size=n_tasks)
    gap = rng.integers(0, 5_000, size=n_tasks)
    # Per stream, tasks run back to back: start = cumulative (dur + gap) within the stream.
    start = np.zeros(n_tasks, dtype=np.int64)
    for s in range(n_streams):
        idx = np.nonzero(stream_slot == s)[0]
        start[idx] = np.cumsum(dur[idx] + gap[idx]) - dur[idx]
    end = start + dur
    submit = np.maximum(start - rng.integers(0, 50_000, size=n_tasks), 0)
    stream = (stream_slot + 1).astype(np.int32)  # objects row 0 is the context
    stream[sync_copy] = -1

    names = ["MainThread", "report", "synthetic.py", "(default context)"]
    names += [f"stream {s}" for s in range(n_streams)]
    call_names = [*sorted(set(_CALL_FOR_KIND.values())), "acl.rt.synchronize_stream"]
    name_id = {n: len(names) + i for i, n in enumerate(call_names)}
    names += call_names
    call_name_of_kind = np.array([name_id[_CALL_FOR_KIND[k]] for k in TASK_KINDS], np.int32)

    n_sync = n_tasks // 500
    n_calls = n_tasks + n_sync
    thread = np.zeros(n_calls, np.int32)
    thread[:n_tasks] = np.arange(n_tasks) % 2
    c_start = np.empty(n_calls, np.int64)
    c_end = np.empty(n_calls, np.int64)
    c_start[:n_tasks] = np.maximum(submit - 800, 0)
    c_end[:n_tasks] = submit + 200
    sync_at = np.sort(rng.choice(n_tasks, size=n_sync, replace=False)) if n_sync else \
        np.zeros(0, np.int64)
    c_start[n_tasks:] = end[sync_at]
    c_end[n_tasks:] = end[sync_at] + rng.integers(1_000, 40_000, size=n_sync)
    cname = np.empty(n_calls, np.int32)
    cname[:n_tasks] = call_name_of_kind[kind]
    cname[n_tasks:] = name_id["acl.rt.synchronize_stream"]
    line = np.full(n_calls, 12, np.int32)
    line[:n_tasks] += kind

    rec = np.nonzero(kind == TASK_KINDS.index("event_record"))[0]
    wait = np.nonzero(kind == TASK_KINDS.index("event_wait"))[0]
    k = min(len(rec), len(wait))
    cb = np.nonzero(kind == TASK_KINDS.index("callback"))[0]
    copies = np.nonzero(np.isin(kind, [TASK_KINDS.index(x) for x in ("H2D", "D2H", "D2D")]))[0]
    engine_of = np.array([_ENGINE_FOR_KIND.get(k_, 0) for k_ in TASK_KINDS], np.int8)

    cols: dict[str, dict[str, Any]] = {
        "threads": {"name": [0, 1], "acl": [0, 0]},
        "calls": {"name": cname, "thread": thread, "ctx": np.zeros(n_calls, np.int32),
                  "file": np.full(n_calls, 2, np.int32), "line": line, "start_ns": c_start,
                  "end_ns": c_end, "ret": np.zeros(n_calls, np.int32),
                  "arg_start": np.zeros(n_calls, np.int64),
                  "arg_count": np.zeros(n_calls, np.int8)},
        "objects": {"kind": [ObjectKind.CONTEXT] + [ObjectKind.STREAM] * n_streams,
                    "handle": [0xA0_0000_0000 + 0x40 * i for i in range(n_streams + 1)],
                    "device": [0] * (n_streams + 1), "ctx": [-1] + [0] * n_streams,
                    "flags": [0] * (n_streams + 1), "call": [0] * (n_streams + 1),
                    "label": [3] + [4 + s for s in range(n_streams)]},
        "allocs": {"kind": [0], "device": [0], "policy": [0], "pool": [0], "addr": [1 << 40],
                   "requested": [1 << 20], "size": [1 << 20], "reserved": [1 << 21],
                   "call": [0], "ctx": [0]},
        "tasks": {"call": np.arange(n_tasks, dtype=np.int32), "stream": stream, "kind": kind,
                  "engine": engine_of[kind], "device": np.zeros(n_tasks, np.int8),
                  "submit_ns": submit, "start_ns": start, "end_ns": end,
                  "event": np.full(n_tasks, -1, np.int32), "pinned": np.ones(n_tasks, np.int8)},
        "accesses": {"task": copies.astype(np.int32), "alloc": np.zeros(len(copies), np.int32),
                     "offset": np.zeros(len(copies), np.int64),
                     "length": rng.integers(1 << 12, 1 << 22, size=len(copies)),
                     "write": np.ones(len(copies), np.int8)},
        "edges": {"record": rec[:k].astype(np.int32), "wait": wait[:k].astype(np.int32)},
        "syncs": {"call": np.arange(n_tasks, n_calls, dtype=np.int32),
                  "kind": np.zeros(n_sync, np.int8), "target": np.ones(n_sync, np.int32),
                  "start_ns": c_start[n_tasks:], "end_ns": c_end[n_tasks:]},
        "callbacks": {"task": cb.astype(np.int32), "thread": np.ones(len(cb), np.int32),
                      "start_ns": end[cb], "end_ns": end[cb] + 1_000},
    }
    meta = {"profile": "synthetic", "virtual_time_ns": int(max(end.max(), c_end.max()))}
    return Trace.from_columns(names, cols, meta)


def run(quick: bool) -> list[Row]:
    """Build the timeline of the synthetic trace (3 repeats, 1 with ``quick``)."""
    n = N_TASKS_QUICK if quick else N_TASKS
    label = "100k" if quick else "1M"
    trace = synthetic_trace(n)
    times = []
    fig = None
    for _ in range(1 if quick else 3):
        with quiet_gc():
            t0 = time.perf_counter()
            fig = timeline(trace)
            times.append(time.perf_counter() - t0)
    assert fig is not None
    t0 = time.perf_counter()
    payload = len(fig.to_json())
    json_s = time.perf_counter() - t0
    segments = sum(int((d.meta or {}).get("segments", 0)) for d in fig.data)
    # The SVG path for reference: a window holding about 3,000 items.
    span = int(trace.tasks["end_ns"].max())
    lo = span // 2
    hi = lo + max(span * 1400 // (2 * n), 1)
    t0 = time.perf_counter()
    small = timeline(trace, start_ns=lo, end_ns=hi)
    svg_s = time.perf_counter() - t0
    return [
        Row(NAME, f"timeline_build_{label}_tasks_s", median(times), "s", BUILD_TARGET_S),
        Row(NAME, f"timeline_json_{label}_tasks_MB", payload / 1e6, "MB", JSON_TARGET_MB),
        Row(NAME, "timeline_to_json_s", json_s, "s"),
        Row(NAME, "timeline_webgl_segments", float(segments), "segments"),
        Row(NAME, "timeline_svg_window_s", svg_s, "s"),
        Row(NAME, "timeline_svg_window_items", float(small.layout.meta["items"]), "items"),
    ]
