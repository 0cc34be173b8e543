"""The grading core: run a learner's function in a fresh Session, judge it, show the report.

Test-only exercises ("t.1" ...) are registered for this module's tests and removed after. Their
predicates read the Run the way real rubrics do: the expected answer is recomputed from the
seed, leaks and return codes come from the trace.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab import acl
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
)
from acl_lab.grading import (
    Exercise,
    Item,
    Report,
    Run,
    check,
    feedback_page,
    grade_run,
    learner_namespace,
    notebook_exercises,
    run_exercise,
)
from acl_lab.grading import rubric as rubric_mod
from acl_lab.grading.widgets import report_widget
from acl_lab.runtime.session import Session, current_session, set_current_session

pytestmark = pytest.mark.timeout(120)

HERE = Path(__file__).resolve()


# =============================================================================== exercises
def make_vector(seed: int) -> tuple[np.ndarray]:
    """A seeded int64 vector whose length and values change with the seed."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 1000, size=int(rng.integers(16, 64))).astype(np.int64),)


def expected_sum(seed: int) -> int:
    return int(make_vector(seed)[0].sum())


def returns_sum(run: Run) -> tuple[bool, str]:
    want = expected_sum(run.seed)
    if run.error is not None:
        return False, f"the function raised {run.error}"
    if run.result != want:
        return False, f"returned {run.result!r}, expected the sum of the input, {want}"
    return True, f"returned {want}"


def no_leaks(run: Run) -> tuple[bool, str]:
    leaks = run.of_kind("leak")
    if leaks:
        return False, "; ".join(f"{f.file}:{f.line}: {f.message}" for f in leaks)
    return True, "everything allocated was freed"


def async_copies_ok(run: Run) -> tuple[bool, str]:
    rets = run.rets("acl.rt.memcpy_async")
    if len(rets) < 2:
        return False, f"{len(rets)} memcpy_async call(s); the exercise needs two"
    bad = [r for r in rets if r != 0]
    if bad:
        return False, f"memcpy_async returned {bad}"
    return True, f"{len(rets)} memcpy_async calls returned 0"


SUM = Exercise(
    id="t.1", title="Sum a vector through the device", entry="device_sum",
    items=(
        Item("returns", "returns the sum of the input", 3, returns_sum,
             "copy the result back before reading it"),
        Item("no_leak", "frees every allocation", 2, no_leaks,
             "every malloc needs a free on every path", view="memory_map", claims=("leak",)),
        Item("async", "copies with memcpy_async, all returning 0", 1, async_copies_ok,
             "use a stream and pinned host memory", view="timeline"),
    ),
    make_args=make_vector, time_limit=20.0, needs_device=False)


def completes(run: Run) -> tuple[bool, str]:
    if run.timed_out or run.error is not None:
        return False, f"did not complete: {run.error}"
    if run.of_kind("deadlock"):
        return False, "a deadlock was found"
    return True, "completed"


HANG = Exercise(
    id="t.2", title="Finish without hanging", entry="finish",
    items=(Item("completes", "completes", 1, completes, "who runs the callback?",
                view="wait_graph"),),
    time_limit=20.0, needs_device=False)


def broken_predicate(run: Run) -> tuple[bool, str]:
    return bool(1 / 0), "unreachable"


def not_a_verdict(run: Run) -> Any:
    return True  # not a (passed, reason) pair


BROKEN = Exercise(
    id="t.3", title="A rubric with bugs", entry="device_sum",
    items=(Item("returns", "returns the sum", 1, returns_sum, "add them up"),
           Item("broken", "a predicate that raises", 1, broken_predicate, "none"),
           Item("shape", "a predicate that returns a bool", 1, not_a_verdict, "none")),
    make_args=make_vector, time_limit=20.0, needs_device=False)


def quotes_result(run: Run) -> tuple[bool, str]:
    return False, f"your function returned {run.result!r}"


ECHO = Exercise(
    id="t.4", title="Quote <the> learner", entry="echo",
    items=(Item("echo", "returns a harmless value", 2, quotes_result, "<b>not bold</b>"),
           Item("fine", "always passes", 1, lambda run: (True, "ok & fine"), "none")),
    time_limit=20.0, needs_device=False)


