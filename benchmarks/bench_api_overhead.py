"""Per-call cost of traced pyACL calls, next to a plain Python function doing dict lookups.

Measured, each as the median of ``REPEATS`` repeats of ``N`` calls (one fresh Session per
repeat and per side, set up outside the timed region):

* ``acl.rt.memcpy_async``: 64-byte H2D copies from ``malloc_host`` to ``malloc`` memory on one
  stream; the stream is synchronised after every 1,000 calls (outside the timed blocks) so the
  pending queues stay the size a real program sees;
* an ``acl.rt.malloc(1024, 2)`` / ``acl.rt.free`` pair;
* ``plain_dict_lookups``: the baseline, a plain function with the same six arguments as
  memcpy_async that does the dict lookups a traced call cannot avoid (thread, stream handle,
  the two pointers' regions, the interned API name and file) and appends one record.

Each of them runs with the recorder attached (``Session()``) and detached
(``Session(record=False)``), so the table shows what tracing adds. Ratios are computed within
each repeat and their median is reported.

Two kinds of rows do not depend on how busy the machine is: the Python function calls of a
traced copy (cProfile's count) and the bytecode instructions each traced call executes
(``sys.settrace`` opcode events; the same on every machine with this Python version), which
is how a change to the hot path is judged on a shared machine. ``malloc_free_loop_growth``
is what 100,000 untraced malloc/free pairs add to the process (a freed region must not
stay: the memory system keeps only live regions and a bounded graveyard).
"""

from __future__ import annotations

import cProfile
import gc
import io
import pstats
import sys
import threading
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE

from .common import (
    REPEATS,
    Row,
    acl_session,
    check,
    check_clean,
    median,
    n_calls,
    quiet_gc,
)

NAME = "api_overhead"

#: Bytes per copy, calls between stream synchronisations, malloc size and policy.
COPY_BYTES = 64
SYNC_EVERY = 1_000
MALLOC_SIZE = 1024
MALLOC_POLICY = ACL_MEM_MALLOC_NORMAL_ONLY  # 2
H2D = ACL_MEMCPY_HOST_TO_DEVICE  # 1

#: Targets (issue 15): one traced memcpy_async (µs; stretch 3 µs) and its ratio to the
#: plain-Python baseline, a malloc + free pair, one record_event, what tracing may add.
TARGET_MEMCPY_ASYNC_US = 5.0
TARGET_MEMCPY_VS_BASELINE = 15.0
TARGET_MALLOC_FREE_US = 6.0
TARGET_RECORD_EVENT_US = 3.0
TARGET_TRACED_VS_UNTRACED = 1.5
#: A malloc/free loop must not grow the process (MiB added by ``LOOP_PAIRS`` pairs).
TARGET_LOOP_GROWTH_MIB = 8.0
LOOP_PAIRS = 100_000

# ------------------------------------------------------------------------------ baseline

_THREADS: dict[int, object] = {}
_HANDLES: dict[int, object] = {}
_REGIONS: dict[int, object] = {}
_INTERN: dict[str, int] = {}
_LOG: list[tuple[Any, ...]] = []
_API_NAME = "acl.rt.memcpy_async"


def plain_dict_lookups(dst: int, dest_max: int, src: int, count: int, kind: int,
                       stream: int) -> int:
    """The baseline: six dict gets and one list append, with memcpy_async's arguments.

    Models the lookups the issue calls "the same dict lookups": the calling thread, the stream
    handle, the destination and source regions, the interned API name and the interned file,
    then one appended record. Returns 0 like a successful ACL call.
    """
    th = _THREADS.get(threading.get_ident())
    st = _HANDLES.get(stream)
    rd = _REGIONS.get(dst)
    rs = _REGIONS.get(src)
    n = _INTERN.get(_API_NAME)
    f = _INTERN.get(__file__)
    _LOG.append((n, f, th, st, rd, rs, dest_max, count, kind))
    return 0


def _reset_baseline(dst: int, src: int, stream: int) -> None:
    _LOG.clear()
    _THREADS.clear()
    _THREADS[threading.get_ident()] = object()
    _HANDLES.clear()
    _HANDLES[stream] = object()
    _REGIONS.clear()
    _REGIONS.update({dst: object(), src: object()})
    _INTERN.clear()
    _INTERN.update({_API_NAME: 0, __file__: 1})


