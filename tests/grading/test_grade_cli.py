"""``acl-lab grade`` end to end: submissions in subprocesses, the CSV, the feedback pages.

One grading run over several learners (module fixture) serves most tests; the learners are
built from the demo rubric's exercises (``submissions/demo_rubric.py``). The last test grades
every real ``exercises/X.ipynb`` + ``solutions/X.ipynb`` pair of the repository.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from acl_lab.grading.notebook import notebook_exercises
from acl_lab.grading.worker import UnserialisableError, decode_result, encode_result

from .submissions.builders import (
    IMPORTS,
    ROUND_TRIP_HOST_ONLY,
    ROUND_TRIP_LEAKY,
    SCALE,
    GradeRun,
    honest_cells,
    run_grade,
    write_notebook,
)

REPO = Path(__file__).resolve().parents[2]
#: make test runs the grader tests one after another (the browser tests run beside them), so
#: two whole acl-lab grade runs never share the machine; the hang guard covers a module
#: fixture's grading run
pytestmark = pytest.mark.timeout(900)
HEADER = "learner,exercise,item,points,max_points,passed,reason,flag"
#: A learner's folder name with HTML metacharacters: the page must escape it.
ODD_NAME = 'learner <i>&"x'
#: Allocates and never frees, copies nothing, returns the right values.
ALLOCATES_ONLY = """
def round_trip(x):
    acl.init()
    acl.rt.set_device(0)
    dev, ret = acl.rt.malloc(x.nbytes, 2)
    return x.copy()
