"""Numbers from a Trace: engine busy time and overlap, memory usage over time.

Pure functions ``Trace -> frozen value`` with numpy arrays inside; the optimisation ladder, the
pipeline exercise and the Plotly views (``views/overlap.py``, ``views/memory_map.py``) read them.
This module must not import plotly (``import acl_lab`` keeps plotly unloaded) and never writes
to a trace's tables: every array here is a new one.

Before/after for a two-stream pipeline (times in µs)::

    tasks:  H2D  on stream 1  [0, 40)     engine copy_h2d
            kernel on stream 2 [10, 30)   engine aicore
    overlap_summary:  copy_h2d 40, aicore 20, overlap 20, busy 40, span 40, utilisation 1.0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..runtime.kinds import AllocKind, Engine, Pool
from .schema import ENGINES, POOLS

#: Engines whose busy time ``overlap_summary`` reports, in display order.
DEVICE_ENGINES = ("copy_h2d", "copy_d2h", "copy_d2d", "aicore", "dvpp")
#: The copy engines (their union is "copy busy").
COPY_ENGINES = ("copy_h2d", "copy_d2h", "copy_d2d")
#: Allocation kinds that live in device memory (what ``Trace.peak_device_bytes`` counts).
DEVICE_KINDS = (AllocKind.DEVICE, AllocKind.DVPP)
_HOST_POOL = Pool.HOST


# =============================================================================== intervals
def union_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge intervals ``[start, end)`` into sorted, disjoint ones (empty ones dropped).

    >>> union_intervals(np.array([0, 5, 2]), np.array([3, 9, 4]))
    (array([0, 5]), array([4, 9]))
    """
    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    keep = e > s
    s, e = s[keep], e[keep]
    if len(s) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # a new merged interval begins where a start lies beyond everything before it
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    first = np.nonzero(new)[0]
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]


def union_length(starts: np.ndarray, ends: np.ndarray) -> int:
    """Total length covered by the intervals ``[start, end)`` (overlaps counted once)."""
    s, e = union_intervals(starts, ends)
    return int((e - s).sum())


# =============================================================================== overlap
@dataclass(frozen=True)
class OverlapSummary:
    """How busy a device's engines were, and how much copying hid behind compute.

    Args:
        device: the device summarised.
        start_ns: start of the first task that ran on it (0 when none ran).
        end_ns: end of the last such task.
        span_ns: ``end_ns - start_ns``.
        engine_busy_ns: per engine of ``DEVICE_ENGINES``, the time at least one of its tasks
            ran (the union of the task intervals).
        copy_busy_ns: time any copy engine was busy.
        compute_busy_ns: time the AI cores were busy.
        overlap_ns: time a copy engine and the AI cores were busy together.
        busy_ns: time any engine of ``DEVICE_ENGINES`` was busy.
        utilisation: ``busy_ns / span_ns`` (0.0 for an empty span), between 0 and 1.
        stream_busy_ns: per stream (object id), the time at least one of its tasks ran.
        stream_labels: per stream, its label (e.g. ``"stream 0xa000000080"``).
        tasks: number of tasks that ran on the device.
    """

    device: int
    start_ns: int
    end_ns: int
    span_ns: int
    engine_busy_ns: dict[str, int]
    copy_busy_ns: int
    compute_busy_ns: int
    overlap_ns: int
    busy_ns: int
    utilisation: float
    stream_busy_ns: dict[int, int] = field(default_factory=dict)
    stream_labels: dict[int, str] = field(default_factory=dict)
    tasks: int = 0

    @property
    def copy_hidden(self) -> float:
        """Fraction of the copy time that ran under compute (0.0 when nothing was copied)."""
        return self.overlap_ns / self.copy_busy_ns if self.copy_busy_ns else 0.0


