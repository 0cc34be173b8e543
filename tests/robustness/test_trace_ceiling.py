"""The trace's memory bound: a runaway loop stays under ``trace_limit_bytes``.

Past three quarters of the bound the recorder leaves out successful calls that nothing else
refers to, finished tasks beyond the first few of each signature that no finding and no
ordering needs, and host waits that told the host nothing new; allocations, frees, objects,
callbacks, diagnostics, failed calls and every task a finding refers to are always kept. So
findings stay at their file:line (and a race is never invented), ids stay consistent, the
file round trips, and a ``trace_truncated`` warning says what was left out, which findings
may be incomplete and how to raise the limit. Below the bound nothing changes at all.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import DEFAULT_TRACE_LIMIT_MB, Session
from acl_lab.tracer.recorder import KEEP_CALLS, TASK_KEEP_PER_SITE, Recorder
from acl_lab.tracer.schema import TASK_KINDS
from acl_lab.tracer.trace import Trace

pytestmark = pytest.mark.timeout(240)

MiB = 1 << 20
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY
H2D = ACL_MEMCPY_HOST_TO_DEVICE
D2H = ACL_MEMCPY_DEVICE_TO_HOST
LOOP_CALLS = 300_000
LIMIT = 2 * MiB
#: The copy loop: iterations (two memcpy_async each) and its limit.
COPY_ITERATIONS = 150_000
COPY_LIMIT = 4 * MiB


def here() -> int:
    """The caller's line number (to find a finding's line in this file)."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def run(program: Callable[[ModuleType, Session], Any], watchdog: float = 10.0,
        **kwargs: Any) -> tuple[Trace, Any]:
    """Run ``program(acl, session)`` in a fresh Session; return (trace, its result)."""
    with Session(watchdog=watchdog, **kwargs) as s:
        acl = acl_lab.install()
        try:
            result = program(acl, s)
            return s.finish(), result
        finally:
            acl_lab.uninstall()


def dropped_tasks(trace: Trace) -> int:
    """Tasks the trace left out (0 when it left none out)."""
    return sum(trace.meta.get("dropped_tasks", {}).values())


def findings_of(trace: Trace) -> list[tuple[str, str, int, str]]:
    """(kind, file, line, message) of every finding except trace_truncated."""
    return sorted((f.kind, f.file, f.line, f.message) for f in trace.findings()
                  if f.kind != "trace_truncated")


_COUNTS = re.compile(r" It happened \d+ times at the same two lines \(e\.g\. in a loop\)\.")


def same_findings(trace: Trace) -> list[tuple[str, str, int, str]]:
    """``findings_of`` with how often a race happened taken out of its message: a truncated
    trace checks the races of a site only for its first occurrences."""
    return [(k, f, ln, _COUNTS.sub("", m)) for k, f, ln, m in findings_of(trace)]


def truncation(trace: Trace) -> Any:
    """The one trace_truncated finding."""
    found = [f for f in trace.findings() if f.kind == "trace_truncated"]
    assert len(found) == 1
    return found[0]


def assert_refs_consistent(trace: Trace) -> None:
    """Every table that names a call names the right one: an API that makes such rows, and
    one whose time span holds the row's time."""
    names = [trace.call_name(c) for c in range(trace.calls.rows)]
    start, end = trace.calls["start_ns"], trace.calls["end_ns"]
    expect: dict[tuple[str, str], tuple[str, ...]] = {
        ("tasks", "call"): ("acl.rt.memcpy", "acl.rt.record_event",
                            "acl.rt.stream_wait_event", "acl.rt.launch_callback"),
        ("allocs", "call"): ("acl.rt.malloc", "acl.util.bytes_to_ptr"),
        ("frees", "call"): ("acl.rt.free", "acl.rt.reset_device", "acl_lab.exit"),
        ("syncs", "call"): ("acl.rt.synchronize", "acl.rt.process_report", "acl.rt.reset",
                            "acl.rt.destroy", "acl.finalize", "acl.util.stop_thread"),
        ("objects", "call"): ("acl.rt.set_device", "acl.rt.create", "acl.mdl.create",
                              "acl.create"),
        ("destroys", "call"): ("acl.rt.destroy", "acl.rt.reset_device", "acl.mdl.destroy",
                               "acl.destroy", "acl_lab.exit"),
        ("diags", "call"): ("acl.",),
    }
    for (table, col), prefixes in expect.items():
        t = trace.tables[table]
        for i in range(t.rows):
            c = int(t[col][i])
            assert 0 <= c < trace.calls.rows, (table, i)
            assert names[c].startswith(prefixes), (table, i, names[c])
    tk = trace.tasks
    for i in range(tk.rows):
        c = int(tk["call"][i])
        assert start[c] <= tk["submit_ns"][i] <= end[c], ("task", i, names[c])
    for s in set(tk["stream"].tolist()) - {-1}:  # stream order is row order
        assert np.all(np.diff(tk["submit_ns"][tk["stream"] == s]) >= 0), ("stream", s)
    ed, kinds = trace.edges, [TASK_KINDS[int(k)] for k in tk["kind"]]
    for i in range(ed.rows):  # every edge joins a record and a wait of one event
        r, w = int(ed["record"][i]), int(ed["wait"][i])
        assert (kinds[r], kinds[w]) == ("event_record", "event_wait"), ("edge", i)
        assert tk["event"][r] == tk["event"][w] and r < w, ("edge", i)
    sy = trace.syncs
    for i in range(sy.rows):
        c = int(sy["call"][i])
        assert start[c] <= sy["start_ns"][i] and sy["end_ns"][i] <= end[c], ("sync", i)


