"""Helpers of the C API tests: build the library, compile a program with ``acl-lab cc``, run
it and its Python twin with ``acl-lab run``, and compare their traces call for call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acl_lab.capi import build
from acl_lab.runtime.memory import DEVICE_END
from acl_lab.tracer.trace import Trace

PROGRAMS = Path(__file__).parent / "programs"
#: raw host addresses (C stack/heap, numpy buffers, malloc_host) are above the emulated
#: device window; handles and device addresses are below its end
HOST_ADDRESS_MIN = DEVICE_END


@pytest.fixture(scope="session")
def libascendcl() -> Path:
    """The built library (g++ and python3-dev come from ``make test``'s cdev target)."""
    return build.build()


def acl_lab(*args: str, cwd: Path, timeout: float = 240,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``acl-lab ARGS`` in a child process (its stdout and stderr captured; ``env``: extra
    environment variables)."""
    return subprocess.run([sys.executable, "-m", "acl_lab", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def compile_program(name: str, tmp_path: Path) -> Path:
    """Compile ``programs/<name>.cpp`` with ``acl-lab cc``; the binary's path."""
    out = tmp_path / name
    proc = acl_lab("cc", str(PROGRAMS / f"{name}.cpp"), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return out


def run_traced(program: Path, *args: str, cwd: Path,
               tag: str) -> tuple[subprocess.CompletedProcess[str], Trace, dict[str, Any]]:
    """``acl-lab run`` a binary or a .py program; (process, trace, summary)."""
    trace, summary = cwd / f"{tag}.acltrace", cwd / f"{tag}.summary.json"
    proc = acl_lab("run", "--trace", str(trace), "--summary", str(summary), str(program),
                   *args, cwd=cwd)
    assert trace.exists(), proc.stderr
    return proc, Trace.load(trace), json.loads(summary.read_text())


def _arg(a: Any) -> Any:
    if isinstance(a, int) and a >= HOST_ADDRESS_MIN:
        return "host"
    if isinstance(a, str) and a.startswith("<"):
        return "object"  # a callable or another object, recorded by its repr
    return a


def calls(trace: Trace) -> list[tuple[str, int, tuple[Any, ...]]]:
    """Every ACL call: (pyACL name, return code, arguments with host addresses masked);
    the program's host operations (``threading.Thread.start``, ...: a Python program's,
    which a C program's pthreads have no rows for) are left out."""
    return [(trace.call_name(c), int(trace.calls["ret"][c]),
             tuple(_arg(a) for a in trace.call_args(c))) for c in trace.api_calls()]


def line_of(name: str, marker: str) -> int:
    """The 1-based line of ``programs/<name>.cpp`` that holds ``marker``."""
    lines = (PROGRAMS / f"{name}.cpp").read_text().splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if marker in text]
    assert len(hits) == 1, f"{marker!r} found {len(hits)} times in {name}.cpp"
    return hits[0]
