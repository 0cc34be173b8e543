"""The overlap figure: how busy each engine was, how much copying hid behind compute.

Draws an ``analysis.OverlapSummary`` (computed here from a Trace when given one): horizontal
bars of busy time per engine, the copy ∪ compute overlap, the time any engine was busy and the
span, with the device utilisation and the hidden-copy fraction in the title. Given a Trace, a
second row shows the overlap **over time**: per time bucket, the fraction of it some copy
engine was busy, the AI cores were busy, and both at once, so a learner sees *when* copies
hide behind compute (the totals alone cannot say). Read only; never calls ``show()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...runtime.kinds import Engine
from ..analysis import COPY_ENGINES, DEVICE_ENGINES, OverlapSummary, overlap_summary
from ..schema import ENGINES
from .style import PlotStyle

_LABELS = {"copy_h2d": "copy H2D", "copy_d2h": "copy D2H", "copy_d2d": "copy D2D",
           "aicore": "AI cores", "dvpp": "DVPP"}
_COLOURS = {"overlap": "#28b463", "busy": "#2e86c1", "span": "#d5d8dc"}
#: Time buckets of the overlap-over-time row.
TIME_BUCKETS = 200


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
    given_summary = isinstance(trace_or_summary, OverlapSummary)
    s = trace_or_summary if given_summary else overlap_summary(trace_or_summary, device)
    unit, scale = ("ms", 1e6) if s.span_ns >= 10_000_000 else ("µs", 1e3)
    names = [_LABELS[e] for e in DEVICE_ENGINES] + ["copy ∩ compute (overlap)",
                                                    "any engine busy", "span"]
    values = [s.engine_busy_ns[e] for e in DEVICE_ENGINES] + [s.overlap_ns, s.busy_ns,
                                                              s.span_ns]
    style = style if style is not None else PlotStyle()
    colours = ([style.engine_colors.get(e, "#8c8c8c") for e in DEVICE_ENGINES]
               + [_COLOURS["overlap"], _COLOURS["busy"], _COLOURS["span"]])
    pct = [f"{100 * v / s.span_ns:.0f}% of span" if s.span_ns else "" for v in values]
    over_time = not given_summary and s.span_ns > 0
    base = go.Figure(layout={"template": style.layout_template()})
    fig = (make_subplots(rows=2, cols=1, row_heights=[0.55, 0.45], vertical_spacing=0.2,
                         subplot_titles=["busy time", "over time: share of each bucket busy"],
                         figure=base)
           if over_time else base)
    fig.add_trace(go.Bar(
        y=names, x=[v / scale for v in values], orientation="h", marker={"color": colours},
        text=pct, textposition="auto", customdata=values, name="busy time",
        hovertemplate=f"%{{y}}: %{{x:.3f}} {unit} (%{{customdata}} ns)<extra></extra>",
        meta={"summary": {"utilisation": s.utilisation, "overlap_ns": s.overlap_ns,
                          "span_ns": s.span_ns, "busy_ns": s.busy_ns,
                          "copy_hidden": s.copy_hidden}}),
        **({"row": 1, "col": 1} if over_time else {}))
    if over_time:
        _add_over_time(fig, trace_or_summary, s, scale, unit, style)
    fig.update_layout(
        title=(f"Device {s.device}: utilisation {100 * s.utilisation:.0f}% · copy/compute "
               f"overlap {s.overlap_ns / scale:.3f} {unit} "
               f"({100 * s.copy_hidden:.0f}% of copy time hidden) · {s.tasks} task(s)"),
        xaxis_title=f"time ({unit})", yaxis={"autorange": "reversed"},
        height=640 if over_time else 360, showlegend=over_time,
        meta={"time_unit": unit, "time_scale_ns": scale})
    if over_time:
        fig.update_xaxes(title_text=f"time ({unit})", row=2, col=1)
        fig.update_yaxes(title_text="share busy", range=[0, 1.05], tickformat=".0%", row=2,
                         col=1)
    return fig


def _merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals ``[start, end)`` as disjoint sorted intervals."""
    if len(start) == 0:
        return start, end
    order = np.argsort(start, kind="stable")
    st, en = start[order], end[order]
    reach = np.maximum.accumulate(en)
    new = np.ones(len(st), dtype=bool)
    new[1:] = st[1:] > reach[:-1]
    idx = np.nonzero(new)[0]
    return st[idx], np.maximum.reduceat(en, idx)


