"""The JSON summary ``acl-lab run`` writes, and the ``--fail-on`` gate for CI.

Schema (``SUMMARY_SCHEMA_VERSION``; a reader checks the version before the fields)::

    {"schema_version": 2, "exit_code": int, "error": str | null, "interrupted": bool,
     "findings": [{"kind", "severity", "message", "file", "line",
                   "sites": [{"file": str, "line": int}, ...]}],
     "stats": {...}}

``sites`` lists every distinct place a finding involves, in the order the check gives them
(a race has two: the two accesses; a leak has the allocation and where it was reclaimed);
``file``/``line`` stay the main site. Version 1 had no ``schema_version`` and no ``sites``.
"""

from __future__ import annotations

import os
from typing import Any

from .checks.base import SEVERITIES

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
                  interrupted: bool) -> dict[str, Any]:
    """The whole summary document of one run."""
    return {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "exit_code": exit_code,
        "error": error,
        "interrupted": interrupted,
        "findings": [finding_entry(f) for f in findings],
        "stats": trace.stats(),
    }


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
