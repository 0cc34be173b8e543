"""Limits of one notebook's whole sandbox: its memory and its number of processes.

``RLIMIT_AS`` (set by the worker) bounds each process's address space, but not the files a
submission writes to its private ``/tmp`` or ``/dev/shm`` (tmpfs: memory of the machine) nor
the processes it starts, each with an address space of its own. Where the machine lets
``acl-lab grade`` make control groups (root, or a delegated cgroup v2 subtree), each sandbox
gets one: ``memory`` bounds the heap, the tmpfs files and every child together (the kernel
kills a process of the group when it is exceeded), ``pids`` bounds its processes and threads.

The sandbox joins its group before it starts anything: the command runs under a shell that
writes its own pid into each group's ``cgroup.procs`` and then ``exec``s bubblewrap, so no
process of the submission is ever outside it (no race, no ``preexec_fn``). cgroup v2 (one
hierarchy, ``memory.max`` and ``pids.max``) is used when its controllers are enabled where
the grader lives; otherwise cgroup v1 (one hierarchy per controller,
``memory.limit_in_bytes`` and ``pids.max``). Without either, the sandbox keeps the rlimits and
the tmpfs sizes, and :attr:`Limits.held` says so: the feedback page lists what held.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Processes and threads one notebook's sandbox may have at once (the worker's own threads
#: and the emulator's are a few dozen; a learner's program gets the rest).
MAX_TASKS = 128
CGROUP_ROOT = "/sys/fs/cgroup"
_counter = itertools.count()


@dataclass
class Limits:
    """The control groups of one sandbox (none when the machine does not allow them)."""

    groups: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    version: int = 0

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run by a shell that first joins every group (exit 125 if it cannot)."""
        if not self.groups:
            return list(argv)
        script = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || '
                  'exit 125; shift; n=$((n-1)); done; exec "$@"')
        return ["/bin/sh", "-c", script, "sh", str(len(self.groups)), *self.groups, *argv]

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for its memory limit."""
        for group in self.groups:
            for name in ("memory.events", "memory.oom_control"):  # v2, v1
                with contextlib.suppress(OSError, ValueError), \
                        open(os.path.join(group, name), encoding="ascii") as fh:
                    for line in fh:
                        parts = line.split()
                        if len(parts) == 2 and parts[0] == "oom_kill" and int(parts[1]) > 0:
                            return True
        return False

    def close(self) -> None:
        """Remove the groups (once their processes are gone; a few tries)."""
        for group in self.groups:
            for _ in range(20):
                try:
                    os.rmdir(group)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
        self.groups = []


def _own_path(controller: str) -> str | None:
    """This process's cgroup path in the hierarchy of ``controller`` ("" for v2's)."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            return parts[2]
        if len(parts) == 3 and controller == "" and parts[0] == "0" and parts[1] == "":
            return parts[2]
    return None


def _make(parent: str, settings: dict[str, str]) -> str | None:
    """A new group below ``parent`` with ``settings`` written; None when it cannot be."""
    path = os.path.join(parent, f"acl-lab-grade-{os.getpid()}-{next(_counter)}")
    try:
        os.mkdir(path)
    except OSError:
        return None
    try:
        for name, value in settings.items():
            with open(os.path.join(path, name), "w", encoding="ascii") as fh:
                fh.write(value)
    except OSError:
        with contextlib.suppress(OSError):
            os.rmdir(path)
        return None
    return path


def _v2(memory_mb: int | None, tasks: int) -> Limits | None:
    own = _own_path("")
    base = os.path.join(CGROUP_ROOT, (own or "/").lstrip("/"))
    try:
        with open(os.path.join(base, "cgroup.subtree_control"), encoding="ascii") as fh:
            enabled = fh.read().split()
    except OSError:
        return None
    settings = {"pids.max": str(tasks)} if "pids" in enabled else {}
    if memory_mb and "memory" in enabled:
        settings["memory.max"] = str(int(memory_mb) << 20)
    if not settings:
        return None
    group = _make(base, settings)
    if group is None:
        return None
    return Limits([group], _held(settings, 2), 2)


def _v1(memory_mb: int | None, tasks: int) -> Limits | None:
    groups: list[str] = []
    held: dict[str, str] = {}
    wanted = {"pids": {"pids.max": str(tasks)}}
    if memory_mb:
        wanted["memory"] = {"memory.limit_in_bytes": str(int(memory_mb) << 20)}
    for controller, settings in wanted.items():
        own = _own_path(controller)
        root = os.path.join(CGROUP_ROOT, controller)
        if own is None or not os.path.isdir(root):
            continue
        group = _make(os.path.join(root, own.lstrip("/")), settings)
        if group is not None:
            groups.append(group)
            held.update(settings)
    return Limits(groups, _held(held, 1), 1) if groups else None


def _held(settings: dict[str, str], version: int) -> list[str]:
    out = []
    for name, value in settings.items():
        if name.startswith("memory"):
            out.append(f"memory: {int(value) >> 20} MiB for the whole sandbox (heap, files in "
                       f"/tmp and /dev/shm and child processes together; cgroup v{version})")
        else:
            out.append(f"processes: at most {value} processes and threads (cgroup v{version})")
    return out


def create(memory_mb: int | None, tasks: int = MAX_TASKS) -> Limits:
    """The groups of one sandbox: cgroup v2 where it is enabled here, else v1, else none
    (:attr:`Limits.held` empty)."""
    if os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        got = _v2(memory_mb, tasks)
    else:
        got = _v1(memory_mb, tasks)
    return got if got is not None else Limits()


def describe(memory_mb: int | None, tmpfs_mb: int, sandboxed: bool) -> list[str]:
    """What bounds a submission here, one line each (the feedback page shows them): probes
    once by making and removing a group."""
    probe = create(memory_mb) if sandboxed else Limits()
    lines = list(probe.held)
    probe.close()
    if not any(line.startswith("memory") for line in lines) and memory_mb:
        lines.append(f"memory: {memory_mb} MiB of address space per process (RLIMIT_AS; no "
                     "control group here: files and child processes count separately)")
    if not any(line.startswith("processes") for line in lines):
        lines.append("processes: not limited (no control group here)")
    if sandboxed:
        lines.append(f"files: /tmp and /dev/shm hold at most {tmpfs_mb} MiB each")
    return lines
