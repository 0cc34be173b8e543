"""Findings drawn: the wait-for graph of a deadlock and the two accesses of a race.

``wait_graph`` turns a ``deadlock`` finding into a small directed graph in the style of the
lock-order reports that teach (TSan's "cycle in lock order graph", Intel Advisor's per-thread
view): host threads, streams, events and blocking callbacks as nodes, "waits for" as arrows,
and the cycle, or the wait that can never be satisfied, in red. ``race_view`` puts the two
racing accesses of a ``race`` finding on their stream (or host) lanes and draws the ordering
edge that is missing as a dashed arrow, with the finding's fix beneath. Both read the trace
and the finding only, and never call ``show()``.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..checks.ordering import (
    CALLBACK,
    NEVER_RECORDED,
    RECORD_STUCK,
    RERECORD_STUCK,
    RESET_FOREVER,
    stuck_on,
)
from ..schema import TASK_KINDS
from .style import ERROR, NEUTRAL_LINE, PALETTE, PlotStyle
from .timeline import stream_names

_COL = {"thread": 0, "stream": 1, "event": 2, "callback": 3, "never": 3, "task": 3, "wait": 1}
_NODE_STYLE = {"thread": ("#5d6d7e", "square"), "stream": ("#2e86c1", "circle"),
               "wait": ("#16a085", "triangle-right"),
               "event": (PALETTE["warning"], "diamond"), "callback": ("#8e44ad", "hexagon"),
               "task": ("#7f8c8d", "circle"), "never": (ERROR, "x")}
HIGHLIGHT = ERROR
EDGE = "#7f8c8d"
#: The race view's colours: a write, a read, and other tasks for context.
RACE_FIRST, RACE_SECOND, CONTEXT = PALETTE["write"], PALETTE["read"], "#d5d8dc"
#: Characters per line of the wait chain printed under a wait graph.
CHAIN_WIDTH = 110
#: Where the race view's arrowhead starts along the missing edge (the rest stays dashed).
ARROW_TAIL = 0.8
#: The race view's layout in pixels: the plot's height and top margin; below the plot the x
#: axis (tick marks of ``RACE_TICK_LEN_PX``, tick labels of ``RACE_TICK_FONT_PX``, then the
#: title ``RACE_TITLE_STANDOFF_PX`` further down in ``RACE_TITLE_FONT_PX``), a gap of
#: ``RACE_NOTE_GAP_PX``, then the "Fix:" note, ``RACE_FIX_WIDTH`` characters a line in
#: ``RACE_NOTE_FONT_PX``.
RACE_PLOT_PX, RACE_MARGIN_T_PX = 200, 80
RACE_TICK_LEN_PX, RACE_TICK_FONT_PX, RACE_TITLE_STANDOFF_PX, RACE_TITLE_FONT_PX = 5, 12, 10, 13
RACE_NOTE_GAP_PX, RACE_NOTE_FONT_PX, RACE_FIX_WIDTH = 12, 11, 120
#: Pixels of height per pixel of font size (a line of text and its leading).
RACE_LINE_FACTOR = 1.4


def _race_line_px(font_px: int) -> int:
    """The height of one line of the race view's text of ``font_px``."""
    return round(font_px * RACE_LINE_FACTOR)


def race_axis_room_px() -> int:
    """Pixels below the race view's plot that its x axis takes (ticks, labels, title) plus
    the gap before the "Fix:" note, which starts there."""
    return (RACE_TICK_LEN_PX + _race_line_px(RACE_TICK_FONT_PX) + RACE_TITLE_STANDOFF_PX
            + _race_line_px(RACE_TITLE_FONT_PX) + RACE_NOTE_GAP_PX)


# =============================================================================== wait graph
@dataclass
class _Graph:
    """Nodes (key -> kind, label, hover) and edges (a, b, hover) being assembled; ``names``
    are the streams' names (``timeline.stream_names``), so a stream is called here what its
    lane is called on the timeline."""

    nodes: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)

    def name(self, trace: Any, oid: int) -> str:
        """What the graph calls object ``oid`` (see ``_object_name``)."""
        return _object_name(trace, oid, self.names)

    def node(self, key: str, kind: str, label: str, hover: str) -> str:
        if key not in self.nodes:
            self.nodes[key] = (kind, label, hover)
        return key

    def edge(self, a: str, b: str, hover: str) -> None:
        if not any(e[0] == a and e[1] == b for e in self.edges):
            self.edges.append((a, b, hover))


