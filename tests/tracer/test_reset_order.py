"""A reset_event must be ordered after the record it undoes and every wait on that record:
otherwise timing decides whether it clears nothing or strands a waiting stream."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

import pytest

from acl_lab.constants import ACL_EVENT_SYNC, ACL_SUCCESS
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import run_checks
from acl_lab.tracer.checks.ordering import resets_unordered
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)


def next_line() -> int:
    """The line number just after the caller's line."""
    return sys._getframe(1).f_lineno + 1


def setup(acl: ModuleType, n: int = 3) -> tuple[int, list[int]]:
    """An event (sync flag) and ``n`` streams."""
    return (ok(acl.rt.create_event_with_flag(ACL_EVENT_SYNC)),
            [ok(acl.rt.create_stream()) for _ in range(n)])


def reset_on_a_bystander(acl: ModuleType) -> int:
    """Recorded on s1, awaited on s2, reset on s3 which never waited: unordered."""
    ev, (s1, s2, s3) = setup(acl)
    assert acl.rt.record_event(ev, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev) == ACL_SUCCESS
    line = next_line()
    assert acl.rt.reset_event(ev, s3) == ACL_SUCCESS
    return line


def reset_before_the_other_wait_ran(acl: ModuleType) -> int:
    """Two waiting streams; the reset follows only the first one's wait."""
    ev, (s1, s2, s3) = setup(acl)
    assert acl.rt.record_event(ev, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s3, ev) == ACL_SUCCESS
    line = next_line()
    assert acl.rt.reset_event(ev, s2) == ACL_SUCCESS
    return line


@pytest.mark.parametrize("program", [reset_on_a_bystander, reset_before_the_other_wait_ran])
def test_an_unordered_reset_is_reported_at_its_line(ready: ModuleType, session: Session,
                                                    program: Callable[[ModuleType], int]
                                                    ) -> None:
    line = program(ready)
    assert ready.rt.synchronize_device() == ACL_SUCCESS
    found = resets_unordered(session.trace())
    assert [(f.kind, f.severity, f.line) for f in found] == [
        ("reset_unordered", "warning", line)]
    assert "is not ordered after" in found[0].message and "Fix:" in found[0].message
    assert found[0] in run_checks(session.trace())


def ordered_on_the_recording_stream(acl: ModuleType) -> None:
    ev, (s1, s2, _) = setup(acl)
    assert acl.rt.record_event(ev, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(s2) == ACL_SUCCESS  # the wait has run
    assert acl.rt.reset_event(ev, s1) == ACL_SUCCESS


def ordered_after_the_only_wait(acl: ModuleType) -> None:
    ev, (s1, s2, _) = setup(acl)
    assert acl.rt.record_event(ev, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev) == ACL_SUCCESS
    assert acl.rt.reset_event(ev, s2) == ACL_SUCCESS


def ordered_by_the_hosts_synchronize(acl: ModuleType) -> None:
    ev, (s1, s2, s3) = setup(acl)
    assert acl.rt.record_event(ev, s1) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s2, ev) == ACL_SUCCESS
    assert acl.rt.stream_wait_event(s3, ev) == ACL_SUCCESS
    for s in (s2, s3):
        assert acl.rt.synchronize_stream(s) == ACL_SUCCESS
    assert acl.rt.reset_event(ev, s3) == ACL_SUCCESS


@pytest.mark.parametrize("program", [ordered_on_the_recording_stream,
                                     ordered_after_the_only_wait,
                                     ordered_by_the_hosts_synchronize])
def test_an_ordered_reset_is_silent(ready: ModuleType, session: Session,
                                    program: Callable[[ModuleType], None]) -> None:
    program(ready)
    assert ready.rt.synchronize_device() == ACL_SUCCESS
    assert resets_unordered(session.trace()) == []
