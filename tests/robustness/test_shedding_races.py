"""Task shedding never invents or hides a race: random programs, with and without a limit.

The recorder's task shedding (``acl_lab.tracer.shedding``) leaves finished tasks out of a
trace over three quarters of its limit, reasoning with the race check's clocks
(``acl_lab.tracer.happens_before``). If the two disagreed, the race check would report a race
on the shed trace that the full trace does not have (a left-out wait carried an ordering) or
miss one it has. Hypothesis draws loop bodies of async and sync copies on two streams and two
device buffers, event records and waits and host waits; each body runs many times under a
small limit and without one, and the race findings (where, what, which bytes; not how often)
must be the same. The shed run must really have left tasks out.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.tracer.trace import Trace

from .test_trace_ceiling import dropped_tasks, run, same_findings

pytestmark = pytest.mark.timeout(600)

H2D, D2H = ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST
SIZE = 64
#: Iterations of the drawn loop body: enough for the small limit to shed most of them.
REPEATS = 120
LIMIT = 24 * 1024

Op = tuple[Any, ...]
_stream = st.integers(0, 1)
_buf = st.integers(0, 1)
_ev = st.integers(0, 1)
OPS = st.one_of(
    st.tuples(st.just("h2d"), _stream, _buf),
    st.tuples(st.just("d2h"), _stream, _buf),
    st.tuples(st.just("sync_h2d"), _buf),
    st.tuples(st.just("sync_d2h"), _buf),
    st.tuples(st.just("record"), _ev, _stream),
    st.tuples(st.just("wait"), _stream, _ev),
    st.tuples(st.just("sync_stream"), _stream),
    st.tuples(st.just("sync_event"), _ev),
    st.tuples(st.just("sync_device")),
)
_copy = st.sampled_from(["h2d", "d2h"])
#: Two copies of one buffer on two streams, ordered by a record and a wait (the ordering a
#: wrongly left-out wait would lose), or by a host wait.
EVENT_PAIR = st.builds(lambda k1, k2, sa, b, e: [(k1, sa, b), ("record", e, sa),
                                                 ("wait", 1 - sa, e), (k2, 1 - sa, b)],
                       _copy, _copy, _stream, _buf, _ev)
HOST_PAIR = st.builds(lambda k1, k2, sa, b, w: [(k1, sa, b), w, (k2, 1 - sa, b)],
                      _copy, _copy, _stream, _buf,
                      st.one_of(st.tuples(st.just("sync_stream"), _stream),
                                st.just(("sync_device",))))
BODIES = st.lists(st.one_of(OPS.map(lambda op: [op]), EVENT_PAIR, HOST_PAIR),
                  min_size=1, max_size=5).map(lambda parts: [op for p in parts for op in p])


def program(acl: ModuleType, body: list[Op], warmup: int) -> None:
    """``warmup`` droppable calls, then ``body`` ``REPEATS`` times, then the teardown.

    Every op kind runs at its own line, every buffer is allocated at its own line, so race
    findings (grouped by the two task sites and the allocation site) tell them apart.
    """
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    s0, _ = acl.rt.create_stream()
    s1, _ = acl.rt.create_stream()
    e0, _ = acl.rt.create_event()
    e1, _ = acl.rt.create_event()
    src, _ = acl.rt.malloc_host(SIZE)
    assert acl.rt.memset(src, SIZE, 1, SIZE) == ACL_SUCCESS
    dst0, _ = acl.rt.malloc_host(SIZE)
    dst1, _ = acl.rt.malloc_host(SIZE)
    d0, _ = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)
    d1, _ = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_NORMAL_ONLY)
    assert acl.rt.memcpy(d0, SIZE, src, SIZE, H2D) == ACL_SUCCESS
    assert acl.rt.memcpy(d1, SIZE, src, SIZE, H2D) == ACL_SUCCESS
    streams, events, devs, dsts = (s0, s1), (e0, e1), (d0, d1), (dst0, dst1)
    for _ in range(warmup):
        acl.rt.get_device()
    for _ in range(REPEATS):
        for op in body:
            kind = op[0]
            if kind == "h2d":
                acl.rt.memcpy_async(devs[op[2]], SIZE, src, SIZE, H2D, streams[op[1]])
            elif kind == "d2h":
                acl.rt.memcpy_async(dsts[op[2]], SIZE, devs[op[2]], SIZE, D2H, streams[op[1]])
            elif kind == "sync_h2d":
                acl.rt.memcpy(devs[op[1]], SIZE, src, SIZE, H2D)
            elif kind == "sync_d2h":
                acl.rt.memcpy(dsts[op[1]], SIZE, devs[op[1]], SIZE, D2H)
            elif kind == "record":
                acl.rt.record_event(events[op[1]], streams[op[2]])
            elif kind == "wait":
                acl.rt.stream_wait_event(streams[op[1]], events[op[2]])
            elif kind == "sync_stream":
                acl.rt.synchronize_stream(streams[op[1]])
            elif kind == "sync_event":
                acl.rt.synchronize_event(events[op[1]])
            else:
                acl.rt.synchronize_device()
    assert acl.rt.synchronize_device() == ACL_SUCCESS
    for p in (d0, d1):
        assert acl.rt.free(p) == ACL_SUCCESS
    for p in (src, dst0, dst1):
        assert acl.rt.free_host(p) == ACL_SUCCESS
    for e in events:
        assert acl.rt.destroy_event(e) == ACL_SUCCESS
    for s in streams:
        assert acl.rt.destroy_stream(s) == ACL_SUCCESS
    assert acl.rt.reset_device(0) == ACL_SUCCESS


def traced(body: list[Op], warmup: int, **kwargs: Any) -> Trace:
    """The trace of ``program(body)`` in a fresh Session."""
    return run(lambda acl, _: program(acl, body, warmup), **kwargs)[0]


def races(trace: Trace) -> list[tuple[str, str, int, str]]:
    """The race findings (site, message without how often)."""
    return [f for f in same_findings(trace) if f[0] == "race"]


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES, warmup=st.integers(0, 300))
def test_shed_trace_has_the_races_of_the_full_trace(body: list[Op], warmup: int) -> None:
    """The same races, at the same lines and bytes, with most tasks left out."""
    full = traced(body, warmup)
    shed = traced(body, warmup, trace_limit_bytes=LIMIT)
    assert "dropped_tasks" not in full.meta
    assert races(shed) == races(full)
    assert shed.tasks.rows + dropped_tasks(shed) == full.tasks.rows
    n_async = sum(op[0] in ("h2d", "d2h") for op in body)
    if n_async and ("sync_device",) in body:
        # the limit really applied: tasks are missing from the shed trace (a loop that never
        # waits keeps its copies queued, unfinished, until the end)
        assert "trace_limit_bytes" in shed.meta and dropped_tasks(shed) > 0


def test_a_loop_race_and_its_ordered_twin_survive_shedding() -> None:
    """A fixed case of the property: two streams copy into one buffer; only the second pair
    of copies is ordered by an event. The shed trace keeps exactly the first pair's race."""
    body: list[Op] = [("h2d", 0, 0), ("h2d", 1, 0), ("sync_device",),
                      ("h2d", 0, 1), ("record", 0, 0), ("wait", 1, 0), ("h2d", 1, 1),
                      ("sync_device",)]
    full = traced(body, 0)
    shed = traced(body, 0, trace_limit_bytes=LIMIT)
    found = races(shed)
    assert found == races(full)
    assert len(found) == 1 and "write-write" in found[0][3]
    assert dropped_tasks(shed) > REPEATS
