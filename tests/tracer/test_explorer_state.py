"""The explorer saved with its widget state holds plotly's widget JavaScript once, not once per
figure: the timeline carries the bundle and the memory map a small loader that reuses it
(``figure_widgets.py``). The explorer still drawing in JupyterLab is checked by
``tests/browser/test_explorer_lab.py``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from acl_lab.tracer.views.figure_widgets import BUNDLE, GLOBAL_NAME, esm_bytes
from acl_lab.tracer.views.widgets import explore
from tests.tracer import export_scenarios

pytestmark = pytest.mark.timeout(300)

#: A string plotly's widget bundle holds once (its exports).
MARK = "as FigureModel"


def test_explorer_figures_share_one_bundle() -> None:
    """Of the explorer's two FigureWidgets only one carries the bundle; the other's JavaScript
    is under 1 kB and waits for the global the first one sets."""
    ex = explore(export_scenarios.traced(export_scenarios.blocked_wait))
    big, small = esm_bytes(ex.timeline_fig), esm_bytes(ex.memory_fig)
    bundle = BUNDLE.stat().st_size
    assert bundle - 1000 < big < bundle + 1000
    assert small < 1000
    assert GLOBAL_NAME in ex.timeline_fig._esm and GLOBAL_NAME in ex.memory_fig._esm
    assert MARK in ex.timeline_fig._esm and MARK not in ex.memory_fig._esm


def test_saved_widget_state_holds_the_bundle_once(tmp_path: Path) -> None:
    """A notebook that shows an explorer, executed headless with its widget state stored
    (nbclient's default), has one copy of the widget bundle in the file."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent("""\
        import acl_lab
        from tests.tracer import export_scenarios
        trace = export_scenarios.traced(export_scenarios.blocked_wait)
        acl_lab.explore(trace)"""))]
    NotebookClient(nb, timeout=240, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(Path(__file__).resolve().parents[2])}}
                   ).execute()
    out = tmp_path / "explorer.ipynb"
    nbformat.write(nb, out)
    text = out.read_text(encoding="utf-8")
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    assert len(state) > 5  # the explorer's widgets were saved
    assert text.count(MARK) == 1
