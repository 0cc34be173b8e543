"""``acl-lab run`` end to end: real pyACL program flows in a subprocess, summary and trace."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acl_lab.tracer.trace import Trace

PROGRAMS = Path(__file__).resolve().parent.parent / "programs"
TIMEOUT = 60
SUMMARY_KEYS = {"schema_version", "exit_code", "error", "interrupted", "findings", "stats",
                "schedule", "results"}
SCHEDULE_KEYS = {"seed", "threads", "switches", "left_control"}
FINDING_KEYS = {"kind", "severity", "message", "file", "line", "sites"}
STATS_KEYS = {"api_calls", "host_ops", "tasks", "allocations", "peak_device_bytes",
              "virtual_time_ns"}


@dataclass
class CliRun:
    """One finished ``acl-lab run``: process result, outputs and wall time."""

    proc: subprocess.CompletedProcess[str]
    summary_path: Path
    trace_path: Path
    seconds: float

    @property
    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.summary_path.read_text(encoding="utf-8"))
        return data

    @property
    def trace_doc(self) -> dict[str, Any]:
        """The trace file as JSON (gunzipped when compressed), without Trace.load."""
        raw = self.trace_path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc: dict[str, Any] = json.loads(raw)
        return doc

    def rows(self, table: str) -> int:
        """Row count of a table of the trace file."""
        cols = self.trace_doc["tables"][table]
        return len(next(iter(cols.values())))


def acl_lab_run(tmp_path: Path, program: str, *args: str, options: tuple[str, ...] = ()
                ) -> CliRun:
    """Run ``acl-lab run --trace T --summary S [options] PROGRAM [args]`` in ``tmp_path``."""
    trace = tmp_path / "out.acltrace"
    summary = tmp_path / "summary.json"
    cmd = [sys.executable, "-m", "acl_lab.cli", "run", "--trace", str(trace),
           "--summary", str(summary), *options, str(PROGRAMS / program), *args]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    return CliRun(proc, summary, trace, time.monotonic() - t0)


def lines_containing(program: str, text: str) -> list[int]:
    """1-based numbers of the program's lines that contain ``text``."""
    source = (PROGRAMS / program).read_text(encoding="utf-8").splitlines()
    return [n for n, line in enumerate(source, 1) if text in line]


def check_summary_schema(summary: dict[str, Any]) -> None:
    """The summary has exactly the documented keys and types."""
    assert set(summary) == SUMMARY_KEYS
    assert type(summary["exit_code"]) is int
    assert summary["error"] is None or isinstance(summary["error"], str)
    assert type(summary["interrupted"]) is bool
    assert isinstance(summary["findings"], list)
    for f in summary["findings"]:
        assert set(f) == FINDING_KEYS, f
        for key in ("kind", "severity", "message", "file"):
            assert isinstance(f[key], str), f
        assert type(f["line"]) is int, f
        assert all(set(site) == {"file", "line"} for site in f["sites"]), f
        assert f["severity"] in ("error", "warning", "info"), f
    assert set(summary["stats"]) == STATS_KEYS
    for key, value in summary["stats"].items():
        assert type(value) is int and value >= 0, (key, value)
    assert set(summary["schedule"]) == SCHEDULE_KEYS
    assert all(type(v) is int and v >= 0 for v in summary["schedule"].values())
    results = summary["results"]
    assert results is None or (isinstance(results, str) and len(results) == 16)


def same_file(reported: str, program: str) -> bool:
    """Whether a finding's file is the program (the path as it was given to acl-lab)."""
    return Path(reported).resolve() == (PROGRAMS / program).resolve()


def describe(run: CliRun) -> str:
    """The process output, for assertion messages."""
    return f"exit {run.proc.returncode}\nstdout:\n{run.proc.stdout}\nstderr:\n{run.proc.stderr}"


# --------------------------------------------------------------------------- (a) 7.3
def test_async_copy_flow_runs_and_reports_the_leaked_streams(tmp_path: Path) -> None:
    """Reference 7.3 runs to exit 0; its only findings, of any kind, are the two
    never-destroyed streams, each naming the destroy_context that released it."""
    prog = "memcpy_async_73.py"
    run = acl_lab_run(tmp_path, prog)
    assert run.proc.returncode == 0, describe(run)
    assert "memcpy_async_73: ok" in run.proc.stdout  # the program's own data checks passed
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == 0
    assert summary["error"] is None
    stream_lines = lines_containing(prog, "acl.rt.create_stream(")
    assert len(stream_lines) == 2
    found = sorted((f["kind"], f["line"]) for f in summary["findings"])
    assert found == [("leak", n) for n in stream_lines], json.dumps(summary, indent=1)
    (destroy_ctx,) = lines_containing(prog, "acl.rt.destroy_context(ctx)")
    for f in summary["findings"]:
        assert same_file(f["file"], prog), f
        assert "stream" in f["message"] and "acl.rt.destroy_stream" in f["message"]
        assert (f"acl.rt.destroy_context (aclrtDestroyContext) at {f['file']}:{destroy_ctx}"
                in f["message"])


