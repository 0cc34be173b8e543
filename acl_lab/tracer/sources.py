"""The source lines a trace cites, stored in the trace itself.

A trace opened in another folder, on another machine or after the program changed still
shows the lines its calls and findings point at: when the recorder freezes a trace it reads
(with ``linecache``, so notebook cells count too) each call site's line and
``SOURCE_CONTEXT`` lines around it, and keeps them in ``meta["source_lines"]`` as one JSON
string ``{"file": {"line": "text", ...}, ...}`` (a JSON scalar, so the trace format and its
loader stay as they are). Views use the stored text when the file cannot be read.
"""

from __future__ import annotations

import json
import linecache
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: The meta key.
SOURCE_LINES = "source_lines"
#: Lines kept before and after each call site (the explorer shows 2).
SOURCE_CONTEXT = 3
#: At most this many distinct call sites are stored (a generated program could have more).
MAX_SITES = 5000
#: Longer lines are cut to this many characters.
MAX_LINE_CHARS = 400


def capture(strings: Sequence[str], files: Any, lines: Any) -> str:
    """The ``meta["source_lines"]`` value for call sites given as string ids and lines."""
    files, lines = np.asarray(files), np.asarray(lines)
    if len(files) == 0:
        return "{}"
    # distinct (file, line) in order; not np.unique(axis=0), whose first call imports
    # numpy.ma (about 17 ms of a traced run's finish; a figure imports it anyway)
    sites = sorted(set(zip(files.tolist(), lines.tolist(), strict=True)))[:MAX_SITES]
    out: dict[str, dict[str, str]] = {}
    for fid, line in sites:
        if not 0 <= fid < len(strings) or line <= 0:
            continue
        file = strings[fid]
        text = linecache.getlines(file) if file else []
        if not text:
            continue
        keep = out.setdefault(file, {})
        for n in range(max(line - SOURCE_CONTEXT, 1), min(line + SOURCE_CONTEXT, len(text)) + 1):
            keep[str(n)] = text[n - 1].rstrip("\n")[:MAX_LINE_CHARS]
    return json.dumps(out, sort_keys=True, separators=(",", ":"))


def stored_sources(trace: Any) -> Mapping[str, Mapping[int, str]]:
    """``{file: {line: text}}`` stored in ``trace`` (empty when it has none or it is bad)."""
    raw = getattr(trace, "meta", {}).get(SOURCE_LINES)
    if not isinstance(raw, str):
        return {}
    try:
        doc = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(doc, dict):
        return {}
    out: dict[str, dict[int, str]] = {}
    for file, lines in doc.items():
        if isinstance(file, str) and isinstance(lines, dict):
            out[file] = {int(k): v for k, v in lines.items()
                         if isinstance(v, str) and str(k).isdigit()}
    return out