# --------------------------------------------------------------------------- the runaway loop
def runaway(acl: ModuleType, s: Session) -> dict[str, Any]:
    """300,000 cheap calls with a leak, a double free and failing calls inside the loop."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    lines: dict[str, int] = {}
    peak = fails = 0
    get_device = acl.rt.get_device
    for i in range(LOOP_CALLS):
        get_device()
        if i % 50_000 == 20_000:
            lines["leak"] = here() + 1
            acl.rt.malloc(1000, NORMAL)  # never freed
        if i % 100_000 == 60_000:
            ptr, _ = acl.rt.malloc(64, NORMAL)
            assert acl.rt.free(ptr) == ACL_SUCCESS
            lines["double_free"] = here() + 1
            acl.rt.free(ptr)
        if i % 30_000 == 29_999:
            fails += 1
            assert acl.rt.set_context(0) != ACL_SUCCESS  # a failing call: always kept
            peak = max(peak, s.recorder.footprint())
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    assert acl.finalize() == ACL_SUCCESS
    return {"lines": lines, "peak": peak, "fails": fails, "calls": s.call_count,
            "footprint": s.recorder.footprint(), "nbytes": s.recorder.nbytes()}


@pytest.fixture(scope="module")
def runaway_trace() -> Iterator[tuple[Trace, dict[str, Any]]]:
    """The runaway loop's trace under a 2 MiB limit, and what the program saw."""
    yield run(runaway, trace_limit_bytes=LIMIT)


def test_runaway_loop_stays_under_the_limit(runaway_trace: tuple[Trace, dict[str, Any]]
                                            ) -> None:
    """300,000 calls under a 2 MiB limit: the recorder's buffers never pass it, every call is
    either a row or counted as dropped, and failed calls are all rows."""
    trace, seen = runaway_trace
    assert seen["peak"] <= LIMIT and seen["footprint"] <= LIMIT and seen["nbytes"] <= LIMIT
    dropped = trace.meta["dropped_calls"]
    assert trace.calls.rows + sum(dropped.values()) == seen["calls"] > LOOP_CALLS
    assert trace.stats()["api_calls"] == seen["calls"]
    assert dropped["acl.rt.get_device"] > 0.8 * LOOP_CALLS
    assert set(dropped) <= {"acl.rt.get_device", "acl.finalize"}
    assert int((trace.calls["ret"] != 0).sum()) == seen["fails"] + 3  # + 3 double frees
    assert trace.meta["trace_limit_bytes"] == LIMIT
    assert trace.meta["trace_bytes"] == seen["footprint"]
    print(f"\nrunaway loop: {seen['calls']} calls, {trace.calls.rows} kept, "
          f"{sum(dropped.values())} dropped, peak {seen['peak']} B of {LIMIT} B")


def test_findings_inside_the_loop_survive(runaway_trace: tuple[Trace, dict[str, Any]]) -> None:
    """The leak and the double free made inside the loop are found with their file:line,
    next to one trace_truncated warning that explains the limit and how to raise it."""
    trace, seen = runaway_trace
    got = {(k, f, ln) for k, f, ln, _ in findings_of(trace)}
    assert got == {("leak", __file__, seen["lines"]["leak"]),
                   ("double_free", __file__, seen["lines"]["double_free"])}
    leak = next(f for f in trace.findings() if f.kind == "leak")
    assert "6 device allocations" in leak.message
    warn = truncation(trace)
    assert warn.severity == "warning" and warn.file == __file__
    dropped = sum(trace.meta["dropped_calls"].values())
    for text in (f"{dropped} successful call(s)", "2.0 MiB", "acl.rt.get_device (aclrtGetDevice) x",
                 "trace_limit_bytes", "ACL_LAB_TRACE_LIMIT_MB="):
        assert text in warn.message, text
    assert_refs_consistent(trace)


