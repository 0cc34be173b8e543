"""``Item.counts_with``: what the starter already does right earns points only with the lesson.

An item that passes while none of the items it counts with passes keeps its status, scores 0
and says why; once one of them passes it scores in full. An item that fails keeps its own
reason either way.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from acl_lab.grading.report import Report, grade_run
from acl_lab.grading.rubric import Exercise, Item, Run, Verdict, register
from acl_lab.grading.runner import run_exercise


def _flag(name: str) -> Callable[[Run], Verdict]:
    def check(run: Run) -> Verdict:
        ok = bool(run.result[name])
        return ok, f"{name} is {'on' if ok else 'off'}"
    return check


EXERCISE = Exercise(
    "98.1", "counts_with demo", "fn", needs_device=False, items=(
        Item("lesson", "the lesson", 3, _flag("lesson"), "learn it"),
        Item("other_lesson", "another way to show it", 2, _flag("other"),
             "or learn this"),
        Item("kept", "what the starter had", 2, _flag("kept"), "keep it",
             counts_with=("lesson", "other_lesson")),
    ))


def _grade(**flags: bool) -> Report:
    result = {"lesson": False, "other": False, "kept": False} | flags
    return grade_run(EXERCISE, run_exercise(EXERCISE, lambda: result, seed=1))


def test_passed_guard_scores_nothing_without_the_lesson() -> None:
    report = _grade(kept=True)
    kept = report.result("kept")
    assert kept.passed and kept.held and kept.points_awarded == 0
    assert kept.reason.startswith("kept is on. Its 2 points count once 'lesson' or "
                                  "'other_lesson' passes")
    assert report.score == 0 and report.total == 7
    assert "(0/2)" in report.text()


@pytest.mark.parametrize("lesson", ["lesson", "other"])
def test_guard_scores_once_any_lesson_item_passes(lesson: str) -> None:
    report = _grade(kept=True, **{lesson: True})
    kept = report.result("kept")
    assert kept.passed and not kept.held and kept.points_awarded == 2
    assert kept.reason == "kept is on"
    assert report.score == 2 + (3 if lesson == "lesson" else 2)


def test_failed_guard_keeps_its_own_reason() -> None:
    report = _grade(lesson=True)
    kept = report.result("kept")
    assert not kept.passed and not kept.held and kept.reason == "kept is off"
    assert report.score == 3


def test_register_rejects_unknown_or_self_references() -> None:
    check = _flag("kept")
    for bad in (("missing",), ("kept",)):
        with pytest.raises(ValueError, match="counts with unknown items"):
            register(Exercise("98.2", "t", "fn", needs_device=False, items=(
                Item("kept", "d", 1, check, "h", counts_with=bad),
            )))


def test_register_rejects_a_hidden_item_counting_with_another_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A hidden run is judged apart from the visible rubric: a hidden item that counts with
    a visible item (or an unknown one) would be held at 0 points forever, so it is refused;
    one counting with an item of its own run is accepted."""
    from acl_lab.grading import rubric
    from acl_lab.grading.rubric import Hidden

    # the accepted demo must not stay in the registry the course's exercises live in
    monkeypatch.setattr(rubric, "_EXERCISES", dict(rubric._EXERCISES))
    check = _flag("kept")

    def exercise(counts_with: tuple[str, ...]) -> Exercise:
        return Exercise("98.3", "t", "fn", needs_device=False, items=(
            Item("lesson", "d", 1, check, "h"),
        ), hidden=(Hidden("other", "other sizes", lambda seed: (), (
            Item("h_lesson", "d", 1, check, "h"),
            Item("h_kept", "d", 1, check, "h", counts_with=counts_with),
        )),))

    for bad in (("lesson",), ("missing",), ("h_kept",)):
        with pytest.raises(ValueError, match="counts with unknown items"):
            register(exercise(bad))
    assert register(exercise(("h_lesson",))).hidden[0].items[1].counts_with == ("h_lesson",)
