"""``acl-lab grade``: grade every learner's submitted notebooks; a CSV and HTML feedback.

``acl-lab grade SUBMISSIONS_DIR -o OUT_DIR [--timeout S] [--memory-mb M] [--exercise ID ...]``
reads nbgrader's ``submitted/`` layout: one folder per learner, named by the learner, holding
that learner's exercise notebooks (``*.ipynb``, directly or one folder down). It writes
``OUT_DIR/grades.csv`` (one row per rubric item: ``learner,exercise,item,points,max_points,
passed,reason,flag``; ``flag`` names an attempt to game the grading, see ``FLAGS``) and one
offline feedback page per learner, ``OUT_DIR/<learner>.html``.

The sandbox. Every notebook's worker runs under bubblewrap (``acl_lab.grading.sandbox``):
read-only system, Python and package; no home, repository, host sockets or other work
folders, no solutions, no other submissions, no output folder; a private, size-capped ``/tmp``
and ``/dev/shm``, PID namespace and network namespace; an allow-listed environment
(``ENV_KEPT``: the grader's tokens stay out) with ``TMPDIR`` and ``HOME`` in the private
``/tmp``; and, where the machine's cgroups allow, one memory bound for the heap, the tmpfs
files and the child processes together and a bound on its processes
(``acl_lab.grading.limits``; the feedback page lists the limits that held). Without
bubblewrap ``grade`` stops with one line unless ``--no-sandbox`` is given; every feedback
page then carries ``UNSANDBOXED_WARNING``.

The trust boundary. Each notebook runs in its own sandboxed child process
(``acl_lab.grading.worker``) in a fresh temporary folder, with a wall-clock time limit (the
whole sandbox is killed) and an address-space limit, so a loop, a crash or ``os._exit`` costs
only that notebook. The child only *runs* the learner's code and writes the returned value and
the integrity violations it saw; its pyACL calls go through the pipe transport to an emulator
server started beside the sandbox (``acl_lab.transport``, in a sandbox of its own), which owns
the Session and writes the trace and the landed bytes into ``<workdir>/recorded``, where the
learner's process cannot reach. This process draws the seeds (``os.urandom``), loads
each trace with the strict ``Trace.load``, recomputes the findings, rebuilds the ``Run`` with
its own seed and grades it with its own, untouched rubric. An exercise without a complete
result file gets 0 points on every item, with the reason (time limit, memory limit, the process
ended early).

Which exercises a notebook holds: ``metadata.acl_lab.exercises`` of the released starter of the
same file name (``--release``, default the course's ``exercises/``) when there is one, so a
learner cannot change what is graded by editing metadata; otherwise the submitted notebook's
own metadata. Every learner gets rows for every exercise graded for anyone (or named with
``--exercise``): an exercise no notebook of theirs holds scores 0 with that reason.

Hidden runs (otter-grader's hidden tests, ``rubric.Hidden``): after each exercise's visible run
the worker runs the same function again for each of the exercise's hidden runs, with a seed
this process draws and arguments of other sizes, so a program fitted to the visible run fails
them. They count in the exercise's points and appear after grading only: ``hidden: <item>``
rows in the CSV (the reason starts with what differs) and a hidden section on the feedback
page; ``check()`` in a notebook never runs or lists them.

CSV cells written from learner-controlled text (learner names, reasons quoting errors) that
start with ``=``, ``+``, ``-`` or ``@`` get a leading ``'`` so spreadsheets do not run them.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import html
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .. import zoo
from ..transport.client import FD_ENV as PIPE_FD_ENV
from . import limits as _limits
from . import sandbox as _sandbox
from . import worker as _worker
from .notebook import notebook_exercises
from .report import Report, grade_run, grade_runs
from .rubric import HIDDEN_MARK, Exercise, Run, all_exercises, get_exercise
from .runner import new_seed

#: Defaults of the command line.
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_MEMORY_MB = 4096
#: The CSV header, in order.
CSV_HEADER = ("learner", "exercise", "item", "points", "max_points", "passed", "reason",
              "flag")
#: How much of a child's stdout/stderr is kept (the end of it) for the feedback page.
TAIL_BYTES = 16 << 10
#: Largest ``result.json`` / ``notebook.json`` the parent reads.
MAX_JSON_BYTES = 64 << 20
#: Seconds between the kill of a timed-out child and giving up waiting for it.
KILL_GRACE_S = 10.0

_FORMULA_START = ("=", "+", "-", "@")
#: Shown on every feedback page of a run with ``--no-sandbox``.
UNSANDBOXED_WARNING = ("these submissions were graded without the sandbox (--no-sandbox): "
                       "a submission could have read or changed what the grader uses, so "
                       "these points are not trustworthy")


# ------------------------------------------------------------------------------ outcomes
@dataclass(frozen=True)
class Row:
    """One CSV row: a rubric item of one exercise for one learner."""

    learner: str
    exercise: str
    item: str
    points: int
    max_points: int
    passed: bool
    reason: str
    flag: str = ""

    def cells(self) -> list[str]:
        """The row as CSV cells (learner text made safe for spreadsheets)."""
        return [_csv_safe(self.learner), self.exercise, self.item, str(self.points),
                str(self.max_points), "true" if self.passed else "false",
                _csv_safe(" ".join(self.reason.split())), self.flag]


@dataclass
class HiddenOutcome:
    """One hidden run of an exercise (``rubric.Hidden``): graded here, shown only after
    grading (``"hidden: ..."`` rows in the CSV, a hidden section on the feedback page).

    Attributes:
        exercise: the hidden run as an exercise (``Exercise.hidden_exercises``).
        description: what differs from the visible run.
        report: its grading; None when it did not complete.
        failure: why there is no report.
        seed: the seed this process drew for it.
    """

    exercise: Exercise
    description: str
    report: Report | None = None
    failure: str | None = None
    seed: int | None = None

    @property
    def score(self) -> int:
        """Points awarded."""
        return self.report.score if self.report is not None else 0

    def rows(self, learner: str, flag: str, failure: str | None = None) -> list[Row]:
        """One CSV row per hidden item: item ``"hidden: <id>"``, the reason after
        ``"hidden (<what differs>): "``."""
        head = f"hidden ({self.description}): "
        if self.report is not None and failure is None:
            return [Row(learner, self.exercise.id.split(HIDDEN_MARK)[0], f"hidden: {r.item.id}",
                        r.points_awarded, r.item.points, r.passed, head + r.reason, flag)
                    for r in self.report.results]
        why = failure or self.failure or "not graded"
        return [Row(learner, self.exercise.id.split(HIDDEN_MARK)[0], f"hidden: {it.id}", 0,
                    it.points, False, head + why, flag) for it in self.exercise.items]


@dataclass
class ExerciseOutcome:
    """How one exercise went for one learner: a ``Report``, or the reason there is none.

    Attributes:
        exercise: the exercise.
        notebook: the notebook it was graded from (relative to the learner's folder), or
            None when no notebook of the learner holds it.
        report: the parent's grading of the rebuilt ``Run``; None when the run did not
            complete.
        failure: why there is no report (every item then scores 0 with this reason).
        seed: the seed this process drew for the run.
        hidden: the exercise's hidden runs, graded with seeds of their own.
    """

    exercise: Exercise
    notebook: str | None
    report: Report | None = None
    failure: str | None = None
    seed: int | None = None
    hidden: list[HiddenOutcome] = field(default_factory=list)

    @property
    def score(self) -> int:
        """Points awarded (hidden runs included; nothing when the visible run failed)."""
        if self.report is None:
            return 0
        return self.report.score + sum(h.score for h in self.hidden)

    @property
    def total(self) -> int:
        """Points available: the visible rubric and every hidden run."""
        return self.exercise.graded_points

    def rows(self, learner: str) -> list[Row]:
        """One CSV row per rubric item, then one per hidden item."""
        flag = self.flag
        if self.report is not None:
            rows = [Row(learner, self.exercise.id, r.item.id, r.points_awarded, r.item.points,
                        r.passed, r.reason, flag) for r in self.report.results]
            return rows + [r for h in self._hidden() for r in h.rows(learner, flag)]
        reason = self.failure or "not graded"
        rows = [Row(learner, self.exercise.id, it.id, 0, it.points, False, reason, flag)
                for it in self.exercise.items]
        return rows + [r for h in self._hidden() for r in h.rows(learner, flag, reason)]

    def _hidden(self) -> list[HiddenOutcome]:
        """The hidden runs, one per ``exercise.hidden`` (not run: a placeholder)."""
        done = {h.exercise.id: h for h in self.hidden}
        return [done.get(v.id) or HiddenOutcome(v, h.description, failure="not run")
                for v, h in zip(self.exercise.hidden_exercises(), self.exercise.hidden,
                                strict=True)]

    @property
    def flag(self) -> str:
        """The instructor's flag for this exercise: ``FLAGS`` key of an attempt to game the
        grading (``"integrity"``, ``"no-acl"``, ``"not-from-device"``,
        ``"declared-host-work"``), or ``""``."""
        if self.report is None:
            return "integrity" if (self.failure or "").startswith("submission ") else ""
        return flag_of(self.report)


@dataclass
class NotebookOutcome:
    """One submitted notebook's run: its exercises and what the process left behind."""

    learner: str
    notebook: str
    exercises: list[ExerciseOutcome] = field(default_factory=list)
    cell_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    output_tail: str = ""
    exit_code: int | None = None
    timed_out: bool = False
    seconds: float = 0.0


@dataclass
class LearnerOutcome:
    """Everything graded for one learner."""

    learner: str
    notebooks: list[NotebookOutcome] = field(default_factory=list)
    exercises: list[ExerciseOutcome] = field(default_factory=list)

    @property
    def score(self) -> int:
        """Points awarded over every exercise."""
        return sum(e.score for e in self.exercises)

    @property
    def total(self) -> int:
        """Points available over every exercise."""
        return sum(e.total for e in self.exercises)


@dataclass(frozen=True)
class _Job:
    learner: str
    path: Path
    name: str
    exercises: tuple[Exercise, ...]
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True)
class GradeOptions:
    """The settings of one ``acl-lab grade`` run."""

    timeout: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    exercise_ids: tuple[str, ...] = ()
    #: notebooks graded at the same time; None: one per core (``worker_count``)
    jobs: int | None = None
    include_figures: bool = True
    release: Path | None = None
    sandbox: bool = True
    hidden: tuple[str, ...] = ()
    #: what bounds each submission here, one line each (``limits.describe``; the feedback
    #: page lists them)
    limits: tuple[str, ...] = ()


