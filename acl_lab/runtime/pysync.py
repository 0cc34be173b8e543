"""The runtime side of the program's Python synchronization: rows, edges, waits and wakes.

A program's ``threading`` and ``queue`` primitives and ``time.sleep`` are replaced while
``acl_lab.install`` is in force (``acl_lab.pythreads``); their state (who holds a lock,
what a queue holds) stays in the program's process, and what the emulator must know comes
here through the transport, as *operations*:

* ``begin``: a scheduling point (``hostsched.point``), then a row in the trace's ``calls``
  table named after the operation (``threading.Event.wait``, ``queue.Queue.get``, ...:
  ``NAMES``) with the program's file:line and the object's label;
* ``wait``: the thread blocks inside that open row until another thread wakes it or its
  virtual deadline comes (``hostsched.block``);
* ``done``: the row closes; the happens-before edges into it (``HostEdge``: from the release,
  set or put whose effect the operation saw) are recorded, and the threads the operation
  released are woken.

An operation that does not block is a ``begin`` and a ``done``; one that blocks has ``wait``
rounds between them. Thread lifecycle operations are here too: ``start`` (a thread starts
another: it becomes part of the schedule), ``enter`` and ``leave`` (a started thread's first
and last rows), ``join`` and ``sleep`` (virtual time only). ``read`` is ``os.read`` of a
pipe or socket with nothing to read yet: the thread waits in the schedule until the fd is
readable (see ``read``).

Functions over a Session, called by the transport with the session lock held. Threads are
``HostThread`` objects (the transport maps the program's references to them); an unknown
operation name is refused: the trace only holds names from ``NAMES``.
"""

from __future__ import annotations

import select
import threading
from typing import TYPE_CHECKING, Any

from . import hostsched, profiling, waits
from .errors import DeadlockError
from .kinds import HostEdge
from .objects import HostThread

if TYPE_CHECKING:
    from .session import Session

#: The operations the program's primitives report, as the trace names them.
NAMES = frozenset({
    "threading.Thread.start", "threading.Thread.begin", "threading.Thread.end",
    "threading.Thread.join", "time.sleep",
    "threading.Lock.acquire", "threading.Lock.release",
    "threading.RLock.acquire", "threading.RLock.release",
    "threading.Condition.wait", "threading.Condition.notify",
    "threading.Semaphore.acquire", "threading.Semaphore.release",
    "threading.Event.set", "threading.Event.clear", "threading.Event.wait",
    "threading.Event.is_set",
    "threading.Barrier.wait", "threading.Barrier.abort",
    "queue.Queue.put", "queue.Queue.get", "queue.Queue.task_done", "queue.Queue.join",
    "queue.Queue.qsize", "os.read",
})
#: Edge kinds by their name on the wire.
EDGE_KINDS = {k.label: k for k in HostEdge}


class SyncError(ValueError):
    """An operation the runtime refuses (an unknown name, a row that is not open)."""


def _row(s: Session, th: HostThread, name: str, label: str, file: str, line: int) -> int:
    if name not in NAMES:
        raise SyncError(f"{name!r} is not an operation acl_lab records")
    return s.api_enter(name, s.profile.py_sync_ns, (label,), "", file, line)[1]


def begin(s: Session, th: HostThread, name: str, label: str, file: str, line: int) -> int:
    """A scheduling point, then open the operation's row; returns its call id."""
    return _row(s, th, name, label, file, line)


def wait(s: Session, th: HostThread, cid: int, what: str, needs: hostsched.Needs,
         timeout_ns: int) -> str:
    """Block ``th`` inside row ``cid`` until another thread wakes it (``done`` with it among
    the wakes) or ``timeout_ns`` of virtual time passed (-1: no limit).

    Returns ``hostsched.WOKE_WOKEN``, ``WOKE_TIMEOUT``, ``WOKE_DEADLOCK`` (nothing can ever
    wake it: every thread waits; the caller raises) or ``WOKE_CLOSED``.
    """
    if not th.controlled:
        return hostsched.WOKE_CLOSED  # an external thread waits with real primitives
    deadline = th.clock + timeout_ns if timeout_ns >= 0 else -1
    w = hostsched.Wait(what, lambda: needs, None, deadline, None, cid)
    return hostsched.block(s, th, w)


def done(s: Session, th: HostThread, cid: int, edges: list[tuple[int, str]],
         wakes: list[HostThread]) -> int:
    """Close row ``cid``: record the edges into it (``(source row, kind label)``: rows made
    before now, a blocking operation's source may be later than its own row, which opened
    when it began to wait) and wake ``wakes`` at the caller's clock. Returns the caller's
    clock."""
    for src, kind in edges:
        k = EDGE_KINDS.get(kind)
        if k is None:
            raise SyncError(f"unknown edge kind {kind!r}")
        if type(src) is int and 0 <= src < s.call_count and src != cid:
            s.hooks.on_host_edge(src, cid, k)
    s.api_exit(th, cid, 0)
    if wakes:
        hostsched.wake(s, wakes, th.clock)
    return th.clock


