"""The host schedule (issue 25): threads take turns in virtual time, reproducibly.

A threaded program gives one trace however often it runs, another seed another interleaving
that the seed replays; Python's own synchronization orders the threads (edges in the trace,
findings silenced by them); timed waits end in virtual time; a program blocked on Python
waits is a deadlock that names them; code that never reaches a scheduling point is taken
out of the schedule by the fallback, and the trace says so.
"""

from __future__ import annotations

import hashlib
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import acl_lab
from acl_lab import DeadlockError
from acl_lab.constants import ACL_ERROR_RT_REPORT_TIMEOUT
from acl_lab.runtime import rawsync
from acl_lab.runtime.kinds import HostEdge
from acl_lab.runtime.session import Session, current_session
from acl_lab.tracer.trace import Trace
from tests.helpers import ok

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
N = 4096
H2D, D2H = 1, 2


@pytest.fixture
def acl() -> Iterator[ModuleType]:
    """The emulated module, with the program's threads under the host schedule."""
    mod = acl_lab.install()
    yield mod
    acl_lab.uninstall()


def digest(trace: Trace) -> str:
    """A hash of every table of ``trace`` and its strings."""
    h = hashlib.sha256()
    for name, table in trace.tables.items():
        h.update(name.encode())
        for col in table:
            h.update(np.ascontiguousarray(table[col]).tobytes())
    h.update("\0".join(trace.strings).encode())
    return h.hexdigest()


def run(program: Callable[[ModuleType], Any], acl: ModuleType, seed: int = 0,
        **kwargs: Any) -> tuple[Trace, Any]:
    """``program(acl)`` in a fresh session with ``seed``: (trace, what it returned)."""
    with Session(seed=seed, **kwargs) as s:
        out = program(acl)
        return s.finish(), out


def workers(acl: ModuleType) -> list[tuple[int, int]]:
    """Three workers fed by a Queue, sharing one context, a Lock, an Event and sleeps."""
    assert acl.init() == 0 and acl.rt.set_device(0) == 0
    ctx = ok(acl.rt.get_context())
    q: queue.Queue[int | None] = queue.Queue()
    lock, go = threading.Lock(), threading.Event()
    results: list[tuple[int, int]] = []

    def work(k: int) -> None:
        assert acl.rt.set_context(ctx) == 0
        stream = ok(acl.rt.create_stream())
        host = ok(acl.rt.malloc_host(N))
        dev = ok(acl.rt.malloc(N, 0))
        go.wait()
        while (item := q.get()) is not None:
            for _ in range(1 + item % 3):
                assert acl.rt.memcpy_async(dev, N, host, N, H2D, stream) == 0
            assert acl.rt.synchronize_stream(stream) == 0
            with lock:
                results.append((k, item))
            time.sleep(1e-5 * (item % 4))
        for p in (dev,):
            assert acl.rt.free(p) == 0
        assert acl.rt.free_host(host) == 0
        assert acl.rt.destroy_stream(stream) == 0

    threads = [threading.Thread(target=work, args=(k,), name=f"w{k}") for k in range(3)]
    for t in threads:
        t.start()
    for i in range(12):
        q.put(i)
    go.set()
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
    return results


# ----------------------------------------------------------------------------- replay
def test_one_threaded_program_gives_one_trace(acl: ModuleType) -> None:
    """Twenty runs of the same threaded program: one trace, one output, no finding."""
    seen = {(digest(tr), tuple(out)) for tr, out in (run(workers, acl) for _ in range(20))}
    assert len(seen) == 1
    trace, out = run(workers, acl)
    assert sorted(i for _, i in out) == list(range(12))
    assert len({k for k, _ in out}) == 3  # every worker took items
    assert trace.findings() == []


