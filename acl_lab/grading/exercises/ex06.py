"""Exercise 06: streams, events and an async pipeline (``06.1`` and ``06.2``).

* ``06.1`` ``add_on_two_streams(a, b)``: the inputs are copied in and added on one stream, the
  sum is copied back on a second stream; the learner orders the two with an event
  (``record_event`` on the first, ``stream_wait_event`` on the second). The starter has no
  event, so the copy back reads the sum before the Add wrote it: a ``race`` and a wrong result.
* ``06.2`` ``pipeline(batches, bias)``: ``batch + bias`` for K batches, H2D -> Add -> D2H,
  double-buffered over two streams. The starter is the synchronous version; the rubric runs
  that same synchronous program (``sync_pipeline`` below) in a fresh Session on the same
  arguments and asks for at least twice its throughput in virtual time.

Specific feedback: a ``stream_wait_event`` called before the ``record_event`` it should wait
for (the ``wait_before_record`` finding) is named in the race items.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ...runtime.kinds import TaskKind
from ...runtime.session import Session
from ...tracer.analysis import overlap_summary
from ...tracer.checks import Finding
from ..provenance import device_result
from ..rubric import Exercise, Hidden, Item, Run, Verdict, register
from .ex05 import first_sentence

_H2D, _D2H, _KERNEL = TaskKind.H2D, TaskKind.D2H, TaskKind.KERNEL
#: findings the ``no_race`` items judge (claimed for the findings gate)
RACE_KINDS = ("race", "wait_before_record")
#: the throughput item's target: pipeline throughput / synchronous throughput
TARGET_SPEEDUP = 2.0

# the ACL values the reference program uses (pyACL exports no constants)
ACL_FLOAT = 0
ACL_FORMAT_ND = 2
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
NPY_FLOAT32 = 11


# ============================================================================== shared


def outputs_match(got: Any, want: list[np.ndarray], what: str, one: str = "") -> Verdict:
    """Compare a returned list of arrays with the expected ones (float32, tolerant).

    ``what`` names the list in the reasons ("outputs"), ``one`` an element ("output";
    default: ``what`` without its final "s").
    """
    one = one or what.removesuffix("s")
    if not isinstance(got, (list, tuple)):
        return False, (f"your function returned {type(got).__name__}, not a list of "
                       f"{len(want)} {what}")
    if len(got) != len(want):
        return False, f"your function returned {len(got)} {what}, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g is None:
            return False, f"{one} {i} is None"
        arr = np.asarray(g)
        if arr.shape != w.shape:
            return False, f"{one} {i} has shape {list(arr.shape)}, expected {list(w.shape)}"
        close = np.isclose(arr, w, rtol=1e-5, atol=1e-5)
        if not close.all():
            bad = np.nonzero(~close.reshape(-1))[0]
            j = int(bad[0])
            zeros = " (all zeros: it was read before anything was written)" \
                if not arr.any() else ""
            return False, (f"{one} {i} is wrong{zeros}: {len(bad)} of {w.size} elements "
                           f"differ (element {j}: got {arr.reshape(-1)[j]:.6g}, expected "
                           f"{w.reshape(-1)[j]:.6g})")
    return True, f"all {len(want)} {what} are right"


def race_text(f: Finding) -> str:
    """A race finding in a few lines: its first sentence and the two accesses (no fix)."""
    lines = f.message.split("\n")
    parts = [first_sentence(lines[0])]
    parts += [ln.strip() for ln in lines[1:] if ln.strip().startswith(("first:", "second:"))]
    return "\n".join(parts)


def race_verdict(run: Run) -> Verdict:
    """No ``race`` finding; a wait before its record gets the specific explanation."""
    early = run.of_kind("wait_before_record")
    races = run.of_kind("race")
    if early:
        f = early[0]
        return False, (f"acl.rt.stream_wait_event at {f.file}:{f.line} ran before the "
                       "acl.rt.record_event it should wait for (wait called before record): "
                       "the wait failed with 107000 and ordered nothing"
                       + (f", and the streams raced ({len(races)} race finding(s))"
                          if races else "") + ".")
    if races:
        more = f"\n({len(races)} race findings; this is the first)" if len(races) > 1 else ""
        return False, f"{race_text(races[0])}{more}"
    return True, "no race: every access to device memory is ordered"


def _tasks_of(trace: Any, kind: int) -> list[int]:
    t = trace.tasks
    return [i for i in np.nonzero(t["kind"] == kind)[0].tolist() if int(t["start_ns"][i]) >= 0]


# ============================================================================== 06.1


def make_args_1(seed: int) -> tuple[Any, ...]:
    """``(a, b)``: two float32 matrices of a seeded shape (64 to 256 rows, 256 columns)."""
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(64, 257)), 256)
    return (rng.standard_normal(shape).astype(np.float32),
            rng.standard_normal(shape).astype(np.float32))


def check_correct_1(run: Run) -> Verdict:
    """The function returns ``a + b``."""
    a, b = make_args_1(run.seed)
    if (why := run.no_result()) is not None:
        return False, why
    if run.result is None or np.asarray(run.result).shape != a.shape:
        return False, f"your function returned {type(run.result).__name__}, not a + b"
    ok, why = outputs_match([run.result], [a + b], "result")
    return ok, why.replace("result 0", "the result") if not ok else "the result equals a + b"


def check_ordered(run: Run) -> Verdict:
    """The copy back runs on another stream than the Add, after a wait on an event recorded
    after the Add on the Add's stream."""
    trace = run.trace
    t = trace.tasks
    kernels = _tasks_of(trace, _KERNEL)
    copies = _tasks_of(trace, _D2H)
    if not kernels or not copies:
        return False, "no Add and copy back ran on the device"
    k, d = kernels[-1], copies[-1]
    ks, ds = int(t["stream"][k]), int(t["stream"][d])
    if ds < 0:
        return False, ("the sum came back with a synchronous acl.rt.memcpy, not on the second "
                       "stream: queue the copy back with acl.rt.memcpy_async on it")
    if ds == ks:
        return False, ("the copy back ran on the same stream as the Add: this exercise orders "
                       "two streams, so keep the copy on its own stream")
    e = trace.edges
    for j in range(e.rows):
        rec, wait = int(e["record"][j]), int(e["wait"][j])
        if (int(t["stream"][rec]) == ks and rec > k and int(t["stream"][wait]) == ds
                and wait < d):
            return True, ("the copy stream waits for an event recorded after the Add on the "
                          "Add's stream")
    if run.of_kind("wait_before_record"):
        return False, ("the copy stream's wait was called before the record_event, so it "
                       "waits for nothing: record first, then wait")
    return False, ("nothing orders the copy back after the Add: no stream_wait_event on the "
                   "copy's stream waits for an event recorded on the Add's stream after the "
                   "Add")


