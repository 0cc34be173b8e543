"""Exercise 08 (the capstone engine): the starter fails for the intended reasons, the solution
passes with margin, and common wrong answers get specific feedback.

The functions come from the notebooks themselves (``learner_namespace`` executes every cell but
the ``check`` one), so these tests grade exactly what a learner starts from and what
``solutions/`` holds. Wrong answers are the solution's learner cell with one edit, re-run in a
copy of the namespace. Expected logits are recomputed by the rubric from each run's seed.
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
from acl_lab.grading.exercises import ex08
from acl_lab.grading.rubric import VIEWS
from acl_lab.hostwork import preprocess_ns_of

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "08_capstone.ipynb"
LEARNER_ID = "run-engine-learner"
SETUP = ("import acl_lab\n"
         "acl_lab.install()   # on a real Ascend machine delete this line: `import acl` is "
         "then pyACL\n"
         "import acl\n"
         "from acl_lab.grading import check")
#: seeds of the graded runs: 11 draws the fewest pictures (10), 3 the most (14)
SEEDS = (3, 11, 99)

#: The items the starter must fail, each with text its reason must contain.
STARTER_FAILS = {
    "load_once": "the model was loaded {n} times for {n} pictures (acl.mdl.load_from_file at",
    "allocate_once": "memory was allocated or freed while the {n} pictures were being "
                     "processed",
    "latency": "µs per picture (target 210 µs)",
}


def _grade(fn: Any, seed: int) -> Report:
    ex = get_exercise("08")
    return grade_run(ex, run_exercise(ex, fn, seed=seed))


def _failed(report: Report) -> set[str]:
    return {r.item.id for r in report.failed}


def _n(seed: int) -> int:
    return len(ex08.make_args(seed)[1])


def _per_picture_us(report: Report) -> float:
    reason = report.result("latency").reason
    m = re.search(r"(\d+\.\d) µs per picture", reason)
    assert m, reason
    return float(m.group(1))


def _cells(folder: str) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads((REPO / folder / NOTEBOOK).read_text())["cells"]
    return cells


def _source(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else str(src)


def _learner_source(folder: str) -> str:
    (cell,) = [c for c in _cells(folder) if c.get("id") == LEARNER_ID]
    return _source(cell)


@pytest.fixture(scope="module")
def starter() -> dict[str, Any]:
    """The exercise notebook's namespace (the naive engine)."""
    ns = learner_namespace(REPO / "exercises" / NOTEBOOK)
    assert ns["__cell_errors__"] == [], ns["__cell_errors__"]
    return ns


@pytest.fixture(scope="module")
def solution() -> dict[str, Any]:
    """The solution notebook's namespace."""
    ns = learner_namespace(REPO / "solutions" / NOTEBOOK)
    assert ns["__cell_errors__"] == [], ns["__cell_errors__"]
    return ns


def _variant(ns: dict[str, Any], *edits: tuple[str, str]) -> Callable[..., Any]:
    """The solution's ``run_engine`` with each ``old`` -> ``new`` edit, run in a copy of
    ``ns``."""
    src = _learner_source("solutions")
    for old, new in edits:
        assert old in src, f"{old!r} is not in the solution"
        src = src.replace(old, new)
    out = dict(ns)
    exec(compile(src, "variant-08", "exec"), out)
    fn: Callable[..., Any] = out["run_engine"]
    return fn


# ------------------------------------------------------------------------------ notebooks


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
def test_notebook_is_stored_clean_and_names_its_exercise(folder: str) -> None:
    """nbformat 4.5 with cell ids, no outputs, the standard first cell, one learner cell and
    one check cell, the exercise id in the metadata; the marker only in the starter."""
    doc = json.loads((REPO / folder / NOTEBOOK).read_text())
    assert (doc["nbformat"], doc["nbformat_minor"]) == (4, 5)
    assert doc["metadata"]["kernelspec"]["name"] == "python3"
    assert doc["metadata"]["acl_lab"]["exercises"] == ["08"]
    code = [c for c in doc["cells"] if c["cell_type"] == "code"]
    assert all(c.get("id") for c in doc["cells"])
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert _source(code[0]) == SETUP
    checks = [c for c in code if "check" in c["metadata"].get("tags", [])]
    learners = [c for c in code if "learner" in c["metadata"].get("tags", [])]
    assert [_source(c) for c in checks] == ['check("08", run_engine)']
    assert [c["id"] for c in learners] == [LEARNER_ID]
    assert ("# YOUR CODE HERE" in _source(learners[0])) == (folder == "exercises")


