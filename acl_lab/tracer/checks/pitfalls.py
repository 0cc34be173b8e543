"""The four buffer pitfalls (curriculum exercise 04) and the context mistakes behind 107002/107003.

Kinds:

- ``size_mismatch``: a model or op buffer that does not match what the model or the tensor
  desc needs: the execute that failed (145000 for a model input more than 64 bytes short or an
  output too small, 100000 for an op buffer smaller than its desc), the model input buffer that
  is larger than the input (a warning: the extra bytes are ignored), and a copy into a model
  input buffer that wrote fewer bytes than the model then reads.
- ``leak`` on an error path: an allocating line freed on some iterations and not on others.
  ``resources.leaks`` finds it while grouping leaks and calls ``error_path_leak`` for the
  message, so it is one finding, never a plain leak as well.
- ``context_not_set``: calls that returned 107002; which thread, which calls, and where its
  context should have come from. One finding per first failing line (threads running the same
  code are merged). A late destroy after a teardown is a ``destroy_order`` instead.
- ``wrong_context``: calls that returned 107003 (a stream of another context) or 107004 (a
  model of another context): which stream or model, whose context, which context was current.
- ``pageable_async_copy`` and ``misaligned_host_buffer``: the runtime's warnings on
  ``memcpy_async``, one finding per call site with a count.
- ``read_only_destination``: copies and memsets the runtime refused (107000) because their
  destination is memory the program may not write (a ``bytes`` object, a read-only numpy
  array, read-only pages), one finding per call site.
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from ...constants import ErrorCode
from ...runtime.copies import ASYNC_COPY_ALIGN
from ...runtime.kinds import ObjectKind, TaskKind
from ..schema import ALLOC_KINDS
from . import memory, resources
from .base import Finding, TraceIndex, human_bytes, site

_ERROR = re.compile(r"^(-?\d+): (.*)$", re.S)
_NEEDS = re.compile(r"needs (\d+) bytes.*holds (\d+)", re.S)
_IO = re.compile(r"\b(input|output) (\d+)\b")
_GE_INVALID = ErrorCode.ACL_ERROR_GE_PARAM_INVALID
_NO_CONTEXT = ErrorCode.ACL_ERROR_RT_CONTEXT_NULL
_STREAM_CONTEXT = ErrorCode.ACL_ERROR_RT_STREAM_CONTEXT
_MODEL_CONTEXT = ErrorCode.ACL_ERROR_RT_MODEL_CONTEXT
_TASK_MODEL = TaskKind.MODEL
_MODEL_EXECUTES = ("acl.mdl.execute", "acl.mdl.execute_async")

#: file suffixes of C and C++ sources: their findings give C advice (no try/finally there)
C_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp")


# ------------------------------------------------------------------------------ helpers


def _at(trace: Any, cid: int) -> str:
    return TraceIndex.of(trace).where(cid)


def error_calls(trace: Any, codes: tuple[int, ...]) -> list[tuple[int, int, str]]:
    """``(call, code, message)`` of every failed call with one of ``codes``, in call order."""
    out = []
    for cid, _level, text in TraceIndex.of(trace).diags_of("error"):
        m = _ERROR.match(text)
        if m and int(m.group(1)) in codes:
            out.append((cid, int(m.group(1)), m.group(2)))
    return out


def _diag_calls(trace: Any, kind: str) -> list[tuple[int, str]]:
    """``(call, message)`` of every runtime diagnostic of ``kind``."""
    return [(cid, text) for cid, _level, text in TraceIndex.of(trace).diags_of(kind)]


def _by_site(trace: Any, cids: list[int]) -> dict[tuple[str, int], list[int]]:
    groups: dict[tuple[str, int], list[int]] = defaultdict(list)
    for c in cids:
        groups[site(trace, c)].append(c)
    return dict(sorted(groups.items()))


def thread_name(trace: Any, cid: int) -> str:
    """How messages name the thread that made call ``cid``."""
    return TraceIndex.of(trace).thread_name(int(trace.calls["thread"][cid]))


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _alloc_text(trace: Any, row: int) -> str:
    a = trace.allocs
    cid = int(a["call"][row])
    kind = ALLOC_KINDS[int(a["kind"][row])].replace("_", " ")
    return (f"{trace.call_name(cid)} at {_at(trace, cid)} ({kind}, "
            f"{int(a['requested'][row])} bytes)")


# ------------------------------------------------------------------------------ error path


def error_path_leak(trace: Any, rows: list[int], leaked: list[int]) -> Finding:
    """The ``leak`` finding of a line whose allocations were freed only some of the time.

    ``rows`` are every allocation made by the line, ``leaked`` those never freed. Each
    allocation's window runs to the line's next allocation. The explanation follows the
    evidence: a failed call is named as the cause only when it failed in the windows of
    leaked allocations and in none of the freed ones (the failure came with the leak). With
    no such call the line simply allocated again while the previous block was still live:
    the pointer that held it was overwritten, which is a different bug with a different fix.
    """
    a, calls = trace.allocs, trace.calls
    order = sorted(rows, key=lambda i: int(a["call"][i]))
    alloc_calls = [int(a["call"][i]) for i in order]
    first = int(a["call"][leaked[0]])
    file, line = site(trace, first)
    api = trace.call_name(first)
    kind = int(a["kind"][leaked[0]])
    free = resources.FREE_API[kind]
    total = int(sum(int(a["requested"][i]) for i in leaked))
    m, n = len(rows), len(rows) - len(leaked)
    failed = np.nonzero(calls["ret"] != 0)[0]
    threads = calls["thread"]

    def window_failures(k: int) -> list[int]:
        """Failed calls of the allocating thread between allocation k and the next one."""
        c = alloc_calls[k]
        end = alloc_calls[k + 1] if k + 1 < len(alloc_calls) else calls.rows
        lo, hi = np.searchsorted(failed, [c + 1, end])
        return [f for f in failed[lo:hi].tolist() if threads[f] == threads[c]]

    def key(f: int) -> int:
        return int(calls["name"][f]) << 32 | int(calls["line"][f])

    leaked_set = set(leaked)
    causes: Counter[int] = Counter()
    cause_code: dict[int, int] = {}
    in_freed: dict[int, int] = {}
    for k, i in enumerate(order):
        fails = window_failures(k)
        if i in leaked_set:
            if fails:
                causes[key(fails[0])] += 1
                cause_code.setdefault(key(fails[0]), fails[0])
        else:
            for f in fails:
                in_freed.setdefault(key(f), f)
    # A cause fails only where the leaks are: never in a freed allocation's window, and no
    # more often in the allocating threads than in the leaked windows (a lookup that fails
    # before every allocation, the first included, is not why some of them leak).
    alloc_threads = {int(threads[c]) for c in alloc_calls}
    everywhere: Counter[int] = Counter(key(f) for f in failed.tolist()
                                       if int(threads[f]) in alloc_threads)
    credible = [(k, c) for k, c in causes.most_common()
                if k not in in_freed and everywhere[k] == c]
    for k, _ in causes.items():
        if k not in in_freed and everywhere[k] != causes[k]:
            in_freed.setdefault(k, cause_code[k])
    kind_text = ALLOC_KINDS[kind].replace("_", " ")
    causes_cids: tuple[int, ...]
    if credible:
        evidence = [f"{trace.call_name(cause_code[k])} at {_at(trace, cause_code[k])} failed "
                    f"({int(calls['ret'][cause_code[k]])}) in {count} of them"
                    for k, count in credible]
        c_source = file.endswith(C_SOURCE_SUFFIXES)
        guard = "a cleanup label or RAII" if c_source else "try/finally"
        exits = "goto, return, break" if c_source else "continue, return, raise"
        msg = (f"{kind_text} memory from {file}:{line} ({api}) freed on {n} of {m} iterations; "
               f"the others leak — free on the error path too ({guard}). {len(leaked)} "
               f"allocations, {human_bytes(total)}, were never freed. In the leaking iterations "
               + "; ".join(evidence) + ", and the code skipped the free. "
               f"Rule: every {api} needs a matching {free} on every path, including the ones "
               f"that bail out early ({exits}). Fix: put the work between "
               f"{api} and {free} in {guard} (or free before each early exit).")
        causes_cids = tuple(cause_code[k] for k, _ in credible)
    else:
        freed_at = [k for k, i in enumerate(order) if i not in leaked_set]
        last_freed = bool(freed_at) and freed_at[0] == len(order) - len(freed_at)
        tail = (f"Only the last {'one was' if len(freed_at) == 1 else f'{len(freed_at)} were'}"
                " freed, so " if last_freed else "So ")
        unrelated = ""
        if in_freed:
            f = next(iter(in_freed.values()))
            unrelated = (f" The failed calls in between (such as {trace.call_name(f)} at "
                         f"{_at(trace, f)}, {int(calls['ret'][f])}) failed in iterations that "
                         "freed too (or before the first allocation), so they are not why the "
                         "others leak.")
        msg = (f"{kind_text} memory from {file}:{line} ({api}): {len(leaked)} of {m} "
               f"allocations, {human_bytes(total)}, were never freed; {n} were. Each leaked "
               "block was still live when the line allocated again, and no failed call came "
               "with the leaks: this is not an error path." + unrelated + " " + tail +
               "each new allocation overwrote the only pointer to the previous block (for "
               f"example `self.buf, ret = {api}(...)` on every call, with one {free} at the "
               f"end). Rule: every {api} needs a matching {free} before the variable that "
               "holds its pointer is overwritten. Fix: free the old block before allocating "
               "a new one, or allocate once outside the loop and reuse it.")
        causes_cids = ()
    leaked_calls = tuple(int(a["call"][i]) for i in leaked)
    sites = ((file, line), *(site(trace, c) for c in causes_cids))
    return Finding("leak", "error", msg, file, line, leaked_calls + causes_cids,
                   {"allocs": tuple(leaked)}, sites)


# ------------------------------------------------------------------------------ size_mismatch


def size_mismatch(trace: Any) -> list[Finding]:
    """Model and op buffers whose size does not match the model or the desc."""
    out: list[Finding] = []
    codes = (_GE_INVALID, ErrorCode.ACL_ERROR_INVALID_PARAM)
    failed = [(c, code, msg) for c, code, msg in error_calls(trace, codes)
              if (m := _NEEDS.search(msg)) and int(m.group(2)) < int(m.group(1))]
    by_site: dict[tuple[str, int], list[tuple[int, int, str]]] = defaultdict(list)
    for c, code, msg in failed:
        by_site[site(trace, c)].append((c, code, msg))
    for (file, line), items in sorted(by_site.items()):
        c, code, text = items[0]
        api = trace.call_name(c)
        evidence, ev_calls = _buffer_evidence(trace, c, text)
        model = api.startswith("acl.mdl.")
        if model:
            rule = ("a model input buffer may be at most 64 bytes smaller than "
                    "acl.mdl.get_input_size_by_index(desc, i) (GE rejects more with "
                    f"{_GE_INVALID:d}; a larger one is only a warning), and an output buffer "
                    "must hold "
                    "acl.mdl.get_output_size_by_index(desc, i) bytes")
            fix = ("allocate and describe each buffer with the size the model desc gives "
                   "(get_input_size_by_index / get_output_size_by_index), and convert your "
                   "data to the model's input shape and dtype before copying it in")
        else:
            rule = ("every operator input and output buffer must hold at least "
                    "acl.get_tensor_desc_size(desc) bytes of its own tensor desc")
            fix = ("size each buffer with acl.get_tensor_desc_size of the desc it is paired "
                   "with, and pass that size to acl.create_data_buffer")
        many = f" ({_times(len(items))})" if len(items) > 1 else ""
        msg = (f"{api} at {file}:{line} failed with {code}{many}: {text}. Rule: {rule}. "
               f"Evidence: {evidence or 'see the call'}. Fix: {fix}.")
        calls = tuple(x[0] for x in items) + ev_calls
        out.append(Finding("size_mismatch", "error", msg, file, line, calls, {},
                           ((file, line), *(site(trace, e) for e in ev_calls))))
    oversized = _diag_calls(trace, "oversized_input")
    text_of = dict(reversed(oversized))
    for (file, line), cids in _by_site(trace, [c for c, _ in oversized]).items():
        c = cids[0]
        text = text_of[c]
        evidence, ev_calls = _buffer_evidence(trace, c, text)
        many = f" ({_times(len(cids))})" if len(cids) > 1 else ""
        msg = (f"{trace.call_name(c)} at {file}:{line}{many}: {text}. Rule: a model input "
               "buffer should be exactly acl.mdl.get_input_size_by_index(desc, i) bytes; a "
               "larger buffer usually means the data has the wrong shape or dtype (float64 "
               "instead of float32, a bigger batch) and the model silently reads only its "
               f"first part. Evidence: {evidence or 'see the call'}. Fix: create the data "
               "buffer with the model's input size and convert the data to the model's "
               "input shape and dtype.")
        out.append(Finding("size_mismatch", "warning", msg, file, line,
                           tuple(cids) + ev_calls, {},
                           ((file, line), *(site(trace, e) for e in ev_calls))))
    out.extend(_short_copies(trace))
    return out


def _buffer_evidence(trace: Any, cid: int, text: str) -> tuple[str, tuple[int, ...]]:
    """Where the mismatching buffer came from: its data buffer and memory, by line."""
    m = _IO.search(text)
    if not m:
        return "", ()
    which, index = m.group(1), int(m.group(2))
    api = trace.call_name(cid)
    handles = TraceIndex.of(trace).handle_rows
    buf_handle: int | None = None
    desc_handle: int | None = None
    if api in _MODEL_EXECUTES:
        ints = TraceIndex.of(trace).call_ints(cid)
        if len(ints) >= 3:
            ds = ints[1] if which == "input" else ints[2]
            bufs = _dataset_buffers(trace, ds, cid)
            if index < len(bufs):
                buf_handle = bufs[index]
    else:
        lists = [x for x in (_int_list(v) for v in trace.call_args(cid)) if x is not None]
        if len(lists) >= 4:
            descs, bufs = (lists[0], lists[1]) if which == "input" else (lists[2], lists[3])
            if index < len(descs):
                desc_handle = descs[index]
            if index < len(bufs):
                buf_handle = bufs[index]
        elif len(lists) >= 2:
            bufs = lists[0] if which == "input" else lists[1]
            if index < len(bufs):
                buf_handle = bufs[index]
    parts: list[str] = []
    calls: list[int] = []
    o = trace.objects
    if desc_handle is not None and desc_handle in handles:
        made = int(o["call"][handles[desc_handle]])
        parts.append(f"the {which} {index} tensor desc was created at {_at(trace, made)}")
        calls.append(made)
    if buf_handle is not None and buf_handle in handles:
        made = int(o["call"][handles[buf_handle]])
        args = trace.call_args(made)
        size = args[1] if len(args) > 1 and isinstance(args[1], int) else None
        text = f"the {which} {index} data buffer was created at {_at(trace, made)}"
        if size is not None:
            text += f" with size {size}"
        if args and isinstance(args[0], tuple) and args[0][0] == "ptr":
            row = int(args[0][1])
            text += f" over memory from {_alloc_text(trace, row)}"
            calls.append(int(trace.allocs["call"][row]))
        parts.append(text)
        calls.append(made)
    return "; ".join(parts), tuple(calls)


def _int_list(v: Any) -> list[int] | None:
    if not isinstance(v, str) or not v.startswith("["):
        return None
    try:
        value = ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, list) and all(isinstance(x, int) for x in value):
        return value
    return None


def _dataset_buffers(trace: Any, ds: int, before: int) -> list[int]:
    """Data-buffer handles added to dataset ``ds`` before call ``before``, in order."""
    out = []
    for c in TraceIndex.of(trace).ok_calls("acl.mdl.add_dataset_buffer").tolist():
        if c >= before:
            break
        ints = TraceIndex.of(trace).call_ints(c)
        if len(ints) >= 2 and ints[0] == ds:
            out.append(ints[1])
    return out


def _short_copies(trace: Any) -> list[Finding]:
    """Model inputs whose latest writes covered less than the bytes the model reads."""
    tk, ac = trace.tasks, trace.accesses
    model_tasks = np.nonzero(tk["kind"] == _TASK_MODEL)[0]
    if not len(model_tasks) or not ac.rows:
        return []
    is_model = np.zeros(tk.rows, dtype=bool)
    is_model[model_tasks] = True
    a_task, a_alloc = ac["task"], ac["alloc"]
    model_read = is_model[a_task] & (ac["write"] == 0) & (a_alloc >= 0)
    watched = np.unique(a_alloc[model_read])
    rows = np.nonzero(np.isin(a_alloc, watched))[0]
    writes: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # alloc -> (s, e, task)
    hits: dict[tuple[int, int, bool], list[tuple[int, int, int, int]]] = defaultdict(list)
    pending_clear: set[int] = set()
    last_task = -1
    offs, lens, wr = ac["offset"], ac["length"], ac["write"]
    for j in rows.tolist():
        t = int(a_task[j])
        if t != last_task:
            for al in pending_clear:
                writes[al] = []
            pending_clear = set()
            last_task = t
        al = int(a_alloc[j])
        lo, hi = int(offs[j]), int(offs[j]) + int(lens[j])
        if wr[j]:
            writes[al].append((lo, hi, t))
            continue
        if not is_model[t]:
            continue
        pending_clear.add(al)
        got = [w for w in writes[al] if w[0] < hi and w[1] > lo]
        if not got:
            continue  # nothing new written since the last execution: a reused input
        spans = [(w[0], w[1]) for w in got]
        covered = _covered(lo, hi, spans)
        if covered < hi - lo:
            last = max(got, key=lambda w: w[2])
            # the bytes written are the first ``covered`` ones: maybe a partial last batch
            prefix = _covered(lo, lo + covered, spans) == covered
            key = (int(tk["call"][t]), int(tk["call"][last[2]]), prefix)
            hits[key].append((al, covered, hi - lo, t))
    grouped: dict[tuple[tuple[str, int], tuple[str, int], bool], list[Any]] = defaultdict(list)
    row_map = memory.batch_rows(trace) if hits else {}
    reads = memory.reads_of(trace, {x[3] for items in hits.values() for x in items})
    for (exe, copy, prefix), items in hits.items():
        al, covered, need, t = items[0]
        order = [r[0] for r in reads.get(t, [])]
        model = TraceIndex.of(trace).call_ints(exe)
        row = row_map.get(model[0] if model else -1, {}).get(
            order.index(al) if al in order else -1, 0)
        batch = prefix and row > 0 and covered % row == 0 and need % row == 0
        grouped[(site(trace, exe), site(trace, copy), batch)].append((exe, copy, items, row))
    out: list[Finding] = []
    for ((file, line), _, batch), entries in sorted(grouped.items()):
        exe, copy, items, row = entries[0]
        al, covered, need, _ = items[0]
        count = sum(len(x[2]) for x in entries)
        api, copy_api = trace.call_name(exe), trace.call_name(copy)
        many = f" ({_times(count)})" if count > 1 else ""
        alloc_call = int(trace.allocs["call"][al])
        calls = (exe, copy, alloc_call)
        if batch:
            # A partial last batch: the rows copied are whole, the rest is the rows of an
            # earlier batch. Not a bug as long as the program uses only its rows' outputs.
            msg = (f"{api} at {file}:{line}{many} reads {need // row} batch rows of its "
                   f"input buffer (memory from {_alloc_text(trace, al)}), but the copy "
                   f"before it, {copy_api} at {_at(trace, copy)}, filled only the first "
                   f"{covered // row} (rows of {row} bytes): a partial last batch. The other "
                   f"{(need - covered) // row} rows hold whatever the buffer held before (an "
                   "earlier batch, or garbage). Rule: the model computes every row of its "
                   "batch; the outputs of the rows this batch did not fill are garbage and "
                   "must not be used. Fix: use only the first "
                   f"{covered // row} output rows (or pad the batch, or use a dynamic-batch "
                   "model with acl.mdl.set_dynamic_batch_size).")
            out.append(Finding("size_mismatch", "warning", msg, file, line, calls,
                               {"allocs": (al,), "tasks": tuple(x[3] for x in items)},
                               tuple(site(trace, c) for c in calls)))
            continue
        msg = (f"{api} at {file}:{line}{many} reads {need} bytes of its input buffer (memory "
               f"from {_alloc_text(trace, al)}), but the copy before it, {copy_api} at "
               f"{_at(trace, copy)}, wrote only {covered} of them: the other {need - covered} "
               "bytes are whatever the buffer held before (stale or uninitialised data). "
               "Rule: fill the whole input the model reads, acl.mdl.get_input_size_by_index "
               "bytes, on every execution. Evidence: the copy at "
               f"{_at(trace, copy)}, the execution at {file}:{line}, the buffer allocated at "
               f"{_at(trace, int(trace.allocs['call'][al]))}. Fix: copy the input's full size "
               "(convert the data to the model's shape and dtype first), or make the buffer "
               "and its data buffer exactly the size of the data you copy.")
        out.append(Finding("size_mismatch", "error", msg, file, line, calls,
                           {"allocs": (al,), "tasks": tuple(x[3] for x in items)},
                           tuple(site(trace, c) for c in calls)))
    return out


def _covered(lo: int, hi: int, spans: list[tuple[int, int]]) -> int:
    total, cur = 0, lo
    for s, e in sorted(spans):
        s, e = max(s, cur), min(e, hi)
        if e > s:
            total += e - s
            cur = e
    return total


# ------------------------------------------------------------------------------ contexts


#: calls that ask whether the thread has a context: their 107002 is the answer, so a thread
#: whose only 107002s come from them probed on purpose (aclrtGetDevice / aclrtGetCurrentContext
#: "return ACL_ERROR_RT_CONTEXT_NULL when no context is set": the documented way to ask)
_PROBES = frozenset({"acl.rt.get_device", "acl.rt.get_context"})


def context_not_set(trace: Any) -> list[Finding]:
    """Calls that returned 107002, by thread: where the thread's context should come from.

    A thread whose only such calls are probes (``get_device`` / ``get_context``: asking is
    how a program finds out whether it has a context) gets an ``info`` note instead of an
    error: nothing it went on to do failed for want of a context.
    """
    late = {x.call for x in resources.late_releases(trace)}
    fails = [c for c, _, _ in error_calls(trace, (_NO_CONTEXT,)) if c not in late]
    if not fails:
        return []
    calls = trace.calls
    by_thread: dict[int, list[int]] = defaultdict(list)
    for c in fails:
        by_thread[int(calls["thread"][c])].append(c)
    groups: dict[tuple[str, int, bool], list[list[int]]] = defaultdict(list)
    for cs in by_thread.values():
        probe = all(trace.call_name(c) in _PROBES for c in cs)
        file, line = site(trace, cs[0])
        groups[(file, line, probe)].append(cs)
    out: list[Finding] = []
    for (file, line, probe), per_thread in sorted(groups.items()):
        first = per_thread[0][0]
        every = sorted(c for cs in per_thread for c in cs)
        names = ", ".join(thread_name(trace, cs[0]) for cs in per_thread)
        where = Counter((trace.call_name(c), site(trace, c)) for c in every)
        listing = "; ".join(f"{n} at {f}:{ln} ({_times(k)})"
                            for (n, (f, ln)), k in sorted(where.items(), key=lambda x: x[0][1]))
        who = "thread" if len(per_thread) == 1 else f"{len(per_thread)} threads"
        if probe:
            msg = (f"{trace.call_name(first)} at {file}:{line} returned {_NO_CONTEXT:d} (no "
                   f"current context) in {who}: {names}, and no other call of the thread "
                   f"failed for want of a context ({listing}). Rule: get_device and "
                   "get_context answer 107002 when the calling thread has no context; "
                   "asking is how a program finds out, so this is a probe, not a mistake, "
                   "as long as the program checks the return code before it relies on a "
                   "context.")
            out.append(Finding("context_not_set", "info", msg, file, line, tuple(every),
                               {"threads": tuple(int(calls["thread"][cs[0]])
                                                 for cs in per_thread)}, ((file, line),)))
            continue
        origin, origin_calls = _context_origin(trace, int(calls["thread"][first]), first)
        msg = (f"{trace.call_name(first)} at {file}:{line} returned {_NO_CONTEXT:d} (no current "
               f"context) in {who}: {names}. The calls that failed for want of a context: "
               f"{listing}. Rule: the current context is per thread, and a new thread "
               "(threading.Thread or acl.util.start_thread) starts with none; set_device, "
               "create_context and set_context set it for the calling thread only. "
               f"{origin}")
        sites = ((file, line), *(site(trace, c) for c in origin_calls))
        out.append(Finding("context_not_set", "error", msg, file, line,
                           tuple(every) + origin_calls,
                           {"threads": tuple(int(calls["thread"][cs[0]]) for cs in per_thread)},
                           sites))
    return out


def _context_origin(trace: Any, thread: int, cid: int) -> tuple[str, tuple[int, ...]]:
    """The 'where its context should have come from' part and the calls it names."""
    calls, o, d = trace.calls, trace.objects, trace.destroys
    ctx_col = calls["ctx"][:cid]
    mine = np.nonzero((calls["thread"][:cid] == thread) & (ctx_col >= 0))[0]
    if len(mine):
        ctx = int(ctx_col[mine[-1]])
        gone = [int(d["call"][j]) for j in np.nonzero(d["obj"] == ctx)[0].tolist()
                if int(d["call"][j]) < cid]
        made = int(o["call"][ctx])
        if gone:
            return (f"Evidence: this thread's context (created at {_at(trace, made)}) was "
                    f"released by {trace.call_name(gone[0])} at {_at(trace, gone[0])}, so "
                    "the thread has none left. Fix: make these calls before that teardown, "
                    "or set a live context first (acl.rt.set_context(ctx) or "
                    "acl.rt.set_device(device_id)).", (made, gone[0]))
    others = np.nonzero((calls["thread"][:cid] != thread) & (ctx_col >= 0))[0]
    if not len(others):
        return ("Evidence: no thread had a context before this call. Fix: call "
                "acl.rt.set_device(device_id) (and acl.rt.create_context if you need one) "
                "before any call that needs a context.", ())
    ctx = _context_after(trace, int(others[-1]))
    made = int(o["call"][ctx])
    in_thread = thread_name(trace, made)
    if int(o["kind"][ctx]) == 0 and int(o["flags"][ctx]) == 1:
        dev = int(o["device"][ctx])
        return (f"Evidence: the context in use elsewhere is the default context of device "
                f"{dev}, set by acl.rt.set_device at {_at(trace, made)} in {in_thread}. Fix: "
                f"call acl.rt.set_context(ctx) in this thread (ctx from acl.rt.get_context() "
                f"in {in_thread}), or acl.rt.set_device({dev}) at the start of this "
                "thread.", (made,))
    return (f"Fix: call acl.rt.set_context(ctx) in this thread; ctx was created at "
            f"{_at(trace, made)} in {in_thread} (pass it to the thread, e.g. as an argument,"
            " and set it at the start of the thread's function).", (made,))


def _context_after(trace: Any, cid: int) -> int:
    """The calling thread's current context just after call ``cid``.

    ``calls.ctx`` is the context a call was entered with; a successful create_context or
    set_context leaves the thread in another one (the context it created or named).
    """
    calls, o = trace.calls, trace.objects
    if int(calls["ret"][cid]) == 0:
        name = trace.call_name(cid)
        found = np.zeros(0, dtype=np.int64)
        if name == "acl.rt.create_context":
            found = np.nonzero((o["call"] == cid) & (o["kind"] == ObjectKind.CONTEXT))[0]
        elif name == "acl.rt.set_context":
            args = trace.call_args(cid)
            if args and isinstance(args[0], int):
                found = np.nonzero((o["handle"] == args[0]) & (o["kind"] == ObjectKind.CONTEXT)
                                   & (o["call"] < cid))[0]
        if len(found):
            return int(found[-1])
    return int(calls["ctx"][cid])


def wrong_context(trace: Any) -> list[Finding]:
    """Calls that returned 107003 (stream of another context) or 107004 (model of another)."""
    fails = error_calls(trace, (_STREAM_CONTEXT, _MODEL_CONTEXT))
    if not fails:
        return []
    calls, o = trace.calls, trace.objects
    handles = TraceIndex.of(trace).handle_rows
    loads = TraceIndex.of(trace).model_loads
    groups: dict[tuple[str, int], list[tuple[int, int, str]]] = defaultdict(list)
    for c, code, text in fails:
        groups[site(trace, c)].append((c, code, text))
    out: list[Finding] = []
    for (file, line), items in sorted(groups.items()):
        c, code, text = items[0]
        api = trace.call_name(c)
        cur = int(calls["ctx"][c])
        ev: list[str] = []
        ev_calls: list[int] = []
        owner = -1
        if code == _STREAM_CONTEXT:
            streams = [handles[h] for h in TraceIndex.of(trace).call_ints(c)
                       if h in handles and int(o["kind"][handles[h]]) == 1]
            if streams:
                s = streams[0]
                made = int(o["call"][s])
                owner = int(o["ctx"][s])
                ev.append(f"the stream was created at {_at(trace, made)} in "
                          f"{thread_name(trace, made)}")
                ev_calls.append(made)
            what = "the stream"
        else:
            ints = TraceIndex.of(trace).call_ints(c)
            load = loads.get(ints[0], -1) if ints else -1
            if load >= 0:
                owner = int(calls["ctx"][load])
                ev.append(f"model {ints[0]} was loaded at {_at(trace, load)}")
                ev_calls.append(load)
            what = "the model"
        if owner >= 0:
            made = int(o["call"][owner])
            ev.append(f"its context at {_at(trace, made)}")
            ev_calls.append(made)
        if cur >= 0:
            made = int(o["call"][cur])
            ev.append(f"the current context of {thread_name(trace, c)} was made at "
                      f"{_at(trace, made)}")
            ev_calls.append(made)
        many = f" ({_times(len(items))})" if len(items) > 1 else ""
        rule = ("a stream belongs to the context that was current when it was created, and "
                "every call that queues work on it (memcpy_async, record_event, "
                "launch_callback, execute_async, destroy_stream...) must run while that "
                "context is current" if code == _STREAM_CONTEXT else
                "a model is loaded, executed and unloaded in one context")
        msg = (f"{api} at {file}:{line} returned {code}{many}: {text}. Rule: {rule}. "
               f"Evidence: {'; '.join(ev) or 'see the call'}. Fix: call "
               f"acl.rt.set_context(ctx) with {what}'s context in this thread before the "
               f"call, or use {what} made in the current context.")
        out.append(Finding("wrong_context", "error", msg, file, line,
                           tuple(x[0] for x in items) + tuple(ev_calls), {},
                           ((file, line), *(site(trace, e) for e in ev_calls))))
    return out


# ------------------------------------------------------------------------------ async copies


def pageable_async_copy(trace: Any) -> list[Finding]:
    """memcpy_async calls with a pageable host buffer, one finding per call site."""
    out: list[Finding] = []
    a = trace.allocs
    for (file, line), cids in _by_site(
            trace, [c for c, _ in _diag_calls(trace, "pageable_async_copy")]).items():
        bufs = sorted({r for c in cids for r, _ in TraceIndex.of(trace).call_ptrs(c)
                       if int(a["kind"][r]) == 3})
        made = sorted({int(a["call"][r]) for r in bufs})
        src = ", ".join(f"{trace.call_name(m)} at {_at(trace, m)}"
                        for m in made[:3]) or "a Python buffer"
        n = len(cids)
        head = (f"{trace.call_name(cids[0])} at {file}:{line} copied from or to pageable host "
                f"memory {_times(n)} (host buffer from {src}).")
        msg = (f"{head} Rule: an asynchronous copy needs page-locked host memory from "
               "acl.rt.malloc_host; with pageable memory (numpy arrays, bytes, "
               "acl.util.bytes_to_ptr) CANN 7/8 documents unpredictable errors and newer "
               "runtimes quietly make the copy synchronous, and it is staged and slower "
               "either way. Fix: allocate the host buffer once with acl.rt.malloc_host(size), "
               "fill it (acl.rt.memcpy HOST_TO_HOST, or a numpy view from "
               "acl.util.ptr_to_bytes), pass it to memcpy_async, and free it with "
               "acl.rt.free_host after synchronizing the stream.")
        out.append(Finding("pageable_async_copy", "warning", msg, file, line,
                           tuple(cids) + tuple(made), {"allocs": tuple(bufs)},
                           ((file, line), *(site(trace, m) for m in made))))
    return out


def misaligned_host_buffer(trace: Any) -> list[Finding]:
    """memcpy_async calls whose source or destination is not ``ASYNC_COPY_ALIGN``-byte
    aligned."""
    out: list[Finding] = []
    a = trace.allocs
    diags = _diag_calls(trace, "misaligned_async_copy")
    text_of: dict[int, str] = {}
    for c, t in diags:
        text_of.setdefault(c, t)
    for (file, line), cids in _by_site(trace, [c for c, _ in diags]).items():
        cids = sorted(set(cids))
        bufs = sorted({r for c in cids for r, off in TraceIndex.of(trace).call_ptrs(c)
                       if off % ASYNC_COPY_ALIGN})
        made = sorted({int(a["call"][r]) for r in bufs})
        src = "; ".join(_alloc_text(trace, r) for r in bufs[:3])
        n = len(cids)
        al = ASYNC_COPY_ALIGN
        msg = (f"{trace.call_name(cids[0])} at {file}:{line} used a buffer that does not "
               f"start on a {al}-byte boundary ({_times(n)}): {text_of[cids[0]]}. "
               f"Evidence: the buffer is inside {src or 'an allocation'}. Rule: "
               f"memcpy_async needs {al}-byte aligned source and destination addresses; "
               f"acl.rt.malloc_host and acl.rt.malloc return {al}-byte aligned blocks, so an "
               f"offset into a block breaks the rule unless it is a multiple of {al}. Fix: "
               "give each async copy its own acl.rt.malloc_host buffer, or place every "
               f"piece of a shared block at a multiple of {al}: piece i at offset i * stride "
               f"with stride = ALIGN_UP(len, {al}) (the piece length rounded up to a multiple "
               f"of {al}), in a block of n * stride bytes.")
        out.append(Finding("misaligned_host_buffer", "warning", msg, file, line,
                           tuple(cids) + tuple(made), {"allocs": tuple(bufs)},
                           ((file, line), *(site(trace, m) for m in made))))
    return out


# ------------------------------------------------------------------------------ read-only memory


def read_only_destination(trace: Any) -> list[Finding]:
    """Copies and memsets refused because the destination may not be written, per site."""
    out: list[Finding] = []
    diags = _diag_calls(trace, "read_only_destination")
    text_of: dict[int, str] = {}
    for c, t in diags:
        text_of.setdefault(c, t)
    for (file, line), cids in _by_site(trace, [c for c, _ in diags]).items():
        cids = sorted(set(cids))
        text = text_of[cids[0]]
        bytes_dst = "bytes object" in text
        n = len(cids)
        msg = (f"{trace.call_name(cids[0])} at {file}:{line} tried to write into memory the "
               f"program may not write ({_times(n)}): {text}. The runtime refused it with "
               f"{ErrorCode.ACL_ERROR_RT_PARAM_INVALID:d} and wrote nothing. Rule: a copy or "
               "memset destination must be writable memory: a bytes object is immutable "
               "(Python may share one, an "
               "interned b\"A\" for instance, all over the process, so writing into it "
               "changes every use), and a read-only numpy array or page (np.memmap "
               "mode='r', a PROT_READ mmap) crashes the interpreter with SIGSEGV on real "
               "hardware. Fix: copy into a writable numpy array (out = np.empty(n, "
               "np.uint8), pass out.ctypes.data), a bytearray-backed buffer (np.frombuffer("
               "bytearray(n), np.uint8)), or acl.rt.malloc_host memory read back with "
               "acl.util.ptr_to_bytes"
               + ("; acl.util.bytes_to_ptr is for sources only." if bytes_dst else "."))
        out.append(Finding("read_only_destination", "error", msg, file, line, tuple(cids),
                           {}, ((file, line),)))
    return out


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (
    size_mismatch, context_not_set, wrong_context, pageable_async_copy, misaligned_host_buffer,
    read_only_destination)
