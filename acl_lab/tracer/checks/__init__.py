"""Findings: pure functions from a Trace to a list of ``Finding`` values.

Each module of this package owns some kinds and exports ``CHECKS``, a tuple of functions
``Trace -> list[Finding]``; ``run_checks`` runs them all in a stable order. Checks read a trace
and never change it. Clean programs give no findings: a false positive is a bug with a test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import capi, memory, ordering, pitfalls, resources, threads, truncation
from .base import SEVERITIES, Finding
from .ordering import deadlocks
from .resources import leaks

CHECK_MODULES = (resources, memory, pitfalls, ordering, threads, truncation, capi)
CHECKS: tuple[Callable[[Any], list[Finding]], ...] = tuple(
    c for m in CHECK_MODULES for c in m.CHECKS)


def run_checks(trace: Any) -> list[Finding]:
    """Every check over ``trace``, in a stable order."""
    out: list[Finding] = []
    for check in CHECKS:
        out.extend(check(trace))
    return out


__all__ = ["CHECKS", "SEVERITIES", "Finding", "deadlocks", "leaks", "run_checks"]
