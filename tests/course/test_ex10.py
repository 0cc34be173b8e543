"""Exercise 10 (puzzles): budgets are judged from the trace; wrong answers fail their items.

The starter and the solution come from the notebooks (``learner_namespace``); the wrong
answers are the solution with one line changed (no event, a host wait instead of the event,
two events), so each fails the item about its own mistake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
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
    return _variant_of([(old, new)], entry)


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


def _variant_of(pairs: list[tuple[str, str]], entry: str) -> Any:
    """The solution's ``entry`` with each ``old`` replaced by its ``new`` (each once)."""
    doc = json.loads(SOLUTION_NB.read_text())
    (src,) = ["".join(c["source"]) for c in doc["cells"]
              if "learner" in c.get("metadata", {}).get("tags", [])
              and f"def {entry}(" in "".join(c["source"])]
    for old, new in pairs:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    ns = learner_namespace(SOLUTION_NB)
    exec(compile(src, "variant", "exec"), ns)
    return ns[entry]


def _failed(report: Report) -> dict[str, str]:
    return {r.item.id: r.reason for r in report.results if not r.passed}


NEW_PARTS = (("10.3", "callback_copy"), ("10.4", "relu_blocks"))


@pytest.mark.parametrize(("part", "entry"), NEW_PARTS)
def test_new_puzzles_solution_passes_and_starter_scores_nothing(part: str, entry: str) -> None:
    solved = _grade(learner_namespace(SOLUTION_NB)[entry], part=part)
    assert solved.score == solved.total, solved.text()
    starter = _grade(learner_namespace(EXERCISE_NB)[entry], part=part)
    assert starter.score == 0, starter.text()


PUZZLES = ["10.1", "10.2", "10.3", "10.4", "10.5"]


def test_every_puzzle_the_issue_lists_exists_in_both_notebooks() -> None:
    for nb in (EXERCISE_NB, SOLUTION_NB):
        listed = json.loads(nb.read_text())["metadata"]["acl_lab"]["exercises"]
        assert listed == PUZZLES
    titles = [get_exercise(p).title for p in PUZZLES]
    for idea in ("one event", "one context per thread", "one callback", "one double-buffer",
                 "one edge"):
        assert sum(idea in t for t in titles) == 1, (idea, titles)


UNSUBSCRIBE = ("    check_ret(\"acl.rt.unsubscribe_report\", acl.rt.unsubscribe_report("
               "reporter.ident, stream))\n")
MAIN_THREAD = [  # the main thread subscribes itself and runs process_report before the sync
    ("    reporter = threading.Thread(target=report)\n    reporter.start()\n",
     "    reporter = threading.current_thread()\n"),
    ("    check_ret(\"acl.rt.synchronize_stream\", acl.rt.synchronize_stream(stream))\n"
     "    reporter.join()\n",
     "    check_ret(\"acl.rt.process_report\", acl.rt.process_report(-1))\n"
     "    check_ret(\"acl.rt.synchronize_stream\", acl.rt.synchronize_stream(stream))\n"),
]


@pytest.mark.parametrize(("pairs", "item", "reason"), [
    ([(UNSUBSCRIBE, "")], "unsubscribed", "was never undone"),
    (MAIN_THREAD, "report_thread", "ran on the main thread"),
], ids=["never_unsubscribed", "processed_on_main_thread"])
def test_callback_puzzle_wrong_answers_fail_with_their_reason(
        pairs: list[tuple[str, str]], item: str, reason: str) -> None:
    report = _grade(_variant_of(pairs, "callback_copy"), part="10.3")
    failed = _failed(report)
    assert set(failed) == {item}, report.text()
    assert reason in failed[item]


def test_callback_puzzle_call_budget_shows_the_measured_count() -> None:
    ex = get_exercise("10.3")
    run = run_exercise(ex, learner_namespace(SOLUTION_NB)["callback_copy"], seed=3)
    (calls,) = [r for r in grade_run(ex, run).results if r.item.id == "calls"]
    assert f"{len(run.trace.api_calls())} ACL calls" in calls.reason
    assert len(run.trace.calls_named("acl.rt.process_report")) == 1


ONE_STREAM = [
    ("    compute, ret = acl.rt.create_stream()\n    check_ret(\"acl.rt.create_stream\", ret)\n",
     "    compute = copy\n"),
    ("    for stream in (copy, compute):\n", "    for stream in (copy,):\n"),
]
NO_FILL_WAIT = [("        check_ret(\"acl.rt.stream_wait_event\", acl.rt.stream_wait_event("
                 "compute, filled[b]))\n", "")]
HOST_WAIT_PER_BLOCK = [("        check_ret(\"acl.rt.record_event\", acl.rt.record_event("
                        "emptied[b], compute))\n",
                        "        check_ret(\"acl.rt.record_event\", acl.rt.record_event("
                        "emptied[b], compute))\n"
                        "        check_ret(\"sync\", acl.rt.synchronize_stream(compute))\n")]
