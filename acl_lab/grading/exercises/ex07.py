"""Exercise 07: deadlocks, hangs and races (``07.1``, ``07.2``, ``07.3``).

Three broken programs to fix. On real hardware the first two hang forever; the emulator raises
``DeadlockError`` instead (the run's ``error``) and records a ``deadlock`` finding whose wait
graph shows who waits for whom. The third finishes but computes garbage: a ``race``.

* ``07.1`` ``collect_with_callback(batches)``: a blocking host callback (``ACL_CALLBACK_BLOCK``)
  per batch reads the batch's result. The starter subscribes its own thread as the report
  thread and then waits in ``synchronize_stream``, so no thread ever calls
  ``process_report``. The fix starts a report thread (``acl.util.start_thread`` looping on
  ``acl.rt.process_report``), subscribes it, and unsubscribes and stops it at the end.
* ``07.2`` ``fan_out(pairs)``: one event, two waiting streams. The starter resets the event
  right after the first stream's wait, before the second stream waits: that wait can never
  be satisfied. The fix orders the reset after every wait.
* ``07.3`` ``scale_and_shift(batches, scale, bias)``: stage 1 scales on one stream, stage 2
  adds the bias on another; the starter records the event but never makes stage 2 wait.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..provenance import device_result
from ..rubric import THREADED_SCHEDULES, Exercise, Item, Run, Verdict, register
from .ex05 import first_sentence, ok_calls, thread_label
from .ex06 import outputs_match, race_text


def check_completes(run: Run) -> Verdict:
    """The function returned: no exception (a detected deadlock included), no time-out."""
    why = run.no_result()
    if why is None:
        return True, "your function returned"
    if not run.timed_out and why.startswith("your function raised DeadlockError"):
        return False, ("your function hung: the emulator raised DeadlockError where real "
                       "hardware would wait forever (the wait graph shows who waits for whom)")
    return False, why


def _no_kind(run: Run, kind: str, view: str) -> Verdict:
    found = run.of_kind(kind)
    if found:
        f = found[0]
        text = race_text(f) if kind == "race" else first_sentence(f.message)
        more = f" ({len(found)} {kind} findings)" if len(found) > 1 else ""
        return False, f"{text}{more}\n(see the {view})"
    return True, f"no {kind}"


def check_no_deadlock(run: Run) -> Verdict:
    """No ``deadlock`` finding."""
    return _no_kind(run, "deadlock", "wait graph")


def check_no_race(run: Run) -> Verdict:
    """No ``race`` finding."""
    return _no_kind(run, "race", "race view")


def _correct(run: Run, got_want: tuple[Any, list[np.ndarray]], what: str,
             one: str = "") -> Verdict:
    if run.error is not None or run.timed_out:
        return False, "your function did not return a result"
    got, want = got_want
    return outputs_match(got, want, what, one)


# ============================================================================== 07.1


def make_args_1(seed: int) -> tuple[Any, ...]:
    """``(batches,)``: 3 to 5 int32 matrices of a seeded shape."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(8, 33)), 64)
    return ([rng.integers(-10_000, 10_000, shape, dtype=np.int32)
             for _ in range(int(rng.integers(3, 6)))],)


def check_correct_1(run: Run) -> Verdict:
    """The callbacks collected ``x + x`` for every batch, in order."""
    (batches,) = make_args_1(run.seed)
    return _correct(run, (run.result, [x + x for x in batches]), "results")


def check_report_thread(run: Run) -> Verdict:
    """Callbacks ran in a thread other than the one that launched them; that report thread
    was unsubscribed and stopped."""
    trace = run.trace
    calls, t, cb = trace.calls, trace.tasks, trace.callbacks
    unordered = run.of_kind("thread_order")
    if unordered:  # the loop may run before the subscription or after the unsubscription
        first = unordered[0]
        return False, f"{first_sentence(first.message)} ({first.file}:{first.line})"
    subs = ok_calls(trace, "acl.rt.subscribe_report")
    if not subs:
        return False, "no acl.rt.subscribe_report succeeded: no thread runs the callbacks"
    if cb.rows == 0:
        stuck = [f for f in run.of_kind("deadlock") if "never call process_report" in f.message]
        if stuck:
            f, ln = trace.call_site(subs[0])
            who = thread_label(trace, int(calls["thread"][subs[0]]))
            return False, (f"acl.rt.subscribe_report at {f}:{ln} subscribed {who} itself, "
                           "the thread that then waits for the stream: while it waits it can "
                           "never call acl.rt.process_report, so no callback ran")
        return False, "no callback ran (the callbacks table of the trace is empty)"
    for j in range(cb.rows):
        launcher = int(calls["thread"][int(t["call"][int(cb["task"][j])])])
        if int(cb["thread"][j]) == launcher:
            return False, (f"a callback ran in {thread_label(trace, launcher)}, the thread "
                           "that launched it: use a separate report thread")
    missing = [name for name in ("acl.rt.unsubscribe_report", "acl.util.stop_thread")
               if not ok_calls(trace, name)]
    if missing:
        never = " and ".join("unsubscribed" if "unsub" in m else "stopped" for m in missing)
        return False, (f"the report thread ran {cb.rows} callback(s) but was never {never} "
                       f"(no successful {', '.join(missing)})")
    runners = sorted({int(x) for x in cb["thread"]})
    return True, (f"{cb.rows} callback(s) ran in "
                  f"{', '.join(thread_label(trace, r) for r in runners)}, which was "
                  "unsubscribed and stopped at the end")