def test_exercise_and_solution_differ_only_in_the_learner_cell() -> None:
    """Same cells, same ids, same text everywhere but the learner's code."""
    ex, sol = _cells("exercises"), _cells("solutions")
    assert [c["id"] for c in ex] == [c["id"] for c in sol]
    for a, b in zip(ex, sol, strict=True):
        if a["id"] != LEARNER_ID:
            assert _source(a) == _source(b), a["id"]


def test_notebook_states_the_rubrics_target() -> None:
    """The exercise's introduction quotes the latency target the rubric applies."""
    intro = _source(_cells("exercises")[0])
    assert f"**{ex08.TARGET_US:g} µs**" in intro
    latency = [i for i in get_exercise("08").items if i.id == "latency"]
    assert latency and f"{ex08.TARGET_US:g} µs" in latency[0].description


def test_rubric_items_name_views_and_hints() -> None:
    """Every item has a view, a hint and positive points; the seed decides the arguments."""
    ex = get_exercise("08")
    assert ex.entry == "run_engine" and ex.profile == "Ascend310P3"
    for item in ex.items:
        assert item.view in VIEWS and item.hint and item.points > 0, item.id
    a, b = ex.make_args(1), ex.make_args(2)
    assert a[0] == b[0] and a[0].endswith("tiny_resnet.om")
    assert a[1] != b[1], "the pictures do not depend on the seed"
    assert ex.make_args(1)[1] == a[1], "make_args is not deterministic"
    sizes = {_n(seed) for seed in range(20)}
    assert min(sizes) == ex08.MIN_PICTURES and max(sizes) == ex08.MAX_PICTURES


def test_the_starter_preprocess_matches_the_rubric_reference(starter: dict[str, Any]) -> None:
    """The notebook's preprocess() computes exactly the rubric's reference input, and
    declares its host work under the label the latency item counts."""
    import acl_lab

    jpeg = ex08.make_args(4)[1][0]
    session = acl_lab.new_session(profile="Ascend310P3")
    try:
        out = np.zeros((1, 3, 32, 32), dtype=np.float32)
        got = starter["preprocess"](jpeg, out=out)
        fresh = starter["preprocess"](jpeg)
        trace = session.finish()
    finally:
        session.close()
    assert got is out
    np.testing.assert_array_equal(out, ex08.reference_input(jpeg))
    np.testing.assert_array_equal(fresh, out)
    assert not len(trace.calls_named("acl_lab.host_work")), "no declared host time"
    calls = trace.calls_named("acl_lab.host_preprocess")
    args = [trace.call_args(int(c)) for c in calls]
    assert [a[:3] for a in args] == [[160, 120, 32]] * 2
    assert args[1][4] > args[0][4], "a fresh array should also pay its page faults"
    # the charge is the pixels' cost, and the call lasts exactly that long
    for c, a in zip(calls.tolist(), args, strict=True):
        want = preprocess_ns_of(160, 120, 32, bool(a[5]))
        assert a[4] == want == trace.calls["end_ns"][c] - trace.calls["start_ns"][c]


# ------------------------------------------------------------------------------ starter


@pytest.mark.parametrize("seed", [3, 11])
def test_starter_fails_the_intended_items_for_the_intended_reason(
        starter: dict[str, Any], seed: int) -> None:
    """The naive engine is correct and clean, and fails load_once, allocate_once and latency,
    each reason saying what the trace shows."""
    report = _grade(starter["run_engine"], seed)
    assert _failed(report) == set(STARTER_FAILS), report.text()
    n = _n(seed)
    for item_id, text in STARTER_FAILS.items():
        assert text.format(n=n) in report.result(item_id).reason, report.text()
    assert _per_picture_us(report) > 1.4 * ex08.TARGET_US
    assert "they overlapped for 0.0 µs" in report.result("latency").reason
    assert report.run.findings == ()


# ------------------------------------------------------------------------------ solution


@pytest.mark.parametrize("seed", SEEDS)
def test_solution_passes_every_item(solution: dict[str, Any], seed: int) -> None:
    """The solution notebook's engine passes the whole rubric with no finding at all."""
    report = _grade(solution["run_engine"], seed)
    assert report.passed_all, report.text()
    assert report.run.findings == (), [str(f) for f in report.run.findings]
    assert "one acl.mdl.load_from_file_with_mem served all" in \
        report.result("load_once").reason
    assert "reused 2 input buffer(s)" in report.result("allocate_once").reason


