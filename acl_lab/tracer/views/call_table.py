"""The call table: every recorded API call as one row of a Plotly table.

``call_table(trace)`` lists calls in call-id order with the calling thread, the pyACL name and
the C API beside it, the decoded arguments (pointers as addresses), the return code with its
name, the caller's file:line, the host start time and duration. Rows whose call failed are
tinted, so an error in a long run stands out. A pure function: Trace in, ``go.Figure`` out.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..sites import format_site
from ..units import human_ns
from .style import NEUTRAL_FILL, PlotStyle
from .timeline import format_arg

#: Columns of the table, left to right.
COLUMNS = ("call", "thread", "API (C name)", "arguments", "ret", "file:line", "start", "duration")
#: Relative widths of the columns (Plotly shares the figure's width in these ratios); the
#: thread column's is the least, widened to fit the longest thread name shown.
COLUMN_WIDTHS = {"call": 40, "thread": 110, "API (C name)": 200, "arguments": 260, "ret": 150,
                 "file:line": 170, "start": 80, "duration": 80}
#: Font size of the cells (px), and about how wide one of their characters is (px).
CELL_FONT_SIZE = 11
CELL_CHAR_PX = 7
#: Room around a cell's text (px): Plotly's padding either side.
CELL_PADDING_PX = 16
#: Thread names longer than this many characters end in an ellipsis (no real name does:
#: ``MainThread``, ``Thread-12 (worker)``, ``ThreadPoolExecutor-0_3``).
THREAD_NAME_MAX = 40
ELLIPSIS = "\u2026"


def shorten(text: str, limit: int) -> str:
    """``text`` itself when at most ``limit`` characters, else its first ``limit - 1`` and an
    ellipsis (``limit`` characters in all)."""
    return text if len(text) <= limit else text[:limit - 1] + ELLIPSIS


def column_widths(thread_names: list[str]) -> list[int]:
    """Relative widths of ``COLUMNS``: ``COLUMN_WIDTHS``, with the thread column wide enough
    for the longest of ``thread_names`` (so no name is cut)."""
    longest = max((len(t) for t in thread_names), default=0)
    need = longest * CELL_CHAR_PX + CELL_PADDING_PX
    return [max(COLUMN_WIDTHS[c], need) if c == "thread" else COLUMN_WIDTHS[c]
            for c in COLUMNS]


def _c_name(name: str) -> str:
    from ...acl._boundary import c_name

    return c_name(name)


def call_table(trace: Any, *, only_errors: bool = False, name: str | None = None,
               max_rows: int = 2000, style: PlotStyle | None = None) -> go.Figure:
    """A table of the trace's API calls.

    Args:
        trace: a ``Trace``.
        only_errors: keep only calls that returned a nonzero code.
        name: keep only calls of this pyACL function (``"acl.rt.malloc"``).
        max_rows: show at most this many rows (the first ones); the title says how many were
            left out.
        style: colours (default ``PlotStyle()``).

    Returns:
        A figure with one ``go.Table`` whose columns are ``COLUMNS``.
    """
    from ...constants import explain

    st = style or PlotStyle()
    calls = trace.calls
    ids = np.arange(calls.rows)
    rets = calls["ret"].astype(np.int64) if calls.rows else np.zeros(0, dtype=np.int64)
    if only_errors:
        ids = ids[rets[ids] != 0]
    if name is not None:
        ids = np.intersect1d(ids, trace.calls_named(name))
    total = len(ids)
    ids = ids[:max_rows]
    threads = trace.threads
    cols: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    fills: list[str] = []
    for cid in ids.tolist():
        api = trace.call_name(cid)
        th = int(calls["thread"][cid])
        th_name = (trace.string(int(threads["name"][th])) if 0 <= th < threads.rows
                   else str(th))
        ret = int(rets[cid])
        args = ", ".join(format_arg(trace, a) for a in trace.call_args(cid))
        file, line = trace.call_site(cid)
        start = int(calls["start_ns"][cid])
        end = int(calls["end_ns"][cid])
        cols["call"].append(cid)
        cols["thread"].append(shorten(th_name, THREAD_NAME_MAX))
        cols["API (C name)"].append(f"{api} ({_c_name(api)})")
        cols["arguments"].append(args if len(args) <= 120 else args[:117] + "...")
        cols["ret"].append("0" if ret == 0 else f"{ret} {explain(ret).name}")
        # the file's last component only: a long path would push the line out of the cell
        cols["file:line"].append(format_site(file, line, short=True))
        cols["start"].append(human_ns(start))
        cols["duration"].append(human_ns(end - start) if end >= start else "(unfinished)")
        fills.append(st.error_row_color if ret else NEUTRAL_FILL)  # a tint: either theme
    shown = len(ids)
    title = f"API calls: {total}" + (f" (first {shown} shown)" if shown < total else "")
    if only_errors:
        title += ", failed calls only"
    fig = go.Figure(layout={"template": st.layout_template()})
    fig.add_trace(go.Table(
        columnwidth=column_widths(cols["thread"]),
        header={"values": list(COLUMNS), "align": "left", "font": {"size": 12}},
        cells={"values": [cols[c] for c in COLUMNS], "align": "left",
               "font": {"size": CELL_FONT_SIZE},
               "fill": {"color": [fills] * len(COLUMNS)}},
    ))
    fig.update_layout(title=title, height=min(900, 140 + 24 * shown),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
