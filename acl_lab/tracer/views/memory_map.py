"""The memory map: device address space against time, one rectangle per allocation.

Modelled on PyTorch's memory_viz (live blocks over time, plus the allocator state at a chosen
instant). One band (subplot row) per memory pool, so huge-page, 1 GiB-page, normal and DVPP
memory never share an address axis, and pinned host memory (``malloc_host``) has a band of
its own with the same colouring and allocating line; the bottom row holds the bytes in use
over time per pool and for the whole device. A block is drawn from its allocating call to
its free call, or to the trace end when it leaked (never freed, or only reclaimed at
reset/finalize/exit).

Scale: up to ``max_rects`` allocations are SVG bars (``go.Bar`` with ``base``) with a hover
each; beyond that every pool becomes a heatmap of occupancy (address bucket x time bucket,
the fraction of the cell covered by live blocks, computed exactly and vectorised), and the
usage curves are reduced to per-bucket maxima, so the peak survives. This module only reads
the trace and never calls ``show()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...constants import MemMallocPolicy
from ...runtime.kinds import AllocKind
from ..analysis import (
    DEVICE_KINDS,
    AllocationSpans,
    allocation_spans,
    memory_timeline,
    trace_end_ns,
)
from ..schema import ALLOC_KINDS, POOLS
from ..units import human_bytes
from .style import NEUTRAL_LINE, NEUTRAL_TEXT, PlotStyle

#: Usage-curve colours per pool (and the device total).
POOL_COLOURS = {"normal": "#4c78a8", "huge": "#f58518", "huge1g": "#b279a2", "dvpp": "#e377c2",
                "host": "#9d755d", "device": NEUTRAL_TEXT}  # the total: grey on either theme
#: Address buckets and time buckets of the heatmap used beyond ``max_rects``.
HEAT_ADDR_BUCKETS = 200
HEAT_TIME_BUCKETS = 600
#: Usage curves with more points than this are reduced to per-bucket maxima.
MAX_CURVE_POINTS = 4000
_DEVICE_POOLS = tuple(p for p in POOLS if p != "host")
#: Heights in pixels: an address band, the usage row, the gap between rows, the bottom
#: margin before the legend is fitted.
#: Fixed in pixels (not fractions) so every y-axis title fits beside its own row.
BAND_PX, USAGE_PX, GAP_PX, MARGIN_B_PX = 220, 170, 50, 60
#: The top margin, from the top down: the figure's title (pinned to the top of the figure,
#: ``TITLE_PAD_PX`` below its edge, ``TITLE_FONT_PX`` high), the cursor note's row, and the
#: first band's subplot title just above the plot (rows of ``LINE_PX`` per ``FONT_PX``).
TITLE_FONT_PX, TITLE_PAD_PX, NOTE_FONT_PX, SUBPLOT_TITLE_FONT_PX = 16, 8, 12, 14
#: Pixels of height per pixel of font size (a line of text and its leading).
LINE_FACTOR = 1.4
#: The legend: horizontal, pinned to the bottom of the figure below the x axis's title
#: (``AXIS_ROOM_PX`` holds the tick labels and that title), rows of ``LEGEND_ROW_PX``; the
#: room reserved assumes at most ``LEGEND_ITEMS_PER_ROW`` entries a row (a narrow pane: the
#: explorer's 70 %), so the legend is never cut off at the bottom nor the right.
AXIS_ROOM_PX, LEGEND_ROW_PX, LEGEND_ITEMS_PER_ROW = 56, 22, 3


def _line_px(font_px: int) -> int:
    """The height of one line of text of ``font_px``."""
    return round(font_px * LINE_FACTOR)


def top_margin_px() -> int:
    """The top margin: the title's row, the cursor note's row and the subplot title's row."""
    return (TITLE_PAD_PX + _line_px(TITLE_FONT_PX) + _line_px(NOTE_FONT_PX)
            + _line_px(SUBPLOT_TITLE_FONT_PX))


