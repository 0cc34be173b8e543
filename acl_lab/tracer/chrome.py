"""Export a Trace as Chrome Trace Event JSON, for Perfetto, chrome://tracing and speedscope.

Follows the Chrome Trace Event Format (docs/sources.md, Perfetto) and what Perfetto's JSON
importer does with each field (its ``json_trace_parser``: ``X`` needs ``dur``, v1 flows ``s``/``f``
are bound to the slice open on their track, ``bp: "e"`` binds the end to the enclosing slice,
v2 ``bind_id`` values are used as Perfetto's own flow ids, so small ones collide with the ids
it hands out for v1 flows):

- times: ``ts`` and ``dur`` in microseconds written from integer nanoseconds as exact decimals
  (at most 3 decimals), and ``dur`` is computed from the integer end minus the integer start,
  so a nested slice's ``ts + dur`` never passes its parent's in the text;
- ``M`` events name each process and thread; one ``tid`` per stream (slices never overlap);
- host API calls are ``X`` on the calling thread; device tasks ``X`` on their stream;
- flows are v1 ``s``/``f`` pairs (one call may enqueue several tasks, one record may release
  several waits) with ids in ``[2**40, 2**53)``, unique per arrow; the start is bound inside the
  source slice and the end inside a target slice that starts no earlier than the source ends
  (a wait that was already blocked when its record finished gets an ``event set`` child slice
  from the record's end to the wait's end), so no arrow points back in time;
- a deadlocked or unfinished call is a slice to the end of the trace with an instant carrying
  the DeadlockError message; a task that never finished is a slice to the end of the trace on
  its stream; every finding is an instant with its message on the lane of its call;
- device memory is a ``C`` counter per device.

A pure function: the trace is not changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from .analysis import DEVICE_KINDS
from .schema import LEVELS, TASK_KINDS

HOST_PID = 1
STREAM_TID_BASE = 1000
SYNC_TID_BASE = 100_000
#: v1 flow ids: launch arrows are LAUNCH_FLOW_BASE + task, record->wait arrows
#: EDGE_FLOW_BASE + edge; both far above 2**32 and below 2**53 (JSON-safe integers).
LAUNCH_FLOW_BASE = 1 << 40
EDGE_FLOW_BASE = 1 << 41
FLOW_ID_LIMIT = 1 << 53


def us(ns: int) -> float:
    """Integer nanoseconds as microseconds. ``repr`` of the result is the exact decimal
    ``ns / 1000`` (at most 3 decimals) while doubles are spaced finer than 1 ns there, i.e. for
    times below about 10**15 ns (11 days), far beyond an emulated program's virtual time."""
    return int(ns) / 1000


def trace_end_ns(trace: Any) -> int:
    """The last time anything in the trace happened (ns): where unfinished slices end."""
    calls, tasks, cbs = trace.calls, trace.tasks, trace.callbacks
    end = int(trace.meta.get("virtual_time_ns", 0) or 0)
    for col in (calls["start_ns"], calls["end_ns"], tasks["submit_ns"], tasks["start_ns"],
                tasks["end_ns"], cbs["start_ns"], cbs["end_ns"]):
        if len(col):
            end = max(end, int(col.max()))
    return end


class _Spans:
    """Where every call and task is drawn (ns), with unfinished ones closed at the trace end."""

    def __init__(self, trace: Any) -> None:
        self.end = trace_end_ns(trace)
        calls, tasks = trace.calls, trace.tasks
        self.deadlock: dict[int, str] = {}
        dg = trace.diags
        for j in range(dg.rows):
            if trace.string(int(dg["kind"][j])) == "deadlock":
                self.deadlock.setdefault(int(dg["call"][j]), trace.string(int(dg["message"][j])))
        self.call: list[tuple[int, int]] = []
        for c, (s, e) in enumerate(zip(calls["start_ns"].tolist(), calls["end_ns"].tolist(),
                                       strict=True)):
            if e < 0 or c in self.deadlock:
                e = self.end
            self.call.append((s, max(e, s)))
        # Tasks: finished ones as recorded; the first unfinished task of a stream from when
        # it could start (submitted and its stream free) to the end; later ones are queued.
        self.task: dict[int, tuple[int, int]] = {}
        self.queued: list[int] = []
        self.unfinished: set[int] = set()
        stream_free: dict[int, int] = {}
        stuck_stream: set[int] = set()
        submit = tasks["submit_ns"].tolist()
        for t, (s, e, stream) in enumerate(zip(tasks["start_ns"].tolist(),
                                               tasks["end_ns"].tolist(),
                                               tasks["stream"].tolist(), strict=True)):
            if e >= 0:
                self.task[t] = (s, e)
                stream_free[stream] = max(stream_free.get(stream, 0), e)
                continue
            self.unfinished.add(t)
            if stream in stuck_stream:
                self.queued.append(t)
                continue
            stuck_stream.add(stream)
            begin = s if s >= 0 else max(submit[t], stream_free.get(stream, 0))
            self.task[t] = (min(begin, self.end), self.end)


