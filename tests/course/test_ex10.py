"""Exercise 10 (puzzles): budgets are judged from the trace; wrong answers fail their items.

The starter and the solution come from the notebooks (``learner_namespace``); the wrong
answers are the solution with one line changed (no event, a host wait instead of the event,
two events), so each fails the item about its own mistake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acl_lab.grading import Report, get_exercise, grade_run, learner_namespace, run_exercise

REPO = Path(__file__).resolve().parents[2]
EXERCISE_NB = REPO / "exercises" / "10_puzzles.ipynb"
SOLUTION_NB = REPO / "solutions" / "10_puzzles.ipynb"


def _grade(fn: Any, seed: int = 7) -> Report:
    ex = get_exercise("10.1")
    return grade_run(ex, run_exercise(ex, fn, seed=seed))


def _passed(report: Report) -> dict[str, bool]:
    return {r.item.id: r.passed for r in report.results}


def _variant(old: str, new: str) -> Any:
    """The solution's ordered_copy with ``old`` replaced by ``new`` (once)."""
    doc = json.loads(SOLUTION_NB.read_text())
    (src,) = ["".join(c["source"]) for c in doc["cells"]
              if "learner" in c.get("metadata", {}).get("tags", [])]
    assert src.count(old) == 1
    ns = learner_namespace(SOLUTION_NB)
    exec(compile(src.replace(old, new), "variant", "exec"), ns)
    return ns["ordered_copy"]


def test_solution_passes_every_item_within_budget() -> None:
    report = _grade(learner_namespace(SOLUTION_NB)["ordered_copy"])
    assert report.score == report.total, report.text()


def test_unchanged_starter_scores_nothing() -> None:
    report = _grade(learner_namespace(EXERCISE_NB)["ordered_copy"])
    assert report.score <= 0.15 * report.total and report.score == 0


WAIT = "    check_ret(\"acl.rt.stream_wait_event\", acl.rt.stream_wait_event(s2, done))\n"
RECORD = ("    check_ret(\"acl.rt.record_event\", acl.rt.record_event(done, s1))      "
          "# A is written\n")


@pytest.mark.parametrize(("old", "new", "fails"), [
    (WAIT, "", {"no_race", "one_event"}),                               # forgot the wait
    (RECORD + WAIT, "    check_ret(\"sync\", acl.rt.synchronize_stream(s1))\n",
     {"no_host_wait"}),                                                 # host wait instead
    ("    done, ret = acl.rt.create_event()\n",
     "    done, ret = acl.rt.create_event()\n    spare, _ = acl.rt.create_event()\n",
     {"one_event"}),                                                    # over the budget
])
def test_wrong_answers_fail_the_item_about_their_mistake(old: str, new: str,
                                                          fails: set[str]) -> None:
    report = _grade(_variant(old, new))
    failed = {k for k, ok in _passed(report).items() if not ok}
    assert fails <= failed, report.text()
    assert report.score < report.total


def test_returning_x_itself_scores_nothing() -> None:
    assert _grade(lambda x: x.copy()).score == 0
