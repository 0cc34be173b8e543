"""Faults: out of memory, raising callbacks and workers, dying threads, Ctrl-C in a wait.

Every case checks two things besides the fault itself: the session stays usable (or finalizes
cleanly), and the trace is complete: every call the test made appears in the trace's call
table, in its thread, in order, with the return code the program got (-1 for a call that
raised). ``CallLog`` keeps the program's side of that comparison.
"""

from __future__ import annotations

import _thread
import dataclasses
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

import acl_lab
from acl_lab import DeadlockError
from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_DDR_MEM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_MEMORY_ALLOCATION,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.kinds import Turn
from acl_lab.runtime.memory import malloc_size
from acl_lab.runtime.profiles import get_profile
from acl_lab.runtime.session import Session
from acl_lab.tracer.trace import Trace

pytestmark = pytest.mark.timeout(60)

KiB = 1 << 10
MiB = 1 << 20
H2D = ACL_MEMCPY_HOST_TO_DEVICE
NORMAL = ACL_MEM_MALLOC_NORMAL_ONLY
OOM = ACL_ERROR_RT_MEMORY_ALLOCATION
#: A squeezed device: 1 MiB of device memory (DVPP included) and 256 KiB of pinned host memory.
DEVICE_CAP = 1 * MiB
PINNED_CAP = 256 * KiB
SMALL = dataclasses.replace(get_profile("Ascend310P3"), memory_bytes=DEVICE_CAP + 64 * KiB,
                            reserved_bytes=64 * KiB, host_pinned_limit=PINNED_CAP)


