"""Memory checks: frees that go wrong, and tasks or calls that touch memory they should not.

Kinds (compute-sanitizer's memcheck/initcheck taxonomy, for pyACL buffers):

- ``double_free``: a free of an allocation that was already freed;
- ``invalid_free``: a pointer that allocator never handed out (the middle of an allocation,
  an unknown address, pageable Python memory, ``free`` and ``free_host`` mixed up);
- ``use_after_free``: a call given a pointer into an allocation after its explicit free;
- ``free_in_flight``: a free while a task queued before it still used the allocation;
- ``out_of_bounds``: a copy, memset, op or model I/O range past the allocation's end;
- ``uninitialized_read``: a task read bytes that nothing ever wrote;
- ``memcpy_kind_mismatch``: a copy whose declared kind does not match its pointers (the
  runtime corrected or accepted it: a warning; it refused it with 107000: an error).

Evidence comes from the trace only: pointer arguments are recorded relative to their
allocation (also into freed ones), the ``frees`` table says which free was explicit, the
``failures`` table has the runtime's reason for each failed task, ``accesses`` the ranges each
task touched and ``uninit`` the bytes read before any write. Repeated mistakes at one call site
(a loop) are one finding with a count, as ``leaks`` groups by allocating line.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...constants import ErrorCode
from ...runtime.kinds import AllocKind, TaskKind
from ..schema import ALLOC_KINDS
from .base import Finding, TraceIndex, human_bytes, int_array

_DEVICE, _HOST_PINNED, _DVPP = AllocKind.DEVICE, AllocKind.HOST_PINNED, AllocKind.DVPP
_HOST_PAGEABLE = AllocKind.HOST_PAGEABLE
#: Free APIs -> the allocation kind each one releases (allocs.kind).
FREE_APIS = {"acl.rt.free": _DEVICE, "acl.rt.free_host": _HOST_PINNED,
             "acl.media.dvpp_free": _DVPP}
#: Allocation kind -> the API that frees it.
FREE_OF_KIND: dict[int, str] = {kind: api for api, kind in FREE_APIS.items()}
#: Device memory (as opposed to host memory): plain device and DVPP allocations.
_ON_DEVICE = frozenset({_DEVICE, _DVPP})
#: allocation kinds whose frees the runtime accepts for each other (device and DVPP)
_CROSS_FREEABLE = _ON_DEVICE
_INVALID = ErrorCode.ACL_ERROR_RT_PARAM_INVALID
_NULL = ErrorCode.ACL_ERROR_INVALID_PARAM
_MEM_ERROR = ErrorCode.ACL_ERROR_RT_DEVICE_MEM_ERROR
_FREED_REASON = "was freed before the task ran"
_PAST_END = re.compile(r"runs (\d+) bytes past the end of .*?\((\d+) bytes\)")
#: At most this many distinct sites are spelled out in one message.
_MAX_SITES = 4


# --------------------------------------------------------------------------- evidence
# (from the trace's index: call sites, decoded pointers, explicit frees; ``TraceIndex``)


def _sites_text(ev: TraceIndex, cids: Iterable[int]) -> str:
    """Distinct file:line of ``cids`` in first-seen order, a few spelled out."""
    seen: list[str] = []
    for c in cids:
        w = ev.where(c)
        if w not in seen:
            seen.append(w)
    if len(seen) > _MAX_SITES:
        return ", ".join(seen[:_MAX_SITES]) + f" and {len(seen) - _MAX_SITES} more"
    return ", ".join(seen)


def _times(n: int) -> str:
    """'' for one occurrence, ' (N times)' for more."""
    return "" if n == 1 else f" ({n} times)"


def _alloc_text(ev: TraceIndex, allocs: Iterable[int]) -> str:
    """How a message names the allocations of a finding, by allocating line.

    'the device allocation from prog.py:12 (acl.rt.malloc, 100 bytes)', or for a loop
    '10 device allocations from prog.py:12 (acl.rt.malloc, 100 bytes the first)'.
    """
    rows = list(dict.fromkeys(allocs))
    if not rows:
        return "an allocation"
    t = ev.trace
    a = rows[0]
    call = ev.alloc_call(a)
    what = ALLOC_KINDS[ev.alloc_kind(a)].replace("_", " ")
    size = human_bytes(int(t.allocs["requested"][a]))
    same = [x for x in rows if ev.where(ev.alloc_call(x)) == ev.where(call)]
    if len(same) == 1:
        text = f"the {what} allocation from {ev.where(call)} ({t.call_name(call)}, {size})"
    else:
        text = (f"{len(same)} {what} allocations from {ev.where(call)} ({t.call_name(call)}, "
                f"{size} the first)")
    kept = set(same)
    others = [ev.alloc_call(x) for x in rows if x not in kept]
    if others:
        text += f" and allocations from {_sites_text(ev, others)}"
    return text


@dataclass
class _Group:
    """Occurrences of one mistake at one call site, reported as one finding."""

    main: list[int] = field(default_factory=list)
    others: list[int] = field(default_factory=list)
    allocs: list[int] = field(default_factory=list)
    tasks: list[int] = field(default_factory=list)
    amounts: list[int] = field(default_factory=list)

    def finding(self, ev: TraceIndex, kind: str, severity: str, message: str) -> Finding:
        """The Finding for this group, at its first main call."""
        file, line = ev.site(self.main[0])
        calls = tuple(dict.fromkeys(self.main + self.others))
        sites = tuple(dict.fromkeys(ev.site(c) for c in calls))
        ids = {"allocs": tuple(dict.fromkeys(self.allocs)),
               "tasks": tuple(dict.fromkeys(self.tasks))}
        return Finding(kind, severity, message, file, line, calls, ids, sites)


def _grouped(groups: dict[tuple[Any, ...], _Group]) -> list[tuple[tuple[Any, ...], _Group]]:
    """Groups in source order (file, line of their first main call; then the rest of the key)."""
    return sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], str(kv[0][2:])))


def _site_key(ev: TraceIndex, cid: int, *rest: Any) -> tuple[Any, ...]:
    file, line = ev.site(cid)
    return (file, line, *rest)


# --------------------------------------------------------------------------- frees
def _free_calls(trace: Any) -> list[int]:
    out: list[int] = []
    for name in FREE_APIS:
        out.extend(int(c) for c in TraceIndex.of(trace).calls_named(name))
    return sorted(out)


def _classify_free(ev: TraceIndex, cid: int) -> tuple[str, str, int] | None:
    """(kind, reason, alloc) for a failed free call, or None if it is not a free mistake."""
    known: dict[int, tuple[str, str, int] | None] = ev.memo.setdefault("memory.free_mistakes", {})
    if cid not in known:
        known[cid] = _classify_free_now(ev, cid)
    return known[cid]


def _classify_free_now(ev: TraceIndex, cid: int) -> tuple[str, str, int] | None:
    t = ev.trace
    ret = int(t.calls["ret"][cid])
    args = t.call_args(cid)
    arg = args[0] if args else None
    if ret == 0:
        # device and DVPP memory freed with each other's free succeed (the runtime frees
        # both through the driver's device free), against the documented pairing
        if isinstance(arg, tuple) and arg[2] == 0 and \
                {FREE_APIS[t.call_name(cid)], ev.alloc_kind(arg[1])} == _CROSS_FREEABLE:
            return "invalid_free", "wrong_api_freed", arg[1]
        return None
    if isinstance(arg, tuple):
        _, alloc, off = arg
        first = ev.freed_by.get(alloc)
        if first is not None and first < cid:
            return ("double_free" if off == 0 else "invalid_free",
                    "double" if off == 0 else "middle_freed", alloc)
        if ret != _INVALID:
            return None
        kind = ev.alloc_kind(alloc)
        if kind == _HOST_PAGEABLE:
            return "invalid_free", "pageable", alloc
        if off:
            return "invalid_free", "middle", alloc
        if FREE_APIS[t.call_name(cid)] != kind:
            return "invalid_free", "wrong_api", alloc
        return None
    if ret == _NULL and (arg is None or arg == 0):
        return "invalid_free", "null", -1
    if ret == _INVALID and isinstance(arg, int):
        return "invalid_free", "unknown", -1
    return None


def double_frees(trace: Any) -> list[Finding]:
    """Frees of an allocation that an earlier explicit free already released."""
    ev = TraceIndex.of(trace)
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    for cid in _free_calls(trace):
        got = _classify_free(ev, cid)
        if got is None or got[0] != "double_free":
            continue
        alloc = got[2]
        g = groups[_site_key(ev, cid)]
        g.main.append(cid)
        g.others += [ev.freed_by[alloc], ev.alloc_call(alloc)]
        g.allocs.append(alloc)
    out: list[Finding] = []
    for (file, line), g in _grouped(groups):
        api = trace.call_name(g.main[0])
        n = len(g.main)
        firsts = [ev.freed_by[a] for a in g.allocs]
        msg = (f"{api} at {file}:{line} freed memory that was already freed"
               f"{_times(n)}: {_alloc_text(ev, g.allocs)} was first freed at "
               f"{_sites_text(ev, firsts)}; the second free failed with {_INVALID:d}. "
               "Rule: free each allocation exactly once; after the first free the pointer is "
               "dangling and the allocator may already have given its address to someone else. "
               "Fix: remove the second free, or set the variable to None (or 0) right after "
               "freeing it and only free pointers that are still set.")
        out.append(g.finding(ev, "double_free", "error", msg))
    return out


_INVALID_TEXT = {
    "middle": ("{api} at {file}:{line} was given a pointer {off} into {alloc}, not its start",
               "free takes exactly the address malloc returned, never an address inside the "
               "block",
               "pass the pointer malloc returned (keep it in its own variable and do the "
               "pointer arithmetic on a copy)"),
    "middle_freed": ("{api} at {file}:{line} was given a pointer {off} into {alloc}, which "
                     "had already been freed at {first}",
                     "free takes exactly the address malloc returned, and only once",
                     "free the start address once, and drop pointers into it afterwards"),
    "pageable": ("{api} at {file}:{line} was given pageable host memory: {alloc}, a Python "
                 "(numpy/bytes) buffer",
                 "acl.rt.free, free_host and dvpp_free release only memory their own "
                 "allocator handed out; Python owns numpy and bytes buffers",
                 "do not free it: drop the last reference and Python releases it; if you "
                 "need page-locked memory, get it from acl.rt.malloc_host and free it with "
                 "acl.rt.free_host"),
    "wrong_api": ("{api} at {file}:{line} was given {alloc}, which {api} does not release",
                  "every allocator has its own free: acl.rt.malloc -> acl.rt.free, "
                  "acl.rt.malloc_host -> acl.rt.free_host, acl.media.dvpp_malloc -> "
                  "acl.media.dvpp_free",
                  "call {right}(ptr) for this pointer"),
    "wrong_api_freed": ("{api} at {file}:{line} freed {alloc}, which the documentation "
                        "pairs with {right}; the runtime freed it anyway (both end in the "
                        "driver's device free), so it works on today's runtime but not by "
                        "contract",
                        "every allocator has its own free: acl.rt.malloc -> acl.rt.free, "
                        "acl.media.dvpp_malloc -> acl.media.dvpp_free",
                        "call {right}(ptr) for this pointer"),
    "unknown": ("{api} at {file}:{line} was given {addr}, an address no allocator handed out",
                "free only pointers returned by the matching malloc, and only once",
                "pass the pointer acl.rt.malloc (or malloc_host / dvpp_malloc) returned; "
                "check that the variable was not overwritten or computed"),
    "null": ("{api} at {file}:{line} was given a null pointer (it failed with "
             f"{_NULL:d})",
             "free needs a pointer from the matching malloc; a null pointer usually means the "
             "malloc failed or the variable was never set",
             "check the malloc's ret before using the pointer, and skip the free when "
             "nothing was allocated"),
}


def invalid_frees(trace: Any) -> list[Finding]:
    """Frees of a pointer the allocator never handed out, or given to the wrong free API."""
    ev = TraceIndex.of(trace)
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    for cid in _free_calls(trace):
        got = _classify_free(ev, cid)
        if got is None or got[0] != "invalid_free":
            continue
        _, reason, alloc = got
        g = groups[_site_key(ev, cid, reason)]
        g.main.append(cid)
        if alloc >= 0:
            g.allocs.append(alloc)
            g.others.append(ev.alloc_call(alloc))
            if reason == "middle_freed":
                g.others.append(ev.freed_by[alloc])
        args = trace.call_args(cid)
        g.amounts.append(args[0][2] if args and isinstance(args[0], tuple) else
                         (args[0] if args and isinstance(args[0], int) else 0))
    out: list[Finding] = []
    for (file, line, reason), g in _grouped(groups):
        api = trace.call_name(g.main[0])
        what, rule, fix = _INVALID_TEXT[reason]
        right = FREE_OF_KIND.get(ev.alloc_kind(g.allocs[0]), "") if g.allocs else ""
        first = (_sites_text(ev, (ev.freed_by[a] for a in g.allocs))
                 if reason == "middle_freed" else "")
        fields = {"api": api, "file": file, "line": line, "right": right, "first": first,
                  "off": f"{g.amounts[0]} bytes", "addr": f"{g.amounts[0]:#x}",
                  "alloc": _alloc_text(ev, g.allocs)}
        n = len(g.main)
        msg = (what.format(**fields) + f"{_times(n)}. Rule: {rule.format(**fields)}. "
               f"Fix: {fix.format(**fields)}.")
        sev = "warning" if reason in ("null", "wrong_api_freed") else "error"
        out.append(g.finding(ev, "invalid_free", sev, msg))
    return out


# --------------------------------------------------------------------------- stale pointers
def uses_after_free(trace: Any) -> list[Finding]:
    """Calls given a pointer into an allocation after the program freed it explicitly."""
    ev = TraceIndex.of(trace)
    pa = ev.ptr_args
    if not len(pa) or not ev.freed_by:
        return []
    # a pointer into memory freed by an earlier call, not given to a free (that is a double
    # or invalid free): one pass over the decoded pointer columns
    freed_call = np.full(trace.allocs.rows, np.iinfo(np.int64).max, dtype=np.int64)
    freed_call[list(ev.freed_by)] = list(ev.freed_by.values())
    free_names = list(ev.ids_of(FREE_APIS))
    hit = np.nonzero(freed_call[pa.allocs] < pa.calls)[0]
    hit = hit[~np.isin(trace.calls["name"][pa.calls[hit]], free_names)]
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    for cid, alloc in zip(pa.calls[hit].tolist(), pa.allocs[hit].tolist(), strict=True):
        first = ev.freed_by[alloc]
        g = groups[_site_key(ev, cid)]
        if g.main and g.main[-1] == cid:
            continue
        g.main.append(cid)
        g.others += [first, ev.alloc_call(alloc)]
        g.allocs.append(alloc)
    out: list[Finding] = []
    for (file, line), g in _grouped(groups):
        api = trace.call_name(g.main[0])
        rets = sorted({int(trace.calls["ret"][c]) for c in g.main} - {0})
        failed = f"; it failed with {', '.join(map(str, rets))}" if rets else ""
        frees = _sites_text(ev, (ev.freed_by[a] for a in g.allocs))
        msg = (f"{api} at {file}:{line} used a pointer into {_alloc_text(ev, g.allocs)} "
               f"after it was freed at {frees}{_times(len(g.main))}{failed}. "
               "Rule: once memory is freed, every pointer into it is dangling: the next "
               "malloc may hand the same address to another buffer, so a later copy would "
               "silently read or overwrite someone else's data. "
               f"Fix: move the free after the last use at {file}:{line} (or allocate a new "
               "buffer for this use).")
        out.append(g.finding(ev, "use_after_free", "error", msg))
    return out


def _stream_label(trace: Any, task: int) -> str:
    sid = int(trace.tasks["stream"][task])
    if sid < 0:
        return "no stream (synchronous)"
    return str(trace.string(int(trace.objects["label"][sid])))


def frees_in_flight(trace: Any) -> list[Finding]:
    """Frees of memory a task queued before the free had not finished using.

    Evidence: the runtime failed the task because its allocation "was freed before the task
    ran" (the ``failures`` table), or, on the thread that enqueued it, a task that reads the
    allocation had started but not ended in virtual time when the free was called.
    """
    ev = TraceIndex.of(trace)
    tk, calls, acc = trace.tasks, trace.calls, trace.accesses
    by_task: dict[int, list[int]] = defaultdict(list)
    freed = np.fromiter(ev.freed_by, dtype=np.int64, count=len(ev.freed_by))
    freed_call = np.full(trace.allocs.rows, -1, dtype=np.int64)
    freed_call[freed] = np.fromiter(ev.freed_by.values(), dtype=np.int64, count=len(freed))
    fl = trace.failures
    thread = calls["thread"]
    hits: set[tuple[int, int]] = set()
    # Accesses to freed memory in slices (a million copies of a freed buffer are two million
    # accesses): those of failed tasks, and a task of the freeing thread, queued before the
    # free, not ended when it was called.
    step = 1 << 18
    for lo in range(0, acc.rows, step):
        alloc = acc["alloc"][lo:lo + step]
        rows = np.nonzero(np.isin(alloc, freed))[0]
        r_alloc = alloc[rows].astype(np.int64)
        r_task = acc["task"][lo:lo + step][rows].astype(np.int64)
        in_failed = np.isin(r_task, fl["task"])
        for a, t in zip(r_alloc[in_failed].tolist(), r_task[in_failed].tolist(), strict=True):
            by_task[t].append(a)
        fcall = freed_call[r_alloc]
        tcall = tk["call"][r_task].astype(np.int64)
        at = calls["start_ns"][fcall].astype(np.int64)
        start, end = tk["start_ns"][r_task], tk["end_ns"][r_task]
        hit = (tcall < fcall) & (thread[tcall] == thread[fcall]) & (
            (start < 0) | ((start <= at) & (at < end)))
        hits.update(zip(r_task[hit].tolist(), r_alloc[hit].tolist(), strict=True))
        del rows, r_alloc, r_task, fcall, tcall, at, start, end, hit
    task_call = int_array(tk["call"])
    failed: set[int] = set()
    for j in range(fl.rows):
        if _FREED_REASON not in trace.string(int(fl["reason"][j])):
            continue
        t = int(fl["task"][j])
        end_ns = int(tk["end_ns"][t])
        for a in by_task.get(t, ()):
            # only memory freed before the task's end can be what it lost (a task that
            # failed for one buffer also touches others freed long after it)
            if ev.freed_by[a] > task_call[t] and (
                    end_ns < 0 or int(calls["start_ns"][ev.freed_by[a]]) <= end_ns):
                hits.add((t, a))
                failed.add(t)
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    for t, a in sorted(hits):
        fcall, tcall = ev.freed_by[a], task_call[t]
        g = groups[_site_key(ev, fcall)]
        g.main.append(fcall)
        g.others += [tcall, ev.alloc_call(a)]
        g.allocs.append(a)
        g.tasks.append(t)
    out: list[Finding] = []
    for (file, line), g in _grouped(groups):
        api = trace.call_name(g.main[0])
        enq = list(dict.fromkeys(task_call[t] for t in g.tasks))
        queued = ", ".join(dict.fromkeys(f"{trace.call_name(c)} at {ev.where(c)}"
                                         for c in enq[:_MAX_SITES]))
        if len(enq) > _MAX_SITES:
            queued += " and others"
        streams = " and ".join(dict.fromkeys(_stream_label(trace, t) for t in g.tasks))
        n = len(set(g.main))
        ran = (f"the task then failed with {_MEM_ERROR:d} because its memory was gone"
               if any(t in failed for t in g.tasks) else
               "the task was still reading it when the free returned")
        msg = (f"{api} at {file}:{line} freed {_alloc_text(ev, g.allocs)} while a task "
               f"queued earlier by {queued} on {streams} still used it{_times(n)}; {ran}. "
               f"Rule: {api} does not wait for the device: queued tasks run later, "
               "so memory must stay allocated until every task using it has finished. "
               f"Fix: synchronize the stream before the free (acl.rt.synchronize_stream), or "
               "record an event after the last task that uses the memory and "
               "acl.rt.synchronize_event it before freeing.")
        out.append(g.finding(ev, "free_in_flight", "error", msg))
    return out


# --------------------------------------------------------------------------- ranges
def out_of_bounds(trace: Any) -> list[Finding]:
    """Copies, memsets, ops and model I/O whose range runs past the allocation's end."""
    ev = TraceIndex.of(trace)
    tk, acc, a_size = trace.tasks, trace.accesses, trace.allocs["size"]
    fl = trace.failures
    task_acc: dict[int, list[int]] = defaultdict(list)
    for j in np.nonzero(np.isin(acc["task"], fl["task"]))[0].tolist():
        task_acc[int(acc["task"][j])].append(j)
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    covered: set[int] = set()
    for j in range(fl.rows):
        reason = trace.string(int(fl["reason"][j]))
        if "past the end" not in reason:
            continue
        t = int(fl["task"][j])
        cid = int(tk["call"][t])
        covered.add(cid)
        g = groups[_site_key(ev, cid)]
        g.main.append(cid)
        g.tasks.append(t)
        for k in task_acc.get(t, ()):
            a = int(acc["alloc"][k])
            end = int(acc["offset"][k]) + int(acc["length"][k])
            if a >= 0 and end > int(a_size[a]):
                g.allocs.append(a)
                g.others.append(ev.alloc_call(a))
                g.amounts.append(end - int(a_size[a]))
        if len(g.amounts) < len(g.main):
            m = _PAST_END.search(reason)
            g.amounts.append(int(m.group(1)) if m else 0)
    dg = trace.diags
    # host_overread (copies.host_overread): a host source read past its buffer, which real
    # ACL copies (the driver does not know a host buffer's size); noted before the call's
    # error, if any, so it names the call. cid -> True when the bytes were copied.
    overread: dict[int, bool] = {}
    for j in range(dg.rows):
        cid = int(dg["call"][j])
        kind = trace.string(int(dg["kind"][j]))
        if cid < 0 or cid in covered or kind not in ("error", "host_overread"):
            continue
        m = _PAST_END.search(trace.string(int(dg["message"][j])))
        if m is None:
            continue
        if kind == "host_overread":
            overread[cid] = "were copied" in trace.string(int(dg["message"][j]))
        covered.add(cid)
        g = groups[_site_key(ev, cid)]
        g.main.append(cid)
        g.amounts.append(int(m.group(1)))
        size = int(m.group(2))
        pa = ev.ptr_args
        for a in pa.allocs[pa.calls == cid].tolist():
            if int(a_size[a]) == size:
                g.allocs.append(a)
                g.others.append(ev.alloc_call(a))
                break
    out: list[Finding] = []
    for (file, line), g in _grouped(groups):
        api = trace.call_name(g.main[0])
        n = len(g.main)
        far = max(g.amounts) if g.amounts else 0
        usable = (f", {int(a_size[g.allocs[0]])} bytes usable after the allocator's rounding"
                if g.allocs else "")
        reads = [overread[c] for c in g.main if c in overread]
        if reads:  # a host buffer has no allocator's rounding
            usable = ""
        if reads and all(reads):
            what = (f"; real ACL copies the {far} bytes that follow the buffer (it does not "
                    f"know a host buffer's size); here they were copied too; on a card they "
                    "are whatever lies there, or a crash if unmapped")
        elif reads:
            what = ("; real ACL copies the bytes that follow the buffer (it does not know a "
                    "host buffer's size); here they were not mapped, so the copy was refused "
                    f"with {_INVALID:d}; on a card the driver fails or the process crashes")
        else:
            what = f"; the runtime refused it with {_MEM_ERROR:d}"
        msg = (f"{api} at {file}:{line} accessed memory past the end of "
               f"{_alloc_text(ev, g.allocs)}{usable}: the range ran {far} bytes past its end"
               f"{_times(n)}{what}. "
               "Rule: every byte a copy, memset, operator or model reads or writes must lie "
               "inside one allocation (offset + length <= size). "
               "Fix: allocate at least offset + length bytes (for models use "
               "acl.mdl.get_input_size_by_index / get_output_size_by_index), or copy fewer "
               "bytes.")
        out.append(g.finding(ev, "out_of_bounds", "error", msg))
    return out


