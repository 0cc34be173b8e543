"""The offline HTML report: one self-contained file with the summary, findings and views.

``write_report(trace, path)`` (``acl-lab report TRACE -o report.html``, ``acl-lab run
--report FILE``) writes a single HTML page that opens without a network connection:
plotly.js is embedded exactly once, in one ``<script>`` in the head, and every figure is a
``<div>`` followed by an inline ``Plotly.newPlot`` call (``fig.to_html(full_html=False,
include_plotlyjs=False)``, whose JSON escapes ``<`` and ``/`` so no trace text can close the
script). No script, stylesheet or font is loaded from anywhere else.

Page layout, top to bottom:

1. header: the title, the run (program, profile, exit code, error; when a ``summary`` is
   given), the stats (API calls, tasks, allocations, peak device memory, virtual time) and a
   table of contents;
2. findings, grouped by severity (errors, warnings, infos), each as its ``_repr_html_``
   card; a ``race`` finding is followed by its ``race_view``, a ``deadlock`` by its
   ``wait_graph`` (at most ``MAX_FINDING_FIGURES`` such figures; the rest say so); "No
   findings" when the checks found nothing;
3. the timeline with the findings marked (SVG for small traces, WebGL segments beyond; see
   ``views.timeline``);
4. the memory map of each device that allocated memory (device 0 at least);
5. the overlap figure (engine busy time, copy/compute overlap) of each device that ran tasks
   (device 0 at least).

Every figure sits in ``<div class="figure" data-view="NAME">`` (``timeline``,
``memory_map``, ``overlap``, ``race_view``, ``wait_graph``). A view that cannot be drawn
(e.g. an empty trace) becomes a note instead of failing the report. The trace is only read;
the output is deterministic (no timestamps, fixed div ids).
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from ..checks.base import SEVERITIES
from ..units import human_bytes, human_ns
from .graphs import race_view, wait_graph
from .memory_map import memory_map
from .overlap import overlap_figure
from .style import PlotStyle
from .timeline import MAX_MARKS_PER_FINDING, timeline

#: At most this many race views / wait graphs are drawn; further findings are listed only.
MAX_FINDING_FIGURES = 20
#: At most this many findings are listed (a runaway check must not make the page unusable).
MAX_LISTED_FINDINGS = 1000
#: The timeline marks at most this many calls and this many tasks per finding (a race found
#: in a long loop can name thousands of tasks; a marker with a hover each would dominate the
#: file). The finding's card still tells the whole story.
#: Plotly config of every figure (no logo; resizes with the window).
PLOTLY_CONFIG: dict[str, Any] = {"responsive": True, "displaylogo": False}

_SEVERITY_TITLES = {"error": "Errors", "warning": "Warnings", "info": "Notes"}
_FINDING_VIEWS = {"race": ("race_view", race_view), "deadlock": ("wait_graph", wait_graph)}

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
       max-width: 1400px; padding: 0 24px 48px; color: #1f2d3d; }
header { border-bottom: 2px solid #d5d8dc; margin-bottom: 16px; }
h1 { margin: 20px 0 8px; font-size: 1.6em; }
h2 { border-bottom: 1px solid #e5e8eb; padding-bottom: 4px; margin-top: 32px; }
table.kv { border-collapse: collapse; margin: 8px 24px 8px 0; display: inline-table;
           vertical-align: top; }
table.kv th { text-align: left; font-weight: 600; padding: 2px 12px 2px 0; color: #566573; }
table.kv td { padding: 2px 12px 2px 0; font-variant-numeric: tabular-nums; }
.exit-ok { color: #1e8449; font-weight: 600; }
.exit-bad { color: #c0392b; font-weight: 600; }
nav a { margin-right: 16px; }
.finding { margin: 8px 0 16px; }
.figure { margin: 8px 0 24px; }
.note { color: #566573; font-style: italic; }
.no-findings { color: #1e8449; font-weight: 600; }
footer { margin-top: 40px; color: #808b96; font-size: 0.85em; }
code { font-size: 0.95em; }
"""


