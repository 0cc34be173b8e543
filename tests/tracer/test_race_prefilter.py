"""``ordering._may_race`` leaves out accesses that cannot be half of a race, and the race
findings stay those of the full walk over every access.

Each program is run twice through ``races``: as it is, and with ``_may_race`` replaced by the
whole access table (every access of a task that ran, in task order, as the walk took it before
the filter); the two lists of findings must be equal, racy programs included.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from acl_lab.constants import (
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import ordering
from acl_lab.tracer.checks.ordering import races
from tests.helpers import ok
from tests.robustness.test_shedding_races import BODIES, traced

pytestmark = pytest.mark.timeout(120)

N = 256
D2D, H2D, D2H = ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST


def every_access(trace: Any) -> np.ndarray:
    """The filter's stand-in: every access row of a task in the table, in task order."""
    task = trace.accesses["task"].astype(np.int64)
    rows = np.nonzero((task >= 0) & (task < trace.tasks.rows))[0]
    return rows[np.argsort(task[rows], kind="stable")]


def unfiltered(trace: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as m:
        m.setattr(ordering, "_may_race", every_access)
        return races(trace)


def fill_then_stream_reads(acl: ModuleType) -> None:
    """A device buffer filled by the host (a synchronous copy), then read by a stream loop:
    two timelines and a write, every pair ordered by program order and submission."""
    host = ok(acl.rt.malloc_host(N))
    dev, out = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(2))
    assert acl.rt.memcpy(dev, N, host, N, H2D) == ACL_SUCCESS
    s = ok(acl.rt.create_stream())
    for _ in range(20):
        assert acl.rt.memcpy_async(out, N, dev, N, D2D, s) == ACL_SUCCESS
    acl.rt.synchronize_stream(s)


def host_writes_while_stream_reads(acl: ModuleType) -> None:
    """The host rewrites a device buffer (a synchronous copy) while a stream may still read
    it: a race the program-order rule must not excuse, as the buffer's second host write comes
    after the call that queued the stream's read."""
    host = ok(acl.rt.malloc_host(N))
    dev, out = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(2))
    s = ok(acl.rt.create_stream())
    for _ in range(3):
        assert acl.rt.memcpy(dev, N, host, N, H2D) == ACL_SUCCESS
        assert acl.rt.memcpy_async(out, N, dev, N, D2D, s) == ACL_SUCCESS
    acl.rt.synchronize_stream(s)


def two_streams_race(acl: ModuleType) -> None:
    """Copy a->b on one stream, b->c on another, no event, in a loop; plus an ordered pair."""
    a, b, c = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(3))
    host = ok(acl.rt.malloc_host(N))
    assert acl.rt.memcpy(a, N, host, N, H2D) == ACL_SUCCESS
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    for _ in range(3):
        assert acl.rt.memcpy_async(b, N, a, N, D2D, s1) == ACL_SUCCESS
        assert acl.rt.memcpy_async(c, N, b, N, D2D, s2) == ACL_SUCCESS
        acl.rt.synchronize_device()
    assert acl.rt.memcpy_async(b, N // 2, a, N // 2, D2D, s1) == ACL_SUCCESS
    assert acl.rt.memcpy_async(b + N // 2, N // 2, a, N // 2, D2D, s2) == ACL_SUCCESS
    acl.rt.synchronize_device()


def host_reads_unsynchronised(acl: ModuleType) -> None:
    """A stream writes a buffer and the host reads it back before synchronizing."""
    a, b = (ok(acl.rt.malloc(N, ACL_MEM_MALLOC_NORMAL_ONLY)) for _ in range(2))
    host = ok(acl.rt.malloc_host(N))
    assert acl.rt.memcpy(a, N, host, N, H2D) == ACL_SUCCESS
    s = ok(acl.rt.create_stream())
    assert acl.rt.memcpy_async(b, N, a, N, D2D, s) == ACL_SUCCESS
    assert acl.rt.memcpy(host, N, b, N, D2H) == ACL_SUCCESS
    acl.rt.synchronize_stream(s)


PROGRAMS: dict[str, tuple[Callable[[ModuleType], None], bool]] = {
    "fill_then_stream_reads": (fill_then_stream_reads, False),
    "host_writes_while_stream_reads": (host_writes_while_stream_reads, True),
    "two_streams_race": (two_streams_race, True),
    "host_reads_unsynchronised": (host_reads_unsynchronised, True),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_findings_equal_the_walk_over_every_access(name: str, ready: ModuleType,
                                                   session: Session,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    program, racy = PROGRAMS[name]
    program(ready)
    trace = session.trace()
    got = races(trace)
    assert got == unfiltered(trace, monkeypatch)
    assert bool(got) == racy


def test_host_fill_then_stream_reads_needs_no_walk(ready: ModuleType, session: Session,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every conflicting pair is ordered by program order: the graph is never built."""
    fill_then_stream_reads(ready)
    trace = session.trace()
    stream = trace.tasks["stream"][trace.accesses["task"]]
    assert (stream < 0).any() and (stream >= 0).sum() == 40  # both timelines touch dev
    assert len(ordering._may_race(trace)) == 0

    def no_graph(_trace: Any) -> None:
        raise AssertionError("the happens-before graph was built")

    monkeypatch.setattr(ordering, "_Graph", no_graph)
    assert races(trace) == []


def test_only_the_contested_buffer_is_walked(ready: ModuleType, session: Session) -> None:
    """In the racy rewrite loop only the device buffer both the host and the stream touch is
    walked, whole: the pinned source (host only) and the output (stream only) are left out."""
    host_writes_while_stream_reads(ready)
    trace = session.trace()
    acc = trace.accesses
    kept = ordering._may_race(trace)
    d2d = np.nonzero(trace.tasks["kind"] == ordering.TASK_KINDS.index("D2D"))[0]
    dev = int(acc["alloc"][(acc["task"] == d2d[0]) & (acc["write"] == 0)][0])
    assert set(acc["alloc"][kept].tolist()) == {dev}
    assert len(kept) == int(np.count_nonzero(acc["alloc"] == dev)) == 6


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(body=BODIES)
def test_random_programs_have_the_races_of_the_walk_over_every_access(
        body: list[Any]) -> None:
    """The shedding property's programs (async and sync copies on two streams and two device
    buffers, event records and waits, host waits, each loop body run many times): the race
    findings with the filter are those of the walk over every access, message for message."""
    trace = traced(body, 0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ordering, "_may_race", every_access)
        full = races(trace)
    assert races(trace) == full
