"""Views follow a dark theme: ``ACL_LAB_THEME`` or JupyterLab's own theme setting picks the
Plotly template (and the line colours that must contrast with the background)."""

from __future__ import annotations

from pathlib import Path

import plotly.io as pio
import pytest

from acl_lab.tracer.trace import Trace
from acl_lab.tracer.views.memory_map import memory_map
from acl_lab.tracer.views.style import PlotStyle, current_theme, jupyterlab_theme
from acl_lab.tracer.views.timeline import timeline
from tests.tracer import export_scenarios


@pytest.fixture(scope="module")
def trace() -> Trace:
    """A small two-stream trace with a blocked wait."""
    return export_scenarios.traced(export_scenarios.blocked_wait)


def write_theme(folder: Path, text: str) -> Path:
    """A JupyterLab user-settings folder whose themes file holds ``text``."""
    f = folder / "@jupyterlab" / "apputils-extension" / "themes.jupyterlab-settings"
    f.parent.mkdir(parents=True)
    f.write_text(text)
    return folder


@pytest.fixture
def no_theme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ACL_LAB_THEME and an empty JupyterLab settings folder."""
    monkeypatch.delenv("ACL_LAB_THEME", raising=False)
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path / "settings"))
    return tmp_path


def bg(name: str) -> str:
    """The paper background of a registered Plotly template."""
    return str(pio.templates[name].layout.paper_bgcolor)


def test_default_is_light(no_theme: Path, trace: Trace) -> None:
    """Nothing set: the white template, as before."""
    assert current_theme() == "light"
    fig = timeline(trace)
    assert fig.layout.template.layout.paper_bgcolor == bg("plotly_white")


def test_env_selects_dark(no_theme: Path, trace: Trace,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``ACL_LAB_THEME=dark``: timeline and memory map use plotly_dark; the record -> wait
    arrow colour is a light one."""
    monkeypatch.setenv("ACL_LAB_THEME", "dark")
    style = PlotStyle()
    assert style.template == "plotly_dark"
    assert style.edge_color == "#e0e0e0" and style.flow_color.startswith("rgba(200")
    for fig in (timeline(trace), memory_map(trace)):
        assert fig.layout.template.layout.paper_bgcolor == bg("plotly_dark")
    monkeypatch.setenv("ACL_LAB_THEME", "light")
    assert PlotStyle().template == "plotly_white"
    assert PlotStyle().edge_color == "#222222"


def test_jupyterlab_dark_setting_is_followed(no_theme: Path, trace: Trace,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """JupyterLab's settings file (JSON with comments) naming "JupyterLab Dark" makes the
    views dark; "JupyterLab Light" keeps them light; the environment variable wins."""
    settings = write_theme(no_theme / "lab", '{\n  // the theme\n  "theme": "JupyterLab Dark"\n}')
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(settings))
    assert jupyterlab_theme() == "dark"
    assert PlotStyle().edge_color == "#e0e0e0"
    assert timeline(trace).layout.template.layout.paper_bgcolor == bg("plotly_dark")
    monkeypatch.setenv("ACL_LAB_THEME", "light")
    assert current_theme() == "light"
    light = write_theme(no_theme / "lab2", '{"theme": "JupyterLab Light"}')
    monkeypatch.delenv("ACL_LAB_THEME")
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(light))
    assert jupyterlab_theme() == "light"
    assert PlotStyle().template == "plotly_white"


def test_unreadable_setting_means_light(no_theme: Path) -> None:
    """A broken settings file is ignored (light), never an error."""
    broken = write_theme(no_theme / "lab", "{ not json")
    assert jupyterlab_theme(broken) is None
    assert jupyterlab_theme(no_theme / "missing") is None


def _hue_sat(colour: str) -> tuple[float, float]:
    import colorsys

    r, g, b = (int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
    h, _l, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def test_red_means_a_problem_and_nothing_else() -> None:
    """Only error findings and leaked blocks are red (vermillion); copies are not, and H2D and
    D2H are told apart; the race view tints the write and the read, not red."""
    from acl_lab.tracer.views import graphs

    st = PlotStyle()

    def reddish(c: str) -> bool:
        h, s = _hue_sat(c)
        return s > 0.4 and (h < 30 or h > 330)

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
