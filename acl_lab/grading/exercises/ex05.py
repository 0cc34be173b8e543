"""Exercise 05: multi-context threading (``add_in_threads``).

The learner writes ``add_in_threads(pairs)``: one worker thread per ``(a, b)`` pair, each with
its own context and stream, each computing ``a + b`` on the device with ``acl.op.execute_v2``
("Add") and returning it; the calling thread initialises ACL, starts and joins the workers,
and tears down. The starter creates the contexts and streams in the calling thread and hands
them to the workers, so every worker call returns 107002 (``context_not_set``).

The rubric reads the trace: which thread made each context current, which thread launched
each Add, on which stream and in which context, and which streams and contexts were never
destroyed. The pairs are drawn from the run's seed, so a hard-coded answer cannot pass.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from ...runtime.kinds import ObjectKind, TaskKind
from ...tracer.checks import Finding
from ..provenance import device_result
from ..rubric import THREADED_SCHEDULES, Exercise, Hidden, Item, Run, Verdict, register

_CONTEXT, _STREAM = ObjectKind.CONTEXT, ObjectKind.STREAM
_KERNEL = TaskKind.KERNEL
#: calls that make a context current for the calling thread
_BINDING_CALLS = ("acl.rt.create_context", "acl.rt.set_context", "acl.rt.set_device")


#: Pairs (worker threads) of the hidden run ``acl-lab grade`` makes (the visible run: 3 to 5).
HIDDEN_PAIRS = (6, 9)


def make_args(seed: int, hidden: bool = False) -> tuple[Any, ...]:
    """``(pairs,)``: 3 to 5 pairs of int32 matrices of one seeded shape (``hidden``: 6 to
    8 pairs)."""
    rng = np.random.default_rng([seed, 1] if hidden else seed)
    n = int(rng.integers(*HIDDEN_PAIRS)) if hidden else int(rng.integers(3, 6))
    shape = (int(rng.integers(4, 33)), int(rng.integers(8, 65)))
    pairs = [(rng.integers(-1000, 1000, shape, dtype=np.int32),
              rng.integers(-1000, 1000, shape, dtype=np.int32)) for _ in range(n)]
    return (pairs,)


# ------------------------------------------------------------------------------ trace helpers


def first_sentence(text: str) -> str:
    """The first sentence (or line) of a finding's message."""
    line = text.strip().split("\n")[0]
    end = line.find(". ")
    return line if end < 0 else line[: end + 1]


def finding_head(message: str) -> str:
    """What a finding says happened, without its rule and fix (those give the answer)."""
    return message.split(" Rule:")[0].strip()


def thread_label(trace: Any, th: int) -> str:
    """``thread 2 (Thread-3 (worker))``: the trace's index and the Python name."""
    return f"thread {th} ({trace.string(int(trace.threads['name'][th]))})"


def ok_calls(trace: Any, name: str) -> list[int]:
    """Ids of the calls to ``name`` that returned 0."""
    rets = trace.calls["ret"]
    return [int(c) for c in trace.calls_named(name) if int(rets[c]) == 0]


def entry_thread(trace: Any) -> int:
    """The thread that ran the learner's function: the one that made the first call."""
    return int(trace.calls["thread"][0]) if trace.calls.rows else -1


# ------------------------------------------------------------------------------ items


def _hidden_args(seed: int) -> tuple[Any, ...]:
    return make_args(seed, hidden=True)


def _pairs(run: Run) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs: list[tuple[np.ndarray, np.ndarray]] = make_args(run.seed, run.hidden)[0]
    return pairs


def check_correct(run: Run) -> Verdict:
    """Every thread's result is its pair's ``a + b``, in the order of the pairs."""
    pairs = _pairs(run)
    n = len(pairs)
    if (why := run.no_result()) is not None:
        return False, why
    res = run.result
    if not isinstance(res, (list, tuple)):
        return False, (f"your function returned {type(res).__name__}, not a list with one "
                       f"result per pair ({n} pairs)")
    if len(res) != n:
        return False, f"your function returned {len(res)} results for {n} pairs"
    for i, ((a, b), got) in enumerate(zip(pairs, res, strict=True)):
        want = a + b
        if got is None:
            return False, f"the result for pair {i} is None: its worker never filled it in"
        arr = np.asarray(got)
        if arr.shape != want.shape:
            return False, (f"the result for pair {i} has shape {list(arr.shape)}, expected "
                           f"{list(want.shape)}")
        bad = np.nonzero(arr.reshape(-1) != want.reshape(-1))[0]
        if len(bad):
            j = int(bad[0])
            zeros = " (all zeros: its Add never ran)" if not arr.any() else ""
            return False, (f"the result for pair {i} is wrong{zeros}: {len(bad)} of "
                           f"{want.size} elements differ (element {j}: got "
                           f"{arr.reshape(-1)[j]}, expected {want.reshape(-1)[j]})")
    shape = "x".join(str(d) for d in pairs[0][0].shape)
    return True, f"all {n} results equal a + b ({shape} int32)"


def _context_makers(trace: Any) -> dict[int, list[int]]:
    """Thread -> the successful calls in it that made a context current."""
    out: dict[int, list[int]] = defaultdict(list)
    th = trace.calls["thread"]
    for name in _BINDING_CALLS:
        for c in ok_calls(trace, name):
            out[int(th[c])].append(c)
    return out


