"""Memory map at scale: build time and payload for 100,000 allocations (targets < 5 s, < 30 MB).

The trace is synthetic (``Trace.from_columns``): allocations in the normal and huge pools of
device 0, most freed after a random lifetime, one in ten leaked. Beyond ``max_rects`` (5,000)
the map is an occupancy heatmap per pool plus reduced usage curves; the payload is the size
of ``fig.to_json()``. A 5,000-allocation map (the largest drawn as rectangles) is measured too.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from acl_lab.tracer.trace import Trace

from .common import Row, median

NAME = "views_memory"


def synthetic_trace(n: int, seed: int = 0, leak_every: int = 10) -> Trace:
    """A one-thread trace of ``n`` device allocations (normal/huge pools), most freed later.

    Calls are 1 µs apart. Allocation ``i`` is made at its call; unless ``i % leak_every == 0``
    it is freed by a later call after a random lifetime. Addresses are bump-allocated per
    pool, modulo a window, so blocks reuse addresses over time.
    """
    rng = np.random.default_rng(seed)
    t_alloc = np.arange(n, dtype=np.int64) * 2
    life = rng.integers(1, max(4, n // 20), n) * 2 + 1
    leaked = np.arange(n) % leak_every == 0
    freed = ~leaked
    t_free = (t_alloc + life)[freed]
    # one call per alloc and per free, ordered by time (ties: alloc first)
    times = np.concatenate([t_alloc, t_free])
    is_free = np.concatenate([np.zeros(n, dtype=bool), np.ones(len(t_free), dtype=bool)])
    order = np.lexsort((is_free, times))
    call_of = np.empty(len(order), dtype=np.int64)
    call_of[order] = np.arange(len(order))
    alloc_call = call_of[:n]
    free_call = call_of[n:]
    nc = len(order)
    start = np.arange(nc, dtype=np.int64) * 1000
    strings = ["MainThread", "acl.rt.malloc", "acl.rt.free", "synthetic.py"]
    name = np.where(is_free[order], 2, 1)
    requested = rng.integers(1, 1 << 20, n)
    size = (requested + 32 + 31) // 32 * 32
    huge = rng.random(n) < 0.3
    page = np.where(huge, 2 << 20, 4096)
    reserved = (size + page - 1) // page * page
    pool = np.where(huge, 1, 0)
    addr = np.zeros(n, dtype=np.int64)
    for p, base in ((0, 0x126000000000), (1, 0x124000000000)):
        m = pool == p
        off = np.cumsum(reserved[m]) - reserved[m]
        addr[m] = base + off % (1 << 34)
    cols: dict[str, dict[str, Any]] = {
        "threads": {"name": [0], "acl": [1]},
        "calls": {"name": name, "thread": np.zeros(nc), "ctx": np.zeros(nc) - 1,
                  "file": np.full(nc, 3), "line": 10 + name, "start_ns": start,
                  "end_ns": start + 500, "ret": np.zeros(nc), "arg_start": np.zeros(nc),
                  "arg_count": np.zeros(nc)},
        "allocs": {"kind": np.zeros(n), "device": np.zeros(n), "policy": np.where(huge, 1, 2),
                   "pool": pool, "addr": addr, "requested": requested, "size": size,
                   "reserved": reserved, "call": alloc_call, "ctx": np.zeros(n) - 1},
        "frees": {"alloc": np.nonzero(freed)[0], "call": free_call,
                  "how": np.zeros(len(free_call))},
    }
    return Trace.from_columns(strings, cols, {"profile": "synthetic",
                                              "virtual_time_ns": int(start[-1]) + 1000})


def measure(n: int, repeats: int) -> tuple[float, float, str]:
    """Median build seconds, payload MB and the map's mode for ``n`` allocations."""
    from acl_lab.tracer.views.memory_map import memory_map

    trace = synthetic_trace(n)
    times, sizes, mode = [], [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        fig = memory_map(trace, at_ns=int(trace.calls["start_ns"][-1]) // 2)
        times.append(time.perf_counter() - t0)
        sizes.append(len(fig.to_json()) / 1e6)
        mode = fig.layout.meta["mode"]
    return median(times), median(sizes), mode


def run(quick: bool) -> list[Row]:
    """Build the memory map of 100,000 (``quick``: 20,000) and of 5,000 allocations."""
    n = 20_000 if quick else 100_000
    repeats = 1 if quick else 3
    big_s, big_mb, _ = measure(n, repeats)
    small_s, small_mb, _ = measure(5_000, repeats)
    return [
        Row(NAME, f"memory_map_{n}_allocs_build_s", big_s, "s", 5.0),
        Row(NAME, f"memory_map_{n}_allocs_payload_MB", big_mb, "MB", 30.0),
        Row(NAME, "memory_map_5000_rects_build_s", small_s, "s"),
        Row(NAME, "memory_map_5000_rects_payload_MB", small_mb, "MB"),
    ]