def test_async_copy_flow_stats_match_the_trace_file(tmp_path: Path) -> None:
    """The summary's stats agree with the trace file that the same run wrote."""
    run = acl_lab_run(tmp_path, "memcpy_async_73.py")
    assert run.proc.returncode == 0, describe(run)
    stats = run.summary["stats"]
    assert stats["api_calls"] == run.rows("calls") > 0
    assert stats["tasks"] == run.rows("tasks") > 0
    kinds = run.trace_doc["tables"]["allocs"]["kind"]
    assert stats["allocations"] == sum(1 for k in kinds if k != 3)  # pageable buffers aside
    assert stats["peak_device_bytes"] > 0
    assert stats["virtual_time_ns"] > 0


def test_trace_written_by_run_loads(tmp_path: Path) -> None:
    """The ``.acltrace`` that ``acl-lab run`` writes passes ``Trace.load`` unchanged."""
    run = acl_lab_run(tmp_path, "memcpy_async_73.py")
    assert run.proc.returncode == 0, describe(run)
    trace = Trace.load(run.trace_path)
    assert trace.calls.rows == run.summary["stats"]["api_calls"]
    assert [f.to_summary() for f in trace.findings()] == [
        {k: v for k, v in f.items() if k != "sites"} for f in run.summary["findings"]]


def test_chrome_option_writes_valid_json(tmp_path: Path) -> None:
    """``--chrome FILE`` writes a Chrome trace JSON with a traceEvents list."""
    chrome = tmp_path / "perfetto.json"
    run = acl_lab_run(tmp_path, "two_stream_event_75.py", options=("--chrome", str(chrome)))
    assert run.proc.returncode == 0, describe(run)
    doc = json.loads(chrome.read_text(encoding="utf-8"))
    assert isinstance(doc["traceEvents"], list) and doc["traceEvents"]


# --------------------------------------------------------------------------- (b) 7.5
def test_two_stream_event_flow_is_clean(tmp_path: Path) -> None:
    """Reference 7.5, cleaned up in order: exit 0, data correct, no findings."""
    run = acl_lab_run(tmp_path, "two_stream_event_75.py")
    assert run.proc.returncode == 0, describe(run)
    assert "two_stream_event_75: ok" in run.proc.stdout
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == 0 and summary["error"] is None
    assert summary["findings"] == []
    assert summary["stats"]["api_calls"] == run.rows("calls")


# --------------------------------------------------------------------------- (c) exit codes
def test_sys_exit_code_is_preserved(tmp_path: Path) -> None:
    """``sys.exit(7)`` gives exit status 7, and the summary and trace are still written."""
    run = acl_lab_run(tmp_path, "exit_code.py")
    assert run.proc.returncode == 7, describe(run)
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == 7
    assert summary["error"] is None
    assert run.rows("calls") == summary["stats"]["api_calls"] >= 3
    malloc_line = lines_containing("exit_code.py", "acl.rt.malloc(")[0]
    assert ("leak", malloc_line) in {(f["kind"], f["line"]) for f in summary["findings"]}


def test_uncaught_exception_exits_1_and_names_the_type(tmp_path: Path) -> None:
    """An uncaught exception gives exit 1; the summary error names its type; trace written."""
    run = acl_lab_run(tmp_path, "raises.py")
    assert run.proc.returncode == 1, describe(run)
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == 1
    assert summary["error"] is not None and summary["error"].startswith("SampleFailure")
    assert "model output check failed" in summary["error"]
    assert "SampleFailure" in run.proc.stderr  # the traceback is shown
    assert run.rows("calls") == summary["stats"]["api_calls"] >= 3


# --------------------------------------------------------------------------- (d) deadlocks
@pytest.mark.parametrize("program", ["deadlock_reset_event.py",
                                     "deadlock_blocking_callback.py"])
