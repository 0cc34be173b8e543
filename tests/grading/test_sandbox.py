"""The sandbox shows a submission what the worker needs and nothing else of the machine;
control groups bound its processes and memory together."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from acl_lab.grading import limits, sandbox

REPO = Path(__file__).resolve().parents[2]


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


def test_private_roots_hide_the_checkout_and_the_graders_tmpdir(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The repository the package was imported from and the grader's TMPDIR (outside /tmp)
    are laid over with an empty tmpfs; the package itself is bound back after them, and the
    submission's hidden folders after that."""
    monkeypatch.setattr(sandbox, "available", lambda: (True, "bwrap"))
    grader_tmp = Path(tempfile.mkdtemp(prefix="acl-lab-sandbox-test-", dir="/var/tmp"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(grader_tmp))
        checkout = os.path.realpath(REPO)
        roots = sandbox.private_roots()
        assert checkout in roots and str(grader_tmp) in roots and "/run" in roots
        args = sandbox.command(["true"], writable=[], hidden=[str(REPO / "solutions")],
                               cwd="/")
        tmpfs = [args[i + 1] for i, a in enumerate(args) if a == "--tmpfs"]
        binds = [args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"]
        package = os.path.realpath(REPO / "acl_lab")
        assert package in binds and checkout not in binds
        assert args.index(checkout) < args.index(package) < args.index(
            os.path.realpath(REPO / "solutions"))
        assert "/tmp" in tmpfs and "/dev/shm" in tmpfs
        assert ["--ro-bind", os.devnull, "/etc/shadow"] == args[
            args.index("/etc/shadow") - 2:args.index("/etc/shadow") + 1]
    finally:
        grader_tmp.rmdir()


def test_inside_the_sandbox_the_machine_is_not_there() -> None:
    """In a real sandbox: the package and the Python installation are there; the
    repository's .git and solutions, /run, a file in the home folder and /etc/shadow are
    not; /tmp has the size asked for."""
    ok, why = sandbox.available()
    if not ok:
        pytest.fail(f"bubblewrap is part of make test: {why}")
    marker = Path.home() / f"acl-lab-sandbox-marker-{os.getpid()}"
    marker.write_text("a file of the grader's home")
    try:
        probe = (
            "import os, sys, acl_lab\n"
            f"repo, marker = {str(REPO)!r}, {str(marker)!r}\n"
            "def shadow_unreadable():\n"
            "    try:\n"
            "        return open('/etc/shadow').read() == ''\n"
            "    except OSError:\n"
            "        return True\n"
            "print(os.path.isdir(os.path.join(repo, 'acl_lab')), os.path.exists(os.path.join("
            "repo, '.git')), os.path.exists(os.path.join(repo, 'solutions', "
            "'04_buffer_pitfalls.ipynb')), os.listdir('/run'), os.path.exists(marker), "
            "shadow_unreadable(), "
            "os.statvfs('/tmp').f_blocks * os.statvfs('/tmp').f_frsize >> 20)\n")
        cmd = sandbox.command([sys.executable, "-c", probe], writable=[], hidden=[], cwd="/",
                              tmp_mb=64)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    finally:
        marker.unlink()
    assert proc.returncode == 0, proc.stderr
    package, git, solutions, run, home, shadow, tmp_mb = proc.stdout.split(" ", 6)
    assert (package, git, solutions, run, home, shadow) == (
        "True", "False", "False", "[]", "False", "True")
    assert int(tmp_mb) == 64
    assert (REPO / ".git").exists()  # it is there outside


def test_a_control_group_bounds_processes_and_memory_together(tmp_path: Path) -> None:
    """Processes started past the group's count fail; memory past its size (here a file in a
    tmpfs and a child's heap together) gets a process killed and the group says so."""
    group = limits.create(256, tasks=16)
    if not group.held:
        # a machine that lets no one make control groups (a container without delegation):
        # nothing is claimed, the command runs as it is, and the page says so
        assert group.wrap(["true"]) == ["true"] and not group.out_of_memory()
        lines = limits.describe(256, 64, True)
        assert "processes: not limited (no control group here)" in lines
        assert any(line.startswith("memory: 256 MiB of address space per process")
                   for line in lines)
        return
    try:
        assert len(group.held) == 2, group.held
        forks = ("import subprocess\nps = []\ntry:\n    for _ in range(40):\n"
                 "        ps.append(subprocess.Popen(['sleep', '5']))\nexcept OSError:\n"
                 "    pass\nprint(len(ps))\nfor p in ps:\n    p.kill()\n")
        proc = subprocess.run(group.wrap([sys.executable, "-c", forks]), capture_output=True,
                              text=True, timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr
        assert 0 < int(proc.stdout) < 16
        assert not group.out_of_memory()
        hog = ("import sys; a = bytearray(200 << 20); b = bytearray(200 << 20); "
               "print('survived')")
        proc = subprocess.run(group.wrap([sys.executable, "-c", hog]), capture_output=True,
                              text=True, timeout=120, check=False)
        assert proc.returncode != 0 and "survived" not in proc.stdout
        assert group.out_of_memory()
    finally:
        group.close()
    assert all(not os.path.exists(g) for g in group.groups)
