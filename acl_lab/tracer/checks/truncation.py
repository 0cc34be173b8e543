"""The trace's own health: ``trace_truncated`` when the memory bound left calls out.

The recorder keeps a trace under ``Session(trace_limit_bytes=...)`` (env
``ACL_LAB_TRACE_LIMIT_MB``) by dropping successful calls that nothing else refers to (see
``acl_lab.tracer.recorder``); ``trace.meta["dropped_calls"]`` counts them per API name. This
check turns that count into a warning, so a truncated call table is never mistaken for the
whole run. It reads the meta only and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..trace import DROPPED_CALLS
from .base import Finding, human_bytes

#: At most this many API names are spelled out in the message.
_MAX_NAMES = 5


def trace_truncated(trace: Any) -> list[Finding]:
    """One warning when the trace reached its memory bound (calls left out, or kept rows
    that the findings need grew past it)."""
    meta = trace.meta
    dropped = meta.get(DROPPED_CALLS)
    dropped = dropped if isinstance(dropped, dict) else {}
    limit, used = meta.get("trace_limit_bytes"), meta.get("trace_bytes")
    if not isinstance(limit, int) or not isinstance(used, int):
        return []
    over = used > limit
    if not dropped and not over:
        return []
    file = meta.get("dropped_first_file")
    line = meta.get("dropped_first_line")
    file = file if isinstance(file, str) else ""
    line = line if isinstance(line, int) else 0
    kept = ("Every allocation, free, object create and destroy, task, event edge, sync, "
            "callback, diagnostic and failed call is kept whatever the limit, so the other "
            "findings are complete")
    if dropped:
        total = sum(int(n) for n in dropped.values())
        top = sorted(dropped.items(), key=lambda kv: (-int(kv[1]), kv[0]))
        names = ", ".join(f"{name} x{n}" for name, n in top[:_MAX_NAMES])
        if len(top) > _MAX_NAMES:
            names += f" and {len(top) - _MAX_NAMES} other API(s)"
        where = f", the first at {file}:{line}" if file else ""
        what = (f"The trace reached its memory limit ({human_bytes(limit)}), so {total} "
                f"successful call(s) that nothing else refers to were left out of the call "
                f"table ({names}{where}). {kept}; the call table and the timeline miss those "
                "calls (stats still count them).")
        if over:
            what += (f" The kept rows alone take {human_bytes(used)}, more than the limit.")
    else:
        what = (f"The trace grew past its memory limit ({human_bytes(limit)}): it holds "
                f"{human_bytes(used)}, all of it rows the findings need, so nothing could be "
                f"left out. {kept}.")
    mb = max(2 * limit // (1 << 20), used // (1 << 20) + 1, 1)
    msg = (f"{what} Rule: a runaway loop of API calls makes a trace grow without end, so "
           "acl_lab bounds its memory. Fix: if you need every call, raise the limit with "
           "acl_lab.Session(trace_limit_bytes=...) or the environment variable "
           f"ACL_LAB_TRACE_LIMIT_MB (e.g. ACL_LAB_TRACE_LIMIT_MB={mb}), or run fewer "
           "iterations.")
    return [Finding("trace_truncated", "warning", msg, file, line)]


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (trace_truncated,)
