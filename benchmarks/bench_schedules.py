"""What the host schedule costs (issue 25): threads taking turns, exploring seeds, grading.

Measured in one run, each side right after the other:

* ``threads4_wall``: a program of four worker threads (each 200 async copies and a
  synchronize per item of a shared ``queue.Queue``, results under a ``Lock``) with its
  threads taking turns (``acl_lab.install``: the host schedule) over the same program with
  the operating system's threads (the scheduler off, the plain primitives): the ratio of the
  medians of ``REPEATS`` repeats; target at most 2x;
* ``explore16_per_run``: ``acl-lab run --explore 16`` of a small threaded program over 16
  times one ``acl-lab run`` of it (both start Python processes; exploring runs two at a
  time on two cores): target at most 1x, i.e. 16 schedules cost at most 16 runs;
* ``exercise_<id>_s``: one graded run of each threaded exercise's solution (what one of its
  ``Exercise.schedules`` costs ``check()`` and ``acl-lab grade``), seconds, informational,
  with ``K`` (``exercise_<id>_schedules``) beside it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import acl_lab
from acl_lab import pythreads
from acl_lab.runtime import hostsched
from acl_lab.runtime.session import Session

from .common import REPEATS, Row, median

NAME = "schedules"
N = 64 * 1024
REPO = Path(__file__).resolve().parents[1]

#: a small threaded program: three workers fed through a queue (12 items)
SMALL_PROGRAM = REPO / "tests" / "programs" / "queue_workers.py"


#: The four-worker program, compiled as the program's own module: ``benchmarks`` is one of
#: ``pythreads.LIBRARIES`` (its code keeps real primitives and real time), so a program
#: written in it would not be the program's.
FOUR_WORKERS = """
import queue, threading

def four_workers(acl, items, copies, n):
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    ctx = acl.rt.get_context()[0]
    q = queue.Queue()
    lock = threading.Lock()
    done = []

    def work():
        acl.rt.set_context(ctx)
        stream = acl.rt.create_stream()[0]
        host = acl.rt.malloc_host(n)[0]
        dev = acl.rt.malloc(n, 0)[0]
        while (item := q.get()) is not None:
            for _ in range(copies):
                acl.rt.memcpy_async(dev, n, host, n, 1, stream)
            acl.rt.synchronize_stream(stream)
            with lock:
                done.append(item)
        acl.rt.free(dev)
        acl.rt.free_host(host)
        acl.rt.destroy_stream(stream)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(items):
        q.put(i)
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    assert len(done) == items
    acl.rt.reset_device(0)
    acl.finalize()
"""


def _four_workers(acl: ModuleType, items: int, copies: int) -> None:
    """Four workers, each its own stream, fed by a shared queue (``FOUR_WORKERS``)."""
    ns: dict[str, Any] = {"__name__": "four_workers_program"}
    exec(compile(FOUR_WORKERS, "<four_workers_program>", "exec"), ns)
    ns["four_workers"](acl, items, copies, N)


def _timed_program(scheduled: bool, items: int, copies: int) -> float:
    """Seconds of one run of ``_four_workers``: the threads under the host schedule, or
    free (plain primitives, the scheduler off: the operating system decides)."""
    acl = acl_lab.install()
    if not scheduled:
        pythreads.uninstall()  # plain threading/queue, and hostsched.set_control(False)
    try:
        with Session():
            t0 = time.perf_counter()
            _four_workers(acl, items, copies)
            return time.perf_counter() - t0
    finally:
        acl_lab.uninstall()
        hostsched.set_control(False)


def _threads_rows(quick: bool) -> list[Row]:
    items, copies = (8, 50) if quick else (24, 200)
    ratios = []
    scheduled, free = [], []
    for _ in range(REPEATS):
        a = _timed_program(True, items, copies)
        b = _timed_program(False, items, copies)
        scheduled.append(a)
        free.append(b)
        ratios.append(a / b)
    return [Row(NAME, "threads4_scheduled_s", median(scheduled), "s"),
            Row(NAME, "threads4_free_s", median(free), "s"),
            Row(NAME, "threads4_wall", median(ratios), "x", target=2.0)]


def _acl_lab(*args: str, cwd: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "acl_lab", "run", "--quiet", *args], cwd=cwd,
                   check=True, capture_output=True)
    return time.perf_counter() - t0


def _explore_rows(quick: bool) -> list[Row]:
    n = 4 if quick else 16
    with tempfile.TemporaryDirectory() as tmp:
        prog, items = str(SMALL_PROGRAM), "12"
        one = median([_acl_lab("--trace", "t.acltrace", prog, items, cwd=tmp)
                      for _ in range(3)])
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "acl_lab", "run", "--quiet", "--explore",
                            str(n), prog, items], cwd=tmp, capture_output=True)
        explored = time.perf_counter() - t0
        if p.returncode not in (0, 1):  # 1: the schedules' outputs differ (they do here)
            raise RuntimeError(f"--explore failed: {p.stderr.decode()[-2000:]}")
    return [Row(NAME, "one_run_s", one, "s"),
            Row(NAME, f"explore{n}_s", explored, "s"),
            Row(NAME, f"explore{n}_per_run", explored / (n * one), "x", target=1.0)]


def _exercise_rows() -> list[Row]:
    from acl_lab.grading import learner_namespace, run_exercise
    from acl_lab.grading.rubric import all_exercises

    notebooks = {"04": "04_buffer_pitfalls", "05": "05_multi_context", "07": "07_deadlocks_races",
                 "10": "10_puzzles"}
    spaces: dict[str, dict[str, object]] = {}
    rows = []
    for ex in all_exercises():
        nb = notebooks.get(ex.id[:2])
        if ex.schedules < 2 or nb is None:
            continue
        if nb not in spaces:
            spaces[nb] = learner_namespace(REPO / "solutions" / f"{nb}.ipynb")
        fn = spaces[nb][ex.entry]
        times = []
        for s in range(ex.schedules):
            t0 = time.perf_counter()
            run_exercise(ex, fn, seed=1, schedule=s)  # type: ignore[arg-type]
            times.append(time.perf_counter() - t0)
        rows.append(Row(NAME, f"exercise_{ex.id}_s", median(times), "s"))
        rows.append(Row(NAME, f"exercise_{ex.id}_schedules", ex.schedules, "runs"))
    return rows


def run(quick: bool) -> list[Row]:
    """The rows (see the module docstring)."""
    return _threads_rows(quick) + _explore_rows(quick) + _exercise_rows()
