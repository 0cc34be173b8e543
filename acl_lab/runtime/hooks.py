"""The hooks the runtime publishes; the trace recorder (and graders) subscribe.

``RuntimeHooks`` declares every hook once, as a ``typing.Protocol``: its signature and what the
runtime passes (``TraceHooks``, every hook but ``on_landed``, is what a trace records: it keeps
no bytes). The runtime calls ``session.hooks.<name>(...)`` (a ``Hooks``, which mypy checks
against the Protocol); with no subscriber a hook is a no-op, with one it is that subscriber's
bound method (no dispatch cost), with several a small fan-out. A subscriber implements any
subset of the hooks (``TaskLog`` only ``on_task``); the trace recorder implements
``TraceHooks`` and mypy checks it against that Protocol (``tracer/__init__``). This module
imports nothing from the tracer.

Arguments are positional (the runtime never names them), so a subscriber may name its
parameters as it likes. Kinds are the ``kinds`` enums' values: ``on_object``'s ``kind`` is an
``ObjectKind``, ``on_destroy``/``on_free``'s ``how`` an ``Ending``, ``on_sync``'s ``kind`` a
``SyncKind``; a region's ``kind`` an ``AllocKind``, a task's ``kind`` a ``TaskKind``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .memory import Region
    from .objects import HostThread, Task


class TraceHooks(Protocol):
    """Every hook the runtime calls but ``on_landed``, in the order a call's events usually
    come: everything a trace records.

    Each method's body is the no-op a hook is without subscribers.
    """

    def on_thread(self, thread: HostThread, /) -> None:
        """A Python thread called into the emulator for the first time."""
        return None

    def on_call_begin(self, call_id: int, name: str, thread_idx: int, ctx_oid: int, file: str,
                      line: int, start_ns: int, args: tuple[Any, ...], fmt: str, /) -> None:
        """An API call began: its id, API name, thread, current context (``-1``: none), the
        program's call site, virtual start time, arguments and their format (the binding's
        letters, ``acl._boundary``: ``p`` marks a pointer; the arguments are already parsed,
        so an integer letter's argument is an int; ``""`` for a call that is not a pyACL
        function, whose arguments may be anything)."""
        return None

    def on_call_end(self, call_id: int, end_ns: int, ret: int, /) -> None:
        """The call ``call_id`` returned ``ret`` at ``end_ns``."""
        return None

    def on_object(self, oid: int, kind: int, handle: int, device: int, ctx_oid: int,
                  flags: int, call_id: int, label: str, /) -> None:
        """A handle object was created (``kind``: an ``ObjectKind``)."""
        return None

    def on_destroy(self, oid: int, call_id: int, how: int, /) -> None:
        """The object ``oid`` ended (``how``: an ``Ending``)."""
        return None

    def on_alloc(self, region: Region, call_id: int, /) -> None:
        """A region was allocated or registered (device, pinned, DVPP or pageable host)."""
        return None

    def on_free(self, region: Region, call_id: int, how: int, /) -> None:
        """A region was freed (``how``: an ``Ending``)."""
        return None

    def on_task(self, task: Task, /) -> None:
        """A task was submitted. When it was placed at once its start and end are set
        (``task.end >= 0``) and no ``on_task_placed`` follows; else they are -1 until it is
        placed."""
        return None

    def on_task_placed(self, task: Task, /) -> None:
        """A task that waited after its submission got its start and end in virtual time."""
        return None

    def on_task_status(self, task: Task, /) -> None:
        """A task failed while executing (``task.status``, ``task.reason``)."""
        return None

    def on_uninit(self, task: Task, region: Region, nbytes: int, first: int, /) -> None:
        """``task`` read ``nbytes`` never-written bytes of ``region``, the first at offset
        ``first``."""
        return None

    def on_edge(self, record_task_id: int, wait_task_id: int, /) -> None:
        """A stream_wait_event task waits for that event record task."""
        return None

    def on_host_edge(self, src_call_id: int, dst_call_id: int, kind: int, /) -> None:
        """Two host threads are ordered: everything the thread of call ``src_call_id`` did up
        to it happens before call ``dst_call_id`` of another thread (``kind``: a
        ``HostEdge``: a thread's start, a join, a lock, an event, a queue item, ...)."""
        return None

    def on_sync(self, call_id: int, kind: int, target_oid: int, start_ns: int, end_ns: int,
                /) -> None:
        """A host wait of ``kind`` (a ``SyncKind``) on ``target_oid`` (``-1``: none) ran from
        ``start_ns`` to ``end_ns``."""
        return None

    def on_callback(self, task_id: int, thread_idx: int, start_ns: int, end_ns: int, /) -> None:
        """A callback task's host code ran on thread ``thread_idx``."""
        return None

    def on_diag(self, call_id: int, level: int, kind: str, message: str, /) -> None:
        """The runtime diagnosed the call (``level``: note, warning, error, fatal)."""
        return None


class RuntimeHooks(TraceHooks, Protocol):
    """Every hook the runtime calls: ``TraceHooks`` and the bytes of copies."""

    def on_landed(self, task: Task, region: Region, offset: int, data: bytes, /) -> None:
        """A copy's bytes landed in ``region`` at ``offset`` (at the copy's end): for
        subscribers that follow data (grading's provenance, the transport's host mirror)."""
        return None


#: The hooks' names, from the Protocols (subscribers are matched by these names).
HOOK_NAMES: tuple[str, ...] = tuple(n for cls in (TraceHooks, RuntimeHooks) for n in vars(cls)
                                    if n.startswith("on_"))


def _noop(*args: Any) -> None:
    return None


class Hooks(RuntimeHooks):
    """Named hook slots; ``subscribe`` wires a subscriber's methods into them."""

    def __init__(self) -> None:
        self._subs: list[object] = []
        for name in HOOK_NAMES:
            setattr(self, name, _noop)

    def subscribe(self, subscriber: object) -> None:
        """Add a subscriber; its methods named like hooks receive the events."""
        self._subs.append(subscriber)
        self._rewire()

    def unsubscribe(self, subscriber: object) -> None:
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
        self.tasks: list[Task] = []

    def on_task(self, t: Task) -> None:
        """Keep ``t``."""
        self.tasks.append(t)
