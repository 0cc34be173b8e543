"""``check("04.1", fn)``: grade a learner's function in the notebook and show the feedback.

``check`` runs the function once in a fresh Session (``runner.run_exercise``), judges the run
(``report.grade_run``) and, when an IPython kernel is running, displays a widget: the report's
HTML (every item with its status, the rubric's reason verbatim, the hint for failures) and,
for each failed item that names a view, that view of the run (the leak on the memory map, the
race on the timeline). In plain Python it only returns the ``Report`` (``print`` it).

Importing this module imports neither IPython, ipywidgets nor plotly; ``show`` imports them
when it displays something.
"""

from __future__ import annotations

import sys
from typing import Any

from .report import Report, grade_run
from .rubric import Exercise, get_exercise
from .runner import run_exercise

#: ids of reports ``check`` displayed in the running cell: the cell's automatic display of
#: the returned report is skipped, so the feedback shows once. Cleared after every cell.
_shown_in_cell: set[int] = set()
_hook_installed = False


def check(ex_id: Exercise | str, fn: Any, *, seed: int | None = None,
          time_limit: float | None = None) -> Report:
    """Grade ``fn`` against exercise ``ex_id`` and show the result in the notebook.

    Args:
        ex_id: the exercise id (``"04.1"``) or the ``Exercise``.
        fn: the learner's function itself (not its result).
        seed: reproduce a run (the report shows the seed it used); default: a random one.
        time_limit: real seconds the function may run (default: the exercise's limit).

    Returns:
        The ``Report``.

    Raises:
        TypeError: ``fn`` is not callable (e.g. the function was called and its result
            passed).
        KeyError: no exercise has that id.
    """
    ex = get_exercise(ex_id) if isinstance(ex_id, str) else ex_id
    if not callable(fn):
        raise TypeError(f"check({ex.id!r}, ...) needs your function itself, e.g. "
                        f"check({ex.id!r}, {ex.entry}), not {type(fn).__name__} "
                        "(did you call it?)")
    run = run_exercise(ex, fn, seed=seed, time_limit=time_limit)
    report = grade_run(ex, run)
    if _kernel() is not None:
        show(report)
    return report


def _kernel() -> Any:
    """The running IPython kernel shell, or None (plain Python, terminal IPython)."""
    if "IPython" not in sys.modules:
        return None
    from IPython import get_ipython

    ip = get_ipython()
    return ip if ip is not None and getattr(ip, "kernel", None) is not None else None


def show(report: Report, *, auto: bool = False) -> None:
    """Display ``report`` in the notebook: the widget, or HTML and figures without ipywidgets.

    Args:
        report: the report.
        auto: this is IPython displaying a returned report (``Report._ipython_display_``);
            skipped when ``check`` already showed that report in the running cell.
    """
    if auto and id(report) in _shown_in_cell:
        return
    if auto and _kernel() is None:  # terminal IPython: no widgets, no HTML
        print(report.text())
        return
    from IPython.display import HTML, display

    from .widgets import report_widget

    try:
        box: Any = report_widget(report)
    except ImportError:
        box = None
    if box is not None:
        # The widget, with the report as HTML and text for frontends without widget state
        # (a static export, a reopened notebook): each frontend shows the richest it can.
        bundle = dict(box._repr_mimebundle_() or {})
        bundle["text/html"] = report.to_html(include_figures=False)
        bundle["text/plain"] = report.text()
        display(bundle, raw=True)
    else:
        display(HTML(report.to_html(include_figures=False)))
        for r in report.failed:
            if r.view is not None:
                fig = _safe_figure(report, r.item.id)
                if fig is not None:
                    display(fig)
    if not auto:
        _remember(report)


def _remember(report: Report) -> None:
    global _hook_installed
    ip = _kernel()
    if ip is None:
        return
    _shown_in_cell.add(id(report))
    if not _hook_installed:
        ip.events.register("post_run_cell", _clear_shown)
        _hook_installed = True


def _clear_shown(*_: Any) -> None:
    _shown_in_cell.clear()


def _safe_figure(report: Report, item_id: str) -> Any:
    try:
        return report.figure(item_id)
    except Exception:
        return None
