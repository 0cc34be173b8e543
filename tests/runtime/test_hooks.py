"""The runtime's hooks: one Protocol declares them, subscribers get the hooks they implement."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import acl_lab
from acl_lab.constants import ACL_EVENT_SYNC
from acl_lab.runtime.hooks import HOOK_NAMES, Hooks, RuntimeHooks, TaskLog, TraceHooks
from acl_lab.runtime.kinds import SyncKind, TaskKind
from acl_lab.runtime.session import Session
from acl_lab.tracer.recorder import Recorder

PACKAGE = Path(acl_lab.__file__).parent


class _Syncs:
    """A subscriber of one hook."""

    def __init__(self) -> None:
        self.kinds: list[int] = []

    def on_sync(self, call: int, kind: int, target: int, start: int, end: int) -> None:
        self.kinds.append(kind)


def _run(s: Session) -> None:
    acl = acl_lab.install(s)
    try:
        assert acl.init() == 0
        assert acl.rt.set_device(0) == 0
        stream, ret = acl.rt.create_stream()
        assert ret == 0
        dev, ret = acl.rt.malloc(64, 2)
        assert ret == 0
        assert acl.rt.memset_async(dev, 64, 1, 64, stream) == 0
        assert acl.rt.synchronize_stream(stream) == 0
        assert acl.rt.free(dev) == 0
        assert acl.rt.destroy_stream(stream) == 0
        assert acl.rt.reset_device(0) == 0
        assert acl.finalize() == 0
    finally:
        acl_lab.uninstall()


def test_hook_names_are_the_protocols_methods() -> None:
    """HOOK_NAMES lists each Protocol method once; TraceHooks is all of them but on_landed."""
    methods = {n for n, _ in inspect.getmembers(RuntimeHooks, inspect.isfunction)
               if n.startswith("on_")}
    assert set(HOOK_NAMES) == methods and len(HOOK_NAMES) == len(methods)
    trace = {n for n, _ in inspect.getmembers(TraceHooks, inspect.isfunction)
             if n.startswith("on_")}
    assert methods - trace == {"on_landed"}


def test_every_hook_is_called_by_the_runtime_and_the_recorder_has_the_trace_hooks() -> None:
    """No hook is declared that the runtime never calls, and the recorder records each one of
    TraceHooks (mypy checks their signatures)."""
    called: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if "tracer" not in path.parts:
            called |= set(re.findall(r"\bhooks\.(on_\w+)\(", path.read_text()))
    assert called == set(HOOK_NAMES)
    trace = [n for n in HOOK_NAMES if n != "on_landed"]
    assert all(callable(getattr(Recorder, n, None)) for n in trace)


def test_subscribers_get_the_hooks_they_implement_until_they_unsubscribe() -> None:
    """A one-hook subscriber receives that hook; two subscribers both receive it; after
    unsubscribing, a subscriber receives nothing more."""
    with Session(record=False) as s:
        syncs, log = _Syncs(), TaskLog()
        s.hooks.subscribe(syncs)
        s.hooks.subscribe(log)
        other = _Syncs()
        s.hooks.subscribe(other)
        _run(s)
        assert SyncKind.STREAM in syncs.kinds and syncs.kinds == other.kinds
        assert [t.kind for t in log.tasks] == [TaskKind.MEMSET]
        s.hooks.unsubscribe(other)
        seen = len(other.kinds)
        _run(s)
        assert len(other.kinds) == seen and len(syncs.kinds) == 2 * seen
        s.hooks.unsubscribe(syncs)
        s.hooks.unsubscribe(log)


def test_a_hook_without_subscribers_is_a_no_op() -> None:
    """Every slot of a fresh Hooks accepts its arguments and does nothing."""
    h = Hooks()
    for name in HOOK_NAMES:
        n = len(inspect.signature(getattr(RuntimeHooks, name)).parameters) - 1
        args: list[Any] = [0] * n
        assert getattr(h, name)(*args) is None


class _Placements:
    """Each task's announcements: ("task", end known?) and ("placed",) in hook order."""

    def __init__(self) -> None:
        self.events: dict[int, list[tuple[Any, ...]]] = {}

    def on_task(self, t: Any) -> None:
        self.events.setdefault(t.id, []).append(("task", t.end >= 0))

    def on_task_placed(self, t: Any) -> None:
        self.events.setdefault(t.id, []).append(("placed", t.end >= 0))


def test_a_task_placed_at_submission_is_announced_once_with_its_times() -> None:
    """A copy that runs at once: one on_task with its start and end. A copy queued behind a
    wait: on_task without times, then on_task_placed when the record lets it run."""
    log = _Placements()
    with Session() as s:
        s.hooks.subscribe(log)
        acl = acl_lab.install(s)
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        s1, s2, s3 = (acl.rt.create_stream()[0] for _ in range(3))
        ev, _ = acl.rt.create_event_with_flag(ACL_EVENT_SYNC)
        host, _ = acl.rt.malloc_host(64)
        assert acl.rt.memset(host, 64, 1, 64) == 0
        dev, _ = acl.rt.malloc(64, 2)
        first = s.task_count
        assert acl.rt.memcpy_async(dev, 64, host, 64, 1, s1) == 0     # runs at once
        assert acl.rt.record_event(ev, s1) == 0
        assert acl.rt.synchronize_stream(s1) == 0
        assert acl.rt.reset_event(ev, s3) == 0
        assert acl.rt.synchronize_stream(s3) == 0
        assert acl.rt.stream_wait_event(s2, ev) == 0   # reset: needs the next record
        behind = s.task_count
        assert acl.rt.memcpy_async(dev, 64, host, 64, 1, s2) == 0     # queued behind it
        assert acl.rt.record_event(ev, s1) == 0                       # lets both run
        assert acl.rt.synchronize_stream(s2) == 0
        trace = s.trace()
    assert log.events[first] == [("task", True)]
    assert log.events[behind] == [("task", False), ("placed", True)]
    # the trace has both tasks' times either way
    assert int(trace.tasks["end_ns"][first]) > 0 and int(trace.tasks["end_ns"][behind]) > 0