def legend_entries(fig: go.Figure) -> int:
    """How many entries the figure's legend shows: one per named trace not hidden from it
    (heatmaps have a colour bar instead)."""
    return sum(1 for tr in fig.data
               if tr.showlegend is not False and tr.name and tr.type != "heatmap")


def fit_legend(fig: go.Figure) -> None:
    """Place the legend in rows at the bottom of the figure, below the x axis's title, and
    grow the bottom margin (and the height: the plot keeps its size) to hold every row; call
    again after adding traces with legend entries."""
    rows = -(-legend_entries(fig) // LEGEND_ITEMS_PER_ROW)
    bottom = AXIS_ROOM_PX + rows * LEGEND_ROW_PX
    old = fig.layout.margin.b if fig.layout.margin.b is not None else MARGIN_B_PX
    fig.update_layout(
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                "x": 0, "xanchor": "left", "tracegroupgap": 4},
        margin={"b": bottom}, height=int(fig.layout.height or 0) - int(old) + bottom)


def add_cursor_note(fig: go.Figure, text: str, colour: str, *, name: str | None = None) -> None:
    """The note of the state at an instant (``at 1.2 ms: 3 block(s) live, ...``), in its own
    row of the top margin: above the first band's subplot title, below the figure's title."""
    fig.add_annotation(text=text, name=name, xref="paper", yref="paper", x=1.0, y=1.0,
                       xanchor="right", yanchor="bottom",
                       yshift=_line_px(SUBPLOT_TITLE_FONT_PX), showarrow=False,
                       font={"color": colour, "size": NOTE_FONT_PX})