EXERCISE_1 = register(Exercise(
    id="07.1",
    schedules=THREADED_SCHEDULES,
    title="A blocking callback with no report thread",
    entry="collect_with_callback",
    make_args=make_args_1,
    time_limit=30.0,
    items=(
        Item("completes", "The function returns (no deadlock, no time-out)", 2,
             check_completes,
             "In the wait graph, follow the arrows from the waiting thread: which thread "
             "must act for the stream to move on, and what is that thread doing?",
             "wait_graph"),
        Item("correct", "The callbacks collect x + x for every batch, in order", 2,
             device_result(check_correct_1),
             "Check what each callback reads, and from which buffer.",
             "timeline"),
        Item("no_deadlock", "No deadlock finding", 1, check_no_deadlock,
             "A callback runs inside acl.rt.process_report of the thread subscribed to its "
             "stream.", "wait_graph", claims=("deadlock",)),
        Item("report_thread", "A separate report thread runs the callbacks; its loop starts "
             "after the subscription and is stopped before the unsubscription", 2,
             check_report_thread,
             "Which thread calls acl.rt.process_report in your program, when does it start "
             "and when does it stop? Nothing but a join or an Event orders two threads.",
             "timeline", claims=("thread_order",)),
    ),
))


# ============================================================================== 07.2


def make_args_2(seed: int) -> tuple[Any, ...]:
    """``(pairs,)``: 2 or 3 pairs of float32 matrices of a seeded shape."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(32, 129)), 128)
    return ([(rng.standard_normal(shape).astype(np.float32),
              rng.standard_normal(shape).astype(np.float32))
             for _ in range(int(rng.integers(2, 4)))],)


def check_correct_2(run: Run) -> Verdict:
    """For every pair, ``(a + b, (a + b) * (a + b))``."""
    (pairs,) = make_args_2(run.seed)
    want: list[np.ndarray] = []
    for a, b in pairs:
        y = a + b
        want.append(np.stack([y, y * y]))
    got = run.result
    if isinstance(got, (list, tuple)):
        try:
            got = [np.stack([np.asarray(p[0]), np.asarray(p[1])]) for p in got]
        except (TypeError, ValueError, IndexError):
            return False, "each entry of the result must be a pair (y, z)"
    verdict = _correct(run, (got, want), "pairs (y, z)", "pair")
    return verdict[0], verdict[1] if not verdict[0] else \
        f"all {len(pairs)} pairs (y, z) are right"


EXERCISE_2 = register(Exercise(
    id="07.2",
    title="A reset event that a second stream still waits on",
    entry="fan_out",
    make_args=make_args_2,
    time_limit=30.0,
    items=(
        Item("completes", "The function returns (no deadlock, no time-out)", 2,
             check_completes,
             "In the wait graph, find the event the stuck stream waits for, then look for "
             "what happened to that event before the wait ran.", "wait_graph"),
        Item("correct", "Every pair (y, z) is right", 2, device_result(check_correct_2),
             "y is a + b and z is y * y, for each pair in order.", "timeline"),
        Item("no_deadlock", "No deadlock finding", 1, check_no_deadlock,
             "reset_event puts an event back to 'not recorded' for every stream, not only "
             "for the one that resets it.", "wait_graph", claims=("deadlock",)),
        Item("no_race", "No race finding", 1, check_no_race,
             "Every stream that reads y must wait for the event first.", "race_view",
             claims=("race",)),
    ),
))


# ============================================================================== 07.3


def make_args_3(seed: int) -> tuple[Any, ...]:
    """``(batches, scale, bias)``: 3 to 5 float32 batches, scale and bias rows."""
    rng = np.random.default_rng(seed)
    cols = 256
    shape = (int(rng.integers(192, 321)), cols)
    batches = [rng.standard_normal(shape).astype(np.float32)
               for _ in range(int(rng.integers(3, 6)))]
    scale = rng.uniform(0.5, 2.0, (1, cols)).astype(np.float32)
    bias = rng.standard_normal((1, cols)).astype(np.float32)
    return (batches, scale, bias)


def check_correct_3(run: Run) -> Verdict:
    """Every output is ``x * scale + bias``, in batch order."""
    batches, scale, bias = make_args_3(run.seed)
    return _correct(run, (run.result, [x * scale + bias for x in batches]), "outputs")


EXERCISE_3 = register(Exercise(
    id="07.3",
    title="A missing wait that corrupts the result",
    entry="scale_and_shift",
    make_args=make_args_3,
    time_limit=30.0,
    items=(
        Item("completes", "The function returns (no deadlock, no time-out)", 1,
             check_completes, "Read the error: which call failed, and why?", "timeline"),
        Item("correct", "Every output is x * scale + bias", 3, device_result(check_correct_3),
             "Compare, on the timeline, when stage 2 reads the scaled batch with when stage "
             "1 finishes writing it.", "timeline"),
        Item("no_race", "No race between the two stages", 2, check_no_race,
             "The race view names the two tasks: the event is recorded, but who waits for "
             "it?", "race_view", claims=("race",)),
        Item("no_deadlock", "No deadlock finding", 1, check_no_deadlock,
             "A wait needs a record that will happen.", "wait_graph", claims=("deadlock",)),
    ),
))