"""
#: Every learner folder of the ``graded`` fixture.
LEARNERS = ("solver", "starter_copy", "syntax_error", ODD_NAME, "leaky", "lambda_result",
            "nobody", "corrupt")
DEMO_ITEMS = {"90.1": {"correct": 2, "on_device": 1, "no_leak": 1}, "90.2": {"correct": 1}}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> GradeRun:
    """One ``acl-lab grade`` over learners covering the ordinary outcomes."""
    root = tmp_path_factory.mktemp("grade")
    subs = root / "submitted"
    write_notebook(subs / "solver" / "demo.ipynb", honest_cells())
    # the starter: right values, no device work, and no scale() at all
    write_notebook(subs / "starter_copy" / "demo.ipynb", [IMPORTS, ROUND_TRIP_HOST_ONLY])
    # a syntax error in the cell that defines round_trip; scale() is fine
    write_notebook(subs / "syntax_error" / "demo.ipynb",
                   [IMPORTS, "def round_trip(x) oops:\n    return x\n", SCALE])
    # leaks, and round_trip raises an exception whose text is HTML
    bad = ROUND_TRIP_LEAKY.replace("    return y\n",
                                   "    raise ValueError('<script>alert(1)</script>')\n")
    write_notebook(subs / ODD_NAME / "nested" / "demo.ipynb", [IMPORTS, bad, SCALE])
    # device work that is not freed and no copies: two failing items that name a view
    write_notebook(subs / "leaky" / "demo.ipynb", [IMPORTS, ALLOCATES_ONLY, SCALE])
    # round_trip returns something that cannot cross the process boundary
    write_notebook(subs / "lambda_result" / "demo.ipynb",
                   [IMPORTS, "def round_trip(x):\n    return lambda: x\n", SCALE])
    (subs / "nobody").mkdir()  # a learner who submitted nothing
    (subs / "corrupt").mkdir()
    (subs / "corrupt" / "demo.ipynb").write_text("this is not a notebook", encoding="utf-8")
    return run_grade(subs, root / "out", "--timeout", "60", "--memory-mb", "2000")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_exit_code_and_outputs(graded: GradeRun) -> None:
    """Grading completes with exit 0 although learners failed, and writes every output."""
    assert graded.proc.returncode == 0, graded.proc.stderr
    assert {p.stem for p in graded.out.glob("*.html")} == set(LEARNERS)
    assert (graded.out / "grades.csv").is_file()


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_full_points_for_a_solution(graded: GradeRun) -> None:
    """Every item of both exercises passes for the complete solution."""
    rows = graded.learner_rows("solver")
    assert {(r["exercise"], r["item"]) for r in rows} == {
        (e, i) for e, items in DEMO_ITEMS.items() for i in items}
    assert all(r["passed"] == "true" and r["points"] == r["max_points"] for r in rows), rows
    assert graded.points("solver") == (5, 5)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_partial_starter(graded: GradeRun) -> None:
    """The host-only starter keeps the value points, loses the device item and gets 0 for
    the missing function, with the reason."""
    rows = {(r["exercise"], r["item"]): r for r in graded.learner_rows("starter_copy")}
    assert rows[("90.1", "correct")]["points"] == "2"
    assert rows[("90.1", "on_device")]["points"] == "0"
    assert "memcpy" in rows[("90.1", "on_device")]["reason"]
    assert rows[("90.2", "correct")]["points"] == "0"
    assert "no function named 'scale'" in rows[("90.2", "correct")]["reason"]
    assert graded.points("starter_copy") == (3, 5)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_syntax_error_in_one_cell(graded: GradeRun) -> None:
    """A cell that does not compile costs the exercise it defines, names the cell and the
    error, and the other cells still run."""
    rt = graded.learner_rows("syntax_error", "90.1")
    assert [r["points"] for r in rt] == ["0", "0", "0"]
    assert all("round_trip" in r["reason"] and "SyntaxError" in r["reason"] for r in rt)
    assert graded.points("syntax_error", "90.2") == (1, 1)
    assert "SyntaxError" in graded.html("syntax_error")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_unserialisable_result(graded: GradeRun) -> None:
    """A return value that cannot leave the grading process fails with that reason."""
    rows = {r["item"]: r for r in graded.learner_rows("lambda_result", "90.1")}
    assert rows["correct"]["points"] == "0"
    assert "unserialisable result of type function" in rows["correct"]["reason"]
    assert graded.points("lambda_result", "90.2") == (1, 1)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_csv_header_and_rows(graded: GradeRun) -> None:
    """The exact header, one row per learner x exercise x item, consistent columns."""
    text = (graded.out / "grades.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER
    rows = graded.rows()
    expected = {(lr, e, i) for lr in LEARNERS for e, items in DEMO_ITEMS.items() for i in items}
    keys = [(r["learner"], r["exercise"], r["item"]) for r in rows]
    assert len(keys) == len(set(keys)) and set(keys) == expected
    for r in rows:
        assert int(r["max_points"]) == DEMO_ITEMS[r["exercise"]][r["item"]]
        assert (r["passed"] == "true") == (int(r["points"]) == int(r["max_points"]) > 0)
        assert r["reason"] and "\n" not in r["reason"]
    for learner in ("nobody", "corrupt"):
        rows = graded.learner_rows(learner)
        assert rows and all(r["points"] == "0" and "no submitted notebook holds exercise "
                            f"{r['exercise']}" in r["reason"] for r in rows)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_unreadable_notebook_is_reported(graded: GradeRun) -> None:
    """A file that is not a notebook costs its learner the points and is named on the page."""
    page = graded.html("corrupt")
    assert "could not read demo.ipynb" in page and "Total: 0/5 points" in page


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_summary_table_matches_csv(graded: GradeRun) -> None:
    """The summary on stdout gives each learner's CSV total."""
    lines = graded.proc.stdout.splitlines()
    assert lines[0].split() == ["learner", "90.1", "90.2", "total"]
    for learner in ("solver", "starter_copy", "syntax_error", "leaky", "nobody"):
        line = next(ln for ln in lines if ln.split()[0] == learner)
        got, total = graded.points(learner)
        assert line.split()[-1] == f"{got}/{total}"


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_progress_on_stderr(graded: GradeRun) -> None:
    """A progress line per notebook, counting up to the total, naming the learner."""
    steps = re.findall(r"^grade \[[#.]+\] (\d+)/(\d+) (.+)/[^/]+\.ipynb: \d+/\d+ points",
                       graded.proc.stderr, flags=re.MULTILINE)
    assert [int(d) for d, _, _ in steps] == [1, 2, 3, 4, 5, 6]
    assert {int(t) for _, t, _ in steps} == {6}
    assert {n for _, _, n in steps} == {
        "solver", "starter_copy", "syntax_error", f"{ODD_NAME}/nested", "leaky", "lambda_result"}
    assert "8 learner(s), 6 notebook(s)" in graded.proc.stderr


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_feedback_page_escapes_learner_text(graded: GradeRun) -> None:
    """The page of a learner with an HTML-like name and error shows both as text."""
    page = graded.html(ODD_NAME)
    assert "<i>" not in page and "learner &lt;i&gt;&amp;&quot;x" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert re.search(r'data-item="no_leak" data-status="fail"', page)


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_feedback_page_content(graded: GradeRun) -> None:
    """A page holds the total, each exercise's items with status, and failure reasons."""
    page = graded.html("starter_copy")
    assert "Total: 3/5 points" in page
    assert 'data-item="correct" data-status="pass"' in page
    assert 'data-item="on_device" data-status="fail"' in page
    assert "no function named &#x27;scale&#x27;" in page
    assert "Total: 5/5 points" in graded.html("solver")


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_figures_offline_and_plotlyjs_once(graded: GradeRun) -> None:
    """Two failed items with views: both figures drawn, plotly.js inline once, no URL."""
    page = graded.html("leaky")
    assert page.count('class="acl-lab-figure"') == 2
    assert len(re.findall(r"\* plotly\.js v\d", page)) == 1
    assert not re.search(r"<script[^>]*\bsrc=", page)
    assert "Plotly.newPlot" in page
    assert "plotly.js v" not in graded.html("solver")


