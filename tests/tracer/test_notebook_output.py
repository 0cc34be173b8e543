"""The notebook display of figures in a real kernel (nbclient): the ``acl_lab`` bundle (plotly
JSON and static HTML) without loading plotly's renderer registry, whose import pulls in
nbformat, jsonschema and its format checkers (the cost of the first figure in a fresh kernel;
its time is measured in ``benchmarks/bench_first_figure.py``, not here)."""

from __future__ import annotations

import json
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.timeout(300)

PLOTLY_MIME = "application/vnd.plotly.v1+json"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

SETUP = "import sys, acl_lab\nacl = acl_lab.install()"
PROGRAM = """from acl_lab import Session
with Session() as s:
    acl = acl_lab.install()
    acl.init(); acl.rt.set_device(0)
    p, _ = acl.rt.malloc(1024, 0); acl.rt.free(p)
    acl.rt.reset_device(0); acl.finalize()
    trace = s.finish()
fig = acl_lab.timeline(trace)
fig"""
LOADED = ("import json\nprint(json.dumps({m: m in sys.modules for m in "
          "('plotly.io._renderers', 'nbformat', 'jsonschema')}))")


def run(*cells: str) -> list[list[dict[str, Any]]]:
    """Execute ``cells`` in a fresh kernel; each cell's outputs."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    NotebookClient(nb, timeout=240, kernel_name="python3").execute()
    return [c.get("outputs", []) for c in nb.cells]


def bundles(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The data of the display and result outputs."""
    return [o["data"] for o in outputs if o["output_type"] in ("display_data", "execute_result")]


def printed(outputs: list[dict[str, Any]]) -> Any:
    """The JSON a cell printed."""
    return json.loads("".join(o["text"] for o in outputs if o["output_type"] == "stream"))


def test_first_figure_is_the_acl_lab_bundle_without_the_renderer_registry() -> None:
    _, figure, loaded = run(SETUP, PROGRAM, LOADED)
    (bundle,) = bundles(figure)
    assert set(bundle) == {PLOTLY_MIME, "text/html"}
    assert bundle[PLOTLY_MIME]["data"], "the timeline's traces are in the JSON"
    assert "window.Plotly" in bundle["text/html"] and "Plotly.newPlot" in bundle["text/html"]
    assert printed(loaded) == {"plotly.io._renderers": False, "nbformat": False,
                               "jsonschema": False}


def test_once_the_registry_is_loaded_figures_still_get_the_acl_lab_bundle() -> None:
    outs = run(SETUP, PROGRAM, "import plotly.io as pio\npio.renderers['json']\nfig",
               "import json\nprint(json.dumps(pio.renderers.default))")
    (bundle,) = bundles(outs[2])
    assert set(bundle) == {PLOTLY_MIME, "text/html"}
    assert printed(outs[3]) == "acl_lab"


def test_another_default_renderer_is_respected_and_widgets_stay_widgets() -> None:
    outs = run(SETUP, PROGRAM, "import plotly.io as pio\npio.renderers.default = 'json'\nfig",
               "import plotly.graph_objects as go\ngo.FigureWidget(fig)")
    (bundle,) = bundles(outs[2])
    assert set(bundle) == {"application/json"}, "plotly's json renderer, as the user chose"
    (widget,) = bundles(outs[3])
    assert WIDGET_MIME in widget