def test_truncated_trace_round_trips(tmp_path: Path,
                                     runaway_trace: tuple[Trace, dict[str, Any]]) -> None:
    """A truncated trace saves and loads (strict validation passes) with the same rows, the
    same meta and the same findings."""
    trace, _ = runaway_trace
    path = tmp_path / "truncated.acltrace"
    trace.save(path)
    back = Trace.load(path)
    assert back.meta == trace.meta and back.strings == trace.strings
    for name, table in trace.tables.items():
        for col in table:
            assert np.array_equal(table[col], back.tables[name][col]), (name, col)
    assert [str(f) for f in back.findings()] == [str(f) for f in trace.findings()]


# --------------------------------------------------------------------------- the copy loop
def copy_loop(acl: ModuleType, s: Session, iterations: int, wait: bool) -> dict[str, Any]:
    """Two streams take turns on one device buffer: stream a writes it (H2D), records an
    event, stream b waits for the event (unless ``wait`` is False: a real race) and reads the
    buffer back (D2H). At fixed fractions of the loop, inside it: a copy at a new line (a
    late race site without the wait), two leaked allocations, a free in flight, a double
    free and a use after free. Returns the lines, the recorder's peak footprint (sampled
    during the loop) and the runtime's call and task counts."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    streams = (acl.rt.create_stream()[0], acl.rt.create_stream()[0])
    ev, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 7, 64) == ACL_SUCCESS
    out, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(64, NORMAL)
    probe, leaks, bad = iterations * 2 // 3, (iterations // 2, iterations * 3 // 4), \
        iterations * 5 // 6
    every = max(1, iterations // 300)
    lines: dict[str, int] = {}
    peak = 0
    memcpy_async, record_event, stream_wait_event = (acl.rt.memcpy_async, acl.rt.record_event,
                                                     acl.rt.stream_wait_event)
    for i in range(iterations):
        a, b = streams[i & 1], streams[1 - (i & 1)]
        memcpy_async(dev, 64, host, 64, H2D, a)
        record_event(ev, a)
        if wait:
            stream_wait_event(b, ev)
        memcpy_async(out, 64, dev, 64, D2H, b)
        if not i:
            lines["write"], lines["read"] = here() - 6, here() - 2
        if i == probe:
            lines["probe"] = here() + 1
            memcpy_async(dev, 64, host, 64, H2D, b)
        if i in leaks:
            lines["leak"] = here() + 1
            acl.rt.malloc(1000, NORMAL)  # never freed
        if i == bad:
            tmp, _ = acl.rt.malloc(64, NORMAL)
            memcpy_async(tmp, 64, host, 64, H2D, a)
            lines["in_flight"] = here() + 1
            acl.rt.free(tmp)  # the copy above has not run yet
            lines["double_free"] = here() + 1
            acl.rt.free(tmp)
            lines["use_after_free"] = here() + 1
            memcpy_async(out, 64, tmp, 64, D2H, b)
        if i % every == 0:
            peak = max(peak, s.recorder.footprint())
    for st in streams:
        acl.rt.synchronize_stream(st)  # (reports the failed copy)
    assert acl.rt.destroy_event(ev) == ACL_SUCCESS
    assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0 and acl.rt.free_host(out) == 0
    for st in streams:
        assert acl.rt.destroy_stream(st) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    assert acl.finalize() == ACL_SUCCESS
    return {"lines": lines, "peak": peak, "calls": s.call_count, "tasks": s.task_count,
            "footprint": s.recorder.footprint()}


@pytest.fixture(scope="module", params=["wait", "no_wait"])
def copy_loop_run(request: pytest.FixtureRequest) -> Iterator[tuple[Trace, dict[str, Any],
                                                                     Trace]]:
    """The copy loop (300,000 memcpy_async) under a 4 MiB limit, what it saw, and the same
    program with 600 iterations and no limit."""
    wait = request.param == "wait"
    trace, seen = run(lambda acl, s: copy_loop(acl, s, COPY_ITERATIONS, wait),
                      trace_limit_bytes=COPY_LIMIT)
    small, _ = run(lambda acl, s: copy_loop(acl, s, 600, wait))
    seen["wait"] = wait
    yield trace, seen, small


@pytest.mark.slow  # a 300,000-call loop (make test, not make check)
def test_copy_loop_stays_under_the_limit(copy_loop_run: tuple[Trace, dict[str, Any], Trace]
                                         ) -> None:
    """300,000 memcpy_async with an event per iteration under 4 MiB: the recorder never
    passes the limit during the loop, and every call and task is a row or counted as left
    out."""
    trace, seen, _ = copy_loop_run
    assert seen["peak"] <= COPY_LIMIT and seen["footprint"] <= COPY_LIMIT
    assert trace.meta["trace_bytes"] <= seen["footprint"]  # freeze removes what was left out
    tasks, calls = trace.meta["dropped_tasks"], trace.meta["dropped_calls"]
    assert trace.tasks.rows + sum(tasks.values()) == seen["tasks"] > 3 * COPY_ITERATIONS
    assert trace.calls.rows + sum(calls.values()) == seen["calls"]
    assert tasks["acl.rt.memcpy_async"] > 0.9 * 2 * COPY_ITERATIONS
    events = {"acl.rt.record_event", "acl.rt.stream_wait_event"} if seen["wait"] else \
        {"acl.rt.record_event"}
    assert set(tasks) == {"acl.rt.memcpy_async"} | events
    assert trace.tasks.rows < seen["tasks"] / 20
    assert_refs_consistent(trace)
    print(f"\ncopy loop ({'wait' if seen['wait'] else 'no wait'}): {seen['calls']} calls, "
          f"{seen['tasks']} tasks, {trace.tasks.rows} tasks kept, peak {seen['peak']} B of "
          f"{COPY_LIMIT} B")


@pytest.mark.slow  # a 300,000-call loop (make test, not make check)
def test_copy_loop_findings_survive(copy_loop_run: tuple[Trace, dict[str, Any], Trace]
                                    ) -> None:
    """The findings of the loop are those of a short run without limit, at the same lines:
    the leak, free in flight, double free and use after free made inside the loop, and the
    races between the streams (the late one at the new line included) without the wait;
    with the wait, no race at all, although most waits were left out."""
    trace, seen, small = copy_loop_run
    lines = seen["lines"]
    got = same_findings(trace)
    assert got == same_findings(small)
    kinds = {(k, ln) for k, _, ln, _ in got}
    assert {("leak", lines["leak"]), ("free_in_flight", lines["in_flight"]),
            ("double_free", lines["double_free"]),
            ("use_after_free", lines["use_after_free"])} <= kinds
    leak = next(m for k, _, ln, m in got if (k, ln) == ("leak", lines["leak"]))
    assert "2 device allocations" in leak
    races = {ln for k, _, ln, _ in got if k == "race"}
    if seen["wait"]:
        assert races == set()
        assert trace.meta["dropped_tasks"]["acl.rt.stream_wait_event"] > 0.9 * COPY_ITERATIONS
    else:
        assert races == {lines["write"], lines["read"], lines["probe"]}
    warn = truncation(trace)
    assert warn.severity == "warning" and warn.file == __file__
    dropped = sum(trace.meta["dropped_tasks"].values())
    for text in (f"{dropped} finished task(s)", "acl.rt.memcpy_async x", "4.0 MiB",
                 f"races after task {trace.meta['dropped_tasks_after']} were checked only for "
                 f"the first {TASK_KEEP_PER_SITE} occurrences", "trace_limit_bytes",
                 "ACL_LAB_TRACE_LIMIT_MB="):
        assert text in warn.message, text


@pytest.mark.slow  # a 300,000-call loop (make test, not make check)
def test_truncated_copy_loop_round_trips(tmp_path: Path, copy_loop_run: tuple[
        Trace, dict[str, Any], Trace]) -> None:
    """The truncated copy loop saves and loads (strict validation passes) with the same rows,
    meta and findings."""
    trace, _, _ = copy_loop_run
    path = tmp_path / "copies.acltrace"
    trace.save(path)
    back = Trace.load(path)
    assert back.meta == trace.meta and back.strings == trace.strings
    for name, table in trace.tables.items():
        for col in table:
            assert np.array_equal(table[col], back.tables[name][col]), (name, col)
    assert [str(f) for f in back.findings()] == [str(f) for f in trace.findings()]


def host_sync_loop(acl: ModuleType, s: Session, iterations: int, sync: bool) -> int:
    """A stream writes a buffer that the host then copies out synchronously, after waiting
    for the stream (synchronize_event and synchronize_stream in turn) unless ``sync`` is
    False (a race). At two thirds, one extra copy at a new line before the record."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    stream, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 7, 64) == ACL_SUCCESS
    back, _ = acl.rt.malloc_host(64)
    dev, _ = acl.rt.malloc(64, NORMAL)
    probe = iterations * 2 // 3 | 1
    for i in range(iterations):
        acl.rt.memcpy_async(dev, 64, host, 64, H2D, stream)
        if i == probe:
            acl.rt.memcpy_async(dev, 64, host, 64, H2D, stream)
        acl.rt.record_event(ev, stream)
        if sync and i & 1:
            acl.rt.synchronize_event(ev)
        elif sync:
            acl.rt.synchronize_stream(stream)
        acl.rt.memcpy(back, 64, dev, 64, D2H)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.destroy_event(ev) == ACL_SUCCESS
    assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0 and acl.rt.free_host(back) == 0
    assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    return s.task_count