BUFFER_PER_BLOCK = [("    for _ in range(2):  ", "    for _ in range(len(blocks)):  "),
                    ("        b = i % 2\n", "        b = i\n"),
                    ("        if i >= 2:  ", "        if i >= len(blocks):  ")]


@pytest.mark.parametrize(("pairs", "items", "reason"), [
    (ONE_STREAM, {"overlap", "time"}, "no copy in ran while a Relu ran"),
    (NO_FILL_WAIT, {"no_race"}, "race"),
    (BUFFER_PER_BLOCK, {"memory"}, "the budget is 1048576 bytes"),
    (HOST_WAIT_PER_BLOCK, {"overlap", "time"}, "no copy in ran while a Relu ran"),
], ids=["serialised_on_one_stream", "missing_event_race", "buffer_per_block",
        "host_wait_per_block"])
def test_double_buffer_wrong_answers_fail_with_their_reason(
        pairs: list[tuple[str, str]], items: set[str], reason: str) -> None:
    report = _grade(_variant_of(pairs, "relu_blocks"), part="10.4")
    failed = _failed(report)
    assert items <= set(failed), report.text()
    assert any(reason in failed[i] for i in items), report.text()
    assert report.score < report.total


def test_double_buffer_budgets_show_the_measured_numbers() -> None:
    from acl_lab.grading.exercises import ex10
    from acl_lab.grading.exercises.ex06 import batch_window_ns

    ex = get_exercise("10.4")
    wide = _variant_of(BUFFER_PER_BLOCK, "relu_blocks")
    for fn, peak in ((learner_namespace(SOLUTION_NB)["relu_blocks"], 2 * ex10.BLOCK_BYTES_104),
                     (wide, ex10.BLOCKS_104 * ex10.BLOCK_BYTES_104)):
        run = run_exercise(ex, fn, seed=5)
        reasons = {r.item.id: r.reason for r in grade_run(ex, run).results}
        assert f"at most {peak} bytes" in reasons["memory"]
        window = batch_window_ns(run.trace, -1)
        assert window is not None
        assert f"took {(window[1] - window[0]) / 1e3:.1f} µs" in reasons["time"]
        assert f"the budget is {ex10.time_budget_ns() / 1e3:.1f} µs" in reasons["time"]
    # the yardstick is the one-stream version, and the budget lies between it and overlap
    one = ex10.one_stream_ns()
    assert ex10.time_budget_ns() < one


@pytest.mark.parametrize(("part", "fn"), [
    ("10.3", lambda x: x.copy()),
    ("10.4", lambda blocks: [np.maximum(b, 0) for b in blocks]),
], ids=["callback_host_copy", "double_buffer_host_relu"])
def test_computing_on_the_host_scores_nothing(part: str, fn: Any) -> None:
    """The right values computed without the device: no ACL call, no item passes."""
    assert _grade(fn, part=part).score == 0


FINALIZE = "    check_ret(\"acl.finalize\", acl.finalize())\n"


@pytest.mark.parametrize(("part", "entry", "limit"), [
    ("10.1", "ordered_copy", "CALL_BUDGET_101"),
    ("10.2", "round_trip_in_threads", "CALL_BUDGET_102"),
    ("10.3", "callback_copy", "CALL_BUDGET_103"),
    ("10.5", "upload_and_relu", "CALL_BUDGET_105"),
])
def test_call_budget_fails_a_run_over_it_and_only_that_item(part: str, entry: str,
                                                             limit: str) -> None:
    """The solution with harmless extra calls (queries of the run mode) before the
    finalize: right in every other respect, so only the call budget fails, naming the count."""
    from acl_lab.grading.exercises import ex10

    budget = getattr(ex10, limit)
    spend = f"    for _ in range({budget}):\n        acl.rt.get_run_mode()\n" + FINALIZE
    ex = get_exercise(part)
    run = run_exercise(ex, _variant_of([(FINALIZE, spend)], entry), seed=11)
    failed = _failed(grade_run(ex, run))
    assert set(failed) == {"calls"}, failed
    assert run.trace.calls.rows > budget
    assert (f"your run made {len(run.trace.api_calls())} ACL calls" in failed["calls"]
            and f"the budget is {budget}" in failed["calls"])


@pytest.mark.parametrize(("part", "entry", "ret"), [
    ("10.1", "ordered_copy", "    return out"),
    ("10.3", "callback_copy", "    return got[0]"),
])
def test_a_changed_result_fails_correct_naming_the_differing_values(part: str, entry: str,
                                                                   ret: str) -> None:
    """The solution returning its array with one value changed: the item counts the
    differing values."""
    changed = ret.replace("return ", "changed = ") + "\n    changed[0] += 1\n    return changed"
    failed = _failed(_grade(_variant_of([(ret, changed)], entry), part=part))
    assert "correct" in failed, failed
    assert failed["correct"].startswith("1 of ") and "values differ from x" in failed["correct"]


