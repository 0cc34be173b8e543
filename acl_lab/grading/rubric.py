"""The rubric model: exercises, items, and the Run that items judge.

An exercise is a function the learner writes (its name is ``Exercise.entry``); its rubric is a
tuple of ``Item``. Each item's ``check`` is a pure predicate over a ``Run`` (the learner's
return value, the exception it raised, the frozen Trace and its findings) and returns
``(passed, reason)``. Items read behaviour from the trace, so a hard-coded answer cannot pass:
the arguments are drawn from ``Run.seed``, which the grader picks per run, and the expected
answer is recomputed from the seed by the predicate.

Hidden runs (otter-grader's hidden tests): an exercise may declare ``Hidden`` runs that only
``acl-lab grade`` makes, each with a fresh seed the grader draws and arguments of other sizes
or counts, judged by the run's own items, so a program fitted to the visible run fails them.
``check()`` in a notebook never runs or lists them; the feedback page and ``grades.csv`` show
them after grading. ``get_exercise("04.3~other_sizes")`` gives a hidden run as an exercise of
its own (``Exercise.hidden_exercises``), which the grading worker runs like any other.

Rubric modules live in ``acl_lab.grading.exercises`` (one module per exercise, ``ex04.py`` ...)
and call ``register`` at import; ``get_exercise`` imports them all on first use.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..tracer.checks import Finding
from ..tracer.trace import Trace

#: What an item's predicate returns: passed, and the reason shown to the learner (for a
#: failure: what the trace shows went wrong, specific to the mistake; for a pass: a short
#: confirmation such as "all 100 iterations freed their buffers").
Verdict = tuple[bool, str]

#: Views an item can point at when it fails (functions of ``acl_lab.tracer.views``).
VIEWS = ("timeline", "memory_map", "wait_graph", "race_view", "overlap_figure")


@dataclass(frozen=True)
class Run:
    """One graded run of a learner's function in a fresh Session.

    Attributes:
        exercise: the exercise id, e.g. ``"04.2"``.
        seed: the seed the arguments were drawn from (predicates recompute expectations).
        result: what the function returned (``None`` if it raised or timed out). Under
            ``acl-lab grade`` it crossed a process boundary: numpy arrays stay arrays, tuples
            and lists of them stay tuples and lists, other values become plain Python values.
        error: ``"TypeName: message"`` of the exception the function raised (a detected
            deadlock gives ``"DeadlockError: ..."``), or ``None`` when it returned.
        timed_out: the function did not finish within the exercise's time limit.
        trace: the frozen trace of the whole run (``Session.finish()``: leaks included).
        findings: ``trace.findings()``.
        violations: integrity problems the grader detected (the submission modified
            ``acl_lab``, read the solutions, ended the process...). Any violation fails
            every item; ``check()`` in a notebook leaves it empty.
        landed: the bytes every device-to-host copy delivered, as ``(task row, bytes)``
            in the order they landed (``provenance.LandedLog``); result items compare the
            returned values with them (``provenance.from_device``).
        schedule: the host schedule's seed of the run (``Exercise.schedules``).
    """

    exercise: str
    seed: int
    result: Any
    error: str | None
    timed_out: bool
    trace: Trace
    findings: tuple[Finding, ...]
    violations: tuple[str, ...] = ()
    landed: tuple[tuple[int, bytes], ...] = ()
    schedule: int = 0

    @property
    def hidden(self) -> bool:
        """This is one of ``acl-lab grade``'s hidden runs (``"04.3~other_sizes"``): its
        arguments were drawn by the hidden run's ``make_args``, so predicates that recompute
        them from ``seed`` draw the hidden sizes."""
        return HIDDEN_MARK in self.exercise

    def of_kind(self, *kinds: str) -> list[Finding]:
        """The findings of the given kinds (e.g. ``run.of_kind("leak")``)."""
        return [f for f in self.findings if f.kind in kinds]

    def no_result(self) -> str | None:
        """Why there is no result to judge (a time-out or the exception's first line, said
        to the learner), or None when the function returned."""
        if self.timed_out:
            return f"your function did not finish: {self.error}"
        if self.error is not None:
            return f"your function raised {self.error.splitlines()[0]}"
        return None

    def site(self, cid: int) -> str:
        """``file:line`` of call ``cid``, for reasons that point at the learner's code."""
        file, line = self.trace.call_site(cid)
        return f"{file}:{line}"

    def rets(self, name: str) -> list[int]:
        """Return codes of every call of the pyACL function ``name``, in call order."""
        rows = self.trace.calls_named(name)
        rets = self.trace.calls["ret"]
        return [int(rets[i]) for i in rows]