def wait_graph(finding: Any, trace: Any, *, style: PlotStyle | None = None) -> go.Figure:
    """The wait-for graph of a ``deadlock`` finding, its cycle or dead end in red.

    Nodes are the threads, streams, events and callbacks the finding names (``finding.ids``);
    an arrow ``A -> B`` reads "A waits for B": a thread for a stream it synchronises, a stream
    for the event its stuck ``stream_wait_event`` waits on, an event for the stream its next
    record is queued on. Edges on a cycle, and edges into a wait that can never be satisfied
    (an event reset and never recorded again, a blocking callback nobody runs), are red.

    Args:
        finding: a ``Finding`` of kind ``"deadlock"``.
        trace: the Trace the finding came from (read only).
        style: the template (default ``PlotStyle()``); red is its ``error`` colour.

    Raises:
        ValueError: the finding is not a deadlock.
    """
    if finding.kind != "deadlock":
        raise ValueError(f"wait_graph draws deadlock findings, not {finding.kind!r}")
    g = _Graph(names=stream_names(trace))
    ids = finding.ids
    chain = [ln.strip() for ln in finding.message.splitlines()
             if re.match(r"\s+\d+\.\s", ln)]
    stuck_call = finding.calls[0] if finding.calls else -1
    main_thread = int(trace.calls["thread"][stuck_call]) if stuck_call >= 0 else -1
    for th in ids.get("threads", ()):
        hover = _thread_hover(trace, th, finding, stuck_call if th == main_thread else -1)
        g.node(f"t{th}", "thread", _thread_label(trace, th), hover)
    for s in ids.get("streams", ()):
        g.node(f"s{s}", "stream", g.name(trace, s), _object_hover(trace, s))
    for e in ids.get("events", ()):
        g.node(f"e{e}", "event", g.name(trace, e), _object_hover(trace, e))
    red: set[tuple[str, str]] = set()
    for h in ids.get("tasks", ()):
        _task_edges(trace, g, int(h), red)
    if not ids.get("streams") and not ids.get("events"):
        _python_wait_edges(trace, g, finding.message)
    # the stuck thread waits for the streams named by the first step of the chain
    if main_thread >= 0 and ids.get("streams"):
        first = chain[0] if chain else ""
        head = first.split(", which")[0]
        targets = [s for s in ids.get("streams", ()) if _short(trace, s) in head  # by handle
                   or g.name(trace, s) in head]
        if not targets:
            pointed = {b for _, b, _ in g.edges}
            targets = [s for s in ids.get("streams", ()) if f"s{s}" not in pointed] or \
                list(ids.get("streams", ()))[:1]
        f, ln = trace.call_site(stuck_call)
        for s in targets:
            g.edge(f"t{main_thread}", f"s{s}",
                   f"{_thread_label(trace, main_thread)} waits in "
                   f"{trace.call_name(stuck_call)} at {f}:{ln} for {g.name(trace, s)}")
    red |= _cycle_edges(g)
    if not red and g.edges:
        red.add((g.edges[-1][0], g.edges[-1][1]))
    style = style if style is not None else PlotStyle()
    fig = _draw_graph(g, red, chain, style.severity_color("error"), style)
    kind = "a cycle" if _cycle_edges(g) else "a wait that can never be satisfied"
    fig.update_layout(
        title=f"Deadlock at {finding.file}:{finding.line}: {kind} (red)",
        meta={"nodes": list(g.nodes), "edges": [[a, b] for a, b, _ in g.edges],
              "highlighted": sorted([a, b] for a, b in red)})
    return fig


def _label(trace: Any, oid: int) -> str:
    return trace.string(int(trace.objects["label"][oid]))


def _object_name(trace: Any, oid: int, names: dict[int, str]) -> str:
    """A stream named like its timeline lane (``names``: ``timeline.stream_names``, the
    creating thread and line, not the handle); an event, or a stream with no name there, by
    its label."""
    return names.get(oid) or _short(trace, oid)


def _short(trace: Any, oid: int) -> str:
    """``stream 0x...`` / ``event 0x...`` (a default stream's context part dropped)."""
    return _label(trace, oid).split(" of ")[0]


def _site(trace: Any, cid: int) -> str:
    if cid < 0:
        return "?"
    f, ln = trace.call_site(cid)
    return f"{trace.call_name(cid)} at {f}:{ln}"