#: The CSV's ``flag`` values: an attempt to game the grading, for the instructor to look at.
FLAGS = {
    "integrity": "the submission changed, read or escaped what grades it",
    "no-acl": "the part made no ACL call at all",
    "not-from-device": "a returned value did not come back from the device's work",
    "declared-host-work": "host time was declared with a number instead of measured work",
}
#: Text of the reasons that mark each flag (from report.gate, provenance and exercise 08).
_FLAG_MARKS = (("no-acl", "no ACL call in the trace"),
               ("not-from-device", "earn no points"),
               ("not-from-device", "the device did not compute it"),
               ("declared-host-work", "it is a number your code chose"))


def flag_of(report: Report) -> str:
    """The ``FLAGS`` key that applies to a graded exercise, or ``""``."""
    if report.run.violations:
        return "integrity"
    texts = [report.gate or "", *(r.reason for r in report.results)]
    for flag, mark in _FLAG_MARKS:
        if any(mark in t for t in texts):
            return flag
    return ""


# ------------------------------------------------------------------------------ discovery
def find_submissions(root: Path) -> dict[str, list[Path]]:
    """Learner name -> that learner's notebooks (sorted), from nbgrader's layout.

    Learner folders are the non-hidden folders of ``root``; notebooks are ``*.ipynb`` in a
    learner's folder or one folder below it (hidden folders and ``.ipynb_checkpoints`` are
    skipped). A learner with no notebook is listed with an empty list.
    """
    out: dict[str, list[Path]] = {}
    for learner in sorted(p for p in root.iterdir() if p.is_dir() and _visible(p)):
        found = [p for p in learner.glob("*.ipynb") if p.is_file() and _visible(p)]
        for sub in learner.iterdir():
            if sub.is_dir() and _visible(sub):
                found += [p for p in sub.glob("*.ipynb") if p.is_file() and _visible(p)]
        out[learner.name] = sorted(found, key=lambda p: p.relative_to(learner).as_posix())
    return out


