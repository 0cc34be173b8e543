"""Figures and the explorer's panes look right in JupyterLab's light and dark themes alike,
whichever theme the figure was made in, and follow a theme switch without a re-run.

JupyterLab's Plotly renderer draws the stored layout as it is (no theme hook), so the default
template is theme-neutral: transparent paper and plot backgrounds (the page shows through),
text and lines in greys readable on white and on JupyterLab Dark's #111. The HTML panes
use JupyterLab's CSS variables (``--jp-ui-font-color1``, ``--jp-layout-color2``,
``--jp-border-color1``, ...). ``ACL_LAB_THEME=light|dark`` still picks a fixed, opaque Plotly
template. The browser side (computed colours after a theme switch) is
``tests/browser/test_explorer_lab.py``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import pytest

from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views import (
    call_table,
    memory_map,
    overlap_figure,
    race_view,
    timeline,
    wait_graph,
)
from acl_lab.tracer.views import style as style_mod
from acl_lab.tracer.views.style import (
    NEUTRAL,
    NEUTRAL_TEXT,
    PlotStyle,
    current_theme,
    neutral_template,
)
from acl_lab.tracer.views.widgets import call_html, source_html, stream_state, stream_state_html
from tests.tracer import export_scenarios
from tests.tracer.test_sarif_schema import leak_and_race

#: JupyterLab's notebook backgrounds (``--jp-layout-color0``): Light, Dark.
PAGES = ("#ffffff", "#111111")


@pytest.fixture(scope="module")
def traces() -> dict[str, Trace]:
    """A blocked wait, a leak-and-race program and a deadlock."""
    return {"wait": export_scenarios.traced(export_scenarios.blocked_wait),
            "race": export_scenarios.traced(leak_and_race),
            "deadlock": export_scenarios.traced(export_scenarios.deadlock)}


@pytest.fixture
def no_theme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ACL_LAB_THEME and an empty JupyterLab settings folder."""
    monkeypatch.delenv("ACL_LAB_THEME", raising=False)
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path / "settings"))
    return tmp_path


def figures(traces: dict[str, Trace], style: PlotStyle | None = None) -> dict[str, go.Figure]:
    """Every view, drawn from the test traces."""
    race = next(f for f in traces["race"].findings() if f.kind == "race")
    dead = next(f for f in traces["deadlock"].findings() if f.kind == "deadlock")
    return {"timeline": timeline(traces["wait"], style=style),
            "memory_map": memory_map(traces["race"], style=style),
            "call_table": call_table(traces["race"], style=style),
            "overlap": overlap_figure(traces["wait"], style=style),
            "race_view": race_view(race, traces["race"], style=style),
            "wait_graph": wait_graph(dead, traces["deadlock"], style=style)}


def rgba(colour: str) -> tuple[float, float, float, float]:
    """``(r, g, b, alpha)`` (0-255, 0-1) of a ``#rgb``/``#rrggbb``/``rgb()``/``rgba()``/
    named colour (the few names Plotly templates use)."""
    c = colour.strip().lower()
    names = {"white": "#ffffff", "black": "#000000", "transparent": "rgba(0,0,0,0)"}
    c = names.get(c, c)
    if c.startswith("#"):
        h = c[1:]
        if len(h) == 3:
            h = "".join(ch * 2 for ch in h)
        return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16), 1.0
    m = re.fullmatch(r"rgba?\(([^)]*)\)", c)
    assert m, f"not a colour: {colour!r}"
    parts = [float(p) for p in m.group(1).split(",")]
    return parts[0], parts[1], parts[2], parts[3] if len(parts) == 4 else 1.0


def over(colour: str, page: str) -> tuple[float, float, float]:
    """``colour`` composited over the opaque ``page``."""
    r, g, b, a = rgba(colour)
    pr, pg, pb, _ = rgba(page)
    return r * a + pr * (1 - a), g * a + pg * (1 - a), b * a + pb * (1 - a)