def _task_tracks(trace: Any) -> list[tuple[int, int]]:
    """(pid, tid) of every task: its device's process, its stream's track (a synchronous copy:
    the synchronous-copies track of its calling thread)."""
    tasks, thread = trace.tasks, trace.calls["thread"].tolist()
    return [(2 + max(dev, 0), STREAM_TID_BASE + stream if stream >= 0
             else SYNC_TID_BASE + thread[c])
            for stream, dev, c in zip(tasks["stream"].tolist(), tasks["device"].tolist(),
                                      tasks["call"].tolist(), strict=True)]


def _inside(span: tuple[int, int]) -> int:
    """A time strictly inside a span of 2 ns or more (its middle), else its start: where a
    flow point is bound to the slice open at that time."""
    s, e = span
    return s + (e - s) // 2


class Flow(NamedTuple):
    """One arrow: its id, name, and the indices (in ``Built.events``) of its two slices."""

    fid: int
    name: str
    src: int
    dst: int


class Built(NamedTuple):
    """The export before its time unit is chosen: events with integer-ns ``ts``/``dur``
    (flow events are not among them) and the flows between their slices."""

    events: list[dict[str, Any]]
    flows: list[Flow]
    end_ns: int


def to_chrome_trace(trace: Any, findings: list[Any] | None = None) -> dict[str, Any]:
    """Build ``{"traceEvents": [...], "otherData": {...}}`` (times in µs).

    ``findings`` defaults to ``trace.findings()``; each becomes an instant on its call's lane.
    """
    built = build_events(trace, findings)
    out: list[dict[str, Any]] = []
    for e in built.events:
        if "ts" in e:
            e = {**e, "ts": us(e["ts"])}
            if "dur" in e:
                e["dur"] = us(e["dur"])
        out.append(e)
    for fl in built.flows:
        for ph, idx in (("s", fl.src), ("f", fl.dst)):
            x = built.events[idx]
            fe: dict[str, Any] = {"ph": ph, "id": fl.fid, "cat": "flow", "name": fl.name,
                                  "pid": x["pid"], "tid": x["tid"],
                                  "ts": us(_inside((x["ts"], x["ts"] + x["dur"])))}
            if ph == "f":
                fe["bp"] = "e"
            out.append(fe)
    return {"traceEvents": out,
            "otherData": {"generator": "acl_lab", "profile": trace.meta.get("profile", ""),
                          "trace_end_ns": built.end_ns}}


