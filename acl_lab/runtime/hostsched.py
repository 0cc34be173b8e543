"""The host-thread scheduler: the program's threads take turns, in virtual time.

A program's host threads do not run at the operating system's whim under the emulator: they
take turns, one at a time, and whose turn it is next is decided here, from the threads'
virtual clocks and a seed. The same program with the same seed makes the same calls in the
same order, so it gives the same trace and the same output on every machine and under any
load; another seed gives another schedule, and exploring seeds finds the ordering bugs one
schedule hides (Loom, Shuttle, CHESS and FoundationDB's simulation work this way).

Threads. A *controlled* thread takes part: the thread that made the session (the program's
main thread, a notebook's kernel thread, grading's learner thread), every thread a
controlled thread starts (``threading.Thread.start`` while ``acl_lab.install`` is in force,
``acl.util.start_thread``), and a thread of the program that calls the emulator for the
first time without having been started that way (a C program's pthread). Threads that were
running before the session was made (a notebook kernel's own, a library's worker pool) are
*external*: they are never made to wait for a turn, and their calls run at once, as before.

Turns. Exactly one controlled thread runs at a time (``RUNNING``); the others are
``READY`` (waiting for a turn), ``BLOCKED`` (in a wait: an emulator wait such as
``synchronize_stream``, or a Python wait such as ``Queue.get``), ``OUTSIDE`` (a notebook's
kernel thread between cells), ``DETACHED`` (taken out of the schedule by the fallback
below) or ``EXITED``. A running thread gives up its turn only at a *scheduling point*: the
entry of every ACL call, every operation on a Python synchronization primitive, and every
wait. There the scheduler picks the ready thread with the smallest virtual clock; a tie goes
to the thread with the higher priority (seed 0: the thread made first; another seed: a
random order drawn from it). A timed wait (``process_report(100)``, a
``*_with_timeout`` call, ``Event.wait(0.5)``, ``time.sleep``) ends when its condition
holds, or when its deadline is the earliest point in virtual time at which anything can
happen next: no wall-clock time is involved. A wait that nothing can end (every controlled
thread waits and no deadline is pending) is a deadlock, known at once and exactly.

The fallback. Code that never reaches a scheduling point (a busy-wait on a plain variable, a
C call that blocks) must not hang the emulator. A watchdog thread preempts a running thread
that has run ``preempt_s`` seconds of real time without a scheduling point while another
thread is waiting for a turn: the thread is ``DETACHED`` (it goes on running, outside the
schedule), the turn passes on, and the trace records that the schedule left the emulator's
control at that line (a ``schedule_left_control`` diagnostic). At its next scheduling point
the thread comes back. The same watchdog declares a deadlock that only an external thread
could still end after ``watchdog`` seconds without progress.

Seeds. Seed 0 is the plain schedule. Any other seed perturbs it, as a busy machine would: the
tie-break order, how long a new thread takes to start (at once, or up to 2x
``thread_start_ns``), delays of a thread at scheduling points (operating-system preemptions:
each seed draws how often and how long), and the
device's task durations within the profile's ``jitter``. ``acl-lab run --explore N`` runs
seeds 0..N-1; ``--seed S`` replays one.

All functions take the session, are called with ``s.lock`` held and may release it while the
caller waits for its turn.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import rawsync
from .kinds import Turn

if TYPE_CHECKING:
    from .objects import HostThread
    from .session import Session


# Module constants for the hot checks (an enum member read costs ~100 ns in Python 3.11).
NEW, RUNNING, READY, BLOCKED, OUTSIDE, DETACHED, EXITED, EXTERNAL = (
    Turn.NEW, Turn.RUNNING, Turn.READY, Turn.BLOCKED, Turn.OUTSIDE, Turn.DETACHED,
    Turn.EXITED, Turn.EXTERNAL)

#: Real seconds a controlled thread may run without a scheduling point while another thread
#: waits for its turn, before the fallback preempts it (env ``ACL_LAB_PREEMPT_MS``).
DEFAULT_PREEMPT_S = 0.5
#: Real seconds between two looks of the watchdog (and the longest a waiting thread sleeps
#: before it looks at the session again: a safety net, a turn is handed over by a notify).
POLL_S = 0.25
#: Real seconds between two looks while every thread waits and one waits for something
#: outside the program (``Wait.outside``: a pipe another process writes).
OUTSIDE_POLL_S = 0.005
#: Seed != 0: the chances that a thread is delayed at a scheduling point, and the mean
#: delays (virtual ns) when it is (an operating system preempting a thread for a time
#: slice); each seed draws one of each, so some seeds preempt rarely and briefly, others
#: often and long (a busy machine).
DELAY_CHANCES = (1 / 32, 1 / 8, 1 / 3)
DELAY_MEANS_NS = (2_000, 20_000, 100_000)

#: The pseudo-call row that marks where the fallback took a thread out of the schedule.
LEFT_CONTROL = "acl_lab.schedule_left_control"

#: Why a wait ended (``Wait.woken``).
WOKE_READY = "ready"        # its condition holds
WOKE_WOKEN = "woken"        # another thread woke it (a Python primitive's release, set, put)
WOKE_TIMEOUT = "timeout"    # its deadline came first
WOKE_DEADLOCK = "deadlock"  # nothing can ever end it
WOKE_WATCHDOG = "watchdog"  # nothing moved for ``watchdog`` s while only outsiders could act
WOKE_CLOSED = "closed"      # the session was closed

#: Who must act for a wait to finish, and why: ``(HostThread, why)`` for one thread,
#: ``(threading.Thread, why)`` for a Python thread the emulator has not seen yet, ``("any",
#: why)`` for any other thread, ``("none", why)`` when nobody can (a blocking callback on a
#: stream no thread is subscribed to) and ``("cycle", why)`` for streams that wait on each
#: other through events.
Needs = list[tuple[Any, str]]


class Wait:
    """What a blocked thread waits for.

    Args:
        what: how reports name the wait ("synchronize_stream on stream 2", "Queue.get").
        needs: who must act for it to end (``Needs``), asked when it is explained.
        ready: the condition (an emulator wait, checked at every scheduling decision), or
            None for a wait another thread ends with ``wake`` (a Python primitive).
        deadline: the virtual time a timed wait gives up at, or -1.
        wake_at: the virtual time the waiter continues at once ``ready()`` holds (default:
            its own clock; ``waits.wait_streams`` passes the streams' end).
        cid: the call the wait belongs to.
        outside: whether something outside the program's threads may end it now (a read of
            a pipe or socket another process may write), asked when every thread waits: then
            it is not a deadlock, and the schedule goes on once ``ready()`` holds (the
            watchdog looks every ``POLL_S``).
    """

    __slots__ = ("cid", "deadline", "needs", "outside", "ready", "seq", "wake_at", "what",
                 "woken")

    def __init__(self, what: str, needs: Callable[[], Needs],
                 ready: Callable[[], bool] | None = None, deadline: int = -1,
                 wake_at: Callable[[], int] | None = None, cid: int = -1,
                 outside: Callable[[], bool] | None = None) -> None:
        self.what = what
        self.needs = needs
        self.ready = ready
        self.deadline = deadline
        self.wake_at = wake_at
        self.cid = cid
        self.outside = outside
        self.woken = ""
        self.seq = 0


class HostScheduler:
    """The schedule of one session's host threads (``Session.sched``); see the module notes.

    Args:
        seed: 0 for the plain schedule, any other value for a perturbed one.
        preempt_s: the fallback's real seconds without a scheduling point.
        owner: the thread that made the session (controlled from its first call).
    """

    def __init__(self, seed: int = 0, preempt_s: float = DEFAULT_PREEMPT_S,
                 owner: threading.Thread | None = None) -> None:
        self.seed = int(seed)
        self.rng = random.Random(self.seed)
        self.delay_chance = self.rng.choice(DELAY_CHANCES) if self.seed else 0.0
        self.delay_mean = self.rng.choice(DELAY_MEANS_NS) if self.seed else 0
        self.preempt_s = preempt_s
        self.owner = owner
        #: controlled threads in the order they came under control
        self.threads: list[HostThread] = []
        #: the thread whose turn it is (None: nobody's; everyone waits, or no thread yet)
        self.running: HostThread | None = None
        #: controlled threads not exited
        self.live = 0
        #: more than one controlled thread lives: scheduling points can switch
        self.multi = False
        #: the largest clock a turn was given at (a detached thread comes back at it)
        self.frontier = 0
        self.block_seq = 0
        self.closed = False
        self.watchdog: threading.Thread | None = None
        #: counters for the summary: turns handed over, fallback preemptions
        self.switches = 0
        self.preemptions = 0
        #: scheduling points taken (the watchdog's sign of progress)
        self.points = 0
        #: (thread label, file, line) of every preemption, for the summary
        self.left_control: list[tuple[str, str, int]] = []

    @property
    def perturbed(self) -> bool:
        """Whether this schedule is perturbed (any seed but 0)."""
        return self.seed != 0

    def priority(self, th: HostThread) -> float:
        """A new thread's tie-break priority (lower runs first): its order of creation for
        seed 0, a draw from the seed otherwise."""
        return float(th.idx) if not self.seed else self.rng.random()

    def start_latency(self, base: int) -> int:
        """How long a new thread takes to run its first line (``thread_start_ns``): the
        base for seed 0; otherwise half the time at once (another core was free: the new
        thread and its starter go on side by side, the tie-break decides) and otherwise
        anything up to twice the base."""
        if not self.seed:
            return base
        return 0 if self.rng.random() < 0.5 else int(base * 2 * self.rng.random())

    def jitter(self, duration: int, share: float) -> int:
        """A device task's duration perturbed by up to ``share`` either way (seed != 0)."""
        if not self.seed or share <= 0 or duration <= 0:
            return duration
        return max(1, int(duration * (1 + share * (2 * self.rng.random() - 1))))


