"""Run a learner's function once, in a fresh Session, with a time limit: the graded ``Run``.

``run_exercise`` is the only place that executes learner code for grading (``check()`` in a
notebook and ``acl-lab grade`` both call it). It never lets the learner's exception escape: a
raised exception (``DeadlockError``, ``KeyboardInterrupt`` and ``SystemExit`` included) becomes
``Run.error`` text, and a function that runs past its time limit is stopped and reported as
``timed_out``. It does not judge anything; ``report.grade_run`` does.

``run_exercise_remote`` is the same for ``acl-lab grade``'s worker, whose calls go through the
pipe transport: the Session and its trace live in the emulator server, outside the sandbox.

How the time limit works: the function runs in a daemon worker thread, which also creates the
fresh Session, so the caller's thread counts as a background thread for the emulator's
deadlock detection (a wait nobody can satisfy is reported at once, not after the watchdog).
On timeout the Session is closed (threads blocked in the emulator wake up with a
``DeadlockError``) and an exception is injected into the worker with
``PyThreadState_SetAsyncExc``, so a pure-Python infinite loop stops too. A thread stuck inside a
C call (``time.sleep(10**6)``) only stops when that call returns; the run is reported anyway.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..runtime import rawsync
from ..runtime.session import Session, current_session, set_current_session
from .provenance import LandedLog
from .rubric import Exercise, Run, get_exercise

#: Seconds a multi-threaded emulator wait may make no progress before it is a deadlock.
WATCHDOG_S = 3.0
#: Seconds to wait for the worker to stop once its time is up.
STOP_GRACE_S = 2.0
#: Seconds to wait for the emulator lock before freezing the trace without it.
LOCK_GRACE_S = 10.0


class TimeLimitExceeded(BaseException):
    """Injected into a learner's thread when its time is up.

    A ``BaseException`` so that a learner's ``except Exception:`` cannot swallow it.
    """


@dataclass
class _Attempt:
    """What the worker thread reports back to the grading thread."""

    session: Session | None = None
    landed: LandedLog | None = None
    setup_error: BaseException | None = None
    in_fn: bool = False
    returned: bool = False
    result: Any = None
    error: str | None = None


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` (just ``"TypeName"`` when the message is empty)."""
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def new_seed() -> int:
    """A fresh random seed from ``os.urandom`` (31 bits, so numpy accepts it everywhere)."""
    return int.from_bytes(os.urandom(4), "little") & 0x7FFF_FFFF


def run_exercise(ex: Exercise | str, fn: Callable[..., Any], *, seed: int | None = None,
                 time_limit: float | None = None, schedule: int = 0) -> Run:
    """Run ``fn(*ex.make_args(seed))`` once in a fresh Session and record what happened.

    Args:
        ex: the exercise or its id.
        fn: the learner's function.
        seed: the seed the arguments are drawn from (default: a random one).
        time_limit: real seconds ``fn`` may run (default: ``ex.time_limit``).
        schedule: the host schedule's seed (``Exercise.schedules``: 0 .. schedules - 1).

    Returns:
        The ``Run``: result or error text, ``timed_out``, the frozen trace (leaks recorded by
        ``Session.finish()``), its findings and the bytes the copies back delivered
        (``landed``). ``violations`` is empty.

    Raises:
        Exception: whatever ``ex.make_args`` (or creating the Session) raised: a rubric bug,
            not the learner's.
    """
    exercise = get_exercise(ex) if isinstance(ex, str) else ex
    seed = new_seed() if seed is None else int(seed)
    limit = exercise.time_limit if time_limit is None else float(time_limit)
    state, timed_out = _attempt(exercise, fn, seed, limit, schedule=schedule)
    session = state.session
    assert session is not None  # set before args_ready
    trace = _finish(session)
    session.close()  # threads the learner started and left waiting wake up and exit
    if timed_out:
        error: str | None = _timed_out_text(limit)
        result = None
    else:
        error, result = state.error, (state.result if state.returned else None)
    landed = tuple(state.landed.landed) if state.landed is not None else ()
    return Run(exercise.id, seed, result, error, timed_out, trace, tuple(trace.findings()),
               landed=landed, schedule=schedule)


@dataclass
class RemoteRun:
    """What ``run_exercise_remote`` reports: the trace is the emulator server's to write."""

    result: Any
    error: str | None
    timed_out: bool


def run_exercise_remote(ex: Exercise | str, fn: Callable[..., Any], pipe: Any, index: int, *,
                        seed: int | None = None, time_limit: float | None = None) -> RemoteRun:
    """``run_exercise`` through the pipe transport: the emulator server opens exercise
    ``index``'s fresh Session at ``pipe.begin(index)`` and records and writes its trace at
    ``pipe.end(index)``; this side runs ``fn`` with the same time limit and stop rules.

    Raises:
        Exception: whatever ``ex.make_args`` raised (a rubric bug, not the learner's).
    """
    exercise = get_exercise(ex) if isinstance(ex, str) else ex
    seed = new_seed() if seed is None else int(seed)
    limit = exercise.time_limit if time_limit is None else float(time_limit)
    state, timed_out = _attempt(exercise, fn, seed, limit, begin=lambda: pipe.begin(index),
                                close=lambda: pipe.end(index))
    if timed_out:  # the stop already ended the session
        return RemoteRun(None, _timed_out_text(limit), True)
    pipe.end(index)  # the server finishes the session (leaks recorded) and writes
    return RemoteRun(state.result if state.returned else None, state.error, False)