def overlap_summary(trace: Any, device: int = 0) -> OverlapSummary:
    """Busy time per engine, copy/compute overlap and utilisation of one device.

    Only tasks that ran (start and end recorded) on ``device`` count. The span runs from the
    first such task's start to the last one's end, whatever its engine, so utilisation is at
    most 1. Engines ``none`` (event record/wait/reset) and ``host`` (host copies, callbacks)
    count towards the span but not towards busy time.
    """
    t = trace.tasks
    start = t["start_ns"].astype(np.int64)
    end = t["end_ns"].astype(np.int64)
    ran = (start >= 0) & (end >= start) & (t["device"] == device)
    start, end = start[ran], end[ran]
    engine = t["engine"][ran]
    stream = t["stream"][ran]
    if len(start) == 0:
        return OverlapSummary(device, 0, 0, 0, dict.fromkeys(DEVICE_ENGINES, 0), 0, 0, 0, 0,
                              0.0)
    t0, t1 = int(start.min()), int(end.max())
    busy = {}
    for name in DEVICE_ENGINES:
        m = engine == ENGINES.index(name)
        busy[name] = union_length(start[m], end[m])
    is_copy = np.isin(engine, [ENGINES.index(n) for n in COPY_ENGINES])
    is_compute = engine == Engine.AICORE
    copy_busy = union_length(start[is_copy], end[is_copy])
    compute_busy = busy["aicore"]
    both = is_copy | is_compute
    # |A ∩ B| = |A| + |B| - |A ∪ B|
    overlap = copy_busy + compute_busy - union_length(start[both], end[both])
    counted = np.isin(engine, [ENGINES.index(n) for n in DEVICE_ENGINES])
    any_busy = union_length(start[counted], end[counted])
    span = t1 - t0
    per_stream: dict[int, int] = {}
    labels: dict[int, str] = {}
    obj_label = trace.objects["label"]
    for s in np.unique(stream[stream >= 0]).tolist():
        m = stream == s
        per_stream[int(s)] = union_length(start[m], end[m])
        labels[int(s)] = trace.string(int(obj_label[s])).split(" of ")[0]
    return OverlapSummary(
        device=device, start_ns=t0, end_ns=t1, span_ns=span, engine_busy_ns=busy,
        copy_busy_ns=copy_busy, compute_busy_ns=compute_busy, overlap_ns=overlap,
        busy_ns=any_busy, utilisation=any_busy / span if span > 0 else 0.0,
        stream_busy_ns=per_stream, stream_labels=labels, tasks=len(start))


# =============================================================================== memory
def trace_end_ns(trace: Any) -> int:
    """The last instant the trace knows of: virtual time, last call end or last task end."""
    end = int(trace.meta.get("virtual_time_ns", 0) or 0)
    for col in (trace.calls["end_ns"], trace.calls["start_ns"], trace.tasks["end_ns"]):
        if len(col):
            end = max(end, int(col.max()))
    return end


@dataclass(frozen=True)
class AllocationSpans:
    """Every allocation of a selection with its lifetime, as parallel arrays.

    Args:
        rows: the allocation ids (rows of ``trace.allocs``).
        start_ns: when each was made (start of its allocating call).
        end_ns: when it was explicitly freed (start of the free call), or the trace end.
        released_ns: when the allocator got the memory back: the explicit free, a reclaim at
            reset/finalize/exit, or the trace end (never released).
        freed: True when the program freed it explicitly (``frees.how == 0``).
        leaked: True when it was never freed, or only reclaimed (the ``leak`` rule).
        end_of_trace_ns: the trace end.
    """

    rows: np.ndarray
    start_ns: np.ndarray
    end_ns: np.ndarray
    released_ns: np.ndarray
    freed: np.ndarray
    leaked: np.ndarray
    end_of_trace_ns: int

    def live_at(self, t_ns: int) -> np.ndarray:
        """Allocation ids live at ``t_ns``: made at or before it, not yet freed (leaks stay
        live to the trace end)."""
        m = (self.start_ns <= t_ns) & (t_ns < self.end_ns)
        return self.rows[m]


def allocation_spans(trace: Any, rows: np.ndarray | None = None) -> AllocationSpans:
    """Lifetimes of the allocations ``rows`` (all when None); see ``AllocationSpans``."""
    a, f, c = trace.allocs, trace.frees, trace.calls
    n = a.rows
    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    end_of_trace = trace_end_ns(trace)
    c_start = c["start_ns"].astype(np.int64)
    a_call = a["call"].astype(np.int64)
    start_all = np.where(a_call >= 0, c_start[np.clip(a_call, 0, None)] if len(c_start)
                         else 0, 0)
    free_at = np.full(n, end_of_trace, dtype=np.int64)
    release_at = np.full(n, end_of_trace, dtype=np.int64)
    freed_all = np.zeros(n, dtype=bool)
    fa, fc, fh = (f["alloc"].astype(np.int64), f["call"].astype(np.int64),
                  f["how"].astype(np.int64))
    ok = (fa >= 0) & (fa < n)
    f_time = np.where(fc >= 0, c_start[np.clip(fc, 0, None)] if len(c_start) else 0,
                      end_of_trace)
    explicit = ok & (fh == 0)
    free_at[fa[explicit]] = f_time[explicit]
    freed_all[fa[explicit]] = True
    release_at[fa[ok]] = f_time[ok]
    freed = freed_all[rows]
    return AllocationSpans(
        rows=rows, start_ns=start_all[rows], end_ns=free_at[rows],
        released_ns=release_at[rows], freed=freed, leaked=~freed,
        end_of_trace_ns=end_of_trace)


