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

10.3 "one callback": round-trip ``x`` on one stream and hand the copy over through one
callback, run by a report thread's ``process_report`` (not the main thread's); the
subscription is undone before the teardown. Budget: one callback, at most
``CALL_BUDGET_103`` ACL calls.

10.4 "one double-buffer": Relu six blocks with two device buffers used in turn, a copy
stream and a compute stream ordered by events, so the copy in of block i+1 runs under the
compute of block i. Budget: ``TIME_FACTOR_104`` of the virtual time the same work takes on
one stream (``one_stream_ns``), which only overlap can meet, and ``MEMORY_BUDGET_104`` bytes
of device memory (two blocks).

10.5 "one edge": a producer thread uploads ``x`` on its stream and records an event; a
consumer thread makes its own stream wait on that event, runs Relu there and copies the
result back. The starter runs, and under the plain schedule (seed 0) its result is right, but
nothing orders the consumer's ``stream_wait_event`` after the producer's ``record_event``:
under another schedule the wait comes first, does nothing (a new-mode event), and the Relu
reads the buffer before the upload lands. The fix is one happens-before edge between the two
threads (a ``threading.Event`` set after the record and waited on before the wait, a queue
item, a join). Graded under ``THREADED_SCHEDULES`` schedules: the result must be right under
every one, no ``wait_before_record`` finding (it is reported on every schedule, whichever
order the run happened to take), and a Python primitive's edge (``trace.host_edges``) must
lead from the producer's thread after its record to the consumer's thread before its wait.
Budget: at most ``CALL_BUDGET_105`` ACL calls (the edge costs none).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ...runtime.kinds import TaskKind
from ...runtime.session import Session
from ...tracer.index import TraceIndex
from ...tracer.schema import TASK_KINDS
from ...tracer.units import human_bytes
from ..provenance import device_result
from ..rubric import THREADED_SCHEDULES, Exercise, Item, Run, Verdict, register
from .ex05 import entry_thread, first_sentence, ok_calls, thread_label
from .ex06 import batch_window_ns, outputs_match, race_verdict

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


def returns_x(run: Run, want: np.ndarray, passed: str) -> Verdict:
    """The run returned ``want`` (the puzzle's ``x``) exactly: its shape, then every value;
    ``passed`` is the reason of a pass."""
    if (why := run.no_result()) is not None:
        return False, why
    if run.result is None:
        return False, "your function returned None"
    arr = np.asarray(run.result)
    if arr.shape != want.shape:
        return False, f"the result has shape {list(arr.shape)}, expected {list(want.shape)}"
    if not np.array_equal(arr, want):
        bad = int(np.count_nonzero(arr != want))
        return False, f"{bad} of {want.size} values differ from x"
    return True, passed


def _correct_101(run: Run) -> Verdict:
    return returns_x(run, args_101(run.seed)[0], "the result is x, back from the device")


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
    d2d = [int(calls[i]) for i in np.nonzero(kinds == TaskKind.D2D)[0]]
    h2d = [int(calls[i]) for i in np.nonzero(kinds == TaskKind.H2D)[0]]
    if not d2d or not h2d:
        return False, "your run has no H2D copy followed by a device-to-device copy"
    lo, hi = min(h2d), min(d2d)
    for name in HOST_WAITS:
        between = [int(c) for c in t.calls_named(name) if lo < int(c) < hi]
        if between:
            return False, (f"{name} at {run.site(between[0])} makes the host wait between the two "
                           "copies: the budget allows no host wait there (let the event "
                           "order the streams on the device)")
    return True, "the host did not wait between the copies"


def call_budget(limit: int, *, counting: str = "",
                advice: str = "") -> Callable[[Run], Verdict]:
    """An item predicate: the run made at most ``limit`` ACL calls (every thread's).

    ``counting`` names a pyACL function whose calls the reason also counts; ``advice``
    ends the reason of a run over the budget.
    """

    def judged(run: Run) -> Verdict:
        n = len(run.trace.api_calls())
        text = f"{n} ACL calls"
        if counting:
            text += f" ({len(run.trace.calls_named(counting))} of them {counting})"
        if n > limit:
            return False, f"your run made {text}; the budget is {limit}{advice}"
        return True, f"{text}, within the budget of {limit}"

    return judged


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
        Item("calls", f"budget: at most {CALL_BUDGET_101} ACL calls", 1,
             call_budget(CALL_BUDGET_101),
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
    main = entry_thread(t)
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
        return False, first_sentence(bad[0].message)
    return True, "every call ran in a context of its own thread"


register(Exercise(
    id="10.2",
    schedules=THREADED_SCHEDULES,
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
        Item("calls", f"budget: at most {CALL_BUDGET_102} ACL calls", 1,
             call_budget(CALL_BUDGET_102),
             "Per worker: a context, two buffers, two copies, the frees and the destroy.",
             "timeline"),
    ),
))


