"""The Chrome / Perfetto export against the exporter checklist (docs/sources.md, Perfetto)."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.chrome import EDGE_FLOW_BASE, LAUNCH_FLOW_BASE
from acl_lab.tracer.trace import Trace
from tests.tracer import export_scenarios

ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_CALLBACK_NO_BLOCK = 0
ACL_CALLBACK_BLOCK = 1
N = 1 << 16
TOL_US = 1e-6
FLOW_ID_LIMIT = 1 << 53


def two_stream_program(acl: ModuleType) -> list[Any]:
    """Two streams, async copies, an event record/wait, a sync memcpy and callbacks.

    Returns the user data the callbacks received (in the order they ran).
    """
    ran: list[Any] = []
    subscribed = threading.Event()
    stop = threading.Event()

    def report_loop() -> None:
        subscribed.wait(10)
        while not stop.is_set():
            acl.rt.process_report(20)

    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    s1, ret = acl.rt.create_stream()
    assert ret == 0
    s2, ret = acl.rt.create_stream()
    assert ret == 0
    event, ret = acl.rt.create_event()
    assert ret == 0
    host, ret = acl.rt.malloc_host(N)
    assert ret == 0
    host_out, ret = acl.rt.malloc_host(N)
    assert ret == 0
    dev_a, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    dev_b, ret = acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert ret == 0
    assert acl.rt.memset(host, N, 42, N) == 0
    assert acl.rt.memcpy(dev_a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == 0  # synchronous
    assert acl.rt.memcpy_async(dev_b, N, dev_a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == 0
    assert acl.rt.record_event(event, s1) == 0
    assert acl.rt.stream_wait_event(s2, event) == 0
    assert acl.rt.memcpy_async(host_out, N, dev_b, N, ACL_MEMCPY_DEVICE_TO_HOST, s2) == 0
    assert acl.rt.memcpy_async(dev_a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0

    worker = threading.Thread(target=report_loop, name="report")
    worker.start()
    try:
        assert worker.ident is not None
        assert acl.rt.subscribe_report(worker.ident, s2) == 0
        subscribed.set()
        assert acl.rt.launch_callback(ran.append, "no-block", ACL_CALLBACK_NO_BLOCK, s2) == 0
        assert acl.rt.launch_callback(ran.append, "block", ACL_CALLBACK_BLOCK, s2) == 0
        assert acl.rt.memcpy_async(host_out, N, dev_b, N, ACL_MEMCPY_DEVICE_TO_HOST, s2) == 0
        assert acl.rt.synchronize_stream(s2) == 0
        assert acl.rt.synchronize_stream(s1) == 0
        assert acl.rt.unsubscribe_report(worker.ident, s2) == 0  # the sample's order (7.2)
    finally:
        stop.set()
        subscribed.set()
        worker.join(60)
    assert not worker.is_alive()
    out = np.frombuffer(acl.util.ptr_to_bytes(host_out, N), dtype=np.uint8)
    assert np.all(out == 42)
    for p in (dev_a, dev_b):
        assert acl.rt.free(p) == 0
    for p in (host, host_out):
        assert acl.rt.free_host(p) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(s1) == 0
    assert acl.rt.destroy_stream(s2) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0
    return ran


@pytest.fixture(scope="module")
def traced() -> tuple[Trace, dict[str, Any]]:
    """The trace of ``two_stream_program`` and its Chrome export."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            ran = two_stream_program(acl)
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    assert sorted(ran) == ["block", "no-block"]
    return trace, trace.to_chrome_trace()


def events(doc: dict[str, Any], ph: str | None = None) -> list[dict[str, Any]]:
    """The events of an export, optionally only those of phase ``ph``."""
    return [e for e in doc["traceEvents"] if ph is None or e.get("ph") == ph]


def is_number(v: Any) -> bool:
    """int or float, not bool and not str."""
    return type(v) in (int, float)


