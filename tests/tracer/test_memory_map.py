"""The memory map: rectangles per allocation, states, hover, pools, usage, at_ns, heatmap."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import plotly.graph_objects as go
import pytest

from acl_lab.constants import (
    ACL_MEM_MALLOC_HUGE_ONLY,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.memory_map import memory_map, occupancy
from acl_lab.tracer.views.style import PlotStyle
from tests.helpers import ok, snapshot

pytestmark = pytest.mark.timeout(60)

MiB = 1 << 20
ROOT = Path(__file__).resolve().parents[2]



def next_line() -> int:
    """The line number just after the caller's line."""
    return sys._getframe(1).f_lineno + 1



def rects(fig: go.Figure, state: str | None = None) -> list[Any]:
    """The Bar traces of allocation rectangles (optionally of one state)."""
    return [d for d in fig.data if isinstance(d, go.Bar) and d.meta
            and d.meta["state"] in ("freed", "leaked") and state in (None, d.meta["state"])]


def ids_of(traces: list[Any]) -> list[int]:
    return sorted(int(i) for d in traces for i in d.customdata)


@pytest.fixture
def program(ready: ModuleType, session: Session) -> dict[str, Any]:
    """Three allocations: a huge one freed, a normal one leaked, a normal one freed."""
    lines = {}
    lines["huge"] = next_line()
    big = ok(ready.rt.malloc(3 * MiB, ACL_MEM_MALLOC_HUGE_ONLY))
    lines["leak"] = next_line()
    ok(ready.rt.malloc(1000, ACL_MEM_MALLOC_NORMAL_ONLY))
    lines["small"] = next_line()
    small = ok(ready.rt.malloc(5000, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.free(big) == ACL_SUCCESS
    assert ready.rt.free(small) == ACL_SUCCESS
    return {"trace": session.trace(), "lines": lines}


def test_one_rectangle_per_allocation(program: dict[str, Any]) -> None:
    trace = program["trace"]
    fig = memory_map(trace)
    assert fig.layout.meta["mode"] == "rects"
    assert ids_of(rects(fig)) == list(range(trace.allocs.rows)) == [0, 1, 2]
    assert fig.layout.barmode == "overlay"


def test_leaked_block_reaches_the_end_in_the_leaked_colour(program: dict[str, Any]) -> None:
    trace = program["trace"]
    fig = memory_map(trace)
    scale = fig.layout.meta["time_scale_ns"]
    (leak,) = rects(fig, "leaked")
    assert list(leak.customdata) == [1]
    assert leak.marker.color == PlotStyle().state_color("leaked")
    end = leak.x[0] + leak.width[0] / 2
    assert end == pytest.approx(fig.layout.meta["end_ns"] / scale)
    assert fig.layout.meta["end_ns"] >= int(trace.calls["end_ns"].max())
    freed = rects(fig, "freed")
    assert ids_of(freed) == [0, 2]
    assert {d.marker.color for d in freed} == {PlotStyle().state_color("freed")}


def test_freed_block_ends_at_its_free_call(program: dict[str, Any]) -> None:
    trace = program["trace"]
    fig = memory_map(trace)
    scale = fig.layout.meta["time_scale_ns"]
    frees = {int(trace.frees["alloc"][j]): int(trace.frees["call"][j])
             for j in range(trace.frees.rows)}
    for bar in rects(fig, "freed"):
        for k, i in enumerate(bar.customdata):
            t_free = int(trace.calls["start_ns"][frees[int(i)]])
            t_alloc = int(trace.calls["start_ns"][int(trace.allocs["call"][i])])
            assert bar.x[k] + bar.width[k] / 2 == pytest.approx(t_free / scale)
            assert bar.x[k] - bar.width[k] / 2 == pytest.approx(t_alloc / scale)


def test_hover_has_the_line_and_both_sizes(program: dict[str, Any]) -> None:
    trace = program["trace"]
    fig = memory_map(trace)
    line = program["lines"]["leak"]
    (leak,) = rects(fig, "leaked")
    text = leak.hovertext[0]
    assert f"{__file__}:{line}" in text
    assert "requested 1000 B" in text
    assert f"rounded {int(trace.allocs['size'][1])} B" in text
    assert "ACL_MEM_MALLOC_NORMAL_ONLY" in text and "pool normal" in text
    assert "LEAKED" in text


def test_pools_get_separate_bands(program: dict[str, Any]) -> None:
    fig = memory_map(program["trace"])
    assert fig.layout.meta["pools"] == ["normal", "huge"]
    axes = {d.meta["pool"]: d.yaxis for d in rects(fig)}
    assert axes["normal"] != axes["huge"]
    titles = [a.text for a in fig.layout.annotations]
    assert any(t.startswith("normal pool (offsets from 0x") for t in titles)
    assert any(t.startswith("huge pool (offsets from 0x") for t in titles)
    only = memory_map(program["trace"], pools=["huge"])
    assert only.layout.meta["pools"] == ["huge"] and ids_of(rects(only)) == [0]
    with pytest.raises(ValueError, match="unknown pool"):
        memory_map(program["trace"], pools=["giant"])


def _axis_px(fig: go.Figure) -> dict[str, tuple[float, float, str]]:
    """Per y axis: (bottom px, top px, title) in the plot area."""
    plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    out = {}
    for name in fig.layout:
        if name.startswith("yaxis"):
            ax = fig.layout[name]
            out[name] = (ax.domain[0] * plot, ax.domain[1] * plot, ax.title.text or "")
    return out


@pytest.mark.parametrize("pools", [None, ["huge"]])
def test_every_y_axis_title_fits_beside_its_own_row(program: dict[str, Any],
                                                    pools: list[str] | None) -> None:
    """The titles (drawn rotated along their axis) are no longer than their row is tall, so
    two never overlap; the rows themselves do not overlap."""
    fig = memory_map(program["trace"], pools=pools)
    axes = _axis_px(fig)
    assert len(axes) == len(fig.layout.meta["pools"]) + 1
    font = 14  # plotly's default axis title size (the template sets none)
    for name, (lo, hi, title) in axes.items():
        assert title, f"{name} has no title"
        assert len(title) * font * 0.6 <= hi - lo, f"{name} title {title!r} overflows its row"
    spans = sorted((lo, hi) for lo, hi, _ in axes.values())
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_pinned_host_and_dvpp_memory_are_pools_of_their_own(ready: ModuleType,
                                                            session: Session) -> None:
    """A leaked malloc_host buffer is a block in the host band, leaked-coloured, with its line;
    DVPP memory has its own band too."""
    line = next_line()
    ok(ready.rt.malloc_host(4096))
    kept = ok(ready.rt.malloc_host(8192))
    dv = ok(ready.media.dvpp_malloc(1 << 16))
    assert ready.rt.free_host(kept) == ACL_SUCCESS
    assert ready.media.dvpp_free(dv) == ACL_SUCCESS
    fig = memory_map(session.trace())
    assert set(fig.layout.meta["pools"]) == {"host", "dvpp"}
    (leak,) = rects(fig, "leaked")
    assert leak.meta["pool"] == "host" and list(leak.customdata) == [0]
    assert leak.marker.color == PlotStyle().state_color("leaked")
    assert f"{__file__}:{line}" in leak.hovertext[0] and "acl.rt.malloc_host" in leak.hovertext[0]
    freed = {d.meta["pool"]: d for d in rects(fig, "freed")}
    assert set(freed) == {"host", "dvpp"} and freed["host"].yaxis != freed["dvpp"].yaxis
    assert "and host" in fig.layout.title.text
    usage = {d.meta["pool"] for d in fig.data if d.meta and d.meta["state"] == "usage"}
    assert {"host", "dvpp"} <= usage


def test_usage_curve_peak_is_the_trace_peak(program: dict[str, Any]) -> None:
    trace = program["trace"]
    fig = memory_map(trace)
    usage = {d.meta["pool"]: d for d in fig.data if d.meta and d.meta["state"] == "usage"}
    assert set(usage) == {"normal", "huge", "device"}
    assert max(usage["device"].y) == trace.peak_device_bytes()
    assert usage["device"].line.shape == "hv"
    assert max(usage["huge"].y) == int(trace.allocs["reserved"][0])


def test_at_ns_highlights_exactly_the_blocks_live_then(program: dict[str, Any]) -> None:
    trace = program["trace"]
    calls = trace.calls
    # just after the third malloc: all three live
    t3 = int(calls["start_ns"][int(trace.allocs["call"][2])])
    # just after the first free: the huge block is gone
    t_free = int(calls["start_ns"][int(trace.frees["call"][0])])
    for at, want in ((t3, [0, 1, 2]), (t_free, [1, 2]), (0, [])):
        fig = memory_map(trace, at_ns=at)
        live = [d for d in fig.data if d.meta and d.meta["state"] == "live_at"]
        assert ids_of(live) == want
        assert all(d.marker.line.color == PlotStyle().state_color("live") for d in live)
        assert any(s.type == "line" and s.x0 == at / fig.layout.meta["time_scale_ns"]
                   for s in fig.layout.shapes)
    end = memory_map(trace, at_ns=fig.layout.meta["end_ns"] - 1)
    assert ids_of([d for d in end.data if d.meta and d.meta["state"] == "live_at"]) == [1]


def test_arrays_unchanged(program: dict[str, Any]) -> None:
    trace = program["trace"]
    before = snapshot(trace)
    memory_map(trace, at_ns=5000)
    memory_map(trace, max_rects=1)
    assert snapshot(trace) == before


def test_empty_trace_builds(ready: ModuleType, session: Session) -> None:
    fig = memory_map(session.trace())
    assert rects(fig) == [] and fig.layout.meta["pools"] == []


def synthetic(n: int) -> Trace:
    """``n`` allocations built with Trace.from_columns (see benchmarks/bench_views_memory)."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.bench_views_memory import synthetic_trace
    finally:
        sys.path.remove(str(ROOT))
    return synthetic_trace(n)


def test_large_trace_switches_to_a_heatmap() -> None:
    trace = synthetic(20_000)
    before = snapshot(trace)
    fig = memory_map(trace, at_ns=int(trace.calls["start_ns"][-1]) // 2)
    assert snapshot(trace) == before
    assert fig.layout.meta["mode"] == "heatmap"
    heat = [d for d in fig.data if isinstance(d, go.Heatmap)]
    assert {d.meta["pool"] for d in heat} == {"normal", "huge"}
    assert sum(d.meta["allocations"] for d in heat) == 20_000
    assert sum(d.meta["leaked"] for d in heat) == 2_000
    assert not any(isinstance(d, go.Bar) for d in fig.data)
    usage = {d.meta["pool"]: d for d in fig.data if d.meta and d.meta["state"] == "usage"}
    assert max(usage["device"].y) == trace.peak_device_bytes()
    assert len(usage["device"].x) < 10_000
    small = memory_map(synthetic(200))
    assert small.layout.meta["mode"] == "rects" and len(ids_of(rects(small))) == 200


def test_occupancy_is_exact() -> None:
    """Cell coverage equals a brute-force outer product of per-axis overlaps."""
    rng = np.random.default_rng(3)
    lo = rng.uniform(-10, 90, 200)
    hi = lo + rng.uniform(0, 40, 200)
    t0 = rng.uniform(0, 50, 200)
    t1 = t0 + rng.uniform(0, 70, 200)
    ae, te = np.linspace(0, 100, 13), np.linspace(0, 100, 9)
    got = occupancy(lo, hi, t0, t1, ae, te)
    want = np.zeros((12, 8))
    for i in range(200):
        ox = np.clip(np.minimum(hi[i], ae[1:]) - np.maximum(lo[i], ae[:-1]), 0, None)
        oy = np.clip(np.minimum(t1[i], te[1:]) - np.maximum(t0[i], te[:-1]), 0, None)
        want += np.outer(ox / (ae[1] - ae[0]), oy / (te[1] - te[0]))
    assert np.allclose(got, want)