def test_yardstick_runs_leave_the_callers_session_current() -> None:
    """The budgets' reference programs (10.4's one-stream Relu, 06.2's synchronous pipeline)
    run in a Session of their own; the caller's stays current and records none of it."""
    from acl_lab.grading.exercises import ex06, ex10
    from acl_lab.runtime.session import Session, current_session

    with Session() as mine:
        for yardstick in (lambda: ex10.one_stream_ns.__wrapped__("Ascend310P3"),
                          lambda: ex06.baseline_ns.__wrapped__(3, "Ascend310P3")):
            assert yardstick() > 0
            assert current_session(create=False) is mine
        assert mine.trace().calls.rows == 0


# ------------------------------------------------------------------------------------- 10.5
# A bug one schedule hides: graded the way check() grades it, under every host schedule of
# the part (the same arguments, schedule seeds 0 .. THREADED_SCHEDULES - 1).
EDGE_MADE = ("    recorded = threading.Event()                         # the edge between "
             "the two threads\n")
EDGE_SET = "        recorded.set()                                   # after the record...\n"
EDGE_WAIT = "        recorded.wait()                                  # ...before the wait\n"
RECORD_105 = ("        check_ret(\"acl.rt.record_event\", acl.rt.record_event(uploaded, "
              "stream))\n")


def _grade_schedules(fn: Any, seed: int = 7) -> Report:
    from acl_lab.grading.check import grade

    return grade(get_exercise("10.5"), fn, seed=seed)


def _edge_variant(pairs: list[tuple[str, str]]) -> Any:
    return _variant_of(pairs, "upload_and_relu")


def test_edge_puzzle_is_graded_under_every_threaded_schedule() -> None:
    from acl_lab.grading.rubric import THREADED_SCHEDULES

    ex = get_exercise("10.5")
    assert ex.schedules == THREADED_SCHEDULES > 1
    report = _grade_schedules(learner_namespace(SOLUTION_NB)["upload_and_relu"])
    assert report.score == report.total, report.text()
    assert [r.schedule for r in report.runs] == list(range(THREADED_SCHEDULES))
    for run in report.runs:
        assert not run.of_kind("wait_before_record", "race", "uninitialized_read")
        assert run.trace.host_edges.rows > 0


def test_edge_puzzle_starter_is_right_under_seed_0_and_fails_for_the_hidden_bug() -> None:
    """The starter returns relu(x) under the plain schedule, but not under every one; the
    finding is on every schedule; no Python primitive orders the two threads; it scores 0."""
    starter = learner_namespace(EXERCISE_NB)["upload_and_relu"]
    plain = _grade(starter, part="10.5")          # schedule 0 alone
    assert _passed(plain)["correct"] and plain.score == 0, plain.text()
    report = _grade_schedules(starter)
    failed = _failed(report)
    assert set(failed) == {"correct", "no_wait_before_record", "ordered"}, report.text()
    assert "values differ from relu(x)" in failed["correct"]
    assert "under host schedule seed" in failed["correct"]
    assert failed["no_wait_before_record"].startswith("wait_before_record at ")
    assert "nothing orders the wait after the record" in failed["no_wait_before_record"]
    assert "no Python primitive passes anything" in failed["ordered"]
    assert report.score == 0
    # every schedule reports the finding, whatever order it happened to take
    assert all(run.of_kind("wait_before_record") for run in report.runs)


def test_edge_puzzle_a_sleep_gets_the_data_but_not_the_order() -> None:
    """Sleeping before the wait: the record comes first under every schedule graded, so the
    result is right, but nothing orders the two threads and the finding stays."""
    sleepy = _edge_variant([(EDGE_MADE, "    import time\n"), (EDGE_SET, ""),
                            (EDGE_WAIT, "        time.sleep(0.001)\n")])
    report = _grade_schedules(sleepy)
    failed = _failed(report)
    assert set(failed) == {"no_wait_before_record", "ordered"}, report.text()
    assert "nothing orders the wait after the record" in failed["no_wait_before_record"]
    assert "no Python primitive passes anything" in failed["ordered"]
    assert report.score == 0  # the right result and the budget are held until the lesson
    held = [r for r in report.results if r.held]
    assert {r.item.id for r in held} == {"correct", "calls"}
    for r in held:  # said once, however many schedules were combined
        assert r.reason.count("once 'no_wait_before_record'") == 1, r.reason


def test_edge_puzzle_an_edge_from_before_the_record_orders_nothing() -> None:
    """The Event set before record_event: an edge reaches the consumer, but from a point
    before the record, so the wait is still unordered."""
    early = _edge_variant([(EDGE_SET, ""), (RECORD_105, EDGE_SET + RECORD_105)])
    failed = _failed(_grade_schedules(early))
    assert {"no_wait_before_record", "ordered"} <= set(failed), failed
    assert "comes before the record_event" in failed["ordered"]
    assert "threading.Event.set" in failed["ordered"]


def test_edge_puzzle_accepts_any_primitive_that_hands_something_over() -> None:
    """A queue item is an edge as good as an Event."""
    queued = _edge_variant([
        (EDGE_MADE, "    import queue\n    recorded = queue.Queue()\n"),
        (EDGE_SET, "        recorded.put(uploaded)\n"),
        (EDGE_WAIT, "        recorded.get()\n")])
    report = _grade_schedules(queued)
    assert report.score == report.total, report.text()
