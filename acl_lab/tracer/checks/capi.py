"""Findings only a C or C++ program can produce (programs linked with acl_lab's libascendcl).

``device_dereference``: the program read or wrote an emulated device address from the host
(the library reserves the device address window inaccessible, so the access faults at once;
its fault handler records a diagnostic at the faulting C line before the program ends).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Finding, TraceIndex, site

#: the diagnostic kind the C API's fault handler records (acl_lab/capi/bridge.py)
DEVICE_DEREFERENCE = "device_dereference"


def device_dereference(trace: Any) -> list[Finding]:
    """Each host access to device memory, at the C line that made it."""
    out: list[Finding] = []
    for cid, _level, msg in TraceIndex.of(trace).diags_of(DEVICE_DEREFERENCE):
        file, line = site(trace, cid)
        out.append(Finding(DEVICE_DEREFERENCE, "error", msg[:1].upper() + msg[1:], file, line,
                           (cid,), {}, ((file, line),)))
    return out


CHECKS: tuple[Callable[[Any], list[Finding]], ...] = (device_dereference,)
