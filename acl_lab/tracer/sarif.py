"""Findings as SARIF 2.1.0, the format code-review tools read (``acl-lab run --sarif FILE``).

One run whose ``tool.driver`` is acl_lab with one rule per finding kind; one result per
finding with ``ruleId``/``ruleIndex``, ``level`` (error / warning / note), the message, and a
location per site (``physicalLocation.artifactLocation.uri`` + ``region.startLine``): the
main site in ``locations``, the others in ``relatedLocations``. Paths under the base folder
are written relative to it with ``uriBaseId`` ``SRCROOT`` (declared in
``originalUriBaseIds``), other paths as ``file://`` URIs, as the SARIF 2.1.0 standard
(OASIS, sections 3.4, 3.27, 3.28) describes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .summary import finding_sites

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: Finding severity -> SARIF result level.
LEVELS = {"error": "error", "warning": "warning", "info": "note"}

RULE_HELP = {
    "leak": "A resource was created or allocated and never released.",
    "race": "Two accesses to the same memory, at least one a write, with no ordering between "
            "them (no event, synchronize or same stream).",
    "deadlock": "A wait that can never finish: a cycle of waits or a wait nothing will satisfy.",
}


def _location(file: str, line: int, base: Path, index: int | None = None) -> dict[str, Any]:
    # artifactLocation.uri is a URI reference (SARIF 2.1.0 section 3.4.3; the schema's
    # format "uri-reference"): a path's spaces, '#', '%' and non-ASCII letters are
    # percent-encoded, and a path outside the base becomes an absolute file:// URI (a bare
    # relative one would be resolved against whatever folder the viewer chooses).
    try:
        p = Path(file).resolve()
    except (OSError, RuntimeError):  # a symlink loop: the path as given, made absolute
        p = Path(os.path.abspath(file))
    try:
        rel = p.relative_to(base)
        artifact: dict[str, Any] = {"uri": quote(rel.as_posix()), "uriBaseId": "SRCROOT"}
    except ValueError:
        artifact = {"uri": p.as_uri()}
    loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": artifact,
                                                "region": {"startLine": max(int(line), 1)}}}
    if index is not None:
        loc["id"] = index
    return loc


def to_sarif(findings: list[Any], base: str | os.PathLike[str] | None = None,
             version: str = "") -> dict[str, Any]:
    """The SARIF log of ``findings``; sites under ``base`` (default: the cwd) are relative."""
    root = Path(base or os.getcwd()).resolve()
    kinds = sorted({f.kind for f in findings})
    rules = [{"id": k, "name": k, "shortDescription": {"text": f"acl_lab {k} check"},
              "fullDescription": {"text": RULE_HELP.get(k, f"acl_lab's {k} check.")},
              "defaultConfiguration": {"level": "warning"}} for k in kinds]
    results = []
    for f in findings:
        sites = [s for s in finding_sites(f) if not s["file"].startswith("<")]
        res: dict[str, Any] = {
            "ruleId": f.kind, "ruleIndex": kinds.index(f.kind),
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": f.message},
        }
        if sites:
            res["locations"] = [_location(sites[0]["file"], sites[0]["line"], root)]
            res["relatedLocations"] = [_location(s["file"], s["line"], root, i)
                                       for i, s in enumerate(sites[1:], start=1)]
        results.append(res)
    driver: dict[str, Any] = {"name": "acl_lab", "rules": rules}
    if version:
        driver["version"] = version
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "originalUriBaseIds": {"SRCROOT": {"uri": root.as_uri() + "/"}},
            "results": results,
        }],
    }