def _attempt(exercise: Exercise, fn: Callable[..., Any], seed: int, limit: float,
             begin: Callable[[], None] | None = None,
             close: Callable[[], None] | None = None,
             schedule: int = 0) -> tuple[_Attempt, bool]:
    """Run ``fn`` in the worker thread (``_work``) for up to ``limit`` seconds, stopping it
    (``_stop``) when time is up or the grader itself is interrupted.

    ``begin``/``close`` open and close a session that lives in the emulator server; without
    them the worker creates the fresh Session here. Returns what the worker reported and
    whether it was stopped for time.

    Raises:
        Exception: whatever setting up the run (``ex.make_args``, the Session) raised.
    """
    state = _Attempt()
    args_ready = rawsync.Event()  # the grader's own handshake, outside any schedule
    previous = current_session(create=False)
    worker = threading.Thread(target=_work, args=(exercise, fn, seed, state, args_ready, begin,
                                                  schedule), name="learner", daemon=True)
    worker._acl_lab_external = True  # type: ignore[attr-defined]  # it makes its own session
    timed_out = False
    try:
        worker.start()
        args_ready.wait()
        if state.setup_error is not None:
            worker.join()
            if state.session is not None:
                state.session.close()
            raise state.setup_error
        worker.join(limit)
        if worker.is_alive():
            timed_out = True
            _stop(worker, state, close)
    except BaseException:
        # The grader itself was interrupted (e.g. the kernel's interrupt button): stop the
        # learner's thread before giving up.
        if worker.is_alive():
            _stop(worker, state, close)
        raise
    finally:
        set_current_session(previous)
    return state, timed_out


def _timed_out_text(limit: float) -> str:
    """``Run.error`` of a run stopped at its time limit."""
    return (f"{TimeLimitExceeded.__name__}: the function did not finish within {limit:g} s "
            f"and was stopped")


def _work(ex: Exercise, fn: Callable[..., Any], seed: int, state: _Attempt,
          args_ready: Any, begin: Callable[[], None] | None = None,
          schedule: int = 0) -> None:
    """The worker thread: fresh Session, arguments, then the learner's function."""
    try:
        try:
            if begin is None:
                session = Session(profile=ex.profile, device_count=ex.device_count,
                                  watchdog=WATCHDOG_S, seed=schedule)
                state.session = session
                state.landed = LandedLog()
                session.hooks.subscribe(state.landed)
                set_current_session(session)
            else:
                begin()  # the emulator server opens the exercise's session
            import acl_lab

            acl_lab.install()
            args = tuple(ex.make_args(seed))
        except BaseException as exc:
            state.setup_error = exc
            return
        finally:
            args_ready.set()
        state.in_fn = True
        try:
            try:
                state.result = fn(*args)
                state.returned = True
            finally:
                state.in_fn = False
        except TimeLimitExceeded:
            pass
        except BaseException as exc:  # the learner's exception is the run's outcome
            state.error = describe_exception(exc)
    except TimeLimitExceeded:
        # A late injection landed after fn had already returned: nothing left to stop.
        pass


def _async_raise(thread: threading.Thread, exc: type[BaseException]) -> None:
    ident = thread.ident
    if ident is None:
        return
    n = ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(exc))
    if n > 1:  # pragma: no cover - CPython documents this as "revert and give up"
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)


def _stop(worker: threading.Thread, state: _Attempt,
          close: Callable[[], None] | None = None) -> None:
    """Close the session and interrupt the learner's function until the worker exits
    (``close``: how to close a session that lives in the emulator server)."""
    if state.session is not None:
        state.session.close()
    if close is not None:
        with contextlib.suppress(Exception):
            close()
    deadline = time.monotonic() + STOP_GRACE_S
    while worker.is_alive() and time.monotonic() < deadline:
        if state.in_fn:
            _async_raise(worker, TimeLimitExceeded)
        worker.join(0.05)


def _finish(session: Session) -> Any:
    """``session.finish()``; a trace of what was recorded if the learner's thread is stuck."""
    if session.lock.acquire(timeout=LOCK_GRACE_S):
        try:
            return session.finish()
        except Exception:
            # The run was interrupted inside the emulator and left it half-updated:
            # the trace so far is still the record of what happened.
            return session.trace()
        finally:
            session.lock.release()
    return session.recorder.freeze()  # pragma: no cover - a thread holds the lock forever