def _object_hover(trace: Any, oid: int) -> str:
    c = int(trace.objects["call"][oid])
    return f"<b>{_label(trace, oid)}</b><br>created by {_site(trace, c)}"


#: A line of a deadlock's runtime report: "A waits for B: why" (A, B: a thread or a wait).
_REPORT_EDGE = re.compile(r"^\s+(.+?) waits for (.+?): (.*?)(?: \([^()]*:\d+\))?$")
_THREAD_LABEL = re.compile(r"^thread (\d+) \(.*\)$")


def _python_wait_edges(trace: Any, g: _Graph, message: str) -> None:
    """The waits of a deadlock among the program's own threads (a ``Thread.join``, an
    ``Event.wait``, a ``Lock.acquire``: no stream involved), from the runtime report in the
    finding: threads and waits as nodes, "waits for" as arrows (a join leads to the joined
    thread, a held lock to its holder)."""
    report = message.split("Runtime report:", 1)
    if len(report) < 2:
        return
    for ln in report[1].splitlines():
        m = _REPORT_EDGE.match(ln)
        if m is None or "stuck thread:" in ln:
            continue
        waiter, target, why = m.groups()
        if target in ("another thread",):
            continue
        a = _report_node(trace, g, waiter, why)
        b = _report_node(trace, g, target, why)
        g.edge(a, b, f"{waiter} waits for {target}: {why}")


def _report_node(trace: Any, g: _Graph, text: str, why: str) -> str:
    m = _THREAD_LABEL.match(text)
    if m is not None:
        th = int(m.group(1))
        return g.node(f"t{th}", "thread", _thread_label(trace, th), html.escape(text))
    label = re.sub(r" \(made at [^)]*\)", "", text)
    return g.node("w:" + text, "wait", label, html.escape(f"{text}: {why}"))


def _thread_label(trace: Any, th: int) -> str:
    if 0 <= th < trace.threads.rows:
        return f"thread {th} ({trace.string(int(trace.threads['name'][th]))})"
    return f"thread {th}"


def _thread_hover(trace: Any, th: int, finding: Any, cid: int) -> str:
    text = f"<b>{_thread_label(trace, th)}</b>"
    if cid >= 0:
        text += f"<br>stuck in {_site(trace, cid)}"
    else:
        for ln in finding.message.splitlines():
            if ln.startswith("Also stuck:") and f"thread {th} " in ln:
                text += "<br>" + ln.removeprefix("Also stuck: ")
    return text


def _task_edges(trace: Any, g: _Graph, head: int, red: set[tuple[str, str]]) -> None:
    """Edges out of the stream whose stuck task is ``head``: the deadlock finding's step
    (``ordering.stuck_on``), drawn."""
    t = trace.tasks
    streams, tcall = t["stream"], t["call"]
    s = int(streams[head])
    skey = g.node(f"s{s}", "stream", g.name(trace, s), _object_hover(trace, s))
    hc = int(tcall[head])
    b = stuck_on(trace, head)
    if b.event >= 0:
        ev = b.event
        ekey = g.node(f"e{ev}", "event", g.name(trace, ev), _object_hover(trace, ev))
        g.edge(skey, ekey, f"{g.name(trace, s)} is stuck at stream_wait_event on "
               f"{g.name(trace, ev)}, queued by {_site(trace, hc)}")
        if b.kind == NEVER_RECORDED:
            nkey = g.node(f"never{ev}", "never", "never recorded",
                          f"{g.name(trace, ev)} is never recorded before this wait")
            g.edge(ekey, nkey, "no record_event is queued before the wait")
            red.add((ekey, nkey))
        elif b.kind == RECORD_STUCK:
            rs = b.next_stream
            g.edge(ekey, g.node(f"s{rs}", "stream", g.name(trace, rs), _object_hover(trace, rs)),
                   f"needs {_site(trace, int(tcall[b.record]))}, queued on {g.name(trace, rs)} "
                   "behind a task that cannot run")
        elif b.kind == RERECORD_STUCK:
            rs = b.next_stream
            g.edge(ekey, g.node(f"s{rs}", "stream", g.name(trace, rs), _object_hover(trace, rs)),
                   f"reset by {_site(trace, int(tcall[b.reset]))}; needs the next record, "
                   f"{_site(trace, int(tcall[b.next_record]))}, queued on {g.name(trace, rs)} "
                   "behind a task that cannot run")
        elif b.kind == RESET_FOREVER:
            nkey = g.node(f"never{ev}", "never", "reset, never recorded again",
                          f"recorded by {_site(trace, int(tcall[b.record]))}, then reset by "
                          f"{_site(trace, int(tcall[b.reset]))} before the wait ran; no later "
                          "record_event is queued")
            g.edge(ekey, nkey, "this wait can never be satisfied")
            red.add((ekey, nkey))
        return
    if b.kind == CALLBACK:
        ckey = g.node(f"c{head}", "callback", "blocking callback",
                      f"blocking callback launched by {_site(trace, hc)}")
        g.edge(skey, ckey, f"{g.name(trace, s)} is held by the blocking callback launched by "
               f"{_site(trace, hc)}")
        nkey = g.node(f"never_cb{head}", "never", "no process_report",
                      "the callback runs only in acl.rt.process_report of the thread "
                      "subscribed to the stream, and no thread can call it")
        g.edge(ckey, nkey, "nobody will ever run it")
        red.add((ckey, nkey))
        return
    kind = TASK_KINDS[int(t["kind"][head])]
    tkey = g.node(f"k{head}", "task", f"task {head} ({kind})",
                  f"task {head} ({kind}) queued by {_site(trace, hc)}")
    if head < t.rows:
        g.edge(skey, tkey, f"stuck at task {head} ({kind})")


