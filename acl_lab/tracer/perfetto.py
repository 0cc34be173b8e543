"""Export a Trace as a native Perfetto protobuf trace (``.pftrace``), with integer nanoseconds.

The same slices, instants, counters and arrows as the Chrome JSON export (``chrome.py``), as
``TracePacket`` messages of Perfetto's published schema (``protos/perfetto/trace``): a
``TrackDescriptor`` per process, thread (host thread or stream) and counter, then
``TrackEvent`` slice begin/end pairs, instants and counter values on those tracks. Arrows are
``flow_ids`` on the source slice's begin and ``terminating_flow_ids`` on the target's, so no
time matching is involved. Times are the trace's own integer nanoseconds: nothing is rounded.

The protobuf wire format is written here directly (varints, length-delimited fields), so the
export needs no protobuf package; the tests decode it with the ``perfetto`` package's classes.
Field numbers are those of ``perfetto_trace.proto`` (cited next to each constant).
"""

from __future__ import annotations

import heapq
import os
from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import Any

from .chrome import build_events

# TracePacket fields
PACKET = 1              # Trace.packet
TIMESTAMP = 8           # TracePacket.timestamp (uint64)
TRACK_EVENT = 11        # TracePacket.track_event
SEQUENCE_ID = 10        # TracePacket.trusted_packet_sequence_id (uint32)
TRACK_DESCRIPTOR = 60   # TracePacket.track_descriptor
# TrackDescriptor fields
TD_UUID, TD_NAME, TD_PROCESS, TD_THREAD, TD_PARENT, TD_COUNTER = 1, 2, 3, 4, 5, 8
# ProcessDescriptor / ThreadDescriptor fields
PD_PID, PD_NAME = 1, 6
THD_PID, THD_TID, THD_NAME = 1, 2, 5
# CounterDescriptor.unit = UNIT_SIZE_BYTES
CD_UNIT, UNIT_SIZE_BYTES = 3, 3
# TrackEvent fields
TE_DEBUG, TE_TYPE, TE_TRACK, TE_CATEGORY, TE_NAME = 4, 9, 11, 22, 23
TE_COUNTER_VALUE, TE_FLOW_IDS, TE_TERMINATING_FLOW_IDS = 30, 47, 48
SLICE_BEGIN, SLICE_END, INSTANT, COUNTER = 1, 2, 3, 4
# DebugAnnotation fields
DA_INT, DA_STRING, DA_NAME = 4, 6, 10

SEQ = 1


def _varint(n: int) -> bytes:
    """Unsigned LEB128; negative int64 values as their two's complement (10 bytes)."""
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint((field << 3) | wire)


def f_int(field: int, n: int) -> bytes:
    """A varint field (uint64, int64, int32, uint32, enum, bool)."""
    return _key(field, 0) + _varint(int(n))


def f_fixed64(field: int, n: int) -> bytes:
    """A fixed64 field."""
    return _key(field, 1) + int(n).to_bytes(8, "little")


def f_bytes(field: int, data: bytes) -> bytes:
    """A length-delimited field (string, bytes, embedded message)."""
    return _key(field, 2) + _varint(len(data)) + data


def f_str(field: int, text: str) -> bytes:
    """A string field (UTF-8; lone surrogates replaced)."""
    return f_bytes(field, text.encode("utf-8", "replace"))


def _packet(body: bytes, ts: int | None = None) -> bytes:
    head = f_int(TIMESTAMP, ts) if ts is not None else b""
    return f_bytes(PACKET, head + f_int(SEQUENCE_ID, SEQ) + body)


def _debug(args: dict[str, Any]) -> bytes:
    out = b""
    for k, v in args.items():
        if isinstance(v, bool) or not isinstance(v, int):
            val = f_str(DA_STRING, str(v))
        else:
            val = f_int(DA_INT, v)
        out += f_bytes(TE_DEBUG, f_str(DA_NAME, str(k)) + val)
    return out


def _uuid(pid: int, tid: int | None) -> int:
    """Track uuids: a process is ``pid << 32``, its thread ``pid << 32 | tid + 1``."""
    return (pid << 32) | (0 if tid is None else tid + 1)


def _track_event(kind: int, track: int, name: str | None = None, cat: str | None = None,
                 args: dict[str, Any] | None = None, extra: bytes = b"") -> bytes:
    body = f_int(TE_TYPE, kind) + f_int(TE_TRACK, track)
    if cat:
        body += f_str(TE_CATEGORY, cat)
    if name is not None:
        body += f_str(TE_NAME, name)
    if args:
        body += _debug(args)
    return f_bytes(TRACK_EVENT, body + extra)