def build_events(trace: Any, findings: list[Any] | None = None) -> Built:
    """Every slice, instant, counter and name of the export, times in integer ns."""
    ev: list[dict[str, Any]] = []
    flows: list[Flow] = []
    calls, tasks, objs = trace.calls, trace.tasks, trace.objects
    spans = _Spans(trace)
    ev.append({"ph": "M", "pid": HOST_PID, "tid": 0, "name": "process_name",
               "args": {"name": "host"}})
    for i in range(trace.threads.rows):
        ev.append({"ph": "M", "pid": HOST_PID, "tid": i + 1, "name": "thread_name",
                   "args": {"name": f"thread {i} ({trace.string(int(trace.threads['name'][i]))})"}})
    devices = sorted({int(d) for d in tasks["device"] if d >= 0}
                     | {int(d) for d in objs["device"] if d >= 0})
    for d in devices:
        ev.append({"ph": "M", "pid": 2 + d, "tid": 0, "name": "process_name",
                   "args": {"name": f"device {d}"}})
    for i in range(objs.rows):
        if int(objs["kind"][i]) == 1 and int(objs["device"][i]) >= 0:
            ev.append({"ph": "M", "pid": 2 + int(objs["device"][i]),
                       "tid": STREAM_TID_BASE + i, "name": "thread_name",
                       "args": {"name": trace.string(int(objs["label"][i]))}})

    # Host API calls.
    call_ev: list[int] = []
    strings = trace.strings
    c_name, c_thread, c_file, c_line, c_ret, c_end = (calls[k].tolist() for k in (
        "name", "thread", "file", "line", "ret", "end_ns"))
    for c in range(calls.rows):
        start, end = spans.call[c]
        file, line = strings[c_file[c]], c_line[c]
        e: dict[str, Any] = {
            "ph": "X", "pid": HOST_PID, "tid": c_thread[c] + 1,
            "name": strings[c_name[c]], "cat": "api", "ts": start, "dur": end - start,
            "args": {"ret": c_ret[c], "site": f"{file}:{line}", "call_id": c,
                     "args": repr(trace.call_args(c))[:200]},
        }
        if c_end[c] < 0:
            e["args"]["unfinished"] = True
        if c in spans.deadlock:
            e["args"]["deadlock"] = spans.deadlock[c]
        call_ev.append(len(ev))
        ev.append(e)
        if c in spans.deadlock or c_end[c] < 0:
            raised = c_end[c]
            at = raised if 0 <= raised <= end else start
            msg = spans.deadlock.get(c, "the call never returned before the program ended")
            ev.append({"ph": "i", "s": "t", "pid": HOST_PID, "tid": c_thread[c] + 1,
                       "cat": "deadlock", "ts": max(at, start),
                       "name": "DeadlockError" if c in spans.deadlock else "unfinished call",
                       "args": {"message": msg, "call_id": c, "site": f"{file}:{line}"}})

    # Device tasks, and the slices flows end on.
    sync_threads: set[tuple[int, int]] = set()
    task_ev: dict[int, int] = {}
    edge_target: dict[int, int] = {}
    record_end = {int(trace.edges["wait"][j]): spans.task.get(int(trace.edges["record"][j]))
                  for j in range(trace.edges.rows)}
    tracks = _task_tracks(trace)
    t_stream, t_call, t_kind = (tasks[k].tolist() for k in ("stream", "call", "kind"))
    for t in sorted(spans.task):
        start, end = spans.task[t]
        pid, tid = tracks[t]
        if t_stream[t] < 0 and (pid, tid) not in sync_threads:
            sync_threads.add((pid, tid))
            thread = tid - SYNC_TID_BASE
            ev.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                       "args": {"name": f"synchronous copies of thread {thread}"}})
        c = t_call[t]
        x: dict[str, Any] = {"ph": "X", "pid": pid, "tid": tid, "cat": "task",
                             "name": TASK_KINDS[t_kind[t]], "ts": start,
                             "dur": end - start, "args": {"task_id": t, "call_id": c}}
        if t in spans.unfinished:
            x["name"] += " (never finished)"
            x["args"]["unfinished"] = True
        task_ev[t] = edge_target[t] = len(ev)
        ev.append(x)
        rec = record_end.get(t)
        if rec is not None and rec[1] > start and t not in spans.unfinished:
            # Blocked until the record finished: the arrow ends on this child slice.
            set_at = min(rec[1], end)
            edge_target[t] = len(ev)
            ev.append({"ph": "X", "pid": pid, "tid": tid, "cat": "task", "name": "event set",
                       "ts": set_at, "dur": end - set_at, "args": {"task_id": t}})
    for t in spans.queued:
        pid, tid = tracks[t]
        ev.append({"ph": "i", "s": "t", "pid": pid, "tid": tid, "cat": "task",
                   "name": f"{TASK_KINDS[int(tasks['kind'][t])]} (queued, never ran)",
                   "ts": min(int(tasks["submit_ns"][t]), spans.end),
                   "args": {"task_id": t, "call_id": int(tasks["call"][t])}})

    # Launch arrows: from the call to each task it enqueued that is drawn and starts no
    # earlier than the call ends (a synchronous copy runs inside its call: no arrow).
    for t in sorted(spans.task):
        ce = spans.call[t_call[t]][1]
        if spans.task[t][0] >= ce:
            flows.append(Flow(LAUNCH_FLOW_BASE + t, "launch", call_ev[t_call[t]], task_ev[t]))

    # Record -> wait arrows.
    for j in range(trace.edges.rows):
        r, w = int(trace.edges["record"][j]), int(trace.edges["wait"][j])
        if r not in spans.task or w not in edge_target:
            continue
        flows.append(Flow(EDGE_FLOW_BASE + j, "record->wait", task_ev[r], edge_target[w]))

    for i in range(trace.callbacks.rows):
        thread = int(trace.callbacks["thread"][i])
        s, e2 = int(trace.callbacks["start_ns"][i]), int(trace.callbacks["end_ns"][i])
        if e2 < 0:
            e2 = spans.end
        ev.append({"ph": "X", "pid": HOST_PID, "tid": thread + 1, "cat": "callback",
                   "name": f"callback (task {int(trace.callbacks['task'][i])})",
                   "ts": s, "dur": max(e2 - s, 0)})

    ev.extend(_diag_instants(trace, spans))
    ev.extend(finding_instants(trace, trace.findings() if findings is None else findings, spans))
    ev.extend(_memory_counters(trace))
    return Built(ev, flows, spans.end)