def _intersect(a: tuple[np.ndarray, np.ndarray],
               b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Intersection of two sets of disjoint sorted intervals."""
    out_s, out_e = [], []
    i = j = 0
    (as_, ae), (bs, be) = a, b
    while i < len(as_) and j < len(bs):
        lo, hi = max(as_[i], bs[j]), min(ae[i], be[j])
        if lo < hi:
            out_s.append(lo)
            out_e.append(hi)
        if ae[i] < be[j]:
            i += 1
        else:
            j += 1
    return np.asarray(out_s, dtype=np.int64), np.asarray(out_e, dtype=np.int64)


def bucket_share(start: np.ndarray, end: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per bucket ``[edges[k], edges[k+1])``, the fraction covered by disjoint intervals.

    >>> bucket_share(np.array([0, 15]), np.array([5, 20]), np.array([0, 10, 20])).tolist()
    [0.5, 0.5]
    """
    lo, hi = edges[:-1], edges[1:]
    cover = np.zeros(len(lo), dtype=np.float64)
    for s0, e0 in zip(start.tolist(), end.tolist(), strict=True):
        cover += np.clip(np.minimum(hi, e0) - np.maximum(lo, s0), 0, None)
    width = np.maximum(hi - lo, 1e-9)
    return np.asarray(cover / width)


def _add_over_time(fig: go.Figure, trace: Any, s: OverlapSummary, scale: float, unit: str,
                   style: PlotStyle) -> None:
    """Row 2: per time bucket, the share with a copy busy, the AI cores busy, and both."""
    t = trace.tasks
    start = t["start_ns"].astype(np.int64)
    end = t["end_ns"].astype(np.int64)
    ran = (start >= 0) & (end >= start) & (t["device"] == s.device)
    engine = t["engine"]
    copy = _merged(start[ran & np.isin(engine, [ENGINES.index(n) for n in COPY_ENGINES])],
                   end[ran & np.isin(engine, [ENGINES.index(n) for n in COPY_ENGINES])])
    compute = _merged(start[ran & (engine == Engine.AICORE)],
                      end[ran & (engine == Engine.AICORE)])
    both = _intersect(copy, compute)
    edges = np.linspace(s.start_ns, s.end_ns, TIME_BUCKETS + 1)
    mid = (edges[:-1] + edges[1:]) / 2 / scale
    for name, iv, colour, role in (
            ("a copy engine busy", copy, style.engine_colors.get("copy_h2d", "#8c8c8c"),
             "copy"),
            ("AI cores busy", compute, style.engine_colors.get("aicore", "#8c8c8c"),
             "compute"),
            ("both: copy hidden behind compute", both, _COLOURS["overlap"], "overlap")):
        share = bucket_share(iv[0], iv[1], edges)
        fig.add_trace(go.Scatter(
            x=mid, y=share, mode="lines", name=name, line={"color": colour, "shape": "hv",
                                                           "width": 3 if role == "overlap"
                                                           else 1.5},
            fill="tozeroy" if role == "overlap" else None,
            hovertemplate=f"%{{x:.3f}} {unit}: {name} %{{y:.0%}}<extra></extra>",
            meta={"role": f"over_time_{role}",
                  "busy_ns": int((iv[1] - iv[0]).sum()) if len(iv[0]) else 0}),
            row=2, col=1)


__all__ = ["overlap_figure"]