def memory_map(trace: Any, *, device: int = 0, at_ns: int | None = None,
               pools: tuple[str, ...] | list[str] | None = None,
               style: PlotStyle | None = None,
               max_rects: int = 5000) -> go.Figure:
    """Device address space (y) against time (x), a band per pool, usage curves below.

    Args:
        trace: the Trace to draw (read only).
        device: which device's memory to draw.
        at_ns: an instant (ns) at which to show the allocator state: a vertical line, the
            blocks live then highlighted, and a note with their count and bytes per pool.
        pools: pool names to draw (default: every pool the trace used: this device's pools,
            DVPP memory, and host memory from ``malloc_host`` as a pool of its own).
        style: a ``PlotStyle`` (state colours, time units, template); default ``PlotStyle()``.
        max_rects: above this many allocations, pools are drawn as occupancy heatmaps.

    Returns:
        A ``go.Figure``. ``layout.meta`` holds ``time_unit``, ``time_scale_ns`` (x values are
        ns divided by it), ``mode`` (``"rects"`` or ``"heatmap"``) and ``pools``.
    """
    style = style if style is not None else PlotStyle()
    colours: dict[str, Any] = {k: style.state_color(k) for k in ("live", "freed", "leaked")}
    colours["pools"] = POOL_COLOURS
    a = trace.allocs
    wanted = tuple(pools) if pools is not None else POOLS
    unknown = [p for p in wanted if p not in POOLS]
    if unknown:
        raise ValueError(f"memory_map: unknown pool(s) {unknown}; pools are {list(POOLS)}")
    pool_col = a["pool"]
    on_dev = a["device"] == device
    host = pool_col == POOLS.index("host")
    # pinned host memory (malloc_host) is a pool; a pageable host buffer is not an
    # allocation the program frees (Python owns it), so it is never drawn as a leak
    sel = (np.isin(pool_col, [POOLS.index(p) for p in wanted]) & (on_dev | host)
           & (a["kind"] != AllocKind.HOST_PAGEABLE))
    rows = np.nonzero(sel)[0]
    present = [p for p in POOLS if p in wanted and np.any(pool_col[rows] == POOLS.index(p))]
    end_ns = trace_end_ns(trace)
    unit, scale = style.unit_for(end_ns)
    mode = "rects" if len(rows) <= max_rects else "heatmap"
    nbands = max(len(present), 1)
    titles = [f"{p} pool" for p in present] or ["(no allocations)"]
    plot_px = nbands * BAND_PX + USAGE_PX + nbands * GAP_PX
    # the template goes in with the figure: a figure made without one gets Plotly's default
    # template first (loaded from JSON and deep-copied: most of a first figure's time)
    fig = make_subplots(rows=nbands + 1, cols=1, shared_xaxes=True,
                        figure=go.Figure(layout={"template": style.layout_template()}),
                        vertical_spacing=GAP_PX / plot_px,
                        row_heights=[BAND_PX] * nbands + [USAGE_PX],
                        subplot_titles=[*titles, "memory in use"])
    fig.update_annotations(font_size=SUBPLOT_TITLE_FONT_PX)  # the subplot titles only, so far
    spans = allocation_spans(trace, rows)
    pool_of = pool_col[rows]
    live_ids: list[int] = []
    for r, p in enumerate(present, start=1):
        m = pool_of == POOLS.index(p)
        sub = _subset(spans, m)
        base = int(a["addr"][sub.rows].min())
        extent = int((a["addr"][sub.rows] + a["reserved"][sub.rows]).max()) - base
        aunit, ascale = ("KiB", 1 << 10) if extent < (4 << 20) else ("MiB", 1 << 20)
        if mode == "rects":
            _add_rects(fig, trace, sub, r, p, base, ascale, scale, unit, colours,
                       first=(r == 1))
            if at_ns is not None:
                live = sub.live_at(at_ns)
                live_ids.extend(live.tolist())
                _add_live(fig, trace, sub, live, r, base, ascale, scale, colours,
                          first=(r == 1), at_ns=at_ns)
        else:
            _add_heatmap(fig, trace, sub, r, p, base, extent, ascale, aunit, scale, unit,
                         end_ns, first=(r == 1))
            if at_ns is not None:
                live_ids.extend(sub.live_at(at_ns).tolist())
        # the base address goes in the band's title: the axis title stays short enough to
        # fit beside its band (a long one ran into the usage row's title)
        fig.layout.annotations[r - 1].text = f"{p} pool (offsets from {base:#x})"
        fig.update_yaxes(title_text=f"offset ({aunit})", row=r, col=1)
    _add_usage(fig, trace, device, present, nbands + 1, scale, unit, end_ns, colours)
    where = f"Device {device}" + (" and host" if "host" in present else "")
    title = f"{where} memory map: {len(rows)} allocation(s)"
    if mode == "heatmap":
        title += f" (more than {max_rects}: occupancy per address x time bucket)"
    if at_ns is not None:
        fig.add_vline(x=at_ns / scale, line_dash="dot", line_color=colours["live"],
                      row="all", col=1)
        held = int(a["reserved"][np.asarray(live_ids, dtype=np.int64)].sum()) if live_ids else 0
        add_cursor_note(fig, f"at {at_ns / scale:.3f} {unit}: {len(live_ids)} block(s) live,"
                        f" {human_bytes(held, 'B')} reserved", colours["live"])
    fig.update_xaxes(title_text=f"time ({unit})", row=nbands + 1, col=1)
    fig.update_yaxes(title_text="bytes in use", ticksuffix="B", tickformat=".3~s",
                     row=nbands + 1, col=1)
    fig.update_layout(
        title={"text": title, "yref": "container", "y": 1, "yanchor": "top",
               "pad": {"t": TITLE_PAD_PX}, "font": {"size": TITLE_FONT_PX}},
        barmode="overlay", bargap=0, hovermode="closest",
        height=plot_px + top_margin_px() + MARGIN_B_PX,
        margin={"t": top_margin_px(), "b": MARGIN_B_PX},
        meta={"time_unit": unit, "time_scale_ns": scale, "mode": mode, "pools": present,
              "device": device, "at_ns": at_ns, "end_ns": end_ns})
    fit_legend(fig)
    return fig


