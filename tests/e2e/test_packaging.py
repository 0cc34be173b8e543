"""The wheel and the sdist, built offline from a copy of the project (issue 16).

The wheel must hold the course (``acl_lab/_course/{notebooks,exercises,solutions}``, the
same files as the repository's folders), ``py.typed``, the license and metadata whose only
unconditional requirement is numpy. The sdist must hold what the wheel is built from plus
the tests, and its tests must run from the unpacked sdist. Building uses the installed
setuptools (``--no-isolation``: no index is needed).
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]

#: What a build reads: copied to a scratch folder so the build never writes into the repo.
SOURCES = ("acl_lab", "notebooks", "exercises", "solutions", "tests", "benchmarks",
           "pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "Makefile",
           "environment.yml")
COURSE = ("notebooks", "exercises", "solutions")


def _course_files() -> set[str]:
    """The repository's course files, as wheel paths."""
    out = set()
    for part in COURSE:
        for f in (ROOT / part).rglob("*"):
            rel = f.relative_to(ROOT)
            if f.is_file() and not any(p.startswith(".") for p in rel.parts):
                out.add(f"acl_lab/_course/{rel.as_posix()}")
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"wheel": ..., "sdist": ...} built from a scratch copy of the project."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")
    for name in SOURCES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=ignore)
        else:
            shutil.copy2(p, src / name)
    out = tmp_path_factory.mktemp("dist")
    res = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist",
                          "--wheel", "--outdir", str(out), str(src)],
                         capture_output=True, text=True, timeout=500)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return {"wheel": wheel, "sdist": sdist}


def test_wheel_ships_the_course_and_the_typed_marker(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as z:
        files = set(z.namelist())
        meta = email.parser.Parser().parsestr(
            z.read(next(n for n in files if n.endswith(".dist-info/METADATA"))).decode())
    course = {f for f in files if f.startswith("acl_lab/_course/")}
    assert course == _course_files()
    assert "acl_lab/py.typed" in files and "acl_lab/__main__.py" in files
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in files)
    assert not any(f.startswith(("tests/", "benchmarks/")) for f in files)
    requires = meta.get_all("Requires-Dist") or []
    core = [r for r in requires if "extra ==" not in r]
    assert [r.split(">")[0].split("=")[0].strip() for r in core] == ["numpy"]
    assert {"views", "atc", "media", "lab", "test"} <= set(meta.get_all("Provides-Extra") or [])
    assert meta["License-Expression"] == "Apache-2.0"


def test_sdist_holds_the_sources_and_its_tests_run(built: dict[str, Path],
                                                   tmp_path: Path) -> None:
    with tarfile.open(built["sdist"]) as t:
        names = t.getnames()
        t.extractall(tmp_path, filter="data")
    (top,) = {n.split("/")[0] for n in names}
    rel = {n.split("/", 1)[1] for n in names if "/" in n}
    for need in ("setup.py", "pyproject.toml", "LICENSE", "MANIFEST.in", "tests/conftest.py",
                 "tests/meta/test_packaging.py", "exercises/README.md",
                 "solutions/README.md", "notebooks/README.md", "acl_lab/py.typed"):
        assert need in rel, need
    assert not any(n.endswith(".pyc") for n in rel)
    unpacked = tmp_path / top
    env = dict(os.environ, PYTHONPATH=str(unpacked), MPLBACKEND="Agg")
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/meta/test_no_wall_clock_bounds.py", "tests/test_constants.py",
                          "tests/acl/test_memory.py", "-k", "not e2e"],
                         cwd=unpacked, env=env, capture_output=True, text=True, timeout=500)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # the tests ran against the sdist's own package, not the repository's
    probe = subprocess.run([sys.executable, "-c", "import acl_lab; print(acl_lab.__file__)"],
                           cwd=unpacked, env=env, capture_output=True, text=True, timeout=60)
    assert Path(probe.stdout.strip()).is_relative_to(unpacked)
