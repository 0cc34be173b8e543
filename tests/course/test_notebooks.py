"""The course CI: every notebook runs headless, and every notebook follows the course's rules.

The notebooks are found at collection time in ``notebooks/``, ``exercises/`` and ``solutions/``,
so a notebook added to any of them is tested without touching this file. Each one runs top to
bottom in its own ``python3`` kernel (nbclient), in a temporary copy of its folder, so nothing
it writes lands in the repository; the wall time of each run is printed and recorded as a test
property, not asserted (the machine may be busy).

The static rules (the course's, and the exercise conventions of ``acl_lab.grading.notebook``):
stored without outputs, valid nbformat 4.5 with cell ids, kernel ``python3``, a goal in the first
(markdown) cell; exercise notebooks list their ids in ``metadata.acl_lab.exercises``, have a
cell tagged ``check`` calling ``check("<id>", ...)`` for each id and learner cells (tagged
``learner``) marked ``# YOUR CODE HERE``; ``solutions/`` holds a completed twin of every
exercise notebook with the same ids; course notebooks ask the learner to predict before running
and draw at least one view.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("notebooks", "exercises", "solutions")
#: Seconds one cell may run before nbclient stops the notebook.
CELL_TIMEOUT_S = 120
LEARNER_MARK = "# YOUR CODE HERE"
#: The file names ipykernel and IPython compile cells under (never shown to a learner).
TEMP_CELL_FILE = re.compile(r"ipykernel_\d+|<ipython-input-")
#: The view functions of acl_lab; a course notebook must call at least one.
VIEW_CALL = re.compile(
    r"\b(timeline|memory_map|wait_graph|race_view|overlap_figure|explore)\s*\(")


def _find(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).glob("*.ipynb"))


ALL = _find(*FOLDERS)
COURSE = _find("notebooks")


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _read(path: Path) -> Any:
    return nbformat.read(str(path), as_version=nbformat.NO_CONVERT)


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _exercise_ids(nb: Any) -> list[str]:
    ids = nb.metadata.get("acl_lab", {}).get("exercises", [])
    assert isinstance(ids, list), "metadata.acl_lab.exercises must be a list of ids"
    return [str(i) for i in ids]


def _files_outside_notebooks(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")
            if p.suffix != ".ipynb" and ".ipynb_checkpoints" not in p.parts}


# ----------------------------------------------------------------------------- execution
@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=_name)
def test_notebook_runs_without_errors(path: Path, tmp_path: Path,
                                      record_property: Any) -> None:
    """The notebook executes top to bottom in a fresh kernel with no cell raising."""
    nb = nbformat.read(str(path), as_version=4)
    work = tmp_path / path.parent.name
    # a copy of the notebook's folder (helper files included) is the working directory
    shutil.copytree(path.parent, work, ignore=shutil.ignore_patterns(
        "*.ipynb", ".ipynb_checkpoints", "__pycache__"))
    before = _files_outside_notebooks(path.parent)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(work)}})
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as e:
        pytest.fail(f"{_name(path)}: a cell raised an error\n{e}", pytrace=False)
    seconds = time.perf_counter() - start
    record_property("seconds", round(seconds, 2))
    print(f"{_name(path)}: executed in {seconds:.1f} s")
    ran = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in ran), "some code cells did not run"
    errors = [o for c in ran for o in c.outputs if o.output_type == "error"
              and "raises-exception" not in _tags(c)]
    assert not errors, f"{_name(path)}: error outputs: {[o.ename for o in errors]}"
    # a learner never sees the kernel's temporary cell files: sites name the cell (In[n])
    temp = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
            and TEMP_CELL_FILE.search(json.dumps(c.outputs))]
    assert not temp, f"{_name(path)}: cells {temp} show the kernel's temporary file"
    new = _files_outside_notebooks(path.parent) - before
    assert not new, f"{_name(path)} wrote into the repository: {sorted(map(str, new))}"


# ----------------------------------------------------------------------------- static rules
@pytest.mark.parametrize("path", ALL, ids=_name)
def test_notebook_is_stored_clean_and_valid(path: Path) -> None:
    """No outputs, valid nbformat 4.5 with cell ids, python3 kernel, a goal at the top."""
    nb = _read(path)
    nbformat.validate(nb)
    assert (nb.nbformat, nb.nbformat_minor) >= (4, 5), "needs nbformat 4.5 (cell ids)"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert nb.cells, "empty notebook"
    for i, cell in enumerate(nb.cells):
        assert cell.get("id"), f"cell {i} has no id"
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {i} is stored with outputs"
            assert cell.execution_count is None, f"cell {i} is stored with an execution count"
    first = nb.cells[0]
    assert first.cell_type == "markdown", "the first cell must be markdown stating the goal"
    assert re.search(r"\bgoal\b", first.source, re.IGNORECASE), \
        "the first cell must state the notebook's goal"


@pytest.mark.parametrize("path", _find("exercises", "solutions"), ids=_name)
def test_exercise_notebook_has_ids_and_check_cells(path: Path) -> None:
    """Every exercise id has its check cell; starters leave code to write, solutions do not."""
    nb = _read(path)
    ids = _exercise_ids(nb)
    assert ids, "metadata.acl_lab.exercises lists no exercise"
    assert len(set(ids)) == len(ids), f"duplicate exercise ids {ids}"
    checks = [c.source for c in nb.cells if c.cell_type == "code" and "check" in _tags(c)]
    for ex_id in ids:
        call = re.compile(r"\bcheck\(\s*['\"]" + re.escape(ex_id) + r"['\"]")
        assert any(call.search(src) for src in checks), \
            f"no cell tagged 'check' calls check({ex_id!r}, ...)"
    learner = [c.source for c in nb.cells if c.cell_type == "code" and "learner" in _tags(c)]
    assert learner, "no cell tagged 'learner'"
    if path.parent.name == "exercises":
        unmarked = [src.splitlines()[0] if src else "" for src in learner
                    if LEARNER_MARK not in src]
        assert not unmarked, f"learner cells without {LEARNER_MARK!r}: {unmarked}"
    else:
        left = [src.splitlines()[0] for src in learner if LEARNER_MARK in src]
        assert not left, f"solution cells still marked {LEARNER_MARK!r}: {left}"


def test_solutions_match_exercises() -> None:
    """solutions/ holds a twin of every exercise notebook (same file name, same ids)."""
    exercises = {p.name: p for p in _find("exercises")}
    solutions = {p.name: p for p in _find("solutions")}
    assert sorted(exercises) == sorted(solutions), \
        f"exercises without a solution: {sorted(set(exercises) - set(solutions))}; " \
        f"solutions without an exercise: {sorted(set(solutions) - set(exercises))}"
    for name, path in exercises.items():
        assert _exercise_ids(_read(path)) == _exercise_ids(_read(solutions[name])), \
            f"{name}: the exercise and its solution list different ids"


def test_course_notebooks_are_found() -> None:
    """The collection globs see the course (a broken path would silently test nothing)."""
    names = [p.name for p in COURSE]
    assert len(names) >= 4 and names[0].startswith("00_"), names


@pytest.mark.parametrize("path", COURSE, ids=_name)
def test_course_notebook_predicts_and_draws(path: Path) -> None:
    """A "predict, then run" prompt followed by code, and at least one view drawn."""
    cells = _read(path).cells
    prompts = [i for i, c in enumerate(cells)
               if c.cell_type == "markdown" and re.search(r"\bpredict\b", c.source, re.I)]
    assert any(i + 1 < len(cells) and cells[i + 1].cell_type == "code" for i in prompts), \
        "no markdown cell asking to predict is followed by the code cell that shows it"
    code = "\n".join(c.source for c in cells if c.cell_type == "code")
    assert VIEW_CALL.search(code), "no view (timeline, memory_map, ...) is drawn"


def test_explorer_is_used_from_notebook_01_on() -> None:
    """The explorer (findings, timeline, memory map and source linked) is part of the course:
    notebook 01 introduces it and at least three course notebooks use it."""
    explore = re.compile(r"\bexplore\s*\(")
    using = [p.name for p in COURSE if not p.name.startswith("00_")
             and any(c.cell_type == "code" and explore.search(c.source)
                     for c in _read(p).cells)]
    assert len(using) >= 3, using
    assert any(n.startswith("01_") for n in using), using
