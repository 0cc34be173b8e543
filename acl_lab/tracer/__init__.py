"""Recording, analysing and rendering emulated runs.

``Recorder`` subscribes to a Session's hooks; ``Trace`` is the frozen result with file I/O and
the Perfetto export; ``checks`` turns a Trace into Findings. Views (Plotly) live in their own
modules and are the only ones that import plotly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .checks import Finding, run_checks
from .trace import Table, Trace

if TYPE_CHECKING:  # no import at run time: the recorder loads with the first traced session
    from ..runtime.hooks import TraceHooks
    from .recorder import Recorder

    def _recorder_implements_the_hooks(recorder: Recorder) -> TraceHooks:
        """Where mypy checks every hook of the Recorder against the runtime's Protocol."""
        return recorder

__all__ = ["Finding", "Table", "Trace", "run_checks"]
