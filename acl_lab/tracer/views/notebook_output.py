"""Figures that render outside JupyterLab: nbconvert HTML, nbviewer-style pages, VS Code.

Plotly's default notebook renderer stores only ``application/vnd.plotly.v1+json``, which
JupyterLab and VS Code draw with their own plotly.js but a static HTML page cannot draw
(nbconvert writes nothing for that mimetype). The ``acl_lab`` renderer stores both:

- ``application/vnd.plotly.v1+json`` (JupyterLab and VS Code use it: no plotly.js stored);
- ``text/html``: the figure's ``<div>`` and the script that draws it, *without* plotly.js.

plotly.js itself goes into the notebook once, in the output of the setup cell
(``acl_lab.install()`` calls ``setup_notebook()`` inside a kernel): a ``text/html`` output
with the library inline, so the page draws offline (no CDN) and every later figure's script
finds ``window.Plotly``. Re-running the setup cell replaces that one output, so the saved
notebook never holds two copies. Outside a kernel nothing happens.

In a kernel, figures are displayed by an IPython display hook for ``go.Figure``
(``setup_notebook``) that builds the same bundle without plotly's renderer registry: importing
``plotly.io._renderers`` imports nbformat, and with it jsonschema and its format checkers
(``rfc3987_syntax`` builds a parser at import), most of a second of the first figure in a fresh
kernel (``benchmarks/bench_first_figure.py``). Once that registry is loaded for another reason
(``pio.renderers``, ``fig.show()``), the next figure displayed registers the ``acl_lab``
renderer there and makes it the default unless the user chose another one (then figures get
plotly's own display of that renderer).
"""

from __future__ import annotations

import sys
from typing import Any

RENDERER = "acl_lab"
#: Marks the one output that carries plotly.js (tests count it).
PLOTLYJS_MARKER = "acl_lab-plotlyjs"


def _renderer_class() -> Any:
    from plotly.io._base_renderers import MimetypeRenderer

    class AclLabRenderer(MimetypeRenderer):
        """Plotly's JSON mimetype plus static HTML that needs the page's plotly.js."""

        def to_mimebundle(self, fig_dict: dict[str, Any]) -> dict[str, Any]:
            return mimebundle(fig_dict)

    return AclLabRenderer


def mimebundle(fig_dict: dict[str, Any]) -> dict[str, Any]:
    """The ``acl_lab`` outputs of a figure (its dict): plotly JSON and static HTML. Uses
    plotly's HTML and JSON writers only, not its renderer registry."""
    from plotly.io._html import to_html
    from plotly.io.json import to_json_plotly

    html = to_html(fig_dict, include_plotlyjs=False, full_html=False, validate=False)
    # a figure displayed before the setup output ran (or in a page without it)
    # shows a line of text instead of failing silently
    guard = ("<script>if (!window.Plotly) {document.currentScript.insertAdjacentText("
             "'beforebegin', 'plotly.js is not loaded: run the setup cell "
             "(acl_lab.install()) first');}</script>")
    return {
        "application/vnd.plotly.v1+json": _json(to_json_plotly(fig_dict)),
        "text/html": guard + html,
    }


def _json(text: str) -> Any:
    import json
    return json.loads(text)


def register() -> bool:
    """Register the ``acl_lab`` plotly renderer and make it the default. False when plotly
    is not installed (the core does not need it)."""
    try:
        import plotly.io as pio
    except ImportError:
        return False
    if RENDERER not in pio.renderers:
        pio.renderers[RENDERER] = _renderer_class()()
    pio.renderers.default = RENDERER
    return True


def _display_figure(fig: Any) -> None:
    """IPython display hook for ``go.Figure``: the ``acl_lab`` bundle, unless the user made
    another plotly renderer the default (then plotly's own display)."""
    from IPython.display import display
    registry = sys.modules.get("plotly.io._renderers")
    if registry is not None:  # loaded anyway: register there, keeping a renderer the user chose
        import plotly.io as pio
        if RENDERER not in pio.renderers:
            pio.renderers[RENDERER] = _renderer_class()()
            if pio.renderers.default == getattr(registry, "default_renderer", None):
                pio.renderers.default = RENDERER
        if pio.renderers.default != RENDERER:
            pio.show(fig)
            return
    display(mimebundle(fig.to_dict()), raw=True)


def _hook_display(shell: Any) -> bool:
    """Display ``go.Figure`` (not FigureWidget) through ``_display_figure`` in ``shell``."""
    try:
        formatter = shell.display_formatter.ipython_display_formatter
    except AttributeError:
        return False
    formatter.for_type_by_name("plotly.graph_objs._figure", "Figure", _display_figure)
    return True


def plotlyjs_bundle() -> dict[str, str]:
    """The output that carries plotly.js: inline ``<script>`` (offline) plus a short text."""
    from plotly.offline import get_plotlyjs
    script = get_plotlyjs().replace("</script", "<\\/script")
    html = (f'<div id="{PLOTLYJS_MARKER}" style="display:none"></div>'
            f'<script type="text/javascript">{script}</script>')
    return {"text/html": html,
            "text/plain": "plotly.js for viewers without it (nbconvert HTML, nbviewer)"}


def in_kernel() -> bool:
    """Whether this code runs inside a Jupyter kernel (not plain Python or IPython)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


_shown_in: list[Any] = []  # the cell (id, or None when the front end sends none) that got it


def _current_cell() -> Any:
    from IPython import get_ipython
    shell = get_ipython()
    header: dict[str, Any] = getattr(getattr(shell, "kernel", None), "get_parent",
                                     lambda: {})() or {}
    return (header.get("metadata") or {}).get("cellId")


def setup_notebook() -> bool:
    """In a kernel with plotly: register the renderer and display plotly.js in the output of
    the calling cell — once per kernel, again only when that same cell runs again (its new
    output replaces the old one). Returns whether it displayed it."""
    if not in_kernel():
        return False
    try:
        import plotly  # noqa: F401  (the renderer registry is left alone: see the docstring)
    except ImportError:
        return False
    from IPython import get_ipython
    if not _hook_display(get_ipython()):
        register()
    cell = _current_cell()
    if _shown_in and not (cell is not None and _shown_in[0] == cell):
        return False
    from IPython.display import display
    display(plotlyjs_bundle(), raw=True)
    _shown_in[:] = [cell]
    return True
