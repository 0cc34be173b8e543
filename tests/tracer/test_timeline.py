"""The timeline view: lanes, bars per kind, colours, arrows, hover, filters, findings, LOD.

Assertions are on ``fig.data`` and ``fig.layout`` (never pixels). The small trace comes from a
real program (two streams, copies of every direction, an event record/wait, a callback with a
report thread, an op, syncs); the big one is synthetic (``Trace.from_columns``).
"""

from __future__ import annotations

import dataclasses
import html
import re
import sys
import threading
from collections.abc import Iterator
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

import acl_lab
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import Finding
from acl_lab.tracer.schema import TASK_KINDS
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.style import PlotStyle
from acl_lab.tracer.views.timeline import MAX_GL_FLOWS, stream_names, timeline
from benchmarks.bench_views_timeline import synthetic_trace
from tests.acl.test_op import make_attr, prepare
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

N = 1 << 16
LINES: dict[str, int] = {}



def mark(name: str) -> None:
    """Remember the caller's next line as ``LINES[name]`` (the call about to be made)."""
    LINES[name] = sys._getframe(1).f_lineno + 1


def program(acl: ModuleType) -> dict[str, int]:
    """Two streams with H2D/D2H/D2D copies, record/wait, an Add op, a callback, syncs.

    Returns the stream handles by name.
    """
    subscribed, stop = threading.Event(), threading.Event()

    def report_loop() -> None:
        subscribed.wait(10)
        while not stop.is_set():
            acl.rt.process_report(5)  # a short poll: the run stays under 10 ms

    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    event = ok(acl.rt.create_event())
    host, host_out = ok(acl.rt.malloc_host(N)), ok(acl.rt.malloc_host(N))
    dev_a = ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    dev_b = ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memset(host, N, 7, N) == ACL_SUCCESS
    assert acl.rt.memcpy(dev_a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    assert acl.rt.memcpy_async(dev_b, N, dev_a, N, ACL_MEMCPY_DEVICE_TO_DEVICE,
                               s1) == ACL_SUCCESS
    assert acl.rt.record_event(event, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    mark("d2h")
    assert acl.rt.memcpy_async(host_out, N, dev_b, N, ACL_MEMCPY_DEVICE_TO_HOST,
                               s2) == ACL_SUCCESS
    assert acl.rt.memcpy_async(dev_a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1) == ACL_SUCCESS
    args = prepare(acl, [np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)],
                   [((2, 3), np.float32)])
    assert acl.op.execute_v2("Add", args.in_descs, args.in_bufs, args.out_descs, args.out_bufs,
                             make_attr(acl, None), s1) == ACL_SUCCESS
    worker = threading.Thread(target=report_loop, name="report")
    worker.start()
    try:
        assert worker.ident is not None
        assert acl.rt.subscribe_report(worker.ident, s2) == ACL_SUCCESS
        subscribed.set()
        assert acl.rt.launch_callback(lambda _: None, None, ACL_CALLBACK_BLOCK,
                                      s2) == ACL_SUCCESS
        mark("sync")
        assert acl.rt.synchronize_stream(s2) == ACL_SUCCESS
        assert acl.rt.synchronize_stream(s1) == ACL_SUCCESS
        assert acl.rt.unsubscribe_report(worker.ident, s2) == ACL_SUCCESS
    finally:
        stop.set()
        subscribed.set()
        worker.join(60)
    for p in (dev_a, dev_b):
        assert acl.rt.free(p) == ACL_SUCCESS
    for p in (host, host_out):
        assert acl.rt.free_host(p) == ACL_SUCCESS
    assert acl.rt.destroy_event(event) == ACL_SUCCESS
    return {"s1": s1, "s2": s2}


@pytest.fixture(scope="module")
def small() -> tuple[Trace, dict[str, int]]:
    """The trace of ``program`` and its stream handles."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            handles = program(acl)
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    return trace, handles


@pytest.fixture(scope="module")
def big() -> Trace:
    """A synthetic 200,000-task trace."""
    return synthetic_trace(200_000)


def lanes(fig: go.Figure) -> list[str]:
    """The y-axis lane names, top to bottom."""
    return list(fig.layout.yaxis.ticktext)


def by_role(fig: go.Figure, role: str) -> list[Any]:
    """The traces of ``fig`` whose meta role is ``role``."""
    return [d for d in fig.data if (d.meta or {}).get("role") == role]


def task_trace(fig: go.Figure, kind: str) -> Any:
    """The one trace drawing tasks of ``kind``."""
    (d,) = [d for d in by_role(fig, "task") if d.meta["kind"] == kind]
    return d


def stream_label(trace: Trace, handle: int) -> str:
    """The lane name of the stream with ``handle``."""
    (row,) = np.nonzero(trace.objects["handle"] == handle)[0]
    return stream_names(trace)[int(row)]


def ran(trace: Trace) -> np.ndarray:
    """Mask of the tasks that ran."""
    return (trace.tasks["start_ns"] >= 0) & (trace.tasks["end_ns"] >= 0)


def snapshot(trace: Trace) -> dict[tuple[str, str], np.ndarray]:
    """A copy of every column of every table."""
    return {(t, c): np.array(trace.tables[t][c], copy=True)
            for t in trace.tables for c in trace.tables[t]}


# ----------------------------------------------------------------------------- lanes
def test_lanes_have_each_thread_and_stream(small: tuple[Trace, dict[str, int]]) -> None:
    """Host threads first, then the streams' labels and the sync-copy lane."""
    trace, handles = small
    fig = timeline(trace)
    names = lanes(fig)
    assert names[:2] == ["thread 0 (MainThread)", "thread 1 (report)"]
    for h in handles.values():
        assert stream_label(trace, h) in names
    assert "sync tasks (thread 0)" in names
    assert names.index("sync tasks (thread 0)") > names.index(stream_label(trace, handles["s2"]))
    assert fig.layout.meta["lanes"] == names
    assert list(fig.layout.yaxis.tickvals) == list(range(len(names)))


def test_stream_lanes_named_by_creating_thread_and_line_in_creation_order() -> None:
    """Three workers each create a stream, started last-first: the lanes say whose stream
    it is and where it was made (not a handle), in creation order, worker-1 first."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            ctx = ok(acl.rt.create_context(0))
            line = sys._getframe().f_lineno + 4

            def work() -> None:
                assert acl.rt.set_context(ctx) == ACL_SUCCESS
                st = ok(acl.rt.create_stream())
                assert acl.rt.memset_async(dev, 64, 0, 64, st) == ACL_SUCCESS
                assert acl.rt.synchronize_stream(st) == ACL_SUCCESS

            dev = ok(acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
            workers = [threading.Thread(target=work, name=f"worker-{k}") for k in (1, 2, 3)]
            for w in workers:
                w.start()
                w.join()
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    names = [n for n in lanes(timeline(trace)) if n.startswith("stream")]
    here = f"{__file__.rsplit('/', 1)[-1]}:{line}"
    assert names == [f"stream · worker-{k} · {here}" for k in (1, 2, 3)]
    assert not any("0x" in n for n in names)


def test_bars_per_kind_equal_tasks_per_kind(small: tuple[Trace, dict[str, int]]) -> None:
    """SVG mode: one go.Bar per kind with one bar per task of that kind that ran."""
    trace, _ = small
    fig = timeline(trace)
    assert fig.layout.meta["mode"] == "svg"
    kinds = trace.tasks["kind"][ran(trace)]
    present = {TASK_KINDS[int(k)] for k in kinds}
    assert {"H2D", "D2H", "D2D", "event_record", "event_wait", "kernel", "callback"} <= present
    for kind in present:
        d = task_trace(fig, kind)
        assert isinstance(d, go.Bar) and d.orientation == "h"
        assert len(d.y) == int(np.count_nonzero(kinds == TASK_KINDS.index(kind)))
        assert sorted(d.customdata) == sorted(
            np.nonzero(ran(trace) & (trace.tasks["kind"] == TASK_KINDS.index(kind)))[0])


def test_bar_geometry_is_base_start_and_duration(small: tuple[Trace, dict[str, int]]) -> None:
    """base = start and x = duration, in the axis unit (µs for a short trace)."""
    trace, _ = small
    fig = timeline(trace)
    assert fig.layout.meta["unit"] == "µs" and "µs" in fig.layout.xaxis.title.text
    d = task_trace(fig, "D2D")
    t = int(d.customdata[0])
    assert d.base[0] == pytest.approx(trace.tasks["start_ns"][t] / 1e3)
    assert d.x[0] == pytest.approx((trace.tasks["end_ns"][t] - trace.tasks["start_ns"][t]) / 1e3)


def test_colours_by_kind_come_from_plot_style(small: tuple[Trace, dict[str, int]]) -> None:
    """Each kind's bars use PlotStyle's colour; a replaced style changes them."""
    trace, _ = small
    st = PlotStyle()
    for d in by_role(timeline(trace), "task"):
        assert d.marker.color == st.kind_color(d.meta["kind"])
    custom = dataclasses.replace(st, kind_colors=MappingProxyType(
        {**st.kind_colors, "H2D": "#123456"}))
    assert task_trace(timeline(trace, style=custom), "H2D").marker.color == "#123456"


def test_plot_style_is_immutable() -> None:
    """Frozen dataclass with read-only mappings; state and severity colours are there."""
    st = PlotStyle()
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.call_color = "red"  # type: ignore[misc]
    with pytest.raises(TypeError):
        st.kind_colors["H2D"] = "red"  # type: ignore[index]
    assert {st.state_color(s) for s in ("live", "freed", "leaked")} == {
        st.state_colors["live"], st.state_colors["freed"], st.state_colors["leaked"]}
    assert len({st.severity_color(s) for s in ("error", "warning", "info")}) == 3
    assert set(TASK_KINDS) <= set(st.kind_colors)
    assert st.unit_for(1_000) == ("µs", 1_000) and st.unit_for(50_000_000) == ("ms", 1_000_000)


# ----------------------------------------------------------------------------- arrows
def test_arrow_from_record_to_wait(small: tuple[Trace, dict[str, int]]) -> None:
    """The edge trace joins the record task's end to the wait task's end, lane to lane."""
    trace, _ = small
    fig = timeline(trace)
    (edge,) = by_role(fig, "edge")
    r, w = int(trace.edges["record"][0]), int(trace.edges["wait"][0])
    assert [list(p) for p in edge.customdata[:2]] == [[r, w], [r, w]]
    names = lanes(fig)
    rec, wait = task_trace(fig, "event_record"), task_trace(fig, "event_wait")
    assert edge.x[0] == pytest.approx(trace.tasks["end_ns"][r] / 1e3)
    assert edge.x[1] == pytest.approx(trace.tasks["end_ns"][w] / 1e3)
    assert np.isnan(edge.x[2])
    assert (edge.y[0], edge.y[1]) == (rec.y[0], wait.y[0])
    assert names[int(rec.y[0])] != names[int(wait.y[0])]
    assert edge.marker.symbol == "arrow"


def test_arrow_from_each_call_to_its_task(small: tuple[Trace, dict[str, int]]) -> None:
    """Call -> task flows start at the submit time on the calling thread's lane."""
    trace, _ = small
    fig = timeline(trace)
    (flow,) = by_role(fig, "flow")
    pairs = {(int(a), int(b)) for a, b in flow.customdata[0::3]}
    t = trace.tasks
    expected = {(int(t["call"][i]), i) for i in np.nonzero(ran(trace))[0]}
    assert pairs == expected
    i = int(flow.customdata[0][1])
    assert flow.x[0] == pytest.approx(t["submit_ns"][i] / 1e3)
    assert flow.x[1] == pytest.approx(t["start_ns"][i] / 1e3)


# ----------------------------------------------------------------------------- hover
def test_copy_hover_has_site_bytes_and_bandwidth(small: tuple[Trace, dict[str, int]]) -> None:
    """The D2H copy's hover: call with arguments, file:line, bytes, duration, GB/s."""
    trace, _ = small
    d = task_trace(timeline(trace), "D2H")
    text = d.hovertext[0]
    t = int(d.customdata[0])
    dur = int(trace.tasks["end_ns"][t] - trace.tasks["start_ns"][t])
    assert f"{__file__}:{LINES['d2h']}" in text
    assert "acl.rt.memcpy_async</b>(" in text
    assert f"{N:,} bytes" in text
    assert f"{N / dur:.2f} GB/s" in text
    assert "µs" in text


def test_call_hover_and_sync_wait_and_callbacks(small: tuple[Trace, dict[str, int]]) -> None:
    """Calls hover with site and ret; waits are shaded on the waiting thread; the callback
    runs on the report thread's lane."""
    trace, _ = small
    fig = timeline(trace)
    (calls,) = by_role(fig, "call")
    assert len(calls.y) == trace.calls.rows
    assert all("ret " in h and (".py:" in h or "&lt;exit&gt;" in h) for h in calls.hovertext)
    # the C name stands beside the pyACL name (the name in the CANN documentation)
    malloc = int(trace.calls_named("acl.rt.malloc")[0])
    assert "<b>acl.rt.malloc</b>" in calls.hovertext[malloc]
    assert "<i>aclrtMalloc</i>" in calls.hovertext[malloc]
    assert list(calls.text[:2]) == ["acl.init", "acl.rt.set_device"]
    (syncs,) = by_role(fig, "sync")
    sync_sites = [h for h in syncs.hovertext if f"{__file__}:{LINES['sync']}" in h]
    assert sync_sites and "waiting" in sync_sites[0]
    (cbs,) = by_role(fig, "callback")
    assert len(cbs.y) == trace.callbacks.rows
    assert {lanes(fig)[int(y)] for y in cbs.y} == {"thread 1 (report)"}


def test_engine_lanes(small: tuple[Trace, dict[str, int]]) -> None:
    """engines=True adds copy-engine and AI-core lanes after the streams."""
    trace, _ = small
    fig = timeline(trace, engines=True)
    names = lanes(fig)
    for lane in ("copy engine H2D", "copy engine D2H", "copy engine D2D", "AI core"):
        assert any(lane in n for n in names), names
    assert "engines" in fig.layout.meta["lane_groups"]
    assert not any("engine" in n for n in lanes(timeline(trace)))


# ----------------------------------------------------------------------------- filters
def test_time_window_drops_tasks_outside(small: tuple[Trace, dict[str, int]]) -> None:
    """Only tasks overlapping [start_ns, end_ns] are drawn; the x range is the window."""
    trace, _ = small
    t = trace.tasks
    lo = int(t["start_ns"][t["kind"] == TASK_KINDS.index("event_wait")][0])
    hi = lo + 3_000
    fig = timeline(trace, start_ns=lo, end_ns=hi)
    drawn = {int(i) for d in by_role(fig, "task") for i in d.customdata}
    inside = {int(i) for i in np.nonzero(ran(trace) & (t["end_ns"] >= lo)
                                         & (t["start_ns"] <= hi))[0]}
    assert drawn == inside and len(drawn) < int(ran(trace).sum())
    assert list(fig.layout.xaxis.range) == pytest.approx([lo / 1e3, hi / 1e3])
    assert fig.layout.meta["window_ns"] == [lo, hi]


def test_thread_and_stream_filters_keep_only_those_lanes(
        small: tuple[Trace, dict[str, int]]) -> None:
    """threads= keeps those thread lanes; streams= keeps those stream lanes only."""
    trace, handles = small
    fig = timeline(trace, threads=["report"], streams=[handles["s2"]])
    names = lanes(fig)
    assert names == ["thread 1 (report)", stream_label(trace, handles["s2"])]
    (calls,) = by_role(fig, "call")
    assert set(trace.calls["thread"][np.asarray(calls.customdata)]) == {1}
    for d in by_role(fig, "task"):
        assert set(trace.tasks["stream"][np.asarray(d.customdata)]) == {
            int(np.nonzero(trace.objects["handle"] == handles["s2"])[0][0])}
    both = lanes(timeline(trace, threads=[0], streams=[stream_label(trace, handles["s1"]),
                                                      "sync"]))
    assert both == ["thread 0 (MainThread)", stream_label(trace, handles["s1"]),
                    "sync tasks (thread 0)"]


def test_bad_filters_and_windows_raise(small: tuple[Trace, dict[str, int]]) -> None:
    """Unknown threads / streams and empty windows are ValueErrors."""
    trace, _ = small
    with pytest.raises(ValueError, match="thread"):
        timeline(trace, threads=["nope"])
    with pytest.raises(ValueError, match="stream"):
        timeline(trace, streams=[0xDEAD])
    with pytest.raises(ValueError, match="window"):
        timeline(trace, start_ns=10, end_ns=10)


# ----------------------------------------------------------------------------- findings
@pytest.fixture(scope="module")
def buggy() -> Trace:
    """A race (two streams, no event) and a leak."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            assert acl.rt.set_device(0) == ACL_SUCCESS
            host = ok(acl.rt.malloc_host(4096))
            a, b, c = (ok(acl.rt.malloc(4096, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
            assert acl.rt.memcpy(a, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE) == 0
            s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
            assert acl.rt.memcpy_async(b, 4096, a, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == 0
            assert acl.rt.memcpy_async(c, 4096, b, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
            assert acl.rt.synchronize_stream(s1) == 0
            assert acl.rt.synchronize_stream(s2) == 0
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    return trace


def test_error_diamond_only_on_the_failing_call() -> None:
    """A stream of context A used while context B is current fails (107003): its
    wrong_context finding also names the calls that created the contexts and the stream;
    they get the hollow 'involved' marker, the severity diamond stays on the failing call."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            assert acl.init() == ACL_SUCCESS
            ctx_a = ok(acl.rt.create_context(0))
            stream = ok(acl.rt.create_stream())
            ctx_b = ok(acl.rt.create_context(0))
            dev = ok(acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
            assert acl.rt.memset_async(dev, 64, 0, 64, stream) == 107003
            trace = s.finish()
            del ctx_a, ctx_b
        finally:
            acl_lab.uninstall()
    (f,) = [f for f in trace.findings() if f.kind == "wrong_context"]
    (failing,) = [int(c) for c in trace.calls_named("acl.rt.memset_async")]
    others = [c for c in f.calls if c != failing]
    assert others, "the finding names the creating calls"
    fig = timeline(trace, findings=[f])
    (own,) = by_role(fig, "finding")
    (inv,) = by_role(fig, "finding_involved")
    scale = fig.layout.meta["ns_per_unit"]
    assert list(own.x) == [pytest.approx(trace.calls["start_ns"][failing] / scale)]
    assert sorted(inv.x) == pytest.approx(sorted(trace.calls["start_ns"][c] / scale
                                                 for c in others))
    assert inv.marker.color == PlotStyle().involved_color != own.marker.color
    assert inv.marker.symbol == "diamond-open"
    # the finding's hover names the failing call by its pyACL and its C name
    assert "acl.rt.memset_async / <i>aclrtMemsetAsync</i>" in own.hovertext[0]


def test_findings_marked_at_their_calls_with_severity_colours(buggy: Trace) -> None:
    """One marker trace per severity; a marker at each involved call's start on its thread
    lane and at each involved task; hover is the first sentence."""
    findings: list[Finding] = buggy.findings()
    race = next(f for f in findings if f.kind == "race")
    assert any(f.kind == "leak" for f in findings)
    fig = timeline(buggy, findings=findings)
    st = PlotStyle()
    markers = by_role(fig, "finding")
    assert {m.meta["severity"] for m in markers} == {f.severity for f in findings
                                                     if f.calls or f.ids.get("tasks")}
    for m in markers:
        assert m.marker.color == st.severity_color(m.meta["severity"])
    (err,) = [m for m in markers if m.meta["severity"] == "error"]
    ri = findings.index(race)
    pts = [(x, y) for x, y, c in zip(err.x, err.y, err.customdata, strict=True) if c == ri]
    names = lanes(fig)
    for cid in race.calls:
        assert (pytest.approx(buggy.calls["start_ns"][cid] / 1e3), 0) in pts
    for tid in race.ids["tasks"]:
        lane = names.index(next(n for n in names if n.startswith("stream")
                                and int(buggy.tasks["stream"][tid]) >= 0
                                and n == stream_names(buggy)[int(buggy.tasks["stream"][tid])]))
        assert (pytest.approx(buggy.tasks["start_ns"][tid] / 1e3), lane) in pts
    hover = err.hovertext[list(err.customdata).index(ri)]
    first = re.split(r"(?<=[.!?])\s", race.message.strip(), maxsplit=1)[0]
    assert html.escape(first) in hover
    assert "Rule:" not in hover and "Fix:" not in hover


# ----------------------------------------------------------------------------- scale
def test_big_trace_switches_to_webgl_with_every_kind(big: Trace) -> None:
    """200k tasks: Scattergl segments (NaN-separated), every kind present, hover data."""
    fig = timeline(big)
    assert fig.layout.meta["mode"] == "webgl"
    assert fig.layout.meta["unit"] == "ms"
    tasks = by_role(fig, "task")
    assert all(isinstance(d, go.Scattergl) for d in tasks)
    assert {d.meta["kind"] for d in tasks} == set(TASK_KINDS)
    assert not [d for d in fig.data if isinstance(d, go.Bar)]
    for d in tasks:
        x = np.asarray(d.x, dtype=np.float64)
        assert len(x) == 3 * d.meta["segments"] and np.isnan(x[2::3]).all()
        assert np.asarray(d.customdata).shape == (len(x), 7)
        assert d.line.color == PlotStyle().kind_color(d.meta["kind"])
    # Every task that ran is accounted for, merged or not.
    kinds = big.tasks["kind"]
    for d in tasks:
        assert d.meta["items"] == int(np.count_nonzero(kinds == TASK_KINDS.index(d.meta["kind"])))
    assert sum(d.meta["segments"] for d in fig.data if d.meta and "segments" in d.meta) <= \
        150_000
    # Thousands of arrows do not fit the WebGL budget: none of that kind is drawn.
    assert fig.layout.meta["flows_dropped"] > MAX_GL_FLOWS
    assert not by_role(fig, "edge") and not by_role(fig, "flow")
    assert "flow arrows not drawn" in fig.layout.title.text


def test_big_trace_window_goes_back_to_svg(big: Trace) -> None:
    """A narrow window of the big trace has few items and is drawn with SVG bars."""
    lo = int(big.tasks["start_ns"][100_000])
    fig = timeline(big, start_ns=lo, end_ns=lo + 50_000)
    assert fig.layout.meta["mode"] == "svg"
    assert by_role(fig, "task") and all(isinstance(d, go.Bar) for d in by_role(fig, "task"))


def test_max_svg_tasks_sets_the_switch(small: tuple[Trace, dict[str, int]]) -> None:
    """max_svg_tasks below the item count gives WebGL even for a small trace."""
    trace, _ = small
    fig = timeline(trace, max_svg_tasks=5)
    assert fig.layout.meta["mode"] == "webgl"
    d = task_trace(fig, "D2H")
    assert isinstance(d, go.Scattergl) and "GB/s" in d.hovertemplate
    assert len(by_role(fig, "edge")) == 1 and len(by_role(fig, "flow")) == 1  # within budget
    assert lanes(fig) == lanes(timeline(trace))


# ----------------------------------------------------------------------------- purity
@pytest.fixture
def no_show(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail if anything calls Figure.show()."""
    def boom(*_: Any, **__: Any) -> None:
        raise AssertionError("timeline called show()")
    monkeypatch.setattr(go.Figure, "show", boom)
    yield


@pytest.mark.usefixtures("no_show")
def test_trace_is_not_changed(small: tuple[Trace, dict[str, int]], big: Trace) -> None:
    """Every column of both traces is identical after drawing (and nothing is shown)."""
    trace, handles = small
    for tr, kwargs in ((trace, {"engines": True, "findings": trace.findings()}),
                       (trace, {"streams": [handles["s1"]], "start_ns": 1000}),
                       (big, {"engines": True})):
        before = snapshot(tr)
        strings, meta = tr.strings, dict(tr.meta)
        timeline(tr, **kwargs)
        after = snapshot(tr)
        assert before.keys() == after.keys()
        for key, arr in before.items():
            np.testing.assert_array_equal(arr, after[key], err_msg=str(key))
        assert tr.strings == strings and tr.meta == meta


def test_empty_trace_gives_an_empty_figure() -> None:
    """A trace with no rows still gives a figure (no lanes, no traces)."""
    fig = timeline(Trace.from_columns([], {}, {}))
    assert lanes(fig) == [] and len(fig.data) == 0
