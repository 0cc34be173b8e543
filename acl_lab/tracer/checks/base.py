"""The Finding value and small helpers shared by every check module.

A Finding says what happened, the rule that was broken, the evidence (file:line of every call
involved) and the fix, and carries the ids it refers to. Checks are pure functions
``Trace -> list[Finding]``; nothing here changes a trace.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

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


def human_bytes(n: int) -> str:
    """A byte count for a message: bytes, KiB or MiB."""
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} bytes"


def site(trace: Any, cid: int) -> tuple[str, int]:
    """(file, line) of call ``cid`` (('', 0) for -1)."""
    return trace.call_site(cid) if cid >= 0 else ("", 0)