def _visible(p: Path) -> bool:
    return not p.name.startswith(".") and p.name != "__pycache__"


def default_release_dir() -> Path:
    """The course's ``exercises/`` folder (the released starter notebooks): the copy shipped
    in the package, or the repository's in a checkout (``acl_lab.course``)."""
    from ..course import course_dir
    return course_dir("exercises")


def _declared(path: Path, release: Path | None) -> tuple[list[str], str | None]:
    """Exercise ids of a submitted notebook (released starter first) and a note on problems."""
    starter = release / path.name if release is not None else None
    if starter is not None and starter.is_file():
        with contextlib.suppress(OSError, ValueError):
            return notebook_exercises(starter), None
    try:
        return notebook_exercises(path), None
    except (OSError, ValueError, UnicodeDecodeError) as e:
        return [], f"could not read {path.name}: {e}"


# ------------------------------------------------------------------------------ the child
#: Variables of the grader's environment a submission gets (every other one, tokens and
#: keys included, stays out): the locale, the search path and acl_lab's own ``ACL_LAB_*``.
ENV_KEPT = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "LD_LIBRARY_PATH", "VIRTUAL_ENV",
            "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8")
ENV_KEPT_PREFIXES = ("LC_", "ACL_LAB_")


def _child_env(solutions: list[str], tmpdir: str) -> tuple[dict[str, str], list[str]]:
    """The worker's environment and the folders of its extra rubric modules (the sandbox
    binds them back): an allow-list of ours (:data:`ENV_KEPT`), the hooks it needs, small
    thread pools, and ``TMPDIR`` and ``HOME`` at ``tmpdir`` (the sandbox's private ``/tmp``,
    or a folder of this notebook's own without the sandbox)."""
    env = {k: v for k, v in os.environ.items()
           if k in ENV_KEPT or k.startswith(ENV_KEPT_PREFIXES)}
    entries: list[str] = []
    roots: list[str] = []
    for entry in (e.strip() for e in env.get(_worker.EXTRA_ENV, "").split(os.pathsep)):
        if not entry:
            continue
        if entry.endswith(".py") or os.sep in entry:
            path = Path(entry).resolve()
            entries.append(str(path))
            roots.append(str(path.parent if path.suffix == ".py" else path))
            continue
        entries.append(entry)
        module = sys.modules.get(entry)
        file = getattr(module, "__file__", None)
        if file:
            root = Path(file).resolve().parent
            if Path(file).name == "__init__.py":
                root = root.parent
            for _ in entry.split(".")[1:]:
                root = root.parent
            roots.append(str(root))
    if entries:
        env[_worker.EXTRA_ENV] = os.pathsep.join(entries)
    paths = roots + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    env[_worker.SOLUTIONS_ENV] = os.pathsep.join(solutions)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["MALLOC_ARENA_MAX"] = "2"  # each thread's arena reserves address space
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TMPDIR"] = env["HOME"] = tmpdir
    # the model cache the grader filled, wherever HOME now points (the sandbox binds it)
    env["ACL_LAB_CACHE"] = zoo.cache_dir()
    env["MPLCONFIGDIR"] = os.path.join(tmpdir, "matplotlib")
    return env, roots


