"""Determinism: a single-threaded program gives byte-identical traces and identical data."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import acl_lab
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace

PROGRAM = Path(__file__).resolve().parent.parent / "programs" / "determinism.py"
REPO = Path(__file__).resolve().parents[2]


def run_in_session(trace_path: Path) -> dict[str, Any]:
    """Run the program's ``main()`` in a fresh Session; save the trace; return its data."""
    result, trace = record_in_session()
    trace.save(trace_path)
    return result


def record_in_session() -> tuple[dict[str, Any], Trace]:
    """Run the program's ``main()`` in a fresh Session; return its data and trace."""
    with Session(watchdog=2.0) as s:
        acl_lab.install()
        try:
            namespace = runpy.run_path(str(PROGRAM), run_name="determinism_program")
            result: dict[str, Any] = namespace["main"]()
            trace = s.finish()
        finally:
            acl_lab.uninstall()
    return result, trace


def run_cli(trace_path: Path, hash_seed: str) -> dict[str, Any]:
    """Run the program with ``acl-lab run`` in a subprocess; return the data it printed."""
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    proc = subprocess.run(
        [sys.executable, "-m", "acl_lab.cli", "run", "--quiet", "--trace", str(trace_path),
         str(PROGRAM)],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT=")]
    assert len(lines) == 1, proc.stdout
    result: dict[str, Any] = json.loads(lines[0][len("RESULT="):])
    return result


def check_result(result: dict[str, Any]) -> None:
    """The program's own expectations: every call succeeded except the deliberate error."""
    assert all(r == 0 for r in result["rets"]), result["rets"]
    assert result["double_free"] == 107000
    assert result["pageable_round_trip"] is True  # bytes_to_ptr buffer -> device -> bytes
    assert result["event_status"] == 1  # ACL_EVENT_RECORDED_STATUS_COMPLETE after the syncs
    assert result["freed_bytes"] > 0
    assert result["d2h_pinned_head"] == [3] * 16  # D2D of the pinned memset after the wait
    assert result["d2h_pinned_tail"] == [9] * 16  # the memset_async part not overwritten


def first_difference(a: bytes, b: bytes) -> str:
    """Where two byte strings first differ, with context (for assertion messages)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"byte {i}: {a[max(0, i - 80):i + 80]!r} vs {b[max(0, i - 80):i + 80]!r}"
    return f"lengths {len(a)} vs {len(b)}"


def test_two_sessions_give_identical_traces(tmp_path: Path) -> None:
    """Two fresh Sessions running the same program save byte-identical trace files."""
    a, b = tmp_path / "a.acltrace", tmp_path / "b.acltrace"
    ra = run_in_session(a)
    rb = run_in_session(b)
    check_result(ra)
    assert ra == rb
    da, db = a.read_bytes(), b.read_bytes()
    assert da == db, first_difference(da, db)


def test_two_cli_runs_give_identical_traces(tmp_path: Path) -> None:
    """Two ``acl-lab run`` processes (different hash seeds) write byte-identical traces."""
    a, b = tmp_path / "a.acltrace", tmp_path / "b.acltrace"
    ra = run_cli(a, "1")
    rb = run_cli(b, "2")
    check_result(ra)
    assert ra == rb
    da, db = a.read_bytes(), b.read_bytes()
    assert da == db, first_difference(da, db)


def test_session_and_cli_compute_the_same_data(tmp_path: Path) -> None:
    """The data a program reads back is the same in a Session and under ``acl-lab run``."""
    in_session = run_in_session(tmp_path / "s.acltrace")
    in_cli = run_cli(tmp_path / "c.acltrace", "3")
    assert in_session == in_cli


def test_chrome_export_is_identical_across_sessions() -> None:
    """The Chrome export of the same program is identical across two Sessions."""
    _, ta = record_in_session()
    _, tb = record_in_session()
    assert json.dumps(ta.to_chrome_trace()) == json.dumps(tb.to_chrome_trace())
