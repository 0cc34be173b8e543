"""Host threads and callbacks: thread-local contexts, start/stop_thread, report processing.

Facts come from docs/sources.md sections 1.6, 2.10, 5(c), 7.2, 8 and 9.1(e).
Every test that starts a thread is bounded by a timeout mark; workers wait on Events with
timeouts so a failing test cannot hang.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from acl_lab.constants import (
    ACL_CALLBACK_BLOCK,
    ACL_CALLBACK_NO_BLOCK,
    ACL_ERROR_INVALID_PARAM,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_REPORT_TIMEOUT,
    ACL_ERROR_RT_STREAM_NO_CB_REG,
    ACL_ERROR_RT_STREAM_SUBSCRIBE,
    ACL_ERROR_RT_THREAD_SUBSCRIBE,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_SUCCESS,
)
from acl_lab.runtime.kinds import TaskKind
from acl_lab.runtime.session import Session
from tests.helpers import ok

pytestmark = pytest.mark.timeout(120)

MiB = 1 << 20



def run_threads(*fns: Callable[[], Any]) -> list[Any]:
    """Run each function in its own threading.Thread; return results, re-raise failures."""
    results: list[Any] = [None] * len(fns)
    errors: list[BaseException] = []

    def wrap(i: int, fn: Callable[[], Any]) -> None:
        try:
            results[i] = fn()
        except BaseException as exc:  # re-raised in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=wrap, args=(i, f)) for i, f in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    if errors:
        raise errors[0]
    return results


class ReportWorker:
    """The sample's callback thread (acl_net.py): set_context, then loop on process_report.

    Started with acl.util.start_thread(fn, [ctx, timeout_ms]); it waits for ``go`` (set after
    subscribe_report) so it does not spin on 107012 before it has a subscription.
    """

    def __init__(self, acl: ModuleType, ctx: int, timeout_ms: int = 50) -> None:
        self.acl = acl
        self.go = threading.Event()
        self.stop = threading.Event()
        self.ident = 0
        self.name = ""
        self.rets: list[int] = []
        self.tid = ok(acl.util.start_thread(self._body, [ctx, timeout_ms]))

    def _body(self, args: list[int]) -> None:
        ctx, timeout_ms = args
        self.ident = threading.get_ident()
        self.name = threading.current_thread().name
        self.rets.append(self.acl.rt.set_context(ctx))
        self.go.wait(10)
        while not self.stop.is_set():
            self.rets.append(self.acl.rt.process_report(timeout_ms))

    def subscribe(self, stream: int) -> None:
        assert self.acl.rt.subscribe_report(self.tid, stream) == ACL_SUCCESS
        self.go.set()

    def finish(self) -> None:
        """Stop the loop and join the thread with stop_thread."""
        self.go.set()
        self.stop.set()
        assert self.acl.util.stop_thread(self.tid) == ACL_SUCCESS
        assert self.rets[0] == ACL_SUCCESS
        assert set(self.rets[1:]) <= {ACL_SUCCESS, ACL_ERROR_RT_REPORT_TIMEOUT}


# ----------------------------------------------------------------------------- contexts


def test_worker_gets_107002_then_works_after_set_context(ready: ModuleType) -> None:
    """A new thread has no context (107002) until it calls set_context with the main one."""
    ctx = ok(ready.rt.get_context())

    def worker() -> list[Any]:
        first = ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
        set_ret = ready.rt.set_context(ctx)
        ptr, ret = ready.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY)
        return [first, set_ret, ret, ready.rt.get_context(), ready.rt.free(ptr)]

    [result] = run_threads(worker)
    assert result == [(0, ACL_ERROR_RT_CONTEXT_NULL), ACL_SUCCESS, ACL_SUCCESS,
                      (ctx, ACL_SUCCESS), ACL_SUCCESS]


def test_two_threads_sharing_one_context_allocate_and_copy(ready: ModuleType) -> None:
    """Two threads that set the same context both allocate, copy and get their data back."""
    ctx = ok(ready.rt.get_context())
    barrier = threading.Barrier(2, timeout=60)
    n = 64 * 1024

    def worker(k: int) -> tuple[list[int], bool, bool]:
        rets = [ready.rt.set_context(ctx)]
        barrier.wait()
        data = bytes([k + 1]) * n
        dev, ret = ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY)
        rets.append(ret)
        rets.append(ready.rt.memcpy(dev, n, ready.util.bytes_to_ptr(data), n,
                                    ACL_MEMCPY_HOST_TO_DEVICE))
        out = bytes(n)
        rets.append(ready.rt.memcpy(ready.util.bytes_to_ptr(out), n, dev, n,
                                    ACL_MEMCPY_DEVICE_TO_HOST))
        stream, ret = ready.rt.create_stream()
        rets.append(ret)
        host, ret = ready.rt.malloc_host(n)
        rets.append(ret)
        rets.append(ready.rt.memcpy_async(host, n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST, stream))
        rets.append(ready.rt.synchronize_stream(stream))
        async_ok = ready.util.ptr_to_bytes(host, n) == data
        rets += [ready.rt.destroy_stream(stream), ready.rt.free_host(host), ready.rt.free(dev)]
        return rets, out == data, async_ok

    results = run_threads(lambda: worker(0), lambda: worker(1))
    for rets, sync_ok, async_ok in results:
        assert rets == [ACL_SUCCESS] * len(rets)
        assert sync_ok and async_ok


# ----------------------------------------------------------------------------- start / stop


def test_start_thread_passes_args_as_one_positional_argument(ready: ModuleType) -> None:
    """start_thread(fn, args) calls fn(args): a list arrives as one argument."""
    seen: list[tuple[Any, ...]] = []
    tid = ok(ready.util.start_thread(lambda *a: seen.append(a), [1, 2, 3]))
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert seen == [([1, 2, 3],)]


def test_start_thread_calls_fn_without_arguments_for_none(ready: ModuleType) -> None:
    """start_thread(fn, None) calls fn() with no argument."""
    seen: list[tuple[Any, ...]] = []
    tid = ok(ready.util.start_thread(lambda *a: seen.append(a), None))
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert seen == [()]


def test_start_thread_tid_is_the_threads_ident(ready: ModuleType) -> None:
    """The tid of start_thread is the new thread's ident (usable with subscribe_report)."""
    seen: list[int] = []
    tid = ok(ready.util.start_thread(lambda: seen.append(threading.get_ident()), None))
    assert ready.util.stop_thread(tid) == ACL_SUCCESS
    assert seen == [tid] and tid != threading.get_ident()


