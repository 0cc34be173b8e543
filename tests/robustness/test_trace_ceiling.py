"""The trace's memory bound: a runaway loop stays under ``trace_limit_bytes``.

Past three quarters of the bound the recorder leaves out successful calls that nothing else
refers to; allocations, frees, objects, tasks, event edges, syncs, callbacks, diagnostics and
failed calls are always kept, so findings stay complete, ids stay consistent, the file round
trips, and a ``trace_truncated`` warning says what was left out and how to raise the limit.
Below the bound nothing changes at all.
"""

from __future__ import annotations

import inspect
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
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import DEFAULT_TRACE_LIMIT_MB, Session
from acl_lab.tracer.recorder import KEEP_CALLS
from acl_lab.tracer.trace import Trace

pytestmark = pytest.mark.timeout(240)

MiB = 1 << 20
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY
H2D = ACL_MEMCPY_HOST_TO_DEVICE
LOOP_CALLS = 300_000
LIMIT = 2 * MiB


def here() -> int:
    """The caller's line number (to find a finding's line in this file)."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno


def run(program: Callable[[ModuleType, Session], Any], **kwargs: Any) -> tuple[Trace, Any]:
    """Run ``program(acl, session)`` in a fresh Session; return (trace, its result)."""
    with Session(watchdog=10.0, **kwargs) as s:
        acl = acl_lab.install()
        try:
            result = program(acl, s)
            return s.finish(), result
        finally:
            acl_lab.uninstall()


def findings_of(trace: Trace) -> list[tuple[str, str, int, str]]:
    """(kind, file, line, message) of every finding except trace_truncated."""
    return sorted((f.kind, f.file, f.line, f.message) for f in trace.findings()
                  if f.kind != "trace_truncated")


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
    for text in (f"{dropped} successful call(s)", "2.0 MiB", "acl.rt.get_device x",
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
    messages and lines; the small one only adds trace_truncated and keeps ids consistent."""
    full, _ = run(buggy)
    small, _ = run(buggy, trace_limit_bytes=128 * 1024)
    assert "dropped_calls" not in full.meta
    assert sum(small.meta["dropped_calls"].values()) > 5_000
    assert small.calls.rows < full.calls.rows / 2
    want = findings_of(full)
    assert {k for k, *_ in want} >= {"race", "free_in_flight", "leak", "double_free",
                                     "pageable_async_copy", "context_not_set"}
    assert findings_of(small) == want
    truncation(small)
    assert not [f for f in full.findings() if f.kind == "trace_truncated"]
    for table in ("tasks", "allocs", "frees", "edges", "syncs", "objects", "destroys",
                  "accesses", "failures", "uninit", "callbacks"):
        assert small.tables[table].rows == full.tables[table].rows, table
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


def test_tasks_are_kept_even_past_the_limit() -> None:
    """Tasks that touch memory are never dropped: a copy loop grows past a tiny limit, keeps
    every task and says so in the warning (nothing could be left out)."""

    def program(acl: ModuleType, s: Session) -> int:
        assert acl.init() == ACL_SUCCESS
        assert acl.rt.set_device(0) == ACL_SUCCESS
        stream, _ = acl.rt.create_stream()
        host, _ = acl.rt.malloc_host(64)
        assert acl.rt.memset(host, 64, 0, 64) == ACL_SUCCESS
        dev, _ = acl.rt.malloc(64, NORMAL)
        for _ in range(3_000):
            acl.rt.memcpy_async(dev, 64, host, 64, H2D, stream)
        assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
        assert acl.rt.free(dev) == 0 and acl.rt.free_host(host) == 0
        assert acl.rt.destroy_stream(stream) == ACL_SUCCESS
        assert acl.rt.reset_device(0) == ACL_SUCCESS
        return s.call_count

    trace, calls = run(program, trace_limit_bytes=64 * 1024)
    assert trace.tasks.rows == 3_000 and trace.accesses.rows == 6_000
    assert trace.calls.rows == calls and "dropped_calls" not in trace.meta
    warn = truncation(trace)
    assert "nothing could be left out" in warn.message and "64.0 KiB" in warn.message
    assert trace.meta["trace_bytes"] > trace.meta["trace_limit_bytes"]


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
