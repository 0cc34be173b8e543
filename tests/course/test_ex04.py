"""Exercise 04 (the four buffer pitfalls): starters fail for the right reason, solutions pass.

The functions come from the notebooks themselves (``learner_namespace`` executes every cell
but the ``check`` ones), so these tests grade exactly what a learner starts from and what
``solutions/`` holds. Each run uses its own seed; the expected answers are recomputed by the
rubric from that seed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from acl_lab.grading import Report, get_exercise, grade_run, learner_namespace, run_exercise
from acl_lab.grading.exercises import ex04
from acl_lab.grading.rubric import VIEWS

REPO = Path(__file__).resolve().parents[2]
EXERCISE_NB = REPO / "exercises" / "04_buffer_pitfalls.ipynb"
SOLUTION_NB = REPO / "solutions" / "04_buffer_pitfalls.ipynb"
PARTS = ("04.1", "04.2", "04.3", "04.4")
SETUP = ("import acl_lab\n"
         "acl_lab.install()   # on a real Ascend machine delete this line: `import acl` is "
         "then pyACL\n"
         "import acl\n"
         "from acl_lab.grading import check")

#: Per part: the items the starter must fail, each with text its reason must contain.
STARTER_FAILS: dict[str, dict[str, str]] = {
    "04.1": {"correct": "first 3136 bytes of your float64 array",
             "no_size_mismatch": "input 0 buffer holds 6272 bytes, the model reads 3136"},
    "04.2": {"no_leak": "freed on the happy path only"},
    "04.3": {"workers_ok": "107002",
             "no_context_not_set": "context bound in the main thread instead of the worker",
             "correct": "is None"},
    "04.4": {"pinned": "pageable host memory",
             "aligned": "does not start on a 64-byte boundary"},
}


def _grade(part: str, fn: Any, seed: int) -> Report:
    ex = get_exercise(part)
    return grade_run(ex, run_exercise(ex, fn, seed=seed))


def _statuses(report: Report) -> dict[str, bool]:
    return {r.item.id: r.passed for r in report.results}


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text())["cells"]
    return cells


def _cell_source(path: Path, cell_id: str) -> str:
    (cell,) = [c for c in _cells(path) if c.get("id") == cell_id]
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else str(src)


def _variant(ns: dict[str, Any], cell_id: str, old: str, new: str) -> dict[str, Any]:
    """A copy of the namespace with learner cell ``cell_id`` re-run with ``old`` -> ``new``."""
    src = _cell_source(SOLUTION_NB, cell_id)
    assert old in src, f"{old!r} is not in cell {cell_id}"
    out = dict(ns)
    exec(compile(src.replace(old, new), f"variant-{cell_id}", "exec"), out)
    return out


@pytest.fixture(scope="module")
def starter() -> dict[str, Any]:
    """The exercise notebook's namespace (the buggy starters)."""
    ns = learner_namespace(EXERCISE_NB)
    assert ns["__cell_errors__"] == []
    return ns


@pytest.fixture(scope="module")
def solution() -> dict[str, Any]:
    """The solution notebook's namespace."""
    ns = learner_namespace(SOLUTION_NB)
    assert ns["__cell_errors__"] == []
    return ns


# ------------------------------------------------------------------------------ notebooks


@pytest.mark.parametrize("path", [EXERCISE_NB, SOLUTION_NB], ids=["exercise", "solution"])
def test_notebook_is_stored_clean_and_names_its_exercises(path: Path) -> None:
    """nbformat 4.5 with cell ids, no outputs, the standard first cell, one learner and one
    check cell per part, and the exercise ids in the metadata."""
    doc = json.loads(path.read_text())
    assert (doc["nbformat"], doc["nbformat_minor"]) == (4, 5)
    assert doc["metadata"]["kernelspec"]["name"] == "python3"
    assert doc["metadata"]["acl_lab"]["exercises"] == list(PARTS)
    code = [c for c in doc["cells"] if c["cell_type"] == "code"]
    assert all(c.get("id") for c in doc["cells"])
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert "".join(code[0]["source"]) == SETUP
    checks = [c for c in code if "check" in c["metadata"].get("tags", [])]
    learners = [c for c in code if "learner" in c["metadata"].get("tags", [])]
    assert len(learners) == len(PARTS)
    sources = ["".join(c["source"]) for c in checks]
    # one check cell per part, then one check_all() over them all (with the attempt log)
    assert sources[:-1] == [f'check("{p}", {get_exercise(p).entry})' for p in PARTS]
    assert "check_all()" in sources[-1] and "attempts()" in sources[-1]
    marked = ["# YOUR CODE HERE" in "".join(c["source"]) for c in learners]
    assert marked == [path == EXERCISE_NB] * len(PARTS)


def test_rubric_items_name_views_and_hints() -> None:
    """Every item has a view, a hint and positive points; the entries are the notebook's."""
    for part in PARTS:
        ex = get_exercise(part)
        assert ex.entry in _cell_source(EXERCISE_NB, f"part{part[-1]}-learner")
        for item in ex.items:
            assert item.view in VIEWS and item.hint and item.points > 0, (part, item.id)


# ------------------------------------------------------------------------------ starters


@pytest.mark.parametrize("seed", [3, 1234])
@pytest.mark.parametrize("part", PARTS)
def test_starter_fails_the_intended_items_for_the_intended_reason(
        starter: dict[str, Any], part: str, seed: int) -> None:
    """The starter runs without raising, fails exactly its pitfall's items, and each
    reason says what the trace shows."""
    report = _grade(part, starter[get_exercise(part).entry], seed)
    assert report.run.error is None, report.run.error
    expected = STARTER_FAILS[part]
    failed = {r.item.id for r in report.failed}
    assert failed == set(expected), report.text()
    for item_id, text in expected.items():
        assert text in report.result(item_id).reason, report.text()