def bad_args(seed: int) -> tuple[Any, ...]:
    raise RuntimeError("rubric bug in make_args")


BAD_ARGS = Exercise(id="t.5", title="make_args raises", entry="f",
                    items=(Item("x", "x", 1, completes, "none"),), make_args=bad_args,
                    needs_device=False)

TEST_EXERCISES = (SUM, HANG, BROKEN, ECHO, BAD_ARGS)


@pytest.fixture(autouse=True, scope="module")
def registered() -> Iterator[None]:
    """Register the test exercises for this module only (all_exercises() stays clean)."""
    for ex in TEST_EXERCISES:
        rubric_mod.register(ex)
    yield
    for ex in TEST_EXERCISES:
        rubric_mod._EXERCISES.pop(ex.id, None)


@pytest.fixture(autouse=True)
def no_install_left() -> Iterator[None]:
    """run_exercise installs the emulated ``acl``; undo it so other modules start clean."""
    yield
    acl_lab.uninstall()


# =============================================================================== learner code
def device_sum(x: np.ndarray) -> int:
    """A correct solution: pinned host buffer, async copies both ways, everything freed."""
    n = x.nbytes
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(n)
    dev, _ = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
    acl.rt.memcpy(host, n, acl.util.bytes_to_ptr(x.tobytes()), n, 0)
    acl.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    acl.rt.memcpy_async(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    acl.rt.synchronize_stream(stream)
    total = int(np.frombuffer(acl.util.ptr_to_bytes(host, n), dtype=np.int64).sum())
    acl.rt.free(dev)
    acl.rt.free_host(host)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(0)
    acl.finalize()
    return total


def leaky_sum(x: np.ndarray) -> int:
    """Right answer, but the device buffer is never freed."""
    n = x.nbytes
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    host, _ = acl.rt.malloc_host(n)
    dev, _ = acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)  # LEAKED
    acl.rt.memcpy(host, n, acl.util.bytes_to_ptr(x.tobytes()), n, 0)
    acl.rt.memcpy_async(dev, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, stream)
    acl.rt.memcpy_async(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, stream)
    acl.rt.synchronize_stream(stream)
    total = int(np.frombuffer(acl.util.ptr_to_bytes(host, n), dtype=np.int64).sum())
    acl.rt.free_host(host)
    acl.rt.destroy_stream(stream)
    acl.rt.reset_device(0)
    acl.finalize()
    return total