def start(s: Session, th: HostThread, cid: int, child: threading.Thread) -> HostThread:
    """Thread ``th`` starts ``child`` in call ``cid`` (``threading.Thread.start``): the child
    joins the schedule, first running at the caller's clock plus ``thread_start_ns``."""
    new = s.register_thread(child, th.clock, False)
    new.start_cid = cid
    if th.controlled and not s.sched.closed and hostsched.controlling():
        hostsched.spawn(s, th, new, s.profile.thread_start_ns)
    else:
        new.turn = hostsched.EXTERNAL
    return new


def enter(s: Session, th: HostThread, cid: int) -> None:
    """A started thread's first row (``threading.Thread.begin``): after its start."""
    if th.start_cid >= 0:
        s.hooks.on_host_edge(th.start_cid, cid, HostEdge.START)


def leave(s: Session, th: HostThread, cid: int) -> None:
    """A thread's last row (``threading.Thread.end``): it ends, and the turn passes on."""
    th.end_cid = cid
    s.api_exit(th, cid, 0)
    hostsched.exit_thread(s, th)


def join(s: Session, th: HostThread, cid: int, target: HostThread | None,
         timeout_ns: int) -> bool:
    """``th`` joins ``target`` in row ``cid`` (``threading.Thread.join``): wait until it
    ended (or ``timeout_ns`` of virtual time, -1: no limit); an edge from its end row.

    Returns whether it ended. A target the emulator does not follow (started before install,
    or external) is not waited for here: the caller joins it for real.

    Raises:
        DeadlockError: an untimed join nothing can ever end, or the session closed.
    """
    if target is None or target is th:
        return False
    if target.turn != hostsched.EXITED and th.controlled and target.controlled:
        def ended() -> bool:
            return target.turn == hostsched.EXITED

        def needs() -> hostsched.Needs:
            return [(target, f"{target.label()} has not finished")]

        what = f"Thread.join of {target.label()}"
        deadline = th.clock + timeout_ns if timeout_ns >= 0 else -1
        why = hostsched.block(s, th, hostsched.Wait(what, needs, ended, deadline,
                                                    lambda: target.clock, cid))
        if why == hostsched.WOKE_DEADLOCK and timeout_ns < 0:
            raise waits.deadlock(s, th, cid, what, needs(), waits.explain(s, th, needs()))
        if why == hostsched.WOKE_WATCHDOG and timeout_ns < 0:
            raise waits.deadlock(s, th, cid, what, needs(), waits.WATCHDOG_WHY.format(
                s.watchdog), stacks=True)
        if why == hostsched.WOKE_CLOSED and timeout_ns < 0:  # the program is over: quietly
            raise waits.deadlock(s, th, cid, what, needs(),
                                 "the session was closed while this thread waited", quiet=True)
        if why != hostsched.WOKE_READY:
            if why in (hostsched.WOKE_DEADLOCK, hostsched.WOKE_WATCHDOG):
                th.clock = max(th.clock, deadline)
            return False
    if target.turn != hostsched.EXITED:
        return False
    if target.end_cid >= 0:
        s.hooks.on_host_edge(target.end_cid, cid, HostEdge.JOIN)
    th.clock = max(th.clock, target.clock)
    return True


def sleep(s: Session, th: HostThread, cid: int, ns: int) -> None:
    """``time.sleep`` in row ``cid``: ``ns`` of virtual time pass for the caller, and
    threads whose clocks are behind run first."""
    th.clock += max(0, ns)
    if s.sched.multi and th.controlled:
        hostsched.point(s, th)


def readable(fd: int) -> bool:
    """Whether ``os.read(fd)`` would return at once (data, end of file, or an error)."""
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        return bool(p.poll(0))
    except (OSError, ValueError, OverflowError):
        return True