class _Tail(threading.Thread):
    """Reads a pipe to its end, keeping only the last ``TAIL_BYTES``."""

    def __init__(self, pipe: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.chunks: deque[bytes] = deque()
        self.size = 0

    def run(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := self.pipe.read1(65536):  # type: ignore[attr-defined]
                self.chunks.append(chunk)
                self.size += len(chunk)
                while self.size - len(self.chunks[0]) > TAIL_BYTES:
                    self.size -= len(self.chunks.popleft())

    def text(self) -> str:
        data = b"".join(self.chunks)[-TAIL_BYTES:]
        return data.decode("utf-8", errors="replace")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group (it and anything the learner started)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _run_child(job: _Job, runs: list[tuple[Exercise, int, int]], workdir: Path,
               opts: GradeOptions, solutions: list[str]
               ) -> tuple[int | None, bool, str, Path, bool]:
    """Start the worker on ``job``'s notebook for ``runs`` (exercise, hidden run or not,
    its seed and its host schedule's seed, in order); wait at most ``opts.timeout`` s. The
    schedule seeds go to the emulator server, beside the sandbox, not through the worker
    (a submission cannot pick its schedules).

    Returns:
        exit code (negative: signal), whether it was killed for time, the end of its output,
        the folder holding its results, and whether the kernel killed a process of it for
        the sandbox's memory limit (``limits``).
    """
    run_dir, out_dir = workdir / "run", workdir / "out"
    run_dir.mkdir()
    out_dir.mkdir()
    notebook = run_dir / job.path.name
    shutil.copyfile(job.path, notebook)
    spec = {"notebook": str(notebook), "out": str(out_dir), "memory_mb": opts.memory_mb,
            "exercises": [[ex.id, seed] for ex, seed, _ in runs],
            "solutions": solutions}
    record_dir = workdir / _worker.RECORDED_DIR
    record_dir.mkdir()
    # the sandbox's /tmp is private; without it, a folder of this notebook's own
    tmpdir = "/tmp" if opts.sandbox else str(workdir / "tmp")
    if not opts.sandbox:
        os.mkdir(tmpdir)
    env, rubric_dirs = _child_env(solutions, tmpdir)
    # the emulator (Session, recorder) runs outside the worker's sandbox, beside it
    emulator = _sandbox.start_emulator(str(record_dir), str(run_dir),
                                       [[ex.id, schedule] for ex, _, schedule in runs],
                                       opts.memory_mb, env, opts.sandbox,
                                       [*solutions, *opts.hidden], rubric_dirs)
    env[PIPE_FD_ENV] = str(emulator.client_fd)
    argv = [sys.executable, "-m", "acl_lab.grading.worker"]
    if opts.sandbox:
        # solutions, every learner's submission and the grader's output are empty inside;
        # only this run's folders are writable (see acl_lab.grading.sandbox)
        argv = _sandbox.command(argv, writable=[str(run_dir), str(out_dir)],
                                hidden=[*solutions, *opts.hidden], cwd=str(run_dir),
                                needed=rubric_dirs, tmp_mb=_sandbox.tmpfs_mb(opts.memory_mb))
    # memory (heap, tmpfs files, children) and process count of the whole sandbox
    limits = _limits.create(opts.memory_mb)
    argv = limits.wrap(argv)
    try:
        proc = subprocess.Popen(
            argv, cwd=run_dir, env=env, stdin=subprocess.PIPE, pass_fds=(emulator.client_fd,),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    except OSError:
        emulator.kill()
        limits.close()
        raise
    finally:
        emulator.release_client_fd()
    assert proc.stdin is not None and proc.stdout is not None
    tail = _Tail(proc.stdout)
    tail.start()
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(json.dumps(spec).encode())
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    killed = False
    try:
        proc.wait(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        killed = True
    finally:
        _kill_group(proc)  # a timed-out child, or what a finished one left running
    try:
        code = proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process immune to SIGKILL
        code = None
    emulator.wait(KILL_GRACE_S)  # it ends when the worker's end of the socket closes
    tail.join(2.0)
    proc.stdout.close()
    if opts.sandbox and code is not None and 128 < code < 128 + 65:
        code = 128 - code  # bwrap reports a child killed by signal N as exit code 128 + N
    out_of_memory = limits.out_of_memory()
    limits.close()
    return code, killed, tail.text(), out_dir, out_of_memory


# ------------------------------------------------------------------------------ grading
def _read_json(path: Path) -> Any:
    """A JSON file the child wrote, or None when it is missing or incomplete."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _strings(value: Any, limit: int = _worker.MAX_VIOLATIONS, size: int = 4000) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(v)[:size] for v in value[:limit] if isinstance(v, str)]


def _death_reason(code: int | None, killed: bool, output: str, opts: GradeOptions,
                  phase: str, out_of_memory: bool = False) -> str:
    """Why a child ended without a complete result for an exercise."""
    if killed:
        return f"time limit of {opts.timeout:g} s exceeded {phase}"
    if out_of_memory:
        return (f"memory limit of {opts.memory_mb} MiB exceeded {phase} (the whole sandbox: "
                "heap, files in /tmp and /dev/shm and child processes together)")
    if code == _worker.EXIT_MEMORY or "MemoryError" in output:
        return f"memory limit of {opts.memory_mb} MiB exceeded {phase}"
    if code == _worker.EXIT_BAD_JOB:
        return f"internal grader error (bad job description) {phase}"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        why = f"killed by signal {name}"
        if -code == signal.SIGKILL:
            why += ", perhaps by the system for lack of memory"
        return f"the notebook ended the grading process ({why}) {phase}"
    return f"the notebook ended the grading process (exit code {code}) {phase}"


def grade_exercise_folder(ex: Exercise, seed: int, folder: Path,
                          cell_errors: Sequence[str] = (),
                          recorded: Path | None = None,
                          schedule: int = 0) -> tuple[Report | None, str | None]:
    """Grade what the worker left in ``folder`` for ``ex`` (``load_run``), in this process.

    Returns:
        ``(report, None)``, or ``(None, reason)`` when the folder holds no complete result
        (``reason`` is None when the result file is missing: the child died first).
    """
    run, reason = load_run(ex, seed, folder, cell_errors, recorded, schedule)
    return (grade_run(ex, run), None) if run is not None else (None, reason)


def load_run(ex: Exercise, seed: int, folder: Path, cell_errors: Sequence[str] = (),
             recorded: Path | None = None, schedule: int = 0) -> tuple[Run | None, str | None]:
    """The ``Run`` the worker left in ``folder`` for ``ex``, rebuilt in this process.

    The trace is loaded with the strict ``Trace.load``, the findings are recomputed here and
    the ``Run`` carries ``seed`` and ``schedule`` (this process's), never anything the child
    claims. The trace and the landed bytes are read from ``recorded`` (default: the emulator
    server's folder of the same name, ``<workdir>/recorded/ex<i>``), never from what the
    worker wrote.

    Returns:
        ``(run, None)``, or ``(None, reason)`` when the folder holds no complete result
        (``reason`` is None when the result file is missing: the child died first).
    """
    from ..tracer.trace import Trace

    doc = _read_json(folder / _worker.RESULT_FILE)
    if doc is None:
        return None, None
    if not isinstance(doc, dict) or doc.get("exercise") != ex.id:
        return None, "the grading process wrote an invalid result file"
    status = doc.get("status")
    errors = "; ".join(cell_errors[:3])
    violations = _strings(doc.get("violations"))
    if status != "ran" and violations:
        return None, "; ".join(violations)
    if status == "missing_entry":
        why = f"the notebook defines no function named {ex.entry!r}"
        return None, why + (f" (cell errors: {errors})" if errors else "")
    if status == "not_callable":
        return None, f"{ex.entry!r} in the notebook is not a function"
    if status == "run_failed":
        return None, f"internal grader error: exercise {ex.id} could not be run: " \
                     f"{str(doc.get('error'))[:2000]}"
    if status != "ran":
        return None, "the grading process wrote an invalid result file"
    if recorded is None:
        recorded = folder.parent.parent / _worker.RECORDED_DIR / folder.name
    try:
        trace = Trace.load(recorded / _worker.TRACE_FILE)
    except (OSError, ValueError) as e:
        return None, f"the emulator process wrote no valid trace: {e}"
    try:
        findings = tuple(trace.findings())
    except Exception as e:  # a checks bug on an odd (but valid) trace
        return None, f"internal grader error: the findings could not be computed: {e}"
    error = doc.get("error")
    error = error[:20000] if isinstance(error, str) else None
    timed_out = doc.get("timed_out") is True
    result: Any = None
    unserialisable = doc.get("unserialisable")
    if isinstance(unserialisable, str):
        error = error or unserialisable[:2000]
    else:
        try:
            result = _worker.decode_result(doc.get("result", {"t": "v", "v": None}), folder)
        except (OSError, ValueError) as e:
            return None, f"the grading process wrote an invalid result: {e}"
    try:
        landed = _worker.load_landed(recorded)
    except ValueError as e:
        return None, f"the grading process wrote an invalid record of the copies back: {e}"
    run = Run(exercise=ex.id, seed=seed, result=result, error=error, timed_out=timed_out,
              trace=trace, findings=findings, violations=tuple(violations), landed=landed,
              schedule=schedule)
    return run, None


def grade_notebook(job: _Job, opts: GradeOptions, solutions: list[str]) -> NotebookOutcome:
    """Run one notebook in a child process and grade its exercises here."""
    started = time.monotonic()
    outcome = NotebookOutcome(job.learner, job.name)
    outcome.notes += [f"exercise {s} is graded from another notebook" for s in job.skipped]
    seeds = [new_seed() for _ in job.exercises]
    # the visible runs first (their folders ex0, ex1, ...), then every hidden run, each
    # with a seed of its own
    hidden = [(i, variant, h.description) for i, ex in enumerate(job.exercises)
              for h, variant in zip(ex.hidden, ex.hidden_exercises(), strict=True)]
    hidden_seeds = [new_seed() for _ in hidden]
    # each run once per host schedule of its exercise (the same arguments), in order: the
    # folders of a run's schedules are consecutive
    runs = [(ex, seed, k) for ex, seed in zip(job.exercises, seeds, strict=True)
            for k in range(ex.schedules)]
    runs += [(variant, seed, k) for (_, variant, _), seed in zip(hidden, hidden_seeds,
                                                                 strict=True)
             for k in range(variant.schedules)]
    with tempfile.TemporaryDirectory(prefix="acl-lab-grade-", ignore_cleanup_errors=True) as tmp:
        try:
            code, killed, output, out_dir, oom = _run_child(job, runs, Path(tmp), opts,
                                                            solutions)
        except OSError as e:
            for ex, seed in zip(job.exercises, seeds, strict=True):
                outcome.exercises.append(ExerciseOutcome(
                    ex, job.name, failure=f"internal grader error: could not start the "
                                          f"grading process: {e}", seed=seed))
            return outcome
        outcome.exit_code, outcome.timed_out, outcome.output_tail = code, killed, output
        nb_doc = _read_json(out_dir / _worker.NOTEBOOK_FILE)
        failed: str | None = None
        if not (out_dir / _worker.READY_FILE).is_file() and not killed:
            last = (output.strip().splitlines() or ["no output"])[-1][:500]
            failed = (f"internal grader error: the grading process failed before running "
                      f"the notebook (exit code {code}): {last}")
            if "MemoryError" in output:
                failed += f" (--memory-mb {opts.memory_mb} is too small for the grader itself)"
            print(f"acl-lab grade: {job.learner}/{job.name}: {failed}", file=sys.stderr)
        if isinstance(nb_doc, dict):
            outcome.cell_errors = _strings(nb_doc.get("cell_errors"), limit=50)
            if isinstance(nb_doc.get("failed"), str):
                failed = f"the notebook could not be run: {nb_doc['failed'][:2000]}"
        first_missing: str | None = None
        index = 0

        def graded(ex: Exercise, seed: int) -> tuple[Report | None, str | None]:
            """The report over the runs of ``ex``'s schedules from folder ``index`` on, or
            why there is none (None: a result is missing, the child died first)."""
            nonlocal index
            got: list[Run] = []
            why: str | None = None
            missing = False
            for k in range(ex.schedules):
                run, reason = load_run(ex, seed, out_dir / f"ex{index}", outcome.cell_errors,
                                       schedule=k)
                index += 1
                if run is not None:
                    got.append(run)
                elif reason is not None:
                    why = why or reason
                else:
                    missing = True
            if why is not None:
                return None, why
            if missing or not got:
                return None, None
            return grade_runs(ex, got), None

        for ex, seed in zip(job.exercises, seeds, strict=True):
            report, reason = graded(ex, seed)
            if report is None and reason is None:
                if failed is not None:
                    reason = failed
                else:
                    if first_missing is None:
                        first_missing = ex.id
                    phase = (f"before exercise {first_missing} finished" if nb_doc is not None
                             else f"while running the notebook's cells, before exercise "
                                  f"{first_missing} finished")
                    reason = _death_reason(code, killed, output, opts, phase, oom)
                    if nb_doc is not None and nb_doc.get("memory") is True:
                        cells = "; ".join(e for e in outcome.cell_errors if "MemoryError" in e)
                        reason = f"memory limit of {opts.memory_mb} MiB exceeded " \
                                 f"while running the notebook's cells ({cells})"
            outcome.exercises.append(ExerciseOutcome(ex, job.name, report, reason, seed))
        # outcome.exercises[i] is job.exercises[i]'s; the hidden runs' folders follow
        for (parent, variant, what), seed in zip(hidden, hidden_seeds, strict=True):
            report, reason = graded(variant, seed)
            if report is None and reason is None:
                reason = failed or _death_reason(code, killed, output, opts,
                                                 f"before hidden run {variant.id} finished",
                                                 oom)
            outcome.exercises[parent].hidden.append(
                HiddenOutcome(variant, what, report, reason, seed))
    outcome.seconds = time.monotonic() - started
    return outcome


# ------------------------------------------------------------------------------ the run
class _Progress:
    """A text progress bar on a stream: redrawn in place on a terminal, a line per step
    otherwise (logs and CI)."""

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.lock = threading.Lock()

    def step(self, label: str) -> None:
        with self.lock:
            self.done += 1
            width = 24
            filled = width * self.done // max(self.total, 1)
            bar = "#" * filled + "." * (width - filled)
            line = f"grade [{bar}] {self.done}/{self.total} {label}"
            if self.tty:
                self.stream.write("\r\x1b[2K" + line + ("\n" if self.done >= self.total
                                                        else ""))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()


def plan_jobs(submissions: dict[str, list[Path]], root: Path, opts: GradeOptions,
              warn: Callable[[str], None]) -> tuple[dict[str, list[_Job]], list[Exercise],
                                                    dict[str, list[str]]]:
    """The notebooks to run per learner, the exercises every learner is graded on, and the
    notes for each learner (unreadable notebooks, unknown exercise ids)."""
    wanted = set(opts.exercise_ids)
    known = {ex.id: ex for ex in all_exercises()}
    jobs: dict[str, list[_Job]] = {}
    notes: dict[str, list[str]] = {}
    seen_ids: set[str] = set()
    for learner, paths in submissions.items():
        jobs[learner], notes[learner] = [], []
        taken: set[str] = set()
        folder = root / learner
        for path in paths:
            ids, note = _declared(path, opts.release)
            if note:
                notes[learner].append(note)
            elif not ids:
                notes[learner].append(f"{path.name} holds no graded exercise "
                                      "(no metadata.acl_lab.exercises)")
            chosen: list[Exercise] = []
            skipped: list[str] = []
            for ex_id in dict.fromkeys(ids):
                if wanted and ex_id not in wanted:
                    continue
                if ex_id not in known:
                    msg = f"{path.name} declares exercise {ex_id}, which this grader does " \
                          "not know"
                    notes[learner].append(msg)
                    warn(f"{learner}: {msg}")
                    continue
                if ex_id in taken:
                    skipped.append(ex_id)
                    continue
                taken.add(ex_id)
                chosen.append(known[ex_id])
            if chosen:
                jobs[learner].append(_Job(learner, path, path.relative_to(folder).as_posix(),
                                          tuple(chosen), tuple(skipped)))
                seen_ids.update(ex.id for ex in chosen)
    ids = list(opts.exercise_ids) if opts.exercise_ids else sorted(seen_ids)
    return jobs, [known[i] for i in ids], notes


def worker_count(jobs: int | None, notebooks: int) -> int:
    """How many notebooks are graded at the same time: ``jobs``, by default every core
    (``os.cpu_count()``), never more than there are notebooks and at least one."""
    wanted = jobs if jobs is not None else (os.cpu_count() or 1)
    return max(1, min(wanted, notebooks))


def grade_submissions(root: Path, out: Path, opts: GradeOptions,
                      progress: IO[str] | None = None) -> list[LearnerOutcome]:
    """Grade every learner under ``root``; write ``grades.csv`` and the feedback pages.

    Args:
        root: the submissions folder (one folder per learner).
        out: the output folder (created).
        opts: time and memory limits, exercise filter, parallel jobs (default every core,
            see ``worker_count``), figures, release.
        progress: where the progress bar goes (default: stderr).

    Returns:
        One outcome per learner, by name.
    """
    stream = progress if progress is not None else sys.stderr
    submissions = find_submissions(root)
    jobs, expected, notes = plan_jobs(submissions, root, opts,
                                      lambda m: print(f"acl-lab grade: {m}", file=stream))
    solutions = _worker.solution_dirs()
    for ex in expected:
        # Build what the arguments need (zoo models in the cache) here: inside the sandbox
        # the cache is read-only.
        for each in (ex, *ex.hidden_exercises()):
            with contextlib.suppress(Exception):
                each.make_args(0)
    flat = [j for learner in jobs for j in jobs[learner]]
    workers = worker_count(opts.jobs, len(flat))
    stream.write(f"acl-lab grade: {len(submissions)} learner(s), {len(flat)} notebook(s), "
                 f"{len(expected)} exercise(s); time limit {opts.timeout:g} s, memory "
                 f"limit {opts.memory_mb} MiB per notebook; {workers} at a time\n")
    stream.flush()
    bar = _Progress(len(flat), stream)
    results: dict[tuple[str, str], NotebookOutcome] = {}

    def work(job: _Job) -> None:
        try:
            nb = grade_notebook(job, opts, solutions)
        except Exception as e:  # a grader bug: this notebook scores 0, the others go on
            traceback.print_exc(file=stream)
            nb = NotebookOutcome(job.learner, job.name, exercises=[
                ExerciseOutcome(ex, job.name, failure=f"internal grader error: "
                                f"{type(e).__name__}: {e}") for ex in job.exercises])
        results[(job.learner, job.name)] = nb
        score = sum(e.score for e in nb.exercises)
        total = sum(e.total for e in nb.exercises)
        bar.step(f"{job.learner}/{job.name}: {score}/{total} points ({nb.seconds:.1f} s)")

    if workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(work, flat))
    else:
        for job in flat:
            work(job)
    outcomes: list[LearnerOutcome] = []
    for learner in submissions:
        lo = LearnerOutcome(learner)
        lo.notebooks = [results[(learner, j.name)] for j in jobs[learner]]
        by_id = {e.exercise.id: e for nb in lo.notebooks for e in nb.exercises}
        for ex in expected:
            lo.exercises.append(by_id.get(ex.id) or ExerciseOutcome(
                ex, None, failure=f"no submitted notebook holds exercise {ex.id}"))
        if notes[learner]:
            lo.notebooks.insert(0, NotebookOutcome(learner, "(submission)",
                                                   notes=notes[learner]))
        outcomes.append(lo)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "grades.csv", outcomes)
    for lo in outcomes:
        (out / f"{lo.learner}.html").write_text(
            feedback_html(lo, include_figures=opts.include_figures, sandboxed=opts.sandbox,
                          limits=opts.limits),
            encoding="utf-8")
    return outcomes


# ------------------------------------------------------------------------------ outputs
def _csv_safe(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def write_csv(path: Path, outcomes: Sequence[LearnerOutcome]) -> None:
    """``grades.csv``: the header, then one row per learner, exercise and rubric item."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_HEADER)
        for lo in outcomes:
            for eo in lo.exercises:
                w.writerows(r.cells() for r in eo.rows(lo.learner))


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


_PAGE_STYLE = """
body{font-family:sans-serif;margin:24px;max-width:1100px;line-height:1.4}
table.acl-lab-summary{border-collapse:collapse;margin:12px 0}
table.acl-lab-summary td,table.acl-lab-summary th{border:1px solid #d5d8dc;padding:4px 10px}
.acl-lab-failure{color:#c0392b;white-space:pre-wrap;font-weight:bold}
.acl-lab-not-graded{border:1px solid #d5d8dc;border-radius:6px;padding:8px 12px;margin:4px 0}
.acl-lab-not-graded li{border-left:4px solid #c0392b;padding:2px 8px;margin:6px 0;
  list-style:none}
.acl-lab-not-graded ul{padding-left:0}
pre{background:#f4f6f7;padding:8px;white-space:pre-wrap;max-height:320px;overflow:auto}
"""


def _failure_html(eo: ExerciseOutcome) -> str:
    ex = eo.exercise
    items = "\n".join(
        f'<li class="acl-lab-item" data-item="{_esc(it.id)}" data-status="fail">'
        f"✗ {_esc(it.description)} (0/{it.points} points)</li>" for it in ex.items)
    return (f'<div class="acl-lab-check acl-lab-not-graded" data-exercise="{_esc(ex.id)}">\n'
            f'<div class="acl-lab-title"><b>Exercise {_esc(ex.id)}: {_esc(ex.title)}</b></div>\n'
            f'<div class="acl-lab-score">0/{ex.points} points</div>\n'
            f'<div class="acl-lab-failure">{_esc(eo.failure or "not graded")}</div>\n'
            f'<ul class="acl-lab-items">\n{items}\n</ul>\n</div>')


def _hidden_html(eo: ExerciseOutcome) -> str:
    """The exercise's hidden runs on the feedback page: each item as ``hidden: ...`` with
    its points, the reason and, when it failed, the hint."""
    items: list[str] = []
    for row, item in zip(eo.rows("")[len(eo.exercise.items):],
                         [it for h in eo.exercise.hidden for it in h.items], strict=True):
        status = "pass" if row.passed else "fail"
        hint = (f'<div class="acl-lab-hint"><b>Hint:</b> {_esc(item.hint)}</div>'
                if not row.passed and item.hint else "")
        items.append(
            f'<li class="acl-lab-hidden-item" data-item="{_esc(row.item)}" '
            f'data-status="{status}">{"✓" if row.passed else "✗"} hidden: '
            f"{_esc(item.description)} ({row.points}/{row.max_points} points)"
            f'<div class="acl-lab-reason">{_esc(row.reason)}</div>{hint}</li>')
    scored = sum(h.score for h in eo.hidden) if eo.report is not None else 0
    total = sum(h.points for h in eo.exercise.hidden)
    return (f'<div class="acl-lab-hidden" data-exercise="{_esc(eo.exercise.id)}">'
            f"<b>Hidden runs</b> (only acl-lab grade makes them: fresh seeds, other sizes; "
            f"{scored}/{total} points)"
            f'<ul class="acl-lab-hidden-items">\n' + "\n".join(items) + "\n</ul></div>")


def feedback_html(lo: LearnerOutcome, include_figures: bool = True,
                  sandboxed: bool = True, limits: Sequence[str] = ()) -> str:
    """One learner's feedback page: a summary table, each exercise's report (or why it was
    not graded), the notebook's cell errors and the limits each notebook ran under;
    self-contained and offline (plotly.js inline at most once, only when a figure is
    shown)."""
    rows = "\n".join(
        f"<tr><td>{_esc(eo.exercise.id)}</td><td>{_esc(eo.exercise.title)}</td>"
        f"<td>{_esc(eo.notebook or '-')}</td><td>{eo.score}/{eo.total}</td></tr>"
        for eo in lo.exercises)
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        f"<title>acl_lab feedback: {_esc(lo.learner)}</title>",
        f"<style>{_PAGE_STYLE}</style>", "</head>", "<body>",
        f'<h1>Feedback for <span class="acl-lab-learner">{_esc(lo.learner)}</span></h1>',
        f'<p class="acl-lab-total"><b>Total: {lo.score}/{lo.total} points</b></p>',
        *([f'<p class="acl-lab-unsandboxed" style="color:#c0392b"><b>Warning:</b> '
           f"{_esc(UNSANDBOXED_WARNING)}</p>"] if not sandboxed else []),
        '<table class="acl-lab-summary"><tr><th>exercise</th><th>title</th>'
        f"<th>notebook</th><th>points</th></tr>\n{rows}\n</table>",
    ]
    js_done = False
    for eo in lo.exercises:
        parts.append(f'<section class="acl-lab-exercise" id="exercise-{_esc(eo.exercise.id)}">')
        if eo.report is not None:
            fragment = eo.report.to_html(include_figures=include_figures,
                                         include_plotlyjs=not js_done)
            js_done = js_done or 'class="acl-lab-figure"' in fragment
            parts.append(fragment)
        else:
            parts.append(_failure_html(eo))
        if eo.exercise.hidden:
            parts.append(_hidden_html(eo))
        parts.append("</section>")
    for nb in lo.notebooks:
        if not (nb.cell_errors or nb.notes or (nb.output_tail and _troubled(nb))):
            continue
        parts.append(f'<section class="acl-lab-notebook"><h2>{_esc(nb.notebook)}</h2>')
        for note in nb.notes:
            parts.append(f'<p class="acl-lab-note">{_esc(note)}</p>')
        if nb.cell_errors:
            errs = "\n".join(f"<li>{_esc(e)}</li>" for e in nb.cell_errors)
            parts.append(f'<p>Cells that raised an error:</p><ul class="acl-lab-cell-errors">'
                         f"{errs}</ul>")
        if nb.output_tail and _troubled(nb):
            parts.append("<details><summary>End of the notebook's output</summary>"
                         f'<pre class="acl-lab-output">{_esc(nb.output_tail)}</pre></details>')
        parts.append("</section>")
    if limits:
        items = "\n".join(f"<li>{_esc(line)}</li>" for line in limits)
        parts.append(f'<details class="acl-lab-limits"><summary>Limits each notebook ran '
                     f"under</summary><ul>{items}</ul></details>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)


def _troubled(nb: NotebookOutcome) -> bool:
    return nb.timed_out or (nb.exit_code not in (0, None)) or any(
        e.report is None for e in nb.exercises)


def summary_table(outcomes: Sequence[LearnerOutcome]) -> str:
    """The final table: one line per learner, points per exercise and in total."""
    if not outcomes:
        return "no learners"
    ids = [eo.exercise.id for eo in outcomes[0].exercises]
    head = ["learner", *ids, "total"]
    body = [[lo.learner, *[f"{eo.score}/{eo.total}" for eo in lo.exercises],
             f"{lo.score}/{lo.total}"] for lo in outcomes]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
             for r in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ CLI
def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``acl-lab grade``."""
    p.add_argument("submissions", metavar="SUBMISSIONS_DIR",
                   help="one folder per learner holding the learner's notebooks")
    p.add_argument("-o", "--output", metavar="OUT_DIR", required=True,
                   help="where grades.csv and the feedback pages go")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"wall-clock seconds per notebook (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, metavar="M",
                   help=f"address-space limit per notebook in MiB (default {DEFAULT_MEMORY_MB})")
    p.add_argument("--exercise", action="append", default=[], metavar="ID",
                   help="grade only this exercise (repeatable)")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="notebooks graded at the same time (default: one per core, "
                        f"{os.cpu_count() or 1} here)")
    p.add_argument("--no-figures", action="store_true",
                   help="feedback pages without figures (smaller; no plotly.js)")
    p.add_argument("--no-sandbox", action="store_true",
                   help="run submissions without bubblewrap (only where bwrap cannot run; "
                        "every feedback page then carries a warning)")
    p.add_argument("--release", metavar="DIR",
                   help="the released starter notebooks, whose metadata says which exercises "
                        "each notebook holds (default: the repository's exercises/)")


def main(opts: argparse.Namespace) -> int:
    """``acl-lab grade``: 0 when grading completed (whatever the learners scored), 2 for
    unusable arguments."""
    root = Path(opts.submissions)
    if not root.is_dir():
        print(f"acl-lab grade: {root}: no such folder (expected one folder per learner, "
              "each holding that learner's notebooks)", file=sys.stderr)
        return 2
    if opts.timeout <= 0 or opts.memory_mb <= 0 or (opts.jobs is not None and opts.jobs < 1):
        print("acl-lab grade: --timeout, --memory-mb and --jobs must be positive",
              file=sys.stderr)
        return 2
    try:
        _worker.load_extra_rubrics()
    except Exception as e:
        print(f"acl-lab grade: {_worker.EXTRA_ENV}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    try:
        all_exercises()
    except Exception as e:  # a rubric module that does not import
        print(f"acl-lab grade: could not load the rubrics: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 2
    for ex_id in opts.exercise:
        try:
            get_exercise(ex_id)
        except KeyError as e:
            print(f"acl-lab grade: {e.args[0]}", file=sys.stderr)
            return 2
    release = Path(opts.release) if opts.release else default_release_dir()
    if opts.release and not release.is_dir():
        print(f"acl-lab grade: --release {release}: no such folder", file=sys.stderr)
        return 2
    if not release.is_dir():  # an installation without the course: say so, do not guess
        print(f"acl-lab grade: no released exercises at {release}; each submitted "
              "notebook's own metadata says which exercises it holds (--release DIR)",
              file=sys.stderr)
    out = Path(opts.output)
    sandboxed = not opts.no_sandbox
    if sandboxed:
        ok, why = _sandbox.available()
        if not ok:
            print(f"acl-lab grade: cannot sandbox the submissions: {why} (pass --no-sandbox "
                  "to grade without it)", file=sys.stderr)
            return 2
    else:
        print(f"acl-lab grade: warning: {UNSANDBOXED_WARNING}", file=sys.stderr)
    options = GradeOptions(timeout=opts.timeout, memory_mb=opts.memory_mb,
                           exercise_ids=tuple(dict.fromkeys(opts.exercise)), jobs=opts.jobs,
                           include_figures=not opts.no_figures,
                           release=release if release.is_dir() else None,
                           sandbox=sandboxed,
                           hidden=(str(root.resolve()), str(out.resolve())),
                           limits=(f"time: {opts.timeout:g} s for the whole notebook",
                                   *_limits.describe(opts.memory_mb,
                                                     _sandbox.tmpfs_mb(opts.memory_mb),
                                                     sandboxed)))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"acl-lab grade: cannot create {out}: {e}", file=sys.stderr)
        return 2
    started = time.monotonic()
    outcomes = grade_submissions(root, out, options)
    print(summary_table(outcomes))
    print(f"acl-lab grade: graded {len(outcomes)} learner(s) in "
          f"{time.monotonic() - started:.1f} s; wrote {out / 'grades.csv'} and "
          f"{len(outcomes)} feedback page(s) in {out}", file=sys.stderr)
    return 0
