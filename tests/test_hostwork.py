"""Tests of ``acl_lab.host_work`` and the host-cost helpers (``acl_lab.hostwork``)."""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np
import pytest

import acl_lab
from acl_lab import hostwork
from acl_lab.hostwork import (
    HOST_WORK_CALL,
    HostProfile,
    first_touch_ns,
    host_work,
    jpeg_decode_ns,
    preprocess_ns,
)
from acl_lab.runtime.session import Session

H2D = 1


def test_host_work_is_exported() -> None:
    assert acl_lab.host_work is host_work
    assert "host_work" in acl_lab.__all__


def test_host_work_advances_the_thread_clock_and_is_a_call(session: Session) -> None:
    """The calling thread's clock moves by exactly ns; the trace has one pseudo-call with
    the interval, the arguments, the caller's file:line and ret 0."""
    th = session.thread()
    before = th.clock
    line = sys._getframe().f_lineno + 1
    host_work(1_234_567, "decode JPEG")
    assert th.clock - before == 1_234_567
    host_work(0)  # nothing to charge is still a (zero-length) call
    assert th.clock - before == 1_234_567
    trace = session.trace()
    ids = trace.calls_named(HOST_WORK_CALL)
    assert len(ids) == 2
    c = int(ids[0])
    assert int(trace.calls["start_ns"][c]) == before
    assert int(trace.calls["end_ns"][c]) == before + 1_234_567
    assert int(trace.calls["ret"][c]) == 0
    assert int(trace.calls["thread"][c]) == th.idx
    assert trace.call_args(c) == [1_234_567, "decode JPEG"]
    assert trace.call_site(c) == (__file__, line)
    assert trace.call_args(int(ids[1])) == [0, "host work"]
    assert trace.findings() == []


def test_each_thread_has_its_own_clock(acl: ModuleType, session: Session) -> None:
    """Host work in a worker thread moves that thread's clock, not the main one's; the main
    thread learns the worker's time only through what orders it after the work (the Event
    the worker sets, the join)."""
    import threading

    main = session.thread()
    start = main.clock
    seen: dict[str, int] = {}
    done, release = threading.Event(), threading.Event()

    def worker() -> None:
        th = session.thread()
        t0 = th.clock
        host_work(5_000_000, "worker")
        seen["delta"] = th.clock - t0
        seen["idx"] = th.idx
        seen["end"] = th.clock
        done.set()
        release.wait(60)

    t = threading.Thread(target=worker)
    t.start()
    assert seen == {}  # started, not run: its turn comes at a scheduling point of main
    assert done.wait(60)
    assert seen["delta"] == 5_000_000
    # main waited for the set: it continues at the worker's clock then, not before
    assert seen["end"] <= main.clock < seen["end"] + 5_000_000 and main.clock > start
    release.set()
    t.join()
    assert main.clock >= seen["end"]  # a join orders the joiner after the joined thread
    trace = session.trace()
    (c,) = trace.calls_named(HOST_WORK_CALL)
    assert int(trace.calls["thread"][c]) == seen["idx"] != main.idx


def test_device_work_overlaps_host_work(ready: ModuleType, session: Session) -> None:
    """A copy queued before host work runs during it: waiting afterwards costs (almost)
    nothing, while without the host work the wait takes the copy's whole duration."""
    acl = ready
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    n = 64 << 20
    host, ret = acl.rt.malloc_host(n)
    assert ret == 0
    dev, ret = acl.rt.malloc(n, 0)
    assert ret == 0
    th = session.thread()

    def sync_wait(work_ns: int) -> int:
        assert acl.rt.memcpy_async(dev, n, host, n, H2D, stream) == 0
        host_work(work_ns, "other CPU work")
        t0 = th.clock
        assert acl.rt.synchronize_stream(stream) == 0
        return th.clock - t0

    copy_ns = n / session.profile.h2d_pinned_bw
    waited_alone = sync_wait(0)
    waited_behind_work = sync_wait(int(2 * copy_ns))
    assert waited_alone > 0.9 * copy_ns
    assert waited_behind_work < 0.01 * copy_ns
    trace = session.trace()
    work = [int(c) for c in trace.calls_named(HOST_WORK_CALL)]
    h2d = np.nonzero(trace.tasks["kind"] == 0)[0]
    (c, t) = work[-1], int(h2d[-1])
    # the copy's interval lies inside the host work's interval
    assert trace.calls["start_ns"][c] <= trace.tasks["start_ns"][t]
    assert trace.tasks["end_ns"][t] <= trace.calls["end_ns"][c]
    for p, free in ((host, acl.rt.free_host), (dev, acl.rt.free)):
        assert free(p) == 0
    assert acl.rt.destroy_stream(stream) == 0