def _cycle_edges(g: _Graph) -> set[tuple[str, str]]:
    """Edges whose two ends lie in one strongly connected component (Tarjan, iterative)."""
    succ: dict[str, list[str]] = defaultdict(list)
    for a, b, _ in g.edges:
        succ[a].append(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    comp: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    counter = 0
    for root in g.nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = index[v]
                    if w == v:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return {(a, b) for a, b, _ in g.edges if comp.get(a) == comp.get(b)}


def _draw_graph(g: _Graph, red: set[tuple[str, str]], chain: list[str],
                hot_colour: str, style: PlotStyle) -> go.Figure:
    """Columns of nodes by kind, arrows as annotations, hover on nodes and edge midpoints."""
    cols: dict[int, list[str]] = defaultdict(list)
    for key, (kind, _, _) in g.nodes.items():
        cols[_COL[kind]].append(key)
    pos: dict[str, tuple[float, float]] = {}
    for c, keys in cols.items():
        for i, key in enumerate(keys):
            pos[key] = (float(c), (len(keys) - 1) / 2 - i)
    fig = go.Figure(layout={"template": style.layout_template()})
    pairs = {(a, b) for a, b, _ in g.edges}
    mids: dict[bool, tuple[list[float], list[float], list[str]]] = {
        False: ([], [], []), True: ([], [], [])}
    lines: dict[bool, tuple[list[float | None], list[float | None]]] = {
        False: ([], []), True: ([], [])}
    for a, b, hover in g.edges:
        (x0, y0), (x1, y1) = pos[a], pos[b]
        if (b, a) in pairs or x0 == x1:  # bend apart edges that would overlap
            y0, y1 = y0 + 0.08, y1 + 0.08
            x0, x1 = x0 + (0.12 if x0 == x1 else 0), x1 + (0.12 if x0 == x1 else 0)
        hot = (a, b) in red
        xs, ys = lines[hot]
        xs.extend([x0, x1, None])
        ys.extend([y0, y1, None])
        mx, my, mt = mids[hot]
        mx.append((x0 + x1) / 2)
        my.append((y0 + y1) / 2)
        mt.append(hover)
        fig.add_annotation(x=x0 + 0.85 * (x1 - x0), y=y0 + 0.85 * (y1 - y0), ax=x0, ay=y0,
                           xref="x", yref="y", axref="x", ayref="y", showarrow=True,
                           arrowhead=3, arrowsize=1.4, arrowwidth=3 if hot else 1.5,
                           arrowcolor=hot_colour if hot else EDGE, text="")
    for hot in (False, True):
        xs, ys = lines[hot]
        if not xs:
            continue
        name = "cycle / unsatisfiable wait" if hot else "waits for"
        colour = hot_colour if hot else EDGE
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=name, hoverinfo="skip",
                                 line={"color": colour, "width": 3 if hot else 1.5},
                                 meta={"role": "edges", "highlight": hot}))
        mx, my, mt = mids[hot]
        fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", showlegend=False,
                                 marker={"size": 9, "color": colour, "opacity": 0.3},
                                 hovertext=mt, hoverinfo="text",
                                 meta={"role": "edge_hover", "highlight": hot}))
    by_kind: dict[str, list[str]] = defaultdict(list)
    for key, (kind, _, _) in g.nodes.items():
        by_kind[kind].append(key)
    for kind, keys in by_kind.items():
        colour, symbol = _NODE_STYLE[kind]
        fig.add_trace(go.Scatter(
            x=[pos[k][0] for k in keys], y=[pos[k][1] for k in keys], mode="markers+text",
            name=kind + "s" if kind != "never" else "can never happen",
            text=[g.nodes[k][1] for k in keys], textposition="top center",
            hovertext=[g.nodes[k][2] for k in keys], hoverinfo="text", customdata=keys,
            marker={"size": 22, "color": colour, "symbol": symbol,
                    "line": {"color": "white", "width": 1}},
            meta={"role": "nodes", "kind": kind}))
    rows = 0
    if chain:
        # the whole chain (it is the finding's text), wrapped, never cut short
        # (paths stay whole: no break after a hyphen of a folder name, nor inside a word)
        wrapped = [w for c in chain for w in (textwrap.wrap(
            c, CHAIN_WIDTH, subsequent_indent="   ", break_on_hyphens=False,
            break_long_words=False) or [""])]
        rows = len(wrapped)
        fig.add_annotation(text="<br>".join(html.escape(w) for w in wrapped), xref="paper",
                           yref="paper", x=0, y=-0.08, showarrow=False, align="left",
                           xanchor="left", yanchor="top", font={"size": 11},
                           name="wait_chain")
    fig.update_xaxes(visible=False, range=[-0.5, 3.6])
    fig.update_yaxes(visible=False, scaleanchor=None)
    fig.update_layout(height=460 + 16 * rows, margin={"b": 60 + 18 * rows},
                      hovermode="closest")
    return fig