# =============================================================================== pieces
def _subset(s: AllocationSpans, m: np.ndarray) -> AllocationSpans:
    return AllocationSpans(s.rows[m], s.start_ns[m], s.end_ns[m], s.released_ns[m],
                           s.freed[m], s.leaked[m], s.end_of_trace_ns)


def _policy(p: int) -> str:
    try:
        return "ACL_MEM_MALLOC_" + MemMallocPolicy(p).name
    except ValueError:
        return str(p)


def _hover(trace: Any, sub: AllocationSpans, scale: int, unit: str) -> list[str]:
    """One hover text per allocation of ``sub``."""
    a = trace.allocs
    out = []
    for k, i in enumerate(sub.rows.tolist()):
        row = a.row(i)
        c = row["call"]
        kind = ALLOC_KINDS[row["kind"]]
        site = "unknown line"
        api = "?"
        if c >= 0:
            f, ln = trace.call_site(c)
            site, api = f"{f}:{ln}", trace.call_name(c)
        if sub.freed[k]:
            fate = f"freed at {sub.end_ns[k] / scale:.3f} {unit}"
        elif sub.released_ns[k] < sub.end_of_trace_ns:
            fate = (f"LEAKED: never freed by the program (reclaimed at "
                    f"{sub.released_ns[k] / scale:.3f} {unit})")
        else:
            fate = "LEAKED: never freed"
        policy = _policy(row["policy"]) if row["kind"] in DEVICE_KINDS else "-"
        out.append(
            f"<b>alloc #{i}</b> ({kind}, pool {POOLS[row['pool']]})<br>"
            f"address {row['addr']:#x}<br>"
            f"size {human_bytes(row['size'], 'B')}: requested {row['requested']} B, "
            f"rounded {row['size']} B, reserved {row['reserved']} B<br>"
            f"policy {policy}<br>"
            f"allocated by {api} at {site}<br>"
            f"from {sub.start_ns[k] / scale:.3f} {unit}; {fate}")
    return out


def _add_rects(fig: go.Figure, trace: Any, sub: AllocationSpans, row: int, pool: str,
               base: int, ascale: int, scale: int, unit: str, colours: dict[str, Any],
               first: bool) -> None:
    """Bars (one trace per state) for the allocations of one pool."""
    a = trace.allocs
    hover = np.asarray(_hover(trace, sub, scale, unit), dtype=object)
    for state, m in (("freed", sub.freed), ("leaked", sub.leaked)):
        if not m.any():
            continue
        ids = sub.rows[m]
        t0, t1 = sub.start_ns[m] / scale, sub.end_ns[m] / scale
        width = np.maximum(t1 - t0, 1e-9)
        fig.add_trace(go.Bar(
            x=(t0 + t1) / 2, width=width, base=(a["addr"][ids] - base) / ascale,
            y=a["reserved"][ids] / ascale, orientation="v", name=state,
            legendgroup=state, showlegend=first, marker={
                "color": colours[state], "line": {"color": NEUTRAL_LINE, "width": 0.5}},
            opacity=0.85, customdata=ids, hovertext=list(hover[m]), hoverinfo="text",
            meta={"state": state, "pool": pool}), row=row, col=1)


def _add_live(fig: go.Figure, trace: Any, sub: AllocationSpans, live: np.ndarray, row: int,
              base: int, ascale: int, scale: int, colours: dict[str, Any], first: bool,
              at_ns: int) -> None:
    """The blocks live at ``at_ns``, outlined over their whole lifetime."""
    if len(live) == 0:
        return
    a = trace.allocs
    m = np.isin(sub.rows, live)
    t0, t1 = sub.start_ns[m] / scale, sub.end_ns[m] / scale
    ids = sub.rows[m]
    fig.add_trace(go.Bar(
        x=(t0 + t1) / 2, width=np.maximum(t1 - t0, 1e-9),
        base=(a["addr"][ids] - base) / ascale, y=a["reserved"][ids] / ascale,
        name=f"live at {at_ns / scale:g}", legendgroup="live", showlegend=first,
        marker={"color": colours["live"], "opacity": 0.35,
                "line": {"color": colours["live"], "width": 2.5}},
        customdata=ids, hoverinfo="skip", meta={"state": "live_at", "at_ns": at_ns}),
        row=row, col=1)


