"""Grader integrity: submissions that cheat or break the grading process score 0 for what
they affect, with a reason naming the cause, and the honest learner graded in the same
``acl-lab grade`` run still gets full points.

One grading run (module fixture) holds every case; each learner submits the honest
solution plus one cell or function that misbehaves, so only the misbehaviour can explain a
lost point.
"""

from __future__ import annotations

import re

import pytest

from .submissions.builders import (
    IMPORTS,
    ROUND_TRIP,
    SCALE,
    GradeRun,
    honest_cells,
    run_grade,
    write_notebook,
)
from .submissions.demo_rubric import round_trip_args

TIMEOUT_S = 20
#: make test runs the grader tests one after another (the browser tests run beside them), so
#: two whole acl-lab grade runs never share the machine; the hang guard covers a module
#: fixture's grading run
pytestmark = pytest.mark.timeout(900)
MEMORY_MB = 1500

#: The answer for seed 0, written into the notebook: right only if the grader used seed 0.
HARD_CODED = (
    "def round_trip(x):\n"
    f"    return np.array({round_trip_args(0)[0].tolist()!r}, dtype=np.float32)\n")

PATCH_GRADE_RUN = """
import acl_lab.grading.report as report
report.grade_run = lambda ex, run: None
"""

PATCH_RUBRIC = """
from acl_lab.grading import get_exercise
for item in get_exercise("90.1").items:
    object.__setattr__(item, "check", lambda run: (True, "looks fine"))
"""

PATCH_SESSION = """
from acl_lab.runtime import alloc
_real_free = alloc.free
def _free(*args, **kwargs):
    return _real_free(*args, **kwargs)
alloc.free = _free
"""

READ_SOLUTIONS = """
import os
root = os.path.join(os.path.dirname(acl_lab.__file__), os.pardir, "solutions")
peek = open(os.path.join(root, "README.md")).read()
"""

LIST_SOLUTIONS_ENV = """
import os
peek = sorted(os.listdir(os.environ["ACL_LAB_SOLUTIONS_DIR"].split(os.pathsep)[-1]))
"""

# Each case: the learner's cells, the exercises that must score 0, the text the reason of
# each of their items must contain. Every learner solves both exercises otherwise.
CASES: dict[str, tuple[list[str], tuple[str, ...], str]] = {
    "hard_coded": ([IMPORTS, HARD_CODED, SCALE], ("90.1",), "not the expected one"),
    "patch_grade_run": ([*honest_cells(), PATCH_GRADE_RUN], ("90.1", "90.2"),
                        "submission modified acl_lab: acl_lab.grading.report.grade_run"),
    "patch_rubric": ([*honest_cells(), PATCH_RUBRIC], ("90.1", "90.2"),
                     "submission modified acl_lab: the rubric of exercise 90.1"),
    "patch_session": ([*honest_cells(), PATCH_SESSION], ("90.1", "90.2"),
                      "submission modified acl_lab: acl_lab.runtime.alloc.free"),
    "read_solutions": ([*honest_cells(), READ_SOLUTIONS], ("90.1", "90.2"),
                       "submission accessed the solutions folder: open"),
    "list_solutions_env": ([*honest_cells(), LIST_SOLUTIONS_ENV], ("90.1", "90.2"),
                           "submission accessed the solutions folder: os.listdir"),
    "infinite_loop": ([*honest_cells(), "while True:\n    pass\n"], ("90.1", "90.2"),
                      f"time limit of {TIMEOUT_S} s exceeded while running the notebook's "
                      "cells"),
    "memory_hog": ([*honest_cells(), "x = []\nwhile True:\n    x.append(bytearray(10**7))\n"],
                   ("90.1", "90.2"), f"memory limit of {MEMORY_MB} MiB exceeded"),
    "exit_in_cell": ([*honest_cells(), "import os\nos._exit(0)\n"], ("90.1", "90.2"),
                     "the notebook ended the grading process (exit code 0) while running "
                     "the notebook's cells"),
    "exit_in_scale": ([IMPORTS, ROUND_TRIP, "import os\ndef scale(x, k):\n    os._exit(3)\n"],
                      ("90.2",), "the notebook ended the grading process (exit code 3) before "
                                 "exercise 90.2 finished"),
    "segfault": ([*honest_cells(), "import ctypes\nctypes.string_at(0)\n"], ("90.1", "90.2"),
                 "killed by signal SIGSEGV"),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> GradeRun:
    """Every case and one honest learner, in one ``acl-lab grade`` run."""
    root = tmp_path_factory.mktemp("integrity")
    subs = root / "submitted"
    write_notebook(subs / "honest" / "demo.ipynb", honest_cells())
    for learner, (cells, _, _) in CASES.items():
        write_notebook(subs / learner / "demo.ipynb", cells)
    fake_solutions = root / "instructor_solutions"
    fake_solutions.mkdir()
    (fake_solutions / "demo.ipynb").write_text("{}", encoding="utf-8")
    return run_grade(subs, root / "out", "--timeout", str(TIMEOUT_S), "--memory-mb",
                     str(MEMORY_MB), "--jobs", "2", "--no-figures", timeout=600,
                     extra_env={"ACL_LAB_SOLUTIONS_DIR": str(fake_solutions)})


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_grading_completes(graded: GradeRun) -> None:
    """Every learner is in the CSV and has a page; the run as a whole succeeded."""
    assert graded.proc.returncode == 0, graded.proc.stderr
    assert {r["learner"] for r in graded.rows()} == {"honest", *CASES}
    assert all((graded.out / f"{name}.html").is_file() for name in ("honest", *CASES))


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_honest_learner_graded_correctly(graded: GradeRun) -> None:
    """The honest learner, graded beside all the others, gets every point."""
    rows = graded.learner_rows("honest")
    assert len(rows) == 4 and all(r["passed"] == "true" for r in rows), rows
    assert graded.points("honest") == (5, 5)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
@pytest.mark.parametrize("learner", sorted(CASES))
def test_case_scores_zero_with_the_cause(graded: GradeRun, learner: str) -> None:
    """The affected exercises score 0 on their ``correct`` item (on every item, for a
    violation or a dead process) with the cause in the reason; the others are untouched."""
    _, affected, cause = CASES[learner]
    for ex in ("90.1", "90.2"):
        rows = graded.learner_rows(learner, ex)
        assert rows, f"no rows for {learner} {ex}"
        if ex not in affected:
            assert all(r["passed"] == "true" for r in rows), rows
            continue
        hit = [r for r in rows if r["item"] == "correct"] if learner == "hard_coded" else rows
        assert all(r["points"] == "0" and cause in r["reason"] for r in hit), hit
    assert cause.split(":")[0] in graded.html(learner).replace("&#x27;", "'")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_parent_draws_the_seeds(graded: GradeRun) -> None:
    """Each exercise run gets its own seed from the parent (shown on the page), not the one
    a hard-coded answer assumed."""
    seeds = {int(s) for s in re.findall(r'data-seed="(\d+)"', graded.html("honest"))}
    assert len(seeds) == 2 and 0 not in seeds
