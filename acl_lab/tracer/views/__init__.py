"""Plotly views of a Trace: pure functions, Trace or Finding in, ``go.Figure`` out.

Only this package imports plotly (``import acl_lab`` does not; importing this package does).
No view calls ``show()``; notebooks display the returned figure. The functions are bound here
after their modules load, so ``from acl_lab.tracer.views import timeline`` is the function even
where a module has the same name.
"""

from __future__ import annotations

from . import _deps  # noqa: F401  (first: without plotly, one line naming the extra)
from .call_table import call_table
from .graphs import race_view, wait_graph
from .memory_map import memory_map
from .overlap import overlap_figure
from .schedules import schedules_timeline
from .style import PlotStyle
from .timeline import timeline

__all__ = ["PlotStyle", "call_table", "memory_map", "overlap_figure", "race_view",
           "schedules_timeline", "timeline", "wait_graph"]
