"""Judge a ``Run`` against its rubric: the ``Report``, and its HTML for notebooks and feedback.

``grade_run`` evaluates every item's predicate and never crashes on a rubric bug (a predicate
that raises fails its item with "rubric error: ..."). A ``Report`` keeps the ``Run``, so
``Report.figure(item_id)`` draws the item's view of that very run. ``Report.to_html`` is the
feedback shown by ``check()`` and written by ``acl-lab grade``; it follows a small DOM contract
(for browser tests and styling):

* the root element has class ``acl-lab-check`` and ``data-exercise="<exercise id>"``;
* every item is an element with class ``acl-lab-item``, ``data-item="<item id>"`` and
  ``data-status="pass"`` or ``"fail"``;
* the summary line has class ``acl-lab-score`` and reads ``"3/4 items passed (7/10 points)"``.

Reasons, hints, error text and every other string are HTML-escaped: reasons quote learner
values. Nothing here imports plotly until a figure is asked for.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..runtime.kinds import Pool
from .rubric import Exercise, Item, Run, get_exercise

#: Plotly config for embedded figures: no logo link, no network.
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

_PASS_COLOUR = "#1e8449"
_FAIL_COLOUR = "#c0392b"


@dataclass(frozen=True)
class ItemResult:
    """One rubric item judged.

    Attributes:
        item: the rubric item.
        passed: whether its predicate held.
        reason: the predicate's reason, verbatim (or "rubric error: ..." / the violation).
        points_awarded: ``item.points`` when passed, else 0.
        gate_view: the view of the finding that failed the whole part (the findings
            gate), shown instead of the item's own view; None otherwise.
        held: the item passed but none of its ``counts_with`` items did, so its points do
            not count yet (``reason`` then says so).
    """

    item: Item
    passed: bool
    reason: str
    points_awarded: int
    gate_view: str | None = None
    held: bool = False

    @property
    def view(self) -> str | None:
        """The view shown when the item failed: the gate's, else the item's."""
        return self.gate_view or self.item.view

    @property
    def status(self) -> str:
        """``"pass"`` or ``"fail"`` (the ``data-status`` of the item's element)."""
        return "pass" if self.passed else "fail"


@dataclass(frozen=True, repr=False)
class Report:
    """The graded outcome of one ``Run``.

    Attributes:
        exercise: the exercise (``exercise.id`` is the id).
        seed: the seed of the run.
        results: one ``ItemResult`` per rubric item, in rubric order.
        run: the ``Run`` that was judged (its trace draws the figures).
        gate: why every item of the part scores 0 (``gate``, or the integrity
            violations), or None when the items were judged one by one.
    """

    exercise: Exercise
    seed: int
    results: tuple[ItemResult, ...]
    run: Run
    gate: str | None = None
    runs: tuple[Run, ...] = ()

    @property
    def schedules(self) -> tuple[int, ...]:
        """The host schedule seeds the function ran under (``grade_runs``)."""
        return tuple(r.schedule for r in self.runs) or (self.run.schedule,)

    def schedule_note(self) -> str:
        """How the part was run when it ran under several schedules, and which run the
        figures show; "" for one run."""
        if len(self.runs) < 2:
            return ""
        seeds = self.schedules
        return (f"Graded under {len(seeds)} host schedules (seeds {seeds[0]}-{seeds[-1]}; "
                f"replay one with check(..., schedule=S) or acl-lab run --seed S); an item "
                f"passes only under all of them. The views show seed {self.run.schedule}.")

    # ------------------------------------------------------------------ summary
    @property
    def score(self) -> int:
        """Points awarded."""
        return sum(r.points_awarded for r in self.results)

    @property
    def total(self) -> int:
        """Points available."""
        return sum(r.item.points for r in self.results)

    @property
    def passed_all(self) -> bool:
        """Every item passed (and there was at least one)."""
        return bool(self.results) and all(r.passed for r in self.results)

    @property
    def passed_count(self) -> int:
        """How many items passed."""
        return sum(1 for r in self.results if r.passed)

    @property
    def failed(self) -> tuple[ItemResult, ...]:
        """The items that failed, in rubric order."""
        return tuple(r for r in self.results if not r.passed)

    def result(self, item_id: str) -> ItemResult:
        """The result of item ``item_id``.

        Raises:
            KeyError: naming the item ids when there is no such item.
        """
        for r in self.results:
            if r.item.id == item_id:
                return r
        raise KeyError(f"exercise {self.exercise.id} has no item {item_id!r}; items: "
                       f"{[r.item.id for r in self.results]}")

    @property
    def waived(self) -> list[str]:
        """What the exercise says about each waived finding kind in this run's trace
        (``Exercise.waives``: the kinds the findings gate lets through, and why)."""
        present = {f.kind for f in self.run.findings}
        claimed = {k for it in self.exercise.items for k in it.claims}
        return [f"{kind} findings do not count here: {why}" for kind, why in self.exercise.waives
                if kind in present and kind not in claimed]

    def summary(self) -> str:
        """``"3/4 items passed (7/10 points)"``."""
        return (f"{self.passed_count}/{len(self.results)} items passed "
                f"({self.score}/{self.total} points)")

    def outcome(self) -> str:
        """One line on how the function ended: stopped, raised, or returned."""
        run = self.run
        if run.timed_out:
            return f"Your function was stopped: {run.error}"
        if run.error is not None:
            return f"Your function raised {run.error}"
        return "Your function returned."

    def text(self) -> str:
        """The report as plain text (what ``print(report)`` shows)."""
        lines = [f"Exercise {self.exercise.id}: {self.exercise.title}", self.summary()]
        if self.run.violations:
            lines.append("Integrity violation: " + "; ".join(self.run.violations))
        elif self.gate:
            lines.append("Every item scores 0: " + self.gate)
        lines += [f"Note: {w}" for w in self.waived]
        if self.schedule_note():
            lines.append(self.schedule_note())
        lines.append(self.outcome())
        for r in self.results:
            mark = "PASS" if r.passed else "FAIL"
            lines.append(f"[{mark}] {r.item.description} ({r.points_awarded}/{r.item.points})")
            if r.reason:
                lines.extend("       " + ln for ln in r.reason.splitlines())
            if not r.passed and r.item.hint:
                lines.append(f"       Hint: {r.item.hint}")
        lines.append("All items passed." if self.passed_all
                     else f"{len(self.failed)} item(s) to fix.")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"<Report {self.exercise.id} seed={self.seed}: {self.summary()}>"

    def to_rows(self, learner: str) -> list[tuple[str, str, str, int]]:
        """CSV rows ``(learner, exercise id, item id, points awarded)``, one per item."""
        return [(learner, self.exercise.id, r.item.id, r.points_awarded) for r in self.results]

    # ------------------------------------------------------------------ figures
    def figure(self, item_id: str) -> Any:
        """The figure of item ``item_id``'s view for this run, or None.

        None when the item names no view or the run has nothing for it to draw (no calls for
        a timeline, no allocation for a memory map, no deadlock finding for a wait graph, no
        race finding for a race view, no device task for the overlap figure).

        Raises:
            KeyError: no such item.
        """
        view = self.result(item_id).view
        return None if view is None else view_figure(self.run, view)

    # ------------------------------------------------------------------ HTML
    def to_html(self, include_figures: bool = False, *, include_plotlyjs: bool = True) -> str:
        """The report as an HTML fragment (one root ``div``; see the module's DOM contract).

        Args:
            include_figures: embed the view of every failed item that names one.
            include_plotlyjs: with figures, put plotly.js inline in the first one (the page
                then opens offline). Pass False when the page already holds plotly.js, e.g.
                for the second report on one page.
        """
        return self._render(include_figures, include_plotlyjs)[0]

    def _render(self, include_figures: bool, plotlyjs: bool) -> tuple[str, bool]:
        """The HTML, and whether plotly.js went into it."""
        ex = self.exercise
        parts = [
            f'<div class="acl-lab-check" data-exercise="{_esc(ex.id)}" '
            f'data-seed="{self.seed}" style="font-family:sans-serif;line-height:1.4;'
            'border:1px solid #d5d8dc;border-radius:6px;padding:8px 12px;margin:4px 0">',
            f'<div class="acl-lab-title" style="font-weight:bold;font-size:1.1em">'
            f"Exercise {_esc(ex.id)}: {_esc(ex.title)}</div>",
            f'<div class="acl-lab-score" style="font-weight:bold">{_esc(self.summary())}</div>',
        ]
        if self.run.violations:
            parts.append(f'<div class="acl-lab-violation" style="color:{_FAIL_COLOUR}">'
                         f"Integrity violation: {_esc('; '.join(self.run.violations))}</div>")
        elif self.gate:
            parts.append(f'<div class="acl-lab-gate" style="color:{_FAIL_COLOUR};'
                         f'white-space:pre-wrap">Every item scores 0: {_esc(self.gate)}</div>')
        parts += [f'<div class="acl-lab-waived" style="color:#5d6d7e">Note: {_esc(w)}</div>'
                  for w in self.waived]
        if self.schedule_note():
            parts.append('<div class="acl-lab-schedules" style="color:#5d6d7e" '
                         f'data-schedules="{len(self.runs)}" '
                         f'data-shown="{self.run.schedule}">{_esc(self.schedule_note())}</div>')
        colour = _FAIL_COLOUR if self.run.error is not None else "#5d6d7e"
        parts.append(f'<div class="acl-lab-outcome" style="color:{colour};'
                     f'white-space:pre-wrap">{_esc(self.outcome())}</div>')
        parts.append('<ul class="acl-lab-items" style="list-style:none;padding-left:0">')
        js = plotlyjs
        for r in self.results:
            item_html, used_js = self._item_html(r, include_figures, js)
            js = js and not used_js
            parts.append(item_html)
        parts.append("</ul>")
        verdict = ("All items passed." if self.passed_all
                   else f"{len(self.failed)} item(s) to fix.")
        parts.append(f'<div class="acl-lab-verdict">{_esc(verdict)}</div>')
        parts.append(f'<div class="acl-lab-seed" style="color:#7f8c8d;font-size:0.85em">'
                     f"seed {self.seed}</div></div>")
        return "\n".join(parts), plotlyjs and not js

    def _item_html(self, r: ItemResult, include_figures: bool,
                   plotlyjs: bool) -> tuple[str, bool]:
        colour = _PASS_COLOUR if r.passed else _FAIL_COLOUR
        mark = "✓" if r.passed else "✗"
        out = [
            f'<li class="acl-lab-item" data-item="{_esc(r.item.id)}" '
            f'data-status="{r.status}" style="border-left:4px solid {colour};'
            'padding:2px 8px;margin:6px 0">',
            f'<span class="acl-lab-mark" style="color:{colour};font-weight:bold">{mark}</span> '
            f'<span class="acl-lab-description">{_esc(r.item.description)}</span> '
            f'<span class="acl-lab-points" style="color:#7f8c8d">'
            f"({r.points_awarded}/{r.item.points} points)</span>",
        ]
        if r.reason:
            out.append(f'<div class="acl-lab-reason" style="white-space:pre-wrap">'
                       f"{_esc(r.reason)}</div>")
        used_js = False
        if not r.passed:
            if r.item.hint:
                out.append(f'<div class="acl-lab-hint" style="color:#5d6d7e">'
                           f"<b>Hint:</b> {_esc(r.item.hint)}</div>")
            if include_figures and r.view is not None:
                fig_html, used_js = self._figure_html(r, plotlyjs)
                out.append(fig_html)
        out.append("</li>")
        return "\n".join(out), used_js

    def _figure_html(self, r: ItemResult, plotlyjs: bool) -> tuple[str, bool]:
        item = r.item
        view = r.view or ""
        try:
            fig = self.figure(item.id)
        except Exception as exc:  # a view bug must not hide the feedback
            return (f'<div class="acl-lab-figure-error">The {_esc(view)} view could not be '
                    f"drawn: {_esc(type(exc).__name__)}: {_esc(str(exc))}</div>", False)
        if fig is None:
            return "", False
        div_id = _dom_id(f"acl-lab-{self.exercise.id}-{item.id}-{self.seed}")
        height = fig.layout.height
        inner = fig.to_html(full_html=False, include_plotlyjs=plotlyjs, div_id=div_id,
                            config=PLOTLY_CONFIG,
                            default_height=f"{int(height)}px" if height else "480px")
        return (f'<div class="acl-lab-figure" data-view="{_esc(view)}">{inner}</div>',
                plotlyjs)

    def _repr_html_(self) -> str:
        return self.to_html(include_figures=False)

    def _ipython_display_(self) -> None:
        from .check import show

        show(self, auto=True)


def grade_run(ex: Exercise | str, run: Run) -> Report:
    """Evaluate every rubric item of ``ex`` on ``run``.

    A predicate that raises (or returns something other than ``(bool, str)``) fails its
    item with the reason ``"rubric error: ..."``. These fail every item of the part, with
    the cause as each item's reason (``gate``): integrity violations; for an exercise that
    ``needs_device``, an exception, a time-out, a ``None`` result or no ACL call at all; and
    a warning or error finding that no item claims and the exercise does not waive (the
    findings gate: the finding's own explanation, and its view).

    Raises:
        ValueError: ``run`` is a run of another exercise.
    """
    return _grade(ex, run, hold=True)


def _grade(ex: Exercise | str, run: Run, hold: bool) -> Report:
    """``grade_run``; ``hold=False`` leaves ``counts_with`` alone (``grade_runs`` holds the
    combined results once)."""
    exercise = get_exercise(ex) if isinstance(ex, str) else ex
    if run.exercise != exercise.id:
        raise ValueError(f"run of exercise {run.exercise!r} graded against {exercise.id!r}")
    if run.violations:
        why = "; ".join(run.violations)
        results = tuple(ItemResult(item, False, why, 0) for item in exercise.items)
        return Report(exercise, run.seed, results, run, gate=why)
    judged = tuple(_judge(item, run) for item in exercise.items)
    if hold:
        judged = _hold(judged)
    gated = gate(exercise, run)
    if gated is None:
        return Report(exercise, run.seed, judged, run)
    why, view = gated
    # Every item scores 0; an item that failed on its own keeps its specific reason and
    # view, one that would have passed gets the gate's.
    results = tuple(ItemResult(r.item, False, r.reason, 0) if not r.passed
                    else ItemResult(r.item, False, why, 0, view) for r in judged)
    return Report(exercise, run.seed, results, run, gate=why)


def grade_runs(ex: Exercise | str, runs: Sequence[Run]) -> Report:
    """Judge the runs of one part under its host schedules (``Exercise.schedules``; the
    same arguments, schedule seeds 0, 1, ...): an item passes only if it passes under every
    one, and a failure's reason names the seed of the first schedule that shows it. The
    report's ``run`` (what its views draw) is that schedule's run.

    Raises:
        ValueError: no runs, or a run of another exercise.
    """
    if not runs:
        raise ValueError("grade_runs needs at least one run")
    if len(runs) == 1:
        return grade_run(ex, runs[0])
    reports = [_grade(ex, r, hold=False) for r in runs]
    first = reports[0]
    n = len(reports)
    combined: list[ItemResult] = []
    shown: Report | None = None
    for i, item in enumerate(first.exercise.items):
        bad = [rep for rep in reports if not rep.results[i].passed]
        if not bad:
            r = first.results[i]
            combined.append(ItemResult(item, True, r.reason, item.points, r.gate_view))
            continue
        rep = bad[0]
        shown = shown or rep
        r = rep.results[i]
        where = (f" [under host schedule seed {rep.run.schedule}: it fails under "
                 f"{len(bad)} of the {n} schedules]" if len(bad) < n else "")
        combined.append(ItemResult(item, False, r.reason + where, 0, r.gate_view))
    gated = next((rep for rep in reports if rep.gate), None)
    gate_text = None
    if gated is not None:
        gate_text = gated.gate if all(rep.gate for rep in reports) else \
            f"{gated.gate} [under host schedule seed {gated.run.schedule}]"
    picked = shown or first
    return Report(first.exercise, first.seed, _hold(tuple(combined)), picked.run,
                  gate=gate_text, runs=tuple(runs))


#: The view that shows a finding of each kind (the timeline for the others).
FINDING_VIEWS = {"leak": "memory_map", "size_mismatch": "memory_map",
                 "uninitialized_read": "memory_map", "misaligned_host_buffer": "memory_map",
                 "race": "race_view", "deadlock": "wait_graph"}
#: Finding kinds the gate names before others (they cause the rest).
GATE_FIRST = ("deadlock", "race", "uninitialized_read", "size_mismatch", "context_not_set")
#: Severities the findings gate stops on.
GATED_SEVERITIES = ("error", "warning")


def gate(ex: Exercise, run: Run) -> tuple[str, str | None] | None:
    """Why every item of ``ex`` fails on ``run``, and the view to show; None when the items
    are judged one by one.

    In order: integrity violations; for an exercise that ``needs_device``, no result (a
    time-out, an exception, ``None``) and a trace without any ACL call; then the findings
    gate: the first warning or error finding whose kind no item claims and the exercise
    does not waive.
    """
    if run.violations:
        return "; ".join(run.violations), None
    if ex.needs_device:
        why = run.no_result()
        if why is not None:
            return f"{why}, so no item of this part can pass", "timeline"
        if run.result is None:
            return ("your function returned None: there is no result to judge, so no item "
                    "of this part can pass"), None
        calls = run.trace.calls
        names = {run.trace.string(int(n)) for n in np.unique(calls["name"])} \
            if calls.rows else set()
        if not any(n.startswith("acl.") for n in names):
            return ("no ACL call in the trace: the work this part asks for never ran on "
                    "the (emulated) device, so no item can pass"), None
    claimed = ex.claimed()
    # the cause first: a deadlock or race before the leaks it left behind
    for f in sorted(run.findings, key=lambda f: (f.severity != "error",
                                                 f.kind not in GATE_FIRST)):
        if f.severity in GATED_SEVERITIES and f.kind not in claimed:
            where = f" at {f.file}:{f.line}" if f.file else ""
            article = "an" if f.severity[:1] in "aeiou" else "a"
            return (f"the trace holds {article} {f.severity} finding this part does not "
                    "accept, so "
                    f"no item can pass until it is fixed: {f.kind}{where}: {f.message}",
                    FINDING_VIEWS.get(f.kind, "timeline"))
    return None


def _hold(results: tuple[ItemResult, ...]) -> tuple[ItemResult, ...]:
    """Passed items whose ``counts_with`` items all failed keep their status, score 0 and
    say why (the starter already did what they check; the points are for the lesson)."""
    passed = {r.item.id for r in results if r.passed}
    out = []
    for r in results:
        need = r.item.counts_with
        if r.passed and need and not passed.intersection(need):
            names = " or ".join(f"'{k}'" for k in need)
            its = "Its point counts" if r.item.points == 1 else \
                f"Its {r.item.points} points count"
            reason = (f"{r.reason.rstrip('.')}. {its} once {names} passes: the program you "
                      "started from already does this, the points are for the lesson")
            r = ItemResult(r.item, True, reason, 0, r.gate_view, held=True)
        out.append(r)
    return tuple(out)


def _judge(item: Item, run: Run) -> ItemResult:
    try:
        verdict = item.check(run)
        passed, reason = verdict
        if not isinstance(reason, str):
            raise TypeError(f"the reason is a {type(reason).__name__}, not a str")
    except Exception as exc:
        text = str(exc)
        name = type(exc).__name__
        return ItemResult(item, False, f"rubric error: {name}: {text}" if text
                          else f"rubric error: {name}", 0)
    ok = bool(passed)
    return ItemResult(item, ok, reason, item.points if ok else 0)


def view_figure(run: Run, view: str) -> Any:
    """Draw ``view`` (one of ``rubric.VIEWS``) for ``run``, or None when there is nothing to draw.

    The timeline marks the run's findings; the memory map shows the device of the first
    leaked allocation (else of the first allocation); the wait graph and race view draw the
    run's first deadlock / race finding.
    """
    from ..tracer import views

    trace = run.trace
    if view == "timeline":
        if trace.calls.rows == 0:
            return None
        return views.timeline(trace, findings=list(run.findings))
    if view == "memory_map":
        device = _memory_device(run)
        return None if device is None else views.memory_map(trace, device=device)
    if view == "overlap_figure":
        return views.overlap_figure(trace) if trace.tasks.rows else None
    if view in ("wait_graph", "race_view"):
        kind = "deadlock" if view == "wait_graph" else "race"
        found = run.of_kind(kind)
        if not found:
            return None
        draw = views.wait_graph if view == "wait_graph" else views.race_view
        return draw(found[0], trace)
    raise ValueError(f"unknown view {view!r}")


def _memory_device(run: Run) -> int | None:
    """The device whose memory map shows the problem: the first leak's, else the first used."""

    a = run.trace.allocs
    if a.rows == 0:
        return None
    on_device = [i for i in range(a.rows) if int(a["pool"][i]) != Pool.HOST]
    for f in run.of_kind("leak"):
        for i in f.ids.get("allocs", ()):
            if i in on_device:
                return int(a["device"][i])
    return int(a["device"][on_device[0]]) if on_device else None


def feedback_page(reports: Iterable[Report], *, title: str = "acl_lab feedback",
                  include_figures: bool = True) -> str:
    """A self-contained HTML page of several reports (plotly.js inline once, no network)."""
    body: list[str] = []
    js = True
    for rep in reports:
        fragment, used_js = rep._render(include_figures, js)
        js = js and not used_js
        body.append(fragment)
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{_esc(title)}</title>\n</head>\n<body>\n<h1>{_esc(title)}</h1>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def _esc(text: str) -> str:
    return html.escape(str(text), quote=True)


def _dom_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)
