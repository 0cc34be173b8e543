"""``acl-lab run`` of a program that profiles with acl.prof and logs with acl.app_log."""

from __future__ import annotations

import json
from pathlib import Path

from acl_lab import zoo
from acl_lab.tracer.trace import Trace

from .test_cli_run import acl_lab_run


def test_profiling_program_writes_a_perfetto_profile(tmp_path: Path) -> None:
    """The program runs unmodified: app_log at import, a profiled execution whose profile
    opens as Chrome trace JSON (named in stderr and in the trace), and per-layer op records
    from a subscription read by a thread."""
    result = tmp_path / "prof_out"
    run = acl_lab_run(tmp_path, "profile_run.py", zoo.path("lenet5"), str(result))
    assert run.proc.returncode == 0, run.proc.stderr
    (profile,) = sorted(result.glob("PROF_*/mindstudio_profiler_output/msprof_*.json"))
    assert str(profile) in run.proc.stderr
    doc = json.loads(profile.read_text(encoding="utf-8"))
    slices = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    assert any(e["name"].startswith("acl.mdl.execute") or "model" in e["name"]
               for e in slices), sorted({e["name"] for e in slices})
    assert len(doc["otherData"]["acl_prof"]["intervals_ns"]) == 1
    ops = [line for line in run.proc.stdout.splitlines() if line.startswith("op ")]
    assert len(ops) == len(zoo.build("lenet5").nodes) > 0
    trace = Trace.load(run.trace_path)
    kinds = {trace.string(int(trace.diags["kind"][j])) for j in range(trace.diags.rows)}
    assert {"app_log", "profile"} <= kinds
    # the reader waited for the records in the schedule and saw end of file at unsubscribe
    assert not {"schedule_left_control", "deadlock"} & kinds
    assert "os.read" in {trace.call_name(i) for i in range(trace.calls.rows)}
    assert not [f for f in run.summary["findings"] if f["severity"] == "error"]