def test_result_crosses_the_boundary_intact(tmp_path: Path) -> None:
    """Arrays (inside tuples, lists and dicts), numpy scalars and plain values come back
    equal and of the documented types; arrays are plain ``.npy`` files."""
    value = (np.arange(6, dtype=np.int16).reshape(2, 3), [np.float32(1.5), None, True, "s"],
             {"k": np.ones(3), 7: b"\x00\xff", "c": 1 + 2j, "n": np.int64(-3)})
    doc = json.loads(json.dumps(encode_result(value, tmp_path)))
    back = decode_result(doc, tmp_path)
    assert isinstance(back, tuple) and isinstance(back[1], list) and isinstance(back[2], dict)
    np.testing.assert_array_equal(back[0], value[0])
    assert back[0].dtype == np.int16
    assert back[1] == [1.5, None, True, "s"] and type(back[1][0]) is float
    np.testing.assert_array_equal(back[2]["k"], np.ones(3))
    assert back[2][7] == b"\x00\xff" and back[2]["c"] == 1 + 2j and back[2]["n"] == -3
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".npy", ".npy"]


@pytest.mark.parametrize(("value", "name"), [
    (object(), "object"), (np.array([object()]), "numpy array of dtype object"),
    ([1, {2.5: "x"}], "dict key of type float"), (lambda: 0, "function")])
def test_unserialisable_values_are_named(tmp_path: Path, value: object, name: str) -> None:
    """What cannot be carried is reported with its type, and no learner code runs."""
    with pytest.raises(UnserialisableError, match=re.escape(name)):
        encode_result(value, tmp_path)


def test_decoding_rejects_forged_file_names(tmp_path: Path) -> None:
    """A result description naming a file outside the exercise folder is refused."""
    with pytest.raises(ValueError, match="bad array file name"):
        decode_result({"t": "ndarray", "file": "../../etc/passwd"}, tmp_path)


def test_decoding_reads_each_array_once_and_bounds_their_total(tmp_path: Path) -> None:
    """A sparse 128 MiB array named 24 times is read once (one object, not 3 GB); arrays
    past the total bound are refused before they are read."""
    np.lib.format.open_memmap(tmp_path / "a0.npy", mode="w+", dtype=np.uint8,
                              shape=(128 << 20,)).flush()
    node = {"t": "list", "items": [{"t": "ndarray", "file": "a0.npy"}] * 24}
    back = decode_result(node, tmp_path)
    assert len(back) == 24 and all(a is back[0] for a in back)
    np.lib.format.open_memmap(tmp_path / "a1.npy", mode="w+", dtype=np.uint8,
                              shape=(600 << 20,)).flush()
    with pytest.raises(ValueError, match="hold more than 512 MiB"):
        decode_result({"t": "list", "items": [{"t": "ndarray", "file": "a1.npy"}]}, tmp_path)


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    """A submissions folder that does not exist: exit 2 and a message naming it."""
    res = run_grade(tmp_path / "absent", tmp_path / "out", timeout=60, cwd=tmp_path)
    assert res.proc.returncode == 2
    assert "absent: no such folder" in res.proc.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_exercise_id_is_rejected(tmp_path: Path) -> None:
    """``--exercise`` with an id nobody registered: exit 2, the known ids listed."""
    (tmp_path / "subs").mkdir()
    res = run_grade(tmp_path / "subs", tmp_path / "out", "--exercise", "99.9", timeout=60)
    assert res.proc.returncode == 2
    assert "99.9" in res.proc.stderr and "90.1" in res.proc.stderr


def test_exercise_filter_and_release_metadata(tmp_path: Path) -> None:
    """``--exercise`` grades only that id; the released starter's metadata, not the
    learner's edited copy, says what a notebook holds."""
    subs, release = tmp_path / "subs", tmp_path / "release"
    write_notebook(release / "demo.ipynb", [IMPORTS])
    # the learner removed 90.2 from the metadata; it is still graded (and solved)
    write_notebook(subs / "edited_meta" / "demo.ipynb", honest_cells(), exercises=["90.1"])
    res = run_grade(subs, tmp_path / "out", "--timeout", "60", "--exercise", "90.2",
                    "--release", str(release), "--no-figures")
    assert res.proc.returncode == 0, res.proc.stderr
    rows = res.rows()
    assert [(r["exercise"], r["item"], r["points"]) for r in rows] == [("90.2", "correct", "1")]


