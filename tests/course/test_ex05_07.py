"""Exercises 05-07: starters fail for the intended reason, solutions pass, wrong fixes are named.

The functions come from the notebooks themselves (``learner_namespace`` executes every cell but
the ``check`` ones), so these tests grade exactly what a learner starts from and what
``solutions/`` holds. Wrong answers are the solution's learner cell with one edit, re-run in
a copy of the namespace. Expected answers are recomputed by the rubric from each run's seed.
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
from acl_lab.grading.exercises import ex05, ex06, ex07
from acl_lab.grading.rubric import VIEWS

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = {"05": "05_multi_context.ipynb", "06": "06_async_pipeline.ipynb",
             "07": "07_deadlocks_races.ipynb"}
PARTS = {"05": ("05",), "06": ("06.1", "06.2"), "07": ("07.1", "07.2", "07.3")}
ALL_PARTS = tuple(p for parts in PARTS.values() for p in parts)
SETUP = ("import acl_lab\n"
         "acl_lab.install()   # on a real Ascend machine delete this line: `import acl` is "
         "then pyACL\n"
         "import acl\n"
         "from acl_lab.grading import check")

#: Per part: the items the starter must fail, each with text its reason must contain.
STARTER_FAILS: dict[str, dict[str, str]] = {
    "05": {"correct": "ret=107002",
           "contexts": "the context was bound in the main thread instead of the worker",
           "threads": "no thread queued an Add"},
    "06.1": {"correct": "all zeros",
             "ordered": "nothing orders the copy back after the Add",
             "no_race": "Data race (read-after-write)"},
    "06.2": {"throughput": "1.00x its throughput (target 2x)",
             "overlap": "no copy ran while an Add computed"},
    "07.1": {"completes": "DeadlockError",
             "correct": "did not return a result",
             "no_deadlock": "can never call process_report",
             "report_thread": "subscribed thread 0 (learner) itself"},
    "07.2": {"completes": "DeadlockError",
             "correct": "did not return a result",
             "no_deadlock": "was reset (reset_event on stream"},
    "07.3": {"correct": "output 0 is wrong",
             "no_race": "Data race (read-after-write)"},
}
#: Parts whose starter is meant to hang (the emulator raises DeadlockError instead).
HANGS = ("07.1", "07.2")


def _path(folder: str, part: str) -> Path:
    return REPO / folder / NOTEBOOKS[part[:2]]


def _grade(part: str, fn: Any, seed: int) -> Report:
    ex = get_exercise(part)
    return grade_run(ex, run_exercise(ex, fn, seed=seed))


def _statuses(report: Report) -> dict[str, bool]:
    return {r.item.id: r.passed for r in report.results}


def _entry(part: str) -> str:
    return get_exercise(part).entry


def _cell_source(path: Path, cell_id: str) -> str:
    cells: list[dict[str, Any]] = json.loads(path.read_text())["cells"]
    (cell,) = [c for c in cells if c.get("id") == cell_id]
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else str(src)


def _learner_id(part: str) -> str:
    return _entry(part).replace("_", "-") + "-learner"


def _variant(ns: dict[str, Any], part: str, *edits: tuple[str, str]) -> Callable[..., Any]:
    """The part's solution function with each ``old`` -> ``new`` edit, run in a copy of
    ``ns``."""
    src = _cell_source(_path("solutions", part), _learner_id(part))
    for old, new in edits:
        assert old in src, f"{old!r} is not in the {part} solution"
        src = src.replace(old, new)
    out = dict(ns)
    exec(compile(src, f"variant-{part}", "exec"), out)
    fn: Callable[..., Any] = out[_entry(part)]
    return fn


def _ratio(report: Report) -> float:
    m = re.search(r"(\d+\.\d+)x its throughput", report.result("throughput").reason)
    assert m, report.result("throughput").reason
    return float(m.group(1))


@pytest.fixture(scope="module")
def starters() -> dict[str, dict[str, Any]]:
    """Each exercise notebook's namespace (the broken starters), by notebook number."""
    out = {}
    for nb in NOTEBOOKS:
        ns = learner_namespace(_path("exercises", nb))
        assert ns["__cell_errors__"] == [], (nb, ns["__cell_errors__"])
        out[nb] = ns
    return out