def line_of(fn: Any, marker: str) -> int:
    """The file line of ``fn``'s source line holding ``marker``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if marker in ln)


def blocking_callback() -> None:
    """Deadlocks: a blocking callback whose only report thread is the one waiting."""
    acl.init()
    acl.rt.set_device(0)
    stream, _ = acl.rt.create_stream()
    acl.rt.subscribe_report(threading.get_ident(), stream)
    acl.rt.launch_callback(lambda data: None, None, ACL_CALLBACK_BLOCK, stream)
    acl.rt.synchronize_stream(stream)


# =============================================================================== runs
def test_correct_function_passes_every_item() -> None:
    """A correct solution scores full marks, and the Run holds a clean trace."""
    run = run_exercise(SUM, device_sum, seed=11)
    assert run.error is None and not run.timed_out
    assert run.result == expected_sum(11)
    assert run.trace.calls_named("acl.rt.memcpy_async").size == 2
    report = grade_run(SUM, run)
    assert report.passed_all
    assert (report.score, report.total) == (6, 6)
    assert [r.status for r in report.results] == ["pass", "pass", "pass"]
    assert report.summary() == "3/3 items passed (6/6 points)"


def test_random_seed_is_recorded_and_drives_the_arguments() -> None:
    """Without a seed one is drawn; the arguments (and so the answer) follow it."""
    run = run_exercise(SUM, lambda x: int(x.sum()))
    assert isinstance(run.seed, int)
    assert run.result == expected_sum(run.seed)
    assert grade_run(SUM, run).result("returns").passed


def test_leak_fails_the_leak_item_naming_file_and_line() -> None:
    """A missing free fails only the leak item, and its reason points at the malloc."""
    report = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=5))
    leak = report.result("no_leak")
    assert not leak.passed and leak.points_awarded == 0
    assert f"{HERE}:{line_of(leaky_sum, '# LEAKED')}" in leak.reason
    assert report.result("returns").passed and report.result("async").passed
    assert (report.score, report.total) == (4, 6)
    assert not report.passed_all


def test_hard_coded_answer_fails_when_the_seed_changes() -> None:
    """Returning the answer of one seed passes that seed only."""
    assert expected_sum(1) != expected_sum(2)
    answer = expected_sum(1)
    same = grade_run(SUM, run_exercise(SUM, lambda x: answer, seed=1))
    other = grade_run(SUM, run_exercise(SUM, lambda x: answer, seed=2))
    assert same.result("returns").passed
    assert not other.result("returns").passed
    assert str(expected_sum(2)) in other.result("returns").reason


def _loops_forever(box: list[threading.Thread], swallow: bool) -> None:
    box.append(threading.current_thread())
    while True:
        try:
            sum(range(100))
        except Exception:
            if not swallow:
                raise


@pytest.mark.parametrize("swallow", [False, True])
def test_infinite_loop_times_out_and_its_thread_stops(swallow: bool) -> None:
    """A pure-Python loop is stopped at the time limit, even one that catches Exception."""
    box: list[threading.Thread] = []
    run = run_exercise(HANG, lambda: _loops_forever(box, swallow), seed=0, time_limit=1.0)
    assert run.timed_out and run.result is None
    assert run.error is not None and run.error.startswith("TimeLimitExceeded")
    deadline = time.monotonic() + 60
    while box[0].is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not box[0].is_alive()
    assert not grade_run(HANG, run).result("completes").passed


def test_deadlock_becomes_error_text_and_draws_the_wait_graph() -> None:
    """A DeadlockError never propagates: it is the run's error, and the view shows it."""
    run = run_exercise(HANG, blocking_callback, seed=0)
    assert not run.timed_out
    assert run.error is not None and run.error.startswith("DeadlockError")
    assert run.of_kind("deadlock")
    report = grade_run(HANG, run)
    assert not report.result("completes").passed
    fig = report.figure("completes")
    assert fig is not None and len(fig.data) > 0
    assert fig.layout.meta["highlighted"]


def test_event_never_recorded_deadlocks() -> None:
    """Synchronising on an event nobody will record is reported, not hung."""
    def wait_forever() -> None:
        acl.init()
        acl.rt.set_device(0)
        event, _ = acl.rt.create_event_with_flag(0x1)
        s1, _ = acl.rt.create_stream()
        s2, _ = acl.rt.create_stream()
        acl.rt.record_event(event, s1)
        acl.rt.synchronize_stream(s1)
        acl.rt.reset_event(event, s2)
        acl.rt.synchronize_stream(s2)
        acl.rt.stream_wait_event(s2, event)
        acl.rt.synchronize_stream(s2)

    run = run_exercise(HANG, wait_forever, seed=0)
    assert run.error is not None and run.error.startswith("DeadlockError")


@pytest.mark.parametrize(("exc", "text"), [(KeyboardInterrupt(), "KeyboardInterrupt"),
                                           (SystemExit(3), "SystemExit: 3"),
                                           (NotImplementedError("Exercise 9: todo"),
                                            "NotImplementedError: Exercise 9: todo")])
def test_learner_exceptions_become_error_text(exc: BaseException, text: str) -> None:
    """Whatever the function raises is reported as "Type: message"."""
    def raises(x: np.ndarray) -> None:
        raise exc

    run = run_exercise(SUM, raises, seed=3)
    assert run.error == text and run.result is None and not run.timed_out
    report = grade_run(SUM, run)
    assert f"the function raised {text}" == report.result("returns").reason


def test_previous_current_session_is_restored() -> None:
    """The learner's function talks to a fresh Session; the caller's one is bound again."""
    mine = Session(watchdog=2.0)
    prev = set_current_session(mine)
    try:
        run = run_exercise(SUM, lambda x: current_session(), seed=0)
        assert run.result is not None and run.result is not mine
        assert current_session(create=False) is mine
        with pytest.raises(RuntimeError, match="rubric bug"):
            run_exercise(BAD_ARGS, lambda: None, seed=0)
        assert current_session(create=False) is mine
    finally:
        set_current_session(prev)
        mine.close()