EXERCISE_1 = register(Exercise(
    id="06.1",
    title="Order work across two streams with an event",
    entry="add_on_two_streams",
    make_args=make_args_1,
    time_limit=30.0,
    items=(
        Item("correct", "The function returns a + b", 3, device_result(check_correct_1),
             "Look at what the copy back reads, and when, compared with when the Add writes "
             "its output.", "timeline"),
        Item("ordered", "The copy back runs on the second stream, after an event recorded "
             "on the first", 2, check_ordered,
             "An event captures the work already queued on a stream when it is recorded; "
             "another stream can be told to wait for it.", "timeline"),
        Item("no_race", "No race between the two streams", 3, race_verdict,
             "Find the two tasks in the race view: which one must finish before the other "
             "starts, and what would tell the second stream so?", "race_view",
             claims=RACE_KINDS),
    ),
))


# ============================================================================== 06.2


#: The hidden run's batch counts and rows (never the visible run's 8 to 12 and 64/96/128).
HIDDEN_BATCHES = (3, 4, 5, 6, 13, 14, 15, 16)
HIDDEN_ROWS = (32, 160)


def make_args_2(seed: int, hidden: bool = False) -> tuple[Any, ...]:
    """``(batches, bias)``: 8 to 12 float32 batches of 64, 96 or 128 x 512, bias 1 x 512
    (``hidden``: 3 to 6 or 13 to 16 batches of 32 or 160 rows)."""
    rng = np.random.default_rng([seed, 1] if hidden else seed)
    k = int(rng.choice(HIDDEN_BATCHES)) if hidden else int(rng.integers(8, 13))
    rows = int(rng.choice(HIDDEN_ROWS if hidden else [64, 96, 128]))
    bias = rng.standard_normal((1, 512)).astype(np.float32)
    batches = [rng.standard_normal((rows, 512)).astype(np.float32) for _ in range(k)]
    return (batches, bias)