@pytest.fixture(scope="module")
def solutions() -> dict[str, dict[str, Any]]:
    """Each solution notebook's namespace, by notebook number."""
    out = {}
    for nb in NOTEBOOKS:
        ns = learner_namespace(_path("solutions", nb))
        assert ns["__cell_errors__"] == [], (nb, ns["__cell_errors__"])
        out[nb] = ns
    return out


# ------------------------------------------------------------------------------ notebooks


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
@pytest.mark.parametrize("nb", sorted(NOTEBOOKS))
def test_notebook_is_stored_clean_and_names_its_exercises(nb: str, folder: str) -> None:
    """nbformat 4.5 with cell ids, no outputs, the standard first cell, one learner and one
    check cell per part (in order), and the exercise ids in the metadata."""
    path = REPO / folder / NOTEBOOKS[nb]
    doc = json.loads(path.read_text())
    parts = PARTS[nb]
    assert (doc["nbformat"], doc["nbformat_minor"]) == (4, 5)
    assert doc["metadata"]["kernelspec"]["name"] == "python3"
    assert doc["metadata"]["acl_lab"]["exercises"] == list(parts)
    code = [c for c in doc["cells"] if c["cell_type"] == "code"]
    assert all(c.get("id") for c in doc["cells"])
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
    assert "".join(code[0]["source"]) == SETUP
    checks = [c for c in code if "check" in c["metadata"].get("tags", [])]
    learners = [c for c in code if "learner" in c["metadata"].get("tags", [])]
    assert ["".join(c["source"]) for c in checks] == [
        f'check("{p}", {_entry(p)})' for p in parts]
    assert [c["id"] for c in learners] == [_learner_id(p) for p in parts]
    marked = ["# YOUR CODE HERE" in "".join(c["source"]) for c in learners]
    assert marked == [folder == "exercises"] * len(parts)


def test_starters_that_hang_are_only_called_through_check() -> None:
    """07's starters deadlock when called, so no untagged cell of its notebook calls them."""
    doc = json.loads(_path("exercises", "07.1").read_text())
    for cell in doc["cells"]:
        tags = cell["metadata"].get("tags", [])
        if cell["cell_type"] != "code" or "check" in tags or "learner" in tags:
            continue
        src = "".join(cell["source"])
        for part in HANGS:
            assert f"{_entry(part)}(" not in src, (part, cell["id"])


@pytest.mark.parametrize("part", ALL_PARTS)
def test_rubric_items_name_views_and_hints(part: str) -> None:
    """Every item has a view, a hint and positive points; the seed decides the arguments."""
    ex = get_exercise(part)
    assert ex.items
    for item in ex.items:
        assert item.view in VIEWS and item.hint and item.points > 0, (part, item.id)
    a, b = ex.make_args(1), ex.make_args(2)
    assert repr(a) != repr(b), "the arguments do not depend on the seed"
    assert repr(ex.make_args(1)) == repr(a), "make_args is not deterministic"


# ------------------------------------------------------------------------------ starters