def test_solution_meets_the_target_with_margin(solution: dict[str, Any],
                                               starter: dict[str, Any]) -> None:
    """With the fewest pictures (pipeline fill counts most) the solution is well under the
    target, and the host's decoding overlaps most of the model's time."""
    seed = 11
    assert _n(seed) == ex08.MIN_PICTURES
    report = _grade(solution["run_engine"], seed)
    per = _per_picture_us(report)
    assert per <= 0.9 * ex08.TARGET_US, report.text()
    share = re.search(r"\((\d+)% of the model's time\)", report.result("latency").reason)
    assert share and int(share.group(1)) >= 80, report.text()
    naive = _per_picture_us(_grade(starter["run_engine"], seed))
    assert naive / per > 1.8


# ------------------------------------------------------------------------------ wrong answers


def test_hard_coded_answer_fails_the_correctness_item() -> None:
    """The right logits for another seed, returned without running anything, are wrong."""
    other = [v.reshape(1, 10) for v in ex08.expected(5)]

    def hard_coded(model_path: str, jpegs: list[bytes]) -> Any:
        return other[:len(jpegs)] + other[:max(0, len(jpegs) - len(other))]

    report = _grade(hard_coded, seed=6)
    assert not report.result("correct").passed, report.text()
    assert "the results are wrong" in report.result("latency").reason
    assert not report.passed_all


def test_answer_computed_on_the_host_fails_the_trace_items() -> None:
    """The right logits computed with numpy, without the device, score nothing: not the
    value check (no copy back delivered them), and the trace items say what never ran."""
    seed = 8

    def on_host(model_path: str, jpegs: list[bytes]) -> Any:
        return [v.reshape(1, 10) for v in ex08.expected(seed)]

    report = _grade(on_host, seed)
    assert report.score == 0, report.text()
    assert "no ACL call in the trace" in (report.gate or ""), report.text()
    assert "computed on the host" in report.result("correct").reason, report.text()
    assert "no model was loaded" in report.result("load_once").reason
    assert "no model execution succeeded" in report.result("allocate_once").reason
    assert "the results are wrong" in report.result("latency").reason


@pytest.mark.filterwarnings("ignore:numpy_to_ptr will be deprecated")
def test_async_engine_with_pageable_buffers_is_named(solution: dict[str, Any]) -> None:
    """Queued copies through numpy arrays instead of pinned memory: fast and right, but the
    no_findings item quotes the pageable async copies."""
    fn = _variant(solution, (
        '        ptr = create("acl.rt.malloc_host", acl.rt.malloc_host(nbytes))\n'
        "        self.pinned.append(ptr)\n"
        "        return ptr, acl.util.ptr_to_numpy(ptr, shape, NPY_FLOAT32)\n",
        "        view = np.zeros(shape, dtype=np.float32)\n"
        "        return acl.util.numpy_to_ptr(view), view\n"))
    report = _grade(fn, seed=4)
    assert _failed(report) == {"no_findings"}, report.text()
    reason = report.result("no_findings").reason
    assert "2 pageable_async_copy" in reason
    # the C name may stand beside the pyACL name: "acl.rt.memcpy_async (aclrtMemcpyAsync) at"
    assert re.search(r"acl\.rt\.memcpy_async (\(aclrtMemcpyAsync\) )?at variant-08:", reason)
    assert "copied from or to pageable host memory" in reason
    assert "Fix:" not in reason  # the finding's evidence, not its fix


def test_missing_event_wait_is_a_race(solution: dict[str, Any]) -> None:
    """Reused buffers but no stream_wait_event before the execution: the model may read its
    input before the upload wrote it; no_race names the two tasks."""
    fn = _variant(solution, (
        '            check_ret("acl.rt.stream_wait_event",\n'
        '                      acl.rt.stream_wait_event(self.compute, slot["uploaded"]))\n',
        ""))
    report = _grade(fn, seed=4)
    assert "no_race" in _failed(report), report.text()
    reason = report.result("no_race").reason
    assert "Data race (read-after-write)" in reason
    assert "acl.rt.memcpy_async" in reason and "acl.mdl.execute_async" in reason