def read(s: Session, th: HostThread, fd: int, file: str, line: int) -> None:
    """``th`` is about to read ``fd`` (blocking), which has nothing to read yet: it waits in
    the schedule, in an ``os.read`` row, until the fd is readable.

    Who can end the wait decides what a wait nobody ends is: a pipe the emulator writes (an
    op subscription's, ``profiling.feeds``) has no writer outside the program, so a wait on
    it that every other thread's wait blocks is a deadlock, known at once; any other fd (a
    pipe the program shares with another process, a socket, a terminal) may be written from
    outside, so the schedule waits for it as the thread would, looking again every
    ``hostsched.POLL_S``. The thread continues at the virtual time the emulator wrote what
    it reads, or at the schedule's frontier for anything else. In ``acl-lab grade``'s
    sandbox the program's fds are out of reach: the thread leaves the schedule for the
    read (a ``schedule_left_control`` row) and comes back at its next scheduling point.

    Raises:
        DeadlockError: nothing can ever make the fd readable, or the session closed.
    """
    if not s.own_fds:
        hostsched.detach(s, th, file, line,
                         f"{th.label()} reads fd {fd} at {file}:{line}, which has nothing to "
                         "read yet; acl-lab grade's sandbox keeps the program's fds out of "
                         "the emulator's sight, so the thread waits for the read outside the "
                         "schedule, and the threads' order is not under the emulator's "
                         "control until its next scheduling point")
        return
    cid = s.api_enter("os.read", s.profile.py_sync_ns, (f"fd {fd}",), "", file, line)[1]
    pipe = profiling.pipe_of(fd)
    what = f"os.read on fd {fd}"

    def needs() -> hostsched.Needs:
        if profiling.feeds(s, pipe):
            return [("any", f"fd {fd} is the read end of a profiling pipe: records come when "
                            "a subscribed model runs, end of file when "
                            "acl.prof.model_unsubscribe closes its write end")]
        return [("any", f"fd {fd} has nothing to read until something writes to it")]

    def wake_at() -> int:
        return profiling.fed_at(s, pipe) or s.sched.frontier

    try:
        why = hostsched.block(s, th, hostsched.Wait(
            what, needs, lambda: readable(fd), -1, wake_at, cid,
            outside=lambda: not profiling.feeds(s, pipe)))
        if why in (hostsched.WOKE_DEADLOCK, hostsched.WOKE_WATCHDOG):
            watched = why == hostsched.WOKE_WATCHDOG
            raise waits.deadlock(s, th, cid, what, needs(),
                                 waits.WATCHDOG_WHY.format(s.watchdog) if watched
                                 else waits.explain(s, th, needs()), stacks=watched)
        if why == hostsched.WOKE_CLOSED:
            raise waits.deadlock(s, th, cid, what, needs(),
                                 "the session was closed while this thread waited", quiet=True)
    finally:
        s.api_exit(th, cid, 0)


def resolve_needs(needs: list[Any], threads: dict[int, HostThread]) -> hostsched.Needs:
    """A program's ``[(thread index or -1, why)]`` as scheduler needs (``-1``: any thread)."""
    out: hostsched.Needs = []
    for item in needs:
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and type(item[1]) is str):
            continue
        who, why = item
        out.append((threads.get(who, "any") if type(who) is int else "any", why[:300]))
    return out


#: What a program's clock read costs (``time.time``, ``time.monotonic``, ...): a real
#: ``clock_gettime`` through Python takes about 50 ns, and a read that moves time on a little
#: keeps two reads around pure Python work from ever being equal.
CLOCK_READ_NS = 50


class Resolver:
    """How a transport names threads on the wire: ``thread(ref)`` is the HostThread of a
    token (None: unknown), ``python(ref)`` the Python thread of a reference to one, and
    ``token(th)`` the token that names ``th`` to the program."""

    def thread(self, ref: Any) -> HostThread | None:
        """The HostThread a token names (in-process: the token is the HostThread)."""
        return ref if isinstance(ref, HostThread) else None

    def python(self, ref: Any) -> threading.Thread | None:
        """The Python thread a reference names (in-process: the thread itself)."""
        return ref if isinstance(ref, threading.Thread) else None

    def token(self, th: HostThread) -> Any:
        """The token naming ``th`` (in-process: the HostThread)."""
        return th


def late(op: str) -> Any:
    """The answer to an operation of a thread the session does not know (one left running
    by a session that ended): a wait ends the thread quietly, anything else does nothing."""
    if op == "wait":
        raise DeadlockError("the session ended while this thread waited", [], quiet=True)
    return (-1, 0) if op == "begin" else 0 if op == "clock" else None