# =============================================================================== race view
def race_view(finding: Any, trace: Any, pad: float = 0.5, *,
              style: PlotStyle | None = None) -> go.Figure:
    """The two racing accesses of a ``race`` finding on their lanes, the missing edge dashed.

    Lanes are the streams (or host threads, for synchronous work) of the two tasks; other
    tasks on those lanes within the window are drawn faded for context. The two accesses are
    bars with a marker each, named by time and by what they do ("1st in time: the write",
    "2nd in time: the read"); a dashed arrow from the end of the earlier to the start of the
    later is the ordering (event record -> wait, or a synchronize) that is missing. The
    finding's "Fix:" text is shown beneath.

    Args:
        finding: a ``Finding`` of kind ``"race"``.
        trace: the Trace the finding came from (read only).
        pad: the window around the pair, as a fraction of the pair's extent on each side.
        style: time units, template and the error colour (default ``PlotStyle()``).

    Raises:
        ValueError: the finding is not a race, or names fewer than two tasks.
    """
    if finding.kind != "race":
        raise ValueError(f"race_view draws race findings, not {finding.kind!r}")
    t = trace.tasks
    start = t["start_ns"].astype(np.int64)
    end = t["end_ns"].astype(np.int64)
    # named by time, not by queue order: in a race the access queued second can run first
    first, second = sorted(_race_pair(finding, trace), key=lambda k: (int(start[k]), k))
    lane_names = stream_names(trace)
    lanes = [_lane(trace, first, lane_names), _lane(trace, second, lane_names)]
    lo = int(min(start[first], start[second]))
    hi = int(max(end[first], end[second]))
    ext = max(hi - lo, 1)
    w0, w1 = lo - pad * ext, hi + pad * ext
    style = style if style is not None else PlotStyle()
    unit, scale = style.unit_for(ext)
    hot = style.severity_color("error")
    fig = go.Figure(layout={"template": style.layout_template()})
    # context: other tasks on the two lanes within the window
    ctx = [k for k in range(t.rows) if k not in (first, second) and start[k] >= 0
           and end[k] >= w0 and start[k] <= w1 and _lane(trace, k, lane_names) in lanes]
    if ctx:
        fig.add_trace(go.Bar(
            y=[_lane(trace, k, lane_names) for k in ctx],
            x=[(end[k] - start[k]) / scale for k in ctx],
            base=[start[k] / scale for k in ctx], orientation="h", name="other tasks",
            marker={"color": CONTEXT},
            hovertext=[_task_hover(trace, k, lane_names) for k in ctx],
            hoverinfo="text", meta={"role": "context"}))
    acc = _accesses(trace, finding)
    verbs = _access_verbs(trace, finding)
    names = _access_names(trace, (first, second), verbs)
    # coloured by what the access does (one meaning per colour): the write, the read
    tint = {k: RACE_FIRST if verbs.get(k) == "write" else RACE_SECOND for k in (first, second)}
    for role, k, colour, name in (("first", first, tint[first], names[0]),
                                  ("second", second, tint[second], names[1])):
        fig.add_trace(go.Bar(
            y=[_lane(trace, k, lane_names)], x=[max(end[k] - start[k], 1) / scale],
            base=[start[k] / scale], orientation="h", name=name, marker={"color": colour},
            hovertext=[_task_hover(trace, k, lane_names, acc.get(k, ""))], hoverinfo="text",
            meta={"role": f"{role}_bar", "task": k, "access": verbs.get(k, "read")}))
    fig.add_trace(go.Scatter(
        x=[start[first] / scale, start[second] / scale], y=lanes, mode="markers+text",
        name="racing accesses", text=[f"1: {names[0].split(': ', 1)[-1]}",
                                      f"2: {names[1].split(': ', 1)[-1]}"],
        textposition="top center",
        marker={"size": 14, "color": [tint[first], tint[second]], "symbol": "x",
                "line": {"color": NEUTRAL_LINE, "width": 1}},
        hovertext=[_task_hover(trace, k, lane_names, acc.get(k, "")) for k in (first, second)],
        hoverinfo="text", customdata=[first, second], meta={"role": "accesses"}))
    x0, x1 = end[first] / scale, start[second] / scale
    fig.add_trace(go.Scatter(
        x=[x0, x1], y=lanes, mode="lines", name="missing ordering (no event, no sync)",
        line={"color": hot, "dash": "dash", "width": 2.5}, hoverinfo="text",
        hovertext="nothing orders these two accesses: the missing happens-before edge",
        meta={"role": "missing_edge"}))
    # The arrowhead alone, on the last stretch of the dashed line: an annotation's arrow is
    # always solid, so drawn over the whole edge it would hide the dashes. Category lanes
    # are placed by index (0, 1, ...) so the tail can sit part of the way along.
    cats = list(dict.fromkeys(lanes))
    y0, y1 = cats.index(lanes[0]), cats.index(lanes[1])
    fig.add_annotation(x=x1, y=y1, ax=x0 + ARROW_TAIL * (x1 - x0),
                       ay=y0 + ARROW_TAIL * (y1 - y0), xref="x", yref="y", axref="x",
                       ayref="y", showarrow=True, arrowhead=3, arrowcolor=hot,
                       arrowwidth=2, text="", name="missing_edge_head")
    lines = finding.message.splitlines()
    fix = next((ln for ln in lines if ln.startswith("Fix:")), "")
    m = re.match(r"Data race \([^)]*\) on the .*? buffer", lines[0] if lines else "")
    head = m.group(0) if m else "Data race"
    # the note hangs below the x axis's title, a fixed number of pixels under the plot: a
    # paper fraction would move with the plot's height and land on the title
    fix_lines = textwrap.wrap(fix, RACE_FIX_WIDTH)
    room = race_axis_room_px()
    fig.add_annotation(text="<br>".join(fix_lines), xref="paper", yref="paper", x=0, y=0,
                       yshift=-room, showarrow=False, align="left", xanchor="left",
                       yanchor="top", font={"size": RACE_NOTE_FONT_PX}, name="fix")
    bottom = room + len(fix_lines) * _race_line_px(RACE_NOTE_FONT_PX) + RACE_NOTE_GAP_PX
    fig.update_layout(
        title=f"{head} — {finding.file}:{finding.line}",
        barmode="overlay",
        xaxis={"title": {"text": f"time ({unit})", "standoff": RACE_TITLE_STANDOFF_PX,
                         "font": {"size": RACE_TITLE_FONT_PX}},
               "range": [w0 / scale, w1 / scale], "ticks": "outside",
               "ticklen": RACE_TICK_LEN_PX, "tickfont": {"size": RACE_TICK_FONT_PX}},
        yaxis={"type": "category", "categoryorder": "array",
               "categoryarray": list(dict.fromkeys(lanes))},
        height=RACE_PLOT_PX + RACE_MARGIN_T_PX + bottom,
        margin={"t": RACE_MARGIN_T_PX, "b": bottom}, hovermode="closest",
        meta={"time_unit": unit, "time_scale_ns": scale, "tasks": [first, second],
              "fix": fix})
    return fig


