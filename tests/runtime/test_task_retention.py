"""The Session does not keep finished tasks: a long loop of copies does not grow the process.

Task ids stay consecutive (``session.task_count``); a ``TaskLog`` subscriber keeps the Task
objects for whoever needs them.
"""

from __future__ import annotations

import gc
import weakref
from types import ModuleType

from acl_lab.constants import ACL_MEMCPY_HOST_TO_DEVICE
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