@pytest.mark.parametrize("sync", [True, False])
def test_host_waits_keep_their_ordering(sync: bool) -> None:
    """Host copies after synchronize_event / synchronize_stream, with the copies, records
    and host tasks mostly left out: no race with the waits (the record after the extra copy
    at a new line is kept: the host's event sync needs what it knows), the same races as
    without a limit when the waits are missing."""
    trace, tasks = run(lambda acl, s: host_sync_loop(acl, s, 6_000, sync),
                       trace_limit_bytes=256 * 1024)
    full, _ = run(lambda acl, s: host_sync_loop(acl, s, 6_000, sync))
    dropped = trace.meta["dropped_tasks"]
    assert trace.tasks.rows + sum(dropped.values()) == tasks == full.tasks.rows
    assert dropped["acl.rt.memcpy"] > 3_000 and dropped["acl.rt.memcpy_async"] > 3_000
    if sync:
        assert dropped["acl.rt.record_event"] > 3_000
    assert same_findings(trace) == same_findings(full)
    assert any(k == "race" for k, *_ in findings_of(full)) is not sync
    assert trace.meta["trace_bytes"] <= trace.meta["trace_limit_bytes"]
    assert_refs_consistent(trace)


# --------------------------------------------------------------------------- same findings
def buggy(acl: ModuleType, s: Session, iterations: int = 3_000) -> None:
    """A loop with bugs of many kinds between droppable calls (a copy race, a free in flight,
    a leak, a double free, a pageable async copy, a thread with no context)."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    ctx, _ = acl.rt.get_context()
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event()
    host, _ = acl.rt.malloc_host(256)
    assert acl.rt.memset(host, 256, 1, 256) == ACL_SUCCESS
    page = np.ones(256, np.uint8).tobytes()
    page_ptr = acl.util.bytes_to_ptr(page)
    dev, _ = acl.rt.malloc(256, NORMAL)
    for i in range(iterations):
        acl.rt.get_device()
        acl.rt.set_context(ctx)
        acl.rt.get_context()
        if i % 500 == 7:
            acl.rt.memcpy_async(dev, 256, host, 256, H2D, s1)
            acl.rt.memcpy_async(dev, 256, host, 256, H2D, s2)  # race with s1
            acl.rt.record_event(ev, s1)
            acl.rt.stream_wait_event(s2, ev)
            acl.rt.synchronize_stream(s2)
            acl.rt.synchronize_stream(s1)
        if i % 1000 == 11:
            tmp, _ = acl.rt.malloc(128, NORMAL)
            acl.rt.memcpy_async(tmp, 128, host, 128, H2D, s1)
            acl.rt.free(tmp)  # free in flight
            acl.rt.free(tmp)  # double free
            acl.rt.synchronize_stream(s1)
        if i % 1000 == 13:
            acl.rt.malloc(64, NORMAL)  # leak
            acl.rt.memcpy_async(dev, 256, page_ptr, 256, H2D, s1)  # pageable
            acl.rt.synchronize_stream(s1)
    t = threading.Thread(target=lambda: acl.rt.malloc(64, NORMAL), name="no-context")
    t.start()
    t.join()
    acl.rt.free(dev)
    acl.rt.free_host(host)
    acl.rt.destroy_event(ev)


def test_truncated_trace_has_the_same_findings_as_the_full_one() -> None:
    """The same buggy program with and without a small limit: the same findings, the same
    messages and lines (races: but for how often); the small one only adds trace_truncated,
    keeps every row the findings name and keeps ids consistent."""
    full, _ = run(buggy)
    small, _ = run(buggy, trace_limit_bytes=128 * 1024)
    assert "dropped_calls" not in full.meta
    assert sum(small.meta["dropped_calls"].values()) > 5_000
    assert small.calls.rows < full.calls.rows / 2
    want = same_findings(full)
    assert {k for k, *_ in want} >= {"race", "free_in_flight", "leak", "double_free",
                                     "pageable_async_copy", "context_not_set"}
    assert same_findings(small) == want
    truncation(small)
    assert not [f for f in full.findings() if f.kind == "trace_truncated"]
    for table in ("allocs", "frees", "objects", "destroys", "failures", "uninit",
                  "callbacks"):
        assert small.tables[table].rows == full.tables[table].rows, table
    assert small.syncs.rows <= full.syncs.rows  # a wait that told the host nothing new goes
    dropped = dropped_tasks(small)
    assert small.tasks.rows + dropped == full.tasks.rows
    assert_refs_consistent(small)
    assert_refs_consistent(full)


# --------------------------------------------------------------------------- what is kept
def test_calls_that_matter_are_kept_while_shedding() -> None:
    """While shedding: failed calls, calls with pointer arguments, calls that make objects,
    the calls the checks read by name and the calls a callback makes are kept; plain
    successful queries are dropped."""

    def program(acl: ModuleType, s: Session) -> dict[str, int]:
        assert acl.init() == ACL_SUCCESS
        assert acl.rt.set_device(0) == ACL_SUCCESS
        ctx, _ = acl.rt.get_context()
        stream, _ = acl.rt.create_stream()
        while not s.recorder.shedding:
            acl.rt.get_device()
        host, _ = acl.rt.malloc_host(64)
        assert acl.rt.memset(host, 64, 0, 64) == ACL_SUCCESS
        acl.util.ptr_to_bytes(host, 8)                      # pointer argument
        ds = acl.mdl.create_dataset()                       # an object
        buf = acl.create_data_buffer(host, 64)
        assert acl.mdl.add_dataset_buffer(ds, buf)[1] == 0  # read by name by the checks
        out: dict[str, int] = {}
        th = threading.Thread(target=lambda: out.setdefault(
            "ret", acl.rt.get_device()[1]), name="no-context")
        th.start()
        th.join()
        assert acl.rt.subscribe_report(threading.get_ident(), stream) == ACL_SUCCESS
        assert acl.rt.launch_callback(lambda _: acl.rt.get_context(), None,
                                      ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS
        assert acl.rt.process_report(1000) == ACL_SUCCESS
        for _ in range(100):
            acl.rt.set_context(ctx)
        assert acl.mdl.destroy_dataset(ds) == ACL_SUCCESS
        assert acl.destroy_data_buffer(buf) == ACL_SUCCESS
        assert acl.rt.free_host(host) == ACL_SUCCESS
        assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
        return out

    trace, out = run(program, trace_limit_bytes=64 * 1024)
    assert out["ret"] == ACL_ERROR_RT_CONTEXT_NULL
    names = [trace.call_name(c) for c in range(trace.calls.rows)]
    tail = names[names.index("acl.rt.malloc_host"):]
    for api in ("acl.util.ptr_to_bytes", "acl.mdl.create_dataset", "acl.create_data_buffer",
                *KEEP_CALLS, "acl.rt.launch_callback",
                "acl.rt.process_report", "acl.mdl.destroy_dataset", "acl.rt.free_host"):
        assert tail.count(api) == 1, api
    failed = [c for c in range(trace.calls.rows) if trace.calls["ret"][c] != 0]
    assert [names[c] for c in failed] == ["acl.rt.get_device"]
    assert "acl.rt.set_context" not in tail
    assert trace.meta["dropped_calls"]["acl.rt.set_context"] == 100
    assert trace.callbacks.rows == 1
    assert_refs_consistent(trace)


def one_stream_copies(acl: ModuleType, s: Session, threads: bool = False) -> int:
    """3,000 copies on one stream, some reading never-written memory and some running past
    their buffer; with ``threads``, a second thread made a call first."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    if threads:
        t = threading.Thread(target=acl.rt.get_device, name="other")
        t.start()
        t.join()
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 0, 64) == ACL_SUCCESS
    dev, _ = acl.rt.malloc(64, NORMAL)
    blank, _ = acl.rt.malloc(64, NORMAL)  # never written
    for i in range(3_000):
        acl.rt.memcpy_async(dev, 64, host, 64, H2D, stream)
        if i % 500 == 499:
            acl.rt.memcpy_async(host, 64, blank, 64, D2H, stream)  # uninitialised read
        if i % 700 == 699:
            acl.rt.memcpy_async(dev + 64, 64, host, 64, H2D, stream)  # past the end: fails
            acl.rt.synchronize_stream(stream)  # (reports the failure)
    acl.rt.synchronize_stream(stream)
    assert acl.rt.free(dev) == 0 and acl.rt.free(blank) == 0 and acl.rt.free_host(host) == 0
    assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    return s.task_count