# ------------------------------------------------------------------ registering threads

#: Whether threads take turns at all: ``acl_lab.install`` switches it on together with the
#: scheduled primitives (``acl_lab.pythreads``); without them a program's own waits would be
#: invisible here, so its threads run as the operating system schedules them.
_CONTROL = [False]


def set_control(on: bool) -> None:
    """Switch the host schedule on or off for sessions' threads from now on."""
    _CONTROL[0] = on


def controlling() -> bool:
    """Whether new threads take part in the schedule (``set_control``)."""
    return _CONTROL[0]


def decide(s: Session, th: HostThread) -> None:
    """Decide, at a thread's first call, whether it takes part in the schedule.

    Controlled (while ``set_control`` is on): the session's owner, and any thread that was
    not already running when the session was made. External: the other threads that were,
    and every thread while control is off (see the module notes).
    """
    sc = s.sched
    t = th.pythread
    if not _CONTROL[0] or sc.closed or (t is not sc.owner and t in s.background_threads):
        th.turn = EXTERNAL
        return
    _control(s, th)
    if sc.running is None and not _any_ready(sc):
        _grant(sc, th)
    else:
        th.turn = READY
        wait_turn(s, th)


def spawn(s: Session, parent: HostThread, child: HostThread, latency: int) -> None:
    """``parent`` starts ``child`` (not running yet): it will first run at the parent's clock
    plus the start latency, when its turn comes (``enter``)."""
    child.clock = parent.clock + s.sched.start_latency(latency)
    _control(s, child)
    child.turn = READY
    _ensure_watchdog(s)