@pytest.mark.parametrize("seed", [3, 1234])
@pytest.mark.parametrize("part", ALL_PARTS)
def test_starter_fails_the_intended_items_for_the_intended_reason(
        starters: dict[str, dict[str, Any]], part: str, seed: int) -> None:
    """The starter fails exactly its mistake's items, and each reason says what the trace
    shows; the hanging starters are stopped by a DeadlockError, not by the time limit."""
    report = _grade(part, starters[part[:2]][_entry(part)], seed)
    expected = STARTER_FAILS[part]
    failed = {r.item.id for r in report.failed}
    if report.gate is None:
        assert failed == set(expected), report.text()
    else:  # an exception, a None result or an unclaimed finding: the whole part scores 0
        assert report.score == 0 and failed == {i.id for i in report.exercise.items}
    for item_id, text in expected.items():
        assert text in report.result(item_id).reason, report.text()
    assert not report.run.timed_out
    if part in HANGS:
        assert (report.run.error or "").startswith("DeadlockError"), report.run.error
        assert report.run.of_kind("deadlock")
        assert report.figure("completes") is not None  # the wait graph of this run


def test_pipeline_starter_is_the_graded_baseline(starters: dict[str, dict[str, Any]]) -> None:
    """06.2: the notebook's synchronous starter and the rubric's baseline take the same
    virtual time (the measured ratio is exactly 1.00), and the baseline is correct."""
    seed = 21
    report = _grade("06.2", starters["06"]["pipeline"], seed)
    assert _ratio(report) == 1.0
    _, bias = ex06.make_args_2(seed)
    window = ex06.batch_window_ns(report.run.trace, bias.nbytes)
    assert window is not None
    assert window[1] - window[0] == ex06.baseline_ns(seed, "Ascend310P3")


# ------------------------------------------------------------------------------ solutions


@pytest.mark.parametrize("seed", [3, 1234, 99])
@pytest.mark.parametrize("part", ALL_PARTS)
def test_solution_passes_every_item(solutions: dict[str, dict[str, Any]], part: str,
                                    seed: int) -> None:
    """The solution notebook's function passes the whole rubric with no finding at all."""
    report = _grade(part, solutions[part[:2]][_entry(part)], seed)
    assert report.passed_all, report.text()
    assert report.run.findings == (), [str(f) for f in report.run.findings]


def test_solution_pipeline_is_well_over_twice_as_fast(
        solutions: dict[str, dict[str, Any]]) -> None:
    """06.2: the reason states the measured ratio and the overlap; the solution has margin."""
    report = _grade("06.2", solutions["06"]["pipeline"], seed=5)
    assert _ratio(report) >= 2.4, report.text()
    reason = report.result("throughput").reason
    assert "ran on 2 stream(s)" in reason and "of the copy time hidden" in reason


# ------------------------------------------------------------------------------ hard-coded


def _answers(part: str, seed: int) -> Any:
    """The right answer for ``seed``, computed on the host."""
    args = get_exercise(part).make_args(seed)
    if part == "05":
        return [a + b for a, b in args[0]]
    if part == "06.1":
        return args[0] + args[1]
    if part == "06.2":
        return [x + args[1] for x in args[0]]
    if part == "07.1":
        return [x + x for x in args[0]]
    if part == "07.2":
        return [(a + b, (a + b) * (a + b)) for a, b in args[0]]
    batches, scale, bias = args
    return [x * scale + bias for x in batches]


@pytest.mark.parametrize("part", ALL_PARTS)
def test_hard_coded_answer_fails_the_correctness_item(part: str) -> None:
    """The right answer for another seed, returned without running anything, is wrong."""
    other = _answers(part, 5)

    def hard_coded(*args: Any) -> Any:
        return other

    report = _grade(part, hard_coded, seed=6)
    assert not report.result("correct").passed, report.text()
    assert not report.passed_all


@pytest.mark.parametrize("part,item,text", [
    ("05", "threads", "no thread queued an Add"),
    ("06.1", "ordered", "no Add and copy back ran on the device"),
    ("06.2", "throughput", "no batch was copied to the device and back"),
    ("07.1", "report_thread", "no acl.rt.subscribe_report succeeded"),
])
def test_answer_computed_on_the_host_fails_the_trace_items(part: str, item: str,
                                                          text: str) -> None:
    """The right values computed with numpy, without the device, score nothing: the part
    fails (no ACL call), and the trace items still say what did not run on the device."""

    def on_host(*args: Any) -> Any:
        return _answers(part, seed)

    seed = 8
    report = _grade(part, on_host, seed)
    assert report.score == 0, report.text()
    assert "no ACL call in the trace" in (report.gate or ""), report.text()
    assert "computed on the host" in report.result("correct").reason, report.text()
    assert text in report.result(item).reason, report.text()