_ROWS = re.compile(r"input (\d+) = (\d+) x (\d+) bytes")
_LOADED = re.compile(r"model (\d+) loaded")
#: tasks.kind of copies and of a model execution
_COPY_KINDS = (TaskKind.H2D, TaskKind.D2H, TaskKind.D2D, TaskKind.H2H)
_MODEL_KIND = TaskKind.MODEL


def batch_rows(trace: Any) -> dict[int, dict[int, int]]:
    """Model id -> {input index: bytes per batch row}, from the runtime's ``model_loaded``
    notes (inputs whose batch dimension is over 1)."""
    out: dict[int, dict[int, int]] = {}
    for _cid, _level, text in TraceIndex.of(trace).diags_of("model_loaded"):
        m = _LOADED.match(text)
        if m:
            out[int(m.group(1))] = {int(i): int(row) for i, _n, row in _ROWS.findall(text)}
    return out


def reads_of(trace: Any, tasks: set[int]) -> dict[int, list[tuple[int, int, int]]]:
    """Task -> its read accesses ``(alloc, offset, length)`` in order, for ``tasks``."""
    ac = trace.accesses
    out: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    if not tasks or not ac.rows:
        return out
    rows = np.nonzero(np.isin(ac["task"], list(tasks)) & (ac["write"] == 0))[0]
    for j in rows.tolist():
        out[int(ac["task"][j])].append((int(ac["alloc"][j]), int(ac["offset"][j]),
                                        int(ac["length"][j])))
    return out