def enter(s: Session, th: HostThread) -> None:
    """A started thread's first act: wait for its first turn."""
    if th.turn == READY:
        wait_turn(s, th)


def exit_thread(s: Session, th: HostThread) -> None:
    """``th`` ended: its joiners may continue; the turn passes on."""
    sc = s.sched
    if th.turn in (EXITED, EXTERNAL, NEW):
        th.turn = EXITED if th.turn != EXTERNAL else EXTERNAL
        return
    was_running = sc.running is th
    th.turn = EXITED
    th.sched_wait = None
    sc.live -= 1
    sc.multi = sc.live > 1
    if was_running:
        sc.running = None
    if sc.running is None:
        dispatch(s, None)


def _control(s: Session, th: HostThread) -> None:
    sc = s.sched
    th.controlled = True
    th.prio = sc.priority(th)
    if th.cond is None:
        th.cond = rawsync.Condition(s.lock)
    sc.threads.append(th)
    sc.live += 1
    sc.multi = sc.live > 1
    if sc.multi:
        _ensure_watchdog(s)


# ------------------------------------------------------------------ turns


def point(s: Session, th: HostThread) -> None:
    """A scheduling point of ``th``: the turn may pass to a thread whose clock is smaller.

    Callers check ``s.sched.multi`` first (a lone thread has nothing to switch to); a thread
    coming back from ``OUTSIDE`` or ``DETACHED`` comes back here.
    """
    sc = s.sched
    if sc.closed:
        return
    sc.points += 1
    turn = th.turn
    if turn == RUNNING:
        if sc.running is not th:  # the watchdog detached it in the meantime
            th.turn = DETACHED
            return point(s, th)
        if sc.delay_chance and sc.rng.random() < sc.delay_chance:
            th.clock += int(sc.rng.expovariate(1 / sc.delay_mean))
        th.turn = READY
        sc.running = None
    elif turn in (OUTSIDE, DETACHED):
        if turn == DETACHED:
            th.clock = max(th.clock, sc.frontier)
        th.turn = READY
    elif turn == NEW:
        decide(s, th)
        return
    elif turn != READY:
        return  # exited or external: nothing to take part in
    if sc.running is None:
        dispatch(s, th)
    wait_turn(s, th)