def test_tasks_past_the_first_of_their_site_are_left_out() -> None:
    """A copy loop under a tiny limit: repeated copies are left out, but every failed copy
    and every uninitialised read stays, so those findings have the same counts as without a
    limit, and the warning says which findings may be incomplete."""
    full, _ = run(one_stream_copies)
    trace, tasks = run(one_stream_copies, trace_limit_bytes=64 * 1024)
    dropped = trace.meta["dropped_tasks"]
    assert set(dropped) == {"acl.rt.memcpy_async"} and dropped["acl.rt.memcpy_async"] > 2_000
    assert trace.tasks.rows + dropped["acl.rt.memcpy_async"] == tasks == full.tasks.rows
    assert trace.failures.rows == full.failures.rows == 4
    assert trace.uninit.rows == full.uninit.rows == 6
    assert findings_of(trace) == findings_of(full)  # counts included
    assert {k for k, *_ in findings_of(trace)} >= {"out_of_bounds", "uninitialized_read"}
    warn = truncation(trace).message
    for text in (f"{dropped['acl.rt.memcpy_async']} finished task(s)", "64.0 KiB",
                 "acl.rt.memcpy_async x", f"first {TASK_KEEP_PER_SITE} occurrences",
                 f"races after task {trace.meta['dropped_tasks_after']}",
                 "uninitialised reads are all found", "ACL_LAB_TRACE_LIMIT_MB="):
        assert text in warn, text
    assert trace.meta["trace_bytes"] <= trace.meta["trace_limit_bytes"]
    assert_refs_consistent(trace)