# --------------------------------------------------------------------------- helpers
class CallLog:
    """Every pyACL call a test makes, per thread name, with the return code it got."""

    def __init__(self) -> None:
        self.calls: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self._lock = threading.Lock()

    def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn(*args)`` and log ``(api name, ret)``; a call that raises logs -1.

        The entry is made when the call starts (as the trace numbers calls), so the calls a
        callback makes inside process_report come after that process_report.
        """
        name = fn.__acl_name__  # type: ignore[attr-defined]
        with self._lock:
            mine = self.calls[threading.current_thread().name]
            mine.append((name, -2))
            slot = len(mine) - 1
        ret = -1
        try:
            result = fn(*args)
            ret = result if isinstance(result, int) else result[-1]
        finally:
            with self._lock:
                mine[slot] = (name, ret)
        return result

    def total(self) -> int:
        """Calls logged in every thread."""
        return sum(len(v) for v in self.calls.values())

    def assert_complete(self, trace: Trace) -> None:
        """The trace holds exactly the logged calls, per thread, in order, with their rets."""
        names = [trace.string(int(i)) for i in trace.threads["name"]]
        got: dict[str, list[tuple[str, int]]] = defaultdict(list)
        c = trace.calls
        host_ops = trace.host_op_mask()
        for cid in range(c.rows):
            api = trace.call_name(cid)
            if api.startswith("acl_lab.") or host_ops[cid]:
                continue  # the session's own teardown, the program's threading operations
            got[names[int(c["thread"][cid])]].append((api, int(c["ret"][cid])))
            assert int(c["end_ns"][cid]) >= int(c["start_ns"][cid]), f"call {cid} never ended"
        assert dict(got) == dict(self.calls)


@pytest.fixture
def acl_mod() -> Iterator[ModuleType]:
    """The emulated ``acl`` module (each test binds its own Session)."""
    mod = acl_lab.install()
    yield mod
    acl_lab.uninstall()


def wait_until(pred: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``pred`` (real time) until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() >= deadline:
            pytest.fail(f"condition never held in {timeout:g} s (hang guard)")
        time.sleep(0.002)


def main_state(s: Session) -> str:
    """Where the main thread stands in the host schedule: "running" (its turn), "blocked" (in
    a wait), ... (``Turn``'s labels)."""
    with s.lock:
        th = s.threads.get(threading.main_thread())
        return Turn(th.turn).label if th is not None else ""


class Reporter:
    """A start_thread worker that runs callbacks (process_report) until stopped."""

    def __init__(self, acl: ModuleType, log: CallLog, ctx: int) -> None:
        self.acl, self.log, self.ctx = acl, log, ctx
        self.stop = threading.Event()
        self.tid = int(log(acl.util.start_thread, self.body, [ctx])[0])

    def body(self, args: list[int]) -> None:
        """The thread: set the context, then process reports until told to stop."""
        self.log(self.acl.rt.set_context, args[0])
        while not self.stop.is_set():
            self.log(self.acl.rt.process_report, 20)

    def join(self) -> int:
        """Stop the loop and join the thread with stop_thread (its ret)."""
        self.stop.set()
        return int(self.log(self.acl.util.stop_thread, self.tid))


def start(acl: ModuleType, log: CallLog) -> tuple[int, int]:
    """init, set_device(0), a stream: returns (context, stream)."""
    assert log(acl.init) == ACL_SUCCESS
    assert log(acl.rt.set_device, 0) == ACL_SUCCESS
    ctx, ret = log(acl.rt.get_context)
    assert ret == ACL_SUCCESS
    stream, ret = log(acl.rt.create_stream)
    assert ret == ACL_SUCCESS
    return int(ctx), int(stream)


def finish(acl: ModuleType, log: CallLog, stream: int) -> None:
    """Destroy the stream, reset the device and finalize: every call must succeed."""
    assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
    assert log(acl.rt.destroy_stream, stream) == ACL_SUCCESS
    assert log(acl.rt.reset_device, 0) == ACL_SUCCESS
    assert log(acl.finalize) == ACL_SUCCESS


def kinds(trace: Trace) -> set[str]:
    """The kinds of the trace's findings."""
    return {f.kind for f in trace.findings()}


# --------------------------------------------------------------------------- out of memory
def test_out_of_memory_at_random_points(acl_mod: ModuleType) -> None:
    """On a squeezed device, random allocations fail with 207001 exactly when the capacity
    is exceeded (device, DVPP and pinned); after each failure the reported free memory is
    right and the program goes on; the trace has every call with its code."""
    acl, log, rng = acl_mod, CallLog(), random.Random(2024)
    with Session(profile=SMALL, watchdog=10.0) as s:
        _, stream = start(acl, log)
        dev: dict[int, int] = {}        # device or DVPP pointer -> accounted bytes
        dvpp: set[int] = set()
        host: dict[int, int] = {}       # pinned pointer -> size
        used = pinned = ooms = probes = 0

        def alloc(fn: Callable[..., Any], *args: Any, cost: int, room: int) -> int | None:
            nonlocal ooms
            ptr, ret = log(fn, *args)
            if cost > room:
                assert ret == OOM, (fn.__name__, args, cost, room)
                ooms += 1
                return None
            assert ret == ACL_SUCCESS
            return int(ptr)

        for _ in range(1500):
            op = rng.random()
            size = rng.choice([rng.randint(1, 4 * KiB), rng.randint(4 * KiB, 300 * KiB)])
            if op < 0.35:
                ptr = alloc(acl.rt.malloc, size, NORMAL, cost=malloc_size(size),
                            room=DEVICE_CAP - used)
                if ptr is not None:
                    dev[ptr] = malloc_size(size)
                    used += dev[ptr]
            elif op < 0.45:
                ptr = alloc(acl.media.dvpp_malloc, size, cost=malloc_size(size),
                            room=DEVICE_CAP - used)
                if ptr is not None:
                    dev[ptr] = malloc_size(size)
                    dvpp.add(ptr)
                    used += dev[ptr]
            elif op < 0.53:
                ptr = alloc(acl.rt.malloc_host, size, cost=size, room=PINNED_CAP - pinned)
                if ptr is not None:
                    host[ptr] = size
                    pinned += size
                    assert log(acl.rt.memset, ptr, size, 7, size) == ACL_SUCCESS
            elif op < 0.75 and dev:
                # Frees wait for queued copies first (a free does not wait by itself).
                assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
                ptr = rng.choice(sorted(dev))
                free = acl.media.dvpp_free if ptr in dvpp else acl.rt.free
                assert log(free, ptr) == ACL_SUCCESS
                used -= dev.pop(ptr)
                dvpp.discard(ptr)
            elif op < 0.82 and host:
                assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
                ptr = rng.choice(sorted(host))
                assert log(acl.rt.free_host, ptr) == ACL_SUCCESS
                pinned -= host.pop(ptr)
            elif dev and host:
                d, h = rng.choice(sorted(dev)), rng.choice(sorted(host))
                n = min(host[h], dev[d] - 64, 4 * KiB)
                assert log(acl.rt.memcpy_async, d, n, h, n, H2D, stream) == ACL_SUCCESS
            if ooms > probes:  # right after a failure: the device reports the truth
                probes = ooms
                free_b, total, ret = log(acl.rt.get_mem_info, ACL_DDR_MEM)
                assert (free_b, total, ret) == (DEVICE_CAP - used, DEVICE_CAP, ACL_SUCCESS)
        assert ooms >= 50
        assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
        for ptr in sorted(dev):
            assert log(acl.media.dvpp_free if ptr in dvpp else acl.rt.free, ptr) == 0
        for ptr in sorted(host):
            assert log(acl.rt.free_host, ptr) == ACL_SUCCESS
        assert s.memory.devices[0].used == 0 and s.memory.pinned_used == 0
        finish(acl, log, stream)
        trace = s.trace()
    log.assert_complete(trace)
    assert int((trace.calls["ret"] == OOM).sum()) == ooms
    assert not kinds(trace) & {"leak", "double_free", "invalid_free", "free_in_flight"}
    print(f"\nout of memory: {ooms} allocations refused, {log.total()} calls traced")


# --------------------------------------------------------------------------- callbacks
def test_exception_in_a_callback_is_reported_and_the_stream_goes_on(
        acl_mod: ModuleType) -> None:
    """A blocking callback that raises is reported (a diagnostic naming the exception); it
    still releases its stream, later callbacks run and the report thread lives on."""
    acl, log, ran = acl_mod, CallLog(), []

    def good(tag: str) -> None:
        ran.append(tag)
        log(acl.rt.get_device)

    def bad(tag: str) -> None:
        ran.append(tag)
        raise ValueError(f"callback {tag} failed")

    with Session(watchdog=10.0) as s:
        ctx, stream = start(acl, log)
        rep = Reporter(acl, log, ctx)
        assert log(acl.rt.subscribe_report, rep.tid, stream) == ACL_SUCCESS
        for tag, fn in (("a", good), ("b", bad), ("c", good), ("d", bad), ("e", good)):
            assert log(acl.rt.launch_callback, fn, tag, ACL_CALLBACK_BLOCK, stream) == 0
        assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
        assert ran == ["a", "b", "c", "d", "e"]
        assert log(acl.rt.unsubscribe_report, rep.tid, stream) == ACL_SUCCESS
        assert rep.join() == ACL_SUCCESS
        finish(acl, log, stream)
        trace = s.trace()
    log.assert_complete(trace)
    assert trace.callbacks.rows == 5
    diags = zip(trace.diags["kind"], trace.diags["message"], strict=True)
    msgs = [trace.string(int(m)) for k, m in diags
            if trace.string(int(k)) == "callback_exception"]
    assert len(msgs) == 2 and all("ValueError" in m for m in msgs)
    assert "deadlock" not in kinds(trace)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_callback_raising_base_exception_releases_its_stream(
        acl_mod: ModuleType, exc: type[BaseException]) -> None:
    """A callback raising KeyboardInterrupt or SystemExit ends its report thread (stop_thread
    re-raises it as RuntimeError), but the callback did end: the stream it held goes on, so
    the waiting thread returns and the device resets cleanly (no DeadlockError)."""
    acl, log = acl_mod, CallLog()

    def dies(_: object) -> None:
        raise exc("stop from a callback")

    with Session(watchdog=10.0) as s:
        ctx, stream = start(acl, log)
        rep = Reporter(acl, log, ctx)
        assert log(acl.rt.subscribe_report, rep.tid, stream) == ACL_SUCCESS
        assert log(acl.rt.launch_callback, dies, None, ACL_CALLBACK_BLOCK, stream) == 0
        assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
        with pytest.raises(RuntimeError, match=f"exception={exc.__name__},msg=thread call"):
            rep.join()
        assert log(acl.rt.unsubscribe_report, rep.tid, stream) == ACL_SUCCESS
        finish(acl, log, stream)
        trace = s.trace()
    log.assert_complete(trace)
    assert trace.callbacks.rows == 1
    # The process_report that ran the callback raised: -1 in the report thread's rows.
    assert log.calls["acl-thread-0"][-1] == ("acl.rt.process_report", -1)


# --------------------------------------------------------------------------- worker threads
@pytest.mark.parametrize("exc", [ValueError, KeyboardInterrupt])
def test_worker_exception_is_reraised_by_stop_thread(acl_mod: ModuleType,
                                                     exc: type[BaseException]) -> None:
    """An exception in a start_thread worker is stored and re-raised by stop_thread as
    RuntimeError("exception=<Type>,msg=thread call failed;...") (pyACL's behaviour); the
    worker's calls before it are traced and the session goes on."""
    acl, log = acl_mod, CallLog()

    def body(args: list[int]) -> None:
        assert log(acl.rt.get_device)[1] == ACL_ERROR_RT_CONTEXT_NULL  # a new thread: none
        assert log(acl.rt.set_context, args[0]) == ACL_SUCCESS
        ptr, ret = log(acl.rt.malloc, 256, NORMAL)
        assert ret == ACL_SUCCESS
        assert log(acl.rt.free, ptr) == ACL_SUCCESS
        raise exc("worker gave up")

    with Session(watchdog=10.0) as s:
        ctx, stream = start(acl, log)
        tid, ret = log(acl.util.start_thread, body, [ctx])
        assert ret == ACL_SUCCESS
        with pytest.raises(RuntimeError) as info:
            log(acl.util.stop_thread, tid)
        assert str(info.value).startswith(f"exception={exc.__name__},msg=thread call failed;")
        assert isinstance(info.value.__cause__, exc)
        ptr, ret = log(acl.rt.malloc, 64, NORMAL)  # still usable
        assert ret == ACL_SUCCESS and log(acl.rt.free, ptr) == ACL_SUCCESS
        finish(acl, log, stream)
        trace = s.trace()
    log.assert_complete(trace)
    assert log.calls["MainThread"].count(("acl.util.stop_thread", -1)) == 1
    assert len(log.calls["acl-thread-0"]) == 4


def test_thread_exits_while_main_waits_on_its_callbacks(acl_mod: ModuleType) -> None:
    """The subscribed thread exits without processing the blocking callback main waits for:
    main's synchronize raises DeadlockError as soon as the thread is gone (not after the
    watchdog), naming the thread and the stream; force-destroying the stream recovers."""
    acl, log = acl_mod, CallLog()
    leave = threading.Event()

    def body(args: list[int]) -> None:
        log(acl.rt.set_context, args[0])
        leave.wait(10)  # busy elsewhere, then gone: the report is never processed

    with Session(watchdog=30.0) as s:
        ctx, stream = start(acl, log)
        tid, _ = log(acl.util.start_thread, body, [ctx])
        assert log(acl.rt.subscribe_report, tid, stream) == ACL_SUCCESS
        assert log(acl.rt.launch_callback, lambda _: None, None, ACL_CALLBACK_BLOCK,
                   stream) == ACL_SUCCESS
        releaser = threading.Timer(0.3, leave.set)
        t0 = time.monotonic()
        releaser.start()
        with pytest.raises(DeadlockError) as info:
            log(acl.rt.synchronize_stream, stream)
        waited = time.monotonic() - t0
        releaser.join()
        assert waited >= 0.25, waited  # not before the thread exits
        # released by the exit, not by the watchdog (which would attach every stack)
        assert "(watchdog)" not in info.value.summary and not info.value.stacks
        text = str(info.value)
        assert "has exited" in text and "acl-thread-0" in text and f"{stream:#x}" in text
        assert log(acl.util.stop_thread, tid) == ACL_SUCCESS
        assert log(acl.rt.destroy_stream_force, stream) == ACL_SUCCESS
        assert log(acl.rt.reset_device, 0) == ACL_SUCCESS
        assert log(acl.finalize) == ACL_SUCCESS
        trace = s.trace()
    log.assert_complete(trace)
    dead = [f for f in trace.findings() if f.kind == "deadlock"]
    assert len(dead) == 1 and "has exited" in dead[0].message


def test_keyboard_interrupt_while_blocked_in_synchronize(acl_mod: ModuleType) -> None:
    """Ctrl-C (``_thread.interrupt_main``) while the main thread waits in synchronize_stream
    for a blocking callback: KeyboardInterrupt reaches the program, the interrupted call is
    traced (-1), and once the callback returns the same stream synchronizes and the session
    finalizes cleanly."""
    acl, log = acl_mod, CallLog()
    release = threading.Event()
    with Session(watchdog=30.0) as s:

        def slow(_: object) -> None:
            wait_until(lambda: main_state(s) == "blocked")
            _thread.interrupt_main()
            release.wait(10)

        ctx, stream = start(acl, log)
        rep = Reporter(acl, log, ctx)
        assert log(acl.rt.subscribe_report, rep.tid, stream) == ACL_SUCCESS
        assert log(acl.rt.launch_callback, slow, None, ACL_CALLBACK_BLOCK, stream) == 0
        try:
            with pytest.raises(KeyboardInterrupt):
                log(acl.rt.synchronize_stream, stream)
        finally:
            release.set()
        assert main_state(s) == "running"
        assert log(acl.rt.synchronize_stream, stream) == ACL_SUCCESS
        assert log(acl.rt.unsubscribe_report, rep.tid, stream) == ACL_SUCCESS
        assert rep.join() == ACL_SUCCESS
        finish(acl, log, stream)
        trace = s.trace()
    log.assert_complete(trace)
    syncs = [r for n, r in log.calls["MainThread"] if n == "acl.rt.synchronize_stream"]
    assert syncs[:2] == [-1, ACL_SUCCESS]
    assert trace.callbacks.rows == 1 and "deadlock" not in kinds(trace)
