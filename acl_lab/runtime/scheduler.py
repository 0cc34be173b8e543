"""Tasks in virtual time: submission, placement on the engines (``resources.Resource``),
data effects in time order, and the device's advance (``kinds`` names the engines and the
task kinds)."""

from __future__ import annotations

from heapq import heappop, heappush
from typing import TYPE_CHECKING

from ..constants import ErrorCode
from .costs import callback_ns, sync_task_delay
from .errors import AclError
from .kinds import Engine, TaskKind
from .memory import KIND_NAMES, MemorySystem, first_unwritten
from .objects import CopyTask

if TYPE_CHECKING:
    from .objects import Access, HostThread, Task
    from .session import Session


# ================================================================== tasks in virtual time
# Placement, effects and the device's advance. Functions of the session (its state: the
# effect heap, blocked streams, task count, hooks), as every subsystem module of the runtime.
# Written for the common task (a copy on a stream): one pass over its accesses per phase, the
# rare checks behind a cheap test of the region's flags.

#: Entries of ``Session.effects``: (time, phase, sequence, task); phase 0 (end: writes) sorts
#: before phase 1 (start: reads) at equal times, so a task that starts when its predecessor
#: ends sees the predecessor's output.
_END, _START = 0, 1
# The kinds every placement compares with, as plain ints: reading an enum member costs ten
# times a module global, and these comparisons run for every task.
_WAIT, _CALLBACK = int(TaskKind.EVENT_WAIT), int(TaskKind.CALLBACK)
_RECORD, _RESET = int(TaskKind.EVENT_RECORD), int(TaskKind.EVENT_RESET)
_MEMSET, _NO_ENGINE = int(TaskKind.MEMSET), int(Engine.NONE)


def number(s: Session, t: Task) -> None:
    """Give a task its id (= its row in the trace); under a perturbed host schedule (seed
    != 0, ``hostsched``) its duration varies within the profile's ``jitter``.

    A task whose range already runs past its allocation fails at its start and moves
    nothing: it takes 1 ns, not the cost of its count (which must not hold the engine or
    push the clock out by years; a start before the end keeps the effect order).
    """
    if s.sched.seed:  # a perturbed schedule: the device's times vary within the jitter
        t.duration = s.sched.jitter(t.duration, s.profile.jitter)
    if type(t) is CopyTask:
        n = t.nbytes
        if t.src_off + n > t.src.size or t.dst_off + n > t.dst.size:
            t.duration = min(t.duration, 1)
    else:
        for a in t.accesses:
            if a.offset + a.length > a.region.size:
                t.duration = min(t.duration, 1)
                break
    t.id = s.task_count
    s.task_count += 1


def submit(s: Session, t: Task) -> None:
    """Queue a task on its stream: placed now when nothing is in front of it.

    The hooks hear of it once (``on_task``) when it is placed at once, its start and end
    already set; a task that waits (behind others, or an event wait, a callback) is
    announced first and ``on_task_placed`` follows when it is placed.
    """
    st = t.stream
    assert st is not None
    number(s, t)
    kind = t.kind
    if st.pending or st.blocked_by is not None:
        s.hooks.on_task(t)
    elif kind in (_WAIT, _CALLBACK):
        # announced before it is placed: placing a wait records its edge, a callback's
        # placement hands it to its report thread, and both name the task
        s.hooks.on_task(t)
        if place(s, t):
            return
    else:
        place(s, t, True)
        if kind in (_RECORD, _RESET) and s.blocked_streams:
            pump(s)
        return
    st.pending.append(t)
    if st not in s.blocked_streams:
        s.blocked_streams.append(st)


def pump(s: Session) -> None:
    """Place every pending head that can be placed, until nothing changes."""
    blocked = s.blocked_streams
    changed = True
    while changed:
        changed = False
        for st in list(blocked):
            while st.pending and st.blocked_by is None:
                if not place(s, st.pending[0]):
                    break
                st.pending.popleft()
                changed = True
            if st.idle and st in blocked:
                blocked.remove(st)


