"""Source locations a learner can follow: one formatter for every ``file:line`` acl_lab shows.

Code typed into a notebook runs from a file the kernel invents (ipykernel compiles each cell
under a temporary name such as ``<tmp>/ipykernel_<pid>/<hash>.py``; plain IPython uses
``<ipython-input-5-...>``). A learner never saw that file: they know the cell by the
``In[5]`` label beside it. ``cell_name`` turns such a file into ``cell In[5]`` by asking the
running IPython (its compiler's ``format_code_name``, the map its own tracebacks use for
"Cell In[5], line 3"), and registers the cell's lines in ``linecache`` under the new name, so
the explorer's source pane and the source lines stored in a trace still find the code.
``acl-lab grade`` runs cells under ``<notebook>[cell N]`` names itself; they are kept as they are.

The recorder passes every call site's file through ``cell_name`` once, when it first interns
it, so findings, ``check()`` reasons, figure titles, the call table and the explorer all name
the cell; ``format_site`` is the one place that joins a file and a line for display.
"""

from __future__ import annotations

import linecache
import os
import sys
import warnings
from typing import Any

#: The prefix of a notebook cell's display name (``cell In[5]``).
CELL_PREFIX = "cell "
#: The folder holding the ``acl_lab`` package: a site inside the package is shown relative to
#: it (``acl_lab/hostwork.py:40``), never as the absolute path of the installation.
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_PARENT = os.path.dirname(PACKAGE_DIR)


def _shell() -> Any:
    """The running IPython shell, or None (IPython is never imported here)."""
    mod = sys.modules.get("IPython")
    get = getattr(mod, "get_ipython", None) if mod is not None else None
    if get is None:
        return None
    try:
        return get()
    except Exception:  # a half-torn-down interpreter: no shell
        return None


def cell_name(file: str) -> str:
    """``cell In[5]`` for a file the running IPython compiled a cell under, else ``file``.

    The cell's lines are copied into ``linecache`` under the returned name (the kernel's own
    entry stays), so code that reads the lines of a site by its file keeps working.
    """
    if not file or file.startswith(CELL_PREFIX):
        return file
    shell = _shell()
    fmt = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if fmt is None:
        return file
    try:
        got = fmt(file)
    except Exception:  # an IPython without the map: keep the file
        return file
    if not got or len(got) != 2 or not isinstance(got[1], str):
        return file
    name = CELL_PREFIX + got[1]
    entry = linecache.cache.get(file)
    if entry is not None and len(entry) == 4:
        size, _mtime, lines, _full = entry
        linecache.cache[name] = (size, None, list(lines), name)
    return name


def package_relative(file: str) -> str:
    """``acl_lab/hostwork.py`` for a file inside the acl_lab package (wherever it is
    installed), else ``file`` unchanged."""
    if not os.path.isabs(file):
        return file
    try:
        inside = os.path.commonpath([PACKAGE_DIR, file]) == PACKAGE_DIR
    except ValueError:  # another drive (Windows)
        return file
    return os.path.relpath(file, PACKAGE_PARENT).replace(os.sep, "/") if inside else file


def format_site(file: str, line: int, short: bool = False) -> str:
    """``file:line`` as a learner reads it (``cell In[5]:3`` for a notebook cell,
    ``acl_lab/hostwork.py:40`` for a line of the package itself).

    Args:
        file: the recorded file (a path, a cell name, or empty).
        line: the line (0 when unknown: only the file is shown).
        short: show a path's last component only (tables with narrow columns).
    """
    shown = package_relative(cell_name(file))
    if short and shown and not shown.startswith(CELL_PREFIX) and not shown.startswith("<"):
        shown = os.path.basename(shown) or shown
    if not shown:
        return "?"
    return f"{shown}:{line}" if line > 0 else shown


#: prefix of the file name of the code the API boundary generates (wrappers, bound calls)
GENERATED_PREFIX = "<acl_api"


def warn_at_caller(message: str, category: type[Warning], stacklevel: int) -> None:
    """``warnings.warn(message, category, stacklevel)``, but a notebook cell is named as the
    cell (``cell In[5]``) in the printed warning, not as the kernel's temporary file.

    The frame ``stacklevel`` levels up (1: the caller of this function) is the one blamed,
    as with ``warnings.warn``, not counting the frames the API boundary generates (the
    wrapper and the transport's bound call: how many there are is the boundary's business);
    filters and the once-per-location registry work as usual.
    """
    frame: Any = sys._getframe(1)
    for _ in range(stacklevel - 1):
        if frame.f_back is None:
            break
        frame = frame.f_back
        while frame.f_code.co_filename.startswith(GENERATED_PREFIX) and frame.f_back:
            frame = frame.f_back
    g = frame.f_globals
    warnings.warn_explicit(message, category, cell_name(frame.f_code.co_filename),
                           frame.f_lineno, module=g.get("__name__", "__main__"),
                           registry=g.setdefault("__warningregistry__", {}))