def test_deadlock_is_reported_not_hung(tmp_path: Path, program: str) -> None:
    """A program that would hang on hardware ends quickly with a deadlock finding at its line."""
    run = acl_lab_run(tmp_path, program)
    assert run.seconds < 30, describe(run)
    assert run.proc.returncode != 0, describe(run)
    assert "unreachable" not in run.proc.stdout
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == run.proc.returncode
    assert summary["error"] is not None and summary["error"].startswith("DeadlockError")
    (line,) = lines_containing(program, "# DEADLOCK")
    deadlocks = [f for f in summary["findings"] if f["kind"] == "deadlock"]
    assert [(f["line"], same_file(f["file"], program)) for f in deadlocks] == [(line, True)]
    assert deadlocks[0]["severity"] == "error"
    assert run.rows("calls") == summary["stats"]["api_calls"]


# --------------------------------------------------------------------------- (e) arguments
def test_arguments_after_the_program_belong_to_it(tmp_path: Path) -> None:
    """Options before the program are acl-lab's; everything after it is the program's argv."""
    run = acl_lab_run(tmp_path, "print_argv.py", "--foo", "1", "--summary", "theirs.json",
                      options=("--quiet",))
    assert run.proc.returncode == 0, describe(run)
    argv_lines = [ln for ln in run.proc.stdout.splitlines() if ln.startswith("ARGV=")]
    assert len(argv_lines) == 1, describe(run)
    assert json.loads(argv_lines[0][len("ARGV="):]) == ["--foo", "1", "--summary",
                                                        "theirs.json"]
    assert run.summary_path.exists()  # our --summary, given before the program
    assert not (tmp_path / "theirs.json").exists()
    assert "acl-lab:" not in run.proc.stderr  # our --quiet was honoured


def test_program_without_arguments_sees_empty_argv(tmp_path: Path) -> None:
    """With nothing after the program, its ``sys.argv[1:]`` is empty."""
    run = acl_lab_run(tmp_path, "print_argv.py")
    assert run.proc.returncode == 0, describe(run)
    assert "ARGV=[]" in run.proc.stdout.splitlines()


# --------------------------------------------------------------------------- (f) stuck threads
@pytest.mark.parametrize("args", [(), ("--stubborn",)], ids=["plain", "stubborn"])
def test_thread_blocked_forever_does_not_hang_run(tmp_path: Path, args: tuple[str, ...]) -> None:
    """A non-daemon thread left in process_report(-1) does not keep ``acl-lab run`` alive."""
    run = acl_lab_run(tmp_path, "stuck_report_thread.py", *args)
    assert run.seconds < TIMEOUT
    assert "main done" in run.proc.stdout, describe(run)
    summary = run.summary
    check_summary_schema(summary)
    assert summary["exit_code"] == run.proc.returncode
    assert run.trace_path.exists()


def test_export_writes_chrome_json(tmp_path: Path) -> None:
    """``acl-lab export T --chrome OUT`` turns a saved trace into Chrome Trace Event JSON, and
    a bad trace file gives exit 2 with a message instead of a traceback."""
    done = acl_lab_run(tmp_path, "two_stream_event_75.py")
    assert done.proc.returncode == 0, done.proc.stderr
    out = tmp_path / "out.json"
    cmd = [sys.executable, "-m", "acl_lab.cli", "export", str(done.trace_path), "--chrome",
           str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    events = json.loads(out.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" and e.get("cat") == "task" for e in events)
    bad = tmp_path / "bad.acltrace"
    bad.write_text("not json")
    proc = subprocess.run([*cmd[:4], str(bad), "--chrome", str(out)], capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and "not valid JSON" in proc.stderr


# --------------------------------------------------------------------------- (g) --report
@pytest.mark.parametrize("program", ["two_stream_event_75.py", "deadlock_reset_event.py"])
def test_report_option_writes_an_offline_page(tmp_path: Path, program: str) -> None:
    """``--report FILE`` writes the HTML report after the run, also when the program
    deadlocked (nonzero exit): plotly.js embedded once, no script from the network."""
    report = tmp_path / "report.html"
    run = acl_lab_run(tmp_path, program, options=("--report", str(report)))
    assert (run.proc.returncode == 0) == (program == "two_stream_event_75.py"), describe(run)
    assert run.summary["exit_code"] == run.proc.returncode
    assert report.exists() and run.trace_path.exists(), describe(run)
    page = report.read_text(encoding="utf-8")
    assert page.count("plotly.js v") == 1
    # every script is inline (the bundle's own strings name CDNs for maps; none is loaded)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I)
    assert "Plotly.newPlot(" in page
    if program == "deadlock_reset_event.py":
        assert 'data-view="wait_graph"' in page and 'data-kind="deadlock"' in page
    else:
        assert "No findings" in page
    assert f"wrote report {report}" in run.proc.stderr
