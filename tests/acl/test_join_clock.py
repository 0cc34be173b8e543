"""A plain ``threading.Thread.join`` orders virtual time (issue 17, "time that lies").

The main thread that joins its workers and then tears down must not appear, on the virtual
clocks, at the same time as the workers' calls: after the join its calls come after theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from types import ModuleType

import pytest

import acl_lab
from acl_lab.runtime.session import Session
from tests.helpers import ok

NORMAL_ONLY = 2


@pytest.fixture
def acl() -> Iterator[tuple[ModuleType, Session]]:
    """The emulated module on a fresh session."""
    mod = acl_lab.install()
    with Session(watchdog=30.0) as s:
        yield mod, s
    acl_lab.uninstall()


def _calls(s: Session, name: str) -> list[tuple[int, int, int]]:
    """(thread, start_ns, end_ns) of every call named ``name``."""
    t = s.trace()
    c = t.calls
    return [(int(c["thread"][i]), int(c["start_ns"][i]), int(c["end_ns"][i]))
            for i in range(c.rows) if t.call_name(i) == name]


def test_teardown_after_join_comes_after_the_workers(
        acl: tuple[ModuleType, Session]) -> None:
    """Workers allocate and copy (their clocks run ahead); after join, main's call is later."""
    mod, s = acl
    assert mod.init() == 0
    assert mod.rt.set_device(0) == 0
    ctx = ok(mod.rt.get_context())

    def worker() -> None:
        assert mod.rt.set_context(ctx) == 0
        for _ in range(50):
            p = ok(mod.rt.malloc(1 << 20, NORMAL_ONLY))
            assert mod.rt.memset(p, 1 << 20, 0, 1 << 20) == 0
            assert mod.rt.free(p) == 0

    workers = [threading.Thread(target=worker, name=f"worker-{k}") for k in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert mod.rt.reset_device(0) == 0
    worker_end = max(end for th, _, end in _calls(s, "acl.rt.free") if th != 0)
    (main_thread, reset_start, _), = _calls(s, "acl.rt.reset_device")
    assert main_thread == 0
    assert reset_start >= worker_end


def test_join_of_a_thread_that_made_no_acl_call_moves_to_its_end(
        acl: tuple[ModuleType, Session]) -> None:
    """A thread that calls nothing still takes part in the schedule: it starts
    ``thread_start_ns`` after its ``Thread.start`` and ends there, so the joiner continues
    from that moment, and from nothing else (the two host operations cost ``py_sync_ns``,
    the join's own cost is inside the wait)."""
    mod, s = acl
    assert mod.init() == 0
    assert mod.rt.set_device(0) == 0
    with s.lock:
        before = s.threads[threading.main_thread()].clock
    idle = threading.Thread(target=lambda: None, name="idle")
    idle.start()
    idle.join()
    p = s.profile
    with s.lock:
        assert s.threads[threading.main_thread()].clock == \
            before + p.py_sync_ns + p.thread_start_ns
    # main's join comes first in virtual time (the thread starts later): it waits there
    names = [s.trace().call_name(c) for c in range(s.trace().calls.rows)]
    assert names[-4:] == ["threading.Thread.start", "threading.Thread.join",
                          "threading.Thread.begin", "threading.Thread.end"]
