"""The interactive explorer: findings, timeline, memory map and source, linked, with a scrubber.

``explore(trace)`` returns an ``Explorer``, an ``ipywidgets.VBox`` that a notebook displays:

* a findings list (one entry per finding: severity, kind, file:line);
* the source pane: the selected call's file:line, the call with its arguments, and a few
  lines of its source when the file exists (read with ``linecache``, HTML-escaped);
* the timeline (``timeline(trace, findings=...)``) in a ``go.FigureWidget``, with a dotted
  cursor at the scrubber's time and the selected finding's window shaded;
* a time scrubber (``IntSlider`` over virtual time in µs, with a ``Play`` button that replays
  the trace) driving the memory map and a stream-state table;
* the memory map (``memory_map(trace)``) in a ``go.FigureWidget``: a cursor at the scrubber's
  time and, per pool band, the blocks live at that instant outlined (one overlay bar trace
  per pool, updated in place); ``layout.meta`` gains ``at_ns``, ``live_allocs`` (ids, at
  most ``MAX_META_IDS``), ``live_count`` and ``live_bytes``;
* the stream state at that instant: per stream, tasks done / running / queued.

Links: selecting a finding zooms the timeline to the time window of its calls and tasks
(``xaxis.range``), shows its main call in the source pane and moves the scrubber to the
instant it happens; clicking a call, task, sync wait or callback on the timeline, or a block
on the memory map, shows the call behind it; clicking a finding marker selects that finding.

Each explorer owns its widgets and its two FigureWidgets (updated in place inside
``batch_update()``); there is no module state and nothing calls ``show()``. The trace is only
read. The figures come from the pure views, so they look the same here as in a report.
"""

from __future__ import annotations

import html
import linecache
import math
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import numpy as np
import plotly.graph_objects as go

from ...acl._boundary import c_name
from ...runtime.kinds import AllocKind
from ..analysis import allocation_spans, trace_end_ns
from ..schema import POOLS, TASK_KINDS
from ..sites import format_site
from ..sources import stored_sources
from ..units import human_bytes
from .figure_widgets import PrimaryFigureWidget, SharedFigureWidget
from .memory_map import add_cursor_note, fit_legend, memory_map
from .style import PlotStyle
from .timeline import format_arg, timeline

#: Lines of source shown before and after the selected line.
CONTEXT_LINES = 2
#: Padding around a finding's time window, as a fraction of the window's span ...
ZOOM_PAD = 0.25
#: ... and at least this fraction of the whole trace, and at least this many ns.
ZOOM_MIN_FRACTION = 0.02
ZOOM_MIN_NS = 500
#: At most this many live allocation ids go into the memory map's ``layout.meta``.
MAX_META_IDS = 5000
#: Name of the shapes and annotation the explorer adds (and moves) on the figures.
CURSOR = "explorer-cursor"
SELECTION = "explorer-selection"


def explore(trace: Any, *, findings: Sequence[Any] | None = None,
            style: PlotStyle | None = None) -> Explorer:
    """An interactive explorer of ``trace`` for JupyterLab (see the module docstring).

    Args:
        trace: the Trace to explore (read only).
        findings: the findings to list and mark (default: ``trace.findings()``).
        style: colours and sizes for the figures (default ``PlotStyle()``).

    Returns:
        An ``Explorer`` (an ``ipywidgets.VBox``); display it as a notebook cell's value.
    """
    return Explorer(trace, findings=findings, style=style)