def test_host_work_shows_on_the_thread_lane(session: Session) -> None:
    """The timeline draws the pseudo-call as a bar on the calling thread's lane."""
    th = session.thread()
    host_work(3_000_000, "resize")
    fig = acl_lab.timeline(session.trace())
    calls = [d for d in fig.data if isinstance(d.meta, dict) and d.meta.get("role") == "call"]
    assert len(calls) == 1
    bars = calls[0]
    i = list(bars.text).index(HOST_WORK_CALL)
    lanes = fig.layout.meta["lanes"]
    assert lanes[int(bars.y[i])].startswith(f"thread {th.idx} ")
    scale = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[fig.layout.meta["unit"]]
    assert float(bars.x[i]) * scale == pytest.approx(3_000_000)


@pytest.mark.parametrize("bad", [-1, -0.5, float("nan")])
def test_negative_or_nan_is_a_value_error(session: Session, bad: float) -> None:
    with pytest.raises(ValueError, match=">= 0"):
        host_work(bad)  # type: ignore[arg-type]
    assert len(session.trace().calls_named(HOST_WORK_CALL)) == 0


@pytest.mark.parametrize("bad", ["10", None, True, [1]])
def test_non_numbers_are_a_type_error(session: Session, bad: object) -> None:
    with pytest.raises(TypeError, match="number"):
        host_work(bad)  # type: ignore[arg-type]


def test_numpy_integers_and_floats_are_accepted(session: Session) -> None:
    th = session.thread()
    t0 = th.clock
    host_work(np.int64(1000))  # type: ignore[arg-type]
    host_work(2.6)  # type: ignore[arg-type]
    assert th.clock - t0 == 1003


# ----------------------------------------------------------------------------- helpers
def test_jpeg_decode_scales_with_pixels_and_rate() -> None:
    """Decode time is pixels / rate: 4x the pixels, 4x the time; a faster host, less."""
    base = jpeg_decode_ns(1280, 720)
    assert base == pytest.approx(1280 * 720 / hostwork.DEFAULT_HOST.jpeg_decode_pixels_per_ns,
                                 abs=1)
    assert jpeg_decode_ns(2560, 1440) == pytest.approx(4 * base, abs=4)
    fast = HostProfile(jpeg_decode_pixels_per_ns=0.3)
    assert jpeg_decode_ns(1280, 720, fast) == pytest.approx(base / 2, abs=1)
    assert jpeg_decode_ns(0, 720) == 0
    # an order-of-magnitude sanity check of the default: 720p decodes in a few ms
    assert 3_000_000 < base < 12_000_000


def test_preprocess_is_bytes_over_the_streaming_rate() -> None:
    host = HostProfile(stream_bytes_per_ns=4.0)
    assert preprocess_ns(4_000, host) == 1_000
    assert preprocess_ns(0) == 0
    assert preprocess_ns(2 * 10**6) == 2 * preprocess_ns(10**6)


def test_first_touch_counts_whole_pages() -> None:
    host = HostProfile(page_fault_ns=700, page_bytes=4096)
    assert first_touch_ns(0, host) == 0
    assert first_touch_ns(1, host) == 700
    assert first_touch_ns(4096, host) == 700
    assert first_touch_ns(4097, host) == 1400
    assert first_touch_ns(10 * 4096, host) == 7000


def test_helpers_reject_negative_sizes() -> None:
    for fn in (preprocess_ns, first_touch_ns):
        with pytest.raises(ValueError):
            fn(-1)
    with pytest.raises(ValueError):
        jpeg_decode_ns(-1, 10)


def test_a_call_made_inside_the_package_hovers_with_a_package_path(session: Session) -> None:
    """A call whose site is a line of the acl_lab package (a helper of the course calling
    ``host_work``) hovers as ``acl_lab/hostwork.py:N``, not the installation's absolute
    path."""
    import os

    from acl_lab.runtime.sites import PACKAGE_DIR, PACKAGE_PARENT

    inside = os.path.join(PACKAGE_DIR, "hostwork.py")
    exec(compile("\n\nhost_work(2_000, 'inside')", inside, "exec"), {"host_work": host_work})
    fig = acl_lab.timeline(session.trace())
    calls = [d for d in fig.data if isinstance(d.meta, dict) and d.meta.get("role") == "call"]
    (bars,) = calls
    hover = bars.hovertext[list(bars.text).index(HOST_WORK_CALL)]
    assert "acl_lab/hostwork.py:3" in hover
    assert PACKAGE_PARENT not in hover and inside not in hover
