"""Exercise 10, puzzles: small problems with one idea each and a visible budget.

In the manner of GPU-Puzzles: each puzzle asks for one idea (here: one event orders two
streams), states its budget (at most so many API calls, events, host waits) up front in the
notebook, and the rubric checks the budget from the trace beside the result, so a solution
that works but spends more than the idea needs does not get full marks.

10.1 "one event": copy ``x`` to device buffer A on stream 1, copy A to B on stream 2, copy B
back and return it. Stream 2 must not start before stream 1's copy is done; the only thing
allowed to order them is one event (``record_event`` on stream 1, ``stream_wait_event`` on
stream 2). Budget: one event, no host wait between the two copies (the host synchronizes
once, at the end), at most ``CALL_BUDGET_101`` ACL calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tracer.schema import TASK_KINDS
from ..provenance import device_result
from ..rubric import Exercise, Item, Run, Verdict, register
from .ex06 import race_verdict

#: Elements of the array 10.1 copies around.
N_101 = 4096
#: At most this many ACL calls in 10.1 (the idea needs about 20, setup and teardown included).
CALL_BUDGET_101 = 30
#: Host waits that end a stream or the device before its end.
HOST_WAITS = ("acl.rt.synchronize_stream", "acl.rt.synchronize_device",
              "acl.rt.synchronize_event", "acl.rt.synchronize_stream_with_timeout")


def args_101(seed: int) -> tuple[Any, ...]:
    """The array to move: ``N_101`` int32 values drawn from ``seed``."""
    return (np.random.default_rng(seed).integers(-1 << 30, 1 << 30, N_101, dtype=np.int32),)


def _correct_101(run: Run) -> Verdict:
    want = args_101(run.seed)[0]
    got = run.result
    if got is None:
        return False, "your function returned None"
    arr = np.asarray(got)
    if arr.shape != want.shape:
        return False, f"the result has shape {list(arr.shape)}, expected {list(want.shape)}"
    if not np.array_equal(arr.astype(np.int64), want.astype(np.int64)):
        bad = int(np.count_nonzero(arr.astype(np.int64) != want.astype(np.int64)))
        return False, f"{bad} of {want.size} values differ from x"
    return True, "the result is x, back from the device"


def _one_event(run: Run) -> Verdict:
    t = run.trace
    events = len(t.calls_named("acl.rt.create_event")) + len(
        t.calls_named("acl.rt.create_event_with_flag")) + len(
        t.calls_named("acl.rt.create_event_ex_with_flag"))
    waits = len(t.calls_named("acl.rt.stream_wait_event"))
    if events != 1:
        return False, f"the budget is one event; your run created {events}"
    if waits != 1:
        return False, (f"stream 2 should wait for the event once (acl.rt.stream_wait_event); "
                       f"your run waited {waits} time(s)")
    return True, "one event, waited on once"


def _no_host_wait_between(run: Run) -> Verdict:
    """No host synchronization between the first copy's queueing and the D2D copy's."""
    t = run.trace
    kinds = t.tasks["kind"]
    calls = t.tasks["call"]
    d2d = [int(calls[i]) for i in np.nonzero(kinds == TASK_KINDS.index("D2D"))[0]]
    h2d = [int(calls[i]) for i in np.nonzero(kinds == TASK_KINDS.index("H2D"))[0]]
    if not d2d or not h2d:
        return False, "your run has no H2D copy followed by a device-to-device copy"
    lo, hi = min(h2d), min(d2d)
    for name in HOST_WAITS:
        between = [int(c) for c in t.calls_named(name) if lo < int(c) < hi]
        if between:
            file, line = t.call_site(between[0])
            return False, (f"{name} at {file}:{line} makes the host wait between the two "
                           "copies: the budget allows no host wait there (let the event "
                           "order the streams on the device)")
    return True, "the host did not wait between the copies"


def _call_budget(run: Run) -> Verdict:
    n = run.trace.calls.rows
    if n > CALL_BUDGET_101:
        return False, f"your run made {n} ACL calls; the budget is {CALL_BUDGET_101}"
    return True, f"{n} ACL calls, within the budget of {CALL_BUDGET_101}"


register(Exercise(
    id="10.1",
    title="puzzle: one event orders two streams",
    entry="ordered_copy",
    make_args=args_101,
    items=(
        Item("correct", "returns x, copied back from the device buffer stream 2 wrote", 2,
             # the bytes must have landed from the device (copied in, moved, copied back)
             device_result(_correct_101, work=("H2D",)),
             "The value you return must be the bytes the last copy brought back.",
             "timeline"),
        Item("no_race", "no race finding: stream 2's copy starts after stream 1's is done", 2,
             race_verdict, "What tells stream 2 that stream 1's copy has finished?",
             "race_view", claims=("race", "wait_before_record")),
        Item("one_event", "budget: exactly one event, waited on once", 1, _one_event,
             "One record_event on the stream that writes, one stream_wait_event on the "
             "stream that reads.", "timeline"),
        Item("no_host_wait", "budget: no host synchronize between the two copies", 1,
             _no_host_wait_between,
             "The host only has to wait once, after everything is queued.", "timeline"),
        Item("calls", f"budget: at most {CALL_BUDGET_101} ACL calls", 1, _call_budget,
             "Setup, three copies, one event and teardown need no more.", "timeline"),
    ),
))