# ------------------------------------------------------------------------------ timing

CopyLike = Callable[[int, int, int, int, int, int], int]


def _time_blocks(run_block: Callable[[int], Any], n: int, between: Callable[[], Any]) -> int:
    """ns spent in ``run_block(k)`` (k iterations of the measured loop) over ``n`` iterations
    in blocks of ``SYNC_EVERY``; ``between`` runs untimed after every block."""
    perf = time.perf_counter_ns
    total = 0
    done = 0
    while done < n:
        k = min(SYNC_EVERY, n - done)
        t0 = perf()
        run_block(k)
        total += perf() - t0
        done += k
        between()
    return total


def _time_copies(fn: CopyLike, dst: int, src: int, stream: int, n: int,
                 sync: Callable[[], Any]) -> int:
    """ns spent in ``n`` calls ``fn(dst, 64, src, 64, H2D, stream)``; ``sync`` runs untimed
    after every ``SYNC_EVERY`` calls."""
    def block(k: int) -> None:
        for _ in range(k):
            fn(dst, COPY_BYTES, src, COPY_BYTES, H2D, stream)
    return _time_blocks(block, n, sync)


def _copy_setup(acl: ModuleType) -> tuple[int, int, int]:
    """(device buffer, pinned host buffer, stream) of the memcpy_async loop."""
    stream, ret = acl.rt.create_stream()
    check(ret, "acl.rt.create_stream")
    host, ret = acl.rt.malloc_host(COPY_BYTES)
    check(ret, "acl.rt.malloc_host")
    # Fill the source: a copy of never-written bytes would also record an uninit read.
    check(acl.rt.memset(host, COPY_BYTES, 1, COPY_BYTES), "acl.rt.memset")
    dev, ret = acl.rt.malloc(COPY_BYTES, MALLOC_POLICY)
    check(ret, "acl.rt.malloc")
    return dev, host, stream


def memcpy_async_ns(record: bool, n: int) -> float:
    """ns per ``acl.rt.memcpy_async`` call over ``n`` calls in a fresh Session."""
    with acl_session(record) as (s, acl):
        dev, host, stream = _copy_setup(acl)
        memcpy_async = acl.rt.memcpy_async
        check(memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream),
              "acl.rt.memcpy_async")
        sync_rets: list[int] = []

        def sync() -> None:
            sync_rets.append(acl.rt.synchronize_stream(stream))

        with quiet_gc():
            ns = _time_copies(memcpy_async, dev, host, stream, n, sync)
        if any(sync_rets):
            raise RuntimeError(f"synchronize_stream returned {max(sync_rets)} in the loop")
        if record:
            check_clean(s)
    return ns / n


def baseline_ns(n: int) -> float:
    """ns per ``plain_dict_lookups`` call over ``n`` calls (same loop shape, no sync)."""
    dst, src, stream = 0x1200_0000_0000, 0x7F00_0000_0040, 0xA0_0000_0040
    _reset_baseline(dst, src, stream)
    with quiet_gc():
        ns = _time_copies(plain_dict_lookups, dst, src, stream, n, _LOG.clear)
    _LOG.clear()
    return ns / n


def record_event_ns(record: bool, n: int) -> float:
    """ns per ``acl.rt.record_event`` of one event on one stream over ``n`` calls."""
    with acl_session(record) as (s, acl):
        stream, ret = acl.rt.create_stream()
        check(ret, "acl.rt.create_stream")
        event, ret = acl.rt.create_event()
        check(ret, "acl.rt.create_event")
        record_event = acl.rt.record_event
        check(record_event(event, stream), "acl.rt.record_event")

        def block(k: int) -> None:
            for _ in range(k):
                record_event(event, stream)

        def sync() -> None:
            check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")

        with quiet_gc():
            total = _time_blocks(block, n, sync)
        check(acl.rt.destroy_event(event), "acl.rt.destroy_event")
        if record:
            check_clean(s)
    return total / n


