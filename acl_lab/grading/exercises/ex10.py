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

10.2 "one context per thread": round-trip each chunk through the device in its own worker
thread; each worker creates (and destroys) its own context, the main thread none. Budget:
one context per worker, at most ``CALL_BUDGET_102`` ACL calls.
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


# ------------------------------------------------------------------------------------- 10.2
#: Worker threads of 10.2, and the elements of each one's chunk.
WORKERS_102 = 2
N_102 = 1024
#: At most this many ACL calls in 10.2 (the idea needs about 24).
CALL_BUDGET_102 = 36


def args_102(seed: int) -> tuple[Any, ...]:
    """``WORKERS_102`` float32 chunks of ``N_102`` values drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal(N_102).astype(np.float32) for _ in range(WORKERS_102)],)


def _correct_102(run: Run) -> Verdict:
    want = args_102(run.seed)[0]
    got = run.result
    if not isinstance(got, (list, tuple)) or len(got) != len(want):
        return False, (f"return a list of {len(want)} arrays, one per chunk, in chunk order; "
                       f"got {type(got).__name__}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g is None or np.asarray(g).shape != w.shape or not np.array_equal(np.asarray(g), w):
            return False, f"chunk {i} did not come back unchanged"
    return True, "every chunk came back from the device unchanged, in order"


def _context_per_thread(run: Run) -> Verdict:
    t = run.trace
    threads = t.calls["thread"]
    made = [int(threads[c]) for c in t.calls_named("acl.rt.create_context")]
    main = int(threads[0]) if t.calls.rows else 0
    workers = sorted(set(made) - {main})
    if main in made:
        return False, ("the main thread created a context: in this puzzle each worker creates "
                       "its own (acl.rt.create_context in the worker makes it current there)")
    if len(workers) != WORKERS_102 or len(made) != WORKERS_102:
        return False, (f"the budget is one context per worker ({WORKERS_102} in all); your "
                       f"run created {len(made)} in {len(set(made))} thread(s)")
    destroyed = len(t.calls_named("acl.rt.destroy_context"))
    if destroyed != WORKERS_102:
        return False, f"{WORKERS_102} contexts were created but {destroyed} destroyed"
    return True, "each worker created, used and destroyed its own context"


def _no_context_findings(run: Run) -> Verdict:
    bad = run.of_kind("context_not_set", "wrong_context")
    if bad:
        return False, bad[0].message.split(". ")[0]
    return True, "every call ran in a context of its own thread"


def _call_budget_102(run: Run) -> Verdict:
    n = run.trace.calls.rows
    if n > CALL_BUDGET_102:
        return False, f"your run made {n} ACL calls; the budget is {CALL_BUDGET_102}"
    return True, f"{n} ACL calls, within the budget of {CALL_BUDGET_102}"


register(Exercise(
    id="10.2",
    title="puzzle: one context per thread",
    entry="round_trip_in_threads",
    make_args=args_102,
    items=(
        Item("correct", "returns every chunk, copied to the device and back, in chunk order",
             2, device_result(_correct_102, work=("H2D",)),
             "Worker i should put its chunk's copy at index i.", "timeline"),
        Item("own_context", f"budget: exactly one context per worker ({WORKERS_102}), made "
             "in the worker, none in the main thread", 2, _context_per_thread,
             "A context is current only in the thread that created or set it.", "timeline"),
        Item("no_context_findings", "no context_not_set or wrong_context finding", 1,
             _no_context_findings, "Which context is current in a new thread?", "timeline",
             claims=("context_not_set", "wrong_context")),
        Item("calls", f"budget: at most {CALL_BUDGET_102} ACL calls", 1, _call_budget_102,
             "Per worker: a context, two buffers, two copies, the frees and the destroy.",
             "timeline"),
    ),
))