def test_slot_reused_without_waiting_is_a_race(solution: dict[str, Any]) -> None:
    """Refilling a slot without waiting for its previous picture: the next upload may
    overwrite the input while the model still reads it (write-after-read)."""
    fn = _variant(solution, (
        "            if i >= n:                         # the slot's previous picture must be "
        "done\n                self._collect(slot, results)\n",
        '            if i >= n:\n                results.append(slot["y"].copy())\n'), (
        "        for i in range(max(0, len(jpegs) - n), len(jpegs)):\n"
        "            self._collect(self.slots[i % n], results)\n",
        '        check_ret("sync", acl.rt.synchronize_stream(self.compute))\n'
        "        for i in range(max(0, len(jpegs) - n), len(jpegs)):\n"
        '            results.append(self.slots[i % n]["y"].copy())\n'))
    report = _grade(fn, seed=4)
    assert "no_race" in _failed(report), report.text()
    assert "Data race (write-after-read)" in report.result("no_race").reason


def test_results_collected_out_of_order_are_named(solution: dict[str, Any]) -> None:
    """Collecting the last slots in reverse order swaps two pictures' logits; the reason says
    whose logits each result holds."""
    n = _n(4)
    fn = _variant(solution, ("        for i in range(max(0, len(jpegs) - n), len(jpegs)):",
                             "        for i in reversed(range(max(0, len(jpegs) - n), "
                             "len(jpegs))):"))
    report = _grade(fn, seed=4)
    reason = report.result("correct").reason
    assert not report.result("correct").passed, report.text()
    assert f"result {n - 2} holds the logits of picture {n - 1}" in reason
    assert f"result {n - 1} holds the logits of picture {n - 2}" in reason


def test_synchronous_engine_with_buffers_reused_misses_only_the_latency(
        solution: dict[str, Any]) -> None:
    """Everything allocated once and pinned, but waiting for every picture: correct and
    clean, and about the host's time plus the device's per picture."""
    fn = _variant(solution, ('def __init__(self, model_path, slots=2):',
                             'def __init__(self, model_path, slots=1):'))
    report = _grade(fn, seed=4)
    assert _failed(report) == {"latency"}, report.text()
    assert _per_picture_us(report) > 1.3 * ex08.TARGET_US
    assert "they overlapped for 0.0 µs" in report.result("latency").reason


def test_one_buffer_per_picture_fails_allocate_once(solution: dict[str, Any]) -> None:
    """Allocating a slot per picture up front keeps allocations out of the loop, but the
    executions read from one new buffer per picture."""
    fn = _variant(solution, ("    engine = Engine(model_path)",
                             "    engine = Engine(model_path, slots=len(jpegs))"))
    seed = 4
    report = _grade(fn, seed)
    assert _failed(report) == {"allocate_once"}, report.text()
    n = _n(seed)
    assert (f"the {n} model executions read their input from {n} different device buffers"
            in report.result("allocate_once").reason)


def test_one_stream_pipeline_without_events_passes(solution: dict[str, Any]) -> None:
    """The rubric asks for overlap, not for a number of streams: double buffering on one
    stream (stream order instead of events) passes too."""
    fn = _variant(solution,
                  ('self.upload = create("acl.rt.create_stream", acl.rt.create_stream())',
                   "self.upload = None"),
                  ('            check_ret("acl.rt.record_event", '
                   'acl.rt.record_event(slot["uploaded"], self.upload))\n'
                   '            check_ret("acl.rt.stream_wait_event",\n'
                   '                      acl.rt.stream_wait_event(self.compute, '
                   'slot["uploaded"]))\n', ""),
                  ("ACL_MEMCPY_HOST_TO_DEVICE, self.upload))",
                   "ACL_MEMCPY_HOST_TO_DEVICE, self.compute))"),
                  ("for stream in (self.upload, self.compute):", "for stream in (self.compute,):"))
    report = _grade(fn, seed=4)
    assert report.passed_all, report.text()


def test_fresh_arrays_cost_page_faults_but_meet_the_target(solution: dict[str, Any]) -> None:
    """Preprocessing into a new array and copying it into the pinned buffer pays the page
    faults of fresh memory on every picture: slower than the solution, still on target."""
    seed = 11
    fn = _variant(solution, ('preprocess(jpeg, out=slot["x"])',
                             'slot["x"][...] = preprocess(jpeg)'))
    report = _grade(fn, seed)
    assert report.passed_all, report.text()
    reference = _per_picture_us(_grade(solution["run_engine"], seed))
    assert reference < _per_picture_us(report) <= ex08.TARGET_US