# ------------------------------------------------------------------------------ wrong fixes


def test_worker_context_with_the_main_threads_stream_is_wrong_context(
        starters: dict[str, dict[str, Any]]) -> None:
    """05: a worker that creates its own context but queues on a stream made in the calling
    thread gets 107003; the reason names it, and the worker's context leaks."""
    src = _cell_source(_path("exercises", "05"), "add-in-threads-learner")
    old = "            # YOUR CODE HERE\n"
    assert old in src
    ns = dict(starters["05"])
    exec(compile(src.replace(old, "            acl.rt.create_context(DEVICE_ID)\n"),
                 "variant-05", "exec"), ns)
    report = _grade("05", ns["add_in_threads"], seed=4)
    assert "107003" in report.result("contexts").reason, report.text()
    assert not report.result("correct").passed
    assert "never destroyed" in report.result("cleanup").reason, report.text()


def test_binding_the_callers_contexts_in_the_workers_passes(
        starters: dict[str, dict[str, Any]]) -> None:
    """05: contexts made in the calling thread are fine once each worker sets its own."""
    src = _cell_source(_path("exercises", "05"), "add-in-threads-learner")
    ns = dict(starters["05"])
    exec(compile(src.replace("            # YOUR CODE HERE\n",
                             "            check_ret('set_context', "
                             "acl.rt.set_context(contexts[i]))\n"), "variant-05", "exec"), ns)
    report = _grade("05", ns["add_in_threads"], seed=4)
    assert report.passed_all, report.text()


def test_one_worker_doing_every_pair_fails_the_threads_item(
        solutions: dict[str, dict[str, Any]]) -> None:
    """05: running every pair in one thread gives right results but not N workers."""
    fn = _variant(solutions["05"], "05",
                  ("threads = [threading.Thread(target=worker, args=(i, a, b)) "
                   "for i, (a, b) in enumerate(pairs)]",
                   "threads = [threading.Thread(target=lambda: [worker(i, a, b) for i, "
                   "(a, b) in enumerate(pairs)])]"))
    report = _grade("05", fn, seed=4)
    assert report.result("correct").passed, report.text()
    assert "only 1 thread(s) queued an Add" in report.result("threads").reason


def test_wait_before_record_gets_its_own_feedback(
        solutions: dict[str, dict[str, Any]]) -> None:
    """06.1: waiting on the event before recording it is named as such in two items."""
    record = ('    check_ret("acl.rt.record_event", acl.rt.record_event(add_done, compute))\n')
    wait = ('    check_ret("acl.rt.stream_wait_event", acl.rt.stream_wait_event(copy_back, '
            'add_done))\n')
    fn = _variant(solutions["06"], "06.1", (record + wait, "    acl.rt.stream_wait_event("
                                            "copy_back, add_done)\n" + record))
    report = _grade("06.1", fn, seed=4)
    assert report.run.of_kind("wait_before_record")
    assert "wait called before record" in report.result("no_race").reason, report.text()
    assert "107000" in report.result("no_race").reason
    assert "record first, then wait" in report.result("ordered").reason
    assert not report.result("correct").passed


def test_copy_back_on_the_compute_stream_fails_only_the_ordering_item(
        solutions: dict[str, dict[str, Any]]) -> None:
    """06.1: one stream gives the right sum but is not the two-stream ordering asked for."""
    fn = _variant(solutions["06"], "06.1",
                  ("ACL_MEMCPY_DEVICE_TO_HOST, copy_back))", "ACL_MEMCPY_DEVICE_TO_HOST, "
                   "compute))"))
    report = _grade("06.1", fn, seed=4)
    assert {r.item.id for r in report.failed} == {"ordered"}, report.text()
    assert "same stream as the Add" in report.result("ordered").reason


