"""The look of every trace view: colours per task kind, state and severity, lane order, units.

One frozen ``PlotStyle`` holds every choice a view makes about appearance, so the timeline,
the memory map and the graphs agree (an H2D copy is the same blue everywhere, a leak the same
vermillion as an error, and vermillion means nothing else). Views take ``style=None`` and
build a fresh ``PlotStyle()``; pass your own
(``dataclasses.replace(PlotStyle(), call_color="#000")``) to change it. Nothing here is mutable:
the mappings are read-only proxies, so one caller's tweak can never leak into the next call
(the HTA anti-pattern of a mutated module-level default). This module draws nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

#: One colour-blind-safe palette (Okabe & Ito's eight colours, plus greys) with one meaning
#: per colour across every view: vermillion is "a problem" and nothing else (an error
#: finding, a leaked block, a failed item, the missing ordering of a race); copies are blues
#: and greens, never red, so H2D and D2H differ in lightness as well as hue.
PALETTE = {"problem": "#d55e00", "warning": "#e69f00", "info": "#0072b2",
           "copy_in": "#56b4e9", "copy_out": "#009e73", "write": "#332288", "read": "#cc79a7"}
#: Memory-block states (memory map) and their default colours.
LIVE = "#4c78a8"
FREED = "#bab0ac"
LEAKED = PALETTE["problem"]
#: Finding severities and their colours.
ERROR = PALETTE["problem"]
WARNING = PALETTE["warning"]
INFO = PALETTE["info"]


#: Theme-neutral colours. JupyterLab's Plotly renderer draws a figure's layout as stored (it
#: has no theme hook: jupyterlab-plotly's ``RenderedPlotly`` passes the stored layout to
#: ``Plotly.react``), so a figure coloured for the theme of the session that made it looks
#: wrong once the user switches theme, or when a notebook saved in one theme is opened in
#: the other. The default template therefore draws on a transparent paper and plot area (the
#: page shows through: ``--jp-layout-color0``, white in JupyterLab Light, #111 in JupyterLab
#: Dark) with text, grid and lines in greys that read on both.
TRANSPARENT = "rgba(0, 0, 0, 0)"
#: Text: a mid grey whose contrast is at least 4.2:1 on white and on #111 (the best one grey
#: can do on both is about 4.35:1).
NEUTRAL_TEXT = "#7a7a7a"
#: Grid lines, axis lines and separators: half-transparent greys (a tint of either page).
NEUTRAL_GRID = "rgba(128, 128, 128, 0.25)"
NEUTRAL_LINE = "rgba(128, 128, 128, 0.6)"
#: Table cells and headers: grey tints, so the page shows through in both themes.
NEUTRAL_FILL = "rgba(128, 128, 128, 0.08)"
NEUTRAL_HEADER_FILL = "rgba(128, 128, 128, 0.22)"

#: The default template (``PlotStyle.template``): theme-neutral, see ``neutral_template``.
NEUTRAL = "acl_lab"
#: Fixed (opaque) Plotly templates, chosen only by ``ACL_LAB_THEME=light|dark``: for a page
#: or a screenshot whose background is known.
THEME_TEMPLATES = {"light": "plotly_white", "dark": "plotly_dark"}


def neutral_template() -> dict[str, object]:
    """The theme-neutral Plotly template (a plain dict, a fresh copy per call): transparent
    backgrounds, ``NEUTRAL_TEXT`` text, translucent grey grid lines, axis lines, table fills,
    annotation arrows and shapes, and axes that make room for their labels (``automargin``),
    as ``plotly_white`` does. Plotly deep-copies a template into every figure; this one is a
    few hundred bytes (``plotly_white`` is tens of kilobytes, loaded from JSON first)."""
    axis = {"gridcolor": NEUTRAL_GRID, "linecolor": NEUTRAL_LINE, "zerolinecolor": NEUTRAL_LINE,
            "tickcolor": NEUTRAL_LINE, "ticks": "", "automargin": True,
            "title": {"standoff": 15}}
    return {
        "layout": {
            "paper_bgcolor": TRANSPARENT, "plot_bgcolor": TRANSPARENT,
            "font": {"color": NEUTRAL_TEXT},
            "xaxis": dict(axis), "yaxis": dict(axis),
            "legend": {"bgcolor": TRANSPARENT},
            "hovermode": "closest", "hoverlabel": {"align": "left"},
            "annotationdefaults": {"arrowcolor": NEUTRAL_TEXT, "arrowhead": 0,
                                   "arrowwidth": 1},
            "shapedefaults": {"line": {"color": NEUTRAL_TEXT}},
            "title": {"x": 0.05},
            "colorway": list(PALETTE.values()),
        },
        "data": {"table": [{
            "header": {"fill": {"color": NEUTRAL_HEADER_FILL},
                       "line": {"color": NEUTRAL_GRID}, "font": {"color": NEUTRAL_TEXT}},
            "cells": {"fill": {"color": NEUTRAL_FILL}, "line": {"color": NEUTRAL_GRID},
                      "font": {"color": NEUTRAL_TEXT}},
        }]},
    }


def current_theme() -> str:
    """The theme views draw for: ``"light"`` or ``"dark"`` when ``ACL_LAB_THEME`` says so (a
    fixed, opaque Plotly template), else ``"auto"`` (the theme-neutral template, which reads
    on either theme and follows a switch without a re-run)."""
    env = os.environ.get("ACL_LAB_THEME", "").strip().lower()
    return env if env in THEME_TEMPLATES else "auto"


def _themed(light: str, dark: str, auto: str) -> Callable[[], str]:
    return lambda: {"light": light, "dark": dark}.get(current_theme(), auto)


def _ro(d: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(d))


def _kind_colors() -> Mapping[str, str]:
    # Keys are schema.TASK_KINDS; kernels blue and transfers warm, as in Nsight Systems.
    return _ro({
        "H2D": PALETTE["copy_in"],
        "D2H": PALETTE["copy_out"],
        "D2D": "#b279a2",
        "H2H": "#9d755d",
        "memset": "#8c8c8c",
        "kernel": "#4c78a8",
        "model": "#54a24b",
        "event_record": "#eeca3b",
        "event_wait": "#c08a00",
        "event_reset": "#d8cf9a",
        "callback": "#72b7b2",
        "dvpp": "#e377c2",
    })


def _kind_labels() -> Mapping[str, str]:
    return _ro({
        "H2D": "H2D copy", "D2H": "D2H copy", "D2D": "D2D copy", "H2H": "H2H copy",
        "memset": "memset", "kernel": "kernel / op", "model": "model",
        "event_record": "event record", "event_wait": "event wait",
        "event_reset": "event reset", "callback": "callback", "dvpp": "DVPP",
    })


def _engine_colors() -> Mapping[str, str]:
    return _ro({"copy_h2d": PALETTE["copy_in"], "copy_d2h": PALETTE["copy_out"],
                "copy_d2d": "#b279a2",
                "aicore": "#4c78a8", "dvpp": "#e377c2", "host": "#8c8c8c", "none": "#8c8c8c"})


def _engine_labels() -> Mapping[str, str]:
    return _ro({"copy_h2d": "copy engine H2D", "copy_d2h": "copy engine D2H",
                "copy_d2d": "copy engine D2D", "aicore": "AI core", "dvpp": "DVPP engine",
                "host": "host", "none": "none"})


def _state_colors() -> Mapping[str, str]:
    return _ro({"live": LIVE, "freed": FREED, "leaked": LEAKED})


def _severity_colors() -> Mapping[str, str]:
    return _ro({"error": ERROR, "warning": WARNING, "info": INFO})


@dataclass(frozen=True)
class PlotStyle:
    """Colours, lane order, sizes and units shared by the Plotly views.

    Args:
        kind_colors: colour per task kind (``schema.TASK_KINDS`` names).
        kind_labels: legend name per task kind.
        engine_colors: colour per engine (``schema.ENGINES`` names), for engine lanes.
        engine_labels: lane name per engine.
        state_colors: memory-block state -> colour (``live``, ``freed``, ``leaked``).
        severity_colors: finding severity -> colour (``error``, ``warning``, ``info``).
        call_color: host API call bars.
        involved_color: calls a finding names for context only (the hollow diamonds).
        error_row_color: the tint of a failed call's row in the call table.
        sync_color: the shading of a host thread blocked in a synchronize / wait.
        flow_color: call -> task arrows.
        edge_color: event record -> wait arrows.
        lane_order: order of the lane groups; host threads come first, then, per device,
            the remaining groups in this order.
        time_units: ``(name, ns per unit)`` from small to large; the axis uses the first unit
            whose span ``switch_ns`` threshold is not passed (see ``unit_for``).
        unit_switch_ns: spans of at least this many ns use the second unit (ms).
        lane_px: pixels per lane (the figure's height follows the lane count).
        task_width, call_width, sync_width, callback_width: bar thickness as a fraction of a
            lane.
        lod_pixels: the horizontal resolution level-of-detail decimation assumes: segments
            are merged only below ``window / lod_pixels`` (one pixel at that width).
        template: the Plotly template's name: ``"acl_lab"`` (``NEUTRAL``, the default:
            ``neutral_template()``, right in JupyterLab's light and dark themes alike), or a
            registered Plotly template such as ``plotly_white`` / ``plotly_dark``, the
            default under ``ACL_LAB_THEME=light`` / ``dark`` (``current_theme()``); the
            arrow colours that must contrast with the background follow it too. Views pass
            ``layout_template()`` to Plotly.
    """

    kind_colors: Mapping[str, str] = field(default_factory=_kind_colors)
    kind_labels: Mapping[str, str] = field(default_factory=_kind_labels)
    engine_colors: Mapping[str, str] = field(default_factory=_engine_colors)
    engine_labels: Mapping[str, str] = field(default_factory=_engine_labels)
    state_colors: Mapping[str, str] = field(default_factory=_state_colors)
    severity_colors: Mapping[str, str] = field(default_factory=_severity_colors)
    call_color: str = "#7a8ca3"
    #: Calls a finding names for context only (not at fault): a neutral grey.
    involved_color: str = "#6b6b6b"
    error_row_color: str = "rgba(192, 57, 43, 0.18)"
    sync_color: str = "rgba(120, 120, 120, 0.22)"  # waiting is not a problem: grey
    flow_color: str = field(default_factory=_themed("rgba(90, 90, 90, 0.45)",
                                                    "rgba(200, 200, 200, 0.5)",
                                                    "rgba(128, 128, 128, 0.5)"))
    edge_color: str = field(default_factory=_themed("#222222", "#e0e0e0", "#8c8c8c"))
    lane_order: tuple[str, ...] = ("threads", "streams", "sync_copies", "engines")
    time_units: tuple[tuple[str, int], ...] = (("µs", 1_000), ("ms", 1_000_000))
    unit_switch_ns: int = 10_000_000
    lane_px: int = 30
    task_width: float = 0.6
    call_width: float = 0.6
    sync_width: float = 0.9
    callback_width: float = 0.3
    lod_pixels: int = 4000
    template: str = field(default_factory=_themed(THEME_TEMPLATES["light"],
                                                  THEME_TEMPLATES["dark"], NEUTRAL))

    def layout_template(self) -> str | dict[str, object]:
        """What views pass as ``layout.template``: ``neutral_template()`` for ``"acl_lab"``,
        else the template's name (Plotly looks it up in ``plotly.io.templates``)."""
        return neutral_template() if self.template == NEUTRAL else self.template

    def kind_color(self, kind: str) -> str:
        """The colour of task kind ``kind`` (grey for an unknown kind)."""
        return self.kind_colors.get(kind, "#8c8c8c")

    def state_color(self, state: str) -> str:
        """The colour of memory state ``state`` (``live``, ``freed`` or ``leaked``)."""
        return self.state_colors.get(state, "#8c8c8c")

    def severity_color(self, severity: str) -> str:
        """The colour of finding severity ``severity``."""
        return self.severity_colors.get(severity, "#8c8c8c")

    def unit_for(self, span_ns: int) -> tuple[str, int]:
        """``(unit name, ns per unit)`` for a time axis spanning ``span_ns``: µs below
        ``unit_switch_ns`` (10 ms), ms from there on."""
        small, large = self.time_units[0], self.time_units[-1]
        return large if span_ns >= self.unit_switch_ns else small