@pytest.mark.parametrize("bad", [{"acl.rt.memcpy_async": "7"}, {"acl.rt.memcpy_async": 0}])
def test_load_checks_the_dropped_task_counts(bad: dict[str, Any]) -> None:
    """Trace.load accepts the dropped-task counts of a truncated trace and refuses counts that
    are not positive integers, naming the field."""
    trace, _ = run(one_stream_copies, trace_limit_bytes=64 * 1024)
    doc = trace.to_dict()
    assert Trace.from_dict(doc).meta["dropped_tasks"] == trace.meta["dropped_tasks"]
    doc["meta"] = dict(doc["meta"], dropped_tasks=bad)
    with pytest.raises(ValueError, match=r"meta\.dropped_tasks\['acl\.rt\.memcpy_async'\]"):
        Trace.from_dict(doc)


def test_tasks_are_left_out_with_several_threads() -> None:
    """With a second host thread (which made a call first) the recorder still leaves
    repeated copies out, under the limit, with the findings of the unlimited run (counts
    included): each thread has its own clock (``acl_lab.tracer.shedding``)."""
    full, _ = run(lambda acl, s: one_stream_copies(acl, s, threads=True))
    trace, tasks = run(lambda acl, s: one_stream_copies(acl, s, threads=True),
                       trace_limit_bytes=64 * 1024)
    dropped = trace.meta["dropped_tasks"]
    assert dropped["acl.rt.memcpy_async"] > 2_000
    assert trace.tasks.rows + dropped["acl.rt.memcpy_async"] == tasks == full.tasks.rows
    assert trace.meta["trace_bytes"] <= trace.meta["trace_limit_bytes"]
    assert "task_shedding_stopped" not in trace.meta
    assert findings_of(trace) == findings_of(full)
    assert trace.threads.rows == full.threads.rows == 2
    assert_refs_consistent(trace)


