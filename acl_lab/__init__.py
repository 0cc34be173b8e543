"""acl_lab: learn Huawei CANN's AscendCL (pyACL) without an NPU.

``acl_lab.install()`` makes ``import acl`` resolve to the emulator (``acl-lab run`` does the
same for whole programs); ``acl_lab.Session`` holds one emulated machine; ``session.trace()``
returns the recorded Trace; ``acl_lab.findings(trace)`` explains what went wrong;
``acl_lab.explain(107002)`` decodes an error code. Importing acl_lab does not import plotly.
"""

from __future__ import annotations

import sys
from importlib.util import find_spec
from types import ModuleType
from typing import TYPE_CHECKING, Any

from . import constants
from .constants import explain
from .hostwork import host_work
from .runtime.errors import AclError, DeadlockError
from .runtime.profiles import PROFILES, get_profile
from .runtime.session import Session, current_session, set_current_session, set_recorder_factory

if TYPE_CHECKING:  # loaded on first use (``__getattr__``): the tracer is not needed to run
    from .tracer.checks import Finding
    from .tracer.trace import Trace

__version__ = "0.1.0"


def _recorder(session: Session, limit_bytes: int) -> Any:
    """The trace recorder of a traced Session (imported on the first one, not at import)."""
    from .tracer.recorder import Recorder
    return Recorder(session, limit_bytes)


set_recorder_factory(_recorder)


def install(session: Session | None = None) -> ModuleType:
    """Make ``import acl`` (and ``acl.rt``, ``acl.util``, ...) resolve to the emulator, and
    put the program's threads under the host schedule (``acl_lab.pythreads``: threading,
    queue and time).

    Args:
        session: bind this Session for the calls (default: the current one, created on
            first use).

    Returns:
        The emulated ``acl`` module.
    """
    from . import acl as emulated
    from . import pythreads

    if session is not None:
        set_current_session(session)
    pythreads.install()  # the program's threads take turns in the host schedule
    sys.modules["acl"] = emulated
    for sub in emulated.SUBMODULES:
        sys.modules[f"acl.{sub}"] = getattr(emulated, sub)
    if "ipykernel" in sys.modules and find_spec("plotly") is not None:
        # a notebook with the views extra: figures that render outside JupyterLab too
        from .tracer.views.notebook_output import setup_notebook
        setup_notebook()
    return emulated


def uninstall() -> None:
    """Remove the ``import acl`` redirection that ``install`` made, and give ``threading``,
    ``queue`` and ``time`` back their own primitives."""
    from . import pythreads

    for name in [n for n in sys.modules if n == "acl" or n.startswith("acl.")]:
        mod = sys.modules[name]
        if getattr(mod, "__name__", "").startswith("acl_lab."):
            del sys.modules[name]
    pythreads.uninstall()


def findings(trace: Trace) -> list[Finding]:
    """Every finding for ``trace`` (leaks, deadlocks, ...), each with its evidence and fix."""
    return trace.findings()


def check_ret(name: str, ret: int) -> None:
    """The idiom of the samples: raise if an ACL call did not return 0.

    Raises:
        RuntimeError: with the code's name and meaning from ``acl_lab.explain``.
    """
    if ret != 0:
        raise RuntimeError(f"{name} failed, ret={ret}: {explain(ret)}")


def new_session(**kwargs: Any) -> Session:
    """Create a Session and bind it as the current one (for notebooks)."""
    s = Session(**kwargs)
    set_current_session(s)
    return s


_VIEWS = {"call_table", "timeline", "memory_map", "wait_graph", "race_view", "overlap_figure",
          "schedules_timeline"}


def __getattr__(name: str) -> Any:
    """Views, the zoo, grading, the ladder, schedule exploration, ``Trace`` and ``Finding``
    load on first use
    (``import acl_lab`` stays light: no plotly, no tracer, no ``acl`` wrappers)."""
    if name in _VIEWS:
        from .tracer import views  # plotly missing: MissingExtra naming the views extra
        return getattr(views, name)
    if name == "explore":
        from ._extras import require
        for module in ("ipywidgets", "anywidget"):
            require(module, "lab", "acl_lab.explore (the explorer widget)")
        from .tracer.views.widgets import explore
        return explore
    if name == "explore_schedules":
        from .schedules import explore_schedules
        return explore_schedules
    if name in ("zoo", "grading", "ladder", "schedules"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name == "Trace":
        from .tracer.trace import Trace
        return Trace
    if name == "Finding":
        from .tracer.checks import Finding
        return Finding
    if name == "overlap_summary":
        from .tracer.analysis import overlap_summary
        return overlap_summary
    raise AttributeError(f"module 'acl_lab' has no attribute {name!r}")


__all__ = ["PROFILES", "AclError", "DeadlockError", "Finding", "Session", "Trace",
           "check_ret", "constants", "current_session", "explain", "findings", "get_profile",
           "host_work", "install", "new_session", "set_current_session", "uninstall"]
