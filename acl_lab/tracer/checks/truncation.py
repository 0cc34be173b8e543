"""The trace's own health: ``trace_truncated`` when the memory bound left calls or tasks out.

The recorder keeps a trace under ``Session(trace_limit_bytes=...)`` (env
``ACL_LAB_TRACE_LIMIT_MB``) by dropping successful calls that no kept row refers to, finished
tasks beyond the first few of each signature that no finding and no ordering needs, and host
waits that told the host nothing new (see ``acl_lab.tracer.recorder``);
``trace.meta["dropped_calls"]`` and ``["dropped_tasks"]`` count them per API name. This check
turns those counts into a warning that says what was left out, which findings may be
incomplete and how to raise the limit, so a truncated trace is never mistaken for the whole
run. It reads the meta only and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..trace import DROPPED_CALLS, DROPPED_TASKS
from .base import Finding, human_bytes

#: At most this many API names are spelled out in the message.
_MAX_NAMES = 5


def _counts(meta: dict[str, Any], key: str) -> dict[str, int]:
    got = meta.get(key)
    return {str(k): int(v) for k, v in got.items()} if isinstance(got, dict) else {}


def _names(counts: dict[str, int]) -> str:
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{name} x{n}" for name, n in top[:_MAX_NAMES])
    if len(top) > _MAX_NAMES:
        text += f" and {len(top) - _MAX_NAMES} other API(s)"
    return text


def _int(meta: dict[str, Any], key: str) -> int:
    v = meta.get(key)
    return v if isinstance(v, int) else 0


def _str(meta: dict[str, Any], key: str) -> str:
    v = meta.get(key)
    return v if isinstance(v, str) else ""


def trace_truncated(trace: Any) -> list[Finding]:
    """One warning when the trace reached its memory bound (calls or tasks left out, or kept
    rows that the findings need grew past it)."""
    meta = trace.meta
    calls = _counts(meta, DROPPED_CALLS)
    tasks = _counts(meta, DROPPED_TASKS)
    limit, used = meta.get("trace_limit_bytes"), meta.get("trace_bytes")
    if not isinstance(limit, int) or not isinstance(used, int):
        return []
    over = used > limit or _int(meta, "trace_peak_bytes") > limit
    if not calls and not tasks and not over:
        return []
    file, line = _str(meta, "dropped_first_file"), _int(meta, "dropped_first_line")
    parts: list[str] = []
    if calls:
        where = f", the first at {file}:{line}" if file else ""
        parts.append(f"The trace reached its memory limit ({human_bytes(limit)}), so "
                     f"{sum(calls.values())} successful call(s) that no kept row refers to "
                     f"were left out of the call table ({_names(calls)}{where}); the call "
                     "table and the timeline miss those calls (stats still count them).")
    if tasks:
        tfile = _str(meta, "dropped_task_first_file")
        tline = _int(meta, "dropped_task_first_line")
        after = _int(meta, "dropped_tasks_after")
        keep = _int(meta, "task_keep_per_site")
        if not file:
            file, line = tfile, tline
        lead = ("It also left" if calls else
                f"The trace reached its memory limit ({human_bytes(limit)}), so it left")
        parts.append(
            f"{lead} {sum(tasks.values())} finished task(s) out of the task table "
            f"({_names(tasks)}, the first at {tfile}:{tline}): after the first {after} "
            f"task(s), each signature (stream, kind, call site, allocations touched, read or "
            f"write) keeps only its first {keep} tasks. Findings that may be incomplete: "
            f"races after task {after} were checked only for the first {keep} occurrences "
            "at each site, so a race that first shows up later at a site already seen is "
            "missed (none is invented: a task is left out only when no ordering between kept "
            "tasks depends on it); model-input coverage (size_mismatch) is checked on the "
            "kept copies only; the timeline misses those tasks.")
    if not calls and not tasks and used > limit:
        parts.append(f"The trace grew past its memory limit ({human_bytes(limit)}): it holds "
                     f"{human_bytes(used)}, all of it rows the findings need, so nothing "
                     "could be left out.")
    elif used > limit:
        parts.append(f"The kept rows alone take {human_bytes(used)}, more than the limit.")
    peak, in_flight = _int(meta, "trace_peak_bytes"), _int(meta, "tasks_in_flight_at_peak")
    if peak > limit:
        parts.append(f"While the program ran the trace held up to {human_bytes(peak)}, more "
                     f"than its limit ({human_bytes(limit)}), with {in_flight} task(s) queued "
                     "but not finished yet: a task is kept until "
                     "it has run (a free, an uninitialised read or a failure may still name "
                     "it), so a loop that queues work much faster than the device runs it "
                     "keeps its whole backlog; synchronize inside the loop to bound it.")
    stopped = _str(meta, "task_shedding_stopped")
    if stopped and over:
        parts.append(f"Tasks could not be left out once {stopped}: the race check needs "
                     "their order, which the trace can only summarise for one host thread.")
    parts.append("Complete whatever the limit: every allocation, free, object create and "
                 "destroy, diagnostic and failed call, every host wait that ordered something "
                 "new, and every task that failed, read uninitialised memory, was in flight at "
                 "a free or that a kept event wait or callback refers to, so leaks, double and "
                 "invalid frees, use after free, frees in flight, out-of-bounds accesses and "
                 "uninitialised reads are all found.")
    mb = max(2 * limit // (1 << 20), max(used, peak) // (1 << 20) + 1, 1)
    msg = (" ".join(parts) + " Rule: a runaway loop of API calls makes a trace grow without "
           "end, so acl_lab bounds its memory. Fix: if you need every call and task, raise "
           "the limit with acl_lab.Session(trace_limit_bytes=...) or the environment variable "
           f"ACL_LAB_TRACE_LIMIT_MB (e.g. ACL_LAB_TRACE_LIMIT_MB={mb}), or run fewer "
           "iterations.")
    return [Finding("trace_truncated", "warning", msg, file, line)]


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (trace_truncated,)