def _diag_instants(trace: Any, spans: _Spans) -> Iterator[dict[str, Any]]:
    """Warnings and errors the runtime logged (not deadlocks: those have their own instant)."""
    dg, calls = trace.diags, trace.calls
    for j in range(dg.rows):
        kind = trace.string(int(dg["kind"][j]))
        c = int(dg["call"][j])
        if kind == "deadlock" or not 0 <= c < calls.rows:
            continue
        yield {"ph": "i", "s": "t", "pid": HOST_PID, "tid": int(calls["thread"][c]) + 1,
               "cat": "diag", "name": f"{LEVELS[int(dg['level'][j])]}: {kind}",
               "ts": spans.call[c][0],
               "args": {"message": trace.string(int(dg["message"][j])), "call_id": c}}


def finding_instants(trace: Any, findings: list[Any], spans: _Spans | None = None
                     ) -> Iterator[dict[str, Any]]:
    """One instant per finding, on the lane of its first call (global when it has none)."""
    spans = spans or _Spans(trace)
    calls = trace.calls
    for k, f in enumerate(findings):
        args = {"message": f.message, "severity": f.severity, "kind": f.kind,
                "site": f"{f.file}:{f.line}", "finding": k}
        c = next((c for c in f.calls if 0 <= c < calls.rows), None)
        name = f"{f.severity}: {f.kind}"
        if c is None:
            yield {"ph": "i", "s": "g", "pid": HOST_PID, "tid": 0, "cat": "finding",
                   "name": name, "ts": spans.end, "args": args}
        else:
            yield {"ph": "i", "s": "t", "pid": HOST_PID, "tid": int(calls["thread"][c]) + 1,
                   "cat": "finding", "name": name, "ts": spans.call[c][0],
                   "args": {**args, "call_id": c}}


def _memory_counters(trace: Any) -> Iterator[dict[str, Any]]:
    """Device memory counters, one series per device, in time order."""
    a, f, calls = trace.allocs, trace.frees, trace.calls
    changes: list[tuple[int, int, int]] = []
    for i in range(a.rows):
        if int(a["kind"][i]) in DEVICE_KINDS:
            c = int(a["call"][i])
            changes.append((int(calls["end_ns"][c]), int(a["device"][i]), int(a["reserved"][i])))
    for j in range(f.rows):
        i = int(f["alloc"][j])
        if i >= 0 and int(a["kind"][i]) in DEVICE_KINDS:
            c = int(f["call"][j])
            changes.append((int(calls["end_ns"][c]), int(a["device"][i]), -int(a["reserved"][i])))
    used: dict[int, int] = {}
    for ts, dev, delta in sorted(changes):
        used[dev] = used.get(dev, 0) + delta
        yield {"ph": "C", "pid": 2 + dev, "tid": 0, "name": "device memory",
               "ts": max(ts, 0), "args": {"used_bytes": used[dev]}}
