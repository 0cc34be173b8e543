"""The ``check()`` widget: a report's HTML and the views of its failed items.

The only grading module that imports ipywidgets and plotly (inside its functions), so
``import acl_lab.grading`` stays light.
"""

from __future__ import annotations

from typing import Any

from .report import Report


def report_widget(report: Report) -> Any:
    """An ``ipywidgets.VBox``: the report's HTML, then the views of the failed items.

    Each view sits in an ``ipywidgets.Output`` holding the figure as plotly's mimetype
    output (JupyterLab renders it; nothing is fetched from the network), under a caption
    naming the items it shows (each distinct view once). A view that cannot be drawn gets a
    one-line note instead.

    Raises:
        ImportError: ipywidgets is not installed.
    """
    import ipywidgets as widgets

    children: list[Any] = [widgets.HTML(value=report.to_html(include_figures=False))]
    # One figure per distinct view: three failed items that all point at the timeline get one
    # timeline, captioned with all three.
    by_view: dict[str, list[Any]] = {}
    for r in report.failed:
        if r.view is not None:
            by_view.setdefault(r.view, []).append(r)
    for view, results in by_view.items():
        try:
            fig = report.figure(results[0].item.id)
        except Exception as exc:  # a view bug must not hide the feedback
            children.append(widgets.HTML(value=_caption(
                f"The {view} view could not be drawn: {type(exc).__name__}: {exc}")))
            continue
        if fig is None:
            continue
        items = "; ".join(r.item.description for r in results)
        children.append(widgets.HTML(value=_caption(
            f"{view.replace('_', ' ')} of this run, for: {items}")))
        out = widgets.Output(layout={"border": "1px solid #d5d8dc"})
        out.outputs = ({"output_type": "display_data", "data": _figure_bundle(fig),
                        "metadata": {}},)
        children.append(out)
    box = widgets.VBox(children)
    box.add_class("acl-lab-check-widget")
    return box


def _figure_bundle(fig: Any) -> dict[str, Any]:
    """Plotly's own mimetype bundle for ``fig`` (JSON-safe), plus a text fallback."""
    import plotly.io as pio

    bundle: dict[str, Any] = dict(pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict()))
    title = fig.layout.title.text or "figure"
    bundle["text/plain"] = f"<plotly figure: {title}>"
    return bundle


def _caption(text: str) -> str:
    import html

    return f'<div class="acl-lab-caption" style="color:#5d6d7e">{html.escape(text)}</div>'
