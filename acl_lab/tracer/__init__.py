"""Recording, analysing and rendering emulated runs.

``Recorder`` subscribes to a Session's hooks; ``Trace`` is the frozen result with file I/O and
the Perfetto export; ``checks`` turns a Trace into Findings. Views (Plotly) live in their own
modules and are the only ones that import plotly.
"""

from __future__ import annotations

from .checks import Finding, run_checks
from .trace import Table, Trace

__all__ = ["Finding", "Table", "Trace", "run_checks"]
