"""The ``%%acl_cpp`` cell magic: compile a C++ cell, run it under the emulator, show its trace.

Load it with ``%load_ext acl_lab.capi``; then a cell

    %%acl_cpp --name first --args "model.om 1 2"
    #include "acl/acl.h"
    int main() { ... }

is written to ``<name>.cpp`` (in ``$ACL_LAB_CACHE/cells/<hash>``, else
``~/.cache/acl_lab/cells/<hash>``), compiled with ``acl-lab cc`` and run with ``acl-lab run``.
The cell's output is a :class:`CppRun`: the program's output and exit status, its findings
at the cell's lines, and its call table (the figure needs plotly, the ``views`` extra).
:func:`run_cpp` does the same without IPython.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import build
from .commands import compile_command


@dataclass
class CppRun:
    """One compiled and traced C++ cell."""

    source: Path
    exit_code: int
    stdout: str
    stderr: str
    compiled: bool
    trace: Any = None
    summary: dict[str, Any] = field(default_factory=dict)

    def findings(self) -> list[Any]:
        """The trace's findings (none when the program did not compile or run)."""
        return self.trace.findings() if self.trace is not None else []

    def call_table(self) -> Any:
        """The call table figure of the run (plotly). RuntimeError, with the run's exit
        status and error output, when the run left no trace."""
        from ..tracer.views import call_table
        if self.trace is None:
            why = "it did not compile" if not self.compiled else \
                f"exit status {self.exit_code}: {self.stderr.strip()[-2000:] or 'no output'}"
            raise RuntimeError(f"{self.source.name} left no trace ({why})")
        return call_table(self.trace)

    def _repr_html_(self) -> str:
        parts = [f"<div><b>{html.escape(self.source.name)}</b>: "]
        if not self.compiled:
            parts.append("compile error</div><pre>" + html.escape(self.stderr) + "</pre>")
            return "".join(parts)
        st = self.summary.get("stats", {})
        parts.append(f"exit {self.exit_code}; {st.get('api_calls', 0)} API calls, "
                     f"{st.get('tasks', 0)} tasks; {len(self.findings())} finding(s)</div>")
        if self.stdout:
            parts.append("<pre>" + html.escape(self.stdout) + "</pre>")
        if self.trace is None and self.stderr:
            parts.append("<pre>" + html.escape(self.stderr) + "</pre>")
        for f in self.findings():
            parts.append(f._repr_html_())
        return "".join(parts)


def _cell_dir(source: str) -> Path:
    base = os.environ.get("ACL_LAB_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "acl_lab"
    d = root / "cells" / hashlib.sha256(source.encode()).hexdigest()[:16]
    d.mkdir(parents=True, exist_ok=True)
    return d


def run_cpp(source: str, name: str = "cell", args: list[str] | None = None,
            profile: str | None = None, timeout: float = 300) -> CppRun:
    """Compile ``source`` as ``<name>.cpp``, run it traced; the :class:`CppRun`."""
    d = _cell_dir(source)
    src = d / f"{name}.cpp"
    src.write_text(source, encoding="utf-8")
    binary = d / name
    try:
        lib = build.build()
        comp = subprocess.run(compile_command([str(src), "-o", str(binary)], lib),
                              capture_output=True, text=True, timeout=timeout)
    except (RuntimeError, ImportError, OSError) as e:  # no cffi, gcc or Python headers
        return CppRun(src, 2, "", f"acl-lab: cannot build C++ here: {e}", False)
    if comp.returncode != 0:
        return CppRun(src, comp.returncode, "", comp.stderr, False)
    out = Path(tempfile.mkdtemp(prefix="run-", dir=d))
    trace_path, summary_path = out / f"{name}.acltrace", out / f"{name}.summary.json"
    cmd = [sys.executable, "-m", "acl_lab", "run", "--quiet", "--trace", str(trace_path),
           "--summary", str(summary_path)]
    if profile:
        cmd += ["--profile", profile]
    run = subprocess.run([*cmd, str(binary), *(args or [])], capture_output=True, text=True,
                         timeout=timeout, cwd=os.getcwd())
    trace = None
    summary: dict[str, Any] = {}
    if trace_path.exists():
        from ..tracer.trace import Trace
        trace = Trace.load(trace_path)
        summary = json.loads(summary_path.read_text())
    elif not run.stderr.strip():
        run.stderr = f"acl-lab run ended with exit status {run.returncode} and no trace"
    return CppRun(src, run.returncode, run.stdout, run.stderr, True, trace, summary)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="%%acl_cpp", add_help=False)
    p.add_argument("--name", default="cell", help="the source file's name (NAME.cpp)")
    p.add_argument("--args", default="", help="the program's arguments (one string)")
    p.add_argument("--profile", default=None, help="device profile")
    return p


def acl_cpp(line: str, cell: str) -> CppRun:
    """The cell magic: ``%%acl_cpp [--name NAME] [--args "A B"] [--profile P]``."""
    opts = _parser().parse_args(shlex.split(line))
    return run_cpp(cell, opts.name, shlex.split(opts.args), opts.profile)


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%%acl_cpp`` (``%load_ext acl_lab.capi``); each run is also kept in the
    notebook's ``acl_cpp_run`` variable (its ``trace``, ``findings()``, ``call_table()``)."""
    def magic(line: str, cell: str) -> CppRun:
        run = acl_cpp(line, cell)
        ipython.user_ns["acl_cpp_run"] = run
        return run
    magic.__doc__ = acl_cpp.__doc__
    ipython.register_magic_function(magic, magic_kind="cell", magic_name="acl_cpp")
