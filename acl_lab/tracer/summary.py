"""The JSON summary ``acl-lab run`` writes, and the ``--fail-on`` gate for CI.

Schema (``SUMMARY_SCHEMA_VERSION``; a reader checks the version before the fields)::

    {"schema_version": 2, "exit_code": int, "error": str | null, "interrupted": bool,
     "findings": [{"kind", "severity", "message", "file", "line",
                   "sites": [{"file": str, "line": int}, ...]}],
     "stats": {...},
     "schedule": {"seed": int, "threads": int, "switches": int, "left_control": int},
     "results": str | null}

``schedule`` is the host schedule of the run (``--seed`` replays it); ``results`` hashes the
bytes its copies delivered to host memory. Both were added within version 2 (readers that
do not know them ignore them).

``sites`` lists every distinct place a finding involves, in the order the check gives them
(a race has two: the two accesses; a leak has the allocation and where it was reclaimed);
``file``/``line`` stay the main site. Version 1 had no ``schema_version`` and no ``sites``.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from ..runtime.kinds import AllocKind
from .checks.base import SEVERITIES

_HOST_KINDS = (AllocKind.HOST_PINNED, AllocKind.HOST_PAGEABLE)

SUMMARY_SCHEMA_VERSION = 2
#: ``--fail-on`` levels: a finding of this severity or worse makes the run fail.
FAIL_ON = ("error", "warning", "info")


def finding_sites(f: Any) -> list[dict[str, Any]]:
    """Every distinct ``(file, line)`` of a finding: its main site first, then the others."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for file, line in ((f.file, f.line), *f.sites):
        if not file or (file, int(line)) in seen:
            continue
        seen.add((file, int(line)))
        out.append({"file": file, "line": int(line)})
    return out


def finding_entry(f: Any) -> dict[str, Any]:
    """The summary's entry for one finding (``Finding.to_summary()`` plus its sites)."""
    return {**f.to_summary(), "sites": finding_sites(f)}


def build_summary(trace: Any, findings: list[Any], *, exit_code: int, error: str | None,
                  interrupted: bool, results: str | None = None) -> dict[str, Any]:
    """The whole summary document of one run (``results``: the digest of the bytes its
    copies delivered to host memory, ``ResultsDigest``)."""
    meta = trace.meta
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "exit_code": exit_code,
        "error": error,
        "interrupted": interrupted,
        "findings": [finding_entry(f) for f in findings],
        "stats": trace.stats(),
        "schedule": {"seed": int(meta.get("schedule_seed", 0)),
                     "threads": int(meta.get("schedule_threads", 0)),
                     "switches": int(meta.get("schedule_switches", 0)),
                     "left_control": int(meta.get("schedule_preemptions", 0))},
        "results": results,
    }


class ResultsDigest:
    """A hook subscriber that hashes every byte the run's copies delivered to host memory,
    in the order they landed: two runs with the same digest computed the same results (what
    ``acl-lab run --explore`` compares between schedules)."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def on_landed(self, task: Any, region: Any, offset: int, data: bytes) -> None:
        """Hash a copy's bytes that landed in host memory."""
        if getattr(region, "kind", None) in _HOST_KINDS:
            self._h.update(int(offset).to_bytes(8, "little", signed=False))
            self._h.update(data)

    def hexdigest(self) -> str:
        """The digest so far (16 hex digits)."""
        return self._h.hexdigest()[:16]


def failing_findings(findings: list[Any], level: str) -> list[Any]:
    """The findings at ``level`` or worse (``SEVERITIES`` is ordered worst first)."""
    if level not in FAIL_ON:
        raise ValueError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {level!r}")
    worst = SEVERITIES.index(level)
    return [f for f in findings if SEVERITIES.index(f.severity) <= worst]


#: Exit status of ``run --fail-on LEVEL`` when the program exited 0 but findings at that level
#: exist (1 is the program's own failure, 2 a usage or output error, 130 an interrupt).
EXIT_FINDINGS = 3


def default_output_paths(program: str, cwd: str | None = None) -> tuple[str, str]:
    """Where ``run`` writes with no output options: ``<program>.acltrace`` and
    ``<program>.summary.json`` in the working directory (as ``nsys profile`` writes
    ``report1.nsys-rep`` there)."""
    stem = os.path.splitext(os.path.basename(program))[0] or "program"
    base = os.path.join(cwd or os.getcwd(), stem)
    return base + ".acltrace", base + ".summary.json"