# ------------------------------------------------------------------ the repository's exercises
def _pairs() -> list[str]:
    starters = {p.name for p in (REPO / "exercises").glob("*.ipynb")}
    return sorted(n for n in starters if (REPO / "solutions" / n).is_file())


PAIRS = _pairs()


@pytest.fixture(scope="module")
def real_graded(tmp_path_factory: pytest.TempPathFactory) -> GradeRun:
    """One grading run: learner ``solution`` submits every solution notebook, learner
    ``starter`` every starter notebook."""
    root = tmp_path_factory.mktemp("real")
    for name in PAIRS:
        for learner, folder in (("solution", "solutions"), ("starter", "exercises")):
            dest = root / "submitted" / learner / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / folder / name, dest)
    return run_grade(root / "submitted", root / "out", "--no-figures", "--timeout", "600",
                     timeout=600 * max(2, 2 * len(PAIRS)))


@pytest.mark.slow
@pytest.mark.parametrize("name", PAIRS)
def test_real_exercise_pair(real_graded: GradeRun, name: str) -> None:
    """The solution gets every item's full points; the starter loses at least one item."""
    assert real_graded.proc.returncode == 0, real_graded.proc.stderr
    ids = notebook_exercises(REPO / "exercises" / name)
    assert ids, f"{name} declares no exercise"
    with open(real_graded.out / "grades.csv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["exercise"] in ids]
    solution = [r for r in rows if r["learner"] == "solution"]
    starter = [r for r in rows if r["learner"] == "starter"]
    assert {r["exercise"] for r in solution} == set(ids)
    assert all(r["points"] == r["max_points"] for r in solution), [
        (r["exercise"], r["item"], r["reason"]) for r in solution if r["passed"] != "true"]
    assert any(r["points"] == "0" for r in starter), starter


def test_grader_startup_failure_is_not_blamed_on_the_learner(tmp_path: Path) -> None:
    """A memory limit too small for the grader itself: every item scores 0 with an internal
    error naming the cause (not "the notebook ended..."), and grading still completes."""
    write_notebook(tmp_path / "subs" / "edited_meta" / "demo.ipynb", honest_cells())
    res = run_grade(tmp_path / "subs", tmp_path / "out", "--memory-mb", "40", "--timeout",
                    "60", "--no-figures")
    assert res.proc.returncode == 0, res.proc.stderr
    rows = res.rows()
    assert len(rows) == 4
    assert all(r["points"] == "0" and r["reason"].startswith(
        "internal grader error: the grading process failed before running the notebook")
        for r in rows), rows
    assert "MemoryError" in rows[0]["reason"]


@pytest.mark.slow  # a whole `acl-lab grade` run (make test, not make check)
def test_grade_and_check_agree_on_a_schedule_dependent_answer(tmp_path: Path) -> None:
    """07.1 with unsubscribe_report before the report loop ends (issue 25: it scored 7/7 or
    0 depending on which thread the operating system ran first, and check() and acl-lab
    grade disagreed): the sandboxed grader fails exactly the item check() fails, under the
    part's host schedules, with the same points."""
    from acl_lab.grading import get_exercise, learner_namespace
    from acl_lab.grading.check import grade
    from tests.course.test_ex05_07 import UNORDERED_07_1

    nb = json.loads((REPO / "solutions" / "07_deadlocks_races.ipynb").read_text("utf-8"))
    (old, new), = UNORDERED_07_1["unsubscribe before the loop ends"]
    (cell,) = [c for c in nb["cells"] if c.get("id") == "collect-with-callback-learner"]
    src = "".join(cell["source"])
    assert old in src
    cell["source"] = src.replace(old, new)
    learner = tmp_path / "subs" / "learner" / "07_deadlocks_races.ipynb"
    learner.parent.mkdir(parents=True)
    learner.write_text(json.dumps(nb), encoding="utf-8")
    res = run_grade(tmp_path / "subs", tmp_path / "out", "--exercise", "07.1", "--timeout",
                    "600", "--no-figures", timeout=1200)
    assert res.proc.returncode == 0, res.proc.stderr
    cli = {r["item"]: int(r["points"]) for r in res.rows() if r["exercise"] == "07.1"}
    ex = get_exercise("07.1")
    fn = learner_namespace(learner)[ex.entry]
    report = grade(ex, fn, seed=3)
    assert cli == {r.item.id: r.points_awarded for r in report.results}, res.rows()
    assert cli["report_thread"] == 0 and sum(cli.values()) == report.score > 0