def test_leak_reason_counts_the_failing_iterations(starter: dict[str, Any]) -> None:
    """04.2: the reason says how many of the 100 iterations freed, and which call failed."""
    seed = 77
    n_bad = sum(1 for e in ex04.expected_042(seed) if e is None)
    assert 10 <= n_bad <= 20
    reason = _grade("04.2", starter["classify_requests"], seed).result("no_leak").reason
    m = re.search(r"freed on (\d+) of (\d+) iterations", reason)
    assert m and (int(m.group(1)), int(m.group(2))) == (100 - n_bad, 100), reason
    assert "acl.rt.memcpy" in reason and "107000" in reason


# ------------------------------------------------------------------------------ solutions


@pytest.mark.parametrize("seed", [3, 1234, 99])
@pytest.mark.parametrize("part", PARTS)
def test_solution_passes_every_item(solution: dict[str, Any], part: str, seed: int) -> None:
    """The solution notebook's function passes the whole rubric, on several seeds."""
    report = _grade(part, solution[get_exercise(part).entry], seed)
    assert report.passed_all, report.text()
    assert report.run.findings == (), [f.kind for f in report.run.findings]


@pytest.mark.parametrize("part", PARTS)
def test_hard_coded_answer_fails_the_correctness_item(part: str) -> None:
    """The right answer for another seed, returned without running anything, is wrong."""
    answers: dict[str, Callable[[int], Any]] = {
        "04.1": ex04.expected_041, "04.2": lambda s: list(ex04.expected_042(s)),
        "04.3": lambda s: list(ex04.expected_043(s)), "04.4": ex04.expected_044}
    other = answers[part](5)

    def hard_coded(*args: Any) -> Any:
        return other

    report = _grade(part, hard_coded, seed=6)
    assert not report.result("correct").passed, report.text()
    assert not report.passed_all


# ------------------------------------------------------------------------------ wrong fixes


def test_worker_on_the_default_context_is_told_about_the_model_context(
        solution: dict[str, Any]) -> None:
    """04.3: set_device in the worker binds the default context, not the model's: 107004."""
    ns = _variant(solution, "part3-learner",
                  "acl.rt.set_context(context)     # the current context is per thread",
                  "acl.rt.set_device(0)  #")
    report = _grade("04.3", ns["classify_in_threads"], seed=8)
    assert "107004" in report.result("workers_ok").reason
    reason = report.result("no_context_not_set").reason
    assert "load, execute and unload must happen in the same context" in reason
    assert not report.result("correct").passed


def test_synchronous_copies_fail_the_async_item(starter: dict[str, Any]) -> None:
    """04.4: 'fixing' the findings by copying synchronously is caught by the async item
    (and the finding items do not pass on a trace without any async copy)."""
    ns = dict(starter)
    ns["copy"] = lambda dst, dmax, src, n, kind, stream: starter["acl"].rt.memcpy(
        dst, dmax, src, n, kind)
    src = _cell_source(EXERCISE_NB, "part4-learner").replace("acl.rt.memcpy_async(", "copy(")
    exec(compile(src, "variant-sync", "exec"), ns)
    report = _grade("04.4", ns["classify_batch_async"], seed=9)
    statuses = _statuses(report)
    assert not (statuses["async"] or statuses["pinned"] or statuses["aligned"]), report.text()
    assert "synchronous (acl.rt.memcpy" in report.result("async").reason
    assert "no acl.rt.memcpy_async" in report.result("pinned").reason


def test_avoiding_the_failing_calls_fails_the_error_path_item(
        solution: dict[str, Any]) -> None:
    """04.2: rejecting malformed requests before any ACL call leaks nothing, but the error
    path the exercise is about never runs, and the rubric says so."""
    ns = _variant(solution, "part2-learner",
                  "    in_size = acl.mdl.get_input_size_by_index(desc, 0)\n",
                  "    in_size = acl.mdl.get_input_size_by_index(desc, 0)\n"
                  "    if request.nbytes > in_size:\n"
                  "        return None\n")
    report = _grade("04.2", ns["classify_requests"], seed=10)
    statuses = _statuses(report)
    assert statuses == {"no_leak": True, "correct": True, "error_path": False}, report.text()
    assert "did not go through the error path" in report.result("error_path").reason


def test_expected_outputs_are_probabilities_of_the_seeded_inputs() -> None:
    """The rubric's expectations depend on the seed and are softmax outputs."""
    a, b = ex04.expected_041(1), ex04.expected_041(2)
    assert a.shape == (10,) and not np.allclose(a, b)
    assert np.isclose(a.sum(), 1.0, atol=1e-5) and (a >= 0).all()
    batch = ex04.expected_044(1)
    assert batch.shape == (8, 10) and np.allclose(batch.sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(("part", "item_id", "kind"), [
    ("04.1", "correct", "size_mismatch"),
    ("04.4", "aligned", "misaligned_host_buffer"),
])
def test_failed_item_attaches_the_view_that_shows_its_problem(
        starter: dict[str, Any], part: str, item_id: str, kind: str) -> None:
    """The starter's failed item draws a view with its problem on it: the timeline marks the
    finding the bug makes (the device memory map shows neither a dtype nor a host address)."""
    report = _grade(part, starter[get_exercise(part).entry], 5)
    assert not report.result(item_id).passed
    fig = report.figure(item_id)
    assert fig is not None
    marks = [t for t in fig.data if (t.meta or {}).get("role") == "finding"]
    assert any(f"{kind}</b>" in h for t in marks for h in t.hovertext), \
        f"{part} {item_id}: the attached view does not mark the {kind} finding"
