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


def _grade(fn: Any, seed: int = 7, part: str = "10.1") -> Report:
    ex = get_exercise(part)
    return grade_run(ex, run_exercise(ex, fn, seed=seed))


def _passed(report: Report) -> dict[str, bool]:
    return {r.item.id: r.passed for r in report.results}


def _variant(old: str, new: str, entry: str = "ordered_copy") -> Any:
    """The solution's ``entry`` with ``old`` replaced by ``new`` (once)."""
    doc = json.loads(SOLUTION_NB.read_text())
    (src,) = ["".join(c["source"]) for c in doc["cells"]
              if "learner" in c.get("metadata", {}).get("tags", [])
              and f"def {entry}(" in "".join(c["source"])]
    assert src.count(old) == 1
    ns = learner_namespace(SOLUTION_NB)
    exec(compile(src.replace(old, new), "variant", "exec"), ns)
    return ns[entry]


PARTS = (("10.1", "ordered_copy"), ("10.2", "round_trip_in_threads"))


@pytest.mark.parametrize(("part", "entry"), PARTS)
def test_solution_passes_every_item_within_budget(part: str, entry: str) -> None:
    report = _grade(learner_namespace(SOLUTION_NB)[entry], part=part)
    assert report.score == report.total, report.text()


@pytest.mark.parametrize(("part", "entry"), PARTS)
def test_unchanged_starter_scores_nothing(part: str, entry: str) -> None:
    report = _grade(learner_namespace(EXERCISE_NB)[entry], part=part)
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


CREATE = ("        ctx, ret = acl.rt.create_context(0)          # current in this thread from "
          "now on\n        check_ret(\"acl.rt.create_context\", ret)\n")


# the failing workers raise in their threads (the learner would see it too)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(("old", "new", "fails"), [
    # the worker forgets its context: its malloc fails with 107002
    (CREATE, "", {"own_context", "no_context_findings"}),
    # one shared context made by the main thread, not one per worker
    ("    results = [None] * len(chunks)\n",
     "    results = [None] * len(chunks)\n    shared, _ = acl.rt.create_context(0)\n",
     {"own_context"}),
], ids=["no_context", "main_thread_context"])
def test_context_puzzle_wrong_answers_fail_their_item(old: str, new: str,
                                                      fails: set[str]) -> None:
    report = _grade(_variant(old, new, "round_trip_in_threads"), part="10.2")
    failed = {k for k, ok in _passed(report).items() if not ok}
    assert fails <= failed, report.text()
    assert report.score < report.total