def test_seeds_give_other_interleavings_and_a_seed_replays(acl: ModuleType) -> None:
    """Seed 0 and seed 1 order the workers differently; running seed 1 again replays it."""
    zero, one, again = (run(workers, acl, seed=s) for s in (0, 1, 1))
    assert zero[1] != one[1] and digest(zero[0]) != digest(one[0])
    assert one[1] == again[1] and digest(one[0]) == digest(again[0])


PROGRAM = REPO / "tests" / "programs" / "queue_workers.py"


def test_runs_in_separate_processes_agree(tmp_path: Path) -> None:
    """``acl-lab run`` of a threaded program in three processes (each with its own hash
    seed): the same output and the same trace file, byte for byte."""
    outs, traces = set(), set()
    for k in range(3):
        trace = tmp_path / f"t{k}.acltrace"
        env = {**os.environ, "PYTHONHASHSEED": str(k + 1)}
        r = subprocess.run([sys.executable, "-m", "acl_lab", "run", "--quiet", "--trace",
                            str(trace), str(PROGRAM)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=240)
        assert r.returncode == 0, r.stderr
        outs.add(r.stdout)
        traces.add(trace.read_bytes())
    assert len(outs) == 1 and len(traces) == 1


# ----------------------------------------------------------------------------- edges
def producer_consumer(order: Callable[[], tuple[Callable[[], None], Callable[[], None]]] | None
                      ) -> Callable[[ModuleType], bytes]:
    """A producer copies in on stream 1 and records an event; a consumer makes stream 2
    wait on it and copies out. ``order()`` gives (after_record, before_wait) hooks that order
    the two threads, or None: nothing does."""
    def program(acl: ModuleType) -> bytes:
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        ctx = ok(acl.rt.get_context())
        ev = ok(acl.rt.create_event())
        dev = ok(acl.rt.malloc(N, 0))
        src = ok(acl.rt.malloc_host(N))
        dst = ok(acl.rt.malloc_host(N))
        assert acl.rt.memset(src, N, 7, N) == 0
        assert acl.rt.memset(dst, N, 0, N) == 0
        after, before = order() if order is not None else (lambda: None, lambda: None)

        def producer() -> None:
            assert acl.rt.set_context(ctx) == 0
            s1 = ok(acl.rt.create_stream())
            assert acl.rt.memcpy_async(dev, N, src, N, H2D, s1) == 0
            assert acl.rt.record_event(ev, s1) == 0
            after()
            assert acl.rt.synchronize_stream(s1) == 0
            assert acl.rt.destroy_stream(s1) == 0

        def consumer() -> None:
            assert acl.rt.set_context(ctx) == 0
            s2 = ok(acl.rt.create_stream())
            before()
            acl.rt.stream_wait_event(s2, ev)
            assert acl.rt.memcpy_async(dst, N, dev, N, D2H, s2) == 0
            assert acl.rt.synchronize_stream(s2) == 0
            assert acl.rt.destroy_stream(s2) == 0

        ts = [threading.Thread(target=f, name=f.__name__) for f in (producer, consumer)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        got = acl.util.ptr_to_bytes(dst, N)
        for p in (src, dst):
            assert acl.rt.free_host(p) == 0
        assert acl.rt.free(dev) == 0 and acl.rt.destroy_event(ev) == 0
        assert acl.rt.reset_device(0) == 0 and acl.finalize() == 0
        return bytes(got)

    return program


def _event() -> tuple[Callable[[], None], Callable[[], None]]:
    e = threading.Event()
    return e.set, lambda: e.wait() and None


def _queue() -> tuple[Callable[[], None], Callable[[], None]]:
    q: queue.Queue[int] = queue.Queue()
    return lambda: q.put(1), lambda: q.get() and None


def _semaphore() -> tuple[Callable[[], None], Callable[[], None]]:
    s = threading.Semaphore(0)
    return s.release, lambda: s.acquire() and None


def _condition() -> tuple[Callable[[], None], Callable[[], None]]:
    c, done = threading.Condition(), []

    def after() -> None:
        with c:
            done.append(1)
            c.notify_all()

    def before() -> None:
        with c:
            c.wait_for(lambda: done)

    return after, before


def _barrier() -> tuple[Callable[[], None], Callable[[], None]]:
    b = threading.Barrier(2)
    return lambda: b.wait() and None, lambda: b.wait() and None


def _lock_handoff() -> tuple[Callable[[], None], Callable[[], None]]:
    lock = threading.Lock()
    lock.acquire()  # held by the main thread until the producer releases it
    return lock.release, lambda: lock.acquire() and None


#: primitive -> (the hooks that order the threads, the edge kinds that can carry it: a
#: Condition's wait that finds the predicate true at once is ordered by its lock alone)
def _lifo_queue() -> tuple[Callable[[], None], Callable[[], None]]:
    q: queue.LifoQueue[int] = queue.LifoQueue()
    return lambda: q.put(1), lambda: q.get() and None


def _priority_queue() -> tuple[Callable[[], None], Callable[[], None]]:
    q: queue.PriorityQueue[int] = queue.PriorityQueue()
    return lambda: q.put(1), lambda: q.get() and None


ORDERINGS = {"Event": (_event, {HostEdge.EVENT}), "Queue": (_queue, {HostEdge.QUEUE}),
             "LifoQueue": (_lifo_queue, {HostEdge.QUEUE}),
             "PriorityQueue": (_priority_queue, {HostEdge.QUEUE}),
             "Semaphore": (_semaphore, {HostEdge.SEMAPHORE}),
             "Condition": (_condition, {HostEdge.NOTIFY, HostEdge.LOCK}),
             "Barrier": (_barrier, {HostEdge.BARRIER}), "Lock": (_lock_handoff, {HostEdge.LOCK})}


@pytest.mark.parametrize("primitive", sorted(ORDERINGS))
def test_each_primitive_orders_the_wait_after_the_record(acl: ModuleType,
                                                         primitive: str) -> None:
    """With the producer's signal before the consumer's wait, under several seeds: the
    data arrives, the trace holds the primitive's edge, and no finding says otherwise."""
    make, kinds = ORDERINGS[primitive]
    for seed in range(4):
        trace, got = run(producer_consumer(make), acl, seed=seed)
        assert got == bytes([7]) * N, seed
        assert kinds & set(trace.host_edges["kind"].tolist()), seed
        assert [f.kind for f in trace.findings()] == [], seed


def test_without_an_ordering_the_wait_is_reported_on_every_seed(acl: ModuleType) -> None:
    """Nothing orders the consumer's wait after the record: the finding is there whichever
    thread went first, also when the data happened to arrive."""
    arrived = set()
    for seed in range(8):
        trace, got = run(producer_consumer(None), acl, seed=seed)
        arrived.add(got == bytes([7]) * N)
        found = [f for f in trace.findings() if f.kind == "wait_before_record"]
        assert found, seed
    assert arrived == {True, False}  # the schedule decided the data; the finding did not


def test_start_and_join_are_edges(acl: ModuleType) -> None:
    """A thread's first row comes after its start, its end before the join that saw it."""
    def program(acl: ModuleType) -> None:
        t = threading.Thread(target=lambda: None, name="t")
        t.start()
        t.join()

    trace, _ = run(program, acl)
    he = trace.host_edges
    kinds = {(trace.call_name(int(a)), trace.call_name(int(b)), int(k))
             for a, b, k in zip(he["src"], he["dst"], he["kind"], strict=True)}
    assert kinds == {("threading.Thread.start", "threading.Thread.begin", HostEdge.START),
                     ("threading.Thread.end", "threading.Thread.join", HostEdge.JOIN)}


# ----------------------------------------------------------------------------- virtual time
def test_timed_waits_end_in_virtual_time(acl: ModuleType) -> None:
    """Event.wait, Queue.get, Lock.acquire and process_report time out at their virtual
    deadline, time.sleep moves the clock, and time.monotonic reads it."""
    with Session() as s:
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        th = s.thread()
        t0 = time.monotonic()
        assert t0 == pytest.approx(th.clock / 1e9)
        c0 = th.clock
        assert threading.Event().wait(2.5) is False
        assert th.clock - c0 >= 2_500_000_000
        c1 = th.clock
        with pytest.raises(queue.Empty):
            queue.Queue().get(timeout=1.0)
        assert th.clock - c1 >= 1_000_000_000
        lock = threading.Lock()
        lock.acquire()
        c2 = th.clock
        assert lock.acquire(timeout=0.5) is False
        assert th.clock - c2 >= 500_000_000
        c3 = th.clock
        time.sleep(3)
        assert th.clock - c3 >= 3_000_000_000
        stream = ok(acl.rt.create_stream())
        tid = ok(acl.util.start_thread(lambda: None, None))
        assert acl.util.stop_thread(tid) == 0
        assert acl.rt.subscribe_report(threading.get_ident(), stream) == 0
        c4 = th.clock
        assert acl.rt.process_report(100) == ACL_ERROR_RT_REPORT_TIMEOUT
        assert th.clock - c4 >= 100_000_000
        # the program's clock is the thread's virtual clock: it moved by every wait above
        assert time.monotonic() == pytest.approx(th.clock / 1e9, abs=1e-6)
        assert th.clock > c0 + 7_000_000_000
        assert acl.rt.unsubscribe_report(threading.get_ident(), stream) == 0
        s.finish()


def test_a_timed_wait_ends_when_its_condition_holds_first(acl: ModuleType) -> None:
    """A waiter with a long timeout is woken at the virtual time of the set, not at its
    deadline."""
    with Session() as s:
        ev = threading.Event()

        def setter() -> None:
            time.sleep(0.25)
            ev.set()

        t = threading.Thread(target=setter)
        main = s.thread()
        c0 = main.clock
        t.start()
        assert ev.wait(30) is True
        assert 250_000_000 <= main.clock - c0 < 1_000_000_000
        t.join()
        s.finish()


# ----------------------------------------------------------------------------- deadlocks
def test_a_deadlock_through_python_waits_is_explained(acl: ModuleType) -> None:
    """The main thread joins B; B waits on an Event nobody sets: a DeadlockError in the
    join, whose finding names both waits."""
    with Session() as s:
        ev = threading.Event()
        b = threading.Thread(target=ev.wait, name="B")
        b.start()
        with pytest.raises(DeadlockError) as info:
            b.join()
        trace = s.finish()
    text = info.value.summary
    assert "Thread.join of thread 1 (B)" in text and "Event.wait" in text
    assert "nobody sets the event" in text
    (f,) = [f for f in trace.findings() if f.kind == "deadlock"]
    assert "Thread.join" in f.message and "Event.wait" in f.message
    rawsync.join(b, 60)  # released when the session closed, it ends without an error
    assert not b.is_alive()


def test_locks_taken_in_opposite_orders_deadlock(acl: ModuleType) -> None:
    """Two threads each holding one lock and wanting the other's: found at once."""
    with Session() as s:
        a, b = threading.Lock(), threading.Lock()
        both = threading.Barrier(2)

        def one(first: Any, second: Any) -> None:
            with first:
                both.wait()
                with second:
                    pass

        t1 = threading.Thread(target=one, args=(a, b), name="ab")
        t2 = threading.Thread(target=one, args=(b, a), name="ba")
        t1.start()
        t2.start()
        with pytest.raises(DeadlockError) as info:
            t1.join()
        s.finish()
    assert "Lock.acquire" in info.value.report
    assert "the lock is held" in info.value.report


# ----------------------------------------------------------------------------- the fallback
def test_a_busy_wait_finishes_and_the_trace_says_the_schedule_left_control(
        acl: ModuleType) -> None:
    """A thread spinning on a plain variable never reaches a scheduling point: the watchdog
    preempts it, the thread that sets the variable runs, the program ends, and the trace has
    a schedule_left_control finding at the spinning line."""
    flag = {"set": False}

    def program(acl: ModuleType) -> int:
        assert acl.init() == 0

        def setter() -> None:
            acl.rt.get_run_mode()
            flag["set"] = True

        t = threading.Thread(target=setter)
        t.start()
        spins = 0
        while not flag["set"]:  # the busy-wait
            spins += 1
        t.join()
        assert acl.finalize() == 0
        return spins

    trace, spins = run(program, acl, preempt_s=0.05)
    assert flag["set"] and spins > 0
    (f,) = [f for f in trace.findings() if f.kind == "schedule_left_control"]
    assert f.file == __file__ and "busy-wait" in f.message
    loop = program.__code__.co_firstlineno + 10  # the while line and the line inside it
    assert f.line in (loop, loop + 1)


def test_threads_outside_the_session_are_never_made_to_wait(acl: ModuleType) -> None:
    """A thread that ran before the session (a kernel's own, say) calls in while the
    program's threads take turns: it is not part of the schedule and never waits for one."""
    calls: list[int] = []
    # real events: a timed wait of the program's is virtual, and the outsider acts in real
    # time (its set would count only if it came before the deadline was the next thing)
    go, done = rawsync.Event(), rawsync.Event()

    def outsider() -> None:
        go.wait()
        calls.append(acl.rt.get_run_mode()[1])
        done.set()

    t = threading.Thread(target=outsider, name="outsider")
    t.start()  # before the session: a background thread
    with Session() as s:
        assert acl.init() == 0
        worker = threading.Thread(target=lambda: [acl.rt.get_run_mode() for _ in range(50)])
        worker.start()
        go.set()
        worker.join()
        assert done.wait(60)
        names = {s.threads[th.pythread].name: th.controlled for th in s.thread_list}
        s.finish()
    t.join(60)
    assert calls == [0]
    assert names["outsider"] is False and names["MainThread"] is True


# ----------------------------------------------------------------------------- pipes
def pipe_pair(acl: ModuleType) -> list[bytes]:
    """A writer thread sends three messages through a pipe between ACL calls and closes it;
    a reader thread reads to end of file. Returns what the reader got."""
    assert acl.init() == 0
    r, w = os.pipe()
    got: list[bytes] = []

    def writer() -> None:
        for k in range(3):
            acl.rt.get_run_mode()
            os.write(w, b"msg%d;" % k)
        os.close(w)

    def reader() -> None:
        while chunk := os.read(r, 64):
            got.append(chunk)
            acl.rt.get_run_mode()

    threads = [threading.Thread(target=reader, name="reader"),
               threading.Thread(target=writer, name="writer")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.close(r)
    assert acl.finalize() == 0
    return got


def test_a_read_of_a_pipe_waits_in_the_schedule(acl: ModuleType) -> None:
    """A thread reading an empty pipe gives up its turn (an os.read row) instead of holding
    it until the fallback preempts it; the run is one trace every time."""
    traces = [run(pipe_pair, acl) for _ in range(3)]
    for trace, got in traces:
        assert b"".join(got) == b"msg0;msg1;msg2;"
        names = [trace.call_name(i) for i in range(trace.calls.rows)]
        assert "os.read" in names
        assert not [f for f in trace.findings() if f.kind == "schedule_left_control"]
    assert len({digest(t) for t, _ in traces}) == 1


def test_a_pipe_another_process_writes_is_waited_for_not_a_deadlock(acl: ModuleType) -> None:
    """Every thread waits, but one waits on a pipe a child process writes later: that is not
    a deadlock; the reader goes on once the child's bytes arrive."""
    def program(acl: ModuleType) -> bytes:
        assert acl.init() == 0
        child = subprocess.Popen([sys.executable, "-c",
                                  "import time; time.sleep(0.3); print('late', flush=True)"],
                                 stdout=subprocess.PIPE)
        assert child.stdout is not None
        fd = child.stdout.fileno()
        got: list[bytes] = []

        def reader() -> None:
            while chunk := os.read(fd, 64):
                got.append(chunk)

        t = threading.Thread(target=reader)
        t.start()
        t.join()  # the main thread waits too: only the child can end the reader's wait
        child.wait()
        child.stdout.close()
        assert acl.finalize() == 0
        return b"".join(got)

    trace, out = run(program, acl, watchdog=0.1)  # quiet for longer than the watchdog
    assert out == b"late\n"
    assert not [f for f in trace.findings() if f.kind in ("deadlock", "schedule_left_control")]


def test_where_the_programs_fds_are_out_of_sight_a_read_leaves_the_schedule(
        acl: ModuleType) -> None:
    """In acl-lab grade's sandbox the emulator cannot look at the program's fds: a read that
    would block takes the thread out of the schedule at once (no fallback wait), the writer
    runs, the read returns, and the trace says where control was left."""
    def program(acl: ModuleType) -> bytes:
        assert acl.init() == 0
        s = current_session()
        assert s is not None
        s.own_fds = False
        r, w = os.pipe()

        def writer() -> None:
            acl.rt.get_run_mode()
            os.write(w, b"x")
            os.close(w)

        t = threading.Thread(target=writer, name="writer")
        t.start()
        data = os.read(r, 1)  # nothing yet: the main thread would block holding its turn
        t.join()
        os.close(r)
        assert acl.finalize() == 0
        return data

    trace, data = run(program, acl, preempt_s=600.0)  # the fallback alone: ten minutes
    assert data == b"x"
    (f,) = [f for f in trace.findings() if f.kind == "schedule_left_control"]
    assert "sandbox" in f.message and f.file == __file__
    assert "os.read" not in {trace.call_name(i) for i in range(trace.calls.rows)}


def test_finishing_from_another_thread_never_waits_for_a_turn(acl: ModuleType) -> None:
    """A grader's (or the pipe server's) thread finishes a session whose program left a
    device open while the program's thread still has the turn: the teardown's calls do not
    wait for it (the schedule ends first), so nothing is preempted and the leak is released
    in acl_lab.exit."""
    with Session(preempt_s=600.0) as s:
        assert acl.init() == 0 and acl.rt.set_device(0) == 0
        ok(acl.rt.malloc(N, 0))  # left for the teardown
        out: list[Trace] = []
        finisher = threading.Thread(target=lambda: out.append(s.finish()), name="grader")
        finisher._acl_lab_external = True  # type: ignore[attr-defined]  # not the program's
        finisher.start()
        rawsync.join(finisher, 120)  # the program's thread keeps its turn meanwhile
        assert out, "finish waited for the program's turn"
    (trace,) = out
    assert not [f for f in trace.findings() if f.kind == "schedule_left_control"]
    assert "acl_lab.exit" in {trace.call_name(i) for i in range(trace.calls.rows)}


def test_list_queues_keep_their_order_in_the_schedule(acl: ModuleType) -> None:
    """queue.LifoQueue hands out the last item first and queue.PriorityQueue the smallest,
    as the standard library's do; a get on an empty one waits in the schedule."""
    lifo, prio = queue.LifoQueue(), queue.PriorityQueue()
    assert type(lifo).__module__ == type(prio).__module__ == "acl_lab.pythreads"
    got: list[int] = []

    def consumer() -> None:
        got.extend(lifo.get() for _ in range(3))
        got.extend(prio.get() for _ in range(3))
        got.append(lifo.get())  # empty now: waits for the put below

    with Session():
        for item in (1, 2, 3):
            lifo.put(item)
        for item in (5, 3, 4):
            prio.put(item)
        t = threading.Thread(target=consumer)
        t.start()
        time.sleep(0.001)
        lifo.put(9)
        t.join()
    assert got == [3, 2, 1, 3, 4, 5, 9]
    assert lifo.qsize() == prio.qsize() == 0