def _race_pair(finding: Any, trace: Any) -> tuple[int, int]:
    """The first and second task of the finding's first racing pair."""
    tasks = [int(k) for k in finding.ids.get("tasks", ())]
    if len(tasks) < 2:
        raise ValueError("race_view needs a race finding naming two tasks")
    sites = list(finding.sites[:2])
    tcall = trace.tasks["call"]

    def at(site: tuple[str, int]) -> list[int]:
        return [k for k in tasks if trace.call_site(int(tcall[k])) == tuple(site)]

    a = at(sites[0]) if sites else []
    b = [k for k in (at(sites[1]) if len(sites) > 1 else []) if not a or k != a[0]]
    if a and b:
        return a[0], b[0]
    ordered = sorted(tasks, key=lambda k: (int(tcall[k]), k))
    return ordered[0], ordered[1]


def _lane(trace: Any, task: int, names: dict[int, str]) -> str:
    """The lane of ``task``; ``names`` is ``timeline.stream_names(trace)``."""
    s = int(trace.tasks["stream"][task])
    if s >= 0:
        return _object_name(trace, s, names)
    c = int(trace.tasks["call"][task])
    th = int(trace.calls["thread"][c]) if c >= 0 else 0
    return f"host: {_thread_label(trace, th)}"


def _access_verbs(trace: Any, finding: Any) -> dict[int, str]:
    """Per task of the finding: ``"write"`` when it writes one of the finding's allocations,
    else ``"read"``."""
    acc = trace.accesses
    allocs = list(finding.ids.get("allocs", ()))
    mine = np.isin(acc["task"], list(finding.ids.get("tasks", ()))) & np.isin(acc["alloc"],
                                                                              allocs)
    out: dict[int, str] = {}
    for j in np.nonzero(mine)[0].tolist():
        k = int(acc["task"][j])
        if int(acc["write"][j]) or k not in out:
            out[k] = "write" if int(acc["write"][j]) else out.get(k, "read")
    return out


