"""Read a learner's exercise notebook: its exercise ids, and the namespace its cells define.

Notebook conventions (the course's exercise notebooks follow them):

* ``metadata.acl_lab.exercises`` lists the exercise ids the notebook holds (``["04.1", ...]``);
* learner cells are tagged ``learner``; check cells are tagged ``check`` and hold e.g.
  ``check("04.1", infer_with_correct_sizes)``.

``learner_namespace`` executes the code cells in order, as a kernel would, in one fresh
namespace, skipping the check cells (grading runs the functions itself) and IPython-only lines
(``%magic``, ``!shell``). A cell that raises does not stop the cells after it: its error is
collected under ``"__cell_errors__"``. It executes learner code: ``acl-lab grade`` calls it in
a subprocess with a time limit.
"""

from __future__ import annotations

import json
import linecache
import os
import re
from pathlib import Path
from typing import Any

from ..runtime.session import Session, current_session, set_current_session
from .runner import describe_exception

#: The namespace key holding ``[(cell index, "Type: message"), ...]``.
CELL_ERRORS = "__cell_errors__"
#: Seconds a multi-threaded wait in a notebook cell may make no progress (see Session).
NOTEBOOK_WATCHDOG_S = 3.0

_IPYTHON_LINE = re.compile(r"^(\s*)[%!]")


def read_notebook(nb_path: str | os.PathLike[str]) -> dict[str, Any]:
    """The notebook's JSON document.

    Raises:
        ValueError: the file is not a notebook (no ``cells`` list).
    """
    with open(nb_path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise ValueError(f"{nb_path} is not a Jupyter notebook (no 'cells' list)")
    return doc


def notebook_exercises(nb_path: str | os.PathLike[str]) -> list[str]:
    """The exercise ids in ``metadata.acl_lab.exercises`` (empty when there are none)."""
    meta = read_notebook(nb_path).get("metadata") or {}
    ids = (meta.get("acl_lab") or {}).get("exercises") or []
    if not isinstance(ids, list):
        raise ValueError(f"{nb_path}: metadata.acl_lab.exercises must be a list of ids")
    return [str(i) for i in ids]


def cell_source(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat stores a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def cell_tags(cell: dict[str, Any]) -> list[str]:
    """A cell's ``metadata.tags``."""
    tags = (cell.get("metadata") or {}).get("tags") or []
    return [str(t) for t in tags]


def strip_ipython(source: str) -> str:
    """``source`` with every ``%magic`` / ``!shell`` line made a ``pass`` (indent kept).

    Keeping the line (as ``pass``) keeps line numbers, so file:line in findings and
    tracebacks point at the learner's cell line, and an indented magic leaves its block valid.
    """
    lines = source.split("\n")
    return "\n".join(
        m.group(1) + "pass" if (m := _IPYTHON_LINE.match(ln)) else ln for ln in lines)


def _no_display(*objs: Any, **kwargs: Any) -> None:
    """Stands in for IPython's ``display`` when cells run outside a kernel."""


def learner_namespace(nb_path: str | os.PathLike[str], *,
                      skip_tags: tuple[str, ...] = ("check",)) -> dict[str, Any]:
    """Execute the notebook's code cells in order in one fresh namespace; return it.

    Cells tagged with any of ``skip_tags`` are skipped, and so are ``%`` / ``!`` lines. An
    exception in a cell is recorded and the next cell runs. The cells run with the
    notebook's folder as working directory (as in a kernel), ``display`` as a no-op and a
    fresh Session bound as the current one (restored afterwards, like the directory), so
    exploration cells do not touch the caller's session.

    Args:
        nb_path: the ``.ipynb`` file.
        skip_tags: tags of cells not to run.

    Returns:
        The namespace (``__name__`` is ``"__learner__"``); ``ns["__cell_errors__"]`` is a list
        of ``(cell index, "Type: message")`` with the index in the notebook's cell list.
    """
    path = Path(nb_path).resolve()
    doc = read_notebook(path)
    ns: dict[str, Any] = {"__name__": "__learner__", "display": _no_display}
    errors: list[tuple[int, str]] = []
    skip = set(skip_tags)
    previous_dir = os.getcwd()
    previous = current_session(create=False)
    session = Session(watchdog=NOTEBOOK_WATCHDOG_S)
    set_current_session(session)
    try:
        import acl_lab

        acl_lab.install()
        os.chdir(path.parent)
        for index, cell in enumerate(doc["cells"]):
            if cell.get("cell_type") != "code" or skip.intersection(cell_tags(cell)):
                continue
            source = strip_ipython(cell_source(cell))
            filename = f"{path.name}[cell {index}]"
            # tracebacks and the explorer's source pane read cell lines through linecache
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            try:
                exec(compile(source, filename, "exec"), ns)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # learner code: record and go on, like a kernel
                errors.append((index, describe_exception(exc)))
    finally:
        os.chdir(previous_dir)
        set_current_session(previous)
        session.close()
    ns[CELL_ERRORS] = errors
    return ns
