"""``make lab`` serves a root from which the notebooks and the exercises they send the learner
to can both be opened (JupyterLab cannot open files above its root)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def lab_command() -> list[str]:
    """The jupyter command ``make -n lab`` would run, as arguments."""
    out = subprocess.run(["make", "-n", "-s", "lab"], cwd=REPO, capture_output=True,
                         text=True, timeout=60, check=True).stdout
    joined = out.replace("\\\n", " ")
    (line,) = [ln for ln in joined.splitlines() if "jupyter lab" in ln]
    return shlex.split(line)


def option(args: list[str], name: str) -> str | None:
    """The value of ``--name=VALUE`` (or ``--name VALUE``) among ``args``."""
    for i, a in enumerate(args):
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
        if a == f"--{name}" and i + 1 < len(args):
            return args[i + 1]
    return None


def test_lab_root_contains_notebooks_and_exercises() -> None:
    """The server root is the repository: notebooks/ and exercises/ are both inside it, and it
    opens on notebooks/."""
    args = lab_command()
    root = option(args, "ServerApp.root_dir") or option(args, "notebook-dir")
    assert root is not None, args
    root_path = Path(root).resolve()
    for folder in ("notebooks", "exercises"):
        assert (REPO / folder).resolve().is_relative_to(root_path), (folder, root)
    assert option(args, "LabApp.default_url") == "/lab/tree/notebooks"


def test_every_exercise_a_notebook_names_is_reachable() -> None:
    """Each ``exercises/NAME.ipynb`` a course notebook mentions exists under the lab root."""
    root = Path(option(lab_command(), "ServerApp.root_dir") or ".").resolve()
    named = set()
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        text = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
        named |= set(re.findall(r"exercises/[\w.-]+\.ipynb", text))
    assert len(named) >= 5
    for rel in named:
        path = REPO / rel
        assert path.is_file(), rel
        assert path.resolve().is_relative_to(root)
