"""FigureWidgets that share one copy of plotly's widget JavaScript.

A ``go.FigureWidget`` is an anywidget whose ``_esm`` trait is plotly's whole widget bundle
(about 5 MB, plotly.js inside). Every FigureWidget's model carries its own copy, so a notebook
saved with widget state holds one copy per figure (the explorer has two: 10 MB). Here the
first figure of a group (``PrimaryFigureWidget``) carries the bundle and, when the browser
loads it, also publishes the bundle's widget factory on ``globalThis``; the others
(``SharedFigureWidget``) carry a loader of a few hundred bytes that waits for that factory and
then behaves exactly like plotly's (anywidget accepts an async default export: its loader
awaits ``mod.default()``). Display the primary together with the shared ones, as the explorer
does.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go

#: Where the primary publishes the factory (one name per plotly version).
GLOBAL_NAME = "__aclLabPlotlyWidget_" + re.sub(r"\W", "_", plotly.__version__)
BUNDLE = Path(plotly.__file__).parent / "package_data" / "widgetbundle.js"
_DEFAULT = re.compile(r"([\w$]+) as default\b")


@cache
def primary_esm() -> str:
    """plotly's widget bundle, which also stores its default export on ``globalThis``."""
    text = BUNDLE.read_text(encoding="utf-8")
    at = text.rfind("export{")
    end = text.find("}", at)
    m = _DEFAULT.search(text, at, end) if at >= 0 and end > at else None
    if m is None:
        raise RuntimeError(f"{BUNDLE}: no default export found (plotly changed its bundle)")
    publish = f"globalThis[{GLOBAL_NAME!r}]={m.group(1)};"
    return text[:at] + publish + text[at:]


SHARED_ESM = f"""
const NAME = {GLOBAL_NAME!r};
function factory() {{
  return new Promise((resolve) => {{
    const poll = () => globalThis[NAME] ? resolve(globalThis[NAME]) : setTimeout(poll, 25);
    poll();
  }});
}}
export default async () => (await factory())();
"""


class PrimaryFigureWidget(go.FigureWidget):
    """A FigureWidget that carries plotly's widget bundle for the shared ones."""

    _esm = primary_esm()


class SharedFigureWidget(go.FigureWidget):
    """A FigureWidget that uses the bundle a ``PrimaryFigureWidget`` loaded."""

    _esm = SHARED_ESM


def esm_bytes(widget: Any) -> int:
    """Bytes of JavaScript a widget's saved state holds (its ``_esm``)."""
    return len(str(getattr(widget, "_esm", "")).encode())