def occupancy(lo: np.ndarray, hi: np.ndarray, t0: np.ndarray, t1: np.ndarray,
              addr_edges: np.ndarray, time_edges: np.ndarray) -> np.ndarray:
    """Fraction of each (address bucket, time bucket) cell covered by the rectangles.

    Rectangles are ``[lo, hi) x [t0, t1)``; buckets are uniform (``*_edges`` from
    ``np.linspace``). Exact and O(rectangles + cells): each rectangle's coverage is the outer
    product of its per-axis coverage, split into a run of full buckets plus at most two
    partial end buckets per axis, and the four products are accumulated in difference arrays.

    >>> occupancy(np.array([0.]), np.array([2.]), np.array([0.]), np.array([1.]),
    ...           np.linspace(0, 4, 3), np.linspace(0, 2, 3)).tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    na, nt = len(addr_edges) - 1, len(time_edges) - 1
    fa0, fa1, ea, wa = _split(lo, hi, addr_edges[0], addr_edges[-1], na)
    ft0, ft1, et, wt = _split(t0, t1, time_edges[0], time_edges[-1], nt)
    shape = (na + 1, nt + 1)
    both = np.zeros(shape)
    along_a = np.zeros(shape)
    along_t = np.zeros(shape)
    direct = np.zeros(shape)
    ones = np.ones(len(lo))
    run_a = fa1 > fa0
    run_t = ft1 > ft0
    r = run_a & run_t
    for ai, ti, sign in ((fa0, ft0, 1), (fa1, ft0, -1), (fa0, ft1, -1), (fa1, ft1, 1)):
        np.add.at(both, (ai[r], ti[r]), sign * ones[r])
    for k in range(2):
        np.add.at(along_a, (fa0[run_a], et[run_a, k]), wt[run_a, k])
        np.add.at(along_a, (fa1[run_a], et[run_a, k]), -wt[run_a, k])
        np.add.at(along_t, (ea[run_t, k], ft0[run_t]), wa[run_t, k])
        np.add.at(along_t, (ea[run_t, k], ft1[run_t]), -wa[run_t, k])
        for j in range(2):
            np.add.at(direct, (ea[:, k], et[:, j]), wa[:, k] * wt[:, j])
    total = (both.cumsum(0).cumsum(1) + along_a.cumsum(0) + along_t.cumsum(1) + direct)
    return total[:na, :nt]


def _split(lo: np.ndarray, hi: np.ndarray, start: float, stop: float,
           n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per interval: the run of fully covered buckets [f0, f1), and up to two partial buckets
    (index, covered fraction) — index ``n`` (a spare slot) with weight 0 when unused."""
    w = (stop - start) / n if stop > start else 1.0
    x0 = np.clip((np.asarray(lo, dtype=np.float64) - start) / w, 0, n)
    x1 = np.clip((np.asarray(hi, dtype=np.float64) - start) / w, 0, n)
    x1 = np.maximum(x1, x0)
    b0 = np.minimum(np.floor(x0).astype(np.int64), n)
    b1 = np.minimum(np.floor(x1).astype(np.int64), n)
    same = b0 == b1
    idx = np.stack([b0, b1], axis=1)
    wts = np.stack([np.where(same, x1 - x0, b0 + 1 - x0), np.where(same, 0.0, x1 - b1)],
                   axis=1)
    idx[:, 1] = np.where(same, n, idx[:, 1])
    f0 = np.where(same, 0, b0 + 1)
    f1 = np.where(same, 0, b1)
    f1 = np.maximum(f1, f0)
    return f0, f1, idx, wts