@dataclass(frozen=True)
class Item:
    """One rubric item.

    Attributes:
        id: short identifier, unique in its exercise (``"no_leak"``).
        description: what the item requires, shown to the learner.
        points: points awarded when it passes.
        check: the predicate ``Run -> (passed, reason)``.
        hint: a nudge that does not give the answer away, shown when it fails.
        view: the view that shows the problem when it fails (one of ``VIEWS``), or None.
        claims: the finding kinds this item judges (``"leak"``...). A warning or error
            finding that no item of the exercise claims (or waives) fails the whole part
            (``report.grade_run``'s findings gate).
        counts_with: ids of items of the same exercise at least one of which must pass for
            this item's points to count. For what the starter already does right (a correct
            result, no race): the item still fails a fix that breaks it, but its points
            reward keeping it while doing the lesson, not the starter's own code.
    """

    id: str
    description: str
    points: int
    check: Callable[[Run], Verdict]
    hint: str
    view: str | None = None
    claims: tuple[str, ...] = ()
    counts_with: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.view is not None and self.view not in VIEWS:
            raise ValueError(f"unknown view {self.view!r}; expected one of {VIEWS}")
        if self.points < 0:
            raise ValueError("points must not be negative")


#: Host schedules a part whose threads could interleave runs under (``Exercise.schedules``):
#: the plain one and three perturbed ones. ``python -m benchmarks --only schedules`` measures
#: what each threaded part costs per schedule (a few hundredths of a second).
THREADED_SCHEDULES = 4

#: Separates an exercise id from the id of one of its hidden runs (``"04.3~other_sizes"``).
HIDDEN_MARK = "~"


@dataclass(frozen=True)
class Hidden:
    """A run only ``acl-lab grade`` makes, with a fresh seed and other arguments.

    Attributes:
        id: short identifier, unique in its exercise (``"other_sizes"``).
        description: what differs from the visible run, shown after grading ("9 to 20
            images over 3 to 7 workers").
        make_args: ``seed -> args`` of the hidden run (sizes and counts the visible run
            never uses).
        items: the items that judge the hidden run (their ids unique in the exercise;
            each predicate recomputes its expectation from the hidden run's own seed).
    """

    id: str
    description: str
    make_args: Callable[[int], tuple[Any, ...]]
    items: tuple[Item, ...]

    @property
    def points(self) -> int:
        """The points of the hidden run's items."""
        return sum(i.points for i in self.items)