def contrast(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two opaque colours."""
    def lum(c: tuple[float, float, float]) -> float:
        lin = [(v / 255) / 12.92 if v / 255 <= 0.04045 else ((v / 255 + 0.055) / 1.055) ** 2.4
               for v in c]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def colours(node: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(path, colour)`` of every ``*color`` string in a layout's JSON."""
    if isinstance(node, dict):
        for k, v in node.items():
            p = f"{path}.{k}" if path else k
            if "color" in k.lower() and isinstance(v, str) and k != "colorway":
                yield p, v
            else:
                yield from colours(v, p)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from colours(v, f"{path}[{i}]")


def test_default_template_is_theme_neutral(no_theme: Path) -> None:
    """No ACL_LAB_THEME: the "acl_lab" template, transparent backgrounds, a grey text colour
    readable on both pages (>= 4.2:1), translucent grid lines; a fresh copy per call."""
    assert current_theme() == "auto"
    st = PlotStyle()
    assert st.template == NEUTRAL and st.layout_template() == neutral_template()
    t = neutral_template()
    lay = t["layout"]
    assert isinstance(lay, dict)
    for key in ("paper_bgcolor", "plot_bgcolor"):
        assert rgba(lay[key])[3] == 0, key
    for page in PAGES:
        assert contrast(over(NEUTRAL_TEXT, page), over(page, page)) >= 4.2, page
        for axis in ("xaxis", "yaxis"):
            r, g, b, a = rgba(lay[axis]["gridcolor"])
            assert r == g == b and 0 < a <= 0.4, lay[axis]
    lay["font"]["color"] = "#000"
    assert neutral_template()["layout"]["font"]["color"] == NEUTRAL_TEXT  # type: ignore[index]
    assert len(json.dumps(t)) < 2_000  # the template plotly deep-copies into each figure


def test_every_view_reads_on_light_and_dark(no_theme: Path, traces: dict[str, Trace]) -> None:
    """Every view's background is transparent and every colour of its layout (its own and
    its template's) works on JupyterLab Light's and Dark's page after compositing: text and
    arrows at least 3:1 (WCAG's bar for graphics), lines (grid, axes, separators) visible on
    both (at least 1.2:1: an opaque near-white or near-black line fails on one page), fills
    at most tints (below 2:1)."""
    for name, fig in figures(traces).items():
        lay = fig.layout.to_plotly_json()
        tmpl = lay.get("template", {}).get("layout", {})
        for key in ("paper_bgcolor", "plot_bgcolor"):
            value = lay.get(key, tmpl.get(key))
            assert value is not None and rgba(value)[3] == 0, (name, key, value)
        assert tmpl.get("font", {}).get("color") == NEUTRAL_TEXT, name
        checked = 0
        for path, value in colours(lay):
            if rgba(value)[3] == 0:
                continue
            is_fill = "bgcolor" in path or "fill" in path
            is_text = "font" in path or "arrowcolor" in path
            for page in PAGES:
                c = contrast(over(value, page), over(page, page))
                if is_fill:  # a fill must stay a tint over either page
                    assert c < 2.0, (name, path, value, page)
                else:
                    assert c >= (3.0 if is_text else 1.2), (name, path, value, page, c)
            checked += 1
        assert checked >= 3, (name, checked)
        tables = [tr for tr in fig.data if tr.type == "table"]
        for tr in tables:  # the call table's plain rows are a tint, not white
            fills = {c for col in tr.cells.fill.color for c in col}
            assert all(contrast(over(c, p), over(p, p)) < 2.0 for c in fills for p in PAGES
                       if c != PlotStyle().error_row_color), fills


def test_figures_do_not_depend_on_the_session_theme(no_theme: Path, traces: dict[str, Trace],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure made while JupyterLab's setting says Dark is the same figure as one made
    under Light: nothing is decided when the figure is made, so a notebook saved in one theme
    reads in the other and a switch needs no re-run."""
    def lab(theme: str) -> None:
        folder = no_theme / theme
        f = folder / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
        f.parent.mkdir(parents=True)
        f.write_text(json.dumps({"theme": theme}))
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(folder))

    lab("JupyterLab Dark")
    dark = {k: v.to_json() for k, v in figures(traces).items()}
    lab("JupyterLab Light")
    light = {k: v.to_json() for k, v in figures(traces).items()}
    assert dark == light


def test_acl_lab_theme_picks_a_fixed_template(no_theme: Path, traces: dict[str, Trace],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``ACL_LAB_THEME=dark``: plotly_dark and light arrows; ``light``: plotly_white and dark
    arrows; anything else: the neutral template."""
    import plotly.io as pio

    monkeypatch.setenv("ACL_LAB_THEME", "dark")
    st = PlotStyle()
    assert (st.template, st.layout_template()) == ("plotly_dark", "plotly_dark")
    assert st.edge_color == "#e0e0e0" and st.flow_color.startswith("rgba(200")
    fig = timeline(traces["wait"])
    assert fig.layout.template.layout.paper_bgcolor == \
        pio.templates["plotly_dark"].layout.paper_bgcolor
    monkeypatch.setenv("ACL_LAB_THEME", "light")
    assert PlotStyle().template == "plotly_white" and PlotStyle().edge_color == "#222222"
    monkeypatch.setenv("ACL_LAB_THEME", "sepia")
    assert current_theme() == "auto" and PlotStyle().template == NEUTRAL


def test_a_view_skips_plotlys_default_template(no_theme: Path, traces: dict[str, Trace],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Views hand their template to the figure they create: Plotly's default template (tens
    of kilobytes of JSON, deep-copied into a figure made without one) is never looked up."""
    import plotly.io as pio

    looked_up: list[str] = []
    real = type(pio.templates).__getitem__

    def spy(self: Any, item: str) -> Any:
        looked_up.append(item)
        return real(self, item)

    monkeypatch.setattr(type(pio.templates), "__getitem__", spy)
    figures(traces)
    assert looked_up == []


_STYLE_COLOUR = re.compile(r"(?<![\w-])(color|background|border(?:-(?:left|right|top|bottom))?"
                           r"(?:-color)?)\s*:\s*([^;'\"]+)")


def pane_colours(html_text: str) -> list[tuple[str, str]]:
    """``(property, value)`` of every colour-bearing inline style in ``html_text``."""
    return [(m.group(1), m.group(2).strip()) for m in _STYLE_COLOUR.finditer(html_text)]


def test_explorer_panes_use_jupyterlab_variables(traces: dict[str, Trace]) -> None:
    """The source pane and the stream table colour text, code background and borders with
    JupyterLab's CSS variables (with fallbacks); the only literal colours left are
    translucent tints (the selected line) and the severity colours of a finding's border."""
    t = traces["race"]
    cid = next(i for i in range(t.calls.rows) if t.call_name(i) == "acl.rt.memcpy_async")
    file, line = t.call_site(cid)
    panes = {"call": call_html(t, cid), "source": source_html(file, line),
             "streams": stream_state_html(stream_state(t, 10**12)),
             "empty": source_html("", 0)}
    used: set[str] = set()
    for name, text in panes.items():
        found = pane_colours(text)
        assert found, name
        for prop, value in found:
            if value.startswith("var(--jp-"):
                used.add(value.split(",")[0].removeprefix("var(").rstrip(")"))
                continue
            if prop.startswith("border"):
                assert "var(--jp-border-color" in value, (name, prop, value)
                used.add("--jp-border-color1")
                continue
            assert rgba(value)[3] <= 0.35, (name, prop, value)  # a tint under either theme's text
    assert {"--jp-ui-font-color1", "--jp-ui-font-color2", "--jp-layout-color2",
            "--jp-border-color1"} <= used


def test_red_means_a_problem_and_nothing_else() -> None:
    """Only error findings and leaked blocks are red (vermillion); copies are not, and H2D and
    D2H are told apart; the race view tints the write and the read, not red."""
    import colorsys

    from acl_lab.tracer.views import graphs

    st = PlotStyle()

    def reddish(c: str) -> bool:
        r, g, b = (int(c.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
        h, _l, s = colorsys.rgb_to_hls(r, g, b)
        return s > 0.4 and (h * 360 < 30 or h * 360 > 330)

    assert reddish(st.severity_color("error")) and st.state_color("leaked") == \
        st.severity_color("error")
    for kind, colour in st.kind_colors.items():
        assert not reddish(colour), f"task kind {kind} is drawn red"
    for engine, colour in st.engine_colors.items():
        assert not reddish(colour), f"engine {engine} is drawn red"
    assert not reddish(graphs.RACE_FIRST) and not reddish(graphs.RACE_SECOND)
    assert len({st.kind_color("H2D"), st.kind_color("D2H"), graphs.RACE_FIRST,
                graphs.RACE_SECOND, st.severity_color("error"),
                st.severity_color("warning")}) == 6
    assert not reddish(st.severity_color("warning"))
    assert style_mod.PALETTE["problem"] == st.severity_color("error")
