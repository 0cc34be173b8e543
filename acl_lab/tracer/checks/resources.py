"""Resource checks: ``leak`` and ``destroy_order``.

``leak`` covers everything a program creates and must release itself:

- memory (device, pinned host, DVPP), grouped by allocating line with count and bytes;
- loaded models never unloaded (the weight and working memory that ``acl.mdl.load_*``
  allocates is released only by ``acl.mdl.unload``, or after the fact by reset/finalize);
- runtime objects never destroyed: contexts (and ``set_device`` without ``reset_device``),
  streams, events, data buffers, tensor descs, op attrs and handles, model descs, datasets,
  DVPP channel descs, channels, pic descs and resize configs, and aclnn tensors, scalars and
  executors. A single-use aclnn executor is destroyed by its phase-2 call (the runtime records
  that as an explicit destroy), so only executors never run, or repeatable ones never
  destroyed, leak.

Something counts as leaked when the program never released it: it was reclaimed by
``destroy_context``, ``reset_device``, ``finalize`` or process exit, or never released at all.

How each mistake is named once (the design decision):

- A stream or event the program never destroyed, released when ``destroy_context`` (or
  ``reset_device``) tore down its context, is **one** ``leak`` at its create line whose message
  says both things: it was never destroyed, and which teardown call released it (and that the
  order is events, streams, contexts, reset). The missing ``destroy_stream`` is the fix, and
  ``leak`` is what a "zero leaks" rubric counts, so no ``destroy_order`` is added for it.
  Sample 7.1's stream is reported this way.
- ``destroy_order`` is reported when the program *does* release a resource, but only after a
  teardown already released it: ``destroy_stream`` after ``destroy_context``, ``destroy_context``
  or ``acl.rt.free`` after ``reset_device``, ``unload`` after ``finalize``... The late call fails;
  the finding is at that call, names the earlier teardown, and the resource is not also a leak.
- An allocating line freed on some iterations and not on others is one ``leak`` worded as an
  error-path leak (``pitfalls.error_path_leak``), not a plain leak plus a pitfall.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...runtime.kinds import AllocKind, Ending, ObjectKind
from ..schema import ALLOC_KINDS
from .base import Finding, TraceIndex, human_bytes, site

#: a Python-owned host buffer (compared per allocation row: a module constant is cheaper)
_PAGEABLE = AllocKind.HOST_PAGEABLE

_CONTEXT, _STREAM, _EVENT, _THREAD = (ObjectKind.CONTEXT, ObjectKind.STREAM, ObjectKind.EVENT,
                                     ObjectKind.THREAD)
_EXECUTOR = 32

#: object kind -> (noun, the call that releases it)
OBJECT_RELEASE: dict[int, tuple[str, str]] = {
    0: ("context", "acl.rt.destroy_context"),
    1: ("stream", "acl.rt.destroy_stream"),
    2: ("event", "acl.rt.destroy_event"),
    4: ("data buffer", "acl.destroy_data_buffer"),
    5: ("tensor desc", "acl.destroy_tensor_desc"),
    6: ("op attr", "acl.op.destroy_attr"),
    7: ("op handle", "acl.op.destroy_handle"),
    8: ("model desc", "acl.mdl.destroy_desc"),
    9: ("dataset", "acl.mdl.destroy_dataset"),
    20: ("DVPP channel desc", "acl.media.dvpp_destroy_channel_desc"),
    21: ("DVPP channel", "acl.media.dvpp_destroy_channel"),
    22: ("DVPP pic desc", "acl.media.dvpp_destroy_pic_desc"),
    23: ("DVPP resize config", "acl.media.dvpp_destroy_resize_config"),
    24: ("DVPP ROI config", "acl.media.dvpp_destroy_roi_config"),
    25: ("DVPP batch pic desc", "acl.media.dvpp_destroy_batch_pic_desc"),
    26: ("DVPP JPEGE config", "acl.media.dvpp_destroy_jpege_config"),
    27: ("DVPP stream desc", "acl.media.dvpp_destroy_stream_desc"),
    30: ("aclnn tensor", "acl_lab.aclnn.destroy_tensor"),
    31: ("aclnn scalar", "acl_lab.aclnn.destroy_scalar"),
    32: ("aclnn executor", "acl_lab.aclnn.destroy_executor"),
    40: ("VDEC channel desc", "acl.media.vdec_destroy_channel_desc"),
    41: ("VDEC channel", "acl.media.vdec_destroy_channel"),
    42: ("VDEC frame config", "acl.media.vdec_destroy_frame_config"),
    43: ("VENC channel desc", "acl.media.venc_destroy_channel_desc"),
    44: ("VENC channel", "acl.media.venc_destroy_channel"),
    45: ("VENC frame config", "acl.media.venc_destroy_frame_config"),
}
#: alloc kind -> the call that frees it
FREE_API = {0: "acl.rt.free", 1: "acl.rt.free_host", 2: "acl.media.dvpp_free"}
#: calls that release an object, by object kind (for late destroys)
_DESTROY_CALLS: dict[str, tuple[int, ...]] = {
    "acl.rt.destroy_context": (_CONTEXT,),
    "acl.rt.destroy_stream": (_STREAM,),
    "acl.rt.destroy_stream_force": (_STREAM,),
    "acl.rt.destroy_event": (_EVENT,),
}
_FREE_CALLS = frozenset(FREE_API.values())
#: calls that create a stream inside a VDEC/VENC channel (destroyed with the channel)
_CODEC_CHANNEL_CALLS = frozenset({"acl.media.vdec_create_channel",
                                  "acl.media.venc_create_channel"})
ORDER_RULE = ("destroy events, then streams, then contexts, then reset the device, "
              "then finalize")


# ------------------------------------------------------------------------------ helpers


def _at(trace: Any, cid: int) -> str:
    """``file:line`` of a call (``<exit>`` for the end-of-program pseudo call)."""
    file, line = site(trace, cid)
    return f"{file}:{line}" if line else file or "?"


def _released_by(trace: Any, cid: int) -> str:
    """How a teardown call is named in a message."""
    name = trace.call_name(cid)
    if name == "acl_lab.exit":
        return "the program's exit"
    return f"{name} at {_at(trace, cid)}"


# ------------------------------------------------------------------------------ late releases


@dataclass(frozen=True)
class LateRelease:
    """A release call that came after a teardown had already released its resource.

    ``table`` is ``"objects"``, ``"allocs"`` or ``"models"`` (then ``row`` is the model id).
    """

    call: int
    table: str
    row: int
    released_by: int


def late_releases(trace: Any) -> list[LateRelease]:
    """Failed destroy/free/unload calls whose target a teardown had already released."""
    calls = trace.calls
    failed = np.nonzero(calls["ret"] != 0)[0]
    if not len(failed):
        return []
    ix = TraceIndex.of(trace)
    names = ix.ids_of([*_DESTROY_CALLS, *_FREE_CALLS, "acl.mdl.unload"])
    failed = failed[np.isin(calls["name"][failed], list(names))]
    if not len(failed):
        return []
    o, d, a, f = trace.objects, trace.destroys, trace.allocs, trace.frees
    reclaimed_d = np.nonzero(d["how"] == Ending.RECLAIMED)[0].tolist()
    reclaimed_f = np.nonzero(f["how"] == Ending.RECLAIMED)[0].tolist()
    obj_reclaimed: dict[int, int] = {int(d["obj"][j]): int(d["call"][j]) for j in reclaimed_d}
    alloc_reclaimed: dict[int, int] = {int(f["alloc"][j]): int(f["call"][j])
                                       for j in reclaimed_f}
    handles = ix.handle_rows
    out: list[LateRelease] = []
    model_reclaimed: dict[int, int] | None = None
    for cid in failed.tolist():
        name = names[int(calls["name"][cid])]
        if name in _DESTROY_CALLS:
            for h in ix.call_ints(cid):
                row = handles.get(h)
                if row is None or int(o["kind"][row]) not in _DESTROY_CALLS[name]:
                    continue
                by = obj_reclaimed.get(row)
                if by is not None and by < cid:
                    out.append(LateRelease(cid, "objects", row, by))
        elif name in _FREE_CALLS:
            for row, off in ix.call_ptrs(cid):
                by = alloc_reclaimed.get(row)
                if off == 0 and by is not None and by < cid and int(a["kind"][row]) != 3:
                    out.append(LateRelease(cid, "allocs", row, by))
        else:  # acl.mdl.unload
            if model_reclaimed is None:
                model_reclaimed = _model_reclaims(trace, alloc_reclaimed)
            ints = ix.call_ints(cid)
            by = model_reclaimed.get(ints[0]) if ints else None
            if by is not None and by < cid:
                out.append(LateRelease(cid, "models", ints[0], by))
    return out


def _model_reclaims(trace: Any, alloc_reclaimed: dict[int, int]) -> dict[int, int]:
    """Model id -> the teardown call that reclaimed its memory."""
    by_call: dict[int, int] = {}
    a = trace.allocs
    for row, by in alloc_reclaimed.items():
        by_call.setdefault(int(a["call"][row]), by)
    loads = TraceIndex.of(trace).model_loads
    return {mid: by_call[cid] for mid, cid in loads.items() if cid in by_call}


def destroy_order(trace: Any) -> list[Finding]:
    """Releases that came too late: a teardown had already released the resource."""
    out: list[Finding] = []
    o, a = trace.objects, trace.allocs
    for late in late_releases(trace):
        api = trace.call_name(late.call)
        by = late.released_by
        by_name = trace.call_name(by)
        if late.table == "objects":
            kind = int(o["kind"][late.row])
            noun = OBJECT_RELEASE[kind][0]
            made = int(o["call"][late.row])
            what = f"the {noun} created at {_at(trace, made)}"
        elif late.table == "allocs":
            made = int(a["call"][late.row])
            what = (f"the {ALLOC_KINDS[int(a['kind'][late.row])].replace('_', ' ')} memory "
                    f"allocated at {_at(trace, made)}")
        else:
            made = TraceIndex.of(trace).model_loads.get(late.row, -1)
            what = f"model {late.row} loaded at {_at(trace, made)}"
        ret = int(trace.calls["ret"][late.call])
        msg = (f"{api} at {_at(trace, late.call)} came too late: {by_name} at "
               f"{_at(trace, by)} had already released {what}, so the call failed ({ret}). "
               f"Rule: release in order — {ORDER_RULE}; a teardown call releases what "
               "is still inside it, and handles it released must not be used again. "
               f"Evidence: created at {_at(trace, made)}, released by {by_name} at "
               f"{_at(trace, by)}, then {api} at {_at(trace, late.call)}. "
               f"Fix: move {api} before {by_name}.")
        calls = tuple(c for c in (made, by, late.call) if c >= 0)
        ids: dict[str, tuple[int, ...]] = \
            {late.table: (late.row,)} if late.table != "models" else {}
        file, line = site(trace, late.call)
        out.append(Finding("destroy_order", "warning", msg, file, line, calls, ids,
                           tuple(site(trace, c) for c in calls)))
    return out


# ------------------------------------------------------------------------------ leaks


def leaks(trace: Any) -> list[Finding]:
    """Memory never freed, models never unloaded and objects never destroyed, by line.

    Something released only by ``destroy_context``, ``reset_device``, ``finalize`` or process
    exit (``how == reclaimed``), or never released at all, counts as leaked; a resource whose
    release came too late is a ``destroy_order`` finding instead (see the module notes).
    """
    late = late_releases(trace)
    late_rows: dict[str, set[int]] = defaultdict(set)
    for x in late:
        late_rows[x.table].add(x.row)
    loads = TraceIndex.of(trace).model_loads
    out = _memory_leaks(trace, late_rows["allocs"], set(loads.values()))
    out.extend(_model_leaks(trace, loads, late_rows["models"]))
    out.extend(_object_leaks(trace, late_rows["objects"]))
    return out


def _memory_leaks(trace: Any, late: set[int], model_calls: set[int]) -> list[Finding]:
    from .pitfalls import error_path_leak  # pitfalls imports this module

    out: list[Finding] = []
    a, f = trace.allocs, trace.frees
    freed = np.zeros(a.rows, dtype=bool)
    released_by = np.full(a.rows, -1, dtype=np.int64)
    for j in range(f.rows):
        i = int(f["alloc"][j])
        if i < 0:
            continue
        if int(f["how"][j]) == 0:
            freed[i] = True
        else:
            released_by[i] = int(f["call"][j])
    for i in late:
        freed[i] = True  # released by the program, too late: a destroy_order finding
    by_key: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    kinds, alloc_calls = a["kind"].tolist(), a["call"].tolist()
    call_file, call_line = trace.calls["file"].tolist(), trace.calls["line"].tolist()
    for i in range(a.rows):
        kind, c = kinds[i], alloc_calls[i]
        if kind == _PAGEABLE or c in model_calls:
            continue
        by_key[(kind, call_file[c], call_line[c])].append(i)
    groups = {(kind, trace.string(f), line): rows for (kind, f, line), rows in by_key.items()}
    for (kind, file, line), rows in sorted(groups.items(), key=lambda g: (g[0][1], g[0][2])):
        leaked = [i for i in rows if not freed[i]]
        if not leaked:
            continue
        if len(leaked) < len(rows):
            out.append(error_path_leak(trace, rows, leaked))
            continue
        out.append(_memory_leak(trace, kind, file, line, leaked, released_by))
    return out


def _memory_leak(trace: Any, kind: int, file: str, line: int, rows: list[int],
                 released_by: np.ndarray) -> Finding:
    a = trace.allocs
    total = int(sum(int(a["requested"][i]) for i in rows))
    calls = tuple(int(a["call"][i]) for i in rows)
    api = trace.call_name(calls[0])
    n = len(rows)
    what = ALLOC_KINDS[kind].replace("_", " ")
    plural = "allocation" if n == 1 else "allocations"
    free = FREE_API[kind]
    tear = sorted({int(released_by[i]) for i in rows if released_by[i] >= 0})
    if tear:
        after = "; only " + ", ".join(_released_by(trace, c) for c in tear) + \
            " released " + ("it" if n == 1 else "them")
    else:
        after = "; nothing released " + ("it" if n == 1 else "them")
    made = api if api in ("acl.rt.malloc", "acl.rt.malloc_host", "acl.media.dvpp_malloc") \
        else f"memory that {api} allocated"
    msg = (f"{n} {what} {plural} from {file}:{line} ({api}) never freed, "
           f"{human_bytes(total)}{after}. Rule: every {made} needs a matching {free} on "
           "every path, including error paths; reset_device or finalize only clean up after "
           f"the fact. Fix: call {free}(ptr) once the memory is no longer used (after "
           "synchronizing the stream that uses it).")
    sites = ((file, line), *(site(trace, c) for c in tear))
    return Finding("leak", "error", msg, file, line, calls,
                   {"allocs": tuple(rows)}, sites)


def _model_leaks(trace: Any, loads: dict[int, int], late: set[int]) -> list[Finding]:
    unloaded: set[int] = set()
    ix = TraceIndex.of(trace)
    for cid in ix.ok_calls("acl.mdl.unload").tolist():
        ints = ix.call_ints(cid)
        if ints:
            unloaded.add(ints[0])
    a, f = trace.allocs, trace.frees
    bytes_of: dict[int, int] = defaultdict(int)
    rows_of: dict[int, list[int]] = defaultdict(list)
    load_calls = set(loads.values())
    for i, c in enumerate(a["call"].tolist()):
        if c in load_calls:
            bytes_of[c] += int(a["requested"][i])
            rows_of[c].append(i)
    freed_by = {int(f["alloc"][j]): int(f["call"][j]) for j in range(f.rows)}
    groups: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for mid, cid in sorted(loads.items()):
        if mid in unloaded or mid in late:
            continue
        groups[site(trace, cid)].append((mid, cid))
    out: list[Finding] = []
    for (file, line), models in sorted(groups.items()):
        calls = tuple(c for _, c in models)
        api = trace.call_name(calls[0])
        total = sum(bytes_of[c] for c in calls)
        rows = tuple(i for c in calls for i in rows_of[c])
        tear = sorted({freed_by[i] for i in rows if i in freed_by})
        ids = ", ".join(str(m) for m, _ in models)
        n = len(models)
        head = (f"model {ids} loaded at {file}:{line} ({api}) was never unloaded" if n == 1
                else f"{n} models (ids {ids}) loaded at {file}:{line} ({api}) were never "
                     "unloaded")
        held = f"; its {human_bytes(total)} of weight and working memory" if total else ""
        if tear and held:
            held += " stayed allocated until " + ", ".join(_released_by(trace, c) for c in tear)
        msg = (f"{head}{held}. Rule: every acl.mdl.load_* needs an acl.mdl.unload(model_id) "
               "in the context that loaded it; only unload releases the model's device "
               "memory (reset_device and finalize clean up after the fact). Fix: call "
               "acl.mdl.unload(model_id) when the model is no longer needed, before "
               "destroying its context and resetting the device.")
        sites = ((file, line), *(site(trace, c) for c in tear))
        out.append(Finding("leak", "error", msg, file, line, calls,
                           {"allocs": rows}, sites))
    return out


def _object_leaks(trace: Any, late: set[int]) -> list[Finding]:
    o, d = trace.objects, trace.destroys
    how = np.full(o.rows, -1, dtype=np.int8)
    by = np.full(o.rows, -1, dtype=np.int64)
    for j in range(d.rows):
        i = int(d["obj"][j])
        how[i] = int(d["how"][j])
        by[i] = int(d["call"][j])
    groups: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    kinds = o["kind"].tolist()
    for i in range(o.rows):
        kind = kinds[i]
        if how[i] == 0 or i in late or kind not in OBJECT_RELEASE:
            continue
        if kind == _STREAM and _is_default_stream(trace, i):
            continue  # released with its context
        if kind == _STREAM and trace.call_name(int(o["call"][i])) in _CODEC_CHANNEL_CALLS:
            continue  # a VDEC/VENC channel's own stream: the channel's leak names it
        file, line = site(trace, int(o["call"][i]))
        groups[(kind, file, line)].append(i)
    repeatable: set[int] | None = None
    out: list[Finding] = []
    for (kind, file, line), rows in sorted(groups.items(), key=lambda g: (g[0][1], g[0][2])):
        calls = tuple(int(o["call"][i]) for i in rows)
        tear = sorted({int(by[i]) for i in rows if by[i] >= 0})
        if kind == _CONTEXT and int(o["flags"][rows[0]]) == 1:
            msg = (f"device context from {file}:{line} (acl.rt.set_device) was never "
                   "released: set_device has no matching acl.rt.reset_device"
                   + (f" ({_teardown_text(trace, tear)} released it)" if tear else "")
                   + ". Rule: every set_device needs a reset_device (it is "
                   "reference-counted). Fix: call acl.rt.reset_device(device_id) after "
                   "destroying your streams, events and contexts, before acl.finalize().")
        else:
            if kind == _EXECUTOR and repeatable is None:
                repeatable = _repeatable_executors(trace)
            msg = _object_leak_message(trace, kind, file, line, rows, tear, repeatable)
        severity = "warning" if kind in (_CONTEXT, _STREAM, _EVENT) else "error"
        sites = ((file, line), *(site(trace, c) for c in tear))
        out.append(Finding("leak", severity, msg, file, line, calls,
                           {"objects": tuple(rows)}, sites))
    return out


def _teardown_text(trace: Any, tear: list[int]) -> str:
    return ", ".join(_released_by(trace, c) for c in tear)


def _object_leak_message(trace: Any, kind: int, file: str, line: int, rows: list[int],
                         tear: list[int], repeatable: set[int] | None) -> str:
    o = trace.objects
    noun, fix = OBJECT_RELEASE[kind]
    n = len(rows)
    label = trace.string(int(o["label"][rows[0]]))
    if n > 1:
        many = f"{n} {noun}s"
    elif kind in (_STREAM, _EVENT):
        many = f"{noun} {label.split(' ')[-1]}"
    else:
        many = f"a {noun}" if noun[0] not in "aeiouAEIOU" else f"an {noun}"
    api = trace.call_name(int(o["call"][rows[0]]))
    head = f"{many} created at {file}:{line} ({api}) never destroyed"
    if kind in (_STREAM, _EVENT) and not tear:
        return (f"{head}: it was still alive when the trace ended. Rule: {ORDER_RULE}. "
                f"Fix: call {fix}({noun}) when you are done with it.")
    if kind in (_STREAM, _EVENT):
        ctx_calls = [c for c in tear if trace.call_name(c) == "acl.rt.destroy_context"]
        parts = []
        if ctx_calls:
            parts.append(", ".join(f"acl.rt.destroy_context at {_at(trace, c)}"
                                   for c in ctx_calls)
                         + f" released {'them' if n > 1 else 'it'} together with its "
                           "context, which still owned " + ("them" if n > 1 else "it"))
        rest = [c for c in tear if c not in ctx_calls]
        if rest:
            parts.append(f"{_teardown_text(trace, rest)} released "
                         + ("them" if n > 1 else "it") + " when the device was torn down")
        return (f"{head}: {'; '.join(parts)}. Rule: {ORDER_RULE}; a context must not be "
                f"destroyed while it still owns {noun}s. Fix: call {fix}({noun}) when you "
                f"are done with it, before acl.rt.destroy_context.")
    if kind == _CONTEXT:
        when = (f": only {_teardown_text(trace, tear)} released it" if tear
                else ": nothing released it")
        return (f"{head}{when}. Rule: {ORDER_RULE}. Fix: call {fix}(context) after "
                "destroying its streams and events, before acl.rt.reset_device.")
    if kind == _EXECUTOR:
        handle = int(o["handle"][rows[0]])
        if repeatable is not None and handle in repeatable:
            return (f"{head}: it was made repeatable (acl_lab.aclnn.set_executor_repeatable),"
                    " so phase 2 does not consume it. Rule: a repeatable executor must be "
                    f"destroyed by the program. Fix: call {fix}(executor) after its last "
                    "phase-2 run (after synchronizing the stream).")
        return (f"{head}: phase 1 made it but no phase-2 call ran it (phase 2 consumes a "
                "single-use executor). Rule: every executor from *_get_workspace_size is "
                f"either run once by phase 2 or destroyed. Fix: run it, or call {fix}"
                "(executor) on the path that skips phase 2.")
    pron = "they are" if n > 1 else "it is"
    return (f"{head}; {pron} never released by reset_device or finalize either. Rule: every "
            f"{api} needs a matching {fix} on every path (destroying a dataset or a data "
            "buffer never frees the memory inside; free that separately). "
            f"Fix: call {fix}(...) when you are done with it.")


def _repeatable_executors(trace: Any) -> set[int]:
    out: set[int] = set()
    ix = TraceIndex.of(trace)
    for cid in ix.ok_calls("acl_lab.aclnn.set_executor_repeatable").tolist():
        out.update(ix.call_ints(cid))
    return out


def _is_default_stream(trace: Any, row: int) -> bool:
    return "default stream" in trace.string(int(trace.objects["label"][row]))


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (leaks, destroy_order)
