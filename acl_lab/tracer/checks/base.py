"""The Finding value and small helpers shared by every check module.

A Finding says what happened, the rule that was broken, the evidence (file:line of every call
involved) and the fix, and carries the ids it refers to. Checks are pure functions
``Trace -> list[Finding]``; nothing here changes a trace.

Every message names the C API function beside the pyACL one at its first mention
(``acl.rt.malloc (aclrtMalloc)``): ``with_c_names`` is the one place that formats them, and
``Finding`` applies it to every message, so the checks write pyACL names only.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..index import TraceIndex, int_array
from ..units import human_bytes

#: A dotted pyACL name in a message (``acl.rt.malloc``; a trailing full stop is not part).
_API = re.compile(r"(?<![\w.])acl(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=1024)
def c_name_of(name: str) -> str | None:
    """The C function the pyACL function ``name`` calls (binding table), or None when it
    calls none by a C name (``acl.util.ptr_to_numpy``) or is not in the table."""
    # The binding's method table is plain data, but importing it loads the acl_lab.acl
    # package (the API layer over the runtime; it never imports the tracer, so there is no
    # cycle). Imported here, on the first message, so that loading and viewing a trace
    # does not pay for the API layer.
    from ...acl._binding import BY_NAME

    entry = BY_NAME.get(name)
    if entry is None or not _IDENT.fullmatch(entry.cname):
        return None
    return entry.cname


def api_name(name: str) -> str:
    """``name`` for a message: ``"acl.rt.malloc (aclrtMalloc)"``, or ``name`` alone when it
    has no C name."""
    cname = c_name_of(name)
    return f"{name} ({cname})" if cname else name


def _call_end(text: str, start: int) -> int:
    """The index just past the parenthesised argument list opening at ``text[start]``
    (``start`` itself when the parentheses do not close)."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return start


def with_c_names(text: str) -> str:
    """``text`` with the C name beside the first mention of each pyACL function.

    ``acl.rt.free`` becomes ``acl.rt.free (aclrtFree)``; a call written out,
    ``acl.rt.subscribe_report(tid, stream)``, gets it after its arguments, and a name alone
    first in parentheses, ``(acl.rt.malloc)`` or ``(acl.rt.malloc, 4 KiB)``, reads
    ``(acl.rt.malloc / aclrtMalloc)``. A mention already
    followed by its C name is left alone, so applying this twice changes nothing.
    """
    out: list[str] = []
    seen: set[str] = set()
    pos = 0
    for m in _API.finditer(text):
        name = m.group(0)
        cname = c_name_of(name)
        if cname is None or name in seen:
            continue
        seen.add(name)
        end = m.end()
        # "(acl.rt.malloc)" and "(acl.rt.malloc, 4 KiB)" read "(acl.rt.malloc / aclrtMalloc..."
        inside = m.start() > 0 and text[m.start() - 1] == "(" and text.startswith((")", ","),
                                                                               end)
        if end < len(text) and text[end] == "(":
            end = _call_end(text, end)
        beside = f" / {cname}" if inside else f" ({cname})"
        if text.startswith((f" / {cname}", f" ({cname})"), end):
            continue
        out.append(text[pos:end])
        out.append(beside)
        pos = end
    out.append(text[pos:])
    return "".join(out)

__all__ = ["SEVERITIES", "Finding", "TraceIndex", "api_name", "c_name_of", "human_bytes",
           "int_array", "site", "with_c_names"]

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

    def __post_init__(self) -> None:
        # the C API name beside each pyACL name, in one place for every check
        object.__setattr__(self, "message", with_c_names(self.message))

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


def site(trace: Any, cid: int) -> tuple[str, int]:
    """(file, line) of call ``cid`` (('', 0) for -1), from the trace's index."""
    return TraceIndex.of(trace).site(cid)
