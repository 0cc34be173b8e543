"""Exploring host schedules: one program under many seeds, and what differs between them.

Threads take turns in virtual time (``runtime.hostsched``): seed 0 is the plain schedule,
any other seed a perturbed one (the tie-break order, thread start latencies, occasional
preemptions, device task times within the profile's jitter), and a seed replays its schedule
exactly. A bug that one schedule hides shows under another; this module runs many and says
which seed shows what:

* ``explore_schedules(fn, *args, seeds=8)``: a function, in this process, in a fresh
  session per seed (notebooks, tests, grading);
* ``explore_program(path, n)``: a program, one ``acl-lab run --seed S`` process per seed
  (``acl-lab run --explore N``, ``explore_main``).

An ``Exploration`` groups the runs by *outcome* (exit status or exception, output, the bytes
the copies delivered: ``summary.ResultsDigest``) and lists every finding with the seeds that
show it; ``report()`` is the text ``--explore`` prints, ending with the command that replays
the first seed of a minority outcome.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Summary schema of ``--explore --summary``.
EXPLORE_SCHEMA_VERSION = 1


@dataclass
class ScheduleRun:
    """One run under one seed.

    ``outcome`` is what is compared between seeds: exit status (or the exception), a digest
    of the output, a digest of the results. ``findings`` are ``(kind, severity, file,
    line)``; ``trace`` is the frozen trace of an in-process run (None for a program's).
    """

    seed: int
    outcome: tuple[str, str, str]
    findings: list[tuple[str, str, str, int]]
    trace: Any = None
    result: Any = None
    error: str | None = None
    output: str = ""
    exit_code: int = 0


@dataclass
class Exploration:
    """The runs of one program under several seeds (see the module notes)."""

    what: str
    runs: list[ScheduleRun] = field(default_factory=list)
    replay: str = ""  # how to replay a seed: a format string over {seed}

    def run(self, seed: int) -> ScheduleRun:
        """The run of ``seed``."""
        for r in self.runs:
            if r.seed == seed:
                return r
        raise KeyError(f"seed {seed} was not explored")

    @property
    def seeds(self) -> list[int]:
        """The seeds explored, in order."""
        return [r.seed for r in self.runs]

    def outcomes(self) -> list[tuple[tuple[str, str, str], list[int]]]:
        """Each distinct outcome with the seeds that gave it, the most common first."""
        groups: dict[tuple[str, str, str], list[int]] = {}
        for r in self.runs:
            groups.setdefault(r.outcome, []).append(r.seed)
        return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[1][0]))

    def findings(self) -> list[tuple[tuple[str, str, str, int], list[int]]]:
        """Each finding (kind, severity, file, line) with the seeds whose run has it."""
        groups: dict[tuple[str, str, str, int], list[int]] = {}
        for r in self.runs:
            for f in dict.fromkeys(r.findings):
                groups.setdefault(f, []).append(r.seed)
        return sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][3], kv[0][0]))

    def differs(self) -> bool:
        """Whether the seeds gave more than one outcome (a schedule-dependent result)."""
        return len(self.outcomes()) > 1

    def seed_with(self, kind: str) -> int | None:
        """The first seed whose run has a finding of ``kind`` (None: no seed has one)."""
        for (k, _sev, _f, _l), seeds in self.findings():
            if k == kind:
                return seeds[0]
        return None

    def differing_seed(self) -> int | None:
        """The first seed of an outcome other than the most common one (None: all agree)."""
        outs = self.outcomes()
        return outs[1][1][0] if len(outs) > 1 else None

    def report(self) -> str:
        """What ``acl-lab run --explore`` prints: outcomes, findings, the replay command."""
        n = len(self.runs)
        lines = [f"explored {n} schedule(s) of {self.what} (seeds {_ranges(self.seeds)})"]
        outs = self.outcomes()
        if len(outs) == 1:
            lines.append("  every schedule gave the same outcome ("
                         f"{self._outcome_text(outs[0])})")
        else:
            lines.append(f"  {len(outs)} different outcomes:")
            for i, out in enumerate(outs):
                lines.append(f"    {chr(65 + i % 26)}: {self._outcome_text(out)} - seeds "
                             f"{_ranges(out[1])}")
        found = self.findings()
        if found:
            lines.append("  findings:")
            for (kind, sev, file, line), seeds in found:
                which = "every seed" if len(seeds) == n else f"seeds {_ranges(seeds)} " \
                    f"(not {_ranges(sorted(set(self.seeds) - set(seeds)))})"
                lines.append(f"    {sev} {kind} {file}:{line} - {which}")
        else:
            lines.append("  no findings under any schedule")
        pick = self.differing_seed()
        if pick is None:
            partial = [seeds for _, seeds in found if len(seeds) < n]
            pick = partial[0][0] if partial else None
        if pick is not None and self.replay:
            lines.append(f"  replay seed {pick}: {self.replay.format(seed=pick)}")
        return "\n".join(lines)

    def _outcome_text(self, out: tuple[tuple[str, str, str], list[int]]) -> str:
        (status, output, results), seeds = out
        text = self.run(seeds[0]).output.strip().splitlines()
        shown = f" {text[-1][:60]!r}" if text else ""
        return f"{status}, output {output}{shown}, results {results}"

    def to_summary(self) -> dict[str, Any]:
        """The ``--explore --summary`` document."""
        return {
            "schema_version": EXPLORE_SCHEMA_VERSION,
            "explored": self.what,
            "seeds": self.seeds,
            "outcomes": [{"exit": o[0], "output": o[1], "results": o[2], "seeds": seeds}
                         for o, seeds in self.outcomes()],
            "findings": [{"kind": k, "severity": sev, "file": f, "line": ln, "seeds": seeds}
                         for (k, sev, f, ln), seeds in self.findings()],
            "differs": self.differs(),
        }




def _ranges(seeds: Iterable[int]) -> str:
    """``0-3, 5, 7-8`` for a sorted list of ints."""
    out: list[str] = []
    run: list[int] = []
    for s in sorted(seeds):
        if run and s == run[-1] + 1:
            run.append(s)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else
                       ", ".join(str(x) for x in run))
        run = [s]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(str(x) for x in run))
    return ", ".join(out) or "none"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


def result_digest(value: Any) -> str:
    """A digest of a function's result: arrays by dtype, shape and bytes, the rest by
    ``repr`` (containers element by element)."""
    h = hashlib.sha256()

    def feed(v: Any) -> None:
        import numpy as np

        if isinstance(v, np.ndarray):
            h.update(f"nd{v.dtype.str}{v.shape}".encode())
            h.update(np.ascontiguousarray(v).tobytes())
        elif isinstance(v, (list, tuple)):
            h.update(f"{type(v).__name__}{len(v)}".encode())
            for x in v:
                feed(x)
        elif isinstance(v, dict):
            h.update(f"dict{len(v)}".encode())
            for k in sorted(v, key=repr):
                feed(k)
                feed(v[k])
        elif isinstance(v, (bytes, bytearray, memoryview)):
            h.update(bytes(v))
        else:
            h.update(repr(v).encode())

    feed(value)
    return h.hexdigest()[:12]


# ============================================================================ functions
def run_schedule(fn: Callable[..., Any], *args: Any, seed: int = 0, **session: Any
                 ) -> ScheduleRun:
    """``fn(*args)`` in a fresh Session with host-schedule ``seed`` (the program's threads
    under the schedule: ``acl_lab.install``); never raises what ``fn`` raised."""
    import acl_lab

    from .runtime.session import Session

    acl_lab.install()
    out = io.StringIO()
    result: Any = None
    error: str | None = None
    with Session(seed=seed, **session) as s:
        try:
            with contextlib.redirect_stdout(out):
                result = fn(*args)
        except BaseException as e:  # the run's outcome
            error = f"{type(e).__name__}: {e}".splitlines()[0]
        trace = s.finish()
    findings = [(f.kind, f.severity, f.file, f.line) for f in trace.findings()]
    text = out.getvalue()
    outcome = (error or "returned", _digest(text.encode()),
               result_digest(result) if error is None else "-")
    return ScheduleRun(seed, outcome, findings, trace, result, error, text)


def explore_schedules(fn: Callable[..., Any], *args: Any, seeds: int | Iterable[int] = 8,
                      **session: Any) -> Exploration:
    """``fn(*args)`` under each seed (``seeds``: a count, 0..n-1, or the seeds), each in a
    fresh Session with deep copies of ``args`` where they can be copied (a run that changes
    them cannot leak into the next)."""
    chosen = range(seeds) if isinstance(seeds, int) else list(seeds)
    name = getattr(fn, "__qualname__", repr(fn))
    ex = Exploration(f"{name}()",
                     replay=f"acl_lab.schedules.run_schedule({name}, ..., seed={{seed}})")
    for seed in chosen:
        ex.runs.append(run_schedule(fn, *(_fresh(a) for a in args), seed=seed, **session))
    return ex


def _fresh(value: Any) -> Any:
    """A deep copy of an argument, or the value itself when it cannot be copied (a module,
    a function: nothing a run can change)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


# ============================================================================ programs
def explore_program(program: str, args: Sequence[str] = (), n: int = 8, *,
                    options: Sequence[str] = (), jobs: int | None = None,
                    traces: str | None = None,
                    progress: Callable[[ScheduleRun, int, int], None] | None = None
                    ) -> Exploration:
    """``acl-lab run --seed S [options] program args`` for S in 0..n-1, each in its own
    process (``jobs`` at once; default: the cores, at most 4). ``traces``: where each seed's
    trace goes (``FILE.acltrace`` becomes ``FILE.seedS.acltrace``)."""
    if n < 1:
        raise ValueError("--explore needs at least one schedule")
    jobs = max(1, min(jobs or min(os.cpu_count() or 1, 4), n))
    tmp = tempfile.mkdtemp(prefix="acl_lab-explore-")

    def one(seed: int) -> ScheduleRun:
        summary = os.path.join(tmp, f"seed{seed}.json")
        cmd = [sys.executable, "-m", "acl_lab", "run", "--quiet", "--seed", str(seed),
               "--summary", summary, *options]
        if traces:
            cmd += ["--trace", _seed_path(traces, seed)]
        cmd += [program, *args]
        env = {**os.environ, "ACL_LAB_SEED": str(seed)}
        p = subprocess.run(cmd, capture_output=True, env=env, check=False)
        try:
            doc = json.loads(Path(summary).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        findings = [(f.get("kind", ""), f.get("severity", ""), f.get("file", ""),
                     int(f.get("line", 0))) for f in doc.get("findings", [])]
        code = p.returncode
        status = f"exit {code}" + (f" ({doc['error']})" if doc.get("error") else "")
        out = p.stdout.decode("utf-8", "replace")
        outcome = (status, _digest(p.stdout), str(doc.get("results") or "-"))
        return ScheduleRun(seed, outcome, findings, None, None, doc.get("error"), out, code)

    ex = Exploration(program, replay=f"acl-lab run --seed {{seed}} {_quote(program)}"
                     + "".join(f" {_quote(a)}" for a in args))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(one, seed) for seed in range(n)]
        for i, fut in enumerate(futures):
            r = fut.result()
            ex.runs.append(r)
            if progress is not None:
                progress(r, i + 1, n)
    with contextlib.suppress(OSError):
        for f in Path(tmp).iterdir():
            f.unlink()
        os.rmdir(tmp)
    return ex


def _seed_path(path: str, seed: int) -> str:
    root, ext = os.path.splitext(path)
    return f"{root}.seed{seed}{ext or '.acltrace'}"


def _quote(text: str) -> str:
    import shlex
    return shlex.quote(text)


def explore_main(opts: Any) -> int:
    """``acl-lab run --explore N``: the program under N schedules; prints the report.

    Exit status: 0 when every schedule gave the same outcome (and, with ``--fail-on``, no
    schedule has a finding at that level), 1 when the outcomes differ, 3 for findings at
    the ``--fail-on`` level, 2 for a usage error.
    """
    from .tracer.summary import EXIT_FINDINGS, SEVERITIES

    n = int(opts.explore)
    if n < 1:
        print("acl-lab: --explore needs a number of schedules >= 1", file=sys.stderr)
        return 2
    if opts.seed is not None:
        print("acl-lab: --explore runs seeds 0..N-1; --seed replays one of them",
              file=sys.stderr)
        return 2
    options: list[str] = ["--profile", opts.profile, "--devices", str(opts.devices),
                          "--pageable-async", opts.pageable_async, "--run-mode",
                          opts.run_mode]

    def progress(r: ScheduleRun, i: int, total: int) -> None:
        if not opts.quiet:
            print(f"acl-lab: schedule {i}/{total} (seed {r.seed}): {r.outcome[0]}, "
                  f"{len(r.findings)} finding(s)", file=sys.stderr)

    ex = explore_program(opts.program, opts.args, n, options=options,
                         traces=getattr(opts, "trace", None), progress=progress)
    print("acl-lab: " + ex.report(), file=sys.stderr)
    if opts.summary:
        with open(opts.summary, "w", encoding="utf-8") as fh:
            json.dump(ex.to_summary(), fh, indent=2)
        if not opts.quiet:
            print(f"acl-lab: wrote {opts.summary}", file=sys.stderr)
    if ex.differs():
        return 1
    if opts.fail_on:
        worst = SEVERITIES.index(opts.fail_on)
        if any(SEVERITIES.index(sev) <= worst for (_k, sev, _f, _l), _s in ex.findings()):
            return EXIT_FINDINGS
    return ex.runs[0].exit_code if ex.runs else 0


__all__ = ["Exploration", "ScheduleRun", "explore_main", "explore_program",
           "explore_schedules", "result_digest", "run_schedule"]
