"""An unchanged starter scores at most 15% of every exercise; every solution scores 100%.

Points must come for the lesson, not for code the starter already has (issue: "practice like
the best learning tools"). Each released starter notebook (``exercises/``) and its solution
(``solutions/``) is run the way ``acl-lab grade``'s worker runs it (``learner_namespace``,
check cells skipped), and each exercise it declares is graded through the grader's own path
(``run_exercise`` then ``grade_run``), hidden runs included (``grade_hidden``), on a fixed
seed so a failure reproduces.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from acl_lab.grading import learner_namespace
from acl_lab.grading.notebook import notebook_exercises
from acl_lab.grading.report import grade_run
from acl_lab.grading.rubric import get_exercise
from acl_lab.grading.runner import run_exercise

REPO = Path(__file__).resolve().parents[2]
#: The most an unchanged starter may score, as a share of the exercise's points.
STARTER_SHARE = 0.15
SEED = 20261


def _cases() -> list[tuple[str, str]]:
    return [(nb.name, ex_id) for nb in sorted((REPO / "exercises").glob("*.ipynb"))
            for ex_id in notebook_exercises(nb)]


@cache
def _namespace(folder: str, name: str) -> dict[str, Any]:
    ns = learner_namespace(REPO / folder / name)
    assert ns["__cell_errors__"] == [], ns["__cell_errors__"]
    return ns


def _score(folder: str, name: str, ex_id: str) -> tuple[int, int, list[str]]:
    """Points scored, points available and the scoring items' reasons, over the visible run
    and every hidden run of the exercise."""
    ex = get_exercise(ex_id)
    fn = _namespace(folder, name)[ex.entry]
    reports = [grade_run(ex, run_exercise(ex, fn, seed=SEED))]
    for k, hidden in enumerate(ex.hidden_exercises()):
        reports.append(grade_run(hidden, run_exercise(hidden, fn, seed=SEED + 1 + k)))
    score = sum(r.score for r in reports)
    total = sum(r.total for r in reports)
    scoring = [f"{r.exercise.id} {x.item.id}: {x.reason}" for r in reports for x in r.results
               if x.points_awarded]
    return score, total, scoring


def test_every_exercise_notebook_is_covered() -> None:
    ids = [ex_id for _, ex_id in _cases()]
    assert {"04.1", "04.2", "04.3", "04.4", "05", "06.1", "06.2", "07.1", "08"} <= set(ids)


@pytest.mark.parametrize(("name", "ex_id"), _cases())
def test_unchanged_starter_scores_at_most_15_percent(name: str, ex_id: str) -> None:
    score, total, scoring = _score("exercises", name, ex_id)
    assert total > 0
    assert score <= STARTER_SHARE * total, (
        f"the starter of {ex_id} scores {score}/{total}: points for code it already has: "
        f"{scoring}")


@pytest.mark.parametrize(("name", "ex_id"), _cases())
def test_solution_scores_every_point(name: str, ex_id: str) -> None:
    score, total, scoring = _score("solutions", name, ex_id)
    assert score == total, f"the solution of {ex_id} scores {score}/{total}: {scoring}"