# --------------------------------------------------------------------------- public
def report_html(trace: Any, *, title: str | None = None,
                summary: Mapping[str, Any] | None = None,
                findings: Sequence[Any] | None = None,
                style: PlotStyle | None = None) -> str:
    """The report of ``trace`` as one self-contained HTML document (see the module docstring).

    Args:
        trace: the Trace to report (read only).
        title: the page title (default: "acl_lab report", with the program's name when the
            summary names it).
        summary: the run, as ``acl-lab run`` knows it: any of ``program``, ``profile``,
            ``exit_code``, ``error`` (other keys are ignored). Without it the header shows
            the trace's profile and its stats only.
        findings: the findings to show (default: ``trace.findings()``).
        style: colours and template for every figure (default ``PlotStyle()``).

    Returns:
        The HTML text; plotly.js is embedded once and nothing is fetched from the network.
    """
    st = style if style is not None else PlotStyle()
    found = list(trace.findings() if findings is None else findings)
    run = dict(summary or {})
    page_title = title or _default_title(run)
    body = [
        _header(trace, page_title, run, found),
        _findings_section(trace, found, st),
        _timeline_section(trace, found, st),
        _memory_section(trace, st),
        _overlap_section(trace, st),
        _footer(),
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{html.escape(page_title)}</title>\n<style>{_CSS}</style>\n"
            f"<script type=\"text/javascript\">{get_plotlyjs()}</script>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def write_report(trace: Any, path: str | os.PathLike[str], *, title: str | None = None,
                 summary: Mapping[str, Any] | None = None,
                 findings: Sequence[Any] | None = None,
                 style: PlotStyle | None = None) -> None:
    """Write ``report_html(trace, ...)`` to ``path`` (UTF-8), replacing any file there.

    Args:
        trace: the Trace to report (read only).
        path: the HTML file to write.
        title, summary, findings, style: as for ``report_html``.

    Raises:
        OSError: the file cannot be written.
    """
    text = report_html(trace, title=title, summary=summary, findings=findings, style=style)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


# --------------------------------------------------------------------------- header
def _default_title(run: Mapping[str, Any]) -> str:
    prog = run.get("program")
    return f"acl_lab report: {os.path.basename(str(prog))}" if prog else "acl_lab report"


def _kv_table(rows: list[tuple[str, str]], cls: str) -> str:
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f"<table class=\"kv {cls}\">{cells}</table>"


def _header(trace: Any, title: str, run: Mapping[str, Any], found: list[Any]) -> str:
    st = trace.stats()
    rows: list[tuple[str, str]] = []
    if "program" in run:
        rows.append(("program", f"<code>{html.escape(str(run['program']))}</code>"))
    profile = run.get("profile") or trace.meta.get("profile")
    if profile:
        rows.append(("profile", html.escape(str(profile))))
    devices = trace.meta.get("device_count")
    if devices:
        rows.append(("devices", str(int(devices))))
    if "exit_code" in run:
        code = run["exit_code"]
        cls = "exit-ok" if code == 0 else "exit-bad"
        rows.append(("exit code", f"<span class=\"{cls}\">{html.escape(str(code))}</span>"))
    if run.get("error"):
        rows.append(("error", f"<span class=\"exit-bad\">{html.escape(str(run['error']))}"
                              "</span>"))
    counts = {s: sum(1 for f in found if f.severity == s) for s in SEVERITIES}
    rows.append(("findings", f"{len(found)} ({counts['error']} error(s), "
                             f"{counts['warning']} warning(s), {counts['info']} note(s))"))
    stats = [("API calls", f"{st['api_calls']:,}"), ("tasks", f"{st['tasks']:,}"),
             ("allocations", f"{st['allocations']:,}"),
             ("peak device memory", human_bytes(st["peak_device_bytes"], "B")),
             ("virtual time", human_ns(st["virtual_time_ns"]))]
    nav = ("<nav><a href=\"#findings\">Findings</a><a href=\"#timeline\">Timeline</a>"
           "<a href=\"#memory\">Memory map</a><a href=\"#overlap\">Overlap</a></nav>")
    return (f"<header>\n<h1>{html.escape(title)}</h1>\n"
            f"<section id=\"run\">{_kv_table(rows, 'run')}"
            f"{_kv_table(stats, 'stats')}</section>\n{nav}\n</header>")


# --------------------------------------------------------------------------- figures
def _figure(fig: go.Figure, view: str, div_id: str) -> str:
    """A figure as a div plus its inline ``Plotly.newPlot`` (no plotly.js included)."""
    height = fig.layout.height
    inner = fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                        config=PLOTLY_CONFIG,
                        default_height=f"{int(height)}px" if height else "480px")
    return f"<div class=\"figure\" data-view=\"{view}\">{inner}</div>"


def _note(text: str) -> str:
    return f"<p class=\"note\">{html.escape(text)}</p>"