# ------------------------------------------------------------------------------------- 10.3
# Callbacks (CANN docs, "aclrtLaunchCallback" / "aclrtSubscribeReport"; the public sample
# python/level2_simple_inference/.../acl_sample_callback follows the same shape): a callback
# launched on a stream runs in the host thread subscribed to that stream, inside that
# thread's aclrtProcessReport, once the work queued before it on the stream is done; the
# subscription is undone with aclrtUnSubscribeReport before the stream goes away.
#: Elements of the float32 array 10.3 copies to the device and back.
N_103 = 2048
#: At most this many ACL calls in 10.3 (the idea needs 19: setup, two copies, the
#: subscription, one callback, one process_report, the unsubscribe and teardown).
CALL_BUDGET_103 = 22
_SUBSCRIBE = "acl.rt.subscribe_report"
_UNSUBSCRIBE = "acl.rt.unsubscribe_report"
_ENDS = ("acl.rt.destroy_stream", "acl.rt.reset_device", "acl.finalize")


def args_103(seed: int) -> tuple[Any, ...]:
    """The array to round-trip: ``N_103`` float32 values drawn from ``seed``."""
    return (np.random.default_rng(seed).standard_normal(N_103).astype(np.float32),)


def _correct_103(run: Run) -> Verdict:
    return returns_x(run, args_103(run.seed)[0],
                     "the result is x, handed over by the callback after the copy back")


def _one_callback(run: Run) -> Verdict:
    t = run.trace
    launched = ok_calls(t, "acl.rt.launch_callback")
    ran = [j for j in range(t.callbacks.rows) if int(t.callbacks["start_ns"][j]) >= 0]
    if len(launched) != 1:
        return False, (f"the budget is one callback (acl.rt.launch_callback); your run "
                       f"launched {len(launched)}")
    if not ran:
        return False, ("the callback was launched but never ran: it runs only inside "
                       "acl.rt.process_report of the thread subscribed to its stream")
    return True, "one callback, launched once and run once"


def _report_thread(run: Run) -> Verdict:
    t = run.trace
    cb = t.callbacks
    ran = [j for j in range(cb.rows) if int(cb["start_ns"][j]) >= 0]
    if not ran:
        return False, "no callback ran, so no report thread processed one"
    main = entry_thread(t)
    threads = t.calls["thread"]
    for j in ran:
        th = int(cb["thread"][j])
        if th == main:
            launch = int(t.tasks["call"][int(cb["task"][j])])
            return False, (f"the callback launched at {run.site(launch)} ran on the main thread, "
                           "inside its own acl.rt.process_report: the puzzle asks for a "
                           "report thread (subscribe another thread's id, and call "
                           "process_report there) so the main thread is free to queue work")
        polls = [c for c in t.calls_named("acl.rt.process_report") if int(threads[c]) == th]
        if not polls:
            return False, f"the callback ran in thread {th}, which never called process_report"
    return True, "the callback ran in the report thread, inside its acl.rt.process_report"


def _unsubscribed(run: Run) -> Verdict:
    t = run.trace
    subs = ok_calls(t, _SUBSCRIBE)
    unsubs = ok_calls(t, _UNSUBSCRIBE)
    if not subs:
        return False, f"no successful {_SUBSCRIBE}: nothing to undo"
    if len(unsubs) < len(subs):
        return False, (f"the subscription made at {run.site(subs[-1])} was never undone: call "
                       f"{_UNSUBSCRIBE}(tid, stream) once the callback has run, before the "
                       "stream is destroyed")
    ends = [c for name in _ENDS for c in t.calls_named(name)]
    late = [c for c in unsubs if ends and c > min(ends)]
    if late:
        return False, (f"{_UNSUBSCRIBE} at {run.site(late[0])} comes after the stream or device "
                       "was torn down: undo the subscription first")
    return True, "the subscription was undone before the teardown"