def test_fresh_session_per_run() -> None:
    """State from one run (an init without finalize) does not reach the next."""
    def init_only(x: np.ndarray) -> int:
        return acl.init()

    first = run_exercise(SUM, init_only, seed=0)
    second = run_exercise(SUM, init_only, seed=0)
    assert first.result == 0 and second.result == 0


# =============================================================================== grading
def test_raising_predicate_is_a_rubric_error() -> None:
    """A predicate that raises or returns a non-verdict fails its item; others are judged."""
    report = grade_run("t.3", run_exercise(BROKEN, device_sum, seed=4))
    assert report.result("returns").passed
    broken = report.result("broken")
    assert not broken.passed and broken.reason.startswith("rubric error: ZeroDivisionError")
    shape = report.result("shape")
    assert not shape.passed and shape.reason.startswith("rubric error:")
    assert report.score == 1


def test_violations_fail_every_item() -> None:
    """Any integrity violation fails every item with it as the reason, even a correct run."""
    run = run_exercise(SUM, device_sum, seed=8)
    assert grade_run(SUM, run).passed_all
    bad = dataclasses.replace(run, violations=("the submission modified acl_lab",))
    report = grade_run(SUM, bad)
    assert report.score == 0 and not report.passed_all
    assert {r.reason for r in report.results} == {"the submission modified acl_lab"}
    assert all(not r.passed for r in report.results)


def test_grading_a_run_of_another_exercise_is_refused() -> None:
    run = run_exercise(SUM, device_sum, seed=8)
    with pytest.raises(ValueError, match=r"t\.1"):
        grade_run(HANG, run)


def test_to_rows() -> None:
    report = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=5))
    assert report.to_rows("learner-7") == [("learner-7", "t.1", "returns", 3),
                                          ("learner-7", "t.1", "no_leak", 0),
                                          ("learner-7", "t.1", "async", 1)]


# =============================================================================== figures
def test_memory_map_figure_shows_the_leaked_allocation() -> None:
    """The leak item's view marks the leaked block, allocated at the learner's line."""
    site = f"{HERE}:{line_of(leaky_sum, '# LEAKED')}"
    fig = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=5)).figure("no_leak")
    leaked = [d for d in fig.data if d.name == "leaked"]
    assert leaked and any(site in text for text in leaked[0].hovertext)
    clean = grade_run(SUM, run_exercise(SUM, device_sum, seed=5)).figure("no_leak")
    assert clean is not None and not [d for d in clean.data if d.name == "leaked"]


def test_figure_none_when_nothing_to_draw() -> None:
    """No item view, or nothing for the view to draw, gives None."""
    report = grade_run(SUM, run_exercise(SUM, lambda x: int(x.sum()), seed=5))
    assert report.figure("returns") is None      # the item names no view
    assert report.figure("no_leak") is None      # no allocation at all
    assert report.figure("async") is None        # no call at all
    clean = grade_run(HANG, run_exercise(HANG, lambda: None, seed=0))
    assert clean.figure("completes") is None     # no deadlock finding


def test_timeline_figure_marks_the_copies() -> None:
    fig = grade_run(SUM, run_exercise(SUM, device_sum, seed=6)).figure("async")
    text = json.dumps([d.to_plotly_json() for d in fig.data], default=str)
    assert "memcpy_async" in text