def test_async_on_one_stream_is_not_fast_enough(solutions: dict[str, dict[str, Any]]) -> None:
    """06.2: queueing everything on a single stream removes the host's waits but not the
    serial device work: correct, no race, no copy under compute and well short of 2x. The
    correct and race-free items pass but score nothing: the synchronous starter already had
    them, and their points count once the pipeline overlaps copies with compute."""
    fn = _variant(solutions["06"], "06.2", ("for _ in range(2):\n        stream, ret",
                                            "for _ in range(1):\n        stream, ret"),
                  ("slots[i % 2]", "slots[0]"))
    report = _grade("06.2", fn, seed=4)
    assert {r.item.id for r in report.failed} == {"throughput", "overlap"}, report.text()
    assert report.score == 0
    held = [r for r in report.results if r.held]
    assert {r.item.id for r in held} == {"correct", "no_race"}
    assert all("count once 'overlap' or 'throughput' passes" in r.reason for r in held)
    assert 1.2 < _ratio(report) < 1.9
    assert "ran on 1 stream(s)" in report.result("throughput").reason


def test_two_streams_sharing_one_buffer_pair_race(solutions: dict[str, dict[str, Any]]) -> None:
    """06.2: both streams on the same device buffers are fast, but the rubric names the
    race between them."""
    fn = _variant(solutions["06"], "06.2",
                  ("stream, dev_x, dev_y, x_buf, y_buf = slots[i % 2]",
                   "stream = slots[i % 2][0]\n        _, dev_x, dev_y, x_buf, y_buf = "
                   "slots[0]"))
    report = _grade("06.2", fn, seed=4)
    assert not report.result("no_race").passed, report.text()
    assert "Data race" in report.result("no_race").reason


def test_report_thread_never_unsubscribed_is_named(
        solutions: dict[str, dict[str, Any]]) -> None:
    """07.1: the callbacks run, but the report thread is left subscribed."""
    fn = _variant(solutions["07"], "07.1", (
        '    check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, '
        'stream))\n', ""))
    report = _grade("07.1", fn, seed=4)
    assert {r.item.id for r in report.failed} == {"report_thread"}, report.text()
    assert "never unsubscribed" in report.result("report_thread").reason


#: 07.1's two wrong orders between the report thread and the main thread (issue 25): the
#: loop may call process_report before the stream is subscribed (it stops on 107012), and
#: unsubscribe_report may come while the loop can still call it.
UNORDERED_07_1 = {
    "no wait for the subscription": [(
        "        subscribed.wait()   # process_report fails (107012) until the stream is "
        "subscribed\n", "")],
    "unsubscribe before the loop ends": [(
        '    stop.set()\n    check_ret("acl.util.stop_thread", acl.util.stop_thread(tid))\n'
        '    check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, '
        'stream))\n',
        '    check_ret("acl.rt.unsubscribe_report", acl.rt.unsubscribe_report(tid, '
        'stream))\n    stop.set()\n    check_ret("acl.util.stop_thread", '
        'acl.util.stop_thread(tid))\n')],
}


