"""Exceptions raised inside the emulated machine.

The runtime speaks in exceptions; the pyACL layer (``acl_lab.acl``) turns them into the
integer return codes real ACL gives. This module must not import anything else from acl_lab.

Hierarchy::

    * AclError            a call fails with an ACL error code (``.code``); mapped to ``ret``
      + AccessError       an address range does not lie inside one live allocation
    * DeadlockError       a wait that real ACL would never return from; *raised* to the user
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


class AclError(Exception):
    """A runtime operation failed with an ACL error code.

    Args:
        code: the ACL header value, e.g. 107002.
        message: a readable explanation, stored as the thread's recent error message.

    ``code`` is kept as a plain ``int`` even when an ``ErrorCode`` member is passed: it is what
    the API returns and the trace records, and real pyACL returns a Python ``int``.
    """

    def __init__(self, code: int, message: str) -> None:
        code = int(code)
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class AccessError(AclError):
    """An address range does not lie inside one live allocation, or may not be written.

    A null or unknown address, one that was freed, a range that runs past its allocation's
    end, unmapped raw host memory, a write into memory the program may not write: the
    message says which (callers that explain a failed copy tell it from other errors by
    this class).
    """


@dataclass
class WaitEdge:
    """One edge of a wait-for explanation: ``waiter`` waits for ``target`` because ``why``."""

    waiter: str
    target: str
    why: str
    file: str = ""
    line: int = 0


class DeadlockError(Exception):
    """A wait that can never be satisfied; real ACL would hang forever here.

    This is the one documented place where the emulator raises instead of returning a code:
    a hang has no return code. ``edges`` hold the wait-for graph, ``stacks`` every thread's
    Python stack when the watchdog fired, ``report`` the whole explanation as text.
    ``quiet`` marks a wait that is no deadlock but ends with the session (a timed poll still
    running at close): its thread ends without a finding or a printed traceback.
    """

    def __init__(self, summary: str, edges: list[WaitEdge], stacks: str = "",
                 thread: str = "", file: str = "", line: int = 0, quiet: bool = False) -> None:
        self.summary = summary
        self.quiet = quiet
        self.edges = edges
        self.stacks = stacks
        self.thread = thread
        self.file = file
        self.line = line
        super().__init__(self.report)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle and copy with every field (``Exception`` would rebuild it from its
        message alone, and the constructor needs the edges)."""
        return (type(self), (self.summary, self.edges, self.stacks, self.thread, self.file,
                             self.line, self.quiet))

    def to_wire(self) -> list[Any]:
        """The error as plain values (the pipe's codec): see :meth:`from_wire`."""
        return [self.summary, self.quiet,
                [[e.waiter, e.target, e.why, e.file, e.line] for e in self.edges],
                self.stacks, self.thread, self.file, self.line]

    @classmethod
    def from_wire(cls, fields: Any) -> DeadlockError:
        """The error :meth:`to_wire` described; fields of the wrong type are left out (the
        other side may be a learner's process)."""
        f = list(fields) if isinstance(fields, list) else []
        f += [None] * (7 - len(f))

        def text(v: Any) -> str:
            return v[:100_000] if type(v) is str else ""

        def num(v: Any) -> int:
            return v if type(v) is int else 0

        edges = [WaitEdge(text(e[0]), text(e[1]), text(e[2]), text(e[3]), num(e[4]))
                 for e in (f[2] if isinstance(f[2], list) else [])[:1000]
                 if isinstance(e, list) and len(e) == 5]
        return cls(text(f[0]), edges, text(f[3]), text(f[4]), text(f[5]), num(f[6]),
                   quiet=f[1] is True)

    @property
    def report(self) -> str:
        """The full explanation: what is stuck, each wait-for edge, and the stacks if any."""
        # a notebook cell is named as the cell (cell In[5]:3), not the kernel's temp file
        from .sites import cell_name, format_site

        lines = [f"deadlock: {self.summary}"]
        if self.thread:
            where = f" at {format_site(self.file, self.line)}" if self.file else ""
            lines.append(f"  stuck thread: {self.thread}{where}")
        for e in self.edges:
            at = f" ({format_site(e.file, e.line)})" if e.file else ""
            lines.append(f"  {e.waiter} waits for {e.target}: {e.why}{at}")
        if self.stacks:
            lines.append("Python stacks of every thread:")
            lines.append(re.sub(r'File "([^"]+)", line',
                                lambda m: f'File "{cell_name(m.group(1))}", line', self.stacks))
        return "\n".join(lines)