def test_a_backlog_of_unfinished_tasks_is_reported() -> None:
    """Copies queued much faster than the device runs them stay in the trace until they have
    run (a free or a failure may still name them): the trace passes its limit while the
    loop runs, drops them once they finished, and the warning says so and how to avoid it."""

    def program(acl: ModuleType, s: Session) -> int:
        assert acl.init() == ACL_SUCCESS
        assert acl.rt.set_device(0) == ACL_SUCCESS
        stream, _ = acl.rt.create_stream()
        size = 1 << 20
        host, _ = acl.rt.malloc_host(size)
        assert acl.rt.memset(host, size, 0, size) == ACL_SUCCESS
        dev, _ = acl.rt.malloc(size, NORMAL)
        for _ in range(3_000):  # ~330 µs of copy each, queued every ~2 µs
            acl.rt.memcpy_async(dev, size, host, size, H2D, stream)
        assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
        assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0
        assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
        assert acl.rt.reset_device(0) == ACL_SUCCESS
        return s.task_count

    trace, tasks = run(program, trace_limit_bytes=64 * 1024)
    meta = trace.meta
    assert meta["trace_peak_bytes"] > meta["trace_limit_bytes"] >= meta["trace_bytes"]
    assert meta["tasks_in_flight_at_peak"] > 1_000
    assert trace.tasks.rows + meta["dropped_tasks"]["acl.rt.memcpy_async"] == tasks
    warn = truncation(trace).message
    assert "queued but not finished yet" in warn and "synchronize inside the loop" in warn
    mb = meta["trace_peak_bytes"] // MiB + 1
    assert f"ACL_LAB_TRACE_LIMIT_MB={mb}" in warn


