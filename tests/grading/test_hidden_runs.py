"""Hidden runs (otter-grader's hidden tests): only ``acl-lab grade`` makes them.

A submission fitted to the visible run (exercise 04.3 with its 4 workers written in, instead
of the ``n_workers`` it is given) passes every item of ``check()`` and fails the hidden run,
which uses a fresh seed the grader draws and another number of images and workers. The
notebook's ``check()`` never runs or lists hidden items; the CSV and the feedback page show
them after grading as ``hidden: ...`` with the reason.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from acl_lab.grading import check, get_exercise, learner_namespace
from acl_lab.grading.exercises import ex04
from acl_lab.grading.rubric import HIDDEN_MARK, Exercise, Hidden, Item, register

from .submissions.builders import GradeRun, run_grade

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "04_buffer_pitfalls.ipynb"
#: The solution's worker loop and thread list, and the same written for 4 workers.
FITS = (("for i in range(first, len(images), n_workers):",
         "for i in range(first, len(images), 4):"),
        ("for k in range(n_workers)]", "for k in range(4)]"))


def _fitted_notebook(dest: Path) -> Path:
    doc = json.loads((REPO / "solutions" / NOTEBOOK).read_text(encoding="utf-8"))
    edits = 0
    for cell in doc["cells"]:
        src = "".join(cell["source"])
        for old, new in FITS:
            if old in src:
                src = src.replace(old, new)
                edits += 1
        cell["source"] = src
    assert edits == len(FITS), "the solution's worker loop changed: update FITS"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(doc), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def fitted_ns(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = _fitted_notebook(tmp_path_factory.mktemp("fitted") / NOTEBOOK)
    ns = learner_namespace(path)
    assert ns["__cell_errors__"] == []
    return ns


def test_hidden_run_is_an_exercise_of_its_own() -> None:
    ex = get_exercise("04.3")
    (variant,) = ex.hidden_exercises()
    assert variant.id == f"04.3{HIDDEN_MARK}other_sizes"
    assert get_exercise(variant.id).id == variant.id
    assert [i.id for i in variant.items] == ["sizes_workers_ok", "sizes_correct"]
    assert ex.graded_points == ex.points + variant.points > ex.points
    # other sizes than the visible run, drawn from the seed
    _, images, workers = variant.make_args(5)
    _, vis_images, vis_workers = ex.make_args(5)
    assert (len(images), workers) != (len(vis_images), vis_workers)
    assert workers != ex04.N_WORKERS and len(images) != ex04.N_THREAD_IMAGES
    with pytest.raises(KeyError, match="no hidden run"):
        get_exercise("04.3~nothing")


def test_register_rejects_clashing_hidden_ids() -> None:
    item = Item("x", "x", 1, lambda run: (True, "ok"), "hint")
    with pytest.raises(ValueError, match="duplicate hidden"):
        register(Exercise("99.9", "t", "f", (item,), needs_device=False, hidden=(
            Hidden("h", "d", lambda seed: (), (item,)),)))
    with pytest.raises(ValueError, match="must not contain"):
        register(Exercise("99~9", "t", "f", (item,), needs_device=False))


def test_fitted_submission_passes_check(fitted_ns: dict[str, Any]) -> None:
    report = check("04.3", fitted_ns["classify_in_threads"], seed=17)
    assert report.passed_all, report.text()
    # the notebook never lists a hidden item
    text, page = report.text(), report.to_html()
    for item in get_exercise("04.3").hidden[0].items:
        assert item.id not in text and item.id not in page
    assert "hidden" not in text.lower()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> GradeRun:
    root = tmp_path_factory.mktemp("hidden")
    subs = root / "submitted"
    _fitted_notebook(subs / "fitted" / NOTEBOOK)
    (subs / "honest").mkdir(parents=True)
    shutil.copyfile(REPO / "solutions" / NOTEBOOK, subs / "honest" / NOTEBOOK)
    return run_grade(subs, root / "out", "--exercise", "04.3", "--no-figures",
                     "--timeout", "300", timeout=900)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_fitted_submission_fails_the_hidden_item_in_grade(graded: GradeRun) -> None:
    assert graded.proc.returncode == 0, graded.proc.stderr
    rows = {r["item"]: r for r in graded.learner_rows("fitted", "04.3")}
    visible = [i.id for i in get_exercise("04.3").items]
    assert all(rows[i]["passed"] == "true" for i in visible), rows
    hidden = rows["hidden: sizes_workers_ok"]
    assert hidden["passed"] == "false" and hidden["points"] == "0"
    assert hidden["reason"].startswith("hidden (")
    assert "4 threads other than the one that called acl.init" in hidden["reason"]
    assert "worker threads the function was given" in hidden["reason"]
    # its images are still classified right (4 threads cover every image)
    assert rows["hidden: sizes_correct"]["passed"] == "true"
    score, total = graded.points("fitted", "04.3")
    assert total == get_exercise("04.3").graded_points and score == total - 1
    page = graded.html("fitted")
    assert 'data-item="hidden: sizes_workers_ok" data-status="fail"' in page
    assert "Hidden runs" in page


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_honest_submission_passes_the_hidden_run(graded: GradeRun) -> None:
    rows = graded.learner_rows("honest", "04.3")
    assert [r["item"] for r in rows if r["item"].startswith("hidden: ")] == [
        "hidden: sizes_workers_ok", "hidden: sizes_correct"]
    assert all(r["passed"] == "true" for r in rows), rows
    assert graded.points("honest", "04.3") == (get_exercise("04.3").graded_points,) * 2
    page = graded.html("honest")
    assert 'data-item="hidden: sizes_correct" data-status="pass"' in page


def test_an_exercise_that_did_not_run_fails_its_hidden_items_too() -> None:
    from acl_lab.grading import grade

    ex = get_exercise("04.3")
    why = "the notebook defines no function named 'classify_in_threads'"
    eo = grade.ExerciseOutcome(ex, "04_buffer_pitfalls.ipynb", failure=why)
    rows = eo.rows("ada")
    assert [r.item for r in rows] == [i.id for i in ex.items] + [
        "hidden: sizes_workers_ok", "hidden: sizes_correct"]
    assert all(not r.passed and r.points == 0 for r in rows)
    assert rows[-1].reason == f"hidden ({ex.hidden[0].description}): {why}"
    assert sum(r.max_points for r in rows) == eo.total == ex.graded_points
    assert eo.score == 0
    page = grade.feedback_html(grade.LearnerOutcome("ada", exercises=[eo]),
                               include_figures=False)
    assert 'data-item="hidden: sizes_workers_ok" data-status="fail"' in page
    assert f"0/{ex.graded_points} points" in page
