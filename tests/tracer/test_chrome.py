"""The Chrome / Perfetto export against the exporter checklist (anchors.md §5 and A7)."""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace

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
def test_launch_flows_link_calls_to_tasks(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each call that enqueued a task has bind_id + flow_out; its task has the same + flow_in."""
    trace, doc = traced
    api = {e["args"]["call_id"]: e for e in events(doc, "X") if e.get("cat") == "api"}
    task_x = {e["args"]["task_id"]: e for e in events(doc, "X") if e.get("cat") == "task"}
    checked = 0
    for t in range(trace.tasks.rows):
        if int(trace.tasks["end_ns"][t]) < 0:
            continue
        call = api[int(trace.tasks["call"][t])]
        tx = task_x[t]
        assert call.get("flow_out") is True, call
        assert tx.get("flow_in") is True, tx
        assert "bind_id" in call and "bind_id" in tx
        assert call["bind_id"] == tx["bind_id"], (call, tx)
        checked += 1
    assert checked >= 8


def test_launch_flow_ids_are_unique_per_call(traced: tuple[Trace, dict[str, Any]]) -> None:
    """No two calls share a flow_out bind_id (each arrow has one source)."""
    _, doc = traced
    outs = [e["bind_id"] for e in events(doc, "X") if e.get("flow_out")]
    assert len(outs) == len(set(outs))


def test_flow_ids_are_ints_below_2_53(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Every flow id (``bind_id``, and ``id`` of s/f events) is an int in [0, 2**53)."""
    _, doc = traced
    ids = [e["bind_id"] for e in doc["traceEvents"] if "bind_id" in e]
    ids += [e["id"] for e in doc["traceEvents"] if e["ph"] in ("s", "t", "f")]
    assert ids
    for i in ids:
        assert type(i) is int and 0 <= i < FLOW_ID_LIMIT, i


def test_record_wait_flows_pair_up(traced: tuple[Trace, dict[str, Any]]) -> None:
    """Each record->wait flow id has exactly one ``s`` and one ``f``, on stream tracks."""
    trace, doc = traced
    phases: dict[int, list[str]] = defaultdict(list)
    flow_events = [e for e in doc["traceEvents"] if e["ph"] in ("s", "t", "f")]
    for e in flow_events:
        phases[e["id"]].append(e["ph"])
    assert len(phases) == trace.edges.rows >= 1
    for fid, ph in phases.items():
        assert sorted(ph) == ["f", "s"], (fid, ph)
    tracks = task_tids(doc)
    for e in flow_events:
        assert (e["pid"], e["tid"]) in tracks, e
        assert isinstance(e.get("cat"), str) and isinstance(e.get("name"), str)


def test_record_wait_flow_source_precedes_target(traced: tuple[Trace, dict[str, Any]]) -> None:
    """The ``s`` of a record->wait flow is no later than its ``f``."""
    _, doc = traced
    start: dict[int, float] = {}
    finish: dict[int, float] = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "s":
            start[e["id"]] = e["ts"]
        elif e["ph"] == "f":
            finish[e["id"]] = e["ts"]
    assert start and start.keys() == finish.keys()
    for fid in start:
        assert start[fid] <= finish[fid] + TOL_US


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
