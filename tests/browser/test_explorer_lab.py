"""The explorer widget in a real JupyterLab, driven by headless Chromium (Python Playwright).

JupyterLab runs on 127.0.0.1 with a token and its own runtime, config, data, settings and
workspaces folders, and a ``python3`` kernel spec that starts this interpreter (the venv), so
the kernel imports the acl_lab under test. A notebook in the temporary root runs a program
with a leak and a race and displays ``acl_lab.explore(trace)``; ``_drive_lab.py`` (a
subprocess) runs it through Run > Run All Cells and selects the race in the findings list.
Checked: the explorer renders both FigureWidgets with traces, no cell raised, the page logged
no JavaScript error, and selecting the race zooms the timeline (its x range changes and
narrows) and shows the racing call's file:line and source line in the source pane. Then
JupyterLab is switched to its Dark theme (no re-run) and the computed colours, read before
and after, show the panes and the figure following it: the source pane's text and code
background and the stream table's borders are the theme's own (they change, and the text
reads on its background in both themes), and the timeline's paper and plot area stay
transparent over the page (white, then dark) with tick labels readable on both.
Screenshots go to ``test-artifacts/``. The server is always killed at the end.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser import _buggy_program
from tests.browser._browser import Driver
from tests.browser._lab_server import jupyter_lab
from tests.tracer.test_theme import contrast, over, rgba

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

#: Seconds the whole browser session may take (it usually takes about 15).
DRIVER_TIMEOUT = 150.0
NOTEBOOK = "explorer.ipynb"
PROGRAM = Path(_buggy_program.__file__).name


def _code_cell(n: int, source: str) -> dict[str, object]:
    """Code cell ``n`` (nbformat 4.5), without outputs."""
    return {"cell_type": "code", "id": f"cell-{n}", "execution_count": None, "metadata": {},
            "outputs": [], "source": source}


def write_notebook(root: Path) -> Path:
    """The explorer notebook (and the program it imports) in the server's root folder."""
    shutil.copy(_buggy_program.__file__, root / PROGRAM)
    build = (
        "import sys\n"
        f"assert sys.prefix == {sys.prefix!r}, ('not the venv kernel', sys.executable)\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import acl_lab\n"
        f"import {Path(PROGRAM).stem} as program\n"
        "trace = program.run_traced()\n"
        "kinds = sorted(f.kind for f in trace.findings())\n"
        "assert {'leak', 'race'} <= set(kinds), kinds\n"
        "print(kinds)"
    )
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"},
                       "language_info": {"name": "python"}},
          "cells": [_code_cell(0, build), _code_cell(1, "acl_lab.explore(trace)")]}
    path = root / NOTEBOOK
    path.write_text(json.dumps(nb, indent=1))
    return path


def test_explorer_follows_the_race_in_jupyterlab(tmp_path: Path, run_driver: Driver,
                                                 artifacts: Path) -> None:
    """Run All renders the explorer (both FigureWidgets with traces); selecting the race in
    its findings list zooms the timeline and shows the racing call's file:line."""
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root)
    line = _buggy_program.line_of("race")
    site = f"{root / PROGRAM}:{line}"
    source_line = (root / PROGRAM).read_text().splitlines()[line - 1].strip()
    for old in artifacts.glob("explorer-lab-*.png"):
        old.unlink()

    with jupyter_lab(tmp_path, root) as (base, token):
        seen = run_driver("_drive_lab", "--base", base, "--token", token,
                          "--notebook", NOTEBOOK, "--site", site,
                          "--screenshots", str(artifacts), timeout=DRIVER_TIMEOUT)

    assert seen["step"] == "done", seen.get("error")
    assert seen["page_errors"] == [], "JavaScript errors in JupyterLab"
    rendered, selected = seen["rendered"], seen["selected"]
    assert rendered["explorer_count"] == 1
    assert len(rendered["plots"]) == 2, rendered["plots"]
    for plot in rendered["plots"]:
        assert plot["traces"] > 0 and plot["full_traces"] > 0, plot
        assert plot["width"] > 100 and plot["height"] > 100, plot
    options = rendered["options"]
    assert len(options) == 2 and any("leak" in o for o in options), options
    assert rendered["selected"] == -1  # nothing selected before the click
    table = rendered["stream_table"]
    assert table is not None and table["rows"] >= 1, "no stream table in the explorer"
    assert table["pane_left"] - 1 <= table["table_left"] < table["table_right"] <= (
        table["pane_right"] + 1), f"the stream table overflows its pane: {table}"
    assert table["pane_right"] <= table["explorer_right"] + 1, table

    (race,) = [i for i, o in enumerate(options) if re.search(r"\brace\b", o)]
    assert selected["selected"] == race
    assert f"{PROGRAM}:{line}" in options[race]
    (lo0, hi0), (lo, hi) = rendered["x_range"], selected["x_range"]
    assert (lo, hi) != (lo0, hi0)
    assert hi - lo < hi0 - lo0, "selecting the race did not zoom the timeline in"
    assert site in selected["sites"], selected["sites"]
    assert site in selected["source_pane"] and source_line in selected["source_pane"]
    for shot in seen["screenshots"]:
        assert Path(shot).stat().st_size > 5_000
    check_theme_switch(seen["colours_light"], seen["colours_dark"])


def _hex(rgb: tuple[float, float, float]) -> str:
    """``#rrggbb`` of an opaque rgb triple."""
    return "#" + "".join(f"{round(v):02x}" for v in rgb)


def _reads(fg: str, bg: str, behind: str = "#ffffff") -> float:
    """Contrast of computed colour ``fg`` over ``bg``, itself over ``behind``."""
    base = over(bg, behind)
    return contrast(over(fg, _hex(base)), base)


def check_theme_switch(light: dict[str, Any], dark: dict[str, Any]) -> None:
    """The colours read before and after the switch to JupyterLab Dark (see the module
    docstring)."""
    assert light["theme_light"] == "true" and dark["theme"] == "JupyterLab Dark", dark
    assert dark["theme_light"] == "false"
    for name, c in (("light", light), ("dark", dark)):
        src, table, fig = c["source"], c["table"], c["figure"]
        assert src is not None and table is not None, (name, c)
        behind = _hex(over(src["behind"], "#ffffff"))
        assert _reads(src["color"], src["background"], behind) >= 4.5, (name, src)
        assert _reads(table["color"], table["behind"]) >= 4.5, (name, table)
        for part in ("paper", "plot_area"):
            assert fig[part] is not None and rgba(fig[part])[3] == 0, (name, part, fig)
        assert fig["tick"] is not None and _reads(fig["tick"], fig["page"]) >= 3.0, (name, fig)
    # the page behind the figure went dark, and the panes changed with the theme
    lum = [sum(over(c["figure"]["page"], "#ffffff")) / 3 for c in (light, dark)]
    assert lum[0] > 200 and lum[1] < 60, lum
    assert light["source"]["color"] != dark["source"]["color"]
    assert light["source"]["background"] != dark["source"]["background"]
    assert light["table"]["border"] != dark["table"]["border"]
    assert light["table"]["color"] != dark["table"]["color"]