# =============================================================================== HTML
class _Dom(HTMLParser):
    """Elements (tag, attrs, text) of an HTML fragment, for contract checks."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self.stack: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(el)
        self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for el in self.stack:
            el["text"] += data

    def with_class(self, cls: str) -> list[dict[str, Any]]:
        return [e for e in self.elements if cls in (e["attrs"].get("class") or "").split()]


def parse(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    dom.close()
    return dom


def test_html_follows_the_dom_contract_and_escapes_learner_text() -> None:
    """Root, items and score carry the agreed classes and data attributes; text is escaped."""
    payload = "<script>alert('x')</script>"
    report = grade_run(ECHO, run_exercise(ECHO, lambda: payload, seed=0))
    text = report.to_html()
    dom = parse(text)
    assert not [e for e in dom.elements if e["tag"] == "script"]
    assert not [e for e in dom.elements if e["tag"] == "b" and "not bold" in e["text"]]
    [root] = dom.with_class("acl-lab-check")
    assert root["attrs"]["data-exercise"] == "t.4"
    items = {e["attrs"]["data-item"]: e for e in dom.with_class("acl-lab-item")}
    assert {k: e["attrs"]["data-status"] for k, e in items.items()} == {"echo": "fail",
                                                                        "fine": "pass"}
    assert payload in items["echo"]["text"]            # shown verbatim, as text
    assert "<b>not bold</b>" in items["echo"]["text"]   # the hint is text too
    assert "Hint" not in items["fine"]["text"]          # hints only for failures
    assert "ok & fine" in items["fine"]["text"]
    [score] = dom.with_class("acl-lab-score")
    m = re.fullmatch(r"(\d+)/(\d+) items passed \((\d+)/(\d+) points\)", score["text"].strip())
    assert m is not None
    assert tuple(int(g) for g in m.groups()) == (1, 2, report.score, report.total) == (1, 2, 1, 3)
    assert "all items passed" not in root["text"].lower()
    assert "Quote &lt;the&gt; learner" in text


def test_all_passed_only_when_everything_passed() -> None:
    good = grade_run(SUM, run_exercise(SUM, device_sum, seed=2))
    dom = parse(good.to_html())
    assert "All items passed" in dom.with_class("acl-lab-check")[0]["text"]
    assert {e["attrs"]["data-status"] for e in dom.with_class("acl-lab-item")} == {"pass"}
    assert good._repr_html_() == good.to_html(include_figures=False)
    assert "All items passed" in str(good)
    bad = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=2))
    assert "all items passed" not in bad.to_html().lower()
    assert "all items passed" not in str(bad).lower()


def test_html_embeds_the_failing_view_and_plotlyjs_once() -> None:
    """Figures of failed items are embedded; plotly.js goes inline in the first one only."""
    leak = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=5))
    hang = grade_run(HANG, run_exercise(HANG, blocking_callback, seed=0))
    one = leak.to_html(include_figures=True)
    views = [e["attrs"]["data-view"] for e in parse(one).with_class("acl-lab-figure")]
    assert views == ["memory_map"]
    assert one.count("* plotly.js v") == 1
    assert leak.to_html(include_figures=True, include_plotlyjs=False).count("* plotly.js") == 0
    page = feedback_page([leak, hang], title="learner 7 <feedback>")
    assert page.count("* plotly.js v") == 1
    assert "learner 7 &lt;feedback&gt;" in page
    views = [e["attrs"]["data-view"] for e in parse(page).with_class("acl-lab-figure")]
    assert views == ["memory_map", "wait_graph"]
    assert not [e for e in parse(page).elements if e["tag"] == "script" and e["attrs"].get("src")]


# =============================================================================== check()
def test_check_in_plain_python_returns_the_report() -> None:
    report = check("t.1", device_sum, seed=9)
    assert isinstance(report, Report) and report.passed_all
    assert report.seed == 9 and report.exercise is SUM


def test_check_refuses_a_result_instead_of_a_function() -> None:
    with pytest.raises(TypeError, match="did you call it"):
        check(SUM, 42)


def test_widget_holds_the_report_and_the_failing_view() -> None:
    """The widget: the report HTML, then each failed item's view as a plotly output."""
    report = grade_run(SUM, run_exercise(SUM, leaky_sum, seed=5))
    box = report_widget(report)
    html_part = box.children[0].value
    assert parse(html_part).with_class("acl-lab-check")
    outputs = [c for c in box.children if type(c).__name__ == "Output"]
    assert len(outputs) == 1
    data = outputs[0].outputs[0]["data"]
    fig_json = data["application/vnd.plotly.v1+json"]
    json.dumps(fig_json)  # the frontend gets plain JSON
    assert "leaked" in [t.get("name") for t in fig_json["data"]]


