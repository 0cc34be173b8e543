"""The operating system's own threading primitives, as they were before ``acl_lab.install``.

``acl_lab.install`` puts the emulator's primitives in place of ``threading.Lock``,
``threading.Condition``, ``queue.Queue`` and their kin, and routes ``Thread.start`` /
``Thread.join`` through the host scheduler, so that the *program's* threads take turns
(``hostsched``). acl_lab's own machinery (the session lock, the scheduler's turn handover,
the transport's mailboxes, the watchdog, the grading runner's time limit) must keep using
the real ones whatever is installed: it takes them from here. The names are bound when
acl_lab is imported, before anything can be replaced.
"""

from __future__ import annotations

import _thread
import queue
import threading
import time
from typing import Any

#: ``threading.Lock`` (a ``_thread.lock``).
Lock = _thread.allocate_lock
#: ``threading.RLock`` (the C implementation).
RLock = _thread.RLock
#: ``threading.Condition``. Safe with an explicit real lock: its ``wait`` makes its waiter
#: locks with ``threading._allocate_lock``, which install never replaces.
Condition = threading.Condition
#: ``queue.SimpleQueue`` (the C implementation).
SimpleQueue = queue.SimpleQueue
#: The real ``time`` functions.
sleep = time.sleep
monotonic = time.monotonic
perf_counter = time.perf_counter

_thread_start = threading.Thread.start
_thread_join = threading.Thread.join


class Event:
    """``threading.Event`` built only from real primitives (the standard one builds itself
    from ``threading.Condition(threading.Lock())`` when it is made, which may be the
    emulator's by then)."""

    def __init__(self) -> None:
        self._cond = Condition(Lock())
        self._flag = False

    def is_set(self) -> bool:
        """Whether the flag is set."""
        return self._flag

    def set(self) -> None:
        """Set the flag and wake every waiter."""
        with self._cond:
            self._flag = True
            self._cond.notify_all()

    def clear(self) -> None:
        """Clear the flag."""
        with self._cond:
            self._flag = False

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the flag (real time); returns it."""
        with self._cond:
            if not self._flag:
                self._cond.wait(timeout)
            return self._flag


def start(t: threading.Thread) -> None:
    """Start ``t`` as the operating system would, outside the host scheduler (acl_lab's own
    threads: the watchdog, the transport's mailboxes)."""
    if getattr(getattr(t, "_started", None), "_flag", False):
        raise RuntimeError("threads can only be started once")
    t._started = Event()  # type: ignore[attr-defined]  # its start handshake stays real
    _thread_start(t)


def join(t: threading.Thread, timeout: float | None = None) -> None:
    """``threading.Thread.join`` as it was before install."""
    _thread_join(t, timeout)


def thread(target: Any, name: str, args: tuple[Any, ...] = (), daemon: bool = True
           ) -> threading.Thread:
    """A started thread of acl_lab's own (never part of a program's schedule)."""
    t = threading.Thread(target=target, args=args, name=name, daemon=daemon)
    start(t)
    return t