@dataclass(frozen=True)
class MemoryTimeline:
    """Memory in use over time, per pool and for the whole device.

    Every array is indexed like ``times_ns``: the value holds from that time until the next
    one (a step function). Bytes are the allocator's page-rounded ``reserved`` sizes, so the
    maximum of ``device_bytes`` is ``Trace.peak_device_bytes()`` for a one-device trace.

    Args:
        device: the device.
        times_ns: event times, sorted (ties keep call order, frees before allocations).
        pool_bytes: pool name -> bytes in use after each event (only pools used).
        device_bytes: device memory (device and DVPP kinds, all pools) after each event.
        peak_bytes: pool name -> its maximum; ``"device"`` -> the device maximum.
    """

    device: int
    times_ns: np.ndarray
    pool_bytes: dict[str, np.ndarray]
    device_bytes: np.ndarray
    peak_bytes: dict[str, int]


def memory_timeline(trace: Any, device: int = 0) -> MemoryTimeline:
    """Bytes in use per pool and for ``device`` over time (host memory under pool ``host``).

    Each allocation adds its reserved bytes at its call's start; each release (an explicit
    free, or a reclaim at reset/finalize/exit) removes them at that call's start.
    """
    a, f, c = trace.allocs, trace.frees, trace.calls
    dev = a["device"] == device
    host = a["pool"] == _HOST_POOL
    sel = dev | host
    rows = np.nonzero(sel)[0]
    c_start = c["start_ns"].astype(np.int64)
    a_call = a["call"].astype(np.int64)[rows]
    reserved = a["reserved"].astype(np.int64)[rows]
    pool = a["pool"].astype(np.int64)[rows]
    is_dev = np.isin(a["kind"][rows], DEVICE_KINDS) & dev[rows]
    fa = f["alloc"].astype(np.int64)
    fc = f["call"].astype(np.int64)
    local = np.full(a.rows, -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    fok = (fa >= 0) & (fa < a.rows) & (fc >= 0)
    fl = local[fa[fok]] if fok.any() else np.zeros(0, dtype=np.int64)
    fcall = fc[fok]
    keep = fl >= 0
    fl, fcall = fl[keep], fcall[keep]
    ev_call = np.concatenate([np.where(a_call >= 0, a_call, 0), fcall])
    ev_row = np.concatenate([np.arange(len(rows)), fl])
    ev_delta = np.concatenate([reserved, -reserved[fl]])
    ev_time = c_start[ev_call] if len(c_start) else np.zeros(len(ev_call), dtype=np.int64)
    order = np.lexsort((ev_delta, ev_call, ev_time))
    times = ev_time[order]
    delta = ev_delta[order]
    ev_pool = pool[ev_row[order]]
    ev_dev = is_dev[ev_row[order]]
    pool_bytes: dict[str, np.ndarray] = {}
    peaks: dict[str, int] = {}
    for p in np.unique(pool).tolist():
        curve = np.cumsum(np.where(ev_pool == p, delta, 0))
        pool_bytes[POOLS[p]] = curve
        peaks[POOLS[p]] = int(curve.max()) if len(curve) else 0
    device_bytes = np.cumsum(np.where(ev_dev, delta, 0))
    peaks["device"] = int(device_bytes.max()) if len(device_bytes) else 0
    return MemoryTimeline(device, times, pool_bytes, device_bytes, peaks)


__all__ = ["COPY_ENGINES", "DEVICE_ENGINES", "AllocationSpans", "MemoryTimeline",
           "OverlapSummary", "allocation_spans", "memory_timeline", "overlap_summary",
           "trace_end_ns", "union_intervals", "union_length"]
