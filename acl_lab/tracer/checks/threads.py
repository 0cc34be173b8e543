"""Ordering between host threads: calls two threads must make in one order, with nothing
that orders them.

The host schedule (``runtime.hostsched``) makes a threaded run reproducible, but one run's
order is still only one of the orders the hardware allows. These checks ask, with the one
happens-before of the race check (``ordering.call_order``: program order, the device's
edges, and the program's own synchronization recorded as ``host_edges``), whether an order
the program *needs* is *guaranteed*, and report it on every run when it is not, whichever
thread happened to go first here:

* a ``stream_wait_event`` in one thread on an event another thread records: the wait must
  come after the record it means (``wait_before_record``);
* a report thread's ``process_report`` and another thread's ``subscribe_report`` /
  ``unsubscribe_report`` of it: the loop must not run before the subscription or after the
  unsubscription, unless it tolerates the 107012 it then gets (the public samples' loop
  ignores ``process_report``'s return value, so it cannot go wrong: it is left alone);
* a ``free`` or ``destroy`` in one thread of memory or an object another thread uses: every
  use must come before it (``thread_order``).

A pair the program orders (a join, an Event set before it is waited on, a queue item, a
lock handed over, a synchronize) is silent.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...runtime.kinds import Ending
from ..schema import ARG_INT
from ..sources import stored_sources
from .base import Finding, TraceIndex, human_bytes, site
from .ordering import before, call_order

#: The runtime's note naming the thread a subscribe_report bound (``threads.subscribe``).
REPORT_THREAD = "report_thread"

_DISCARDED = re.compile(r"^\s*(?:(?:while|for)\s*\(.*\)\s*|(?:while|for)\b.*:\s*|do\s+)?"
                        r"[\w.:]*(process_report|aclrtProcessReport)\s*\(.*\)\s*;?\s*"
                        r"(#.*|//.*)?$")
_ASSIGNED = re.compile(r"^\s*(\w+)\s*(:[^=]*)?=\s*[\w.]*(process_report|aclrtProcessReport)"
                       r"\s*\(")


@dataclass
class _Need:
    """Call ``first`` (thread ``a``) must happen before call ``then`` (thread ``b``)."""

    kind: str
    first: int
    then: int
    what: dict[str, Any] = field(default_factory=dict)


def thread_orders(trace: Any) -> list[Finding]:
    """Cross-thread pairs the program needs ordered that nothing orders (module notes)."""
    calls = trace.calls
    if calls.rows == 0 or len(np.unique(calls["thread"])) < 2:
        return []
    needs = _record_waits(trace) + _subscriptions(trace) + _teardowns(trace)
    if not needs:
        return []
    clocks = call_order(trace, {n.first for n in needs}, {n.then for n in needs})
    loose = [n for n in needs if not before(clocks, trace, n.first, n.then)]
    groups: dict[tuple[Any, ...], list[_Need]] = defaultdict(list)
    for n in loose:
        groups[(n.kind, site(trace, n.first), site(trace, n.then))].append(n)
    out = [_finding(trace, ns) for ns in groups.values()]
    out.sort(key=lambda f: (f.file, f.line, f.calls))
    return out


# =============================================================================== the pairs
def _record_waits(trace: Any) -> list[_Need]:
    """Each stream_wait_event that resolved to a record queued by another thread."""
    ed, tasks, thread = trace.edges, trace.tasks, trace.calls["thread"]
    out = []
    for r, w in zip(ed["record"].tolist(), ed["wait"].tolist(), strict=True):
        rc, wc = int(tasks["call"][r]), int(tasks["call"][w])
        if 0 <= rc < wc and int(thread[rc]) != int(thread[wc]):
            out.append(_Need("record", rc, wc, {"event": int(tasks["event"][w])}))
    return out


def _subscriptions(trace: Any) -> list[_Need]:
    """A report thread's first process_report after another thread's subscribe_report of
    it, and its last one before the unsubscribe_report, when its loop does not tolerate the
    107012 it would get in the other order."""
    ix = TraceIndex.of(trace)
    thread = trace.calls["thread"]
    reports: dict[int, list[int]] = defaultdict(list)
    for c in ix.calls_named("acl.rt.process_report").tolist():
        reports[int(thread[c])].append(int(c))
    out = []
    for c, _level, text in ix.diags_of(REPORT_THREAD):
        if not text.isdigit() or c < 0 or int(trace.calls["ret"][c]) != 0:
            continue
        target, name = int(text), ix.call_name(c)
        mine = reports.get(target, [])
        if target == int(thread[c]) or not mine:
            continue
        if name == "acl.rt.subscribe_report":
            p = mine[0]
            if not _tolerant(trace, p):
                out.append(_Need("subscribe", c, p, {"thread": target}))
        elif name == "acl.rt.unsubscribe_report":
            earlier = [p for p in mine if p < c]
            if earlier and not _tolerant(trace, earlier[-1]):
                out.append(_Need("unsubscribe", earlier[-1], c, {"thread": target}))
    return out


def _tolerant(trace: Any, c: int) -> bool:
    """Whether the process_report call ``c`` ignores its return value (so a 107012 cannot
    stop its loop): its line calls it as a statement, or assigns the result to a name the
    lines after it in the same block (as stored in the trace) never use."""
    file, line = site(trace, c)
    lines = stored_sources(trace).get(file, {})
    text = lines.get(line)
    if text is None:
        return False  # unknown: assume the loop checks it
    if _DISCARDED.match(text):
        return True
    m = _ASSIGNED.match(text)
    if m is None:
        return False
    name = m.group(1)
    indent = len(text) - len(text.lstrip())
    for n in range(line + 1, line + 4):
        nxt = lines.get(n)
        if nxt is None:
            return False  # beyond what the trace keeps: assume it is used
        if not nxt.strip():
            continue
        if len(nxt) - len(nxt.lstrip()) < indent:
            return True  # the block ends: the name was not looked at
        if re.search(rf"\b{re.escape(name)}\b", nxt):
            return False
    return False


def _teardowns(trace: Any) -> list[_Need]:
    """Per freed allocation and destroyed object, each other thread's last use before it
    (every earlier use of that thread comes before it in its program order)."""
    ix = TraceIndex.of(trace)
    thread = trace.calls["thread"]
    out: list[_Need] = []
    fr = trace.frees
    frees: dict[int, int] = {}
    for a, c, how in zip(fr["alloc"].tolist(), fr["call"].tolist(), fr["how"].tolist(),
                         strict=True):
        if a >= 0 and how == Ending.EXPLICIT and c >= 0:
            frees.setdefault(a, c)
    if frees:
        pa = ix.ptr_args
        keep = np.isin(pa.allocs, np.fromiter(frees, dtype=np.int64))
        last: dict[tuple[int, int], int] = {}
        for c, a in zip(pa.calls[keep].tolist(), pa.allocs[keep].tolist(), strict=True):
            f = frees[a]
            t = int(thread[c])
            if c < f and t != int(thread[f]) and c > last.get((a, t), -1):
                last[(a, t)] = c
        for (a, _t), c in last.items():
            out.append(_Need("free", c, frees[a], {"alloc": a}))
    ds = trace.destroys
    gone: dict[int, tuple[int, int]] = {}
    o = trace.objects
    for obj, c, how in zip(ds["obj"].tolist(), ds["call"].tolist(), ds["how"].tolist(),
                           strict=True):
        if how == Ending.EXPLICIT and c >= 0:
            gone.setdefault(int(o["handle"][obj]), (obj, c))
    if gone:
        args = trace.args
        rows = np.nonzero((args["kind"] == ARG_INT)
                          & np.isin(args["value"], np.fromiter(gone, dtype=np.int64)))[0]
        if len(rows):
            owner = np.searchsorted(trace.calls["arg_start"], rows, side="right") - 1
            lastu: dict[tuple[int, int], int] = {}
            for r, c in zip(rows.tolist(), owner.tolist(), strict=True):
                obj, d = gone[int(args["value"][r])]
                t = int(thread[c])
                if int(o["call"][obj]) < c < d and t != int(thread[d]) \
                        and c > lastu.get((obj, t), -1):
                    lastu[(obj, t)] = c
            for (obj, _t), c in lastu.items():
                out.append(_Need("destroy", c, gone[int(o["handle"][obj])][1], {"obj": obj}))
    return out


# =============================================================================== findings
def _finding(trace: Any, ns: list[_Need]) -> Finding:
    n = ns[0]
    ix = TraceIndex.of(trace)
    a, b = n.first, n.then
    fa, la = site(trace, a)
    fb, lb = site(trace, b)
    ta, tb = ix.thread_name(int(trace.calls["thread"][a])), \
        ix.thread_name(int(trace.calls["thread"][b]))
    ca = f"{trace.call_name(a)} at {fa}:{la} ({ta})"
    cb = f"{trace.call_name(b)} at {fb}:{lb} ({tb})"
    times = f" It happened {len(ns)} times at the same two lines." if len(ns) > 1 else ""
    luck = ("In this run the first came first, but nothing makes it so: with other timing "
            "(a slower thread, a busier machine, another seed of acl-lab run --explore) the "
            "order flips.")
    order_fix = ("Order the two threads: after the first call, set a threading.Event (or put "
                 "into a queue.Queue) that the other thread waits on (gets from) before the "
                 "second; or join the first thread (Thread.join / acl.util.stop_thread).")
    ids: dict[str, tuple[int, ...]] = {"threads": tuple(sorted({
        int(trace.calls["thread"][a]), int(trace.calls["thread"][b])}))}
    if n.kind == "record":
        kind, sev = "wait_before_record", "warning"
        msg = (f"{cb} waits on an event that {ca} records, in another thread, and nothing "
               "orders the wait after the record." + times + " " + luck + " A wait queued "
               "before its record waits for nothing (a legacy event returns 107000, a new-mode "
               "one goes straight on), so the consumer reads stale data. Rule: the "
               "record_event must be issued before the stream_wait_event that means it. "
               "Fix: " + order_fix)
        if n.what.get("event", -1) >= 0:
            ids["events"] = (int(n.what["event"]),)
    elif n.kind in ("subscribe", "unsubscribe"):
        kind, sev = "thread_order", "error"
        if n.kind == "subscribe":
            msg = (f"{cb} may run before {ca} subscribed its thread to the stream: nothing "
                   "orders them." + times + " " + luck + " Then acl.rt.process_report "
                   "returns 107012 (ACL_ERROR_RT_THREAD_SUBSCRIBE), and this loop checks its "
                   "return value: it stops or fails, and the callbacks never run. Rule: a "
                   "report loop either tolerates 107012 until the subscription (the samples "
                   "ignore process_report's return value) or starts after it. Fix: set a "
                   "threading.Event after subscribe_report and wait on it at the top of the "
                   "report thread, or let the loop go on after 107012.")
        else:
            msg = (f"{cb} unsubscribes the report thread while it may still run its loop: "
                   f"the thread's last call of it, {ca}, is not ordered before it." + times
                   + " " + luck + " A process_report that starts after the unsubscription "
                   "returns 107012, which this loop checks; one in process_report(-1) at that "
                   "moment waits forever. Rule: stop the report loop before unsubscribing. "
                   "Fix: set the loop's exit flag and join the thread (acl.util.stop_thread), "
                   "then call acl.rt.unsubscribe_report.")
    else:
        kind, sev = "thread_order", "error"
        if n.kind == "free":
            al = int(n.what["alloc"])
            af, ll = site(trace, int(trace.allocs["call"][al]))
            what = f"the {human_bytes(int(trace.allocs['requested'][al]))} buffer allocated " \
                   f"at {af}:{ll}"
            ids["allocs"] = (al,)
        else:
            obj = int(n.what["obj"])
            label = trace.string(int(trace.objects["label"][obj]))
            of, ol = site(trace, int(trace.objects["call"][obj]))
            what = f"{label} (created at {of}:{ol})"
            ids["objects"] = (obj,)
        verb = "frees" if n.kind == "free" else "destroys"
        msg = (f"{cb} {verb} {what} while another thread may still use it: {ca} is not "
               "ordered before it." + times + " " + luck + " Then the use comes after the "
               f"{'free' if n.kind == 'free' else 'destroy'}: a use after free, or a task "
               "still running on memory given back. Rule: every use in another thread must "
               f"happen before the {'free' if n.kind == 'free' else 'destroy'}. Fix: join "
               "the thread that uses it (Thread.join / acl.util.stop_thread), or have it "
               "signal that it is done (threading.Event, queue.Queue) and wait for that, "
               "before releasing it.")
    calls = tuple(sorted({x.first for x in ns} | {x.then for x in ns}))
    return Finding(kind, sev, msg, fb, lb, calls, ids, ((fa, la), (fb, lb)))


def left_control(trace: Any) -> list[Finding]:
    """Where the host schedule's fallback preempted a thread that ran without a scheduling
    point (a busy-wait, a blocking C call): from there the threads' order was not the
    emulator's, and the run may not replay."""
    ix = TraceIndex.of(trace)
    out = []
    for c, _level, text in ix.diags_of("schedule_left_control"):
        f, ln = site(trace, c) if c >= 0 else ("", 0)
        out.append(Finding("schedule_left_control", "warning",
                           text + " Rule: under the emulator, threads take turns at ACL calls, "
                           "threading and queue operations and time.sleep; code that waits "
                           "without them leaves the schedule to the operating system.",
                           f, ln, (c,) if c >= 0 else (), {}, ((f, ln),)))
    return out


CHECKS = (thread_orders, left_control)