def _model_of(trace: Any, cid: int) -> int:
    """The model id an execute call named (its first int argument), or -1."""
    ints = TraceIndex.of(trace).call_ints(cid)
    return int(ints[0]) if ints else -1


def _uninit_class(trace: Any, task: int, kind: int, alloc: int, nbytes: int, first: int,
                  reads: dict[int, list[tuple[int, int, int]]],
                  rows: dict[int, dict[int, int]]) -> tuple[str, int, int]:
    """How bad a read of never-written bytes is: ``(class, read length, row bytes)``.

    ``copy_part``: a copy that moved some never-written bytes beside written ones (the
    max-batch output copied whole after a smaller batch); ``copy_all``: a copy of nothing
    but never-written bytes; ``partial_batch``: a model input whose never-written part is
    whole trailing batch rows after written ones; ``compute``: any other task (a model, an
    op, DVPP) computing with never-written bytes.
    """
    mine = [r for r in reads.get(task, []) if r[0] == alloc]
    length = max((r[2] for r in mine), default=nbytes)
    if kind in _COPY_KINDS:
        return ("copy_all" if nbytes >= length else "copy_part"), length, 0
    if kind == _MODEL_KIND and mine:
        idx = reads[task].index(mine[0])
        _, off, length = mine[0]
        row = rows.get(_model_of(trace, int(trace.tasks["call"][task])), {}).get(idx, 0)
        end = off + length
        if (row and off < first and first + nbytes == end and (end - first) % row == 0
                and (first - off) % row == 0):
            return "partial_batch", length, row
    return "compute", length, 0


