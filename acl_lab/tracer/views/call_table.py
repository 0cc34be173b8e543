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
from .timeline import _fmt_arg

#: Columns of the table, left to right.
COLUMNS = ("call", "thread", "API (C name)", "arguments", "ret", "file:line", "start", "duration")


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
        args = ", ".join(_fmt_arg(trace, a) for a in trace.call_args(cid))
        file, line = trace.call_site(cid)
        start = int(calls["start_ns"][cid])
        end = int(calls["end_ns"][cid])
        cols["call"].append(cid)
        cols["thread"].append(th_name)
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
        columnwidth=[40, 70, 200, 260, 150, 170, 80, 80],
        header={"values": list(COLUMNS), "align": "left", "font": {"size": 12}},
        cells={"values": [cols[c] for c in COLUMNS], "align": "left", "font": {"size": 11},
               "fill": {"color": [fills] * len(COLUMNS)}},
    ))
    fig.update_layout(title=title, height=min(900, 140 + 24 * shown),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
