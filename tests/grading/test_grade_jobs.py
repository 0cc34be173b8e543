"""``acl-lab grade`` grades notebooks on every core by default (``--jobs``).

The default is ``os.cpu_count()``, capped by the number of notebooks; ``--jobs 1`` grades one
at a time. Concurrency is shown by markers, not by timing: each stand-in for a notebook's
grading writes its start marker and then waits for the other notebook's start marker, so
both can finish only when both ran at the same time.
"""

from __future__ import annotations

import argparse
import io
import threading
from pathlib import Path

import pytest

from acl_lab.grading import grade

from .submissions.builders import honest_cells, write_notebook

#: Hang guard for a marker that never appears (one at a time, the other never starts).
MARKER_WAIT_S = 60.0


def test_default_is_every_core_capped_by_the_notebooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grade.os, "cpu_count", lambda: 6)
    assert grade.worker_count(None, 10) == 6
    assert grade.worker_count(None, 4) == 4  # never more workers than notebooks
    assert grade.worker_count(None, 0) == 1
    assert grade.worker_count(1, 10) == 1 and grade.worker_count(3, 10) == 3
    monkeypatch.setattr(grade.os, "cpu_count", lambda: None)  # unknown: one at a time
    assert grade.worker_count(None, 10) == 1


def test_cli_default_jobs_is_none_and_one_still_parses() -> None:
    p = argparse.ArgumentParser()
    grade.add_arguments(p)
    assert p.parse_args(["subs", "-o", "out"]).jobs is None
    assert p.parse_args(["subs", "-o", "out", "--jobs", "1"]).jobs == 1
    assert grade.GradeOptions().jobs is None


def _two_learners(root: Path) -> None:
    for learner in ("ada", "bob"):
        write_notebook(root / learner / "demo.ipynb", honest_cells())


def _fake_grading(markers: Path, seen: dict[str, tuple[bool, bool]], wait_s: float) -> object:
    """A stand-in for ``grade_notebook``: its start marker, a wait (at most ``wait_s``) for the
    other notebook's start marker, then its end marker. ``seen[learner]`` records whether the
    other had started when this one ended, and whether this one ended first."""

    def fake(job: grade._Job, opts: grade.GradeOptions,
             solutions: list[str]) -> grade.NotebookOutcome:
        (markers / f"{job.learner}.start").touch()
        other = "bob" if job.learner == "ada" else "ada"
        pause = threading.Event()
        for _ in range(max(1, int(wait_s / 0.01))):
            if (markers / f"{other}.start").exists():
                break
            pause.wait(0.01)
        first = not (markers / f"{other}.end").exists()
        seen[job.learner] = ((markers / f"{other}.start").exists(), first)
        (markers / f"{job.learner}.end").touch()
        return grade.NotebookOutcome(job.learner, job.name)

    return fake


@pytest.mark.parametrize("jobs", [None, 1])
def test_two_notebooks_run_at_the_same_time_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int | None) -> None:
    monkeypatch.setenv("ACL_LAB_GRADING_EXTRA",
                       str(Path(__file__).parent / "submissions" / "demo_rubric.py"))
    from acl_lab.grading import worker

    worker.load_extra_rubrics()
    subs, markers = tmp_path / "subs", tmp_path / "markers"
    markers.mkdir()
    _two_learners(subs)
    seen: dict[str, tuple[bool, bool]] = {}
    monkeypatch.setattr(grade.os, "cpu_count", lambda: 2)
    # one at a time the first notebook's wait can only end by its guard: keep that short
    wait_s = MARKER_WAIT_S if jobs is None else 0.5
    monkeypatch.setattr(grade, "grade_notebook", _fake_grading(markers, seen, wait_s))
    opts = grade.GradeOptions(jobs=jobs, include_figures=False, release=None, sandbox=False)
    log = io.StringIO()
    grade.grade_submissions(subs, tmp_path / "out", opts, progress=log)
    assert sorted(seen) == ["ada", "bob"]
    # the notebook that ended first: had the other one started by then?
    first_saw_other = [saw for saw, first in seen.values() if first]
    assert first_saw_other, seen
    if jobs is None:
        # both start markers existed before either ended: the two ran at the same time
        assert all(first_saw_other), seen
        assert "2 at a time" in log.getvalue()
    else:
        # one at a time: the first ended before the second started
        assert not any(first_saw_other), seen
        assert "1 at a time" in log.getvalue()
