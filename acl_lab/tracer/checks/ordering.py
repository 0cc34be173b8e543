"""Ordering checks: deadlocks (and, as they are added, races and waits before records)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Finding


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


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (deadlocks,)