def python_calls_per_copy(n: int = 2_000) -> float:
    """Python function calls (cProfile's count, C functions included) per traced
    memcpy_async: the same on every machine, busy or not."""
    prof = cProfile.Profile()
    with acl_session(True) as (_, acl):
        dev, host, stream = _copy_setup(acl)
        memcpy_async = acl.rt.memcpy_async
        memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)
        acl.rt.synchronize_stream(stream)
        prof.enable()
        for _ in range(n):
            memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)
        prof.disable()
        acl.rt.synchronize_stream(stream)
    stats = pstats.Stats(prof)
    return stats.total_calls / n  # type: ignore[attr-defined]


def _bytecodes(fn: Callable[[], Any], n: int) -> float:
    """Bytecode instructions executed per ``fn()`` (opcode events of ``sys.settrace``), the
    calling loop's own excluded."""
    count = 0
    here = sys._getframe().f_code

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        if event == "opcode" and frame.f_code is not here:
            count += 1
        return trace

    sys.settrace(trace)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.settrace(None)
    return count / n


def bytecodes_per_call(n: int = 300) -> dict[str, float]:
    """Bytecodes one traced memcpy_async, malloc + free pair and record_event execute (their
    own and every function's they call, the runtime's and the recorder's): the same on any
    machine, busy or not."""
    with acl_session(True) as (_, acl):
        dev, host, stream = _copy_setup(acl)
        event, ret = acl.rt.create_event()
        check(ret, "acl.rt.create_event")
        memcpy_async, record_event = acl.rt.memcpy_async, acl.rt.record_event
        malloc, free = acl.rt.malloc, acl.rt.free
        for _ in range(10):
            memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)

        def copy() -> None:
            memcpy_async(dev, COPY_BYTES, host, COPY_BYTES, H2D, stream)

        def pair() -> None:
            ptr, _ = malloc(MALLOC_SIZE, MALLOC_POLICY)
            free(ptr)

        out = {"copy": _bytecodes(copy, n)}
        check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
        out["pair"] = _bytecodes(pair, n)
        out["event"] = _bytecodes(lambda: record_event(event, stream), n)
        check(acl.rt.synchronize_stream(stream), "acl.rt.synchronize_stream")
    return out


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / (1 << 20)


def malloc_free_loop_growth_mib(pairs: int = LOOP_PAIRS) -> float:
    """MiB of resident memory ``pairs`` untraced malloc/free pairs add to the process."""
    with acl_session(False) as (_, acl):
        malloc, free = acl.rt.malloc, acl.rt.free
        for _ in range(1000):  # warm up the allocator's free lists
            ptr, _ = malloc(MALLOC_SIZE, MALLOC_POLICY)
            free(ptr)
        gc.collect()
        before = _rss_mib()
        for _ in range(pairs):
            ptr, _ = malloc(MALLOC_SIZE, MALLOC_POLICY)
            free(ptr)
        gc.collect()
        return _rss_mib() - before


def malloc_free_ns(record: bool, n: int) -> float:
    """ns per ``malloc(1024, 2)`` + ``free`` pair over ``n`` pairs in a fresh Session."""
    with acl_session(record) as (s, acl):
        malloc, free = acl.rt.malloc, acl.rt.free
        ptr, ret = malloc(MALLOC_SIZE, MALLOC_POLICY)
        check(ret, "acl.rt.malloc")
        check(free(ptr), "acl.rt.free")

        def block(k: int) -> None:
            for _ in range(k):
                p, _ret = malloc(MALLOC_SIZE, MALLOC_POLICY)
                free(p)

        with quiet_gc():
            total = _time_blocks(block, n, lambda: None)
        ptr, ret = malloc(MALLOC_SIZE, MALLOC_POLICY)
        check(ret, "acl.rt.malloc after the loop")
        check(free(ptr), "acl.rt.free after the loop")
        if record:
            check_clean(s)
    return total / n


# ------------------------------------------------------------------------------ run