def _thread_stream(track: int, items: list[tuple[int, int, int]], events: list[dict[str, Any]],
                   flow_out: dict[int, list[int]], flow_in: dict[int, list[int]]
                   ) -> Iterator[tuple[int, int, bytes]]:
    """One thread track's packets, nested properly: ``items`` are (start, end, event index),
    instants have start == end and index into ``events`` too. Yields (ts, order, packet)."""
    items.sort(key=lambda it: (it[0], -it[1], it[2]))
    stack: list[int] = []
    seq = 0

    def emit(ts: int, body: bytes) -> tuple[int, int, bytes]:
        nonlocal seq
        seq += 1
        return ts, seq, _packet(body, ts)

    for start, end, idx in items:
        while stack and _end(events[stack[-1]]) <= start:
            top = stack.pop()
            yield emit(_end(events[top]), _track_event(SLICE_END, track))
        e = events[idx]
        if e["ph"] == "i":
            yield emit(start, _track_event(INSTANT, track, e["name"], e.get("cat"),
                                           e.get("args")))
            continue
        extra = b"".join(f_fixed64(TE_FLOW_IDS, f) for f in flow_out.get(idx, ()))
        extra += b"".join(f_fixed64(TE_TERMINATING_FLOW_IDS, f) for f in flow_in.get(idx, ()))
        yield emit(start, _track_event(SLICE_BEGIN, track, e["name"], e.get("cat"),
                                       e.get("args"), extra))
        if end == start:
            yield emit(end, _track_event(SLICE_END, track))
        else:
            stack.append(idx)
    while stack:
        top = stack.pop()
        yield emit(_end(events[top]), _track_event(SLICE_END, track))


def _end(e: dict[str, Any]) -> int:
    return int(e["ts"]) + int(e.get("dur", 0))


def perfetto_packets(trace: Any, findings: list[Any] | None = None) -> Iterator[bytes]:
    """The trace's packets, each a serialized ``Trace.packet`` field (concatenate them)."""
    built = build_events(trace, findings)
    events = built.events
    flow_out: dict[int, list[int]] = defaultdict(list)
    flow_in: dict[int, list[int]] = defaultdict(list)
    for fl in built.flows:
        flow_out[fl.src].append(fl.fid)
        flow_in[fl.dst].append(fl.fid)

    procs: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    for e in events:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M" and e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    per_track: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    counters: dict[tuple[int, str], list[tuple[int, int]]] = defaultdict(list)
    global_instants: list[int] = []
    for i, e in enumerate(events):
        if e["ph"] == "X":
            per_track[(e["pid"], e["tid"])].append((e["ts"], _end(e), i))
        elif e["ph"] == "i" and e.get("s") == "g":
            global_instants.append(i)
        elif e["ph"] == "i":
            per_track[(e["pid"], e["tid"])].append((e["ts"], e["ts"], i))
        elif e["ph"] == "C":
            for k, v in e["args"].items():
                counters[(e["pid"], f"{e['name']} {k}")].append((e["ts"], int(v)))

    for pid in sorted(procs.keys() | {p for p, _ in per_track} | {p for p, _ in counters}):
        yield _packet(f_bytes(TRACK_DESCRIPTOR, f_int(TD_UUID, _uuid(pid, None)) + f_bytes(
            TD_PROCESS, f_int(PD_PID, pid) + f_str(PD_NAME, procs.get(pid, f"pid {pid}")))))
    for pid, tid in sorted(threads.keys() | per_track.keys()):
        name = threads.get((pid, tid), f"thread {tid}")
        yield _packet(f_bytes(TRACK_DESCRIPTOR, f_int(TD_UUID, _uuid(pid, tid))
                              + f_int(TD_PARENT, _uuid(pid, None)) + f_bytes(
            TD_THREAD, f_int(THD_PID, pid) + f_int(THD_TID, tid) + f_str(THD_NAME, name))))
    counter_uuid = {key: (1 << 62) | k for k, key in enumerate(sorted(counters))}
    for (pid, name), uuid in counter_uuid.items():
        yield _packet(f_bytes(TRACK_DESCRIPTOR, f_int(TD_UUID, uuid)
                              + f_int(TD_PARENT, _uuid(pid, None)) + f_str(TD_NAME, name)
                              + f_bytes(TD_COUNTER, f_int(CD_UNIT, UNIT_SIZE_BYTES))))
    if global_instants:
        yield _packet(f_bytes(TRACK_DESCRIPTOR, f_int(TD_UUID, 1) + f_str(TD_NAME, "findings")))

    streams: list[Iterable[tuple[int, int, bytes]]] = []
    for (pid, tid), items in per_track.items():
        streams.append(_thread_stream(_uuid(pid, tid), items, events, flow_out, flow_in))
    for (pid, name), values in counters.items():
        uuid = counter_uuid[(pid, name)]
        streams.append([(ts, k, _packet(_track_event(COUNTER, uuid, extra=f_int(
            TE_COUNTER_VALUE, v)), ts)) for k, (ts, v) in enumerate(values)])
    streams.append([(events[i]["ts"], k, _packet(_track_event(
        INSTANT, 1, events[i]["name"], events[i].get("cat"), events[i].get("args")),
        events[i]["ts"])) for k, i in enumerate(global_instants)])
    # Each track's packets are in order; merge by time only (stable within a track).
    for _, _, pkt in heapq.merge(*streams, key=lambda x: x[0]):
        yield pkt


def to_perfetto_bytes(trace: Any, findings: list[Any] | None = None) -> bytes:
    """The whole ``.pftrace`` as bytes (a serialized ``perfetto.protos.Trace``)."""
    return b"".join(perfetto_packets(trace, findings))


def save_perfetto_trace(trace: Any, path: str | os.PathLike[str],
                        findings: list[Any] | None = None) -> None:
    """Write the protobuf trace to ``path``."""
    with open(path, "wb") as fh:
        for pkt in perfetto_packets(trace, findings):
            fh.write(pkt)