def step_out(s: Session, th: HostThread) -> None:
    """``th`` leaves the schedule for a while (a notebook kernel thread at the end of a
    cell): the others run, up to its clock, until it comes back at a scheduling point."""
    sc = s.sched
    if th.turn != RUNNING or not th.controlled:
        return
    th.turn = OUTSIDE
    if sc.running is th:
        sc.running = None
        dispatch(s, None)


def block(s: Session, th: HostThread, w: Wait) -> str:
    """Block ``th`` until ``w`` ends; returns why it ended (``WOKE_*``).

    For ``th.clock``: a wait woken by another thread continues at the waker's clock at least,
    a timed-out one at its deadline, a ready one at ``w.wake_at()`` (or its own clock).
    """
    sc = s.sched
    if sc.closed:
        return WOKE_CLOSED
    if th.permit and w.ready is None:
        th.permit = False
        return WOKE_WOKEN
    sc.block_seq += 1
    w.seq = sc.block_seq
    th.sched_wait = w
    was = th.turn
    th.turn = BLOCKED
    if sc.running is th or was != RUNNING:
        if sc.running is th:
            sc.running = None
        dispatch(s, th)
    try:
        wait_turn(s, th)
    finally:
        th.sched_wait = None
    return w.woken


def wake(s: Session, targets: list[HostThread], clock: int) -> list[HostThread]:
    """Another thread ends the waits of ``targets`` (a Python primitive was released, set,
    put into, ...) at virtual time ``clock``; a target not blocked yet keeps a permit.

    Returns the targets whose wait it ended.
    """
    sc = s.sched
    woken = []
    for t in targets:
        w = t.sched_wait
        if t.turn == BLOCKED and w is not None and w.ready is None:
            w.woken = WOKE_WOKEN
            t.turn = READY
            t.clock = max(t.clock, clock)
            woken.append(t)
        elif t.controlled and t.turn not in (EXITED, EXTERNAL):
            t.permit = True
    if woken and sc.running is None:
        dispatch(s, None)
    return woken


def kick(s: Session) -> None:
    """Something changed outside the schedule (an external thread's call or wake): if no
    thread has the turn, give it to whoever can go on now."""
    sc = s.sched
    if sc.running is None and sc.live and not sc.closed:
        dispatch(s, None)


def wait_turn(s: Session, th: HostThread) -> None:
    """Sleep until it is ``th``'s turn (``s.lock`` is released meanwhile).

    Raises:
        BaseException: what interrupted the wait (a KeyboardInterrupt in the main thread):
            the thread leaves the schedule (``DETACHED``) and comes back at its next point.
    """
    sc = s.sched
    cond = th.cond
    assert cond is not None
    try:
        while sc.running is not th and not sc.closed:
            if th.turn == DETACHED:
                return
            if s.interrupt_pending and th.pythread is threading.main_thread():
                s.deliver_interrupt()
            cond.wait(POLL_S)
    except BaseException:
        if th.turn in (READY, BLOCKED):
            th.turn = DETACHED
            th.sched_wait = None
        elif sc.running is th:
            sc.running = None
            th.turn = DETACHED
            dispatch(s, None)
        raise
    if sc.closed and sc.running is not th:
        if th.sched_wait is not None and not th.sched_wait.woken:
            th.sched_wait.woken = WOKE_CLOSED
        th.turn = DETACHED
        return
    th.turn = RUNNING


def dispatch(s: Session, caller: HostThread | None) -> None:
    """Give the turn to the next thread (nobody has it now). With nothing able to run and
    nothing outside the schedule that could change that, the most recently blocked thread
    is woken with a deadlock."""
    sc = s.sched
    nxt = choose(s)
    if nxt is not None:
        _grant(sc, nxt)
        return
    if sc.closed or sc.live == 0:
        return
    if any(t.turn in (RUNNING, OUTSIDE, DETACHED, READY) for t in sc.threads):
        return  # someone is still going (outside the schedule, or pinned behind it)
    if _outside_waits(sc):
        _ensure_watchdog(s)  # it looks again every POLL_S: another process may write
        return
    if _externals_may_act(s):
        _ensure_watchdog(s)  # it declares the deadlock after ``s.watchdog`` quiet seconds
        return
    _declare_deadlock(s)


