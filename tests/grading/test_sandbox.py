"""The sandbox keeps what the worker needs even when it lives under /tmp (a CI clone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acl_lab.grading import sandbox


def test_folders_under_tmp_are_bound_back_read_only(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    """A venv and a model cache in /tmp are ro-bound after the private /tmp, before the
    hidden folders; nested folders are bound once, with their parent."""
    if not os.path.realpath(tmp_path).startswith(os.path.realpath("/tmp") + os.sep):
        pytest.fail("the test needs tmp_path under /tmp")
    venv, cache = tmp_path / "venv", tmp_path / "cache"
    (venv / "lib").mkdir(parents=True)
    cache.mkdir()
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "path", [*sys.path, str(venv / "lib")])
    monkeypatch.setenv("ACL_LAB_CACHE", str(cache))
    monkeypatch.setattr(sandbox, "available", lambda: (True, "bwrap"))
    hidden = tmp_path / "solutions"
    hidden.mkdir()
    args = sandbox.command(["true"], writable=[], hidden=[str(hidden)], cwd=str(tmp_path))
    binds = [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"]
    assert os.path.realpath(venv) in binds and os.path.realpath(cache) in binds
    assert os.path.realpath(venv / "lib") not in binds
    assert args.index("--tmpfs") < args.index(os.path.realpath(venv))  # after /tmp's tmpfs
    assert args.index(os.path.realpath(venv)) < args.index(os.path.realpath(hidden))


def test_worker_python_starts_in_the_sandbox() -> None:
    """The sandbox runs this interpreter with acl_lab importable, wherever they live."""
    ok, why = sandbox.available()
    if not ok:
        pytest.fail(f"bubblewrap is part of make test: {why}")
    cmd = sandbox.command([sys.executable, "-c", "import acl_lab, sys; print(sys.prefix)"],
                          writable=[], hidden=[], cwd="/")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == sys.prefix
