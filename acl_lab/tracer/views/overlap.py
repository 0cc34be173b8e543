"""The overlap figure: how busy each engine was, how much copying hid behind compute.

Draws an ``analysis.OverlapSummary`` (computed here from a Trace when given one): horizontal
bars of busy time per engine, the copy ∪ compute overlap, the time any engine was busy and the
span, with the device utilisation and the hidden-copy fraction in the title. Read only; never
calls ``show()``.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from ..analysis import DEVICE_ENGINES, OverlapSummary, overlap_summary
from .style import PlotStyle

_LABELS = {"copy_h2d": "copy H2D", "copy_d2h": "copy D2H", "copy_d2d": "copy D2D",
           "aicore": "AI cores", "dvpp": "DVPP"}
_COLOURS = {"overlap": "#28b463", "busy": "#2e86c1", "span": "#d5d8dc"}


def overlap_figure(trace_or_summary: Any, device: int = 0, *,
                   style: PlotStyle | None = None) -> go.Figure:
    """Bars of busy time per engine, the copy/compute overlap and the device utilisation.

    Args:
        trace_or_summary: a Trace (summarised with ``overlap_summary(trace, device)``) or an
            ``OverlapSummary``.
        device: the device to summarise when a Trace is given.
        style: engine colours and template (default ``PlotStyle()``).

    Returns:
        A ``go.Figure`` with one ``go.Bar`` (``meta["summary"]`` holds the numbers).
    """
    s = (trace_or_summary if isinstance(trace_or_summary, OverlapSummary)
         else overlap_summary(trace_or_summary, device))
    unit, scale = ("ms", 1e6) if s.span_ns >= 10_000_000 else ("µs", 1e3)
    names = [_LABELS[e] for e in DEVICE_ENGINES] + ["copy ∩ compute (overlap)",
                                                    "any engine busy", "span"]
    values = [s.engine_busy_ns[e] for e in DEVICE_ENGINES] + [s.overlap_ns, s.busy_ns,
                                                              s.span_ns]
    style = style if style is not None else PlotStyle()
    colours = ([style.engine_colors.get(e, "#8c8c8c") for e in DEVICE_ENGINES]
               + [_COLOURS["overlap"], _COLOURS["busy"], _COLOURS["span"]])
    pct = [f"{100 * v / s.span_ns:.0f}% of span" if s.span_ns else "" for v in values]
    fig = go.Figure(go.Bar(
        y=names, x=[v / scale for v in values], orientation="h", marker={"color": colours},
        text=pct, textposition="auto", customdata=values, name="busy time",
        hovertemplate=f"%{{y}}: %{{x:.3f}} {unit} (%{{customdata}} ns)<extra></extra>",
        meta={"summary": {"utilisation": s.utilisation, "overlap_ns": s.overlap_ns,
                          "span_ns": s.span_ns, "busy_ns": s.busy_ns,
                          "copy_hidden": s.copy_hidden}}))
    fig.update_layout(
        title=(f"Device {s.device}: utilisation {100 * s.utilisation:.0f}% · copy/compute "
               f"overlap {s.overlap_ns / scale:.3f} {unit} "
               f"({100 * s.copy_hidden:.0f}% of copy time hidden) · {s.tasks} task(s)"),
        xaxis_title=f"time ({unit})", yaxis={"autorange": "reversed"},
        height=360, showlegend=False, template=style.template,
        meta={"time_unit": unit, "time_scale_ns": scale})
    return fig


__all__ = ["overlap_figure"]