def _declare_deadlock(s: Session, why: str = WOKE_DEADLOCK) -> None:
    sc = s.sched
    waiting = [t for t in sc.threads if t.turn == BLOCKED and t.sched_wait is not None]
    if not waiting:
        return
    # The program's main thread gets the error when it is one of the waiters (on hardware
    # it would hang there: the program never ends), else the thread that waited last.
    owner = [t for t in waiting if t.pythread is sc.owner]
    victim = owner[0] if owner else max(waiting, key=lambda t: t.sched_wait.seq
                                        if t.sched_wait else 0)
    assert victim.sched_wait is not None
    victim.sched_wait.woken = why
    # it waited until the last thing that could have helped happened
    victim.clock = max(victim.clock, max(t.clock for t in sc.threads))
    victim.turn = READY
    _grant(sc, victim)


def choose(s: Session) -> HostThread | None:
    """The thread whose turn comes next: the ready thread with the smallest (clock,
    priority), unless a timed wait's deadline comes first; threads ``OUTSIDE`` pin virtual
    time (nothing runs past their clock while they may still act)."""
    sc = s.sched
    best: HostThread | None = None
    timed: HostThread | None = None
    timed_at = 0
    pin = -1
    for t in sc.threads:
        turn = t.turn
        if turn == BLOCKED:
            w = t.sched_wait
            if w is None:
                continue
            at = -1
            if w.ready is not None and w.ready():
                at = w.wake_at() if w.wake_at is not None else t.clock
                if w.deadline >= 0 and at > w.deadline:
                    at = -1  # it becomes possible only after the deadline: a timeout
            if at >= 0:
                w.woken = WOKE_READY
                t.turn = turn = READY
                t.clock = max(t.clock, at)
            else:
                if w.deadline >= 0 and (timed is None or (w.deadline, t.prio) < (timed_at,
                                                                                 timed.prio)):
                    timed, timed_at = t, w.deadline
                continue
        if turn == READY:
            if best is None or (t.clock, t.prio) < (best.clock, best.prio):
                best = t
        elif turn == OUTSIDE:
            pin = t.clock if pin < 0 else min(pin, t.clock)
    if timed is not None and timed.sched_wait is not None and (
            best is None or (timed_at, timed.prio) < (best.clock, best.prio)):
        if pin >= 0 and timed_at > pin:
            return None
        timed.sched_wait.woken = WOKE_TIMEOUT
        timed.turn = READY
        timed.clock = max(timed.clock, timed_at)
        return timed
    if best is not None and pin >= 0 and best.clock > pin:
        return None
    return best


def _grant(sc: HostScheduler, th: HostThread) -> None:
    if sc.running is not th:
        sc.switches += 1
    sc.running = th
    th.turn = RUNNING
    sc.frontier = max(sc.frontier, th.clock)
    cond = th.cond
    if cond is not None:
        cond.notify()


def _any_ready(sc: HostScheduler) -> bool:
    return any(t.turn == READY for t in sc.threads)


def _outside_waits(sc: HostScheduler) -> bool:
    """Whether a waiting thread waits for something outside the program (``Wait.outside``)."""
    for t in sc.threads:
        w = t.sched_wait
        if t.turn == BLOCKED and w is not None and w.outside is not None and w.outside():
            return True
    return False


def _externals_may_act(s: Session) -> bool:
    """Whether a thread outside the schedule may still end a wait: a Python thread that the
    session did not have at its start, is not controlled, not a daemon and still runs."""
    controlled = {t.pythread for t in s.sched.threads}
    background = s.background_threads
    return any(t not in controlled and t not in background and t.is_alive() and not t.daemon
               and t is not s.sched.watchdog for t in threading.enumerate())


def close(s: Session) -> None:
    """The session closed: every waiting thread is released (its wait ends ``closed``) and
    threads run freely from now on."""
    sc = s.sched
    sc.closed = True
    sc.running = None
    for t in sc.threads:
        w = t.sched_wait
        if w is not None and not w.woken:
            w.woken = WOKE_CLOSED
        if t.cond is not None:
            t.cond.notify_all()


# ------------------------------------------------------------------ the fallback


def _ensure_watchdog(s: Session) -> None:
    sc = s.sched
    if sc.watchdog is not None:
        return
    t = threading.Thread(target=_watch, args=(s,), name="acl_lab-scheduler-watchdog",
                         daemon=True)
    sc.watchdog = t
    s.add_background(t)
    rawsync.start(t)


def _watch(s: Session) -> None:
    """The watchdog: preempt a thread that runs too long without a scheduling point, and
    declare a deadlock that only an external thread could end once nothing moves.

    Progress is a change of (who has the turn, calls made, scheduling points, turns handed
    over), sampled while holding the session lock: a long call holds the lock, so it is
    never mistaken for a thread that stopped reaching scheduling points.
    """
    sc = s.sched
    tick = rawsync.Condition(s.lock)
    last: tuple[int, ...] = ()
    since = time.monotonic()
    while True:
        with s.lock:
            if sc.closed:
                return
            # an fd another process may write is looked at often while nothing else runs
            tick.wait(OUTSIDE_POLL_S if sc.running is None and _outside_waits(sc)
                      else min(POLL_S, max(sc.preempt_s / 4, 0.005)))
            if sc.closed:
                return
            now = time.monotonic()
            sig = (id(sc.running), s.call_count, sc.points, sc.switches)
            if sig != last:
                last, since = sig, now
                continue
            r = sc.running
            if r is None and sc.live:
                dispatch(s, None)  # a thread outside the schedule may have ended a wait
                r = sc.running
            if r is not None:
                if now - since > sc.preempt_s and _others_waiting(sc, r):
                    _preempt(s, r)
            elif sc.live and now - since > s.watchdog:
                if all(t.turn in (BLOCKED, EXITED) for t in sc.threads) \
                        and not _outside_waits(sc):
                    _declare_deadlock(s, WOKE_WATCHDOG)
                last = ()


def _others_waiting(sc: HostScheduler, r: HostThread) -> bool:
    for t in sc.threads:
        if t is r:
            continue
        if t.turn == READY:
            return True
        w = t.sched_wait
        if t.turn == BLOCKED and w is not None and (w.deadline >= 0 or (
                w.ready is not None and w.ready())):
            return True
    return False


def _preempt(s: Session, r: HostThread) -> None:
    """Take the running thread ``r`` out of the schedule (the fallback) and say so."""
    file, line = _where(r)
    detach(s, r, file, line,
           f"{r.label()} ran {s.sched.preempt_s:g} s of real time at {file}:{line} without a "
           "scheduling point (an ACL call, a threading or queue operation, time.sleep) while "
           "other threads waited for their turn; from here the order of the threads was not "
           "under the emulator's control until it reached one. A busy-wait on a plain "
           "variable does this: wait on a threading.Event or Condition instead.")


def detach(s: Session, r: HostThread, file: str, line: int, why: str) -> None:
    """``r`` leaves the schedule at ``file:line`` (``DETACHED``: it goes on outside it and
    comes back at its next scheduling point); the trace gets a zero-length
    ``schedule_left_control`` row on its lane with ``why``."""
    sc = s.sched
    if r.turn not in (RUNNING, READY) or sc.closed:
        return
    sc.preemptions += 1
    sc.left_control.append((r.label(), file, line))
    cid = s.call_count
    s.call_count = cid + 1
    ctx = r.ctx
    s.hooks.on_call_begin(cid, LEFT_CONTROL, r.idx, ctx.oid if ctx is not None else -1, file,
                          line, r.clock, (), "")
    s.hooks.on_call_end(cid, r.clock, 0)
    s.diag(cid, "schedule_left_control", why, level=1)
    r.turn = DETACHED
    if sc.running is r:
        sc.running = None
        dispatch(s, None)


def _where(th: HostThread) -> tuple[str, int]:
    """The innermost frame of ``th`` outside acl_lab and the standard threading modules."""
    frame = sys._current_frames().get(th.pythread.ident or -1)
    while frame is not None:
        f = frame.f_code.co_filename
        if "acl_lab" not in f and not f.endswith(("threading.py", "queue.py")):
            return f, frame.f_lineno or 0
        frame = frame.f_back
    return "<unknown>", 0


# ------------------------------------------------------------------ explanations


def waiting_threads(s: Session) -> list[HostThread]:
    """Controlled threads in a wait now, in the order they began waiting."""
    ws = [t for t in s.sched.threads if t.turn == BLOCKED and t.sched_wait is not None]
    return sorted(ws, key=lambda t: t.sched_wait.seq if t.sched_wait else 0)


__all__ = ["DEFAULT_PREEMPT_S", "HostScheduler", "Needs", "Turn", "Wait", "block", "close",
           "decide", "detach", "dispatch", "enter", "exit_thread", "kick", "point", "spawn",
           "step_out", "wait_turn", "wake"]