def _access_names(trace: Any, pair: tuple[int, int],
                  verbs: dict[int, str]) -> tuple[str, str]:
    """Legend names of the two accesses, in time order and by what they do: ``1st: the write
    (memcpy_async)``; the API is named too when both do the same thing."""
    v = [verbs.get(k, "read") for k in pair]
    out = []
    for n, (k, verb) in enumerate(zip(pair, v, strict=True)):
        what = f"the {verb}"
        if v[0] == v[1]:
            c = int(trace.tasks["call"][k])
            what += f" ({trace.call_name(c)})" if c >= 0 else ""
        out.append(f"{('1st', '2nd')[n]} in time: {what}")
    return out[0], out[1]


def _accesses(trace: Any, finding: Any) -> dict[int, str]:
    """Per task of the finding, its accesses to the finding's allocations, as text."""
    acc = trace.accesses
    allocs = set(finding.ids.get("allocs", ()))
    out: dict[int, list[str]] = defaultdict(list)
    mine = np.isin(acc["task"], list(finding.ids.get("tasks", ())))
    for j in np.nonzero(mine)[0].tolist():
        a = int(acc["alloc"][j])
        if a not in allocs:
            continue
        off, n = int(acc["offset"][j]), int(acc["length"][j])
        verb = "writes" if int(acc["write"][j]) else "reads"
        out[int(acc["task"][j])].append(f"{verb} alloc #{a} bytes [{off}, {off + n})")
    return {k: "<br>".join(v) for k, v in out.items()}


def _task_hover(trace: Any, task: int, names: dict[int, str], extra: str = "") -> str:
    t = trace.tasks
    c = int(t["call"][task])
    kind = TASK_KINDS[int(t["kind"][task])]
    s, e = int(t["start_ns"][task]), int(t["end_ns"][task])
    text = (f"<b>task {task} ({kind})</b> on {_lane(trace, task, names)}<br>{_site(trace, c)}"
            f"<br>{s} ns - {e} ns")
    return text + ("<br>" + extra if extra else "")


__all__ = ["race_view", "wait_graph"]
