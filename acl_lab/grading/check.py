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

import html
import json
import os
import sys
import time
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .report import Report, grade_runs
from .rubric import Exercise, all_exercises, get_exercise
from .runner import new_seed, run_exercise

#: ids of reports ``check`` displayed in the running cell: the cell's automatic display of
#: the returned report is skipped, so the feedback shows once. Cleared after every cell.
_shown_in_cell: set[int] = set()
_hook_installed = False


def check(ex_id: Exercise | str, fn: Any, *, seed: int | None = None,
          time_limit: float | None = None, schedule: int | None = None) -> Report:
    """Grade ``fn`` against exercise ``ex_id`` and show the result in the notebook.

    A part whose threads could interleave otherwise runs under each of its host schedules
    (``Exercise.schedules``), with the same arguments; an item passes only under all of
    them, and the feedback names the seed of a schedule that fails it.

    Args:
        ex_id: the exercise id (``"04.1"``) or the ``Exercise``.
        fn: the learner's function itself (not its result).
        seed: reproduce a run (the report shows the seed it used); default: a random one.
        time_limit: real seconds the function may run (default: the exercise's limit).
        schedule: run under this one host schedule only (replay a failing seed the
            feedback named); default: every schedule of the part.

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
    report = grade(ex, fn, seed=seed, time_limit=time_limit, schedule=schedule)
    _log_attempt(report)
    if _kernel() is not None:
        show(report)
    return report


def grade(ex: Exercise, fn: Any, *, seed: int | None = None, time_limit: float | None = None,
          schedule: int | None = None) -> Report:
    """Run ``fn`` under each of the part's host schedules (or ``schedule`` alone), with the
    same arguments, and judge the runs together (``report.grade_runs``)."""
    if seed is None:
        seed = new_seed()  # one seed: every schedule runs the same arguments
    schedules = range(ex.schedules) if schedule is None else (int(schedule),)
    runs = [run_exercise(ex, fn, seed=seed, time_limit=time_limit, schedule=s)
            for s in schedules]
    return grade_runs(ex, runs)


# ------------------------------------------------------------------------- the attempt log
@dataclass(frozen=True)
class Attempt:
    """One ``check`` of this session: when, which exercise, the score and what failed."""

    when: float
    exercise: str
    score: int
    total: int
    seed: int | None
    failed: tuple[str, ...]


#: Every check of this Python session, oldest first (``attempts()`` reads it).
_ATTEMPTS: list[Attempt] = []


def _log_attempt(report: Report) -> None:
    _ATTEMPTS.append(Attempt(time.time(), report.exercise.id, report.score, report.total,
                             report.seed, tuple(r.item.id for r in report.failed)))


def attempts(exercise: str | None = None) -> list[Attempt]:
    """The attempt log: every ``check`` of this session (of ``exercise`` only, if given), in
    order, so a learner can look back at how each try scored and what it still failed."""
    return [a for a in _ATTEMPTS if exercise is None or a.exercise == exercise]


# ------------------------------------------------------------------------------ check_all
@dataclass(frozen=True)
class CheckAll:
    """The reports of ``check_all``: one per exercise, and the notebook's total."""

    reports: tuple[Report, ...]
    missing: tuple[str, ...]

    @property
    def score(self) -> int:
        """Points scored over every exercise checked."""
        return sum(r.score for r in self.reports)

    @property
    def total(self) -> int:
        """Points available over every exercise checked."""
        return sum(r.total for r in self.reports)

    def text(self) -> str:
        """One line per exercise, then the total (and the exercises not found)."""
        lines = [f"{r.exercise.id} {r.exercise.title}: {r.score}/{r.total}"
                 + (f" (failed: {', '.join(i.item.id for i in r.failed)})" if r.failed else "")
                 for r in self.reports]
        lines.append(f"total: {self.score}/{self.total}")
        if self.missing:
            lines.append("not found in the notebook (define the function, then run "
                         f"check_all again): {', '.join(self.missing)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{html.escape(r.exercise.id)}</td><td>{html.escape(r.exercise.title)}"
            f"</td><td>{r.score}/{r.total}</td><td>"
            f"{html.escape(', '.join(i.item.id for i in r.failed)) or 'all passed'}</td></tr>"
            for r in self.reports)
        miss = (f"<p>Not found in the notebook: {html.escape(', '.join(self.missing))}</p>"
                if self.missing else "")
        return (f"<table><tr><th>exercise</th><th>title</th><th>score</th><th>failed items"
                f"</th></tr>{rows}<tr><td colspan=2><b>total</b></td><td><b>{self.score}/"
                f"{self.total}</b></td><td></td></tr></table>{miss}")


