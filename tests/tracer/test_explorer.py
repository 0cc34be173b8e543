"""The explorer widget (``acl_lab.explore``), driven from the kernel side (no browser).

The trace comes from a real program with one leak and one race (two streams, no event
between a copy and the copy that reads its output). Widgets are driven as a front end would
drive them (``select.value = i``, ``slider.value = t``, ``button.click()``, click callbacks)
and the assertions are on the FigureWidgets' data, shapes and ``layout.meta`` and on the HTML
panes.
"""

from __future__ import annotations

import html
import json
import linecache
import math
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.callbacks import Points

import acl_lab
from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import Finding
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.widgets import CURSOR, SELECTION, Explorer, explore
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

N = 4096
LINES: dict[str, int] = {}
THIS = str(Path(__file__).resolve())



def mark(name: str) -> None:
    """Remember the caller's next line as ``LINES[name]`` (the call about to be made)."""
    LINES[name] = sys._getframe(1).f_lineno + 1


def program(acl: ModuleType) -> None:
    """A leaked device buffer and a read-after-write race between two streams."""
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    host = ok(acl.rt.malloc_host(N))
    a, b, c = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
    mark("leak")
    ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy(a, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    mark("first")
    assert acl.rt.memcpy_async(b, N, a, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s1) == ACL_SUCCESS
    mark("race")
    assert acl.rt.memcpy_async(c, N, b, N, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(s1) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(s2) == ACL_SUCCESS
    for p in (a, b, c):
        assert acl.rt.free(p) == ACL_SUCCESS
    assert acl.rt.free_host(host) == ACL_SUCCESS
    for s in (s1, s2):
        assert acl.rt.destroy_stream(s) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS
    assert acl.finalize() == ACL_SUCCESS


@pytest.fixture(scope="module")
def trace() -> Trace:
    """The trace of ``program``."""
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            program(acl)
            out = s.finish()
        finally:
            acl_lab.uninstall()
    return out


@pytest.fixture
def ex(trace: Trace) -> Explorer:
    """A fresh explorer of the trace."""
    return explore(trace)


def index_of(ex: Explorer, kind: str) -> int:
    """The findings-list value of the (single) finding of ``kind``."""
    (i,) = [i for i, f in enumerate(ex.findings) if f.kind == kind]
    return i


def meta(fig: go.FigureWidget) -> dict[str, Any]:
    """The figure's ``layout.meta`` as a dict."""
    return dict(fig.layout.meta or {})


def overlay(ex: Explorer) -> list[Any]:
    """The memory map's "live now" overlay traces (one per pool)."""
    return [t for t in ex.memory_fig.data if (t.meta or {}).get("state") == "live_at"]


def shape(fig: go.FigureWidget, name: str) -> Any:
    """The named shape of a figure."""
    (s,) = [s for s in fig.layout.shapes if s.name == name]
    return s


def leaked_alloc(trace: Trace) -> int:
    """The allocs row made at the leaking line."""
    (i,) = [i for i in range(trace.allocs.rows)
            if trace.call_site(int(trace.allocs["call"][i])) == (THIS, LINES["leak"])]
    return i


def source_text(line: int) -> str:
    """A line of this file as the source pane shows it (stripped and escaped)."""
    return html.escape(linecache.getline(THIS, line).strip())


# ----------------------------------------------------------------------------- building
def test_explore_returns_a_linked_widget(trace: Trace) -> None:
    """``acl_lab.explore`` is the lazy name; it gives a VBox holding both FigureWidgets, the
    list, the source pane, the scrubber and the stream table."""
    assert acl_lab.explore is explore
    ex = acl_lab.explore(trace)
    assert isinstance(ex, widgets.VBox) and isinstance(ex, widgets.Widget)
    assert ex.widget is ex
    assert isinstance(ex.timeline_fig, go.FigureWidget)
    assert isinstance(ex.memory_fig, go.FigureWidget)
    assert isinstance(ex.findings_list, widgets.Select)
    assert isinstance(ex.slider, widgets.IntSlider)
    assert ex.slider.min == 0 and ex.slider.max == math.ceil(ex.end_ns / 1000)
    assert ex.play.max == ex.slider.max

    def walk(w: Any) -> list[Any]:
        return [w, *[x for c in getattr(w, "children", ()) for x in walk(c)]]

    shown = walk(ex)
    for part in (ex.timeline_fig, ex.memory_fig, ex.findings_list, ex.source, ex.slider,
                 ex.play, ex.stream_state, ex.reset_zoom):
        assert any(part is w for w in shown)
    # the figures are the pure views' figures, plus the explorer's cursor
    assert meta(ex.timeline_fig)["mode"] == "svg"
    assert meta(ex.memory_fig)["mode"] == "rects"
    assert shape(ex.timeline_fig, CURSOR).x0 == 0
    assert shape(ex.timeline_fig, SELECTION).visible is False


def test_findings_list_has_one_entry_per_finding(trace: Trace, ex: Explorer) -> None:
    """One option per finding, each naming severity, kind and file:line; nothing selected."""
    found = trace.findings()
    assert {f.kind for f in found} >= {"leak", "race"}
    assert len(ex.findings_list.options) == len(found) == len(ex.findings)
    for (label, value), f in zip(ex.findings_list.options, found, strict=True):
        assert f.severity in label and f.kind in label
        assert f"{os.path.basename(f.file)}:{f.line}" in label
        assert ex.findings[value] == f
    assert ex.findings_list.value is None
    assert "Select a finding" in ex.source.value


def test_findings_argument_replaces_the_checks(trace: Trace) -> None:
    """``findings=`` lists exactly those findings (an empty list: an empty, disabled list)."""
    (race,) = [f for f in trace.findings() if f.kind == "race"]
    ex = explore(trace, findings=[race])
    assert [v for _, v in ex.findings_list.options] == [0]
    none = explore(trace, findings=[])
    assert none.findings_list.options == () and none.findings_list.disabled


# ----------------------------------------------------------------------------- linking
def test_selecting_the_race_zooms_shows_source_and_scrubs(trace: Trace, ex: Explorer) -> None:
    """The timeline's x range covers both racing tasks (and is narrower than the trace), the
    source pane shows the racing call's file:line and text, the scrubber moves to the race."""
    full = tuple(ex.timeline_fig.layout.xaxis.range)
    i = index_of(ex, "race")
    f = ex.findings[i]
    ex.findings_list.value = i

    scale = meta(ex.timeline_fig)["ns_per_unit"]
    lo, hi = ex.timeline_fig.layout.xaxis.range
    tasks = trace.tasks
    racing = f.ids["tasks"]
    assert len(racing) == 2
    for t in racing:
        for col in ("submit_ns", "start_ns", "end_ns"):
            assert lo <= tasks[col][t] / scale <= hi
    assert hi - lo < full[1] - full[0]
    assert meta(ex.timeline_fig)["selected_finding"] == i
    sel = shape(ex.timeline_fig, SELECTION)
    assert sel.visible and sel.x0 <= tasks["start_ns"][racing[0]] / scale

    pane = ex.source.value
    assert f"{html.escape(THIS)}:{LINES['race']}" in pane
    assert source_text(LINES["race"]) in pane
    assert source_text(LINES["first"]) in pane  # the other racing call is listed
    assert "acl.rt.memcpy_async" in pane and "race" in pane

    # the scrubber jumped to when the second racing task starts: it is running
    second = max(racing, key=lambda t: int(tasks["start_ns"][t]))
    start = int(tasks["start_ns"][second])
    assert ex.slider.value == math.ceil(start / 1000)
    assert ex.at_ns >= start
    assert meta(ex.memory_fig)["at_ns"] == ex.at_ns
    assert shape(ex.timeline_fig, CURSOR).x0 == ex.at_ns / scale
    rows = {r["stream"]: r for r in ex.stream_state_at(ex.at_ns)}
    assert sum(r["running"] for r in rows.values()) >= 1
    assert "D2D" in ex.stream_state.value and "acl.rt.memcpy_async" in ex.stream_state.value

    # the whole-trace button undoes the zoom
    ex.reset_zoom.click()
    assert tuple(ex.timeline_fig.layout.xaxis.range) == pytest.approx(full)
    # clearing the selection hides the shading
    ex.select(None)
    assert shape(ex.timeline_fig, SELECTION).visible is False


def test_selecting_the_leak_highlights_the_leaked_block(trace: Trace, ex: Explorer) -> None:
    """The leak's source line is shown; the scrubber moves to the malloc and the memory map
    outlines the leaked block as live."""
    i = index_of(ex, "leak")
    ex.select(i)
    assert f"{html.escape(THIS)}:{LINES['leak']}" in ex.source.value
    assert source_text(LINES["leak"]) in ex.source.value
    assert "<i>aclrtMalloc</i>" in ex.source.value  # the C name beside the pyACL call
    leaked = leaked_alloc(trace)
    assert leaked in meta(ex.memory_fig)["live_allocs"]
    # one overlay per drawn pool (the pinned host buffer has a band of its own)
    assert len(overlay(ex)) == len(meta(ex.memory_fig)["pools"])
    assert len([o for o in overlay(ex) if leaked in list(o.customdata)]) == 1


def test_scrubber_replays_memory_and_streams(trace: Trace, ex: Explorer) -> None:
    """At t=0 nothing is live, done or running; at the end every task is done, only the leak
    is still live; in between the cursor, the overlay and the note move with the slider."""
    n_tasks = trace.tasks.rows
    ex.slider.value = 0
    m0 = meta(ex.memory_fig)
    assert m0["at_ns"] == 0 and m0["live_allocs"] == [] and m0["live_count"] == 0
    assert all(len(t.x) == 0 for t in overlay(ex))
    rows = ex.stream_state_at(0)
    assert sum(r["done"] + r["running"] + r["queued"] for r in rows) == 0
    assert sum(r["later"] for r in rows) == n_tasks
    assert "acl-stream-state" in ex.stream_state.value
    before = ex.stream_state.value

    # the middle: after every malloc, before any free
    frees = trace.calls_named("acl.rt.free")
    mid_ns = int(trace.calls["start_ns"][frees[0]]) - 1
    ex.slider.value = mid_ns // 1000
    m1 = meta(ex.memory_fig)
    assert len(m1["live_allocs"]) >= 4 and m1["live_bytes"] > 0
    # every live block is outlined in its own pool's band (pinned host memory included)
    assert sorted(a for ov in overlay(ex) for a in ov.customdata) == sorted(m1["live_allocs"])
    scale = m1["time_scale_ns"]
    assert shape(ex.memory_fig, CURSOR).x0 == ex.at_ns / scale
    notes = [a.text for a in ex.memory_fig.layout.annotations if a.name == CURSOR]
    assert notes and f"{len(m1['live_allocs'])} block(s) live" in notes[0]

    ex.slider.value = ex.slider.max
    assert ex.at_ns == ex.end_ns
    rows = ex.stream_state_at(ex.at_ns)
    assert sum(r["done"] for r in rows) == n_tasks
    assert sum(r["running"] + r["queued"] + r["later"] for r in rows) == 0
    assert ex.stream_state.value != before
    m2 = meta(ex.memory_fig)
    assert m2["live_allocs"] == [leaked_alloc(trace)]
    assert shape(ex.timeline_fig, CURSOR).x0 == pytest.approx(
        ex.end_ns / meta(ex.timeline_fig)["ns_per_unit"])


def test_play_drives_the_scrubber(ex: Explorer) -> None:
    """The Play widget is linked to the slider (a replay moves the memory map)."""
    ex.play.value = ex.slider.max
    assert ex.slider.value == ex.slider.max
    assert meta(ex.memory_fig)["at_ns"] == ex.end_ns


def test_clicks_on_the_figures_show_the_call(trace: Trace, ex: Explorer) -> None:
    """A click on a call bar, a task bar or a memory block shows the call behind it; a click
    on a finding marker selects that finding."""
    def click(fig: go.FigureWidget, pred: Any, point: int = 0) -> Any:
        (k,) = [k for k, t in enumerate(fig.data) if pred(t.meta or {})][:1]
        tr = fig.data[k]
        callbacks = tr._click_callbacks
        assert callbacks, "no click handler registered"
        for cb in callbacks:
            cb(tr, Points(point_inds=[point], trace_index=k), None)
        return tr

    tr = click(ex.timeline_fig, lambda m: m.get("role") == "call")
    cid = int(tr.customdata[0])
    file, line = trace.call_site(cid)
    assert ex.selected_call == cid
    assert f"{html.escape(file)}:{line}" in ex.source.value
    assert html.escape(trace.call_name(cid)) in ex.source.value

    tr = click(ex.timeline_fig, lambda m: m.get("role") == "task" and m.get("kind") == "D2D")
    task = int(tr.customdata[0])
    assert ex.selected_call == int(trace.tasks["call"][task])
    assert ex.at_ns >= int(trace.tasks["start_ns"][task])

    tr = click(ex.memory_fig, lambda m: m.get("state") == "leaked")
    alloc = int(tr.customdata[0])
    assert ex.selected_call == int(trace.allocs["call"][alloc])
    assert f"allocation #{alloc}" in ex.source.value

    tr = click(ex.timeline_fig, lambda m: m.get("role") == "finding")
    assert ex.findings_list.value == int(tr.customdata[0])


# ----------------------------------------------------------------------------- edge cases
def test_an_empty_trace_still_builds() -> None:
    """No calls, no tasks, no allocations, no findings: the explorer builds and scrubs."""
    empty = Trace.from_columns([], {}, {"profile": "Ascend310P3"})
    ex = explore(empty)
    assert ex.findings_list.options == ()
    assert ex.end_ns == 0 and ex.slider.max >= 1
    ex.slider.value = ex.slider.max
    assert meta(ex.memory_fig)["live_allocs"] == []
    assert overlay(ex) == []
    assert ex.stream_state_at(ex.at_ns) == []
    assert "no tasks" in ex.stream_state.value
    ex.reset_zoom.click()


def test_source_pane_escapes_html_and_survives_missing_files(tmp_path: Path,
                                                             trace: Trace) -> None:
    """Source text and paths are escaped; a file that does not exist shows file:line only."""
    src = tmp_path / "<evil>.py"
    src.write_text("a = 1\nb = '<script>alert(1)</script>'\nc = 3\n")
    made = Finding("leak", "warning", "x <b>y</b>", file=str(src), line=2)
    gone = Finding("leak", "info", "missing", file=str(tmp_path / "gone.py"), line=5)
    ex = explore(trace, findings=[made, gone])
    ex.select(0)
    assert "<script>" not in ex.source.value and "<evil>" not in ex.source.value
    assert html.escape("b = '<script>alert(1)</script>'") in ex.source.value
    assert f"{html.escape(str(src))}:2" in ex.source.value
    assert "x &lt;b&gt;y&lt;/b&gt;" in ex.source.value
    ex.select(1)
    assert "gone.py:5" in ex.source.value and "source not available" in ex.source.value


def test_explorers_are_independent_and_the_trace_is_unchanged(trace: Trace) -> None:
    """Two explorers of one trace keep their own state; driving them never writes the trace."""
    before = json.dumps(trace.to_dict(), sort_keys=True)
    one, two = explore(trace), explore(trace)
    one.select(index_of(one, "race"))
    one.slider.value = one.slider.max
    assert two.findings_list.value is None and two.slider.value == 0
    assert meta(two.memory_fig)["at_ns"] == 0
    assert two.timeline_fig is not one.timeline_fig
    assert tuple(two.timeline_fig.layout.xaxis.range) != tuple(one.timeline_fig.layout.xaxis.range)
    two.select(index_of(two, "leak"))
    assert json.dumps(trace.to_dict(), sort_keys=True) == before
    for table in trace.tables.values():
        for col in table.values():
            assert isinstance(col, np.ndarray) and not col.flags.writeable


def test_memory_map_title_note_and_legend_do_not_overlap(ex: Explorer) -> None:
    """In the explorer's memory map the title, the cursor note and the first band's title
    each have their own row of the top margin, and the legend (with its "live now" entry)
    has rows of its own below the x axis, inside the figure: nothing overlaps or is cut."""
    from acl_lab.tracer.views.memory_map import (
        AXIS_ROOM_PX,
        LEGEND_ITEMS_PER_ROW,
        LEGEND_ROW_PX,
        LINE_FACTOR,
        legend_entries,
    )

    ex.scrub(ex.end_ns // 2)
    fig = ex.memory_fig
    lay = fig.layout
    (note,) = [a for a in lay.annotations if a.name == CURSOR]
    assert "block(s) live" in note.text
    subplot_titles = [a for a in lay.annotations if a.name != CURSOR]
    first_band = max(subplot_titles, key=lambda a: a.y)
    # the title hangs from the top of the figure; the note sits on the first band's title
    assert (lay.title.yref, lay.title.y, lay.title.yanchor) == ("container", 1, "top")
    title_bottom = lay.title.pad.t + lay.title.font.size * LINE_FACTOR  # px from the top
    assert (note.yref, note.y, note.yanchor) == ("paper", 1, "bottom")
    assert (first_band.y, first_band.yanchor) == (1, "bottom")
    assert note.yshift >= first_band.font.size * LINE_FACTOR - 1
    note_top = lay.margin.t - note.yshift - note.font.size * LINE_FACTOR  # px from the top
    assert note_top >= title_bottom - 1
    # the legend: below the axis, bottom-anchored in the figure, room for every row
    entries = legend_entries(fig)
    assert "live now" in {t.name for t in fig.data if t.showlegend}
    rows = -(-entries // LEGEND_ITEMS_PER_ROW)
    assert lay.legend.orientation == "h"
    assert (lay.legend.yref, lay.legend.y, lay.legend.yanchor) == ("container", 0, "bottom")
    assert (lay.legend.x, lay.legend.xanchor) == (0, "left")
    assert lay.margin.b >= AXIS_ROOM_PX + rows * LEGEND_ROW_PX