def test_stop_thread_reraises_the_workers_exception(ready: ModuleType) -> None:
    """If the thread raised, stop_thread raises RuntimeError("exception=...")."""

    def boom() -> None:
        raise ValueError("broken worker")

    tid = ok(ready.util.start_thread(boom, None))
    with pytest.raises(RuntimeError) as info:
        ready.util.stop_thread(tid)
    assert str(info.value).startswith("exception=")
    assert "ValueError" in str(info.value)


def test_start_thread_needs_a_callable(ready: ModuleType) -> None:
    """start_thread with a non-callable raises the binding's TypeError (its wrapper parses
    "OO" and then checks PyCallable_Check: "parameter must be callable")."""
    with pytest.raises(TypeError, match=r"^parameter must be callable$"):
        ready.util.start_thread(42, None)


# ----------------------------------------------------------------------------- report errors


def test_process_report_times_out_with_507012(ready: ModuleType) -> None:
    """process_report with nothing to process returns 507012 after its timeout."""
    stream = ok(ready.rt.create_stream())
    assert ready.rt.subscribe_report(threading.get_ident(), stream) == ACL_SUCCESS
    assert ready.rt.process_report(10) == ACL_ERROR_RT_REPORT_TIMEOUT


@pytest.mark.parametrize("timeout", [0, -2])
def test_process_report_bad_timeout_returns_100000(ready: ModuleType, timeout: int) -> None:
    """process_report with a timeout of 0 or below -1 returns 100000."""
    assert ready.rt.process_report(timeout) == ACL_ERROR_INVALID_PARAM


def test_process_report_without_subscription_returns_107012(ready: ModuleType) -> None:
    """process_report in a thread subscribed to no stream returns 107012."""
    assert ready.rt.process_report(10) == ACL_ERROR_RT_THREAD_SUBSCRIBE
    assert run_threads(lambda: ready.rt.process_report(10)) == [ACL_ERROR_RT_THREAD_SUBSCRIBE]


def test_launch_callback_without_subscription_returns_107015(ready: ModuleType) -> None:
    """launch_callback on a stream nobody subscribed to returns 107015."""
    stream = ok(ready.rt.create_stream())
    assert ready.rt.launch_callback(lambda _: None, None, ACL_CALLBACK_NO_BLOCK, stream) == \
        ACL_ERROR_RT_STREAM_NO_CB_REG


def test_launch_callback_after_unsubscribe_returns_107015(ready: ModuleType) -> None:
    """After unsubscribe_report the stream has no report thread again."""
    stream = ok(ready.rt.create_stream())
    me = threading.get_ident()
    assert ready.rt.subscribe_report(me, stream) == ACL_SUCCESS
    assert ready.rt.unsubscribe_report(me, stream) == ACL_SUCCESS
    assert ready.rt.launch_callback(lambda _: None, None, ACL_CALLBACK_NO_BLOCK, stream) == \
        ACL_ERROR_RT_STREAM_NO_CB_REG