def check_all(ids: Iterable[str] | None = None, namespace: Mapping[str, Any] | None = None,
              *, seed: int | None = None) -> CheckAll:
    """Grade every exercise of the notebook at once, like otter-grader's ``check_all``.

    Args:
        ids: the exercise ids (``["04.1", "04.2"]``); default: the exercises of the
            notebook, found by the functions it defines (the exercise family, ``04.``,
            with the most entry functions present).
        namespace: where the learner's functions are (default: the notebook's namespace,
            or the caller's globals outside IPython).
        seed: one seed for every run (default: a random one each).

    Returns:
        A ``CheckAll`` (its HTML is a score table); each run is logged like ``check``'s.
    """
    ns: Mapping[str, Any] = namespace if namespace is not None else _user_namespace()
    if ids is None:
        families: dict[str, list[Exercise]] = {}
        for ex in all_exercises():
            families.setdefault(ex.id.split(".")[0], []).append(ex)
        present = {k: sum(callable(ns.get(e.entry)) for e in v) for k, v in families.items()}
        best = max(present, key=lambda k: (present[k], k), default=None)
        chosen = families.get(best, []) if best is not None and present[best] else []
    else:
        chosen = [get_exercise(i) for i in ids]
    reports, missing = [], []
    for ex in chosen:
        fn = ns.get(ex.entry)
        if not callable(fn):
            missing.append(ex.id)
            continue
        report = grade(ex, fn, seed=seed)
        _log_attempt(report)
        reports.append(report)
    return CheckAll(tuple(reports), tuple(missing))


def export(notebook: str | os.PathLike[str] | None = None,
           out: str | os.PathLike[str] | None = None) -> Path:
    """Package a notebook for submission, like otter-grader's export: a zip holding the
    notebook file (save it first) and ``attempts.json``, the attempt log of this session.

    Args:
        notebook: the ``.ipynb`` to submit; default: the running notebook, when the kernel
            knows its path (JupyterLab sets ``__session__``).
        out: the zip to write; default ``<notebook stem>_submission.zip`` beside it.

    Returns:
        The path of the zip (hand it in, or give the folder of zips to ``acl-lab grade``
        after unpacking).

    Raises:
        ValueError: no notebook given and the kernel does not know its path.
        FileNotFoundError: the notebook does not exist.
    """
    if notebook is None:
        session = _user_namespace().get("__session__")
        if not isinstance(session, str) or not session.endswith(".ipynb"):
            raise ValueError("export(): pass the notebook's path, e.g. "
                             "export('04_buffer_pitfalls.ipynb')")
        notebook = session
    nb = Path(notebook)
    if not nb.is_file():
        raise FileNotFoundError(f"export(): no notebook at {nb}")
    dest = Path(out) if out is not None else nb.with_name(f"{nb.stem}_submission.zip")
    log = [asdict(a) for a in _ATTEMPTS]
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.write(nb, nb.name)
        z.writestr("attempts.json", json.dumps(log, indent=1))
    return dest


def _user_namespace() -> Mapping[str, Any]:
    """The notebook's namespace (IPython's user_ns), else the caller's caller's globals."""
    if "IPython" in sys.modules:
        from IPython import get_ipython

        ip = get_ipython()
        if ip is not None:
            return ip.user_ns
    return sys._getframe(2).f_globals


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