@dataclass(frozen=True)
class Exercise:
    """A graded exercise.

    Attributes:
        id: ``"04.1"`` style id (notebook number, part).
        title: one line.
        entry: the name of the learner's function in the notebook (``acl-lab grade`` finds it).
        items: the rubric.
        make_args: ``seed -> args`` for the learner's function (plain values: numpy arrays,
            ints, paths of zoo models...). Runs inside the fresh Session, before the function.
        profile: device profile of the fresh Session.
        time_limit: real seconds the function may run.
        device_count: devices of the fresh Session.
        waives: ``(finding kind, why)`` pairs: kinds the findings gate lets through because
            the exercise is about another lesson; ``why`` says so (shown when it applies).
        needs_device: the part must make ACL calls and return a value: no ACL call, a
            ``None`` result or an exception fails every item (``report.grade_run``).
            Only the grader's own test rubrics turn it off.
        hidden: the runs only ``acl-lab grade`` makes (see the module docstring).
        schedules: how many host schedules the function runs under (seeds 0 to
            ``schedules - 1``, the same arguments each time): a part whose threads could
            interleave otherwise. An item passes only if it passes under every schedule
            (``report.grade_runs``), so an answer right only in the order one schedule
            happened to choose fails, and the feedback names the seed that shows it.
            ``benchmarks/bench_schedules.py`` measures what each costs.
    """

    id: str
    title: str
    entry: str
    items: tuple[Item, ...]
    make_args: Callable[[int], tuple[Any, ...]] = field(default=lambda seed: ())
    profile: str = "Ascend310P3"
    time_limit: float = 30.0
    device_count: int = 1
    waives: tuple[tuple[str, str], ...] = ()
    needs_device: bool = True
    hidden: tuple[Hidden, ...] = ()
    schedules: int = 1

    def __post_init__(self) -> None:
        if self.schedules < 1:
            raise ValueError(f"exercise {self.id}: schedules must be at least 1")

    @property
    def points(self) -> int:
        """The total points of the visible rubric (what ``check()`` grades)."""
        return sum(i.points for i in self.items)

    @property
    def graded_points(self) -> int:
        """The points ``acl-lab grade`` gives: the visible rubric and every hidden run."""
        return self.points + sum(h.points for h in self.hidden)

    def hidden_exercises(self) -> list[Exercise]:
        """Each hidden run as an exercise of its own (id ``"<id>~<hidden id>"``): same
        function, profile, devices and time limit; the hidden run's arguments and items.
        The findings its items claim, and those the visible rubric claims or waives, pass
        its findings gate."""
        claimed = self.claimed()
        return [Exercise(
            id=f"{self.id}{HIDDEN_MARK}{h.id}", title=f"{self.title} (hidden: {h.description})",
            entry=self.entry, items=h.items, make_args=h.make_args, profile=self.profile,
            time_limit=self.time_limit, device_count=self.device_count,
            waives=self.waives + tuple(
                (k, "the visible rubric judges it") for k in sorted(
                    claimed - {c for it in h.items for c in it.claims}
                    - {w for w, _ in self.waives})),
            needs_device=self.needs_device, schedules=self.schedules) for h in self.hidden]

    def claimed(self) -> frozenset[str]:
        """Finding kinds some item claims or the exercise waives (the gate lets them pass)."""
        return frozenset(k for it in self.items for k in it.claims) | frozenset(
            k for k, _ in self.waives)


_EXERCISES: dict[str, Exercise] = {}
_loaded = False


def register(ex: Exercise) -> Exercise:
    """Add an exercise to the registry (rubric modules call this at import)."""
    ids = [i.id for i in ex.items]
    if len(set(ids)) != len(ids):
        raise ValueError(f"exercise {ex.id}: duplicate item ids {ids}")
    if HIDDEN_MARK in ex.id:
        raise ValueError(f"exercise id {ex.id!r} must not contain {HIDDEN_MARK!r}")
    every = ids + [i.id for h in ex.hidden for i in h.items]
    runs = [h.id for h in ex.hidden]
    if len(set(every)) != len(every) or len(set(runs)) != len(runs):
        raise ValueError(f"exercise {ex.id}: duplicate hidden run or item ids {runs} {every}")
    # an item counts with items of its own run (a hidden run's items are judged apart
    # from the visible rubric's, so a reference across runs would hold its points forever)
    for items in (ex.items, *(h.items for h in ex.hidden)):
        own = [i.id for i in items]
        for it in items:
            unknown = [k for k in it.counts_with if k not in own or k == it.id]
            if unknown:
                raise ValueError(f"exercise {ex.id}: item {it.id!r} counts with unknown "
                                 f"items {unknown} (items of its own run: {own})")
    _EXERCISES[ex.id] = ex
    return ex


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    from . import exercises

    for mod in pkgutil.iter_modules(exercises.__path__):
        importlib.import_module(f"{exercises.__name__}.{mod.name}")
    _loaded = True


def get_exercise(ex_id: str) -> Exercise:
    """The registered exercise ``ex_id`` (or one of its hidden runs, ``"04.3~other_sizes"``).

    Raises:
        KeyError: naming the known ids when ``ex_id`` is unknown.
    """
    _load_all()
    base, _, hidden = ex_id.partition(HIDDEN_MARK)
    try:
        ex = _EXERCISES[base]
    except KeyError:
        raise KeyError(f"unknown exercise {ex_id!r}; known: {sorted(_EXERCISES)}") from None
    if not hidden:
        return ex
    for variant in ex.hidden_exercises():
        if variant.id == ex_id:
            return variant
    raise KeyError(f"exercise {base} has no hidden run {hidden!r}; it has "
                   f"{[h.id for h in ex.hidden]}")


def all_exercises() -> list[Exercise]:
    """Every registered exercise, by id."""
    _load_all()
    return [_EXERCISES[k] for k in sorted(_EXERCISES)]