class _FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, list[Any]] = {}

    def register(self, name: str, fn: Any) -> None:
        self.callbacks.setdefault(name, []).append(fn)


class _FakeKernelShell:
    kernel = object()

    def __init__(self) -> None:
        self.events = _FakeEvents()


def test_check_in_a_kernel_displays_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a kernel check() displays the widget; the cell's auto-display does not repeat it."""
    import sys

    import IPython.display

    import acl_lab.grading.check  # noqa: F401 - the module (the package binds the function)

    check_mod = sys.modules["acl_lab.grading.check"]
    shell = _FakeKernelShell()
    shown: list[Any] = []
    monkeypatch.setattr(check_mod, "_kernel", lambda: shell)
    monkeypatch.setattr(check_mod, "_hook_installed", False)
    monkeypatch.setattr(IPython.display, "display", lambda *objs, **kw: shown.extend(objs))
    report = check(SUM, leaky_sum, seed=5)
    [bundle] = shown
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # without widget state (a static export) the report's HTML, with the DOM contract, shows
    assert parse(bundle["text/html"]).with_class("acl-lab-item")
    assert "1 item(s) to fix" in bundle["text/plain"]
    report._ipython_display_()          # the cell's automatic display of the return value
    assert len(shown) == 1
    for cb in shell.events.callbacks["post_run_cell"]:
        cb(None)
    report._ipython_display_()          # a later cell showing the report again
    assert len(shown) == 2


# =============================================================================== notebooks
def _nb(cells: list[dict[str, Any]], exercises: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    if exercises is not None:
        meta["acl_lab"] = {"exercises": exercises}
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": meta, "cells": cells}


def _code(source: str, *tags: str) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {"tags": list(tags)}, "source": source,
            "outputs": [], "execution_count": None}


LEARNER_CELL = '''\
def device_sum(x):
    import acl
    acl.init()
    acl.rt.set_device(0)
    dev, ret = acl.rt.malloc(x.nbytes, 0)
    acl.rt.memcpy(dev, x.nbytes, acl.util.bytes_to_ptr(x.tobytes()), x.nbytes, 1)
    out = bytes(x.nbytes)
    acl.rt.memcpy(acl.util.bytes_to_ptr(out), x.nbytes, dev, x.nbytes, 2)
    acl.rt.free(dev)
    acl.rt.reset_device(0)
    acl.finalize()
    return int(np.frombuffer(out, dtype=np.int64).sum())
'''


def test_learner_namespace_skips_check_cells_and_survives_errors(tmp_path: Path) -> None:
    """Cells run in order in one namespace; check cells and magics are skipped; errors noted."""
    nb = _nb([
        {"cell_type": "markdown", "metadata": {}, "source": ["# Exercise t.1"]},
        _code("%matplotlib inline\nimport numpy as np\nimport acl_lab\nacl_lab.install()\n"
              "x = 1\n"),
        _code("1 / 0\n"),
        _code(["y = x + 1\n", "!ls\n", "if True:\n", "    %time z = 3\n",
               "display('no kernel here')\n"]),
        _code("checked = True\nraise RuntimeError('check cells must not run')\n", "check"),
        _code(LEARNER_CELL, "learner"),
        _code("cwd = __import__('os').getcwd()\n"),
        _code("undefined_name\n"),
    ], exercises=["t.1"])
    path = tmp_path / "t1.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    mine = Session(watchdog=2.0)
    prev = set_current_session(mine)
    before = os.getcwd()
    try:
        ns = learner_namespace(path)
        assert current_session(create=False) is mine
    finally:
        set_current_session(prev)
        mine.close()
    assert os.getcwd() == before
    assert ns["__name__"] == "__learner__"
    assert ns["y"] == 2 and "z" not in ns
    assert "checked" not in ns
    assert ns["cwd"] == str(tmp_path.resolve())
    assert ns["__cell_errors__"] == [(2, "ZeroDivisionError: division by zero"),
                                     (7, "NameError: name 'undefined_name' is not defined")]
    assert notebook_exercises(path) == ["t.1"]
    report = grade_run(SUM, run_exercise(SUM, ns["device_sum"], seed=12))
    assert report.result("returns").passed and report.result("no_leak").passed
    # the learner's calls point at the notebook cell
    site_files = {f for f, _ in map(report.run.trace.call_site,
                                    report.run.trace.calls_named("acl.rt.malloc"))}
    assert site_files == {"t1.ipynb[cell 5]"}


