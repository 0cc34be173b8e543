"""Minimal learner-style programs run in-process, as the finding tests write them.

A test writes a whole program (``import acl`` ...) to a file, runs it as ``__main__`` with
``acl_lab.install()`` in a fresh Session, and checks the findings of its trace against the
lines it marked with ``# <- name``.
"""

from __future__ import annotations

import re
import runpy
from dataclasses import dataclass
from pathlib import Path

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.checks import Finding, run_checks
from acl_lab.tracer.trace import Trace

#: A marked line: ``...  # <- name``.
MARK = re.compile(r"#\s*<-\s*(\w+)")

#: Setup and teardown of a program that cleans up after itself (a context and a stream).
HEADER = """
assert acl.init() == 0
assert acl.rt.set_device(0) == 0
ctx, ret = acl.rt.create_context(0)
assert ret == 0
stream, ret = acl.rt.create_stream()
assert ret == 0
"""
FOOTER = """
assert acl.rt.destroy_stream(stream) == 0
assert acl.rt.destroy_context(ctx) == 0
assert acl.rt.reset_device(0) == 0
assert acl.finalize() == 0
"""


@dataclass
class Run:
    """A program run in-process: its trace, findings, file, marked lines and globals."""

    trace: Trace
    findings: list[Finding]
    path: Path
    marks: dict[str, int]
    env: dict[str, object]

    def at(self, mark: str, kind: str | None = None) -> list[Finding]:
        """Findings reported at the marked line (of ``kind`` when given)."""
        return [f for f in self.findings if f.line == self.marks[mark]
                and Path(f.file) == self.path and (kind is None or f.kind == kind)]

    def kinds(self) -> list[tuple[str, int]]:
        """(kind, line) of every finding, sorted."""
        return sorted((f.kind, f.line) for f in self.findings)


def run_source(tmp_path: Path, source: str) -> Run:
    """Write ``source`` to ``tmp_path/prog.py``, run it in a fresh Session and check its trace.

    Lines ending in ``# <- name`` are recorded in ``marks`` by name.
    """
    path = tmp_path / "prog.py"
    path.write_text(source, encoding="utf-8")
    marks = {m.group(1): n for n, line in enumerate(source.splitlines(), 1)
             if (m := MARK.search(line))}
    with Session(watchdog=2.0) as s:
        acl_lab.install()
        try:
            env = runpy.run_path(str(path), run_name="__main__")
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    return Run(trace, run_checks(trace), path, marks, env)
