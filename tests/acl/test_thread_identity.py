"""Host threads keep an identity Python never reuses.

CPython hands an exited thread's ident to the next thread it starts, so a registry keyed by
ident takes the new thread for the dead one. That once made a correct program (a plain worker
thread, then ``acl.util.start_thread`` + ``stop_thread``) die with a false DeadlockError
("... has exited") whenever the idents happened to collide. ``ReusedIdents`` makes the
collision certain instead of a matter of scheduling: every thread started after another one
exited gets the exited thread's ident, as the OS does when it recycles a pthread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

import acl_lab
from acl_lab.runtime import session as session_module
from acl_lab.runtime.kinds import Turn
from acl_lab.runtime.session import Session
from tests.helpers import ok

ACL_SUCCESS = 0


class ReusedIdents:
    """Deterministic thread idents: a new thread takes the smallest ident of an exited one."""

    def __init__(self) -> None:
        self.of: dict[threading.Thread, int] = {}
        self.next = 1000
        self.lock = threading.Lock()

    def ident(self, t: threading.Thread) -> int | None:
        """The fake ident of ``t`` (None before it started, like ``Thread.ident``)."""
        if t.__dict__.get("_ident") is None:
            return None
        with self.lock:
            fid = self.of.get(t)
            if fid is None:
                alive = {v for k, v in self.of.items() if k.is_alive()}
                free = sorted({v for k, v in self.of.items() if not k.is_alive()} - alive)
                if free:
                    fid = free[0]
                else:
                    fid = self.next
                    self.next += 1
                self.of[t] = fid
            return fid


class _ThreadingProxy:
    """``threading`` as the session module sees it, with ``get_ident`` from ReusedIdents."""

    def __init__(self, idents: ReusedIdents) -> None:
        self._idents = idents

    def get_ident(self) -> int:
        fid = self._idents.ident(threading.current_thread())
        assert fid is not None
        return fid

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


@pytest.fixture
def reused_idents(monkeypatch: pytest.MonkeyPatch) -> Iterator[ReusedIdents]:
    """Every thread ident the emulator can read comes from one ReusedIdents."""
    idents = ReusedIdents()
    monkeypatch.setattr(threading.Thread, "ident", property(idents.ident))
    monkeypatch.setattr(session_module, "threading", _ThreadingProxy(idents))
    yield idents


@pytest.fixture
def acl() -> Iterator[ModuleType]:
    """The emulated acl module on a fresh session (a long watchdog: only a real deadlock)."""
    mod = acl_lab.install()
    with Session(watchdog=30.0):
        yield mod
    acl_lab.uninstall()


def _main_blocked(session: Session) -> bool:
    with session.lock:
        th = session.threads.get(threading.main_thread())
        return th is not None and th.turn == Turn.BLOCKED


def _plain_then_acl_thread(acl: ModuleType) -> tuple[threading.Thread, int, list[Any]]:
    """The program of the bug report: a plain worker, then start_thread + stop_thread."""
    session = session_module.current_session()
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    ctx = ok(acl.rt.get_context())
    plain_result: list[int] = []

    def plain() -> None:
        assert threading.current_thread().ident is not None  # its ident, while it lives
        plain_result.append(acl.rt.set_context(ctx))
        plain_result.append(ok(acl.rt.get_device()))

    p = threading.Thread(target=plain, name="plain-worker")
    p.start()
    p.join()
    assert plain_result == [ACL_SUCCESS, 0]

    go = threading.Event()
    seen: list[Any] = []

    def worker(_: object) -> None:
        # Call nothing until the main thread is blocked in stop_thread: at that moment the
        # only host thread the emulator knows under this ident is the exited plain worker.
        go.wait(60)
        seen.append(acl.rt.set_context(ctx))
        seen.append(threading.current_thread())

    tid = ok(acl.util.start_thread(worker, 0))

    def release_when_main_blocks() -> None:
        deadline = time.monotonic() + 60
        while not _main_blocked(session) and time.monotonic() < deadline:
            time.sleep(0.001)
        go.set()

    helper = threading.Thread(target=release_when_main_blocks, daemon=True)
    helper.start()
    assert acl.util.stop_thread(tid) == ACL_SUCCESS
    helper.join(60)
    return p, tid, seen


def test_stop_thread_after_an_exited_thread_with_the_same_ident(
        reused_idents: ReusedIdents, acl: ModuleType) -> None:
    """No false DeadlockError when the joined worker got an exited thread's ident."""
    p, tid, seen = _plain_then_acl_thread(acl)
    assert reused_idents.of[p] == tid, "the fixture must make the idents collide"
    assert seen[0] == ACL_SUCCESS
    session = session_module.current_session()
    worker_th = session.threads[seen[1]]
    plain_th = session.threads[p]
    assert worker_th is not plain_th
    assert worker_th.started_by_acl and not plain_th.started_by_acl
    trace = session.trace()
    assert not [f for f in trace.findings() if f.kind == "deadlock"]
    names = [trace.string(int(n)) for n in trace.threads["name"]]
    assert "plain-worker" in names and any(n.startswith("acl-thread-") for n in names)


def test_worker_clock_starts_at_its_parent_not_at_the_dead_thread(
        reused_idents: ReusedIdents, acl: ModuleType) -> None:
    """start_thread's worker inherits the starter's clock even under a reused ident."""
    p, _, seen = _plain_then_acl_thread(acl)
    session = session_module.current_session()
    worker_th = session.threads[seen[1]]
    assert worker_th.ident == reused_idents.of[p]
    assert worker_th.idx != session.threads[p].idx


def test_subscribe_report_by_a_reused_ident_names_the_live_thread(
        reused_idents: ReusedIdents, acl: ModuleType) -> None:
    """subscribe_report(tid) binds the running thread, not an exited one with that tid."""
    session = session_module.current_session()
    assert acl.init() == ACL_SUCCESS
    assert acl.rt.set_device(0) == ACL_SUCCESS
    stream = ok(acl.rt.create_stream())
    codes: list[int] = []

    def plain() -> None:
        assert threading.current_thread().ident is not None  # its ident, while it lives
        codes.append(acl.rt.get_device()[1])  # no context in this thread: 107002

    p = threading.Thread(target=plain, name="plain-worker")
    p.start()
    p.join()
    assert codes == [107002]
    assert p in session.threads
    stop = threading.Event()
    live = threading.Thread(target=lambda: stop.wait(60), name="report-thread")
    live.start()
    try:
        tid = live.ident
        assert tid == reused_idents.of[p]
        assert acl.rt.subscribe_report(tid, stream) == ACL_SUCCESS
        stream_obj = session.handles[stream]
        assert stream_obj.subscriber.pythread is live
        assert acl.rt.unsubscribe_report(tid, stream) == ACL_SUCCESS
    finally:
        stop.set()
        live.join(60)


def test_repeated_runs_with_real_idents() -> None:
    """The same program with the real (reused) idents, many times: never a DeadlockError."""
    mod = acl_lab.install()
    try:
        for _ in range(20):
            with Session(watchdog=30.0) as s:
                p, _, seen = _plain_then_acl_thread(mod)
                assert seen[0] == ACL_SUCCESS
                assert s.threads[seen[1]] is not s.threads[p]
    finally:
        acl_lab.uninstall()
