"""The timeline view: host threads, streams and engines against time, as one Plotly figure.

``timeline(trace)`` draws, top to bottom:

* one lane per host thread: its API calls as bars (hover: the call with its arguments,
  file:line, duration, ret), the time it spent blocked in a synchronize / wait shaded behind
  them (the ``syncs`` table), and the callbacks it ran as thin bars on top;
* per device, one lane per stream (its tasks coloured by kind: H2D, D2H, D2D, memset,
  kernel / op, model, event record / wait / reset, callback, DVPP), a ``sync tasks
  (thread N)`` lane for the synchronous work each thread made (sync copies, ``acl.mdl.execute``,
  synchronous ops: tasks with ``stream -1``),
  and, with ``engines=True``, one lane per busy engine (copy engine per direction, AI core,
  DVPP) showing when it was occupied by any stream;
* arrows from the call that enqueued a task (at its submit time) to the task's start, and
  from each event record to the wait it released (record end -> wait end);
* findings: a marker at every call (and task) a finding involves, coloured by severity.

Level of detail. When the visible calls + tasks + waits + callbacks (+ engine intervals) are
at most ``max_svg_tasks``, every item is an SVG ``go.Bar`` (``orientation="h"``,
``base=start``) with a full hover text. Beyond that each group (a task kind, a call name, the
waits, ...) becomes one ``go.Scattergl`` of thick line segments (``x = [start, end, NaN,
...]``, NaN being the typed-array form of a ``None`` separator) whose hover comes from
per-segment ``customdata``. Segments are decimated with one rule, applied per lane and group
in time order: a task shorter than one pixel-equivalent (``window / style.lod_pixels``, i.e.
1 px of a 4000 px wide plot) is merged with the previous one when that one is also shorter
than a pixel and the gap between them is below a pixel. Merged runs hover as "N tasks, busy
time, bytes". What is visible does not change at that width, and the segment count per lane
and group stays below about ``2 * lod_pixels``; if the total still exceeds
``MAX_GL_SEGMENTS`` the pixel is doubled until it fits. Call ``timeline`` again with a
narrower ``start_ns``/``end_ns`` to see single tasks.

Flows are drawn only when both ends are inside the window and on shown lanes, all or none
per kind, within a budget of ``MAX_FLOWS`` arrows (SVG mode) or ``MAX_GL_FLOWS`` (WebGL mode,
where thousands of arrows would hide the lanes): record -> wait arrows first, then call ->
task arrows if they fit in what is left. A kind that does not fit is dropped entirely (a
partial set would suggest missing links); the title and ``layout.meta["flows_dropped"]`` say
how many were not drawn.

A pure function: the trace is read, never written; nothing is shown (the caller displays
the returned figure). ``layout.meta`` carries the lane names, the unit, the mode and the
window for tests and the explorer; each trace's ``meta`` says its role.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ...acl._boundary import c_name
from ...runtime.kinds import ObjectKind
from ..schema import ENGINES, SYNC_KINDS, TASK_KINDS
from ..sites import format_site
from ..units import human_ns
from .style import PlotStyle

#: Arrow budget in SVG mode: record->wait arrows, then call->task arrows, each all or none.
MAX_FLOWS = 2000
#: Arrow budget in WebGL mode.
MAX_GL_FLOWS = 200
#: WebGL mode: the pixel used for merging is doubled until the figure has at most this many
#: segments.
MAX_GL_SEGMENTS = 150_000
#: At most this many "never ran" markers (tasks with start -1) are drawn.
MAX_NEVER_RAN = 2000
#: At most this many distinct call names get their own WebGL trace; the rest are "other".
MAX_GL_CALL_NAMES = 16
#: Task kinds whose bytes / duration is a bandwidth.
COPY_KINDS = frozenset({"H2D", "D2H", "D2D", "H2H", "memset"})
#: Engines drawn on engine lanes (``none`` and ``host`` are not device engines).
ENGINE_LANES = ("copy_h2d", "copy_d2h", "copy_d2d", "aicore", "dvpp")

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


@dataclass(frozen=True)
class _Lane:
    """One row of the figure."""

    name: str
    group: str  # "threads", "streams", "sync_copies", "engines"
    device: int


@dataclass
class _Group:
    """Items of one colour/legend entry, drawn as bars (SVG) or segments (WebGL)."""

    name: str
    role: str  # "call", "sync", "callback", "task", "engine"
    kind: str
    color: str
    width: float
    lane: np.ndarray
    start: np.ndarray
    end: np.ndarray
    ids: np.ndarray
    nbytes: np.ndarray
    legendgroup: str = ""
    showlegend: bool = True
    opacity: float = 1.0
    legend_name: str = ""
    rets: np.ndarray | None = None


@dataclass(frozen=True)
class _Window:
    lo: int
    hi: int
    trace_end: int
    unit: str
    scale: int


# --------------------------------------------------------------------------- public
def timeline(trace: Any, *, threads: Iterable[int | str] | None = None,
             streams: Iterable[int | str] | None = None, start_ns: int | None = None,
             end_ns: int | None = None, engines: bool = False,
             findings: Sequence[Any] | None = None, style: PlotStyle | None = None,
             max_svg_tasks: int = 3000, lane_order: Sequence[str] | None = None
             ) -> go.Figure:
    """Draw the trace as lanes against time: host threads, then streams per device.

    Thread lanes show API calls (bars labelled by call name), sync waits (shaded) and the
    callbacks the thread ran; stream lanes show tasks coloured by kind; synchronous copies
    sit on a ``sync tasks (thread N)`` lane; ``engines=True`` adds copy-engine and AI-core
    occupancy lanes. Arrows link event record -> wait and call -> task; findings are marked
    on the calls and tasks they involve. See the module docstring for the level-of-detail
    and flow-limit rules.

    Args:
        trace: a ``Trace`` (not modified).
        threads: keep only these host threads (row ids or names); their sync-copy lanes
            follow them.
        streams: keep only these streams (handles, ``objects`` row ids, labels or lane
            names; ``"sync"`` keeps the sync-copy lanes, which a ``streams`` filter
            otherwise drops).
        start_ns, end_ns: the time window (default: the whole trace); items overlapping it
            are drawn, the x axis is set to it.
        engines: add engine lanes (device-wide, whatever the stream filter).
        findings: ``Finding`` values to mark (e.g. ``trace.findings()``).
        style: colours and sizes (default ``PlotStyle()``).
        max_svg_tasks: above this many visible items, switch from SVG bars to WebGL segments.
        lane_order: stream lane names in the order to draw them (another figure's
            ``layout.meta["lanes"]``, so two runs line up); streams not named keep their
            creation order, after the named ones.

    Returns:
        A ``plotly.graph_objects.Figure``; lane names are the y-axis tick labels and
        ``layout.meta["lanes"]``.

    Raises:
        ValueError: a filter names no thread / stream, or the window is empty.
    """
    st = style if style is not None else PlotStyle()
    win = _window(trace, st, start_ns, end_ns)
    lanes, thread_lane, stream_lane, sync_lane, engine_lane = _lanes(
        trace, st, threads, streams, engines, lane_order)
    groups = _groups(trace, st, win, thread_lane, stream_lane, sync_lane, engine_lane,
                     engines)
    total = sum(len(g.ids) for g in groups)
    svg = total <= max_svg_tasks
    data: list[Any] = []
    pixel_ns = 0
    if svg:
        task_lane_name = [ln.name for ln in lanes]
        for g in groups:
            data.append(_bar(trace, g, win, task_lane_name))
    else:
        gl, pixel_ns = _gl_traces(trace, st, groups, win)
        data.extend(gl)
    task_lanes = _task_lanes(trace, stream_lane, sync_lane)
    flows, dropped = _flows(trace, st, win, thread_lane, task_lanes,
                            MAX_FLOWS if svg else MAX_GL_FLOWS)
    data.extend(flows)
    data.extend(_never_ran(trace, st, win, task_lanes))
    if findings:
        data.extend(_finding_markers(trace, st, win, findings, thread_lane, task_lanes))
    layout = _layout(trace, st, win, lanes, svg, pixel_ns, dropped, total)
    return go.Figure(data=data, layout=layout)


# --------------------------------------------------------------------------- window, lanes
def _window(trace: Any, st: PlotStyle, start_ns: int | None, end_ns: int | None) -> _Window:
    """The visible window and the axis unit."""
    starts: list[int] = []
    ends: list[int] = [int(trace.meta.get("virtual_time_ns", 0) or 0)]
    for tname, scol, ecol in (("calls", "start_ns", "end_ns"), ("tasks", "submit_ns", "end_ns"),
                              ("syncs", "start_ns", "end_ns"),
                              ("callbacks", "start_ns", "end_ns")):
        t = trace.tables[tname]
        if t.rows:
            s = t[scol]
            s = s[s >= 0]
            if len(s):
                starts.append(int(s.min()))
            ends.append(int(t[ecol].max()))
            if scol != "start_ns":
                ends.append(int(t["start_ns"].max()))
            ends.append(int(t[scol].max()))
    trace_end = max(ends)
    lo = int(start_ns) if start_ns is not None else (min(starts) if starts else 0)
    hi = int(end_ns) if end_ns is not None else trace_end
    if start_ns is None and end_ns is None and hi <= lo:
        hi = lo + 1
    if hi <= lo:
        raise ValueError(f"timeline: the window [{lo}, {hi}] ns is empty")
    unit, scale = st.unit_for(hi - lo)
    return _Window(lo, hi, max(trace_end, lo), unit, scale)


def _thread_ids(trace: Any, threads: Iterable[int | str]) -> set[int]:
    names = [trace.string(int(n)) for n in trace.threads["name"]]
    out: set[int] = set()
    for t in threads:
        if isinstance(t, str):
            hits = [i for i, n in enumerate(names) if n == t]
            if not hits:
                raise ValueError(f"timeline: no thread named {t!r} (threads: {names})")
            out.update(hits)
        elif 0 <= int(t) < len(names):
            out.add(int(t))
        else:
            raise ValueError(f"timeline: no thread {t} (the trace has {len(names)})")
    return out


def _stream_ids(trace: Any, streams: Iterable[int | str]) -> tuple[set[int], bool]:
    objs = trace.objects
    rows = np.nonzero(objs["kind"] == ObjectKind.STREAM)[0]
    labels = {int(i): trace.string(int(objs["label"][i])) for i in rows}
    handles = {int(objs["handle"][i]): int(i) for i in rows}
    out: set[int] = set()
    sync = False
    for s in streams:
        if isinstance(s, str):
            if s == "sync":
                sync = True
                continue
            names = stream_names(trace)  # the lane name a learner reads, or the label
            hits = [i for i, lab in labels.items() if s in (lab, names.get(i))]
            if not hits:
                raise ValueError(f"timeline: no stream labelled {s!r}")
            out.update(hits)
        elif int(s) in handles:
            out.add(handles[int(s)])
        elif int(s) in labels:
            out.add(int(s))
        else:
            raise ValueError(f"timeline: no stream with handle or id {s}")
    return out, sync


def _lanes(trace: Any, st: PlotStyle, threads: Iterable[int | str] | None,
           streams: Iterable[int | str] | None, engines: bool,
           lane_order: Sequence[str] | None = None
           ) -> tuple[list[_Lane], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lanes, and lookup arrays from thread / stream / (device, thread) /
    (device, engine) to lane index (-1: not shown)."""
    tasks, objs, calls = trace.tasks, trace.objects, trace.calls
    n_threads = trace.threads.rows
    keep_threads = set(range(n_threads)) if threads is None else _thread_ids(trace, threads)
    if streams is None:
        keep_streams: set[int] | None = None
        keep_sync = True
    else:
        keep_streams, keep_sync = _stream_ids(trace, streams)
    stream_objs = np.nonzero(objs["kind"] == ObjectKind.STREAM)[0]
    devices = sorted({int(d) for d in tasks["device"] if d >= 0}
                     | {int(objs["device"][i]) for i in stream_objs if objs["device"][i] >= 0}
                     | {0})
    n_dev = max(devices) + 1
    multi = len(devices) > 1

    lanes: list[_Lane] = []
    thread_lane = np.full(max(n_threads, 1), -1, dtype=np.int64)
    stream_lane = np.full(max(objs.rows, 1), -1, dtype=np.int64)
    sync_lane = np.full((n_dev, max(n_threads, 1)), -1, dtype=np.int64)
    engine_lane = np.full((n_dev, len(ENGINES)), -1, dtype=np.int64)

    for i in range(n_threads):
        if i in keep_threads:
            thread_lane[i] = len(lanes)
            name = trace.string(int(trace.threads["name"][i]))
            lanes.append(_Lane(f"thread {i} ({name})", "threads", -1))

    used = set(np.unique(tasks["stream"][tasks["stream"] >= 0]).tolist())
    wanted = used if keep_streams is None else keep_streams
    names = stream_names(trace)
    stream_rows = [i for i in names if i in wanted]
    if lane_order:
        rank = {name: k for k, name in enumerate(lane_order)}
        stream_rows.sort(key=lambda i: rank.get(names[i], len(rank)))  # stable: the rest
    sync_mask = tasks["stream"] < 0
    sync_pairs: set[tuple[int, int]] = set()
    if keep_sync and sync_mask.any():
        call = tasks["call"][sync_mask].astype(np.int64)
        th = np.where(call >= 0, calls["thread"][np.maximum(call, 0)], 0).astype(np.int64)
        dv = np.maximum(tasks["device"][sync_mask], 0).astype(np.int64)
        pairs = np.unique(dv * (n_threads + 1) + th)
        sync_pairs = {(int(p) // (n_threads + 1), int(p) % (n_threads + 1)) for p in pairs
                      if int(p) % (n_threads + 1) in keep_threads}
    busy_engines: set[tuple[int, int]] = set()
    if engines and tasks.rows:
        ran = tasks["end_ns"] >= 0
        pairs = np.unique(np.maximum(tasks["device"][ran], 0).astype(np.int64) * len(ENGINES)
                          + tasks["engine"][ran])
        busy_engines = {(int(p) // len(ENGINES), int(p) % len(ENGINES)) for p in pairs}

    for d in devices:
        prefix = f"dev {d} · " if multi else ""
        for group in st.lane_order:
            if group == "streams":
                for i in stream_rows:
                    if max(int(objs["device"][i]), 0) == d:
                        stream_lane[i] = len(lanes)
                        lanes.append(_Lane(prefix + names[i], "streams", d))
            elif group == "sync_copies":
                for dd, t in sorted(sync_pairs):
                    if dd == d:
                        sync_lane[d, t] = len(lanes)
                        lanes.append(_Lane(f"{prefix}sync tasks (thread {t})", "sync_copies",
                                           d))
            elif group == "engines":
                for e in ENGINE_LANES:
                    ei = ENGINES.index(e)
                    if (d, ei) in busy_engines:
                        engine_lane[d, ei] = len(lanes)
                        lanes.append(_Lane(f"dev {d} · {st.engine_labels.get(e, e)}",
                                           "engines", d))
    return lanes, thread_lane, stream_lane, sync_lane, engine_lane


def stream_names(trace: Any) -> dict[int, str]:
    """``objects`` row -> the name a learner can read, for every stream, in creation order.

    A stream is named by the thread that created it and the line (``stream · worker-2 ·
    cell In[5]:12``; ``#2``, ``#3`` ... when one line creates several), not by its handle,
    which says nothing about who owns it. The order is the creation time on the virtual
    clock, then the thread's name in natural order, so worker-2's stream comes before
    worker-3's whichever thread the host happened to run first. A stream without a
    recorded creating call keeps its label.
    """
    objs, calls, threads = trace.objects, trace.calls, trace.threads
    rows = [int(i) for i in np.nonzero(objs["kind"] == ObjectKind.STREAM)[0]]
    keyed: list[tuple[int, str, int, str]] = []
    for i in rows:
        c = int(objs["call"][i])
        label = trace.string(int(objs["label"][i]))
        if not 0 <= c < calls.rows:
            keyed.append((1 << 62, "", i, label))
            continue
        th = int(calls["thread"][c])
        who = trace.string(int(threads["name"][th])) if 0 <= th < threads.rows else str(th)
        file, line = trace.call_site(c)
        # virtual creation time first; at the same instant, worker-2 before worker-10
        natural = re.sub(r"\d+", lambda m: m.group().zfill(12), who)
        keyed.append((int(calls["start_ns"][c]), natural, i,
                      f"stream · {who} · {format_site(file, line, short=True)}"))
    keyed.sort()
    out: dict[int, str] = {}
    seen: dict[str, int] = {}
    for _t, _who, i, name in keyed:
        n = seen[name] = seen.get(name, 0) + 1
        out[i] = name if n == 1 else f"{name} #{n}"
    return out


def _task_lanes(trace: Any, stream_lane: np.ndarray, sync_lane: np.ndarray) -> np.ndarray:
    """Lane index of every task (-1: not shown)."""
    tasks = trace.tasks
    if not tasks.rows:
        return np.zeros(0, dtype=np.int64)
    stream = tasks["stream"].astype(np.int64)
    lane = np.where(stream >= 0, stream_lane[np.maximum(stream, 0)], -1)
    sync = stream < 0
    if sync.any():
        call = tasks["call"][sync]
        thread = np.where(call >= 0, trace.calls["thread"][np.maximum(call, 0)], 0)
        dev = np.clip(tasks["device"][sync], 0, sync_lane.shape[0] - 1)
        lane[sync] = sync_lane[dev, np.clip(thread, 0, sync_lane.shape[1] - 1)]
    return lane


def _in_window(start: np.ndarray, end: np.ndarray, win: _Window) -> np.ndarray:
    return (end >= win.lo) & (start <= win.hi)


# --------------------------------------------------------------------------- items
def _task_bytes(trace: Any) -> np.ndarray:
    """Bytes moved per task: the larger of its read and written bytes (a copy's size)."""
    acc, n = trace.accesses, trace.tasks.rows
    if not acc.rows or not n:
        return np.zeros(n, dtype=np.int64)
    task = acc["task"].astype(np.int64)
    ok = (task >= 0) & (task < n)
    length = acc["length"].astype(np.float64)
    w = acc["write"] != 0
    wr = np.bincount(task[ok & w], weights=length[ok & w], minlength=n)
    rd = np.bincount(task[ok & ~w], weights=length[ok & ~w], minlength=n)
    return np.maximum(wr, rd).astype(np.int64)


def _groups(trace: Any, st: PlotStyle, win: _Window, thread_lane: np.ndarray,
            stream_lane: np.ndarray, sync_lane: np.ndarray, engine_lane: np.ndarray,
            engines: bool) -> list[_Group]:
    """Everything drawn as a bar, grouped by legend entry, in drawing order."""
    out: list[_Group] = []
    calls, tasks, syncs, cbs = trace.calls, trace.tasks, trace.syncs, trace.callbacks

    if syncs.rows:
        call = syncs["call"].astype(np.int64)
        thread = np.where(call >= 0, calls["thread"][np.maximum(call, 0)], -1)
        lane = np.where(thread >= 0, thread_lane[np.maximum(thread, 0)], -1)
        s, e = syncs["start_ns"], syncs["end_ns"]
        m = (lane >= 0) & (e > s) & _in_window(s, e, win)
        ids = np.nonzero(m)[0]
        out.append(_Group("sync wait", "sync", "", st.sync_color, st.sync_width, lane[ids],
                          s[ids].astype(np.int64), e[ids].astype(np.int64), ids,
                          np.zeros(len(ids), np.int64)))

    if calls.rows:
        lane = thread_lane[np.clip(calls["thread"], 0, len(thread_lane) - 1)]
        s = calls["start_ns"].astype(np.int64)
        e = calls["end_ns"].astype(np.int64)
        e = np.where(e < 0, win.trace_end, e)
        m = (lane >= 0) & (s >= 0) & _in_window(s, e, win)
        ids = np.nonzero(m)[0]
        out.append(_Group("API calls", "call", "", st.call_color, st.call_width, lane[ids],
                          s[ids], e[ids], ids, np.zeros(len(ids), np.int64),
                          legendgroup="calls", rets=calls["ret"][ids].astype(np.int64)))

    if cbs.rows:
        lane = thread_lane[np.clip(cbs["thread"], 0, len(thread_lane) - 1)]
        s, e = cbs["start_ns"].astype(np.int64), cbs["end_ns"].astype(np.int64)
        m = (lane >= 0) & (s >= 0) & (e >= s) & _in_window(s, e, win)
        ids = np.nonzero(m)[0]
        out.append(_Group("callback (host)", "callback", "callback", st.kind_color("callback"),
                          st.callback_width, lane[ids], s[ids], e[ids], ids,
                          np.zeros(len(ids), np.int64)))

    if tasks.rows:
        lane = _task_lanes(trace, stream_lane, sync_lane)
        s, e = tasks["start_ns"].astype(np.int64), tasks["end_ns"].astype(np.int64)
        ran = (lane >= 0) & (s >= 0) & (e >= s) & _in_window(s, e, win)
        nbytes = _task_bytes(trace)
        kinds = tasks["kind"]
        for k, kind in enumerate(TASK_KINDS):
            ids = np.nonzero(ran & (kinds == k))[0]
            if len(ids):
                out.append(_Group(st.kind_labels.get(kind, kind), "task", kind,
                                  st.kind_color(kind), st.task_width, lane[ids], s[ids], e[ids],
                                  ids, nbytes[ids]))
        if engines:
            out.extend(_engine_groups(trace, st, win, engine_lane, nbytes))
    return [g for g in out if len(g.ids)]


def _engine_groups(trace: Any, st: PlotStyle, win: _Window, engine_lane: np.ndarray,
                   nbytes: np.ndarray) -> list[_Group]:
    """Busy intervals per (device, engine): the union of the intervals of its tasks."""
    tasks = trace.tasks
    s, e = tasks["start_ns"].astype(np.int64), tasks["end_ns"].astype(np.int64)
    dev = np.clip(tasks["device"].astype(np.int64), 0, engine_lane.shape[0] - 1)
    lane = engine_lane[dev, tasks["engine"].astype(np.int64)]
    ok = (lane >= 0) & (s >= 0) & (e >= s)
    out: list[_Group] = []
    for name in ENGINE_LANES:
        ei = ENGINES.index(name)
        ids = np.nonzero(ok & (tasks["engine"] == ei))[0]
        if not len(ids):
            continue
        order = np.lexsort((s[ids], lane[ids]))
        ids = ids[order]
        ln, ss, ee = lane[ids], s[ids], e[ids]
        # Running end within a lane: lanes are sorted, so offsetting by lane keeps maxima apart.
        span = int(ee.max()) + 1
        key = np.maximum.accumulate(ln * span + ee)
        prev_end = np.concatenate(([-1], key[:-1] - ln[:-1] * span))
        new = np.ones(len(ids), dtype=bool)
        new[1:] = (ln[1:] != ln[:-1]) | (ss[1:] > prev_end[1:])
        first = np.nonzero(new)[0]
        u_start = ss[first]
        u_end = np.maximum.reduceat(ee, first)
        count = np.diff(np.append(first, len(ids)))
        u_bytes = np.add.reduceat(nbytes[ids], first)
        m = _in_window(u_start, u_end, win)
        g = _Group(st.engine_labels.get(name, name), "engine", name,
                   st.engine_colors.get(name, "#8c8c8c"), st.task_width, ln[first][m],
                   u_start[m], u_end[m], count[m].astype(np.int64), u_bytes[m],
                   legendgroup="engines", opacity=0.85)
        out.append(g)
    return out


# --------------------------------------------------------------------------- SVG bars
#: Ints at least this large print in hex: device and host addresses, handles (a count or a
#: size below it stays decimal).
HEX_FROM = 1 << 32
#: A whole integer inside the text of a recorded list or tuple (``[2020..., 2020...]``), not
#: part of a float or a name.
_INT_TOKEN = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def _int_text(value: int) -> str:
    """An int as the views print it: hex from ``HEX_FROM`` up, decimal below."""
    return f"{value:#x}" if abs(value) >= HEX_FROM else str(value)


def format_arg(trace: Any, a: Any) -> str:
    """One recorded call argument (``Trace.call_args``) as the views print it: a pointer into
    an allocation as its address in hex, a large int (an address, a handle) in hex, the
    ints of a list or tuple (``execute_v2``'s buffer lists, recorded as their text) each the
    same way, other text quoted, anything else as its repr."""
    if isinstance(a, tuple) and len(a) == 3 and a[0] == "ptr":
        alloc, off = int(a[1]), int(a[2])
        if 0 <= alloc < trace.allocs.rows:
            return f"{int(trace.allocs['addr'][alloc]) + off:#x}"
        return f"ptr(alloc {alloc}+{off})"
    if isinstance(a, int) and not isinstance(a, bool):
        return _int_text(a)
    if isinstance(a, str):
        if a.startswith(("[", "(")):
            return _INT_TOKEN.sub(lambda m: _int_text(int(m.group())), a)
        return a if a.startswith("<") else repr(a)
    return repr(a)


def _call_text(trace: Any, cid: int) -> str:
    """``name(args)`` and ``file:line`` of a call, HTML-escaped, one line each."""
    if cid < 0 or cid >= trace.calls.rows:
        return "(no call)"
    args = ", ".join(format_arg(trace, a) for a in trace.call_args(cid))
    if len(args) > 160:
        args = args[:157] + "..."
    file, line = trace.call_site(cid)
    name = trace.call_name(cid)
    cname = c_name(name)
    # the C name a learner meets in the CANN documentation beside the pyACL name
    also = f" <i>{html.escape(cname)}</i>" if cname != name else ""
    return (f"<b>{html.escape(name)}</b>({html.escape(args)}){also}"
            f"<br>{html.escape(format_site(file, line))}")


def _ret_text(ret: int) -> str:
    if ret == 0:
        return "ret 0"
    from ...constants import explain
    return f"ret {ret} ({explain(ret).name})"


def _hover(trace: Any, g: _Group, lane_names: list[str]) -> list[str]:
    """Hover text for each item of a group (SVG mode, so at most a few thousand)."""
    out: list[str] = []
    calls, tasks = trace.calls, trace.tasks
    for j, i in enumerate(g.ids.tolist()):
        dur = int(g.end[j] - g.start[j])
        if g.role == "call":
            unfinished = " (unfinished)" if int(calls["end_ns"][i]) < 0 else ""
            out.append(f"{_call_text(trace, i)}<br>duration {human_ns(dur)}{unfinished}"
                       f"<br>{_ret_text(int(calls['ret'][i]))} · call {i}")
        elif g.role == "task":
            c = int(tasks["call"][i])
            text = (f"<b>{html.escape(g.name)}</b> task {i} on "
                    f"{html.escape(lane_names[int(g.lane[j])])}<br>{_call_text(trace, c)}")
            b = int(g.nbytes[j])
            parts = [f"duration {human_ns(dur)}"]
            if b:
                parts.insert(0, f"{b:,} bytes")
                if g.kind in COPY_KINDS and dur > 0:
                    parts.append(f"{b / dur:.2f} GB/s")
            queued = int(g.start[j]) - int(tasks["submit_ns"][i])
            out.append(f"{text}<br>{' · '.join(parts)}<br>queued {human_ns(queued)}")
        elif g.role == "sync":
            syncs = trace.syncs
            kind = SYNC_KINDS[int(syncs["kind"][i])] if 0 <= int(syncs["kind"][i]) < len(
                SYNC_KINDS) else "?"
            target = int(syncs["target"][i])
            what = f"{kind} sync"
            if kind in ("stream", "event") and 0 <= target < trace.objects.rows:
                what += f" on {trace.string(int(trace.objects['label'][target]))}"
            out.append(f"<b>waiting</b> ({html.escape(what)}) for {human_ns(dur)}"
                       f"<br>{_call_text(trace, int(syncs['call'][i]))}")
        elif g.role == "callback":
            t = int(trace.callbacks["task"][i])
            c = int(tasks["call"][t]) if 0 <= t < tasks.rows else -1
            out.append(f"<b>callback</b> of task {t}, ran for {human_ns(dur)}"
                       f"<br>launched by {_call_text(trace, c)}")
        else:  # engine
            out.append(f"<b>{html.escape(g.name)}</b> busy for {human_ns(dur)}"
                       f"<br>{i} task(s), {int(g.nbytes[j]):,} bytes")
    return out


def _bar(trace: Any, g: _Group, win: _Window, lane_names: list[str]) -> go.Bar:
    """One SVG bar trace: a bar per item, base = start."""
    base = g.start / win.scale
    return go.Bar(
        x=(g.end - g.start) / win.scale, base=base, y=g.lane, orientation="h",
        width=g.width, name=g.name, marker={"color": g.color, "line": {"width": 0}},
        opacity=g.opacity, hovertext=_hover(trace, g, lane_names),
        hovertemplate="%{hovertext}<extra></extra>", customdata=g.ids,
        legendgroup=g.legendgroup or g.name, showlegend=g.showlegend,
        meta={"role": g.role, "kind": g.kind},
        text=[trace.call_name(int(i)) for i in g.ids] if g.role == "call" else None,
        textposition="inside" if g.role == "call" else None,
        insidetextanchor="start" if g.role == "call" else None,
        textfont={"size": 9} if g.role == "call" else None,
        constraintext="inside" if g.role == "call" else None)


# --------------------------------------------------------------------------- WebGL
def _merge(lane: np.ndarray, start: np.ndarray, end: np.ndarray, px: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Sort by (lane, start) and find the runs to merge (see the module docstring).

    Returns the sort order and the index (into the sorted items) of each run's first item.
    """
    order = np.lexsort((start, lane))
    ln, s, e = lane[order], start[order], end[order]
    n = len(order)
    new = np.ones(n, dtype=bool)
    if n > 1:
        small = (e - s) < px
        new[1:] = ((ln[1:] != ln[:-1]) | ~small[1:] | ~small[:-1]
                   | ((s[1:] - e[:-1]) >= px))
    return order, np.nonzero(new)[0]


def _gl_traces(trace: Any, st: PlotStyle, groups: list[_Group], win: _Window
               ) -> tuple[list[Any], int]:
    """WebGL segments for every group, merged at the coarsest pixel that keeps the total
    under ``MAX_GL_SEGMENTS``. Returns the traces and the pixel (ns) used."""
    groups = _split_calls(trace, st, groups)
    px = max((win.hi - win.lo) // max(st.lod_pixels, 1), 1)
    while True:
        merged = [_merge(g.lane, g.start, g.end, px) for g in groups]
        total = sum(len(first) for _, first in merged)
        if total <= MAX_GL_SEGMENTS or px > (win.hi - win.lo):
            break
        px *= 2
    out = [_scattergl(st, g, order, first, win)
           for g, (order, first) in zip(groups, merged, strict=True)]
    return out, px


def _split_calls(trace: Any, st: PlotStyle, groups: list[_Group]) -> list[_Group]:
    """In WebGL mode, calls get one trace per call name (the hover shows the trace name)."""
    out: list[_Group] = []
    for g in groups:
        if g.role != "call":
            out.append(g)
            continue
        names = trace.calls["name"][g.ids]
        uniq, counts = np.unique(names, return_counts=True)
        top = uniq[np.argsort(-counts, kind="stable")][:MAX_GL_CALL_NAMES]
        rets = g.rets if g.rets is not None else np.zeros(len(g.ids), dtype=np.int64)
        parts = [(trace.string(int(sid)), names == sid)
                 for sid in sorted(top.tolist(), key=lambda x: trace.string(int(x)))]
        rest = ~np.isin(names, top)
        if rest.any():
            parts.append(("other calls", rest))
        for k, (name, m) in enumerate(parts):
            # One legend entry ("API calls") toggles every per-name trace.
            out.append(_Group(name, "call", "", g.color, g.width, g.lane[m], g.start[m],
                              g.end[m], g.ids[m], g.nbytes[m], legendgroup="calls",
                              showlegend=k == 0, legend_name="API calls" if k == 0 else "",
                              rets=rets[m]))
    return out


def _scattergl(st: PlotStyle, g: _Group, order: np.ndarray, first: np.ndarray,
               win: _Window) -> go.Scattergl:
    """Thick line segments (x: start, end, NaN) with per-segment customdata."""
    s, e, ln = g.start[order], g.end[order], g.lane[order]
    n = len(first)
    seg_start = s[first]
    seg_end = np.maximum.reduceat(e, first) if n else s[:0]
    count = np.diff(np.append(first, len(order)))
    busy = np.add.reduceat(e - s, first) if n else s[:0]
    nbytes = np.add.reduceat(g.nbytes[order], first) if n else s[:0]
    first_id = g.ids[order][first]
    if g.role == "call" and n:
        rets = g.rets if g.rets is not None else np.zeros(len(g.ids), dtype=np.int64)
        extra = np.add.reduceat((rets[order] != 0).astype(np.float64), first)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            extra = np.where(busy > 0, nbytes / np.maximum(busy, 1), 0.0)
    xs = seg_start / win.scale
    xe = seg_end / win.scale
    biggest = float(max(np.abs(xs).max(initial=0.0), np.abs(xe).max(initial=0.0)))
    span = (win.hi - win.lo) / win.scale
    ftype = np.float32 if biggest < span * 1000 else np.float64
    x = np.full(3 * n, np.nan, dtype=ftype)
    x[0::3] = xs
    x[1::3] = xe
    ytype = np.int8 if int(ln.max(initial=0)) < 127 else np.int32
    y = np.zeros(3 * n, dtype=ytype)
    y[0::3] = ln[first]
    y[1::3] = ln[first]
    y[2::3] = ln[first]
    cols = np.stack([first_id.astype(np.float64), count.astype(np.float64), xs, xe,
                     busy / win.scale, nbytes.astype(np.float64), extra], axis=1)
    cd = np.repeat(cols.astype(np.float32), 3, axis=0)
    u = win.unit
    if g.role == "call":
        detail = "%{customdata[6]:.0f} failed (ret != 0)"
        what = "call"
    elif g.role == "engine":
        detail = "%{customdata[5]:,.0f} bytes"
        what = "busy interval"
    elif g.role in ("sync", "callback"):
        detail = ""
        what = "wait" if g.role == "sync" else "callback"
    else:
        what = "task"
        detail = "%{customdata[5]:,.0f} bytes"
        if g.kind in COPY_KINDS:
            detail += " · %{customdata[6]:.2f} GB/s"
    template = (f"<b>{html.escape(g.name)}</b> {what} #%{{customdata[0]:.0f}}"
                f" (%{{customdata[1]:.0f}} merged)<br>%{{customdata[2]:.3f}} – "
                f"%{{customdata[3]:.3f}} {u}, busy %{{customdata[4]:.3f}} {u}"
                + (f"<br>{detail}" if detail else "") + "<extra></extra>")
    return go.Scattergl(
        x=x, y=y, mode="lines", name=g.legend_name or g.name,
        line={"color": g.color, "width": max(int(st.lane_px * g.width), 1)},
        opacity=g.opacity, customdata=cd, hovertemplate=template,
        legendgroup=g.legendgroup or g.name, showlegend=g.showlegend,
        meta={"role": g.role, "kind": g.kind, "call_name": g.name if g.role == "call" else "",
              "segments": int(n), "items": len(order)})


# --------------------------------------------------------------------------- flows, markers
def _segments(x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, y1: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    n = len(x0)
    x = np.full(3 * n, np.nan)
    y = np.full(3 * n, np.nan)
    x[0::3], x[1::3] = x0, x1
    y[0::3], y[1::3] = y0, y1
    return x, y


def _arrow_trace(name: str, role: str, color: str, dash: str, x: np.ndarray, y: np.ndarray,
                 cd: np.ndarray, hover: list[str] | None) -> go.Scatter:
    n = len(x) // 3
    sizes = np.tile(np.array([0, 9, 0], dtype=np.int8), n)
    return go.Scatter(
        x=x, y=y, mode="lines+markers", name=name,
        line={"color": color, "width": 1.2, "dash": dash},
        marker={"symbol": "arrow", "angleref": "previous", "size": sizes, "color": color},
        customdata=cd, hovertext=hover, hoverinfo="text" if hover else "skip",
        meta={"role": role})


def _flows(trace: Any, st: PlotStyle, win: _Window, thread_lane: np.ndarray,
           task_lanes: np.ndarray, budget: int) -> tuple[list[Any], int]:
    """Record -> wait and call -> task arrows (see the module docstring for the limits)."""
    tasks, calls = trace.tasks, trace.calls
    out: list[Any] = []
    dropped = 0
    if not tasks.rows:
        return out, dropped
    s, e = tasks["start_ns"].astype(np.int64), tasks["end_ns"].astype(np.int64)
    ran = (s >= 0) & (e >= 0) & (task_lanes >= 0)

    def inside(t: np.ndarray) -> np.ndarray:
        return (t >= win.lo) & (t <= win.hi)

    edges = trace.edges
    if edges.rows:
        r, w = edges["record"].astype(np.int64), edges["wait"].astype(np.int64)
        ok = (r >= 0) & (w >= 0)
        r, w = r[ok], w[ok]
        m = ran[r] & ran[w] & inside(e[r]) & inside(e[w])
        r, w = r[m], w[m]
        if len(r) > budget:
            dropped += len(r)
        elif len(r):
            budget -= len(r)
            x, y = _segments(e[r] / win.scale, task_lanes[r], e[w] / win.scale, task_lanes[w])
            cd = np.full((3 * len(r), 2), -1, dtype=np.int64)
            cd[0::3, 0] = cd[1::3, 0] = r
            cd[0::3, 1] = cd[1::3, 1] = w
            hover = []
            for a, b in zip(r.tolist(), w.tolist(), strict=True):
                text = f"event record (task {a}) → wait (task {b})"
                hover.extend([text, text, ""])
            out.append(_arrow_trace("event record → wait", "edge", st.edge_color, "solid",
                                    x, y, cd, hover))
    c = tasks["call"].astype(np.int64)
    sub = tasks["submit_ns"].astype(np.int64)
    has_call = c >= 0
    clane = np.full(tasks.rows, -1, dtype=np.int64)
    if has_call.any():
        clane[has_call] = thread_lane[np.clip(calls["thread"][c[has_call]], 0,
                                              len(thread_lane) - 1)]
    m = ran & has_call & (clane >= 0) & (sub >= 0) & inside(sub) & inside(s)
    ids = np.nonzero(m)[0]
    if len(ids) > budget:
        dropped += len(ids)
    elif len(ids):
        x, y = _segments(sub[ids] / win.scale, clane[ids], s[ids] / win.scale, task_lanes[ids])
        cd = np.full((3 * len(ids), 2), -1, dtype=np.int64)
        cd[0::3, 0] = cd[1::3, 0] = c[ids]
        cd[0::3, 1] = cd[1::3, 1] = ids
        out.append(_arrow_trace("call → task", "flow", st.flow_color, "dot", x, y, cd, None))
    return out, dropped


def _never_ran(trace: Any, st: PlotStyle, win: _Window, task_lanes: np.ndarray) -> list[Any]:
    """Open circles at the submit time of tasks that never ran (start -1)."""
    tasks = trace.tasks
    if not tasks.rows:
        return []
    sub = tasks["submit_ns"].astype(np.int64)
    m = ((tasks["start_ns"] < 0) & (task_lanes >= 0) & (sub >= win.lo) & (sub <= win.hi))
    ids = np.nonzero(m)[0][:MAX_NEVER_RAN]
    if not len(ids):
        return []
    kinds = [TASK_KINDS[int(k)] if 0 <= int(k) < len(TASK_KINDS) else "?"
             for k in tasks["kind"][ids]]
    hover = [f"<b>{html.escape(st.kind_labels.get(k, k))}</b> task {i} never ran<br>"
             f"submitted at {human_ns(int(sub[i]))}<br>{_call_text(trace, int(tasks['call'][i]))}"
             for i, k in zip(ids.tolist(), kinds, strict=True)]
    return [go.Scatter(x=sub[ids] / win.scale, y=task_lanes[ids], mode="markers",
                       name="never ran",
                       marker={"symbol": "circle-open", "size": 10, "line": {"width": 2},
                               "color": [st.kind_color(k) for k in kinds]},
                       hovertext=hover, hoverinfo="text", customdata=ids,
                       meta={"role": "never_ran"})]


def _first_sentence(message: str) -> str:
    line = message.strip().split("\n", 1)[0]
    m = _SENTENCE_END.search(line)
    return line[: m.end()] if m else line


#: A finding involving thousands of calls (a leak in a loop) is marked at its first ones only.
MAX_MARKS_PER_FINDING = 20


def _finding_markers(trace: Any, st: PlotStyle, win: _Window, findings: Sequence[Any],
                     thread_lane: np.ndarray, task_lanes: np.ndarray) -> list[Any]:
    """One marker trace per severity: a marker at each involved call / task (at most
    ``MAX_MARKS_PER_FINDING`` of each per finding)."""
    calls, tasks = trace.calls, trace.tasks
    points: dict[str, list[tuple[float, int, int, str]]] = {}
    involved: list[tuple[float, int, int, str]] = []
    for fi, f in enumerate(findings):
        text = (f"<b>{html.escape(f.severity)}: {html.escape(f.kind)}</b><br>"
                f"{html.escape(_first_sentence(f.message))}")
        if f.file:
            text += f"<br>{html.escape(format_site(f.file, f.line))}"
        pts = points.setdefault(f.severity, [])
        own = _finding_own_calls(trace, f)
        at = min(own) if own else -1
        if 0 <= at < calls.rows:  # the C name beside the pyACL name, as in the text
            api = trace.call_name(at)
            if c_name(api) != api:
                text += f"<br>{html.escape(api)} / <i>{html.escape(c_name(api))}</i>"
        for c in f.calls[:MAX_MARKS_PER_FINDING]:
            if not 0 <= c < calls.rows:
                continue
            t = int(calls["start_ns"][c])
            lane = int(thread_lane[min(max(int(calls["thread"][c]), 0), len(thread_lane) - 1)])
            if lane >= 0 and win.lo <= t <= win.hi:
                if c in own:
                    pts.append((t / win.scale, lane, fi, text))
                else:
                    involved.append((t / win.scale, lane, fi, "<i>involved in</i> " + text))
        for t_id in tuple(f.ids.get("tasks", ()))[:MAX_MARKS_PER_FINDING]:
            if not 0 <= t_id < tasks.rows:
                continue
            t = int(tasks["start_ns"][t_id])
            if t < 0:
                t = int(tasks["submit_ns"][t_id])
            lane = int(task_lanes[t_id])
            if lane >= 0 and win.lo <= t <= win.hi:
                pts.append((t / win.scale, lane, fi, text))
    out: list[Any] = []
    for sev, pts in points.items():
        if not pts:
            continue
        out.append(go.Scatter(
            x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers",
            name=f"finding: {sev}",
            marker={"symbol": "diamond", "size": 13, "color": st.severity_color(sev),
                    "line": {"color": "white", "width": 1.5}},
            customdata=[p[2] for p in pts], hovertext=[p[3] for p in pts],
            hoverinfo="text", meta={"role": "finding", "severity": sev}))
    if involved:
        # calls a finding names for context (the create_context of a context_not_set, ...):
        # a hollow grey diamond, so the severity colour marks only the calls at fault
        out.append(go.Scatter(
            x=[p[0] for p in involved], y=[p[1] for p in involved], mode="markers",
            name="finding: involved call",
            marker={"symbol": "diamond-open", "size": 11, "color": st.involved_color,
                    "line": {"width": 1.5}},
            customdata=[p[2] for p in involved], hovertext=[p[3] for p in involved],
            hoverinfo="text", meta={"role": "finding_involved"}))
    return out


def _finding_own_calls(trace: Any, f: Any) -> set[int]:
    """The calls a finding's severity marker belongs on: those at its site, those that
    failed, and those that queued one of its tasks; its other calls are context."""
    calls = trace.calls
    site = (f.file, f.line)
    tasks = trace.tasks
    queued = {int(tasks["call"][k]) for k in f.ids.get("tasks", ()) if 0 <= k < tasks.rows}
    own = {c for c in f.calls if 0 <= c < calls.rows and (
        c in queued or int(calls["ret"][c]) != 0 or trace.call_site(c) == site)}
    return own or set(f.calls[:1])


# --------------------------------------------------------------------------- layout
def _layout(trace: Any, st: PlotStyle, win: _Window, lanes: list[_Lane], svg: bool,
            pixel_ns: int, dropped: int, items: int) -> go.Layout:
    n = len(lanes)
    shapes = []
    for i in range(1, n):
        if lanes[i].group != lanes[i - 1].group or lanes[i].device != lanes[i - 1].device:
            shapes.append({"type": "line", "xref": "paper", "x0": 0, "x1": 1, "yref": "y",
                           "y0": i - 0.5, "y1": i - 0.5,
                           "line": {"color": "#999999", "width": 1}})
    mode = "svg" if svg else "webgl"
    title = f"timeline · {items:,} items · {mode}"
    if dropped:
        title += f" · {dropped:,} flow arrows not drawn"
    return go.Layout(
        template=st.layout_template(), barmode="overlay",
        title={"text": title, "font": {"size": 14}},
        height=max(380, st.lane_px * n + 140), hovermode="closest",
        xaxis={"title": {"text": f"time ({win.unit})"},
               "range": [win.lo / win.scale, win.hi / win.scale], "zeroline": False},
        yaxis={"tickmode": "array", "tickvals": list(range(n)),
               "ticktext": [ln.name for ln in lanes], "range": [n - 0.5, -0.5],
               "showgrid": False, "zeroline": False, "automargin": True},
        legend={"groupclick": "togglegroup"}, shapes=shapes,
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
        meta={"lanes": [ln.name for ln in lanes], "lane_groups": [ln.group for ln in lanes],
              "unit": win.unit, "ns_per_unit": win.scale, "mode": mode,
              "window_ns": [win.lo, win.hi], "pixel_ns": pixel_ns, "flows_dropped": dropped,
              "items": items, "profile": str(trace.meta.get("profile", ""))})