def test_subscribing_a_stream_twice_returns_107011(ready: ModuleType) -> None:
    """subscribe_report of an already subscribed stream returns 107011."""
    stream = ok(ready.rt.create_stream())
    me = threading.get_ident()
    assert ready.rt.subscribe_report(me, stream) == ACL_SUCCESS
    assert ready.rt.subscribe_report(me, stream) == ACL_ERROR_RT_STREAM_SUBSCRIBE


def test_launch_callback_with_unknown_block_type_returns_100000(ready: ModuleType) -> None:
    """launch_callback with block_type 2 returns 100000."""
    stream = ok(ready.rt.create_stream())
    assert ready.rt.subscribe_report(threading.get_ident(), stream) == ACL_SUCCESS
    assert ready.rt.launch_callback(lambda _: None, None, 2, stream) == ACL_ERROR_INVALID_PARAM


# ----------------------------------------------------------------------------- callbacks


def test_callback_runs_in_the_subscribed_thread(ready: ModuleType) -> None:
    """The five-step protocol: the callback runs in the worker's process_report, with its data."""
    ctx = ok(ready.rt.get_context())
    stream = ok(ready.rt.create_stream())
    worker = ReportWorker(ready, ctx)                                  # 1. report thread
    worker.subscribe(stream)                                           # 2. subscribe
    host = ok(ready.rt.malloc_host(MiB))
    dev = ok(ready.rt.malloc(MiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy_async(dev, MiB, host, MiB, ACL_MEMCPY_HOST_TO_DEVICE,
                                 stream) == ACL_SUCCESS                # 3. async work
    calls: list[tuple[int, Any]] = []
    payload = {"batch": 7}
    assert ready.rt.launch_callback(lambda d: calls.append((threading.get_ident(), d)),
                                    payload, ACL_CALLBACK_BLOCK, stream) == ACL_SUCCESS  # 4.
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.unsubscribe_report(worker.tid, stream) == ACL_SUCCESS  # 5. unsubscribe
    worker.finish()
    assert calls == [(worker.tid, payload)]
    assert worker.ident == worker.tid != threading.get_ident()


def test_callbacks_run_in_launch_order(ready: ModuleType) -> None:
    """Several callbacks on one stream run one after another in the order launched."""
    ctx = ok(ready.rt.get_context())
    stream = ok(ready.rt.create_stream())
    worker = ReportWorker(ready, ctx)
    worker.subscribe(stream)
    order: list[int] = []
    for i in range(5):
        block = ACL_CALLBACK_BLOCK if i % 2 else ACL_CALLBACK_NO_BLOCK
        assert ready.rt.launch_callback(order.append, i, block, stream) == ACL_SUCCESS
    assert ready.rt.launch_callback(order.append, 5, ACL_CALLBACK_BLOCK, stream) == 0
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    worker.finish()
    assert order == list(range(6))


def test_synchronize_stream_waits_for_a_blocking_callback(ready: ModuleType) -> None:
    """synchronize_stream returns only after a blocking callback has returned."""
    ctx = ok(ready.rt.get_context())
    stream = ok(ready.rt.create_stream())
    worker = ReportWorker(ready, ctx)
    worker.subscribe(stream)
    done = threading.Event()
    assert ready.rt.launch_callback(lambda _: done.set(), None, ACL_CALLBACK_BLOCK,
                                    stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert done.is_set()
    worker.finish()


def test_blocking_callback_holds_later_tasks(ready: ModuleType, session: Session) -> None:
    """A copy queued after an ACL_CALLBACK_BLOCK callback starts after the callback's end."""
    ctx = ok(ready.rt.get_context())
    stream = ok(ready.rt.create_stream())
    worker = ReportWorker(ready, ctx)
    worker.subscribe(stream)

    def slow_callback(_: object) -> None:
        for _ in range(5):  # API calls cost the worker virtual time
            ready.rt.get_device()

    host = ok(ready.rt.malloc_host(MiB))
    dev = ok(ready.rt.malloc(MiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.launch_callback(slow_callback, None, ACL_CALLBACK_BLOCK, stream) == 0
    assert ready.rt.memcpy_async(dev, MiB, host, MiB, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    worker.finish()

    trace = session.trace()
    cbs, tasks = trace.callbacks, trace.tasks
    assert cbs.rows == 1
    cb_task, cb_end = int(cbs["task"][0]), int(cbs["end_ns"][0])
    assert tasks["kind"][cb_task] == TaskKind.CALLBACK
    assert cb_end - int(cbs["start_ns"][0]) >= 5 * session.profile.api_call_ns
    assert trace.string(int(trace.threads["name"][int(cbs["thread"][0])])) == worker.name
    [copy_call] = trace.calls_named("acl.rt.memcpy_async")
    [copy_task] = [i for i in range(tasks.rows) if tasks["call"][i] == copy_call]
    assert tasks["start_ns"][copy_task] >= cb_end
    assert tasks["end_ns"][cb_task] <= tasks["start_ns"][copy_task]