def place(s: Session, t: Task, first: bool = False) -> bool:
    """Give a task its start and end in virtual time if its dependencies allow.

    ``first``: the task is placed at its submission (not an event wait or a callback) and
    announced now, with its times (``on_task`` instead of ``on_task_placed``).
    """
    st = t.stream
    assert st is not None
    p = s.profile
    ready = t.submit + p.launch_latency_ns
    if st.tail_end > ready:
        ready = st.tail_end
    kind = t.kind
    if t.engine != _NO_ENGINE:  # device work (copies first of all): its engine's next fit
        res = st.engines[t.engine]
        if len(res.busy) > 64:
            res.prune(min((x.clock for x in s.thread_list if x.alive), default=0))
        t.start = start = res.fit(ready, t.duration, t.units)
        t.end = start + t.duration
    elif kind == _WAIT:
        done = wait_resolves_at(t, ready)
        if done is None:
            return False
        t.start, t.end = ready, max(done, ready) + t.duration
        assert t.record is not None and t.event is not None
        t.event.waiting.remove(t)
        s.hooks.on_edge(t.record.id, t.id)
    elif kind == _CALLBACK:
        t.start = ready
        sub = st.subscriber
        if t.block:
            st.blocked_by = t
            t.end = -1
        else:
            t.end = ready + callback_ns(p)
        if sub is not None:
            sub.reports.append(t)
        s.cond.notify_all()
        if t.block:
            s.hooks.on_task_placed(t)
            s.progress += 1
            return True
    else:
        t.start, t.end = ready, ready + t.duration
    st.tail_end = t.end
    if type(t) is CopyTask or t.accesses:
        # Only the start is queued: ``advance`` queues the end once the start is applied,
        # or applies it at once when nothing else comes first (the usual case).
        seq = s.effect_seq
        s.effect_seq = seq + 1
        heappush(s.effects, (t.start, _START, seq, t))
    if first:
        s.hooks.on_task(t)
    else:
        s.hooks.on_task_placed(t)
    s.progress += 1
    if kind in (_RECORD, _CALLBACK):
        s.cond.notify_all()
    return True


def wait_resolves_at(t: Task, ready: int) -> int | None:
    """When a wait task's event is set for it, or None while that is unknown."""
    e = t.event
    rec = t.record
    assert e is not None and rec is not None
    t.awaiting = None
    while True:
        if not rec.placed:
            t.reason = f"waits for the record of {e.label()} on {rec.stream.label()}" \
                if rec.stream is not None else "waits for a record"
            t.awaiting = rec
            return None
        check = max(ready, rec.end)
        killer = None
        for r in e.resets:
            if r.placed and r.id > rec.id and rec.end <= r.start <= check:
                killer = r
                break
        if killer is None:
            return check
        later = [x for x in e.records if x.id > killer.id]
        if not later:
            rs = killer.stream.label() if killer.stream is not None else "?"
            t.reason = (f"{e.label()} was reset (reset_event on {rs}) before this wait "
                        "ran, and no later record_event is queued")
            return None
        rec = later[0]


def effect_start(s: Session, t: Task) -> None:
    """Read a task's inputs at its start; fail the task if any range is no longer valid."""
    on_stream = t.stream is not None
    for a in t.accesses:
        r = a.region
        if not r.live or a.offset + a.length > r.size:
            fail_task(s, t, a)
            return
        # Raw host pages may have been unmapped since the call queued the task (a task on
        # no stream runs within its call, right after the check); and no write may reach
        # memory the program may not write (the calls refuse it; this is the last guard).
        # Only raw memory and host objects can fail these (``MemorySystem.may_write``).
        if r.raw or (a.write and (r.read_only or r.obj is not None)):
            why = (MemorySystem.still_mapped(r, a.write) if on_stream else "") or (
                MemorySystem.may_write(r) if a.write else "")
            if why:
                fail_task(s, t, a, why)
                return
    kernel = t.kernel is not None
    if kernel:
        t.inputs = []
    for a in t.accesses:
        if not a.write:
            r = a.region
            off = a.offset
            if r.written is not None:
                missing = r.unwritten(off, off + a.length)
                if missing:
                    s.hooks.on_uninit(t, r, missing, first_unwritten(r.written, off))
            if kernel:
                assert t.inputs is not None
                t.inputs.append(MemorySystem.view(r)[off:off + a.length].tobytes())
            elif t.payload is None:
                t.payload = MemorySystem.view(r)[off:off + a.length].tobytes()


def effect_end(s: Session, t: Task) -> None:
    """Write a task's outputs at its end."""
    if t.status:
        return
    kernel = t.kernel
    outputs: list[bytes] = []
    if kernel is not None:
        try:
            outputs = kernel(t.inputs or [])
        except Exception as exc:  # a kernel bug must not take the program down
            unit = "the DVPP engine" if t.engine == Engine.DVPP else "the AI core"
            t.status = (ErrorCode.ACL_ERROR_RT_DRV_INTERNAL_ERROR if t.engine == Engine.DVPP
                        else ErrorCode.ACL_ERROR_RT_AICORE_EXCEPTION)
            t.reason = f"{t.label} failed on {unit}: {type(exc).__name__}: {exc}"
            s.hooks.on_task_status(t)
            if t.stream is not None and not t.stream.error:
                t.stream.error = t.status
            return
        t.inputs = None
    out_i = 0
    for a in t.accesses:
        if a.write:
            r = a.region
            if not r.live:
                fail_task(s, t, a)
                return
            if kernel is not None:
                data = outputs[out_i][:a.length]
                out_i += 1
                MemorySystem.write(r, a.offset, data)
            elif t.kind == _MEMSET:
                MemorySystem.fill(r, a.offset, t.fill, a.length)
            elif t.payload is not None:
                MemorySystem.write(r, a.offset, t.payload)
                s.hooks.on_landed(t, r, a.offset, t.payload)
    t.payload = None


