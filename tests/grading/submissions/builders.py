"""Build submission folders for ``acl-lab grade`` tests and run the command on them.

The notebooks hold the demo exercises of ``demo_rubric.py`` (``90.1`` ``round_trip`` and
``90.2`` ``scale``), which the grader loads in both processes through
``ACL_LAB_GRADING_EXTRA``.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

DEMO_RUBRIC = Path(__file__).resolve().with_name("demo_rubric.py")
DEMO_EXERCISES = ("90.1", "90.2")

IMPORTS = "import numpy as np\nimport acl_lab\nacl_lab.install()\nimport acl\n"

#: A complete round_trip: init, device and host buffers, both copies, everything released.
ROUND_TRIP = '''
def round_trip(x):
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    n = x.nbytes
    dev, ret = acl.rt.malloc(n, 2)
    host, ret = acl.rt.malloc_host(n)
    acl.rt.memcpy(dev, n, acl.util.bytes_to_ptr(x.tobytes()), n, 1)
    acl.rt.memcpy(host, n, dev, n, 2)
    y = np.frombuffer(acl.util.ptr_to_bytes(host, n), dtype=np.float32).copy()
    acl.rt.free(dev)
    acl.rt.free_host(host)
    acl.rt.reset_device(0)
    acl.finalize()
    return y
'''

#: round_trip that copies both ways but never frees (fails only ``no_leak``).
ROUND_TRIP_LEAKY = ROUND_TRIP.replace("    acl.rt.free(dev)\n", "").replace(
    "    acl.rt.free_host(host)\n", "")

#: The starter's round_trip: the right values without the device (fails ``on_device``).
ROUND_TRIP_HOST_ONLY = "def round_trip(x):\n    return x.copy()\n"

SCALE = "def scale(x, k):\n    return x * k\n"

CHECK_CELL = 'check("90.1", round_trip)'

Cell = str | tuple[str, Sequence[str]]


def write_notebook(path: Path, cells: Sequence[Cell],
                   exercises: Sequence[str] = DEMO_EXERCISES) -> Path:
    """Write a notebook of code ``cells`` (source, or ``(source, tags)``) declaring
    ``exercises`` in ``metadata.acl_lab``, with a trailing ``check`` cell as the course's
    notebooks have."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["acl_lab"] = {"exercises": list(exercises)}
    for cell in cells:
        source, tags = (cell, ()) if isinstance(cell, str) else cell
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)}))
    nb.cells.append(nbformat.v4.new_code_cell(CHECK_CELL, metadata={"tags": ["check"]}))
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def honest_cells() -> list[Cell]:
    """The cells of a learner who solves both demo exercises."""
    return [IMPORTS, ROUND_TRIP, SCALE]


@dataclass
class GradeRun:
    """One finished ``acl-lab grade``."""

    proc: subprocess.CompletedProcess[str]
    out: Path
    seconds: float

    def rows(self) -> list[dict[str, str]]:
        """The rows of ``grades.csv`` as dicts."""
        with open(self.out / "grades.csv", encoding="utf-8", newline="") as fh:
            return list(csv.DictReader(fh))

    def learner_rows(self, learner: str, exercise: str | None = None) -> list[dict[str, str]]:
        """The rows of one learner (and exercise)."""
        return [r for r in self.rows() if r["learner"] == learner
                and (exercise is None or r["exercise"] == exercise)]

    def points(self, learner: str, exercise: str | None = None) -> tuple[int, int]:
        """(points awarded, points available) of a learner's rows."""
        rows = self.learner_rows(learner, exercise)
        return sum(int(r["points"]) for r in rows), sum(int(r["max_points"]) for r in rows)

    def html(self, learner: str) -> str:
        """The learner's feedback page."""
        return (self.out / f"{learner}.html").read_text(encoding="utf-8")


def run_grade(submissions: Path, out: Path, *options: str, timeout: float = 240,
              extra_env: dict[str, str] | None = None, cwd: Path | None = None) -> GradeRun:
    """Run ``python -m acl_lab.cli grade SUBMISSIONS -o OUT OPTIONS`` with the demo rubric."""
    env = dict(os.environ)
    env["ACL_LAB_GRADING_EXTRA"] = str(DEMO_RUBRIC)
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "acl_lab.cli", "grade", str(submissions), "-o", str(out),
           *options]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd or submissions.parent, check=False)
    return GradeRun(proc, out, time.monotonic() - started)
