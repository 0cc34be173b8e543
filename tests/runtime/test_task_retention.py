"""The Session does not keep finished tasks: a long loop of copies does not grow the process.

Task ids stay consecutive (``session.task_count``); a ``TaskLog`` subscriber keeps the Task
objects for whoever needs them.
"""

from __future__ import annotations

import gc
import weakref
from types import ModuleType

from acl_lab.constants import ACL_MEMCPY_HOST_TO_DEVICE
from acl_lab.runtime import events
from acl_lab.runtime.hooks import TaskLog
from acl_lab.runtime.objects import Task
from acl_lab.runtime.session import Session


def _copies(acl: ModuleType, n: int) -> None:
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 1, 64) == 0
    dev, _ = acl.rt.malloc(64, 0)
    for _ in range(n):
        assert acl.rt.memcpy_async(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0


def test_finished_tasks_are_released(ready: ModuleType, session: Session) -> None:
    refs: list[weakref.ref[Task]] = []

    class Watch:
        def on_task(self, t: Task) -> None:
            refs.append(weakref.ref(t))

    session.hooks.subscribe(Watch())
    _copies(ready, 200)
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert len(refs) == 200
    assert alive <= 2  # at most the stream's last task is still referenced
    assert session.task_count >= 200


def test_task_ids_are_consecutive_and_a_task_log_keeps_them(ready: ModuleType,
                                                             session: Session) -> None:
    log = TaskLog()
    session.hooks.subscribe(log)
    before = session.task_count
    _copies(ready, 50)
    assert [t.id for t in log.tasks] == list(range(before, session.task_count))
    assert all(t.end >= t.start >= 0 for t in log.tasks)
    trace = session.trace()
    assert trace.tasks.rows == session.task_count


def test_an_event_recorded_in_a_loop_keeps_a_bounded_history(ready: ModuleType,
                                                             session: Session) -> None:
    """Record/wait every iteration: the event's lists stay short, ordering still holds, and
    a reset followed by a wait still needs a later record."""
    acl = ready
    s1, _ = acl.rt.create_stream()
    s2, _ = acl.rt.create_stream()
    ev, _ = acl.rt.create_event_with_flag(1)  # ACL_EVENT_SYNC
    host, _ = acl.rt.malloc_host(64)
    assert acl.rt.memset(host, 64, 1, 64) == 0
    dev, _ = acl.rt.malloc(64, 0)
    for _ in range(500):
        assert acl.rt.memcpy_async(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
        assert acl.rt.record_event(ev, s1) == 0
        assert acl.rt.stream_wait_event(s2, ev) == 0
    assert acl.rt.synchronize_stream(s2) == 0
    e = events.lookup(session, ev)
    assert len(e.records) <= 64 and not e.waiting
    trace = session.trace()
    edges = trace.edges
    assert edges.rows == 500
    ends = trace.tasks["end_ns"]  # a wait ends no earlier than the record it waited for
    assert all(int(ends[r]) <= int(ends[w]) for r, w in zip(edges["record"], edges["wait"],
                                                             strict=True))
    assert not [f for f in trace.findings() if f.kind in ("race", "deadlock")]