def _findings_section(trace: Any, found: list[Any], st: PlotStyle) -> str:
    out = [f"<section id=\"findings\">\n<h2>Findings ({len(found)})</h2>"]
    if not found:
        out.append("<p class=\"no-findings\">No findings: the checks found no leak, race, "
                   "deadlock or misuse in this trace.</p>")
        return "\n".join(out) + "\n</section>"
    figures = 0
    listed = 0
    for sev in SEVERITIES:
        group = [f for f in found if f.severity == sev]
        if not group:
            continue
        out.append(f"<h3>{_SEVERITY_TITLES[sev]} ({len(group)})</h3>")
        for f in group:
            if listed >= MAX_LISTED_FINDINGS:
                break
            listed += 1
            out.append(f"<div class=\"finding\" data-kind=\"{html.escape(f.kind)}\" "
                       f"data-severity=\"{html.escape(f.severity)}\">{f._repr_html_()}")
            view = _FINDING_VIEWS.get(f.kind)
            if view is not None:
                name, draw = view
                if figures < MAX_FINDING_FIGURES:
                    try:
                        fig = draw(f, trace, style=st)
                    except (ValueError, IndexError, KeyError) as e:
                        out.append(_note(f"({name} not drawn: {e})"))
                    else:
                        out.append(_figure(fig, name, f"finding-{listed}-{name}"))
                        figures += 1
                else:
                    out.append(_note(f"({name} not drawn: the report draws at most "
                                     f"{MAX_FINDING_FIGURES} finding figures)"))
            out.append("</div>")
    if listed < len(found):
        out.append(_note(f"... and {len(found) - listed} more finding(s), not listed "
                         f"(the report lists at most {MAX_LISTED_FINDINGS})."))
    return "\n".join(out) + "\n</section>"


def _timeline_section(trace: Any, found: list[Any], st: PlotStyle) -> str:
    out = ["<section id=\"timeline\">\n<h2>Timeline</h2>"]
    try:
        fig = timeline(trace, findings=found, style=st)
    except ValueError as e:
        out.append(_note(f"(no timeline: {e})"))
    else:
        meta = fig.layout.meta or {}
        if any(len(f.calls) > MAX_MARKS_PER_FINDING
               or len(f.ids.get("tasks", ())) > MAX_MARKS_PER_FINDING for f in found):
            out.append(_note(f"Findings that involve more than {MAX_MARKS_PER_FINDING} calls "
                             "or tasks are marked at their first "
                             f"{MAX_MARKS_PER_FINDING} of each."))
        if meta.get("mode") == "webgl":
            out.append(_note("Large trace: tasks are drawn as WebGL segments, and runs of "
                             "tasks shorter than a pixel are merged (hover says how many). "
                             "Zoom in for detail; the explorer (acl_lab.explore) redraws "
                             "single tasks for a narrow window."))
        out.append(_figure(fig, "timeline", "timeline-figure"))
    return "\n".join(out) + "\n</section>"


def _devices(trace: Any, table: str) -> list[int]:
    """Devices that have rows in ``table`` (device 0 always)."""
    devs = {0}
    t = trace.tables.get(table)
    if t is not None and t.rows:
        devs.update(int(d) for d in np.unique(t["device"]) if int(d) >= 0)
    return sorted(devs)


def _memory_section(trace: Any, st: PlotStyle) -> str:
    out = ["<section id=\"memory\">\n<h2>Memory map</h2>"]
    for dev in _devices(trace, "allocs"):
        try:
            fig = memory_map(trace, device=dev, style=st)
        except ValueError as e:
            out.append(_note(f"(no memory map for device {dev}: {e})"))
        else:
            out.append(_figure(fig, "memory_map", f"memory-map-{dev}"))
    return "\n".join(out) + "\n</section>"


def _overlap_section(trace: Any, st: PlotStyle) -> str:
    out = ["<section id=\"overlap\">\n<h2>Engine overlap</h2>"]
    for dev in _devices(trace, "tasks"):
        try:
            fig = overlap_figure(trace, dev, style=st)
        except (ValueError, ZeroDivisionError) as e:
            out.append(_note(f"(no overlap figure for device {dev}: {e})"))
        else:
            out.append(_figure(fig, "overlap", f"overlap-{dev}"))
    return "\n".join(out) + "\n</section>"


def _footer() -> str:
    import plotly

    from ... import __version__
    return (f"<footer>Written by acl_lab {html.escape(__version__)} with plotly "
            f"{html.escape(plotly.__version__)}; plotly.js is embedded in this file, which "
            "needs no network connection.</footer>")


__all__ = ["MAX_FINDING_FIGURES", "MAX_LISTED_FINDINGS", "MAX_MARKS_PER_FINDING", "report_html",
           "write_report"]
