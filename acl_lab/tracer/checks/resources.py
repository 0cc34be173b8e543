"""Resource checks: leaks of memory, streams, events and contexts at finalize or exit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import numpy as np

from ..schema import ALLOC_KINDS
from .base import Finding, human_bytes


def leaks(trace: Any) -> list[Finding]:
    """Memory never freed and streams/events/contexts never destroyed, by allocating line.

    Something released only by ``reset_device``, ``destroy_context``, ``finalize`` or process
    exit (``how == reclaimed``) or never released at all counts as leaked.
    """
    out: list[Finding] = []
    a, f = trace.allocs, trace.frees
    freed_explicitly = np.zeros(a.rows, dtype=bool)
    for j in range(f.rows):
        i = int(f["alloc"][j])
        if i >= 0 and int(f["how"][j]) == 0:
            freed_explicitly[i] = True
    groups: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    for i in range(a.rows):
        kind = int(a["kind"][i])
        if kind == 3 or freed_explicitly[i]:
            continue
        file, line = trace.call_site(int(a["call"][i]))
        groups[(kind, file, line)].append(i)
    free_api = {0: "acl.rt.free", 1: "acl.rt.free_host", 2: "acl.media.dvpp_free"}
    for (kind, file, line), rows in sorted(groups.items(), key=lambda g: (g[0][1], g[0][2])):
        total = int(sum(int(a["requested"][i]) for i in rows))
        calls = tuple(int(a["call"][i]) for i in rows)
        api = trace.call_name(calls[0])
        n = len(rows)
        what = ALLOC_KINDS[kind].replace("_", " ")
        plural = "allocation" if n == 1 else "allocations"
        msg = (f"{n} {what} {plural} from {file}:{line} ({api}) never freed, {human_bytes(total)}. "
               f"Rule: every {api} needs a matching {free_api[kind]} on every path, including "
               f"error paths; reset_device or finalize only clean up after the fact. "
               f"Fix: call {free_api[kind]}(ptr) once the memory is no longer used (after "
               "synchronizing the stream that uses it).")
        out.append(Finding("leak", "error", msg, file, line, calls, {"allocs": tuple(rows)},
                           ((file, line),)))
    out.extend(_object_leaks(trace))
    return out


def _object_leaks(trace: Any) -> list[Finding]:
    o, d = trace.objects, trace.destroys
    how = np.full(o.rows, -1, dtype=np.int8)
    for j in range(d.rows):
        how[int(d["obj"][j])] = int(d["how"][j])
    out: list[Finding] = []
    groups: dict[tuple[int, str, int], list[int]] = defaultdict(list)
    for i in range(o.rows):
        kind = int(o["kind"][i])
        if how[i] == 0:
            continue
        if kind == 1 and int(o["flags"][i]) == 0 and _is_default_stream(trace, i):
            continue
        if kind not in (0, 1, 2):
            continue
        file, line = trace.call_site(int(o["call"][i]))
        groups[(kind, file, line)].append(i)
    for (kind, file, line), rows in sorted(groups.items(), key=lambda g: (g[0][1], g[0][2])):
        n = len(rows)
        label = trace.string(int(o["label"][rows[0]]))
        calls = tuple(int(o["call"][i]) for i in rows)
        if kind == 0 and int(o["flags"][rows[0]]) == 1:
            msg = (f"device context from {file}:{line} (acl.rt.set_device) was never "
                   "released: set_device has no matching acl.rt.reset_device. Rule: every "
                   "set_device needs a reset_device (it is reference-counted). Fix: call "
                   "acl.rt.reset_device(device_id) after destroying your streams, events and "
                   "contexts, before acl.finalize().")
        else:
            names = {0: ("context", "acl.rt.destroy_context"),
                     1: ("stream", "acl.rt.destroy_stream"),
                     2: ("event", "acl.rt.destroy_event")}
            noun, fix = names[kind]
            many = f"{n} {noun}s" if n > 1 else f"{noun} {label.split(' ')[-1]}" \
                if kind != 0 else f"{noun}"
            pron = "they were" if n > 1 else "it was"
            msg = (f"{many} created at {file}:{line} never destroyed; {pron} only released "
                   "when the context or device was torn down. Rule: destroy events, then "
                   "streams, then contexts, then reset the device. "
                   f"Fix: call {fix}(...) when you are done with it.")
        out.append(Finding("leak", "warning", msg, file, line, calls,
                           {"objects": tuple(rows)}, ((file, line),)))
    return out


def _is_default_stream(trace: Any, row: int) -> bool:
    return "default stream" in trace.string(int(trace.objects["label"][row]))


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (leaks,)