def uninitialized_reads(trace: Any) -> list[Finding]:
    """Tasks that read device or DVPP bytes nothing had written (compute-sanitizer initcheck),
    at the severity of what the read can do.

    A task computing with never-written bytes is an error; a model input whose never-written
    part is whole trailing batch rows (the partial last batch of a loop) a warning (those
    rows' outputs are garbage); a copy is not itself a bug: a copy of some never-written
    bytes beside written ones (acllite copies a dynamic-batch model's whole max-batch output
    and uses the rows of the current batch) is info, a copy of nothing but never-written
    bytes a warning (whatever uses the destination uses garbage).
    Pinned host memory is left out: a program may fill it through Python (ctypes, a numpy
    view) in ways the emulator cannot see, so a report there could be a false alarm.
    """
    ev = TraceIndex.of(trace)
    tk, un = trace.tasks, trace.uninit
    keep = [j for j in range(un.rows)
            if int(un["alloc"][j]) >= 0 and ev.alloc_kind(int(un["alloc"][j])) in _ON_DEVICE]
    reads = reads_of(trace, {int(un["task"][j]) for j in keep})
    rows = batch_rows(trace) if keep else {}
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    detail: dict[tuple[Any, ...], tuple[int, int]] = {}
    for j in keep:
        t, a = int(un["task"][j]), int(un["alloc"][j])
        nbytes, first = int(un["bytes"][j]), int(un["first"][j])
        klass, length, row = _uninit_class(trace, t, int(tk["kind"][t]), a, nbytes, first,
                                           reads, rows)
        cid = int(tk["call"][t])
        key = _site_key(ev, cid, ev.site(ev.alloc_call(a)), klass)
        g = groups[key]
        g.main.append(cid)
        g.tasks.append(t)
        g.amounts.append(nbytes)
        g.allocs.append(a)
        g.others.append(ev.alloc_call(a))
        detail.setdefault(key, (length, row))
    out: list[Finding] = []
    for key, g in _grouped(groups):
        file, line, _asite, klass = key
        length, row = detail[key]
        api = trace.call_name(g.main[0])
        n = len(g.main)
        per = (f"{g.amounts[0]} bytes" if n == 1 else
               f"{human_bytes(sum(g.amounts))} in all (up to {max(g.amounts)} bytes each time)")
        what = _alloc_text(ev, g.allocs)
        if klass == "copy_part":
            severity = "info"
            msg = (f"{api} at {file}:{line} copies {per} of {what} that nothing wrote, beside "
                   f"bytes that were written{_times(n)} (for a dynamic-batch model's output: "
                   "the rows beyond the current batch). Rule: a copy is not itself a bug; "
                   "the copied never-written bytes are garbage on a real device (the "
                   "emulator has zeros), so only the written part (the rows of the current "
                   "batch) may be used. Fix, if you use more: write those bytes first; to "
                   "copy less, copy batch * row bytes (acl.mdl.get_cur_output_dims).")
        elif klass == "copy_all":
            severity = "warning"
            msg = (f"{api} at {file}:{line} copies {per} of {what} that nothing had "
                   f"written, not one byte of it{_times(n)}. Rule: malloc'd device memory "
                   "holds garbage until something writes it (the emulator reads zeros; a real "
                   "device does not); copying it is harmless, using the copy is not. Fix: "
                   "copy after the task that fills the buffer (acl.rt.memcpy / memcpy_async, a "
                   "model or op output, acl.rt.memset), ordered before this copy (same "
                   "stream, or an event).")
        elif klass == "partial_batch":
            severity = "warning"
            total = length // row
            msg = (f"{api} at {file}:{line} read {per} of {what} that nothing had written"
                   f"{_times(n)}: whole trailing batch rows (rows of {row} bytes; of the "
                   f"{total} rows the model reads, the last {g.amounts[0] // row} were never "
                   "filled), the partial last batch of a loop. Rule: the model computes "
                   "every row of its batch; the outputs of the rows nothing filled are "
                   "garbage and must not be used (or copy zeros/padding into them). Fix: "
                   "use only the output rows of the inputs you copied in, or memset the "
                   "input buffer once after allocating it.")
        else:
            severity = "error"
            msg = (f"{api} at {file}:{line} read {per} of {what} that nothing had written"
                   f"{_times(n)}. Rule: malloc'd device memory holds garbage until "
                   "something writes it (the emulator reads zeros; a real device does not), "
                   "so a task computing with it gives results that depend on leftovers. "
                   "Fix: copy the data in (acl.rt.memcpy / memcpy_async) or acl.rt.memset "
                   "the buffer before the task that reads it, covering every byte it "
                   "reads, and order that write before the read (same stream, or an "
                   "event).")
        out.append(g.finding(ev, "uninitialized_read", severity, msg))
    return out