register(Exercise(
    id="10.3",
    schedules=THREADED_SCHEDULES,
    title="puzzle: one callback",
    entry="callback_copy",
    make_args=args_103,
    items=(
        Item("correct", "returns x, handed over by the callback after the copy back", 2,
             device_result(_correct_103, work=("H2D",)),
             "The callback runs after the work queued before it on its stream: what is in "
             "the pinned host buffer by then?", "timeline"),
        Item("one_callback", "budget: exactly one launch_callback, and it ran", 1,
             _one_callback, "A launched callback runs only inside process_report.",
             "timeline"),
        Item("report_thread", "the callback runs in a report thread (not the main thread), "
             "inside its process_report", 2, _report_thread,
             "subscribe_report takes the id of the thread that will call process_report.",
             "timeline"),
        Item("unsubscribed", "the subscription is undone (unsubscribe_report) before the "
             "teardown", 1, _unsubscribed,
             "Every subscribe_report has its unsubscribe_report.", "timeline"),
        Item("calls", f"budget: at most {CALL_BUDGET_103} ACL calls", 1, call_budget(
             CALL_BUDGET_103, counting="acl.rt.process_report", advice=(
                 ": one process_report(-1), started once the stream is subscribed, runs "
                 "the one callback")),
             "Count the report thread's calls too: one process_report is enough.",
             "timeline"),
    ),
))


# ------------------------------------------------------------------------------------- 10.4
# Double buffering: stream order holds within a stream only, and an event recorded on one
# stream and waited on by another orders the two (CANN docs, aclrtRecordEvent /
# aclrtStreamWaitEvent). Copies and AI-core work run on separate engines, so a copy on one
# stream can run under a kernel of another (runtime/profiles.py: copy_engines).
#: Blocks of 10.4 and the shape of each (float32): 512 KiB a block.
BLOCKS_104 = 6
SHAPE_104 = (256, 512)
BLOCK_BYTES_104 = SHAPE_104[0] * SHAPE_104[1] * 4
#: Device memory budget: two blocks' buffers live at once (bytes requested).
MEMORY_BUDGET_104 = 2 * BLOCK_BYTES_104
#: Time budget: this share of the virtual time the same work takes queued on one stream.
TIME_FACTOR_104 = 0.8
ACL_FLOAT, ACL_FORMAT_ND = 0, 2
ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST = 1, 2
ACL_MEM_MALLOC_NORMAL_ONLY = 2
NPY_FLOAT32 = 11