def sync_pipeline(batches: list[np.ndarray], bias: np.ndarray) -> list[np.ndarray]:
    """The synchronous baseline (the exercise's starter): per batch, copy in, Add, copy out,
    each step waited for. Runs against the current Session's emulated ``acl``."""
    from ... import acl as emulated

    acl: Any = emulated  # called as a program calls pyACL: (value, ret) pairs, codes

    def ok(name: str, ret: int) -> None:
        if ret != 0:
            raise RuntimeError(f"{name} failed, ret={ret}")

    shape = batches[0].shape
    nbytes = batches[0].nbytes
    ok("acl.init", acl.init())
    ok("acl.rt.set_device", acl.rt.set_device(0))
    ctx, ret = acl.rt.create_context(0)
    ok("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    ok("acl.rt.create_stream", ret)
    x_desc = acl.create_tensor_desc(ACL_FLOAT, list(shape), ACL_FORMAT_ND)
    b_desc = acl.create_tensor_desc(ACL_FLOAT, list(bias.shape), ACL_FORMAT_ND)
    attr = acl.op.create_attr()
    dev_b, ret = acl.rt.malloc(bias.nbytes, ACL_MEM_MALLOC_NORMAL_ONLY)
    ok("acl.rt.malloc", ret)
    ok("acl.rt.memcpy", acl.rt.memcpy(dev_b, bias.nbytes, acl.util.bytes_to_ptr(
        bias.tobytes()), bias.nbytes, ACL_MEMCPY_HOST_TO_DEVICE))
    dev_x, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_NORMAL_ONLY)
    ok("acl.rt.malloc", ret)
    dev_y, ret = acl.rt.malloc(nbytes, ACL_MEM_MALLOC_NORMAL_ONLY)
    ok("acl.rt.malloc", ret)
    bufs = [acl.create_data_buffer(p, n) for p, n in
            ((dev_x, nbytes), (dev_b, bias.nbytes), (dev_y, nbytes))]
    host_in, ret = acl.rt.malloc_host(nbytes)
    ok("acl.rt.malloc_host", ret)
    host_out, ret = acl.rt.malloc_host(nbytes)
    ok("acl.rt.malloc_host", ret)
    out = []
    for x in batches:
        acl.util.ptr_to_numpy(host_in, shape, NPY_FLOAT32)[...] = x
        ok("acl.rt.memcpy", acl.rt.memcpy(dev_x, nbytes, host_in, nbytes,
                                          ACL_MEMCPY_HOST_TO_DEVICE))
        ok("acl.op.execute_v2", acl.op.execute_v2("Add", [x_desc, b_desc], bufs[:2], [x_desc],
                                                  bufs[2:], attr, stream))
        ok("acl.rt.synchronize_stream", acl.rt.synchronize_stream(stream))
        ok("acl.rt.memcpy", acl.rt.memcpy(host_out, nbytes, dev_y, nbytes,
                                          ACL_MEMCPY_DEVICE_TO_HOST))
        out.append(acl.util.ptr_to_numpy(host_out, shape, NPY_FLOAT32).copy())
    for buf in bufs:
        acl.destroy_data_buffer(buf)
    for p in (dev_x, dev_y, dev_b):
        ok("acl.rt.free", acl.rt.free(p))
    for h in (host_in, host_out):
        ok("acl.rt.free_host", acl.rt.free_host(h))
    acl.op.destroy_attr(attr)
    acl.destroy_tensor_desc(x_desc)
    acl.destroy_tensor_desc(b_desc)
    ok("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    ok("acl.rt.destroy_context", acl.rt.destroy_context(ctx))
    ok("acl.rt.reset_device", acl.rt.reset_device(0))
    ok("acl.finalize", acl.finalize())
    return out


def batch_window_ns(trace: Any, skip_bytes: int) -> tuple[int, int] | None:
    """Virtual time of the batch phase: from the start of the first host-to-device copy
    (other than copies of ``skip_bytes``, the bias) to the end of the last device-to-host
    copy. None when there is no such pair of copies."""
    t, a = trace.tasks, trace.accesses
    length = np.zeros(t.rows, dtype=np.int64)
    np.maximum.at(length, a["task"].astype(np.int64), a["length"].astype(np.int64))
    ins = [i for i in _tasks_of(trace, _H2D) if int(length[i]) != skip_bytes]
    outs = [i for i in _tasks_of(trace, _D2H) if int(t["end_ns"][i]) >= 0]
    if not ins or not outs:
        return None
    start = min(int(t["start_ns"][i]) for i in ins)
    end = max(int(t["end_ns"][i]) for i in outs)
    return (start, end) if end > start else None


@lru_cache(maxsize=32)
def baseline_ns(seed: int, profile: str) -> int:
    """The batch-phase virtual time of ``sync_pipeline`` on the seed's arguments, run in a
    fresh Session of ``profile`` (the timing depends only on shapes, so it is cached)."""
    batches, bias = make_args_2(seed)
    with Session(profile=profile) as session:  # current for the run, the previous one after
        sync_pipeline(batches, bias)
        trace = session.trace()
    window = batch_window_ns(trace, bias.nbytes)
    assert window is not None
    return window[1] - window[0]


def _hidden_args_2(seed: int) -> tuple[Any, ...]:
    return make_args_2(seed, hidden=True)


def check_correct_2(run: Run) -> Verdict:
    """Every output is its batch + bias, in batch order."""
    batches, bias = make_args_2(run.seed, run.hidden)
    if (why := run.no_result()) is not None:
        return False, why
    ok, why = outputs_match(run.result, [x + bias for x in batches], "outputs")
    return ok, why if not ok else f"all {len(batches)} outputs equal batch + bias"


def check_overlap(run: Run) -> Verdict:
    """Some copy time runs under compute (the pipeline's first step: batches in flight at
    once), with the outputs right."""
    right, _ = check_correct_2(run)
    if not right:
        return False, "the outputs are wrong, so the overlap does not count (see the first item)"
    ov = overlap_summary(run.trace)
    streams = {int(s) for s in run.trace.tasks["stream"][_tasks_of(run.trace, _KERNEL)]}
    if ov.overlap_ns <= 0:
        return False, (f"no copy ran while an Add computed: the Adds ran on {len(streams)} "
                       f"stream(s) and the device did one thing at a time, busy "
                       f"{ov.utilisation:.0%} of the time")
    return True, (f"copies ran under compute for {ov.overlap_ns / 1e3:.1f} µs "
                  f"({ov.copy_hidden:.0%} of the copy time hidden); the Adds ran on "
                  f"{len(streams)} stream(s)")


def check_throughput(run: Run) -> Verdict:
    """Batch-phase throughput at least ``TARGET_SPEEDUP`` times the synchronous version's."""
    batches, bias = make_args_2(run.seed)
    right, _ = check_correct_2(run)
    if not right:
        return False, "the outputs are wrong, so the speed does not count (see the first item)"
    window = batch_window_ns(run.trace, bias.nbytes)
    if window is None:
        return False, "no batch was copied to the device and back"
    mine = window[1] - window[0]
    base = baseline_ns(run.seed, str(run.trace.meta.get("profile", "Ascend310P3")))
    ratio = base / mine
    ov = overlap_summary(run.trace)
    streams = {int(s) for s in run.trace.tasks["stream"][_tasks_of(run.trace, _KERNEL)]}
    text = (f"{len(batches)} batches took {mine / 1e3:.1f} µs of virtual time from the first "
            f"batch copied in to the last result copied out; the synchronous version takes "
            f"{base / 1e3:.1f} µs: {ratio:.2f}x its throughput (target "
            f"{TARGET_SPEEDUP:g}x). The Adds ran on {len(streams)} stream(s); copies ran "
            f"under compute for {ov.overlap_ns / 1e3:.1f} µs ({ov.copy_hidden:.0%} of the "
            f"copy time hidden) and the device was busy {ov.utilisation:.0%} of the time.")
    return ratio >= TARGET_SPEEDUP, text


#: What 06.2 teaches; the synchronous starter is already correct and race-free, so those
#: items' points count once one of these passes.
_LESSON_2 = ("overlap", "throughput")

EXERCISE_2 = register(Exercise(
    id="06.2",
    title="An H2D -> compute -> D2H pipeline, double-buffered on two streams",
    entry="pipeline",
    make_args=make_args_2,
    time_limit=60.0,
    items=(
        Item("correct", "Every output is its batch + bias, in order", 3,
             device_result(check_correct_2),
             "Check which buffers a batch uses while the batch before it may still be in "
             "flight, on the device and on the host.", "timeline", counts_with=_LESSON_2),
        Item("no_race", "No race between the streams", 2,
             race_verdict,
             "Two batches in flight must never share a buffer unless something orders "
             "them; the race view shows which two tasks collide.", "race_view",
             claims=RACE_KINDS, counts_with=_LESSON_2),
        Item("overlap", "Copies run while an Add computes (batches in flight at once)", 2,
             check_overlap,
             "The overlap figure shows copy time under compute: with one stream and a "
             "synchronize per batch there is none. Which batch's copy could run while "
             "another batch is added?", "overlap_figure"),
        Item("throughput", f"At least {TARGET_SPEEDUP:g}x the throughput of the synchronous "
             "version (virtual time)", 4, check_throughput,
             "On the overlap figure, is the copy-in of one batch running while another "
             "batch is being computed? Each synchronize makes the host wait for the whole "
             "stream.", "overlap_figure"),
    ),
    hidden=(Hidden(
        "other_sizes", "3 to 6 or 13 to 16 batches of 32 or 160 rows instead of 8 to 12 of "
        "64 to 128, from a seed drawn by the grader", _hidden_args_2, (
            Item("sizes_overlap", "with another number and size of batches, copies still run "
                 "while an Add computes", 1, check_overlap,
                 "Does your pipeline assume how many batches there are, or their size?",
                 "overlap_figure"),
            Item("sizes_correct", "every output of those batches is its batch + bias, in order",
                 1, device_result(check_correct_2),
                 "Handle any number of batches, odd ones included, and any batch shape.",
                 "timeline", counts_with=("sizes_overlap",)),
        )),),
))