# --------------------------------------------------------------------------- copy kinds
def memcpy_kind_mismatches(trace: Any) -> list[Finding]:
    """Copies whose declared kind does not match the pointers, one finding per call site.

    The runtime diagnostic says what the real runtime did with the kind (see
    ``copies.check_kind``): corrected or accepted (a warning: the copy ran, but the
    program believes it moved other memory, which is how a sample ends up printing the
    wrong buffer) or refused with 107000 (an error: nothing was copied).
    """
    ev = TraceIndex.of(trace)
    groups: dict[tuple[Any, ...], _Group] = defaultdict(_Group)
    texts: dict[tuple[Any, ...], str] = {}
    for cid, level, text in ev.diags_of("memcpy_kind_mismatch"):
        key = _site_key(ev, cid, level >= 2)
        groups[key].main.append(cid)
        texts.setdefault(key, text)
    out: list[Finding] = []
    for key, g in _grouped(groups):
        file, line, refused = key
        api = trace.call_name(g.main[0])
        n = len(g.main)
        if refused:
            what = (f"returned {_INVALID:d} and copied nothing. Rule: for pageable host memory "
                    "(numpy arrays, bytes, Python buffers) the runtime checks the kind "
                    "against the pointers and refuses a kind that cannot be right")
        else:
            what = ("ran, but not as declared. Rule: the runtime works out the direction "
                    "from the pointers and quietly overrides the kind, so a wrong kind "
                    "means the program copies other memory than it thinks (for "
                    "DEVICE_TO_HOST from a host buffer: host bytes, not the device's "
                    "result)")
        msg = (f"{api} at {file}:{line}: {texts[key]}{_times(n)}. The copy {what}. Fix: pass "
               "the kind that matches source and destination (the device buffer from "
               "acl.rt.malloc as source for DEVICE_TO_HOST, as destination for "
               "HOST_TO_DEVICE), and check that the pointer is the buffer you mean.")
        out.append(g.finding(ev, "memcpy_kind_mismatch", "error" if refused else "warning",
                             msg))
    return out


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (
    double_frees, invalid_frees, uses_after_free, frees_in_flight, out_of_bounds,
    uninitialized_reads, memcpy_kind_mismatches)
