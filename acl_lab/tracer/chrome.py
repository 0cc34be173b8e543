"""Export a Trace as Chrome Trace Event JSON, for Perfetto and chrome://tracing.

Follows the exporter checklist of the anchors survey (section 5): numeric ``ts`` in
microseconds relative to the trace start (ns kept as fractions), ``dur`` on every ``X``,
``M`` events naming each process and thread, one ``tid`` per stream so slices on a track never
overlap, host API calls as ``X`` on the calling thread, call -> task links as v2 flows
(``bind_id`` with ``flow_out``/``flow_in``), event record -> wait links as v1 flows, device
memory as ``C`` counters, and flow ids below 2**53. A pure function: the trace is not changed.
"""

from __future__ import annotations

from typing import Any

from .schema import ALLOC_KINDS, TASK_KINDS

HOST_PID = 1
STREAM_TID_BASE = 1000
SYNC_TID_BASE = 100_000
EDGE_FLOW_BASE = 1 << 40


def _us(ns: int) -> float:
    return ns / 1000.0


def to_chrome_trace(trace: Any) -> dict[str, Any]:
    """Build ``{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}``."""
    ev: list[dict[str, Any]] = []
    calls, tasks, objs = trace.calls, trace.tasks, trace.objects
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

    first_task: dict[int, int] = {}
    for t in range(tasks.rows):
        first_task.setdefault(int(tasks["call"][t]), t)
    for c in range(calls.rows):
        start = int(calls["start_ns"][c])
        end = int(calls["end_ns"][c])
        file, line = trace.call_site(c)
        e: dict[str, Any] = {
            "ph": "X", "pid": HOST_PID, "tid": int(calls["thread"][c]) + 1,
            "name": trace.call_name(c), "cat": "api", "ts": _us(start),
            "dur": _us(max(end, start) - start),
            "args": {"ret": int(calls["ret"][c]), "site": f"{file}:{line}", "call_id": c,
                     "args": repr(trace.call_args(c))[:200]},
        }
        if end < 0:
            e["args"]["unfinished"] = True
        ft = first_task.get(c)
        if ft is not None and int(tasks["end_ns"][ft]) >= 0:
            e["bind_id"] = ft + 1
            e["flow_out"] = True
        ev.append(e)

    sync_threads: set[tuple[int, int]] = set()
    for t in range(tasks.rows):
        start, end = int(tasks["start_ns"][t]), int(tasks["end_ns"][t])
        if end < 0:
            continue
        stream = int(tasks["stream"][t])
        c = int(tasks["call"][t])
        dev = max(int(tasks["device"][t]), 0)
        if stream >= 0:
            tid = STREAM_TID_BASE + stream
        else:
            thread = int(calls["thread"][c])
            tid = SYNC_TID_BASE + thread
            if (dev, thread) not in sync_threads:
                sync_threads.add((dev, thread))
                ev.append({"ph": "M", "pid": 2 + dev, "tid": tid, "name": "thread_name",
                           "args": {"name": f"synchronous copies of thread {thread}"}})
        ev.append({"ph": "X", "pid": 2 + dev, "tid": tid, "cat": "task",
                   "name": TASK_KINDS[int(tasks["kind"][t])], "ts": _us(start),
                   "dur": _us(end - start), "bind_id": t + 1, "flow_in": True,
                   "args": {"task_id": t, "call_id": c}})

    for j in range(trace.edges.rows):
        r, w = int(trace.edges["record"][j]), int(trace.edges["wait"][j])
        fid = EDGE_FLOW_BASE + j
        rs, ws = int(tasks["stream"][r]), int(tasks["stream"][w])
        ev.append({"ph": "s", "id": fid, "cat": "event", "name": "record->wait",
                   "pid": 2 + max(int(tasks["device"][r]), 0), "tid": STREAM_TID_BASE + rs,
                   "ts": _us(int(tasks["start_ns"][r]))})
        ev.append({"ph": "f", "bp": "e", "id": fid, "cat": "event", "name": "record->wait",
                   "pid": 2 + max(int(tasks["device"][w]), 0), "tid": STREAM_TID_BASE + ws,
                   "ts": _us(int(tasks["start_ns"][w]))})

    for i in range(trace.callbacks.rows):
        thread = int(trace.callbacks["thread"][i])
        s, e2 = int(trace.callbacks["start_ns"][i]), int(trace.callbacks["end_ns"][i])
        ev.append({"ph": "X", "pid": HOST_PID, "tid": thread + 1, "cat": "callback",
                   "name": f"callback (task {int(trace.callbacks['task'][i])})",
                   "ts": _us(s), "dur": _us(max(e2 - s, 0))})

    # Device memory counters, one series per device, in call order.
    a, f = trace.allocs, trace.frees
    changes: list[tuple[int, int, int]] = []
    for i in range(a.rows):
        if ALLOC_KINDS[int(a["kind"][i])] in ("device", "dvpp"):
            c = int(a["call"][i])
            changes.append((int(calls["end_ns"][c]), int(a["device"][i]), int(a["reserved"][i])))
    for j in range(f.rows):
        i = int(f["alloc"][j])
        if i >= 0 and ALLOC_KINDS[int(a["kind"][i])] in ("device", "dvpp"):
            c = int(f["call"][j])
            changes.append((int(calls["end_ns"][c]), int(a["device"][i]), -int(a["reserved"][i])))
    used: dict[int, int] = {}
    for ts, dev, delta in sorted(changes):
        used[dev] = used.get(dev, 0) + delta
        ev.append({"ph": "C", "pid": 2 + dev, "tid": 0, "name": "device memory",
                   "ts": _us(max(ts, 0)), "args": {"used_bytes": used[dev]}})
    return {"traceEvents": ev, "displayTimeUnit": "ns",
            "otherData": {"generator": "acl_lab", "profile": trace.meta.get("profile", "")}}