def _add_heatmap(fig: go.Figure, trace: Any, sub: AllocationSpans, row: int, pool: str,
                 base: int, extent: int, ascale: int, aunit: str, scale: int, unit: str,
                 end_ns: int, first: bool) -> None:
    """The occupancy heatmap of one pool, with the leaked blocks' count in the hover."""
    a = trace.allocs
    lo = (a["addr"][sub.rows] - base).astype(np.float64)
    hi = lo + a["reserved"][sub.rows]
    t_lo = float(sub.start_ns.min()) if len(sub.start_ns) else 0.0
    t_hi = float(max(end_ns, int(sub.end_ns.max()) if len(sub.end_ns) else 0, t_lo + 1))
    aedges = np.linspace(0.0, float(max(extent, 1)), HEAT_ADDR_BUCKETS + 1)
    tedges = np.linspace(t_lo, t_hi, HEAT_TIME_BUCKETS + 1)
    occ = occupancy(lo, hi, sub.start_ns.astype(np.float64), sub.end_ns.astype(np.float64),
                    aedges, tedges)
    z = np.round(np.clip(occ, 0.0, 1.0) * 100, 1).astype(np.float32)
    z[z == 0] = np.nan  # empty cells stay transparent
    fig.add_trace(go.Heatmap(
        z=z, x=((tedges[:-1] + tedges[1:]) / 2 / scale).astype(np.float32),
        y=((aedges[:-1] + aedges[1:]) / 2 / ascale).astype(np.float32),
        colorscale="Blues", zmin=0, zmax=100, showscale=first, name=f"{pool} occupancy",
        colorbar={"title": {"text": "% used"}, "len": 0.5, "y": 0.75},
        hovertemplate=(f"{pool} pool<br>time %{{x:.3f}} {unit}<br>offset %{{y:.3f}} {aunit}"
                       "<br>%{z:.1f}% of the cell in use<extra></extra>"),
        meta={"state": "heatmap", "pool": pool, "allocations": len(sub.rows),
              "leaked": int(sub.leaked.sum())}), row=row, col=1)


def _reduce(times: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` points: per time bucket the maximum (so peaks stay visible)."""
    if len(times) <= 2 * n:
        return times, values
    edges = np.linspace(times[0], times[-1], n + 1)
    starts = np.unique(np.searchsorted(times, edges[:-1], side="left"))
    starts = starts[starts < len(times)]
    return times[starts], np.maximum.reduceat(values, starts)


def _add_usage(fig: go.Figure, trace: Any, device: int, present: list[str], row: int,
               scale: int, unit: str, end_ns: int, colours: dict[str, Any]) -> None:
    """Step curves of bytes in use per pool drawn, and for the device as a whole."""
    tl = memory_timeline(trace, device)
    curves = [(p, tl.pool_bytes[p]) for p in present if p in tl.pool_bytes]
    if any(p in _DEVICE_POOLS for p in present) and len(tl.device_bytes):
        curves.append(("device", tl.device_bytes))
    for name, y in curves:
        t, v = _reduce(tl.times_ns, y, MAX_CURVE_POINTS)
        t = np.concatenate([[0], t, [max(end_ns, int(t[-1]))]])
        v = np.concatenate([[0], v, [v[-1]]])
        fig.add_trace(go.Scatter(
            x=t / scale, y=v, mode="lines", line={"shape": "hv",
                                                   "color": colours["pools"].get(name),
                                                   "width": 2.5 if name == "device" else 1.5},
            name=f"{name} in use" if name != "device" else f"device {device} total",
            legendgroup=f"usage-{name}",
            hovertemplate=f"{name}: %{{y:.4~s}}B at %{{x:.3f}} {unit}<extra></extra>",
            meta={"state": "usage", "pool": name, "peak_bytes": tl.peak_bytes.get(name, 0)}),
            row=row, col=1)


__all__ = ["memory_map", "occupancy"]
