"""Patterns met while running the public pyACL samples (scripts/public_samples.py, table in
docs/samples.md), each in a program of our own in the samples' style under
tests/programs/samplestyle/, run unmodified under ``acl-lab run``.
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_cli_run import PROGRAMS, acl_lab_run, check_summary_schema, describe
from tests.e2e.test_sample_style import kinds, line_of

POLL = PROGRAMS / "samplestyle" / "poll_thread_on_error.py"


def test_timed_poll_thread_left_running_is_not_a_deadlock(tmp_path: Path) -> None:
    """The video-decoding sample's shape: a subscribed callback thread polls
    process_report(100) in a loop, then the main thread's setup fails (missing input). The
    run ends with the program's exception (exit 1); the thread still polling when the session
    closes is no deadlock (a timed wait returns by itself, and the process takes the thread
    with it on real hardware), so the findings are the three resources the failed program
    never released, and nothing else."""
    run = acl_lab_run(tmp_path, "samplestyle/poll_thread_on_error.py",
                      str(tmp_path / "missing.h265"))
    assert run.proc.returncode == 1, describe(run)
    check_summary_schema(run.summary)
    assert "FileNotFoundError" in run.proc.stderr
    assert "Deadlock" not in run.proc.stderr and "deadlock" not in run.proc.stderr
    assert run.summary["error"] and "FileNotFoundError" in run.summary["error"]
    assert kinds(run.summary) == sorted([
        ("leak", "warning", POLL.name, line_of(POLL, "acl.rt.create_context(")),
        ("leak", "warning", POLL.name, line_of(POLL, "acl.rt.create_stream(")),
        ("leak", "warning", POLL.name, line_of(POLL, "acl.rt.set_device(")),
    ])