def args_104(seed: int) -> tuple[Any, ...]:
    """``BLOCKS_104`` float32 blocks of ``SHAPE_104`` drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal(SHAPE_104).astype(np.float32) for _ in range(BLOCKS_104)],)


def one_stream_relu(blocks: list[np.ndarray]) -> list[np.ndarray]:
    """The budget's yardstick: every block copied in, Relu'd in place and copied back, all
    queued on one stream (no host wait until the end), in one device buffer. Runs against
    the current Session's emulated ``acl``."""
    from ... import acl as emulated

    acl: Any = emulated  # called as a program calls pyACL: (value, ret) pairs, codes

    def ok(name: str, ret: int) -> None:
        if ret != 0:
            raise RuntimeError(f"{name} failed, ret={ret}")

    shape, n = blocks[0].shape, blocks[0].nbytes
    ok("acl.init", acl.init())
    ok("acl.rt.set_device", acl.rt.set_device(0))
    stream, ret = acl.rt.create_stream()
    ok("acl.rt.create_stream", ret)
    desc = acl.create_tensor_desc(ACL_FLOAT, list(shape), ACL_FORMAT_ND)
    attr = acl.op.create_attr()
    dev, ret = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
    ok("acl.rt.malloc", ret)
    buf = acl.create_data_buffer(dev, n)
    hosts = []
    for x in blocks:
        host, ret = acl.rt.malloc_host(n)
        ok("acl.rt.malloc_host", ret)
        acl.util.ptr_to_numpy(host, shape, NPY_FLOAT32)[...] = x
        hosts.append(host)
    for host in hosts:
        ok("acl.rt.memcpy_async", acl.rt.memcpy_async(dev, n, host, n,
                                                      ACL_MEMCPY_HOST_TO_DEVICE, stream))
        ok("acl.op.execute_v2", acl.op.execute_v2("Relu", [desc], [buf], [desc], [buf], attr,
                                                  stream))
        ok("acl.rt.memcpy_async", acl.rt.memcpy_async(host, n, dev, n,
                                                      ACL_MEMCPY_DEVICE_TO_HOST, stream))
    ok("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
    out = [acl.util.ptr_to_numpy(h, shape, NPY_FLOAT32).copy() for h in hosts]
    acl.destroy_data_buffer(buf)
    ok("acl.rt.free", acl.rt.free(dev))
    for host in hosts:
        ok("acl.rt.free_host", acl.rt.free_host(host))
    acl.op.destroy_attr(attr)
    acl.destroy_tensor_desc(desc)
    ok("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    ok("acl.rt.reset_device", acl.rt.reset_device(0))
    ok("acl.finalize", acl.finalize())
    return out


@lru_cache(maxsize=8)
def one_stream_ns(profile: str = "Ascend310P3") -> int:
    """Virtual time of ``one_stream_relu`` from the first block's copy in to the last
    block's copy back, in a fresh Session of ``profile`` (it depends only on the shapes)."""
    with Session(profile=profile) as session:  # current for the run, the previous one after
        one_stream_relu(args_104(0)[0])
        trace = session.trace()
    window = batch_window_ns(trace, -1)
    assert window is not None
    return window[1] - window[0]


def time_budget_ns(profile: str = "Ascend310P3") -> int:
    """10.4's time budget: ``TIME_FACTOR_104`` of ``one_stream_ns(profile)``."""
    return int(TIME_FACTOR_104 * one_stream_ns(profile))


def _profile(run: Run) -> str:
    return str(run.trace.meta.get("profile", "Ascend310P3"))


def _correct_104(run: Run) -> Verdict:
    want = [np.maximum(b, 0) for b in args_104(run.seed)[0]]
    if (why := run.no_result()) is not None:
        return False, why
    ok, why = outputs_match(run.result, want, "blocks")
    return ok, why if not ok else f"all {len(want)} blocks came back as relu(block)"


def _intervals(trace: Any, kind: str) -> list[tuple[int, int]]:
    t = trace.tasks
    rows = np.nonzero((t["kind"] == TASK_KINDS.index(kind)) & (t["start_ns"] >= 0)
                      & (t["end_ns"] >= 0))[0]
    return [(int(t["start_ns"][i]), int(t["end_ns"][i])) for i in rows]


def _overlap(run: Run) -> Verdict:
    copies = _intervals(run.trace, "H2D")
    kernels = _intervals(run.trace, "kernel")
    if not copies or not kernels:
        return False, "your run has no copy in and no Relu on the device"
    under = sum(1 for a, b in copies if any(a < d and c < b for c, d in kernels))
    if not under:
        return False, ("no copy in ran while a Relu ran: with one stream (or a host wait "
                       "between blocks) every copy waits for the compute before it")
    return True, f"{under} of {len(copies)} copies in ran while a Relu ran"


def _time_budget(run: Run) -> Verdict:
    window = batch_window_ns(run.trace, -1)
    if window is None:
        return False, "no block was copied to the device and back"
    mine = window[1] - window[0]
    one = one_stream_ns(_profile(run))
    budget = time_budget_ns(_profile(run))
    text = (f"the blocks took {mine / 1e3:.1f} µs of virtual time from the first copy in to "
            f"the last copy back; the budget is {budget / 1e3:.1f} µs "
            f"({TIME_FACTOR_104:.0%} of the {one / 1e3:.1f} µs the same work takes on one "
            "stream)")
    return mine <= budget, text


def _memory_budget(run: Run) -> Verdict:
    peak = run.trace.peak_device_bytes("requested")
    text = (f"at most {peak} bytes ({human_bytes(peak)}) of device memory were live at once; "
            f"the budget is {MEMORY_BUDGET_104} bytes ({human_bytes(MEMORY_BUDGET_104)}, two "
            "blocks)")
    return peak <= MEMORY_BUDGET_104, text


register(Exercise(
    id="10.4",
    title="puzzle: one double-buffer",
    entry="relu_blocks",
    make_args=args_104,
    items=(
        Item("correct", "returns relu(block) for every block, in block order", 2,
             device_result(_correct_104, work=("kernel",)),
             "A buffer may be refilled only after the block in it has been copied back.",
             "timeline"),
        Item("no_race", "no race finding: each buffer is refilled only after its block was "
             "copied back, and computed only after it was filled", 2, race_verdict,
             "Which event tells the compute stream a buffer is full, and which tells the "
             "copy stream it is free again?", "race_view",
             claims=("race", "wait_before_record", "uninitialized_read")),
        Item("overlap", "the copy in of one block runs while another block is computed", 1,
             _overlap, "Work on one stream runs in order: use a copy stream and a compute "
             "stream.", "overlap_figure"),
        Item("time", f"budget: at most {TIME_FACTOR_104:.0%} of the virtual time the same "
             "work takes on one stream (the notebook prints it in µs)", 2, _time_budget,
             "Only overlap can meet it: the copy of block i+1 under the compute of block i.",
             "overlap_figure"),
        Item("memory", f"budget: at most {MEMORY_BUDGET_104} bytes of device memory live at "
             "once (two blocks)", 1, _memory_budget,
             "Two buffers, used in turn (block i in buffer i % 2).", "memory_map"),
    ),
))


# ------------------------------------------------------------------------------------- 10.5
# Two host threads, one event (CANN docs, aclrtRecordEvent / aclrtStreamWaitEvent): a
# stream_wait_event waits for the record made *before* it; a new-mode event
# (aclrtCreateEventExWithFlag) that was never recorded makes the wait do nothing. Between
# two threads only the program's own synchronization says which call comes first: Python's
# Thread start/join, Lock, Event, Queue, Condition, Semaphore and Barrier are the trace's
# host_edges (runtime/pysync.py), everything of the source thread up to the edge's source
# row happening before the destination row and what its thread does after it.
#: Shape of the float32 batch 10.5 uploads and computes relu of (64 KiB).
SHAPE_105 = (64, 256)
#: At most this many ACL calls in 10.5 (the starter makes 32; the edge is no ACL call).
CALL_BUDGET_105 = 36
_RECORD, _WAIT = "acl.rt.record_event", "acl.rt.stream_wait_event"


def args_105(seed: int) -> tuple[Any, ...]:
    """The batch: float32 values of ``SHAPE_105`` drawn from ``seed``."""
    return (np.random.default_rng(seed).standard_normal(SHAPE_105).astype(np.float32),)


def _correct_105(run: Run) -> Verdict:
    (x,) = args_105(run.seed)
    want = np.maximum(x, 0)
    if (why := run.no_result()) is not None:
        return False, why
    if run.result is None:
        return False, "your function returned None"
    got = np.asarray(run.result)
    if got.shape != want.shape:
        return False, f"the result has shape {list(got.shape)}, expected {list(want.shape)}"
    if not np.array_equal(got, want):
        wrong = got != want
        text = f"{int(np.count_nonzero(wrong))} of {want.size} values differ from relu(x)"
        if not np.any(got[wrong]):
            text += (": where relu(x) is positive you returned 0, as if the Relu had read the "
                     "device buffer before the upload landed there")
        return False, text
    return True, "the result is relu(x), computed on the device after the upload"


def _no_wait_before_record(run: Run) -> Verdict:
    found = run.of_kind("wait_before_record") or run.of_kind("race", "uninitialized_read")
    if found:
        f = found[0]
        more = f" ({len(found)} {f.kind} findings)" if len(found) > 1 else ""
        return False, f"{f.kind} at {f.file}:{f.line}: {first_sentence(f.message)}{more}"
    return True, "no wait_before_record, race or uninitialized_read finding"


def _event_of(trace: Any, cid: int, position: int) -> int:
    """The event handle argument of a record_event (position 0) or stream_wait_event (1)."""
    ints = TraceIndex.of(trace).call_ints(cid)
    return ints[position] if len(ints) > position else -1


def host_reach(trace: Any, cid: int) -> dict[int, int]:
    """For each host thread, the first call of it that call ``cid`` happens before through
    the program's Python synchronization alone (``trace.host_edges``: thread start and join,
    Event, Queue, Lock, ...; program order within each thread). ``cid``'s own thread maps
    to ``cid``; a thread nothing reaches is absent."""
    thread = trace.calls["thread"]
    edges = trace.host_edges
    pairs = list(zip(edges["src"].tolist(), edges["dst"].tolist(), strict=True))
    reach = {int(thread[cid]): int(cid)}
    changed = True
    while changed:
        changed = False
        for src, dst in pairs:
            ts, td = int(thread[src]), int(thread[dst])
            if ts in reach and src >= reach[ts] and dst < reach.get(td, 1 << 62):
                reach[td] = int(dst)
                changed = True
    return reach


def _ordered_by_python(run: Run) -> Verdict:
    t = run.trace
    thread = t.calls["thread"]
    waits = [int(c) for c in t.calls_named(_WAIT)]
    records = [int(c) for c in t.calls_named(_RECORD)]
    if not waits or not records:
        return False, ("your run has no acl.rt.record_event and acl.rt.stream_wait_event "
                       "pair: the consumer's stream must still wait for the producer's event")
    for w in waits:
        ev = _event_of(t, w, 1)
        mine = [r for r in records if _event_of(t, r, 0) == ev]
        others = [r for r in mine if int(thread[r]) != int(thread[w])]
        if mine and not others:
            return False, (f"the stream_wait_event at {run.site(w)} and the record_event of "
                           "its event are in the same thread: keep the producer and the "
                           "consumer in two threads, and order them")
        if not others:
            return False, f"no record_event of the event waited on at {run.site(w)}"
        if any(host_reach(t, r).get(int(thread[w]), 1 << 62) <= w for r in others):
            continue
        r = others[-1]
        src_t, dst_t = int(thread[r]), int(thread[w])
        e = t.host_edges
        across = [i for i in range(e.rows) if int(thread[int(e["src"][i])]) == src_t
                  and int(thread[int(e["dst"][i])]) == dst_t]
        where = (f"the record_event at {run.site(r)} ({thread_label(t, src_t)}) and the "
                 f"stream_wait_event at {run.site(w)} ({thread_label(t, dst_t)})")
        if not across:
            return False, (f"nothing orders {where}: no Python primitive passes anything from "
                           "the producer's thread to the consumer's")
        i = across[0]
        src, dst = int(e["src"][i]), int(e["dst"][i])
        if src < r:
            return False, (f"{t.call_name(src)} at {run.site(src)} reaches the consumer, but "
                           f"it comes before the record_event at {run.site(r)}: it orders "
                           "what the producer did before it, not the record")
        return False, (f"{t.call_name(src)} at {run.site(src)} reaches the consumer at "
                       f"{run.site(dst)}, after its stream_wait_event at {run.site(w)}: it "
                       "orders what the consumer does after it, not the wait")
    w = waits[0]
    return True, (f"a Python primitive orders the stream_wait_event at {run.site(w)} after "
                  "the record_event it waits for, in another thread")


register(Exercise(
    id="10.5",
    schedules=THREADED_SCHEDULES,
    title="puzzle: one edge between two threads",
    entry="upload_and_relu",
    make_args=args_105,
    items=(
        Item("correct", "returns relu(x), computed on the device, under every host schedule",
             2, device_result(_correct_105, work=("kernel",)),
             "One schedule's right answer proves little: explore a few seeds, and replay "
             "one that differs.", "timeline",
             counts_with=("no_wait_before_record", "ordered")),
        Item("no_wait_before_record", "no wait_before_record finding: the consumer's "
             "stream_wait_event comes after the producer's record_event on every schedule",
             2, _no_wait_before_record,
             "The finding is reported on every schedule, even one where the record happened "
             "to come first: what makes it come first?", "timeline",
             claims=("wait_before_record", "race", "uninitialized_read")),
        Item("ordered", "a Python primitive orders the two threads: an edge leads from the "
             "producer after its record_event to the consumer before its stream_wait_event",
             1, _ordered_by_python,
             "Time passing orders nothing; two threads are ordered only by what one of them "
             "hands to the other.", "timeline"),
        Item("calls", f"budget: at most {CALL_BUDGET_105} ACL calls", 1,
             call_budget(CALL_BUDGET_105, advice=": the fix is no ACL call"),
             "The order between two host threads is the host's business.", "timeline",
             counts_with=("no_wait_before_record", "ordered")),
    ),
))
