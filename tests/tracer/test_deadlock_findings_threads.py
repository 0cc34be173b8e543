"""A deadlock between two threads becomes one ``deadlock`` finding with both threads named."""

from __future__ import annotations

import threading
from types import ModuleType

import pytest

from acl_lab import DeadlockError
from acl_lab.constants import ACL_CALLBACK_BLOCK, ACL_SUCCESS
from acl_lab.runtime.session import Session
from tests.acl.test_deadlocks import noop, wait_for_state
from tests.helpers import ok


def test_two_thread_deadlock_finding(ready: ModuleType, session: Session) -> None:
    """Main waits on stream A (callback for the worker), the worker on stream B (callback for
    main): the finding is at main's synchronize line and names both threads and streams."""
    ctx = ok(ready.rt.get_context())
    stream_a, stream_b = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    assert ready.rt.subscribe_report(threading.get_ident(), stream_b) == ACL_SUCCESS
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream_b) == ACL_SUCCESS
    stop = threading.Event()

    def body() -> None:
        ready.rt.set_context(ctx)
        ready.rt.synchronize_stream(stream_b)
        while not stop.is_set():
            ready.rt.process_report(20)

    tid = ok(ready.util.start_thread(body, None))
    assert ready.rt.subscribe_report(tid, stream_a) == ACL_SUCCESS
    assert ready.rt.launch_callback(noop, None, ACL_CALLBACK_BLOCK, stream_a) == ACL_SUCCESS
    wait_for_state(session, tid, "blocked")
    with pytest.raises(DeadlockError):
        line = _line() + 1
        ready.rt.synchronize_stream(stream_a)
    assert ready.rt.process_report(1000) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream_a) == ACL_SUCCESS
    stop.set()
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    found = [f for f in session.trace().findings() if f.kind == "deadlock"]
    assert len(found) == 1
    f = found[0]
    assert f.line == line and f.file == __file__
    assert "MainThread" in f.message and "acl-thread" in f.message
    assert f"{stream_a:#x}" in f.message


def _line() -> int:
    import inspect
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno
