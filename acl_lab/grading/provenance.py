"""Results from the device: the returned values must be bytes a device-to-host copy delivered,
and that copy's source must have been written by the ACL work the exercise asks for.

``LandedLog`` is a hook subscriber (``Session.hooks``) that keeps the bytes of every copy whose
destination is host memory, at the virtual time they land (``on_landed``). ``from_device``
judges a returned value against them, following the data through the trace: the copy's task
row reads a range of a device allocation (``trace.accesses``); the task that last wrote that
range before the copy started is the data's origin, and a device-to-device copy is followed to
what it read. A value whose bytes no such copy delivered (computed with numpy, taken from the
rubric's reference functions) or whose bytes came from a buffer the host filled (a
host-to-device copy, a memset) gets no points.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..runtime.kinds import TaskKind
from ..tracer.index import TraceIndex
from ..tracer.schema import TASK_KINDS
from ..tracer.trace import Trace
from .rubric import Run, Verdict

#: Task kinds that count as device work (an operator's kernel, a model execution).
DEVICE_WORK = ("kernel", "model")
#: The most bytes of copies back one run keeps (a run copying back more is not judged), and
#: separately the most bytes of uploads it keeps.
MAX_LANDED_BYTES = 64 << 20
#: A value shorter than this, or with fewer distinct byte values, says nothing about where
#: it came from (a zero, a flag): it is not compared with the uploads.
MIN_EVIDENCE_BYTES, MIN_EVIDENCE_SYMBOLS = 16, 4
#: How many device-to-device copies ``origins`` follows back.
MAX_HOPS = 8

_D2H, _D2D, _H2D = TaskKind.D2H, TaskKind.D2D, TaskKind.H2D
#: Where a trace's TraceIndex keeps its WriterIndex.
_MEMO_KEY = "provenance.writers"


class LandedLog:
    """Hook subscriber keeping ``(task id, bytes)`` of every device-to-host copy that landed,
    and of every host-to-device one (an upload: what the host knew before the device ran).

    ``session.hooks.subscribe(LandedLog())`` before the learner's code runs; ``landed`` lists
    the copies in landing order (the task's kind tells which is which). Past
    ``MAX_LANDED_BYTES`` of each direction it keeps no more of that direction.
    """

    def __init__(self, limit: int = MAX_LANDED_BYTES) -> None:
        self.landed: list[tuple[int, bytes]] = []
        self.limit = limit
        self.sizes: dict[int, int] = {int(_D2H): 0, int(_H2D): 0}

    def on_landed(self, t: Any, region: Any, offset: int, data: bytes) -> None:
        """Keep ``data`` when ``t`` is a device-to-host or host-to-device copy."""
        kind = int(t.kind)
        if kind not in self.sizes or self.sizes[kind] + len(data) > self.limit:
            return
        self.sizes[kind] += len(data)
        self.landed.append((int(t.id), bytes(data)))


class WriterIndex:
    """The trace's accesses indexed once: each task's reads, and each allocation's writes in
    (end time, task) order, so finding the last writer of a range before a time is a binary
    search and a short walk back instead of a scan of every access (grading a run that
    copies back N times was N scans of the whole trace: quadratic)."""

    def __init__(self, trace: Trace) -> None:
        acc, tasks = trace.accesses, trace.tasks
        self.task = np.asarray(acc["task"], dtype=np.int64)
        self.alloc = np.asarray(acc["alloc"], dtype=np.int64)
        self.off = np.asarray(acc["offset"], dtype=np.int64)
        self.end_off = self.off + np.asarray(acc["length"], dtype=np.int64)
        write = np.asarray(acc["write"]) != 0
        self.task_end = np.asarray(tasks["end_ns"], dtype=np.int64)
        self.task_start = np.asarray(tasks["start_ns"], dtype=np.int64)
        reads = np.nonzero(~write)[0]
        self.reads = reads[np.argsort(self.task[reads], kind="stable")]
        self.read_task = self.task[self.reads]
        writes = np.nonzero(write)[0]
        ends = self.task_end[self.task[writes]] if writes.size else np.zeros(0, np.int64)
        order = np.lexsort((self.task[writes], ends, self.alloc[writes]))
        self.writes = writes[order]
        self.write_alloc = self.alloc[self.writes]
        self.write_end = ends[order]

    @classmethod
    def of(cls, trace: Trace) -> WriterIndex:
        """The index of ``trace``, built on first use and kept with the trace's other derived
        views (``TraceIndex.memo``): every item of every run asks about the same trace."""
        memo = TraceIndex.of(trace).memo
        index = memo.get(_MEMO_KEY)
        if index is None:
            index = memo[_MEMO_KEY] = cls(trace)
        return index

    def reads_of(self, task: int) -> np.ndarray:
        """The access rows task ``task`` read."""
        lo = int(np.searchsorted(self.read_task, task, "left"))
        hi = int(np.searchsorted(self.read_task, task, "right"))
        return self.reads[lo:hi]

    def last_writer(self, alloc: int, lo: int, hi: int, before: int, other_than: int) -> int:
        """The task that last wrote a byte of ``[lo, hi)`` of ``alloc`` and ended at or
        before ``before`` (the latest end, then the highest task id), -1 if none."""
        a0 = int(np.searchsorted(self.write_alloc, alloc, "left"))
        a1 = int(np.searchsorted(self.write_alloc, alloc, "right"))
        i = a0 + int(np.searchsorted(self.write_end[a0:a1], before, "right")) - 1
        while i >= a0 and self.write_end[i] >= 0:
            row = int(self.writes[i])
            task = int(self.task[row])
            if task != other_than and self.off[row] < hi and self.end_off[row] > lo:
                return task
            i -= 1
        return -1


def origins(trace: Trace, task: int, hops: int = MAX_HOPS) -> list[tuple[str, int]]:
    """Where the bytes task ``task`` read come from: ``(task kind, task row)`` of the last
    writer of each range it read (device-to-device copies followed back). A range nothing
    wrote gives ``("unwritten", -1)``."""
    tasks = trace.tasks
    if not 0 <= task < tasks.rows:
        return []
    idx = WriterIndex.of(trace)
    start = int(idx.task_start[task])
    out: list[tuple[str, int]] = []
    for j in idx.reads_of(task).tolist():
        best = idx.last_writer(int(idx.alloc[j]), int(idx.off[j]), int(idx.end_off[j]),
                               start, task)
        if best < 0:
            out.append(("unwritten", -1))
            continue
        kind = int(tasks["kind"][best])
        if kind == _D2D and hops > 0:
            out += origins(trace, best, hops - 1)
        else:
            out.append((TASK_KINDS[kind], best))
    return out


def _leaves(value: Any, path: str = "the result") -> Iterable[tuple[str, np.ndarray]]:
    """The numeric arrays inside a returned value (``None`` entries skipped)."""
    if value is None:
        return
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        yield path, value
        return
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        yield path, np.asarray(value)
        return
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                         for v in value):
            yield path, np.asarray(value, dtype=np.float64)
            return
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}[{k!r}]")


def from_device(run: Run, value: Any = None, *,
                work: Sequence[str] = DEVICE_WORK) -> Verdict:
    """Whether every number in ``value`` (default ``run.result``) came back from the device.

    Each array's bytes (in its dtype, or the 32-bit dtype it was widened from) must lie
    inside the bytes one device-to-host copy of the run delivered (row by row for a batch
    gathered from several copies), and the last writer of that copy's source must be a task
    of one of the kinds ``work`` (``"model"``, ``"kernel"``), through device-to-device
    copies.

    Returns:
        ``(True, reason)`` or ``(False, the reason in plain words)``.
    """
    value = run.result if value is None else value
    leaves = list(_leaves(value))
    if not leaves:
        return False, "the result holds no numbers to check"
    trace = run.trace
    if not run.landed:
        if not len(trace.calls_named("acl.rt.memcpy")) and \
                not len(trace.calls_named("acl.rt.memcpy_async")):
            return False, ("your values were not copied back from the device: the trace has "
                           "no acl.rt.memcpy at all, so they were computed on the host")
        return False, ("no device-to-host copy delivered any bytes, so the values you "
                       "returned were computed on the host, not read back from the device")
    kinds = trace.tasks["kind"]
    good: list[bytes] = []
    #: when the device work behind each good copy began (its earliest origin's start)
    began: list[int] = []
    host_fed: list[tuple[bytes, str]] = []
    #: uploads: bytes the host sent, with the time each upload ended
    uploads = [(data, int(trace.tasks["end_ns"][row])) for row, data in run.landed
               if 0 <= row < trace.tasks.rows and int(kinds[row]) == _H2D]
    for row, data in run.landed:
        if not 0 <= row < trace.tasks.rows or int(kinds[row]) != _D2H:
            continue
        found = origins(trace, row)
        if found and all(k in work for k, _ in found):
            good.append(data)
            began.append(min(int(trace.tasks["start_ns"][t]) for _, t in found))
        else:
            other = next((k, t) for k, t in found if k not in work) if found else ("?", -1)
            host_fed.append((data, _describe_origin(trace, *other)))
    wanted = " or ".join("a model execution" if w == "model" else "an operator"
                         for w in work)
    for path, arr in leaves:
        by = [t0 for data, t0 in zip(good, began, strict=True) if _delivered(arr, [data])]
        if by and _uploaded_before(arr, uploads, min(by)):
            return False, (f"{path} is bytes your code uploaded before {wanted} ran: "
                           "passing the host's answer through the device (an identity "
                           "operator, a copy) does not compute it")
        if by or _delivered(arr, good):  # one copy, or rows gathered from several
            continue
        fed = next((why for d, why in host_fed if _delivered(arr, [d])), None)
        if fed is not None:
            return False, (f"{path} was copied back from a device buffer that {fed}, not "
                           f"by {wanted}: the device did not compute it")
        return False, (f"{path} is not what any device-to-host copy delivered: values "
                       "computed on the host (numpy, or the rubric's own reference) earn no "
                       f"points; return the bytes {wanted} wrote and you copied back")
    return True, f"every returned value was copied back from the output of {wanted}"


def _uploaded_before(arr: np.ndarray, uploads: Sequence[tuple[bytes, int]], t0: int) -> bool:
    """Whether ``arr`` (long and varied enough to tell) was in an upload that ended before
    ``t0``, the start of the device work that delivered it."""
    raw = np.ascontiguousarray(arr).tobytes()
    if len(raw) < MIN_EVIDENCE_BYTES or len(set(raw)) < MIN_EVIDENCE_SYMBOLS:
        return False
    return any(end <= t0 and _delivered(arr, [data]) for data, end in uploads)


def _encodings(arr: np.ndarray) -> list[np.ndarray]:
    """``arr`` as it may have been on the device: its own dtype, and the 32-bit one of the
    same kind when converting to it loses nothing (float64 made from float32 output)."""
    out = [arr]
    narrow = {"f": np.float32, "i": np.int32, "u": np.uint32}.get(arr.dtype.kind)
    if narrow is not None and arr.dtype.itemsize > 4:
        with np.errstate(all="ignore"):
            small = arr.astype(narrow)
        if np.array_equal(small.astype(arr.dtype), arr, equal_nan=arr.dtype.kind == "f"):
            out.append(small)
    return out


def _delivered(arr: np.ndarray, payloads: Sequence[bytes]) -> bool:
    """Whether ``arr``'s bytes lie in one payload, or (row by row along the first axis) each
    row in some payload: a batch gathered from one copy per picture."""
    for enc in _encodings(np.asarray(arr)):
        raw = np.ascontiguousarray(enc).tobytes()
        if not raw or any(raw in d for d in payloads):
            return True
        if enc.ndim >= 2 and enc.shape[0] > 1 and all(
                _delivered(row, payloads) for row in enc):
            return True
    return False


def _describe_origin(trace: Trace, kind: str, task: int) -> str:
    if kind == "unwritten":
        return "nothing had written"
    if task < 0:
        return "holds data of unknown origin"
    call = int(trace.tasks["call"][task])
    file, line = trace.call_site(call)
    what = {"H2D": "your code filled from the host", "memset": "a memset filled",
            "H2H": "a host copy filled"}.get(kind, f"a {kind} task wrote")
    return f"{what} ({trace.call_name(call)} at {file}:{line})"


def device_result(check: Callable[[Run], Verdict], *, work: Sequence[str] = DEVICE_WORK,
                  value: Callable[[Run], Any] | None = None) -> Callable[[Run], Verdict]:
    """An item predicate: ``check``, passing only when the result came from the device.

    The result is judged first (``check``'s specific feedback on wrong values comes first);
    a right result that ``from_device`` rejects fails with ``from_device``'s reason.
    """

    def judged(run: Run) -> Verdict:
        ok, reason = check(run)
        if not ok:
            return ok, reason
        got = value(run) if value is not None else run.result
        dev_ok, why = from_device(run, got, work=work)
        if not dev_ok:
            return False, why
        return True, reason

    judged.__doc__ = check.__doc__
    judged.__name__ = getattr(check, "__name__", "judged")
    return judged