def test_threads_while_shedding_keep_ids_consistent() -> None:
    """Four threads making droppable and kept calls at once while shedding: every kept row
    is in its thread and every allocation points at a malloc of that thread."""

    def program(acl: ModuleType, s: Session) -> int:
        assert acl.init() == ACL_SUCCESS
        assert acl.rt.set_device(0) == ACL_SUCCESS
        ctx, _ = acl.rt.get_context()
        while not s.recorder.shedding:
            acl.rt.get_device()

        def body() -> None:
            acl.rt.set_context(ctx)
            for i in range(3_000):
                acl.rt.get_device()
                if i % 10 == 0:
                    ptr, _ = acl.rt.malloc(64, NORMAL)
                    acl.rt.get_context()
                    acl.rt.free(ptr)

        threads = [threading.Thread(target=body, name=f"shed-{i}") for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert acl.rt.reset_device(0) == ACL_SUCCESS
        return s.call_count

    trace, calls = run(program, trace_limit_bytes=64 * 1024)
    assert trace.calls.rows + sum(trace.meta["dropped_calls"].values()) == calls
    thread_of_call = trace.calls["thread"]
    names = [trace.string(int(n)) for n in trace.threads["name"]]
    per_thread = {n: 0 for n in names if n.startswith("shed-")}
    for i in range(trace.allocs.rows):
        c = int(trace.allocs["call"][i])
        assert trace.call_name(c) == "acl.rt.malloc"
        per_thread[names[int(thread_of_call[c])]] += 1
        f = int(np.nonzero(trace.frees["alloc"] == i)[0][0])
        fc = int(trace.frees["call"][f])
        assert trace.call_name(fc) == "acl.rt.free" and thread_of_call[fc] == thread_of_call[c]
    assert per_thread == {f"shed-{i}": 300 for i in range(4)}
    assert findings_of(trace) == []
    assert_refs_consistent(trace)


def test_compaction_is_batched_when_kept_rows_pass_the_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A data buffer kept per iteration (its object row keeps its call) passes a small limit
    by itself, while the copies are left out: their rows are still removed in batches, not
    at every check past the limit (each removal copies every row since shedding started; one
    per copy, as before, made a long run quadratic)."""
    compactions = 0
    compact = Recorder._compact

    def counting(rec: Recorder) -> None:
        nonlocal compactions
        compactions += 1
        compact(rec)

    monkeypatch.setattr(Recorder, "_compact", counting)

    def program(acl: ModuleType, s: Session) -> list[int]:
        assert acl.init() == ACL_SUCCESS
        assert acl.rt.set_device(0) == ACL_SUCCESS
        stream, _ = acl.rt.create_stream()
        src, _ = acl.rt.malloc_host(64)
        assert acl.rt.memset(src, 64, 1, 64) == ACL_SUCCESS
        dev, _ = acl.rt.malloc(64, NORMAL)
        bufs = []
        for _ in range(3_000):
            bufs.append(acl.create_data_buffer(dev, 64))
            acl.rt.memcpy_async(dev, 64, src, 64, H2D, stream)
        assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
        return bufs

    limit = 64 * 1024
    trace, _ = run(program, trace_limit_bytes=limit)
    dropped = dropped_tasks(trace)
    assert trace.meta["trace_bytes"] > 4 * limit  # the kept rows alone pass the limit
    assert dropped > 2_500
    assert trace.tasks.rows + dropped == 3_000
    # one removal per copy left out before; batches of 1/32 of the limit are a dozen copies
    assert compactions <= dropped // 6, (compactions, dropped)


# --------------------------------------------------------------------------- configuration
def test_no_change_below_the_limit() -> None:
    """Below the shedding threshold the trace is exactly the unlimited one (same tables,
    strings and meta), so normal runs record the same bytes per call as before."""
    full, _ = run(buggy)
    roomy, _ = run(buggy, trace_limit_bytes=16 * MiB)  # about 15 times what it needs
    assert roomy.meta == full.meta and roomy.strings == full.strings
    for name, table in full.tables.items():
        for col in table:
            assert np.array_equal(table[col], roomy.tables[name][col]), (name, col)
    assert "trace_limit_bytes" not in full.meta


@pytest.mark.parametrize(("env", "want"), [
    ("3", 3 * MiB), ("0.5", MiB // 2), (None, DEFAULT_TRACE_LIMIT_MB * MiB),
    ("junk", DEFAULT_TRACE_LIMIT_MB * MiB), ("-1", DEFAULT_TRACE_LIMIT_MB * MiB),
    ("nan", DEFAULT_TRACE_LIMIT_MB * MiB), ("inf", DEFAULT_TRACE_LIMIT_MB * MiB)])
def test_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch, env: str | None,
                                    want: int) -> None:
    """ACL_LAB_TRACE_LIMIT_MB sets the default limit (512 MiB); nonsense falls back to it."""
    if env is None:
        monkeypatch.delenv("ACL_LAB_TRACE_LIMIT_MB", raising=False)
    else:
        monkeypatch.setenv("ACL_LAB_TRACE_LIMIT_MB", env)
    s = Session()
    assert s.trace_limit_bytes == s.recorder.limit_bytes == want
    assert Session(trace_limit_bytes=12345).recorder.limit_bytes == 12345


@pytest.mark.parametrize("bad", [0, -5])
def test_bad_limit_is_refused(bad: int) -> None:
    """A limit that is not a positive number of bytes is a ValueError."""
    with pytest.raises(ValueError, match="trace_limit_bytes"):
        Session(trace_limit_bytes=bad)
