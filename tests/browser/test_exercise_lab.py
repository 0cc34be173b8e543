"""Exercise 04 in a real JupyterLab, driven by headless Chromium (Python Playwright).

JupyterLab runs on 127.0.0.1 with a token, isolated folders and a ``python3`` kernel spec
running this interpreter (the venv, so the kernel imports the acl_lab under test), on a
temporary copy of the repository's ``exercises/`` folder. ``_drive_exercise.py`` (a
subprocess) runs ``04_buffer_pitfalls.ipynb`` through Run > Run All Cells and reads the four
check widgets; then it pastes the solution's text of part 1 into the part 1 learner cell's
editor, reruns that cell and its check, and reads the widgets again. Checked: the starter's
04.1 check shows failed items (the wrong output and the size mismatch), the fixed one shows
every rubric item passed, the other checks are untouched, no JavaScript error. Screenshots
(before and after) go to ``test-artifacts/``. The server is always killed at the end.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from acl_lab.grading import get_exercise
from tests.browser._browser import Driver
from tests.browser._lab_server import jupyter_lab

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "04_buffer_pitfalls.ipynb"
EXERCISE = "04.1"
LEARNER_CELL = "part1-learner"
#: Seconds the whole browser session may take (it usually takes about 25).
DRIVER_TIMEOUT = 150.0


def _cell_source(path: Path, cell_id: str) -> str:
    """The source of the cell with nbformat id ``cell_id``."""
    (cell,) = [c for c in json.loads(path.read_text())["cells"] if c.get("id") == cell_id]
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else str(src)


def test_fixing_part_one_turns_its_check_green(tmp_path: Path, run_driver: Driver,
                                               artifacts: Path) -> None:
    """Run All shows the starter failing 04.1; pasting the solution's cell and rerunning it
    and its check shows every 04.1 item passed."""
    root = tmp_path / "exercises"
    shutil.copytree(REPO / "exercises", root)
    parts = json.loads((root / NOTEBOOK).read_text())["metadata"]["acl_lab"]["exercises"]
    solution = _cell_source(REPO / "solutions" / NOTEBOOK, LEARNER_CELL)
    assert solution != _cell_source(root / NOTEBOOK, LEARNER_CELL)
    source_file = tmp_path / "solution-cell.py"
    source_file.write_text(solution)
    stem = f"exercise-lab-{EXERCISE.replace('.', '_')}"
    for old in artifacts.glob(f"{stem}-*.png"):
        old.unlink()

    with jupyter_lab(tmp_path, root) as (base, token):
        seen = run_driver("_drive_exercise", "--base", base, "--token", token,
                          "--notebook", NOTEBOOK, "--exercise", EXERCISE,
                          "--cell-id", LEARNER_CELL, "--source-file", str(source_file),
                          "--checks", str(len(parts)), "--screenshots", str(artifacts),
                          timeout=DRIVER_TIMEOUT)

    assert seen["step"] == "done", seen.get("error")
    assert seen["page_errors"] == [], "JavaScript errors in JupyterLab"
    assert seen["external_requests"] == []
    rubric = [i.id for i in get_exercise(EXERCISE).items]
    before, after = seen["before"], seen["after"]
    assert sorted(before) == sorted(parts), before
    first = before[EXERCISE]["items"]
    assert list(first) == rubric
    assert "fail" in first.values(), first
    assert first["correct"] == "fail" and first["no_size_mismatch"] == "fail", first

    assert seen["cell_source"] == solution
    fixed = after[EXERCISE]["items"]
    assert fixed == dict.fromkeys(rubric, "pass"), fixed
    assert after[EXERCISE]["score"].startswith(f"{len(rubric)}/{len(rubric)} items passed")
    for part in parts:
        if part != EXERCISE:
            assert after[part] == before[part], part  # only part 1 was rerun
    for shot in seen["screenshots"]:
        assert Path(shot).stat().st_size > 5_000
    assert {Path(s).name for s in seen["screenshots"]} == {f"{stem}-before.png",
                                                          f"{stem}-after.png"}
