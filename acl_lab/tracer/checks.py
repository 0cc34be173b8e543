"""Findings: pure functions from a Trace to a list of ``Finding`` values.

A Finding says what happened, the rule that was broken, the evidence (file:line of every call
involved) and the fix, and carries the ids it refers to. This module reads a Trace and never
changes it. This version reports leaks (memory, streams, events, contexts) at finalize or
process exit, and deadlocks the runtime detected; more kinds join ``CHECKS`` later.
"""

from __future__ import annotations

import html
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .schema import ALLOC_KINDS

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    """One problem in a trace.

    Args:
        kind: e.g. ``"leak"``, ``"deadlock"``.
        severity: ``"error"``, ``"warning"`` or ``"info"``.
        message: the whole story for a learner: what, the rule, the evidence, the fix.
        file: file of the main call involved ("" if none).
        line: its line (0 if none).
        calls: ids of every call involved.
        ids: other ids by table, e.g. ``{"allocs": (3, 4), "objects": (7,)}``.
        sites: ``(file, line)`` of every call involved.
    """

    kind: str
    severity: str
    message: str
    file: str = ""
    line: int = 0
    calls: tuple[int, ...] = ()
    ids: dict[str, tuple[int, ...]] = field(default_factory=dict)
    sites: tuple[tuple[str, int], ...] = ()

    def __str__(self) -> str:
        where = f" ({self.file}:{self.line})" if self.file else ""
        return f"[{self.severity}] {self.kind}{where}: {self.message}"

    def to_summary(self) -> dict[str, Any]:
        """The summary file's finding entry."""
        return {"kind": self.kind, "severity": self.severity, "message": self.message,
                "file": self.file, "line": self.line}

    def _repr_html_(self) -> str:
        colour = {"error": "#c0392b", "warning": "#d68910", "info": "#2471a3"}[self.severity]
        where = f"<code>{html.escape(self.file)}:{self.line}</code>" if self.file else ""
        body = html.escape(self.message).replace("\n", "<br>")
        return (f"<div style='border-left:4px solid {colour};padding:4px 8px;margin:4px 0'>"
                f"<b style='color:{colour}'>{self.severity}: {html.escape(self.kind)}</b> "
                f"{where}<div>{body}</div></div>")


def _mib(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} bytes"


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
        msg = (f"{n} {what} {plural} from {file}:{line} ({api}) never freed, {_mib(total)}. "
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


def deadlocks(trace: Any) -> list[Finding]:
    """Deadlocks the runtime detected (each one ended a wait with DeadlockError)."""
    out: list[Finding] = []
    dg = trace.diags
    for j in range(dg.rows):
        if trace.string(int(dg["kind"][j])) != "deadlock":
            continue
        cid = int(dg["call"][j])
        file, line = trace.call_site(cid) if cid >= 0 else ("", 0)
        out.append(Finding("deadlock", "error", trace.string(int(dg["message"][j])), file,
                           line, (cid,) if cid >= 0 else (), {}, ((file, line),)))
    return out


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (leaks, deadlocks)


def run_checks(trace: Any) -> list[Finding]:
    """Every check over ``trace``, in a stable order."""
    out: list[Finding] = []
    for check in CHECKS:
        out.extend(check(trace))
    return out
