"""Small helpers shared by the test modules (fixtures live in conftest.py)."""

from __future__ import annotations

from typing import Any

from acl_lab.constants import ACL_SUCCESS
from acl_lab.tracer.trace import Trace


def ok(result: tuple[Any, int]) -> Any:
    """The value of a ``(value, ret)`` pair, asserting ret is ACL_SUCCESS."""
    value, ret = result
    assert ret == ACL_SUCCESS
    return value


def snapshot(trace: Trace) -> dict[str, dict[str, bytes]]:
    """Every column's bytes, to check that nothing wrote to the trace."""
    return {n: {c: t[c].tobytes() for c in t} for n, t in trace.tables.items()}
