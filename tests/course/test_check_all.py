"""check_all() grades a notebook's exercises at once; attempts() logs every check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acl_lab.grading import attempts, check, check_all, learner_namespace

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def starter() -> dict[str, Any]:
    ns = learner_namespace(REPO / "exercises" / "04_buffer_pitfalls.ipynb")
    assert ns["__cell_errors__"] == []
    return ns


@pytest.fixture(scope="module")
def solution() -> dict[str, Any]:
    ns = learner_namespace(REPO / "solutions" / "04_buffer_pitfalls.ipynb")
    assert ns["__cell_errors__"] == []
    return ns


def test_check_all_finds_the_notebooks_exercises_and_totals_them(
        starter: dict[str, Any], solution: dict[str, Any]) -> None:
    wrong = check_all(namespace=starter, seed=3)
    right = check_all(namespace=solution, seed=3)
    assert [r.exercise.id for r in right.reports] == ["04.1", "04.2", "04.3", "04.4"]
    assert right.missing == () and right.score == right.total > 0
    assert [r.exercise.id for r in wrong.reports] == ["04.1", "04.2", "04.3", "04.4"]
    assert wrong.total == right.total and wrong.score < wrong.total
    assert wrong.score == sum(r.score for r in wrong.reports)
    assert f"total: {wrong.score}/{wrong.total}" in wrong.text()
    assert "<table>" in wrong._repr_html_() and "04.4" in wrong._repr_html_()


def test_check_all_names_exercises_without_a_function(solution: dict[str, Any]) -> None:
    ns = {k: v for k, v in solution.items() if k != "classify"}
    got = check_all(["04.1", "04.2"], namespace=ns, seed=1)
    assert got.missing == ("04.1",) and [r.exercise.id for r in got.reports] == ["04.2"]
    assert "04.1" in got.text()


def test_attempt_log_records_every_check_in_order(starter: dict[str, Any],
                                                  solution: dict[str, Any]) -> None:
    before = len(attempts("04.2"))
    first = check("04.2", starter["classify_requests"], seed=11)
    second = check("04.2", solution["classify_requests"], seed=12)
    log = attempts("04.2")[before:]
    assert [(a.score, a.total, a.seed) for a in log] == [
        (first.score, first.total, 11), (second.score, second.total, 12)]
    assert log[0].failed and not log[1].failed
    assert log[0].when <= log[1].when
    assert attempts("04.9") == []


def test_export_zips_the_notebook_and_the_attempt_log(tmp_path: Path,
                                                      solution: dict[str, Any]) -> None:
    import json
    import zipfile

    from acl_lab.grading import export

    nb = tmp_path / "04_buffer_pitfalls.ipynb"
    nb.write_bytes((REPO / "solutions" / "04_buffer_pitfalls.ipynb").read_bytes())
    check("04.2", solution["classify_requests"], seed=21)
    out = export(nb)
    assert out == tmp_path / "04_buffer_pitfalls_submission.zip"
    with zipfile.ZipFile(out) as z:
        assert sorted(z.namelist()) == ["04_buffer_pitfalls.ipynb", "attempts.json"]
        assert z.read("04_buffer_pitfalls.ipynb") == nb.read_bytes()
        log = json.loads(z.read("attempts.json"))
    assert log[-1]["exercise"] == "04.2" and log[-1]["seed"] == 21
    # every field of the attempt log, as attempts() gives it
    from dataclasses import asdict

    assert log[-1] == json.loads(json.dumps(asdict(attempts("04.2")[-1])))
    assert log[-1]["score"] == log[-1]["total"]
    with pytest.raises(FileNotFoundError):
        export(tmp_path / "missing.ipynb")
    with pytest.raises(ValueError, match="pass the notebook"):
        export(None)
