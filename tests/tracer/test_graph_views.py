"""wait_graph (deadlocks), race_view (races) and overlap_figure, asserted on fig.data/layout."""

from __future__ import annotations

import html
import os
import re
from types import ModuleType

import plotly.graph_objects as go
import pytest

import acl_lab
from acl_lab import DeadlockError
from acl_lab.constants import (
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.analysis import overlap_summary
from acl_lab.tracer.checks.ordering import deadlocks, races
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.graphs import (
    RACE_LINE_FACTOR,
    RACE_NOTE_GAP_PX,
    RACE_PLOT_PX,
    race_view,
    wait_graph,
)
from acl_lab.tracer.views.overlap import overlap_figure
from acl_lab.tracer.views.style import PlotStyle
from acl_lab.tracer.views.timeline import stream_names
from tests.acl.test_deadlocks import event_cycle
from tests.helpers import ok, snapshot

pytestmark = pytest.mark.timeout(120)

N = 4096
D2D = ACL_MEMCPY_DEVICE_TO_DEVICE
RED = PlotStyle().severity_color("error")




def nodes(fig: go.Figure) -> dict[str, str]:
    """Node key -> kind, from the node traces."""
    return {k: d.meta["kind"] for d in fig.data if d.meta and d.meta.get("role") == "nodes"
            for k in d.customdata}


def stream_obj(trace: Trace, handle: int) -> int:
    """The object id of the stream with ``handle``."""
    o = trace.objects
    return next(i for i in range(o.rows) if int(o["kind"][i]) == 1
                and int(o["handle"][i]) == handle)


# ----------------------------------------------------------------------------- wait graph
def test_wait_graph_of_a_reset_event(ready: ModuleType, session: Session) -> None:
    """A wait queued after a reset: thread -> stream -> event -> "never" in red."""
    event = ok(ready.rt.create_event_with_flag(ACL_EVENT_SYNC))
    s1, s2, s3 = (ok(ready.rt.create_stream()) for _ in range(3))
    ready.rt.record_event(event, s1)
    ready.rt.synchronize_stream(s1)
    ready.rt.reset_event(event, s3)
    ready.rt.synchronize_stream(s3)
    ready.rt.stream_wait_event(s2, event)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(s2)
    trace = session.trace()
    (f,) = deadlocks(trace)
    before = snapshot(trace)
    fig = wait_graph(f, trace)
    assert snapshot(trace) == before
    stuck = stream_obj(trace, s2)
    (ev,) = f.ids["events"]
    kinds = nodes(fig)
    assert kinds[f"s{stuck}"] == "stream" and kinds[f"e{ev}"] == "event"
    assert kinds["t0"] == "thread"
    edges = fig.layout.meta["edges"]
    assert ["t0", f"s{stuck}"] in edges and [f"s{stuck}", f"e{ev}"] in edges
    assert fig.layout.meta["highlighted"] == [[f"e{ev}", f"never{ev}"]]
    hot = [d for d in fig.data if d.meta and d.meta.get("role") == "edges"
           and d.meta["highlight"]]
    assert len(hot) == 1 and hot[0].line.color == RED
    assert any(a.arrowcolor == RED for a in fig.layout.annotations)
    hovers = [h for d in fig.data if d.meta and d.meta.get("role") == "edge_hover"
              for h in d.hovertext]
    assert any(f"{__file__}:" in h and "stream_wait_event" in h for h in hovers)
    assert "can never be satisfied" in fig.layout.title.text
    # the stream is named as its timeline lane is (creating thread and line), not by handle
    labels = {k: t for d in fig.data if d.meta and d.meta.get("role") == "nodes"
              for k, t in zip(d.customdata, d.text, strict=True)}
    lanes = acl_lab.timeline(trace).layout.meta["lanes"]
    assert labels[f"s{stuck}"] == stream_names(trace)[stuck]
    assert labels[f"s{stuck}"] in lanes and labels[f"s{stuck}"].startswith(
        "stream · MainThread · " + os.path.basename(__file__) + ":")
    assert f"{s2:#x}" not in labels[f"s{stuck}"]
    assert any(labels[f"s{stuck}"] + " is stuck at stream_wait_event" in h for h in hovers)


def test_wait_graph_of_a_cycle(ready: ModuleType, session: Session) -> None:
    """Two streams waiting on each other's records: the four cycle edges are red."""
    t1, t2 = event_cycle(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(t1)
    trace = session.trace()
    (f,) = deadlocks(trace)
    fig = wait_graph(f, trace)
    s1, s2 = stream_obj(trace, t1), stream_obj(trace, t2)
    hot = {tuple(e) for e in fig.layout.meta["highlighted"]}
    assert len(hot) == 4
    assert {x for e in hot for x in e} == {f"s{s1}", f"s{s2}",
                                           *(f"e{e}" for e in f.ids["events"])}
    assert ("t0", f"s{s1}") not in hot and ["t0", f"s{s1}"] in fig.layout.meta["edges"]
    assert "cycle" in fig.layout.title.text
    # the wait chain under the graph is the finding's text, whole (wrapped, never cut)
    (note,) = [a for a in fig.layout.annotations if a.name == "wait_chain"]
    shown = " ".join(html.unescape(note.text).replace("<br>", " ").split())
    chain = [" ".join(ln.split()) for ln in f.message.splitlines()
             if re.match(r"\s+\d+\.\s", ln)]
    assert chain and max(map(len, chain)) > 160  # longer than the old cut
    assert "[...]" not in shown
    assert shown == " ".join(chain)


def _python_deadlock(acl: ModuleType, locks: bool) -> Trace:
    """A deadlock in the program's own waits, under the host schedule: the main thread joins
    a worker that waits on an Event nobody sets (``locks=False``), or two workers take two
    locks in opposite orders (``locks=True``)."""
    import threading

    import acl_lab

    acl_lab.install()
    try:
        with Session() as s:
            assert acl.init() == 0
            a, b = threading.Lock(), threading.Lock()
            go = threading.Event()

            def take(first: threading.Lock, second: threading.Lock) -> None:
                with first:
                    acl.rt.get_run_mode()
                    with second:
                        pass

            targets = [lambda: take(a, b), lambda: take(b, a)] if locks else [go.wait]
            threads = [threading.Thread(target=t, name=f"w{i}") for i, t in enumerate(targets)]
            for t in threads:
                t.start()
            with pytest.raises(DeadlockError):
                threads[0].join()
            return s.finish()
    finally:
        acl_lab.uninstall()


def test_wait_graph_of_a_join_on_a_thread_waiting_for_an_event(acl: ModuleType) -> None:
    """main -> its join -> the worker -> the Event.wait nobody ends: the last edge is red,
    and the event is named where it was made."""
    trace = _python_deadlock(acl, locks=False)
    (f,) = deadlocks(trace)
    fig = wait_graph(f, trace)
    kinds = nodes(fig)
    edges = [tuple(e) for e in fig.layout.meta["edges"]]
    waits = [k for k, v in kinds.items() if v == "wait"]
    assert [kinds["t0"], kinds["t1"]] == ["thread", "thread"] and len(waits) == 2
    join = next(w for w in waits if "Thread.join" in w)
    event = next(w for w in waits if "Event.wait" in w)
    assert edges == [("t0", join), (join, "t1"), ("t1", event)]
    assert [tuple(e) for e in fig.layout.meta["highlighted"]] == [("t1", event)]
    assert "test_graph_views.py" in event


def test_wait_graph_of_locks_taken_in_opposite_orders(acl: ModuleType) -> None:
    """Two threads each holding the lock the other wants: thread -> acquire -> holder, a
    cycle through both threads and both locks (made on one line: told apart by column), red."""
    trace = _python_deadlock(acl, locks=True)
    (f,) = deadlocks(trace)
    fig = wait_graph(f, trace)
    hot = {tuple(e) for e in fig.layout.meta["highlighted"]}
    acquires = {k for k, v in nodes(fig).items() if v == "wait" and "Lock.acquire" in k}
    assert len(acquires) == 2  # two locks, two nodes
    assert {x for e in hot for x in e} == {"t1", "t2", *acquires}
    assert len(hot) == 4 and "cycle" in fig.layout.title.text


def test_views_refuse_other_findings(ready: ModuleType, session: Session) -> None:
    from acl_lab.tracer.checks import Finding

    f = Finding("leak", "warning", "x")
    with pytest.raises(ValueError, match="deadlock"):
        wait_graph(f, session.trace())
    with pytest.raises(ValueError, match="race"):
        race_view(f, session.trace())


# ----------------------------------------------------------------------------- race view
def test_race_view_of_a_missing_wait(ready: ModuleType, session: Session) -> None:
    """Copy A->B on stream 1, B->C on stream 2, no event: two lanes, one dashed edge."""
    host = ok(ready.rt.malloc_host(N))
    a, b, c = (ok(ready.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
    assert ready.rt.memcpy(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
    ready.rt.synchronize_stream(s1)
    ready.rt.synchronize_stream(s2)
    trace = session.trace()
    (f,) = races(trace)
    before = snapshot(trace)
    fig = race_view(f, trace)
    assert snapshot(trace) == before
    (marks,) = [d for d in fig.data if d.meta and d.meta.get("role") == "accesses"]
    assert len(marks.x) == 2 and len(set(marks.y)) == 2
    here = f"{__file__.rsplit('/', 1)[-1]}:"
    assert all(y.startswith("stream · MainThread · " + here) for y in marks.y)  # not a handle
    assert not any("0x" in y for y in marks.y)
    dashed = [d for d in fig.data if isinstance(d, go.Scatter) and d.line.dash == "dash"]
    assert len(dashed) == 1 and tuple(dashed[0].y) == tuple(marks.y)
    first, second = fig.layout.meta["tasks"]
    scale = fig.layout.meta["time_scale_ns"]
    assert dashed[0].x[0] == pytest.approx(int(trace.tasks["end_ns"][first]) / scale)
    assert dashed[0].x[1] == pytest.approx(int(trace.tasks["start_ns"][second]) / scale)
    assert "Fix:" in fig.layout.meta["fix"]
    assert any("record_event" in (a.text or "") for a in fig.layout.annotations)
    assert "read-after-write" in fig.layout.title.text
    assert any("writes alloc" in h for h in marks.hovertext)
    # named by time and by what they do: B is written (A->B) then read (B->C)
    bars = {d.meta["role"]: d for d in fig.data if d.meta and d.meta.get("role", "").endswith(
        "_bar")}
    assert bars["first_bar"].base[0] <= bars["second_bar"].base[0]
    assert bars["first_bar"].name == "1st in time: the write"
    assert bars["second_bar"].name == "2nd in time: the read"
    assert list(marks.text) == ["1: the write", "2: the read"]
    # the arrowhead sits at the later access, its tail part of the way along the dashed line
    (head,) = [a for a in fig.layout.annotations if a.showarrow]
    assert head.arrowhead and head.x == pytest.approx(dashed[0].x[1])
    x0, x1 = dashed[0].x
    assert min(x0, x1) <= head.ax <= max(x0, x1)
    assert head.y == 1 and 0.5 < head.ay < 1  # lanes are categories 0 and 1: dashes stay
    # the Fix note hangs below the x axis, in pixels: under the tick marks, their labels and
    # the axis title (each line LINE_FACTOR times its font), with a gap, inside the margin
    (note,) = [a for a in fig.layout.annotations if a.name == "fix"]
    assert note.text.startswith("Fix:")
    xa = fig.layout.xaxis
    axis_px = (xa.ticklen + xa.tickfont.size * RACE_LINE_FACTOR + xa.title.standoff
               + xa.title.font.size * RACE_LINE_FACTOR)
    assert xa.ticks == "outside" and xa.title.text.startswith("time (")
    assert (note.yref, note.y, note.yanchor) == ("paper", 0, "top")
    assert -note.yshift >= axis_px + RACE_NOTE_GAP_PX - 1  # rounding of each line
    lines = note.text.count("<br>") + 1
    assert fig.layout.margin.b >= -note.yshift + lines * note.font.size * RACE_LINE_FACTOR
    assert fig.layout.height - fig.layout.margin.t - fig.layout.margin.b == RACE_PLOT_PX


def test_race_view_host_lane(ready: ModuleType, session: Session) -> None:
    """A synchronous D2H read of a buffer a stream may still write: stream lane + host lane."""
    host = ok(ready.rt.malloc_host(N))
    a, b = (ok(ready.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(2))
    assert ready.rt.memcpy(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    s1 = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
    assert ready.rt.memcpy(host, N, b, N, 2) == ACL_SUCCESS
    ready.rt.synchronize_stream(s1)
    (f,) = races(session.trace())
    fig = race_view(f, session.trace())
    (marks,) = [d for d in fig.data if d.meta and d.meta.get("role") == "accesses"]
    assert len(set(marks.y)) == 2 and any(y.startswith("stream · MainThread") for y in marks.y)
    assert any(y.startswith("host: thread 0") for y in marks.y)
    # in time order: the host read (queued second) runs before the stream's write is done
    assert marks.x[0] <= marks.x[1]
    verbs = {d.meta["task"]: d.meta["access"] for d in fig.data
             if d.meta and d.meta.get("role", "").endswith("_bar")}
    tasks = fig.layout.meta["tasks"]
    assert [verbs[k] for k in tasks] == [t.removeprefix("1: ").removeprefix("2: ").split()[-1]
                                         for t in marks.text]
    assert sorted(verbs.values()) == ["read", "write"]


# ----------------------------------------------------------------------------- overlap
def test_overlap_figure(ready: ModuleType, session: Session) -> None:
    host = ok(ready.rt.malloc_host(N))
    a = ok(ready.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    s1 = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
    ready.rt.synchronize_stream(s1)
    trace = session.trace()
    fig = overlap_figure(trace)
    bar = fig.data[0]
    assert list(bar.y[:5]) == ["copy H2D", "copy D2H", "copy D2D", "AI cores", "DVPP"]
    s = overlap_summary(trace)
    assert list(bar.customdata) == [*s.engine_busy_ns.values(), s.overlap_ns, s.busy_ns,
                                    s.span_ns]
    assert "utilisation 100%" in fig.layout.title.text
    # from a summary alone: the same bars, no time row (a summary has no times)
    only = overlap_figure(s)
    assert len(only.data) == 1 and list(only.data[0].x) == list(bar.x)


def test_overlap_over_time_shows_when_copies_hide_behind_compute(
        ready: ModuleType, session: Session) -> None:
    """A long H2D copy on one stream while an Add runs on another: the time row's overlap
    line is busy only where both are, and its total is the summary's overlap."""
    import numpy as np

    from tests.acl.test_op import make_attr, prepare

    big = 4 << 20
    host = ok(ready.rt.malloc_host(big))
    dev = ok(ready.rt.malloc(big, ACL_MEM_MALLOC_NORMAL_ONLY))
    args = prepare(ready, [np.ones((256, 256), np.float32)] * 2, [((256, 256), np.float32)])
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev, big, host, big, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
    assert ready.op.execute_v2("Add", args.in_descs, args.in_bufs, args.out_descs,
                               args.out_bufs, make_attr(ready, None), s2) == ACL_SUCCESS
    ready.rt.synchronize_stream(s1)
    ready.rt.synchronize_stream(s2)
    trace = session.trace()
    s = overlap_summary(trace)
    assert s.overlap_ns > 0
    fig = overlap_figure(trace)
    rows = {d.meta["role"]: d for d in fig.data if d.meta.get("role", "").startswith("over_")}
    assert set(rows) == {"over_time_copy", "over_time_compute", "over_time_overlap"}
    copy, compute, both = (np.asarray(rows[f"over_time_{k}"].y)
                           for k in ("copy", "compute", "overlap"))
    assert rows["over_time_overlap"].meta["busy_ns"] == s.overlap_ns
    assert rows["over_time_copy"].meta["busy_ns"] == s.copy_busy_ns
    assert rows["over_time_compute"].meta["busy_ns"] == s.compute_busy_ns
    assert ((both >= 0) & (both <= np.minimum(copy, compute) + 1e-9)).all()
    assert both.max() > 0 and (both == 0).any()   # overlapping in some buckets, not all
    width = (s.end_ns - s.start_ns) / len(both)
    assert both.sum() * width == pytest.approx(s.overlap_ns, rel=1e-6)
    assert rows["over_time_overlap"].xaxis == "x2"
