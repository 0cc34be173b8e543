"""Shared pieces of the benchmarks: result rows, targets, timing helpers, the table printer.

Timing rules (machines are shared and noisy):

* time with ``time.perf_counter_ns``;
* each repeat times ``N`` calls (``N_CALLS`` normally, ``N_CALLS_QUICK`` with ``--quick``) and
  every figure is the median over ``REPEATS`` (>= 5) repeats;
* ratios are computed inside one repeat (the two sides run back to back) and the median of
  the per-repeat ratios is reported, so a slow phase of the machine hits both sides.
"""

from __future__ import annotations

import gc
import json
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

import acl_lab
from acl_lab.runtime.session import Session

#: Calls per repeat (normal run / ``--quick``).
N_CALLS = 20_000
N_CALLS_QUICK = 2_000
#: Repeats per measurement; the median is reported.
REPEATS = 5

#: Row statuses.
OK = "OK"
MISS = "MISS"
INFO = "info"

#: Table columns, in order.
COLUMNS = ("benchmark", "metric", "value", "unit", "target", "status")


@dataclass(frozen=True)
class Row:
    """One result: ``value`` in ``unit``; ``target`` is an upper bound (None: informational)."""

    benchmark: str
    metric: str
    value: float
    unit: str
    target: float | None = None

    @property
    def status(self) -> str:
        """``OK`` when the value is within the target, ``MISS`` when not, ``info`` without one."""
        if self.target is None:
            return INFO
        return OK if self.value <= self.target else MISS

    def as_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict (with its status)."""
        d = asdict(self)
        d["status"] = self.status
        return d


def n_calls(quick: bool) -> int:
    """Calls per timed repeat: 2,000 with ``--quick``, else 20,000."""
    return N_CALLS_QUICK if quick else N_CALLS


def median(values: Sequence[float]) -> float:
    """The median of ``values`` (which must not be empty)."""
    return float(statistics.median(values))


def check(ret: int, what: str) -> None:
    """Fail loudly when an ACL call that set up a benchmark did not return 0."""
    if ret != 0:
        raise RuntimeError(f"benchmark setup: {what} returned {ret}: {acl_lab.explain(ret)}")


@contextmanager
def acl_session(record: bool = True) -> Iterator[tuple[Session, ModuleType]]:
    """A fresh bound Session (after ``acl.init`` and ``set_device(0)``) and the ``acl`` module.

    Bound like ``tests/conftest.py`` does it: ``with Session(...): acl = acl_lab.install()``.
    ``record=False`` detaches the trace recorder.
    """
    with Session(record=record) as s:
        acl = acl_lab.install()
        try:
            check(acl.init(), "acl.init")
            check(acl.rt.set_device(0), "acl.rt.set_device(0)")
            yield s, acl
        finally:
            acl_lab.uninstall()


def check_clean(s: Session) -> None:
    """A benchmark program must be a correct one: no failed task, no read of never-written
    bytes, no warning or error diagnostic in its trace (so nothing extra is being measured)."""
    trace = s.trace()
    if trace.failures.rows:
        raise RuntimeError(f"benchmark program: {trace.failures.rows} task(s) failed")
    if trace.uninit.rows:
        raise RuntimeError(f"benchmark program: {trace.uninit.rows} read(s) of unwritten memory")
    levels = trace.diags["level"]
    if len(levels) and int(levels.max()) >= 1:
        kinds = sorted({trace.string(int(k)) for k in trace.diags["kind"]})
        raise RuntimeError(f"benchmark program: diagnostics recorded: {', '.join(kinds)}")


@contextmanager
def quiet_gc() -> Iterator[None]:
    """Collect garbage before a timed region so repeats start from the same heap state.

    The collector stays enabled while timing: its cost for the objects a call creates is part
    of what a program pays.
    """
    gc.collect()
    yield


def format_table(rows: Sequence[Row]) -> str:
    """Rows as a plain-text table with aligned columns (numbers right-aligned)."""
    cells = [list(COLUMNS)]
    for r in rows:
        cells.append([r.benchmark, r.metric, format_value(r.value), r.unit,
                      "" if r.target is None else f"<= {format_value(r.target)}", r.status])
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    right = {2, 4}
    lines = []
    for j, c in enumerate(cells):
        parts = [c[i].rjust(widths[i]) if i in right and j else c[i].ljust(widths[i])
                 for i in range(len(COLUMNS))]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_value(v: float) -> str:
    """A compact number: 3 significant decimals below 100, whole numbers above."""
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3f}"


def write_json(path: str, rows: Sequence[Row], meta: dict[str, Any]) -> None:
    """Write ``{"meta": ..., "rows": [...]}`` to ``path``."""
    doc = {"meta": meta, "rows": [r.as_dict() for r in rows]}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=2)
        fh.write("\n")