class Explorer(widgets.VBox):
    """The linked findings list, timeline, memory map, source pane and time scrubber.

    Attributes:
        trace: the explored Trace.
        findings: the listed findings, in list order.
        findings_list: ``ipywidgets.Select``; its value is a finding's index (None: none).
        source: ``ipywidgets.HTML``, the selected call's file:line and source.
        timeline_fig: the timeline ``go.FigureWidget``.
        memory_fig: the memory map ``go.FigureWidget``.
        slider: ``ipywidgets.IntSlider``, the scrubber's time in µs.
        play: ``ipywidgets.Play`` linked to the slider (replays the trace).
        reset_zoom: ``ipywidgets.Button`` showing the whole timeline again.
        stream_state: ``ipywidgets.HTML``, the per-stream table at the scrubber's time.
        end_ns: the trace's last instant (the scrubber's end).
    """

    def __init__(self, trace: Any, *, findings: Sequence[Any] | None = None,
                 style: PlotStyle | None = None) -> None:
        self.trace = trace
        self.plot_style = style if style is not None else PlotStyle()
        self.findings: list[Any] = list(trace.findings() if findings is None else findings)
        self.end_ns = trace_end_ns(trace)
        self.selected_call: int | None = None

        # ---- figures
        # one copy of plotly's widget JavaScript for both figures (figure_widgets.py)
        self.timeline_fig = PrimaryFigureWidget(
            timeline(trace, findings=self.findings, style=self.plot_style))
        tmeta = dict(self.timeline_fig.layout.meta or {})
        self._t_scale = int(tmeta.get("ns_per_unit", 1000)) or 1000
        self._t_unit = str(tmeta.get("unit", "µs"))
        lo, hi = tmeta.get("window_ns", [0, max(self.end_ns, 1)])
        self._t_full = (lo / self._t_scale, hi / self._t_scale)
        self.memory_fig = SharedFigureWidget(memory_map(trace, style=self.plot_style))
        mmeta = dict(self.memory_fig.layout.meta or {})
        self._m_scale = int(mmeta.get("time_scale_ns", 1000)) or 1000
        self._m_unit = str(mmeta.get("time_unit", "µs"))
        self._prepare_timeline()
        self._prepare_memory(mmeta)

        # ---- widgets
        n = len(self.findings)
        self.findings_list = widgets.Select(
            options=[(finding_label(f), i) for i, f in enumerate(self.findings)],
            value=None, rows=max(2, min(n, 8)), disabled=n == 0,
            layout=widgets.Layout(width="100%"))
        header = (f"<b>Findings ({n})</b>" if n else
                  "<b>Findings</b>: none. The checks found nothing wrong in this trace.")
        self.source = widgets.HTML(_EMPTY_SOURCE, layout=widgets.Layout(width="100%"))
        end_us = max(math.ceil(self.end_ns / 1000), 1)
        self.slider = widgets.IntSlider(
            value=0, min=0, max=end_us, step=1, description="time (µs)",
            continuous_update=True, layout=widgets.Layout(width="70%"),
            style={"description_width": "initial"})
        self.play = widgets.Play(value=0, min=0, max=end_us, step=max(end_us // 100, 1),
                                 interval=100, description="replay")
        self._play_link = widgets.link((self.play, "value"), (self.slider, "value"))
        self.reset_zoom = widgets.Button(description="whole trace", icon="expand",
                                         tooltip="show the whole timeline again")
        self.time_label = widgets.HTML()
        # fits its pane at any width: no minimum, the table wraps and a pane scrolls
        self.stream_state = widgets.HTML(layout=widgets.Layout(width="auto", overflow="auto"))

        self.findings_list.observe(self._on_finding, names="value")
        self.slider.observe(self._on_slider, names="value")
        self.reset_zoom.on_click(self._on_reset)
        self._wire_clicks()

        left = widgets.VBox([widgets.HTML(header), self.findings_list],
                            layout=widgets.Layout(width="40%"))
        right = widgets.VBox([widgets.HTML("<b>Source</b>"), self.source],
                             layout=widgets.Layout(width="60%"))
        scrubber = widgets.HBox([self.play, self.slider, self.time_label, self.reset_zoom])
        below = widgets.HBox([widgets.Box([self.memory_fig],
                                          layout=widgets.Layout(width="70%")),
                              widgets.VBox([widgets.HTML("<b>Streams at this instant</b>"),
                                            self.stream_state],
                                           layout=widgets.Layout(flex="1 1 0", min_width="0",
                                                                 overflow="auto"))])
        super().__init__([widgets.HBox([left, right]), self.timeline_fig, scrubber, below])
        self.add_class("acl-lab-explorer")
        self.scrub(0)

    # ------------------------------------------------------------------ public actions
    @property
    def widget(self) -> Explorer:
        """The widget to display (the explorer itself)."""
        return self

    @property
    def at_ns(self) -> int:
        """The scrubber's instant in ns (the slider's µs, capped at the trace end)."""
        return min(int(self.slider.value) * 1000, self.end_ns)

    def select(self, index: int | None) -> None:
        """Select finding ``index`` (None clears the selection), as a click in the list does."""
        self.findings_list.value = index

    def scrub(self, at_ns: int) -> None:
        """Show the state at ``at_ns``: the memory map, the cursors and the stream table.

        The slider shows µs; call this directly for a finer instant.
        """
        at_ns = max(0, min(int(at_ns), self.end_ns))
        live = self.live_allocs(at_ns)
        self._update_memory(at_ns, live)
        with self.timeline_fig.batch_update():
            shape = self._shape(self.timeline_fig, CURSOR)
            if shape is not None:
                shape.x0 = shape.x1 = at_ns / self._t_scale
        self.stream_state.value = stream_state_html(self.stream_state_at(at_ns))
        self.time_label.value = (f"<code>{at_ns / self._t_scale:.3f} {self._t_unit}</code>"
                                 f" of {self.end_ns / self._t_scale:.3f} {self._t_unit}")

    def show_call(self, cid: int, *, heading: str = "") -> None:
        """Show call ``cid`` in the source pane: its name, arguments, file:line and source."""
        if not 0 <= cid < self.trace.calls.rows:
            return
        self.selected_call = cid
        self.source.value = heading + call_html(self.trace, cid, self._t_scale, self._t_unit)

    def live_allocs(self, at_ns: int) -> list[int]:
        """Allocation ids (of the drawn pools) live at ``at_ns``; leaks stay live to the end."""
        s = self._spans
        if not len(s.rows):
            return []
        m = (s.start_ns <= at_ns) & ((at_ns < s.end_ns) | s.leaked)
        return [int(i) for i in s.rows[m]]

    def stream_state_at(self, at_ns: int) -> list[dict[str, Any]]:
        """Per stream (and for synchronous copies): tasks done / running / queued at ``at_ns``.

        Returns:
            One dict per row: ``stream`` (label), ``done``, ``running``, ``queued`` (submitted,
            not started), ``later`` (not yet submitted) and ``now`` (the running tasks,
            as text).
        """
        return stream_state(self.trace, at_ns)

    # ------------------------------------------------------------------ callbacks
    def _on_finding(self, change: dict[str, Any]) -> None:
        index = change["new"]
        if index is None or not 0 <= index < len(self.findings):
            self._set_selection(None)
            return
        f = self.findings[index]
        window = finding_window(self.trace, f)
        with self.timeline_fig.batch_update():
            if window is not None:
                lo, hi = _padded(window, self.end_ns)
                self.timeline_fig.layout.xaxis.range = [lo / self._t_scale, hi / self._t_scale]
            self._set_selection(window)
            meta = dict(self.timeline_fig.layout.meta or {})
            meta["selected_finding"] = index
            self.timeline_fig.layout.meta = meta
        self.source.value = finding_html(self.trace, f, self._t_scale, self._t_unit)
        cid = main_call(self.trace, f)
        self.selected_call = cid
        at = finding_time(self.trace, f)
        if at is not None:
            value = min(math.ceil(at / 1000), self.slider.max)
            if value == self.slider.value:
                self.scrub(at)
            else:
                self.slider.value = value

    def _on_slider(self, change: dict[str, Any]) -> None:
        self.scrub(self.at_ns)

    def _on_reset(self, _button: Any = None) -> None:
        with self.timeline_fig.batch_update():
            self.timeline_fig.layout.xaxis.range = list(self._t_full)

    def _on_timeline_click(self, trace: Any, points: Any, _state: Any = None) -> None:
        inds = list(getattr(points, "point_inds", []) or [])
        if not inds:
            return
        role = (trace.meta or {}).get("role", "")
        item = _first_id(trace.customdata, inds[0])
        if item is None:
            return
        t = self.trace
        if role == "finding":
            if 0 <= item < len(self.findings):
                self.select(item)
            return
        cid = -1
        if role == "call":
            cid = item
        elif role == "task" and 0 <= item < t.tasks.rows:
            cid = int(t.tasks["call"][item])
            start = int(t.tasks["start_ns"][item])
            if start >= 0:
                self.slider.value = min(math.ceil(start / 1000), self.slider.max)
        elif role == "sync" and 0 <= item < t.syncs.rows:
            cid = int(t.syncs["call"][item])
        elif role == "callback" and 0 <= item < t.callbacks.rows:
            task = int(t.callbacks["task"][item])
            cid = int(t.tasks["call"][task]) if 0 <= task < t.tasks.rows else -1
        if cid >= 0:
            self.show_call(cid)

    def _on_memory_click(self, trace: Any, points: Any, _state: Any = None) -> None:
        inds = list(getattr(points, "point_inds", []) or [])
        if not inds:
            return
        alloc = _first_id(trace.customdata, inds[0])
        if alloc is None or not 0 <= alloc < self.trace.allocs.rows:
            return
        cid = int(self.trace.allocs["call"][alloc])
        if cid >= 0:
            self.show_call(cid, heading=f"<div>allocation #{alloc}, made by:</div>")

    # ------------------------------------------------------------------ figure set-up
    def _prepare_timeline(self) -> None:
        """Add the scrubber cursor and the (hidden) finding-window shading."""
        # Not inside batch_update(): plotly merges shapes added in one batch and loses all
        # but the last one's properties.
        fig = self.timeline_fig
        fig.add_shape(type="rect", name=SELECTION, xref="x", yref="paper", x0=0, x1=0,
                      y0=0, y1=1, fillcolor="rgba(0, 114, 178, 0.10)", line_width=0,
                      layer="below", visible=False)
        fig.add_shape(type="line", name=CURSOR, xref="x", yref="paper", x0=0, x1=0,
                      y0=0, y1=1, line={"color": self.plot_style.state_color("live"),
                                        "dash": "dot", "width": 1.5})

    def _prepare_memory(self, mmeta: dict[str, Any]) -> None:
        """Collect each drawn block's geometry and add one 'live now' overlay per pool."""
        fig = self.memory_fig
        a = self.trace.allocs
        pools = [p for p in mmeta.get("pools", []) if p in POOLS]
        device = int(mmeta.get("device", 0))
        sel = (np.isin(a["pool"], [POOLS.index(p) for p in pools])
               & ((a["device"] == device) | (a["pool"] == POOLS.index("host")))
               & (a["kind"] != AllocKind.HOST_PAGEABLE))  # drawn by memory_map only when pinned
        self._spans = allocation_spans(self.trace, np.nonzero(sel)[0])
        # alloc id -> (pool, x, width, base, y); axes per pool
        self._geometry: dict[int, tuple[str, float, float, float, float]] = {}
        axes: dict[str, tuple[str, str]] = {}
        for tr in fig.data:
            meta = tr.meta if isinstance(tr.meta, dict) else {}
            if tr.type != "bar" or meta.get("state") not in ("freed", "leaked"):
                continue
            pool = str(meta.get("pool", ""))
            axes[pool] = (tr.xaxis or "x", tr.yaxis or "y")
            ids = np.asarray(tr.customdata).astype(np.int64).ravel()
            cols = [np.broadcast_to(np.asarray(v, dtype=np.float64), ids.shape)
                    for v in (tr.x, tr.width, tr.base, tr.y)]
            xs, ws, bs, ys = cols
            for k, i in enumerate(ids.tolist()):
                self._geometry[i] = (pool, float(xs[k]), float(ws[k]), float(bs[k]),
                                     float(ys[k]))
        live = self.plot_style.state_color("live")
        self._overlay: dict[str, int] = {}
        with fig.batch_update():
            for pool, (xa, ya) in axes.items():
                self._overlay[pool] = len(fig.data)
                fig.add_trace(go.Bar(
                    x=[], width=[], base=[], y=[], customdata=[], xaxis=xa, yaxis=ya,
                    name="live now", legendgroup="live now",
                    showlegend=len(self._overlay) == 1,
                    marker={"color": live, "opacity": 0.35, "line": {"color": live,
                                                                     "width": 2.5}},
                    hoverinfo="skip", meta={"state": "live_at", "pool": pool,
                                            "explorer": True}))
        fig.add_shape(type="line", name=CURSOR, xref="x", yref="paper", x0=0, x1=0,
                      y0=0, y1=1, line={"color": live, "dash": "dot", "width": 1.5})
        add_cursor_note(fig, "", live, name=CURSOR)
        fit_legend(fig)  # the "live now" entry

    def _wire_clicks(self) -> None:
        for tr in self.timeline_fig.data:
            role = (tr.meta or {}).get("role", "") if isinstance(tr.meta, dict) else ""
            if role in ("call", "task", "sync", "callback", "finding"):
                tr.on_click(self._on_timeline_click)
        for tr in self.memory_fig.data:
            meta = tr.meta if isinstance(tr.meta, dict) else {}
            if meta.get("state") in ("freed", "leaked"):
                tr.on_click(self._on_memory_click)

    # ------------------------------------------------------------------ updates
    def _update_memory(self, at_ns: int, live: list[int]) -> None:
        fig = self.memory_fig
        per_pool: dict[str, list[tuple[int, tuple[float, float, float, float]]]] = {
            p: [] for p in self._overlay}
        for i in live:
            g = self._geometry.get(i)
            if g is not None and g[0] in per_pool:
                per_pool[g[0]].append((i, g[1:]))
        held = int(self.trace.allocs["reserved"][np.asarray(live, dtype=np.int64)].sum()) \
            if live else 0
        x = at_ns / self._m_scale
        with fig.batch_update():
            for pool, k in self._overlay.items():
                rows = per_pool[pool]
                tr = fig.data[k]
                tr.customdata = [i for i, _ in rows]
                tr.x = [g[0] for _, g in rows]
                tr.width = [g[1] for _, g in rows]
                tr.base = [g[2] for _, g in rows]
                tr.y = [g[3] for _, g in rows]
            shape = self._shape(fig, CURSOR)
            if shape is not None:
                shape.x0 = shape.x1 = x
            for ann in fig.layout.annotations:
                if ann.name == CURSOR:
                    ann.text = (f"at {x:.3f} {self._m_unit}: {len(live)} block(s) live, "
                                f"{human_bytes(held, 'B')} reserved")
            meta = dict(fig.layout.meta or {})
            meta.update(at_ns=at_ns, live_allocs=live[:MAX_META_IDS], live_count=len(live),
                        live_bytes=held)
            fig.layout.meta = meta

    def _set_selection(self, window: tuple[int, int] | None) -> None:
        shape = self._shape(self.timeline_fig, SELECTION)
        if shape is None:
            return
        if window is None:
            shape.visible = False
            return
        shape.x0 = window[0] / self._t_scale
        shape.x1 = window[1] / self._t_scale
        shape.visible = True

    @staticmethod
    def _shape(fig: go.FigureWidget, name: str) -> Any:
        for shape in fig.layout.shapes:
            if shape.name == name:
                return shape
        return None


# =============================================================================== helpers
#: The panes' colours are JupyterLab's theme variables (its light and dark themes define
#: them; a theme switch restyles the panes at once, no re-run), each with a fallback that
#: reads on a light and on a dark page alike for front ends without them (VS Code,
#: nbconvert HTML).
TEXT = "var(--jp-ui-font-color1, inherit)"
DIM = "var(--jp-ui-font-color2, #7a7a7a)"
CODE_BACKGROUND = "var(--jp-layout-color2, rgba(128, 128, 128, 0.12))"
BORDER = "var(--jp-border-color1, rgba(128, 128, 128, 0.6))"
ERROR_TEXT = "var(--jp-error-color1, #d55e00)"
#: The selected source line: a translucent amber, under text of either theme's colour.
HIGHLIGHT = "rgba(230, 159, 0, 0.28)"

_EMPTY_SOURCE = (f"<div style='color:{DIM}'>Select a finding, or click a call, task or "
                 "memory block, to see its source line.</div>")


def finding_label(f: Any) -> str:
    """The findings-list entry of ``f``: severity, kind and file:line."""
    where = format_site(f.file, f.line, short=True) if f.file else "(no source line)"
    return f"{f.severity} · {f.kind} · {where}"


def main_call(trace: Any, f: Any) -> int | None:
    """The call a finding is about: the one at its file:line, else its first call."""
    calls = [c for c in f.calls if 0 <= c < trace.calls.rows]
    for c in calls:
        if trace.call_site(c) == (f.file, f.line):
            return c
    return calls[0] if calls else None


def finding_window(trace: Any, f: Any) -> tuple[int, int] | None:
    """``(first, last)`` ns of a finding's calls (start, end) and tasks (submit, start, end);
    None when it names neither."""
    times: list[int] = []
    c = trace.calls
    for cid in f.calls:
        if 0 <= cid < c.rows:
            times.extend((int(c["start_ns"][cid]), int(c["end_ns"][cid])))
    t = trace.tasks
    for tid in f.ids.get("tasks", ()):
        if 0 <= tid < t.rows:
            times.extend(int(t[col][tid]) for col in ("submit_ns", "start_ns", "end_ns"))
    times = [x for x in times if x >= 0]
    return (min(times), max(times)) if times else None


def finding_time(trace: Any, f: Any) -> int | None:
    """The instant a finding happens: the start of its last task to start, else the start of
    its main call (None when it names neither)."""
    t = trace.tasks
    starts = [int(t["start_ns"][i]) for i in f.ids.get("tasks", ()) if 0 <= i < t.rows]
    starts = [s for s in starts if s >= 0]
    if starts:
        return max(starts)
    cid = main_call(trace, f)
    return int(trace.calls["start_ns"][cid]) if cid is not None else None


def _padded(window: tuple[int, int], end_ns: int) -> tuple[int, int]:
    lo, hi = window
    pad = max((hi - lo) * ZOOM_PAD, end_ns * ZOOM_MIN_FRACTION, ZOOM_MIN_NS)
    return int(max(lo - pad, 0)), int(hi + pad)


def _first_id(customdata: Any, index: int) -> int | None:
    """The id in ``customdata[index]`` (a scalar, or the first column of a row)."""
    if customdata is None:
        return None
    try:
        v = customdata[index]
        if isinstance(v, (list, tuple, np.ndarray)):
            v = v[0]
        return int(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) \
            else None
    except (IndexError, TypeError, ValueError):
        return None


def source_lines(file: str, line: int, context: int = CONTEXT_LINES,
                 stored: Mapping[int, str] | None = None) -> list[tuple[int, str]]:
    """``(number, text)`` of lines ``line - context`` to ``line + context`` of ``file``;
    when the file cannot be read, those of them the trace stored (``stored``, from
    ``tracer.sources.stored_sources``); empty when there are none."""
    if not file or line <= 0:
        return []
    lines = linecache.getlines(file)
    if not lines:
        have = stored or {}
        return [(n, have[n]) for n in range(max(line - context, 1), line + context + 1)
                if n in have]
    lo, hi = max(line - context, 1), min(line + context, len(lines))
    return [(n, lines[n - 1].rstrip("\n")) for n in range(lo, hi + 1)]


def source_html(file: str, line: int, context: int = CONTEXT_LINES,
                stored: Mapping[int, str] | None = None) -> str:
    """``file:line`` and a few lines of source around it (the line highlighted), escaped;
    ``stored`` is the trace's copy of that file's cited lines (used when it cannot be read)."""
    if not file:
        return f"<div style='color:{DIM}'>(no source line recorded)</div>"
    head = f"<code class='acl-site'>{html.escape(format_site(file, line))}</code>"
    rows = source_lines(file, line, context, stored)
    if not rows:
        return head + f" <span style='color:{DIM}'>(source not available)</span>"
    width = len(str(rows[-1][0]))
    out = []
    for n, text in rows:
        body = f"{n:>{width}} | {html.escape(text)}"
        if n == line:
            body = f"<b style='background:{HIGHLIGHT};display:block'>{body}</b>"
        out.append(body)
    pre = (f"<pre class='acl-source' style='margin:4px 0;padding:4px;color:{TEXT};"
           f"background:{CODE_BACKGROUND};font-size:12px;"
           "line-height:1.35;overflow-x:auto'>" + "\n".join(out) + "</pre>")
    return head + pre


def call_html(trace: Any, cid: int, scale: int = 1000, unit: str = "µs") -> str:
    """One call: ``name(args)``, thread, time, ret and its source (escaped HTML)."""
    c = trace.calls
    name = trace.call_name(cid)
    args = ", ".join(format_arg(trace, a) for a in trace.call_args(cid))
    file, line = trace.call_site(cid)
    start, end, ret = int(c["start_ns"][cid]), int(c["end_ns"][cid]), int(c["ret"][cid])
    ret_text = "ret 0" if ret == 0 else f"<b style='color:{ERROR_TEXT}'>ret {ret}</b>"
    cname = c_name(name)
    also = f" <i>{html.escape(cname)}</i>" if cname != name else ""
    return (f"<div class='acl-call'><code>{html.escape(name)}({html.escape(args)})</code>{also}"
            f"<br><span style='color:{DIM}'>call #{cid}, thread {int(c['thread'][cid])}, "
            f"{start / scale:.3f} – {end / scale:.3f} {unit}, {ret_text}</span></div>"
            + source_html(file, line, stored=stored_sources(trace).get(file)))


def finding_html(trace: Any, f: Any, scale: int = 1000, unit: str = "µs") -> str:
    """A finding in the source pane: its title, its main call with source, the other call
    sites involved, and its message."""
    colour = PlotStyle().severity_color(f.severity)
    parts = [f"<div style='border-left:4px solid {colour};padding-left:6px'>"
             f"<b style='color:{colour}'>{html.escape(f.severity)}: "
             f"{html.escape(f.kind)}</b></div>"]
    cid = main_call(trace, f)
    if cid is not None:
        parts.append(call_html(trace, cid, scale, unit))
    else:
        parts.append(source_html(f.file, f.line, stored=stored_sources(trace).get(f.file)))
    main_site = (f.file, f.line)
    others = []
    for file, line in dict.fromkeys(tuple(s) for s in f.sites):
        if (file, line) == main_site or not file:
            continue
        text = linecache.getline(file, line).strip()
        others.append(f"<li><code>{html.escape(format_site(file, line))}</code>"
                      + (f" <code>{html.escape(text)}</code>" if text else "") + "</li>")
    if others:
        parts.append("<div>Also involved:</div><ul style='margin:2px 0'>"
                     + "".join(others) + "</ul>")
    body = html.escape(f.message).replace("\n", "<br>")
    parts.append(f"<details><summary>the whole finding</summary><div style='font-size:12px'>"
                 f"{body}</div></details>")
    return "".join(parts)


def stream_state(trace: Any, at_ns: int) -> list[dict[str, Any]]:
    """Per stream with tasks (and one row for synchronous copies): tasks done / running /
    queued / not yet submitted at ``at_ns``, and what is running. See
    ``Explorer.stream_state_at``."""
    t = trace.tasks
    if not t.rows:
        return []
    stream = t["stream"].astype(np.int64)
    sub, start, end = (t[c].astype(np.int64) for c in ("submit_ns", "start_ns", "end_ns"))
    done = (end >= 0) & (end <= at_ns) & (start >= 0)
    running = (start >= 0) & (start <= at_ns) & ~done
    submitted = sub <= at_ns
    queued = submitted & ~done & ~running
    later = ~submitted
    out = []
    keys = sorted(set(stream.tolist()), key=lambda s: (s < 0, s))
    objs = trace.objects
    for s in keys:
        m = stream == s
        label = (trace.string(int(objs["label"][s])) if 0 <= s < objs.rows
                 else "sync tasks")
        now = []
        for i in np.nonzero(m & running)[0].tolist():
            k = int(t["kind"][i])
            kind = TASK_KINDS[k] if 0 <= k < len(TASK_KINDS) else "?"
            c = int(t["call"][i])
            now.append(f"{kind} (task {i}" + (f", {trace.call_name(c)})" if c >= 0 else ")"))
        out.append({"stream": label, "done": int((m & done).sum()),
                    "running": int((m & running).sum()), "queued": int((m & queued).sum()),
                    "later": int((m & later).sum()), "now": "; ".join(now)})
    return out


def stream_state_html(rows: list[dict[str, Any]]) -> str:
    """The stream-state table (``stream_state`` rows) as escaped HTML."""
    if not rows:
        return f"<div style='color:{DIM}'>(no tasks in this trace)</div>"
    head = "".join(f"<th style='padding:2px 6px;text-align:{a};border-bottom:1px solid "
                   f"{BORDER}'>{h}</th>" for h, a in (
        ("stream", "left"), ("done", "right"), ("running", "right"), ("queued", "right"),
        ("later", "right"), ("running now", "left")))
    body = []
    for r in rows:
        cells = [f"<td style='padding:2px 6px'>{html.escape(r['stream'])}</td>"]
        cells += [f"<td class='acl-{k}' style='padding:2px 6px;text-align:right'>{r[k]}</td>"
                  for k in ("done", "running", "queued", "later")]
        cells.append(f"<td style='padding:2px 6px;font-size:11px'>{html.escape(r['now'])}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ("<table class='acl-stream-state' style='border-collapse:collapse;font-size:12px;"
            f"color:{TEXT};"
            "width:100%;max-width:100%;overflow-wrap:anywhere;word-break:break-word'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


__all__ = ["Explorer", "explore", "finding_time", "finding_window", "stream_state"]