def copy_start_plain(s: Session, t: CopyTask) -> bool:
    """A copy's start (``effect_start``: it reads its source) when nothing about it is out
    of the ordinary; False, having done nothing, for anything else (a freed or raw region,
    a range past the end, a destination that can refuse a write, a failed task), which
    ``effect_start`` handles."""
    rs = t.src
    rd = t.dst
    off = t.src_off
    n = t.nbytes
    if (t.status or not rs.live or not rd.live or rs.raw or rd.raw or rd.read_only
            or rd.obj is not None or off + n > rs.size or t.dst_off + n > rd.size):
        return False
    written = rs.written
    if written is not None:
        missing = rs.unwritten(off, off + n)
        if missing:
            s.hooks.on_uninit(t, rs, missing, first_unwritten(written, off))
    t.payload = MemorySystem.view(rs)[off:off + n].tobytes()
    return True


def copy_end_plain(s: Session, t: CopyTask) -> bool:
    """A copy's end (``effect_end``: its bytes land, ``MemorySystem.write`` guarding a
    destination that may refuse) when its start read them and the destination is live;
    False, having done nothing, otherwise."""
    data = t.payload
    rd = t.dst
    if t.status or data is None or not rd.live:
        return False
    MemorySystem.write(rd, t.dst_off, data)
    s.hooks.on_landed(t, rd, t.dst_off, data)
    t.payload = None
    return True


def fail_task(s: Session, t: Task, a: Access, why: str = "") -> None:
    """Fail task ``t`` on its access ``a`` (507053): freed memory, a range past the end, or
    ``why`` (host memory that can no longer be accessed)."""
    r = a.region
    if why:
        why = f"{'destination' if a.write else 'source'} host memory: {why}"
    elif not r.live:
        why = (f"{KIND_NAMES[r.kind]} allocation #{r.id} was freed before the task ran "
               "(free does not wait for queued tasks: synchronize first)")
    else:
        why = (f"range [{a.offset}, {a.offset + a.length}) runs "
               f"{a.offset + a.length - r.size} bytes past the end of "
               f"{KIND_NAMES[r.kind]} allocation #{r.id} ({r.size} bytes)")
    t.status = ErrorCode.ACL_ERROR_RT_DEVICE_MEM_ERROR
    t.reason = why
    if t.stream is not None and not t.stream.error:
        t.stream.error = ErrorCode.ACL_ERROR_RT_DEVICE_MEM_ERROR
    s.hooks.on_task_status(t)
    s.hooks.on_diag(t.call, 2, "task_failed",
                    f"task {t.id} ({t.kind.name}) failed with 507053: {why}")


def advance(s: Session, t: int) -> None:
    """Apply every data effect due at or before virtual time ``t``.

    A copy's phases (the commonest effects) are applied here in a few lines when nothing
    about them is out of the ordinary (``copy_start_plain`` / ``copy_end_plain``), the rest
    by ``effect_start`` / ``effect_end``.
    """
    eff = s.effects
    while eff and eff[0][0] <= t:
        _, phase, seq, task = heappop(eff)
        if phase:
            if not (type(task) is CopyTask and copy_start_plain(s, task)):
                effect_start(s, task)
            end = task.end
            # The end is the next effect in (time, phase, sequence) order when it is due
            # and sorts before the heap's head: it is applied now instead of a push and a
            # pop. The order is the one two heap entries give (sequence numbers are unique).
            if end > t or (eff and eff[0] < (end, _END, seq)):
                heappush(eff, (end, _END, seq, task))
                continue
        if not (type(task) is CopyTask and copy_end_plain(s, task)):
            effect_end(s, task)
    if t > s.applied_ns:
        s.applied_ns = t


def run_sync(s: Session, th: HostThread, task: Task) -> None:
    """Run a task on no stream (synchronous copy, memset or model execute) now: the host
    waits for the engine.

    Raises:
        AclError: the task's status when it failed (507053 for a range past the end).
    """
    task.device = th.ctx.device.index if th.ctx is not None else 0
    number(s, task)
    ready = th.clock + sync_task_delay(s.profile)
    if task.engine == Engine.HOST:
        task.start = ready
    else:
        dev = s.devices[task.device]
        task.start = dev.engines[task.engine].fit(ready, task.duration, task.units)
    task.end = task.start + task.duration
    s.hooks.on_task(task)  # placed at once: announced with its times
    s.progress += 1
    advance(s, task.start)
    for a in task.accesses:
        if a.offset + a.length > a.region.size:
            fail_task(s, task, a)
            th.clock = task.end
            raise AclError(ErrorCode.ACL_ERROR_RT_DEVICE_MEM_ERROR, task.reason)
    effect_start(s, task)
    advance(s, task.end)
    effect_end(s, task)
    th.clock = task.end
    if task.status:
        raise AclError(task.status, task.reason)
