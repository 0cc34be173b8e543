"""``acl-lab run --explore N`` and ``--seed S``: a schedule-dependent result is reported with
the seeds that give each outcome, and a seed replays its schedule exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acl_lab.tracer.trace import Trace
from tests.e2e.test_cli_run import PROGRAMS

pytestmark = pytest.mark.timeout(600)
PROGRAM = str(PROGRAMS / "thread_finish_order.py")


def acl_lab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m acl_lab ARGS`` in ``cwd``."""
    return subprocess.run([sys.executable, "-m", "acl_lab", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=500, check=False)


def test_explore_reports_each_outcome_with_its_seeds_and_a_seed_replays_it(
        tmp_path: Path) -> None:
    """Eight schedules of two threads racing to finish: two outcomes (exit 1), every seed in
    exactly one of them, a replay line naming a seed of the minority; running that seed
    again twice gives its outcome both times, with traces equal table for table."""
    summary = tmp_path / "explore.json"
    p = acl_lab("run", "--explore", "8", "--summary", str(summary), PROGRAM, cwd=tmp_path)
    assert p.returncode == 1, p.stderr  # the outcomes differ
    doc = json.loads(summary.read_text(encoding="utf-8"))
    assert doc["seeds"] == list(range(8)) and doc["differs"] is True
    outcomes = doc["outcomes"]
    assert len(outcomes) == 2
    assert sorted(s for o in outcomes for s in o["seeds"]) == list(range(8))
    assert "2 different outcomes" in p.stderr
    replay = [line for line in p.stderr.splitlines() if "replay seed" in line]
    assert len(replay) == 1
    seed = int(replay[0].split("replay seed ")[1].split(":")[0])
    assert seed in outcomes[1]["seeds"] and "--seed" in replay[0]

    printed = []
    traces = []
    for k in range(2):
        trace = tmp_path / f"replay{k}.acltrace"
        r = acl_lab("run", "--quiet", "--seed", str(seed), "--trace", str(trace),
                    "--summary", str(tmp_path / f"s{k}.json"), PROGRAM, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        printed.append(r.stdout)
        traces.append(Trace.load(trace))
        doc = json.loads((tmp_path / f"s{k}.json").read_text(encoding="utf-8"))
        assert doc["schedule"]["seed"] == seed and doc["schedule"]["threads"] == 3
    assert printed[0] == printed[1]
    a, b = traces
    assert a.strings == b.strings
    for name, table in a.tables.items():
        for col in table:
            assert (table[col] == b.tables[name][col]).all(), (name, col)
    # the plain schedule gives the other outcome
    plain = acl_lab("run", "--quiet", "--summary", str(tmp_path / "p.json"), PROGRAM,
                    cwd=tmp_path)
    assert plain.stdout != printed[0] and plain.stdout.startswith("order ")


def test_explore_refuses_a_seed_and_nonsense(tmp_path: Path) -> None:
    """--explore with --seed, or fewer than one schedule: exit 2 with one line."""
    for args in (["--explore", "4", "--seed", "1"], ["--explore", "0"]):
        p = acl_lab("run", *args, PROGRAM, cwd=tmp_path)
        assert p.returncode == 2 and "--explore" in p.stderr, (args, p.stderr)
