"""Two host schedules of one program on one time axis (``schedules_timeline``).

The same program under two seeds (``acl_lab.schedules``): each run's ``timeline``, one above
the other with a shared x axis, so where the threads took their turns in another order, and
what that changed on the streams, lines up by eye. A pure function: traces in, figure out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .style import PlotStyle
from .timeline import timeline


def schedules_timeline(first: Any, second: Any, *, labels: Sequence[str] | None = None,
                       threads: Iterable[int | str] | None = None,
                       streams: Iterable[int | str] | None = None,
                       style: PlotStyle | None = None) -> go.Figure:
    """Draw two traces of one program (two host schedules) as timelines, one above the
    other on one time axis, each with its findings marked.

    Args:
        first, second: the two ``Trace`` values (``Exploration.run(seed).trace``).
        labels: the two panels' titles (default: each trace's schedule seed).
        threads, streams: lane filters, as ``timeline``'s (names work for both traces).
        style: colours and sizes.

    Returns:
        A figure with two rows; ``layout.meta`` holds each panel's ``lanes`` and ``seeds``.
    """
    traces = (first, second)
    seeds = [int(t.meta.get("schedule_seed", 0)) for t in traces]
    titles = list(labels) if labels is not None else [f"schedule seed {s}" for s in seeds]
    end = max(max(int(t.meta.get("virtual_time_ns", 0)) for t in traces), 1)
    figs = [timeline(first, threads=threads, streams=streams, start_ns=0, end_ns=end,
                     findings=first.findings(), style=style)]
    # the second panel's streams in the first's order: a lane is at the same height in both
    figs.append(timeline(second, threads=threads, streams=streams, start_ns=0, end_ns=end,
                         findings=second.findings(), style=style,
                         lane_order=list(figs[0].layout.meta["lanes"])))
    counts = [len(f.layout.meta["lanes"]) for f in figs]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=titles, row_heights=[c / sum(counts) for c in counts])
    for row, part in enumerate(figs, start=1):
        for trace in part.data:
            if row == 2:
                trace.showlegend = False
            fig.add_trace(trace, row=row, col=1)
        y = part.layout.yaxis
        fig.update_yaxes(tickmode="array", tickvals=y.tickvals, ticktext=y.ticktext,
                         range=y.range, showgrid=False, zeroline=False, automargin=True,
                         row=row, col=1)
    x = figs[0].layout.xaxis
    fig.update_xaxes(range=x.range, zeroline=False)
    fig.update_xaxes(title_text=x.title.text, row=2, col=1)
    height = sum(max(240, f.layout.height - 140) for f in figs) + 160
    fig.update_layout(template=figs[0].layout.template, barmode="overlay", height=height,
                      hovermode="closest", title={"text": "two host schedules of one program",
                                                  "font": {"size": 14}},
                      margin={"l": 10, "r": 10, "t": 70, "b": 40},
                      meta={"lanes": [f.layout.meta["lanes"] for f in figs], "seeds": seeds,
                            "unit": figs[0].layout.meta["unit"]})
    return fig