def _not_set_reason(run: Run, found: list[Finding]) -> str:
    """The reason for 107002 findings; specific when contexts were bound elsewhere."""
    trace = run.trace
    failing: set[int] = set()
    for f in found:
        failing.update(f.ids.get("threads", ()))
    makers = _context_makers(trace)
    first = found[0]
    where = f"{first.file}:{first.line}"
    names = ", ".join(thread_label(trace, t) for t in sorted(failing))
    count = f"{len(failing)} thread(s)" if len(failing) != 1 else "a thread"
    head = (f"{count} ({names}) got 107002, no current context, starting at {where}")
    creators = [t for t in makers if t not in failing]
    if failing and creators and not any(t in makers for t in failing):
        made = sum(len(makers[t]) for t in creators)
        who = ", ".join(thread_label(trace, t) for t in sorted(creators))
        main = " (the thread that runs your function)" if entry_thread(trace) in creators \
            else ""
        return (f"{head}. All {made} calls that made a context current ran in {who}{main}: "
                "the context was bound in the main thread instead of the worker. A context "
                "is current only in the thread that created or set it, and a new thread "
                "starts with none.")
    return f"{head}. {first_sentence(first.message)}"


def check_contexts(run: Run) -> Verdict:
    """No ``context_not_set`` or ``wrong_context`` finding."""
    not_set = run.of_kind("context_not_set")
    wrong = run.of_kind("wrong_context")
    if not_set:
        return False, _not_set_reason(run, not_set)
    if wrong:
        f = wrong[0]
        return False, (f"{first_sentence(f.message)} A worker queued work on a stream that "
                       "belongs to a context that was not current in that thread (107003).")
    if run.trace.calls.rows == 0:
        return False, "your function made no ACL call"
    return True, "every call ran with the right context current"


def _kernel_launches(trace: Any) -> dict[int, list[tuple[int, int]]]:
    """Thread -> [(stream object, context object)] of every kernel it queued."""
    t, c = trace.tasks, trace.calls
    out: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for i in np.nonzero(t["kind"] == _KERNEL)[0].tolist():
        cid = int(t["call"][i])
        if cid < 0 or int(c["ret"][cid]) != 0:
            continue
        out[int(c["thread"][cid])].append((int(t["stream"][i]), int(c["ctx"][cid])))
    return out


def check_threads(run: Run) -> Verdict:
    """At least N threads queued an Add, each on its own stream in its own context."""
    n = len(_pairs(run))
    trace = run.trace
    launches = _kernel_launches(trace)
    if len(launches) < n:
        if not launches:
            return False, "no thread queued an Add on the device (no kernel task ran)"
        who = ", ".join(thread_label(trace, t) for t in sorted(launches))
        return False, (f"only {len(launches)} thread(s) queued an Add ({who}); expected {n}, "
                       "one worker thread per pair")
    stream_owner: dict[int, int] = {}
    ctx_owner: dict[int, int] = {}
    for th, items in sorted(launches.items()):
        for stream, ctx in items:
            for owner, key, what in ((stream_owner, stream, "stream"),
                                     (ctx_owner, ctx, "context")):
                other = owner.setdefault(key, th)
                if other != th:
                    return False, (f"{thread_label(trace, other)} and "
                                   f"{thread_label(trace, th)} queued their Adds on the same "
                                   f"{what}; each worker needs its own {what}")
    return True, (f"{len(launches)} threads each queued an Add on its own stream in its own "
                  "context")


def check_cleanup(run: Run) -> Verdict:
    """No ``leak`` finding for a stream or a context (set_device without reset included)."""
    trace = run.trace
    kinds = trace.objects["kind"]
    leaks = run.of_kind("leak")
    for f in leaks:
        objs = f.ids.get("objects", ())
        if any(int(kinds[o]) in (_CONTEXT, _STREAM) for o in objs):
            return False, first_sentence(f.message)
    if leaks:  # this item claims every leak for the findings gate: memory ones too
        return False, first_sentence(leaks[0].message)
    made = {name: len(ok_calls(trace, f"acl.rt.{name}"))
            for name in ("create_stream", "create_context")}
    if made["create_stream"] == 0 and made["create_context"] == 0:
        return False, "your function created no stream and no context"
    return True, (f"all {made['create_stream']} streams and {made['create_context']} contexts "
                  "were destroyed, and the device was reset")


EXERCISE = register(Exercise(
    id="05",
    schedules=THREADED_SCHEDULES,
    title="Multi-context threading: one context and one stream per worker thread",
    entry="add_in_threads",
    make_args=make_args,
    time_limit=30.0,
    items=(
        Item("correct", "Every worker's result is a + b for its pair", 4,
             device_result(check_correct),
             "Run one pair by hand first. Then check what each worker returns, and in which "
             "slot of the result list it lands.", "timeline"),
        Item("contexts", "No thread runs without its context (no context_not_set or "
             "wrong_context finding)", 3, check_contexts,
             "The current context belongs to a thread, not to the program. For each worker, "
             "ask which call made a context current in that very thread before its first "
             "ACL call.", "timeline", claims=("context_not_set", "wrong_context")),
        Item("threads", "One worker thread per pair, each queuing its Add on its own stream "
             "in its own context", 2, check_threads,
             "Count the thread lanes that have device work under them on the timeline.",
             "timeline"),
        Item("cleanup", "Every stream and context is destroyed and the device reset", 1,
             check_cleanup,
             "Whoever creates a stream or context destroys it: streams first, then their "
             "context, then reset the device.", "timeline", claims=("leak",)),
    ),
    hidden=(Hidden(
        "more_pairs", f"{HIDDEN_PAIRS[0]} to {HIDDEN_PAIRS[1] - 1} pairs instead of 3 to 5, "
        "from a seed drawn by the grader", _hidden_args, (
            Item("more_threads", "with more pairs, still one worker thread per pair, each "
                 "on its own stream in its own context", 1, check_threads,
                 "Start as many workers as there are pairs.", "timeline"),
            Item("more_correct", "every one of those pairs gets a + b", 1,
                 device_result(check_correct),
                 "One result per pair, in the order of the pairs.", "timeline"),
        )),),
))
