"""The hooks the runtime publishes; the trace recorder (and graders) subscribe.

The runtime calls ``session.hooks.<name>(...)``. With no subscriber a hook is a no-op; with one
it is that subscriber's bound method (no dispatch cost); with several, a small fan-out.
Subscribers implement any subset of the names in ``HOOK_NAMES`` (duck typing), so this module
imports nothing from the tracer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HOOK_NAMES = (
    "on_thread",        # (thread)
    "on_call_begin",    # (call_id, name, thread_idx, ctx_oid, file, line, start_ns, args, ptrs)
    "on_call_end",      # (call_id, end_ns, ret)
    "on_object",        # (oid, kind, handle, device, ctx_oid, flags, call_id, label)
    "on_destroy",       # (oid, call_id, how)
    "on_alloc",         # (region, call_id)
    "on_free",          # (region, call_id, how)
    "on_task",          # (task)           submitted
    "on_task_placed",   # (task)           start/end known
    "on_task_status",   # (task)           failed while executing
    "on_uninit",        # (task, region, nbytes, first)  read bytes never written
    "on_landed",        # (task, region, offset, data)  a copy's bytes landed (at its end)
    "on_edge",          # (record_task_id, wait_task_id)
    "on_sync",          # (call_id, kind, target_oid, start_ns, end_ns)
    "on_callback",      # (task_id, thread_idx, start_ns, end_ns)
    "on_diag",          # (call_id, level, kind, message)
)


def _noop(*args: Any) -> None:
    return None


class Hooks:
    """Named hook slots; ``subscribe`` wires a subscriber's methods into them."""

    def __init__(self) -> None:
        self._subs: list[Any] = []
        for name in HOOK_NAMES:
            setattr(self, name, _noop)

    def subscribe(self, subscriber: Any) -> None:
        """Add a subscriber; its methods named like hooks receive the events."""
        self._subs.append(subscriber)
        self._rewire()

    def unsubscribe(self, subscriber: Any) -> None:
        """Remove a subscriber."""
        self._subs.remove(subscriber)
        self._rewire()

    def _rewire(self) -> None:
        for name in HOOK_NAMES:
            fns = [getattr(s, name) for s in self._subs if hasattr(s, name)]
            if not fns:
                setattr(self, name, _noop)
            elif len(fns) == 1:
                setattr(self, name, fns[0])
            else:
                setattr(self, name, _fanout(fns))

    def __getattr__(self, name: str) -> Callable[..., None]:  # for type checkers
        raise AttributeError(name)


def _fanout(fns: list[Callable[..., None]]) -> Callable[..., None]:
    def call_all(*args: Any) -> None:
        for f in fns:
            f(*args)
    return call_all


class TaskLog:
    """A hook subscriber that keeps every submitted task (the Session itself does not).

    ``log = TaskLog(); session.hooks.subscribe(log)`` then ``log.tasks`` lists the Task
    objects in submission order (their start and end fill in as they are placed). For
    measurements and tests that need task fields the trace does not hold (booked units,
    labels); unsubscribe it when done.
    """

    def __init__(self) -> None:
        self.tasks: list[Any] = []

    def on_task(self, t: Any) -> None:
        """Keep ``t``."""
        self.tasks.append(t)
