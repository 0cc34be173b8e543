"""``ordering.stuck_on``: the one reading of what a stuck stream waits for, which the
deadlock finding writes as sentences and the wait graph draws as edges."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from acl_lab import DeadlockError
from acl_lab.constants import ACL_EVENT_SYNC, ACL_SUCCESS
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks.ordering import (
    CALLBACK,
    RECORD_STUCK,
    RERECORD_STUCK,
    RESET_FOREVER,
    deadlocks,
    stuck_on,
)
from acl_lab.tracer.views.graphs import wait_graph
from tests.acl.test_deadlocks import (
    blocked_by_exited_subscriber,
    event_cycle,
    waits_on_reset_event,
)
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)


def record_behind_a_wait(acl: ModuleType) -> int:
    """A wait whose record is queued behind a wait on a reset event: the record is stuck,
    and the chain follows its stream."""
    a, b = (ok(acl.rt.create_event_with_flag(ACL_EVENT_SYNC)) for _ in range(2))
    s1, s2, resetter = (ok(acl.rt.create_stream()) for _ in range(3))
    assert acl.rt.record_event(b, resetter) == ACL_SUCCESS
    assert acl.rt.reset_event(b, resetter) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(resetter) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s1, b) == ACL_SUCCESS  # b was reset: never again
    assert acl.rt.record_event(a, s1) == ACL_SUCCESS       # stuck behind that wait
    assert acl.rt.stream_wait_event(s2, a) == ACL_SUCCESS
    return s2


CASES: list[tuple[Callable[[ModuleType], int], list[str]]] = [
    (waits_on_reset_event, [RESET_FOREVER]),
    (lambda acl: event_cycle(acl)[0], [RERECORD_STUCK, RECORD_STUCK]),
    (blocked_by_exited_subscriber, [CALLBACK]),
    (record_behind_a_wait, [RECORD_STUCK, RESET_FOREVER]),
]


@pytest.mark.parametrize(("build", "want"), CASES,
                         ids=["reset_event", "event_cycle", "callback", "record_behind_wait"])
def test_each_step_of_the_chain(ready: ModuleType, session: Session,
                                build: Callable[[ModuleType], int], want: list[str]) -> None:
    stream = build(ready)
    with pytest.raises(DeadlockError):
        ready.rt.synchronize_stream(stream)
    trace = session.trace()
    (f,) = deadlocks(trace)
    steps = [stuck_on(trace, t) for t in sorted(f.ids["tasks"])]
    assert sorted(b.kind for b in steps) == sorted(want)
    fig = wait_graph(f, trace)
    edges = {tuple(e) for e in fig.layout.meta["edges"]}
    for b in steps:
        if b.next_stream >= 0:  # the chain goes on: the graph has the event -> stream edge
            assert (f"e{b.event}", f"s{b.next_stream}") in edges
        if b.kind == RESET_FOREVER:
            assert (f"e{b.event}", f"never{b.event}") in edges
            assert b.reset > b.record >= 0
        if b.kind == RERECORD_STUCK:
            assert b.record < b.reset < b.next_record
        if b.kind == CALLBACK:
            assert (f"c{b.head}", f"never_cb{b.head}") in edges