@pytest.mark.parametrize("mistake", sorted(UNORDERED_07_1))
def test_report_thread_orders_are_graded_the_same_on_every_check(
        solutions: dict[str, dict[str, Any]], mistake: str) -> None:
    """Each unordered answer loses the report_thread item with the thread_order finding's
    reason, under the part's host schedules, with the same score on three checks (it scored
    0 or 7 from run to run when the operating system picked the order)."""
    from acl_lab.grading.check import grade

    ex = get_exercise("07.1")
    assert ex.schedules > 1
    fn = _variant(solutions["07"], "07.1", *UNORDERED_07_1[mistake])
    reports = [grade(ex, fn, seed=5) for _ in range(3)]
    for report in reports:
        assert {r.item.id for r in report.failed} == {"report_thread"}, report.text()
        reason = report.result("report_thread").reason
        assert "process_report" in reason and "thread" in reason, reason
        assert all(run.of_kind("thread_order") for run in report.runs)
    assert len({(r.score, r.text()) for r in reports}) == 1
    lost = next(i.points for i in ex.items if i.id == "report_thread")
    assert reports[0].score == reports[0].total - lost
    solved = grade(ex, solutions["07"][_entry("07.1")], seed=5)
    assert solved.score == solved.total, solved.text()


def test_dropping_the_reset_is_also_a_fix(solutions: dict[str, dict[str, Any]]) -> None:
    """07.2: a new record replaces the old one, so no reset at all passes too."""
    fn = _variant(solutions["07"], "07.2", (
        '        check_ret("acl.rt.reset_event", acl.rt.reset_event(y_ready, produce))\n', ""))
    report = _grade("07.2", fn, seed=4)
    assert report.passed_all, report.text()


def test_reset_after_the_first_consumer_synchronized_still_hangs(
        solutions: dict[str, dict[str, Any]]) -> None:
    """07.2: moving the reset after the first consumer's synchronize is still before the
    second consumer's wait: still a deadlock."""
    reset = '        check_ret("acl.rt.reset_event", acl.rt.reset_event(y_ready, produce))\n'
    y_line = "        y = acl.util.ptr_to_numpy(host[2], shape, NPY_FLOAT32).copy()\n"
    fn = _variant(solutions["07"], "07.2", (reset, ""), (y_line, y_line + reset))
    report = _grade("07.2", fn, seed=4)
    assert not report.result("completes").passed
    assert "was reset" in report.result("no_deadlock").reason


def test_a_reset_on_a_stream_not_ordered_after_the_record_no_longer_passes(
        solutions: dict[str, dict[str, Any]]) -> None:
    """07.2: the reset moved onto the other consumer's stream, before each pair's record. In
    the emulator's timing the idle stream resets before the record lands, so nothing hangs
    and every value is right; on hardware a record that lands first is cleared and both
    consumers wait forever. The reset_unordered finding says so on every run: the answer
    loses its points."""
    reset = '        check_ret("acl.rt.reset_event", acl.rt.reset_event(y_ready, produce))\n'
    record = '        check_ret("acl.rt.record_event", acl.rt.record_event(y_ready, produce))\n'
    early = '        check_ret("acl.rt.reset_event", acl.rt.reset_event(y_ready, square))\n'
    fn = _variant(solutions["07"], "07.2", (reset, ""), (record, early + record))
    report = _grade("07.2", fn, seed=4)
    assert report.run.error is None and report.run.result is not None  # it returned
    assert [f.kind for f in report.run.findings] == ["reset_unordered"]
    assert report.score < report.total and "reset_event" in (report.gate or ""), report.text()


def test_corrupted_outputs_differ_from_the_expected_values(
        starters: dict[str, dict[str, Any]]) -> None:
    """07.3: the starter's stage 2 reads the scaled buffer before stage 1 wrote it: its first
    output is the bias alone (the buffer still held zeros)."""
    seed = 11
    run = run_exercise("07.3", starters["07"]["scale_and_shift"], seed=seed)
    batches, scale, bias = ex07.make_args_3(seed)
    first = np.asarray(run.result[0])
    assert np.allclose(first, np.broadcast_to(bias, first.shape))
    assert not np.allclose(first, batches[0] * scale + bias)


def test_first_sentence_helper() -> None:
    """Reasons quote a finding's first sentence (or its first line when it has no stop)."""
    assert ex05.first_sentence("A thing. More text.\nNext") == "A thing."
    assert ex05.first_sentence("no stop") == "no stop"