def handle(s: Session, th: HostThread, op: str, args: list[Any] | tuple[Any, ...], file: str,
           line: int, names: Resolver) -> Any:
    """Carry out one host operation of the program's primitives (see the module notes).

    ``op`` and its arguments, as the transports send them:

    * ``begin (name, label) -> cid``; ``wait (cid, what, needs, timeout_ns, wakes) ->
      (why, clock)``; ``done (cid, edges, wakes) -> clock``; ``wake (tokens)``;
    * ``start (thread, name) -> token``; ``enter ()``; ``leave ()``;
      ``join (thread, timeout_ns) -> True | False | None`` (None: not followed here);
    * ``sleep (ns) -> clock``; ``clock () -> ns``; ``out ()``; ``read (fd)``.

    Raises:
        SyncError: malformed arguments or an unknown operation (a bug, or a forged call).
        DeadlockError: an untimed ``wait`` or ``join`` that nothing can ever end.
    """
    def ints(v: Any) -> list[int]:
        if not isinstance(v, (list, tuple)) or not all(type(x) is int for x in v):
            raise SyncError(f"{op}: expected a list of ints")
        return list(v)

    def threads_of(v: Any) -> list[HostThread]:
        if not isinstance(v, (list, tuple)):
            raise SyncError(f"{op}: expected a list of threads")
        out = [names.thread(x) for x in v]
        return [t for t in out if t is not None and t is not th]

    if not th.controlled and op not in ("wake", "clock", "start", "join"):
        return late(op)  # a thread outside the schedule: its waits are the OS's
    if op == "begin":
        name, label = args
        if type(name) is not str or type(label) is not str:
            raise SyncError("begin takes (name, label)")
        return begin(s, th, name, label[:200], file, line), th.clock
    if op == "wait":
        cid, what, needs, timeout_ns, wakes = args
        if type(cid) is not int or type(what) is not str or type(timeout_ns) is not int:
            raise SyncError("wait takes (cid, what, needs, timeout_ns, wakes)")
        need = [(names.thread(w) if w is not None else None, why) for w, why in needs] \
            if isinstance(needs, (list, tuple)) else []
        resolved: hostsched.Needs = [(w if w is not None else "any", str(why)[:300])
                                     for w, why in need]
        woke = threads_of(wakes)
        if woke:
            hostsched.wake(s, woke, th.clock)
        why = wait(s, th, cid, what[:200], resolved, timeout_ns)
        if why in (hostsched.WOKE_DEADLOCK, hostsched.WOKE_WATCHDOG):
            watched = why == hostsched.WOKE_WATCHDOG
            err = waits.deadlock(s, th, cid, what, resolved,
                                 waits.WATCHDOG_WHY.format(s.watchdog) if watched
                                 else waits.explain(s, th, resolved), stacks=watched)
            s.api_exit(th, cid, 0)
            raise err
        if why == hostsched.WOKE_CLOSED:  # the program is over: the thread ends quietly
            err = waits.deadlock(s, th, cid, what, resolved,
                                 "the session was closed while this thread waited", quiet=True)
            s.api_exit(th, cid, 0)
            raise err
        return (why, th.clock)
    if op == "done":
        cid, edges, wakes = args
        if type(cid) is not int or not isinstance(edges, (list, tuple)):
            raise SyncError("done takes (cid, edges, wakes)")
        pairs = [(e[0], e[1]) for e in edges
                 if isinstance(e, (list, tuple)) and len(e) == 2 and type(e[1]) is str]
        return done(s, th, cid, pairs, threads_of(wakes))
    if op == "wake":
        (tokens,) = args
        hostsched.wake(s, threads_of(tokens), s.sched.frontier)
        return None
    if op == "start":
        ref, _name = args
        child = names.python(ref)
        if child is None:
            raise SyncError("start takes a thread")
        cid = s.api_enter("threading.Thread.start", s.profile.py_sync_ns, (str(_name),), "",
                          file, line)[1]
        new = start(s, th, cid, child)
        s.api_exit(th, cid, 0)
        return names.token(new)
    if op == "enter":
        hostsched.enter(s, th)
        cid = s.api_enter("threading.Thread.begin", 0, (), "", file, line)[1]
        enter(s, th, cid)
        s.api_exit(th, cid, 0)
        return None
    if op == "leave":
        cid = s.api_enter("threading.Thread.end", 0, (), "", file, line)[1]
        leave(s, th, cid)
        return None
    if op == "join":
        ref, timeout_ns = args
        target_thread = names.python(ref)
        target = s.threads.get(target_thread) if target_thread is not None else None
        if target is None or not target.controlled or type(timeout_ns) is not int:
            return None
        cid = s.api_enter("threading.Thread.join", s.profile.py_sync_ns, (target.label(),), "",
                          file, line)[1]
        try:
            ok = join(s, th, cid, target, timeout_ns)
        finally:
            s.api_exit(th, cid, 0)
        return ok
    if op == "sleep":
        (ns,) = args
        if type(ns) is not int or ns < 0:
            raise SyncError("sleep takes ns >= 0")
        cid = s.api_enter("time.sleep", 0, (ns,), "", file, line)[1]
        sleep(s, th, cid, ns)
        s.api_exit(th, cid, 0)
        return th.clock
    if op == "read":
        (fd,) = args
        if type(fd) is not int or fd < 0:
            raise SyncError("read takes an fd")
        read(s, th, fd, file, line)
        return None
    if op == "forget":
        (token,) = args
        lost = names.thread(token)
        if lost is not None and lost.turn == hostsched.READY:
            hostsched.exit_thread(s, lost)
        return None
    if op == "clock":
        th.clock += CLOCK_READ_NS
        return th.clock
    if op == "out":
        hostsched.step_out(s, th)
        return None
    raise SyncError(f"unknown host operation {op!r}")