def run(quick: bool) -> list[Row]:
    """Time traced / untraced memcpy_async and malloc+free against the baseline."""
    n = n_calls(quick)
    samples: dict[str, list[float]] = {k: [] for k in (
        "base", "copy_t", "copy_u", "pair_t", "pair_u",
        "copy_t_ratio", "copy_u_ratio", "copy_tu_ratio", "copy_added",
        "pair_ratio", "pair_tu_ratio", "event_t", "event_u")}
    for _ in range(REPEATS):
        # One repeat: every side back to back, so the ratios share the machine's state.
        base = baseline_ns(n)
        copy_t = memcpy_async_ns(True, n)
        copy_u = memcpy_async_ns(False, n)
        pair_t = malloc_free_ns(True, n)
        pair_u = malloc_free_ns(False, n)
        event_t = record_event_ns(True, n)
        event_u = record_event_ns(False, n)
        for key, v in (("base", base), ("copy_t", copy_t), ("copy_u", copy_u),
                       ("event_t", event_t), ("event_u", event_u),
                       ("pair_t", pair_t), ("pair_u", pair_u),
                       ("copy_t_ratio", copy_t / base), ("copy_u_ratio", copy_u / base),
                       ("copy_tu_ratio", copy_t / copy_u), ("copy_added", copy_t - copy_u),
                       ("pair_ratio", pair_t / 2 / base), ("pair_tu_ratio", pair_t / pair_u)):
            samples[key].append(v)
    m = {k: median(v) for k, v in samples.items()}
    us = 1e-3
    ops = bytecodes_per_call()
    return [
        Row(NAME, "memcpy_async_traced", m["copy_t"] * us, "µs/call", TARGET_MEMCPY_ASYNC_US),
        Row(NAME, "memcpy_async_untraced", m["copy_u"] * us, "µs/call"),
        Row(NAME, "memcpy_async_tracing_adds", m["copy_added"] * us, "µs/call"),
        Row(NAME, "memcpy_async_python_calls", python_calls_per_copy(), "calls"),
        Row(NAME, "malloc_free_pair_traced", m["pair_t"] * us, "µs/pair",
            TARGET_MALLOC_FREE_US),
        Row(NAME, "malloc_free_pair_untraced", m["pair_u"] * us, "µs/pair"),
        Row(NAME, "record_event_traced", m["event_t"] * us, "µs/call", TARGET_RECORD_EVENT_US),
        Row(NAME, "record_event_untraced", m["event_u"] * us, "µs/call"),
        Row(NAME, "baseline_plain_dict_lookups", m["base"] * us, "µs/call"),
        Row(NAME, "memcpy_async_traced_vs_baseline", m["copy_t_ratio"], "x",
            TARGET_MEMCPY_VS_BASELINE),
        Row(NAME, "memcpy_async_untraced_vs_baseline", m["copy_u_ratio"], "x"),
        Row(NAME, "memcpy_async_traced_vs_untraced", m["copy_tu_ratio"], "x",
            TARGET_TRACED_VS_UNTRACED),
        Row(NAME, "malloc_free_traced_per_call_vs_baseline", m["pair_ratio"], "x"),
        Row(NAME, "malloc_free_traced_vs_untraced", m["pair_tu_ratio"], "x"),
        Row(NAME, "memcpy_async_bytecodes", ops["copy"], "ops"),
        Row(NAME, "malloc_free_pair_bytecodes", ops["pair"], "ops"),
        Row(NAME, "record_event_bytecodes", ops["event"], "ops"),
        Row(NAME, "malloc_free_loop_growth", malloc_free_loop_growth_mib(LOOP_PAIRS // 10
                                                                          if quick else
                                                                          LOOP_PAIRS),
            "MiB", TARGET_LOOP_GROWTH_MIB),
    ]


def profile_memcpy_async(quick: bool, top: int = 10) -> str:
    """cProfile one traced memcpy_async loop; the ``top`` functions by tottime, as text."""
    n = n_calls(quick)
    prof = cProfile.Profile()
    with acl_session(True) as (_, acl):
        dev, host, stream = _copy_setup(acl)
        memcpy_async = acl.rt.memcpy_async

        def sync() -> None:
            acl.rt.synchronize_stream(stream)

        prof.enable()
        _time_copies(memcpy_async, dev, host, stream, n, sync)
        prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()
