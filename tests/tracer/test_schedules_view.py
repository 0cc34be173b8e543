"""schedules_timeline: two host schedules of one program, one panel each on one time axis."""

from __future__ import annotations

import threading
from types import ModuleType

import pytest

from acl_lab.constants import ACL_MEM_MALLOC_NORMAL_ONLY, ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.schedules import explore_schedules
from acl_lab.tracer.views import schedules_timeline
from acl_lab.tracer.views.timeline import stream_names, timeline
from tests.helpers import ok

pytestmark = pytest.mark.timeout(300)
N = 4096


def two_uploaders(acl: ModuleType) -> None:
    """Two threads each create a stream and upload on it (who creates first depends on the
    schedule)."""
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    ctx = ok(acl.rt.get_context())
    host = ok(acl.rt.malloc_host(N))

    def upload() -> None:
        assert acl.rt.set_context(ctx) == 0
        stream = ok(acl.rt.create_stream())
        dev = ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY))
        assert acl.rt.memcpy_async(dev, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.free(dev) == 0 and acl.rt.destroy_stream(stream) == 0

    threads = [threading.Thread(target=upload, name=n) for n in ("up-a", "up-b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert acl.rt.free_host(host) == 0
    assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0


def stream_lanes(lanes: list[str]) -> list[str]:
    return [ln for ln in lanes if ln.startswith("stream")]


def test_two_schedules_share_the_time_axis_and_the_lane_order(acl: ModuleType) -> None:
    """Seed 0 against a seed whose threads create their streams in the other order: two
    rows of one figure, the second's stream lanes in the first's order (the same stream at
    the same height), one x range covering both runs, the seeds in the titles and meta."""
    ex = explore_schedules(two_uploaders, acl, seeds=8)
    first = ex.run(0).trace

    def creators(trace: object) -> list[str]:
        return [n.split(" · ")[1] for n in stream_names(trace).values()]

    other = next(r for r in ex.runs if creators(r.trace) != creators(first))
    alone = timeline(other.trace).layout.meta["lanes"]
    fig = schedules_timeline(first, other.trace)
    lanes0, lanes1 = fig.layout.meta["lanes"]
    assert fig.layout.meta["seeds"] == [0, other.seed]
    assert [a.text for a in fig.layout.annotations[:2]] == \
        ["schedule seed 0", f"schedule seed {other.seed}"]
    # drawn alone, the other run puts its streams in its own creation order; beside seed 0
    # they follow seed 0's, tick labels included
    assert len(stream_lanes(lanes0)) == 2 and stream_lanes(alone) != stream_lanes(lanes0)
    assert stream_lanes(lanes1) == stream_lanes(lanes0)
    assert list(fig.layout.yaxis2.ticktext) == list(fig.layout.yaxis.ticktext) == lanes0
    # each run's items in its own row, on one shared x axis covering the longer run (µs)
    assert {d.yaxis for d in fig.data} == {"y", "y2"}
    assert fig.layout.xaxis.matches == "x2" and fig.layout.meta["unit"] == "µs"
    end = max(int(first.meta["virtual_time_ns"]), int(other.trace.meta["virtual_time_ns"]))
    assert fig.layout.xaxis.range[1] >= end / 1000