def end_of(e: dict[str, Any]) -> float:
    """End time (µs) of an X event."""
    return float(e["ts"]) + float(e["dur"])


def task_tids(doc: dict[str, Any]) -> set[tuple[int, int]]:
    """(pid, tid) tracks that carry device tasks on streams."""
    return {(e["pid"], e["tid"]) for e in events(doc, "X") if e.get("cat") == "task"}


# --------------------------------------------------------------------------- the container
def test_top_level_is_trace_events_list(traced: tuple[Trace, dict[str, Any]]) -> None:
    """The export is an object with a ``traceEvents`` list of dicts."""
    _, doc = traced
    assert isinstance(doc, dict)
    assert isinstance(doc["traceEvents"], list)
    assert doc["traceEvents"]
    assert all(isinstance(e, dict) for e in doc["traceEvents"])


def test_every_phase_is_a_string(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every event's ``ph`` is a str (Perfetto skips the event otherwise)."""
    _, doc = traced
    assert all(isinstance(e.get("ph"), str) for e in doc["traceEvents"])


def test_pid_and_tid_are_numbers(traced: tuple[Trace, dict[str, Any]]) -> None:
    """``pid``/``tid`` are numbers, not the interned-string hack."""
    _, doc = traced
    for e in doc["traceEvents"]:
        assert type(e.get("pid")) is int, e
        assert type(e.get("tid")) is int, e


def test_timestamps_are_numeric_relative_and_non_negative(
        traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every timed event has a numeric ``ts`` >= 0, relative to the start of the trace."""
    trace, doc = traced
    timed = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    assert timed
    for e in timed:
        assert is_number(e.get("ts")), e
        assert e["ts"] >= 0, e
    # Relative: the earliest event is near zero, not an epoch timestamp.
    assert min(e["ts"] for e in timed) < 1e3
    last_ns = max(int(trace.calls["end_ns"].max()), int(trace.tasks["end_ns"].max()))
    assert max(e["ts"] for e in timed) <= last_ns / 1e3 + TOL_US


def test_complete_events_have_numeric_duration(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every ``X`` has a numeric ``dur`` >= 0 (Perfetto drops an X without one)."""
    _, doc = traced
    xs = events(doc, "X")
    assert xs
    for e in xs:
        assert is_number(e.get("dur")), e
        assert e["dur"] >= 0, e


def test_api_calls_are_slices_on_their_thread(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every recorded API call is one ``X`` slice on a host-thread track."""
    trace, doc = traced
    api = [e for e in events(doc, "X") if e.get("cat") == "api"]
    assert len(api) == trace.calls.rows
    by_id = {e["args"]["call_id"]: e for e in api}
    assert sorted(by_id) == list(range(trace.calls.rows))
    host_tids = {e["tid"] for e in api}
    assert len(host_tids) == 2  # the main thread and the report thread
    assert task_tids(doc).isdisjoint({(e["pid"], e["tid"]) for e in api})


# --------------------------------------------------------------------------- names
def test_metadata_names_every_process_and_thread(traced: tuple[Trace, dict[str, Any]]) -> None:
    """``M`` events name every pid and every (pid, tid) that X events use."""
    _, doc = traced
    procs = {e["pid"] for e in events(doc, "M") if e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]) for e in events(doc, "M") if e["name"] == "thread_name"}
    for e in events(doc, "M"):
        assert isinstance(e.get("args", {}).get("name"), str), e
    used = {(e["pid"], e["tid"]) for e in events(doc, "X")}
    assert used
    for pid, tid in used:
        assert pid in procs, f"pid {pid} has no process_name"
        assert (pid, tid) in threads, f"({pid}, {tid}) has no thread_name"


def test_metadata_names_are_unique(traced: tuple[Trace, dict[str, Any]]) -> None:
    """No process or thread is named twice."""
    _, doc = traced
    keys = Counter((e["name"], e["pid"], e["tid"] if e["name"] == "thread_name" else None)
                   for e in events(doc, "M"))
    assert all(n == 1 for n in keys.values()), keys


# --------------------------------------------------------------------------- overlap rules
def test_no_partial_overlap_on_any_track(traced: tuple[Trace, dict[str, Any]]) -> None:
    """On one (pid, tid), X slices are disjoint or fully nested, never partially overlapping."""
    _, doc = traced
    tracks: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for e in events(doc, "X"):
        tracks[(e["pid"], e["tid"])].append(e)
    for key, xs in tracks.items():
        xs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list[dict[str, Any]] = []
        for e in xs:
            while stack and e["ts"] >= end_of(stack[-1]) - TOL_US:
                stack.pop()
            if stack:
                outer = stack[-1]
                assert end_of(e) <= end_of(outer) + TOL_US, (
                    f"track {key}: {e['name']} [{e['ts']}, {end_of(e)}] partially overlaps "
                    f"{outer['name']} [{outer['ts']}, {end_of(outer)}]")
            stack.append(e)


def test_stream_tasks_have_their_own_tracks(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each stream's tasks are on one track of their own, strictly one after another."""
    trace, doc = traced
    tasks = [e for e in events(doc, "X") if e.get("cat") == "task"]
    placed = int(np.count_nonzero(trace.tasks["end_ns"] >= 0))
    assert len(tasks) == placed
    stream_of_track: dict[tuple[int, int], set[int]] = defaultdict(set)
    track_of_stream: dict[int, set[tuple[int, int]]] = defaultdict(set)
    per_track: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for e in tasks:
        stream = int(trace.tasks["stream"][e["args"]["task_id"]])
        if stream < 0:
            continue  # synchronous copies
        key = (e["pid"], e["tid"])
        stream_of_track[key].add(stream)
        track_of_stream[stream].add(key)
        per_track[key].append(e)
    assert len(track_of_stream) >= 2  # both streams ran tasks
    assert all(len(v) == 1 for v in stream_of_track.values())
    assert all(len(v) == 1 for v in track_of_stream.values())
    for key, xs in per_track.items():
        xs.sort(key=lambda e: e["ts"])
        for a, b in pairwise(xs):
            assert b["ts"] >= end_of(a) - TOL_US, f"track {key}: {a} overlaps {b}"


def test_synchronous_copy_is_exported(traced: tuple[Trace, dict[str, Any]]) -> None:
    """The synchronous memcpy's task appears as an X slice linked to its call."""
    trace, doc = traced
    sync_tasks = [int(t) for t in np.nonzero(trace.tasks["stream"] < 0)[0]]
    assert sync_tasks
    exported = {e["args"]["task_id"] for e in events(doc, "X") if e.get("cat") == "task"}
    assert set(sync_tasks) <= exported


COPY_NAMES = {0: "H2H", 1: "H2D", 2: "D2H", 3: "D2D"}  # aclrtMemcpyKind


def test_copy_tasks_are_named_by_direction(traced: tuple[Trace, dict[str, Any]]) -> None:
    """A copy task's slice is named after the direction the program asked for (H2D, ...)."""
    trace, doc = traced
    task_x = {e["args"]["task_id"]: e for e in events(doc, "X") if e.get("cat") == "task"}
    seen = []
    for t, e in task_x.items():
        c = int(trace.tasks["call"][t])
        name = trace.call_name(c)
        if name not in ("acl.rt.memcpy", "acl.rt.memcpy_async"):
            continue
        wanted = COPY_NAMES[trace.call_args(c)[4]]
        seen.append((trace.call_site(c)[1], wanted, e["name"]))
    assert len(seen) == 5  # one synchronous memcpy and four memcpy_async
    assert [got for _, _, got in seen] == [want for _, want, _ in seen], seen


# --------------------------------------------------------------------------- flows
def flow_pairs(doc: dict[str, Any]) -> dict[int, dict[str, dict[str, Any]]]:
    """Flow id -> {"s": start event, "f": end event}; fails on a repeated phase."""
    out: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for e in doc["traceEvents"]:
        if e["ph"] in ("s", "t", "f"):
            assert e["ph"] not in out[e["id"]], f"flow {e['id']} has two {e['ph']} events"
            out[e["id"]][e["ph"]] = e
    return out


def bound_slice(doc: dict[str, Any], e: dict[str, Any]) -> dict[str, Any]:
    """The slice a flow point binds to: the innermost X on its track open at its ts."""
    cands = [x for x in events(doc, "X") if (x["pid"], x["tid"]) == (e["pid"], e["tid"])
             and x["ts"] <= e["ts"] <= end_of(x)]
    assert cands, f"no slice encloses flow point {e}"
    return min(cands, key=lambda x: (x["dur"], -x["ts"]))


def test_launch_flows_link_calls_to_tasks(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each task that starts after its call returned has one launch arrow whose start binds to
    the call's slice and whose end (``bp: e``) binds to the task's slice."""
    trace, doc = traced
    pairs = flow_pairs(doc)
    checked = 0
    for t in range(trace.tasks.rows):
        c = int(trace.tasks["call"][t])
        if int(trace.tasks["end_ns"][t]) < 0:
            continue
        fid = LAUNCH_FLOW_BASE + t
        if int(trace.tasks["start_ns"][t]) < int(trace.calls["end_ns"][c]):
            assert fid not in pairs  # a synchronous copy runs inside its call
            continue
        assert sorted(pairs[fid]) == ["f", "s"], pairs.get(fid)
        src, dst = bound_slice(doc, pairs[fid]["s"]), bound_slice(doc, pairs[fid]["f"])
        assert src["cat"] == "api" and src["args"]["call_id"] == c
        assert dst["cat"] == "task" and dst["args"]["task_id"] == t
        assert pairs[fid]["f"].get("bp") == "e"
        checked += 1
    assert checked >= 8


def test_every_flow_has_one_start_and_one_end(traced: tuple[Trace, dict[str, Any]]) -> None:
    """No flow id is used twice (Perfetto's flow_duplicate_id) or left open
    (flow_end_without_start): each has exactly one ``s`` and one ``f``."""
    _, doc = traced
    pairs = flow_pairs(doc)
    assert pairs
    for fid, ph in pairs.items():
        assert sorted(ph) == ["f", "s"], (fid, ph)
    assert not any("bind_id" in e for e in doc["traceEvents"])


def test_flow_ids_are_large_ints_below_2_53(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every flow id is an int in [2**32, 2**53): far from the small ids Perfetto hands out for
    its own flows, and exact in JavaScript."""
    _, doc = traced
    ids = [e["id"] for e in doc["traceEvents"] if e["ph"] in ("s", "t", "f")]
    assert ids
    for i in ids:
        assert type(i) is int and 1 << 32 <= i < FLOW_ID_LIMIT, i


def test_record_wait_flows_link_record_to_wait(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each record->wait edge is one arrow from the record's slice to its wait's (or to the
    wait's ``event set`` child), on stream tracks."""
    trace, doc = traced
    pairs = flow_pairs(doc)
    assert trace.edges.rows >= 1
    tracks = task_tids(doc)
    for j in range(trace.edges.rows):
        r, w = int(trace.edges["record"][j]), int(trace.edges["wait"][j])
        ph = pairs[EDGE_FLOW_BASE + j]
        assert bound_slice(doc, ph["s"])["args"]["task_id"] == r
        assert bound_slice(doc, ph["f"])["args"]["task_id"] == w
        for e in ph.values():
            assert (e["pid"], e["tid"]) in tracks, e


def test_no_arrow_points_back_in_time(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Perfetto draws an arrow from its source slice's end to its target slice's start: the
    target never starts before the source ends."""
    _, doc = traced
    for fid, ph in flow_pairs(doc).items():
        src, dst = bound_slice(doc, ph["s"]), bound_slice(doc, ph["f"])
        assert dst["ts"] >= end_of(src) - TOL_US, (fid, src, dst)


# --------------------------------------------------------------------------- counters
def test_counters_have_numeric_args(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each ``C`` event has an ``args`` object of numeric values."""
    _, doc = traced
    cs = events(doc, "C")
    assert cs
    for e in cs:
        assert isinstance(e.get("args"), dict) and e["args"], e
        assert all(is_number(v) for v in e["args"].values()), e
        assert isinstance(e.get("name"), str)


def test_memory_counter_follows_allocations(traced: tuple[Trace, dict[str, Any]]) -> None:
    """The device memory counter peaks at the trace's peak and returns to zero."""
    trace, doc = traced
    values = [v for e in events(doc, "C") for v in e["args"].values()]
    assert max(values) == trace.peak_device_bytes() > 0
    assert values[-1] == 0
    assert min(values) >= 0


# --------------------------------------------------------------------------- files
def test_export_is_json_serialisable(traced: tuple[Trace, dict[str, Any]]) -> None:
    """``json.dumps`` of the export works and round-trips."""
    _, doc = traced
    text = json.dumps(doc)
    assert json.loads(text) == doc


def test_save_chrome_trace_writes_valid_json(traced: tuple[Trace, dict[str, Any]],
                                            tmp_path: Path) -> None:
    """``save_chrome_trace`` writes strict JSON (no NaN) equal to ``to_chrome_trace()``."""
    trace, doc = traced
    path = tmp_path / "trace.json"
    trace.save_chrome_trace(path)

    def no_constants(name: str) -> Any:
        raise AssertionError(f"non-standard JSON constant {name}")

    loaded = json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constants)
    assert loaded == doc


def test_export_does_not_change_the_trace(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Exporting twice gives the same document (a pure function of the trace)."""
    trace, doc = traced
    assert trace.to_chrome_trace() == doc


# --------------------------------------------------------------------------- exact times
def decimal_of(v: Any) -> Decimal:
    """The exact decimal a JSON number means, as the text ``json.dumps`` writes."""
    return Decimal(json.dumps(v))


def test_times_are_exact_decimals_of_integer_ns(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each ``ts``/``dur`` is written as the exact decimal of integer ns / 1000 (at most 3
    decimals), and each API slice's ``ts`` and ``ts + dur`` are its call's integer times."""
    trace, doc = traced
    for e in doc["traceEvents"]:
        for key in ("ts", "dur"):
            if key in e:
                d = decimal_of(e[key]) * 1000
                assert d == d.to_integral_value(), (key, e)
    for e in events(doc, "X"):
        if e.get("cat") == "api":
            c = e["args"]["call_id"]
            assert decimal_of(e["ts"]) * 1000 == int(trace.calls["start_ns"][c])
            assert (decimal_of(e["ts"]) + decimal_of(e["dur"])) * 1000 == int(
                trace.calls["end_ns"][c])


@pytest.fixture(scope="module")
def blocked() -> tuple[Trace, dict[str, Any]]:
    """A wait that started before its record finished, and its export."""
    trace = export_scenarios.traced(export_scenarios.blocked_wait)
    return trace, trace.to_chrome_trace()


def test_blocked_wait_arrow_ends_on_event_set(blocked: tuple[Trace, dict[str, Any]]) -> None:
    """The wait started before the record ended; its arrow ends on an ``event set`` child that
    starts exactly where the record ends and ends exactly where the wait ends (in decimals)."""
    trace, doc = blocked
    (j,) = range(trace.edges.rows)
    r, w = int(trace.edges["record"][j]), int(trace.edges["wait"][j])
    assert int(trace.tasks["start_ns"][w]) < int(trace.tasks["end_ns"][r])  # really blocked
    ph = flow_pairs(doc)[EDGE_FLOW_BASE + j]
    src, dst = bound_slice(doc, ph["s"]), bound_slice(doc, ph["f"])
    wait = next(e for e in events(doc, "X") if e["args"].get("task_id") == w
                and e["name"] == "event_wait")
    assert dst["name"] == "event set" and dst["args"]["task_id"] == w
    assert decimal_of(dst["ts"]) == decimal_of(src["ts"]) + decimal_of(src["dur"])
    assert (decimal_of(dst["ts"]) + decimal_of(dst["dur"])
            == decimal_of(wait["ts"]) + decimal_of(wait["dur"]))
    assert decimal_of(wait["ts"]) < decimal_of(dst["ts"])


# --------------------------------------------------------------------------- deadlocks
@pytest.fixture(scope="module")
def deadlocked() -> tuple[Trace, dict[str, Any]]:
    """An event-cycle deadlock's trace and its export."""
    trace = export_scenarios.traced(export_scenarios.deadlock)
    return trace, trace.to_chrome_trace()


def test_deadlocked_call_is_a_slice_to_the_end(
        deadlocked: tuple[Trace, dict[str, Any]]) -> None:
    """The call that raised DeadlockError lasts to the end of the trace, and an instant on its
    lane carries the DeadlockError message."""
    trace, doc = deadlocked
    (f,) = [f for f in trace.findings() if f.kind == "deadlock"]
    cid = f.calls[0]
    end_us = decimal_of(doc["otherData"]["trace_end_ns"]) / 1000
    call = next(e for e in events(doc, "X") if e.get("args", {}).get("call_id") == cid
                and e["cat"] == "api")
    assert decimal_of(call["ts"]) + decimal_of(call["dur"]) == end_us
    assert call["dur"] > (int(trace.calls["end_ns"][cid]) - int(trace.calls["start_ns"][cid])
                          ) / 1000  # longer than the 1 µs the emulator spent
    (inst,) = [e for e in events(doc, "i") if e["name"] == "DeadlockError"]
    assert (inst["pid"], inst["tid"]) == (call["pid"], call["tid"])
    assert call["ts"] <= inst["ts"] <= end_of(call)
    diag = [trace.string(int(m)) for k, m in zip(trace.diags["kind"], trace.diags["message"],
                                                strict=True) if trace.string(int(k)) == "deadlock"]
    assert inst["args"]["message"] == diag[0] and "eadlock" in diag[0]


def test_stuck_tasks_are_shown(deadlocked: tuple[Trace, dict[str, Any]]) -> None:
    """Each stuck stream's first unfinished task is a slice to the end of the trace (the
    stuck wait is not dropped); tasks queued behind it are instants."""
    trace, doc = deadlocked
    unfinished = [t for t in range(trace.tasks.rows) if int(trace.tasks["end_ns"][t]) < 0]
    streams = {int(trace.tasks["stream"][t]) for t in unfinished}
    assert len(streams) == 2  # both streams of the cycle
    end = doc["otherData"]["trace_end_ns"] / 1000
    slices = [e for e in events(doc, "X") if e["args"].get("unfinished") and e["cat"] == "task"]
    assert len(slices) == len(streams)
    assert all(abs(end_of(e) - end) < TOL_US and "never finished" in e["name"] for e in slices)
    assert {e["name"].split()[0] for e in slices} == {"event_wait"}
    queued = [e for e in events(doc, "i") if "queued" in e["name"]]
    shown = {e["args"]["task_id"] for e in slices + queued}
    assert shown == set(unfinished)


def test_every_finding_is_an_instant(deadlocked: tuple[Trace, dict[str, Any]]) -> None:
    """One instant per finding, with its message, on the lane of its first call."""
    trace, doc = deadlocked
    findings = trace.findings()
    assert len(findings) >= 2
    inst = [e for e in events(doc, "i") if e.get("cat") == "finding"]
    assert [e["args"]["message"] for e in inst] == [f.message for f in findings]
    for f, e in zip(findings, inst, strict=True):
        c = f.calls[0]
        assert e["tid"] == int(trace.calls["thread"][c]) + 1
        assert e["name"] == f"{f.severity}: {f.kind}"


def test_deadlock_export_nests_and_pairs(deadlocked: tuple[Trace, dict[str, Any]]) -> None:
    """The deadlock export keeps the rules: flows paired and forward, slices nested."""
    _, doc = deadlocked
    test_every_flow_has_one_start_and_one_end(deadlocked)
    test_no_arrow_points_back_in_time(deadlocked)
    test_no_partial_overlap_on_any_track(deadlocked)
    assert flow_pairs(doc)


# --------------------------------------------------------------------------- protobuf
def decode(data: bytes) -> Any:
    """Parse a .pftrace with the perfetto package's generated classes."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
    tr = pb.Trace()
    tr.ParseFromString(data)
    return tr


@pytest.mark.parametrize("which", ["traced", "blocked", "deadlocked"])
def test_perfetto_protobuf_matches_the_json(which: str, request: pytest.FixtureRequest) -> None:
    """The protobuf has the JSON's slices (integer ns, begin/end balanced per track, nested),
    its instants and counters, and each arrow as flow_ids/terminating_flow_ids on the
    begin events of the same two slices."""
    from acl_lab.tracer.perfetto import to_perfetto_bytes
    trace, doc = request.getfixturevalue(which)
    tr = decode(to_perfetto_bytes(trace))
    names = {}
    for p in tr.packet:
        if p.HasField("track_descriptor"):
            names[p.track_descriptor.uuid] = p.track_descriptor
    stacks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    slices: list[tuple[int, int, str]] = []
    outs: dict[int, str] = {}
    ins: dict[int, str] = {}
    instants = counters = 0
    last_ts = 0
    for p in tr.packet:
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        assert te.track_uuid in names, "an event on an undeclared track"
        assert p.timestamp >= last_ts  # in time order
        last_ts = p.timestamp
        if te.type == te.TYPE_SLICE_BEGIN:
            stacks[te.track_uuid].append((p.timestamp, te.name))
            for fid in te.flow_ids:
                outs[fid] = te.name
            for fid in te.terminating_flow_ids:
                ins[fid] = te.name
        elif te.type == te.TYPE_SLICE_END:
            start, name = stacks[te.track_uuid].pop()
            slices.append((start, p.timestamp, name))
        elif te.type == te.TYPE_INSTANT:
            instants += 1
        elif te.type == te.TYPE_COUNTER:
            counters += 1
    assert all(not s for s in stacks.values())
    xs = events(doc, "X")
    assert sorted((round(e["ts"] * 1000), round(end_of(e) * 1000), e["name"]) for e in xs) == \
        sorted(slices)
    assert instants == len(events(doc, "i"))
    assert counters == len(events(doc, "C"))
    pairs = flow_pairs(doc)
    assert outs.keys() == ins.keys() == pairs.keys()
    for fid, ph in pairs.items():
        assert outs[fid] == bound_slice(doc, ph["s"])["name"]
        assert ins[fid] == bound_slice(doc, ph["f"])["name"]


def test_export_cli_writes_both_formats(tmp_path: Path,
                                       deadlocked: tuple[Trace, dict[str, Any]]) -> None:
    """``acl-lab export TRACE --chrome J --perfetto P`` writes the JSON and the protobuf."""
    from acl_lab.cli import main
    trace, doc = deadlocked
    saved = tmp_path / "t.acltrace"
    trace.save(saved)
    j, p = tmp_path / "t.json", tmp_path / "t.pftrace"
    assert main(["export", str(saved), "--chrome", str(j), "--perfetto", str(p)]) == 0
    assert json.loads(j.read_text())["traceEvents"]
    assert len(decode(p.read_bytes()).packet) > len(events(doc, "X"))