def test_notebook_without_exercises(tmp_path: Path) -> None:
    path = tmp_path / "plain.ipynb"
    path.write_text(json.dumps(_nb([_code("a = 1")])), encoding="utf-8")
    assert notebook_exercises(path) == []
    ns = learner_namespace(path, skip_tags=())
    assert ns["a"] == 1 and ns["__cell_errors__"] == []


def test_importing_grading_imports_no_plotly_or_ipython() -> None:
    """``from acl_lab.grading import check`` stays light until something is displayed."""
    import subprocess
    import sys

    code = ("import sys\nfrom acl_lab.grading import check\n"
            "print(sorted(m for m in ('plotly', 'IPython', 'ipywidgets', 'pandas') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=HERE.parents[2])
    assert out.stdout.strip() == "[]"


def test_widget_draws_each_view_once_for_several_failed_items() -> None:
    """Two failed items pointing at the timeline give one timeline, captioned with both."""
    def never(run: Run) -> tuple[bool, str]:
        return False, f"{len(run.trace.calls['ret'])} calls, none of them right"

    ex = Exercise("t.dup", "two items, one view", "fn", (
        Item("first", "first requirement", 1, never, "hint 1", view="timeline"),
        Item("second", "second requirement", 1, never, "hint 2", view="timeline"),
        Item("third", "third requirement", 1, never, "hint 3", view="memory_map"),
    ))

    def fn() -> None:
        import acl
        assert acl.init() == 0
        ptr, _ = acl.rt.malloc(64, 0) if acl.rt.set_device(0) == 0 else (0, 1)
        acl.rt.free(ptr)

    box = report_widget(grade_run(ex, run_exercise(ex, fn, seed=1)))
    outputs = [c for c in box.children if type(c).__name__ == "Output"]
    captions = [c.value for c in box.children[1:] if type(c).__name__ == "HTML"]
    assert len(outputs) == 2
    assert len(captions) == 2
    assert "first requirement; second requirement" in captions[0]
    assert "third requirement" in captions[1]


def test_run_says_why_there_is_no_result_and_where_a_call_was() -> None:
    """``Run.no_result`` for time-outs, exceptions (first line only) and returns;
    ``Run.site`` gives the learner's file:line of a call."""
    hung = run_exercise(HANG, blocking_callback, seed=0)
    why = hung.no_result()
    assert why is not None and why.startswith("your function raised DeadlockError")
    assert "\n" not in why
    box: list[threading.Thread] = []
    slow = run_exercise(HANG, lambda: _loops_forever(box, False), seed=0, time_limit=1.0)
    assert slow.no_result() == f"your function did not finish: {slow.error}"
    fine = run_exercise(SUM, device_sum, seed=3)
    assert fine.no_result() is None
    cid = int(fine.trace.calls_named("acl.rt.malloc")[0])
    file, line = fine.trace.call_site(cid)
    assert fine.site(cid) == f"{file}:{line}" and file.endswith("test_core.py")


def test_acl_lab_install_is_not_a_change_of_the_graders_tools() -> None:
    """The integrity snapshot counts acl_lab.install's own os.read (a read in the host
    schedule) as the original: installing and uninstalling in a submission is no violation,
    while any other os.read is (every graded notebook scored 0 when it was not)."""
    import os

    import acl_lab
    from acl_lab.grading.worker import diff_snapshots, snapshot_acl_lab

    acl_lab.uninstall()
    before = snapshot_acl_lab()
    acl_lab.install()
    acl_lab.uninstall()
    acl_lab.install()
    try:
        assert not [v for v in diff_snapshots(before, snapshot_acl_lab())
                    if "grader's tools" in v]
        ours = os.read
        os.read = lambda fd, n: ours(fd, n)
        try:
            assert "submission modified the grader's tools: os.read" in \
                diff_snapshots(before, snapshot_acl_lab())
        finally:
            os.read = ours
    finally:
        acl_lab.uninstall()
