"""Streams and events: context checks, waits, queries, timeouts, timing and ordering.

Facts come from docs/sources.md sections 2.4, 2.5, 5(c), 5(d), 8 and 9.1(f).
Times are virtual: every expectation about durations is computed from the session's profile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
import pytest

from acl_lab.constants import (
    ACL_CALLBACK_NO_BLOCK,
    ACL_ERROR_RT_CONTEXT_NULL,
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
    ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_INTERNAL_ERROR,
    ACL_ERROR_RT_PARAM_INVALID,
    ACL_ERROR_RT_STREAM_CONTEXT,
    ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
    ACL_EVENT_RECORDED_STATUS_COMPLETE,
    ACL_EVENT_RECORDED_STATUS_NOT_READY,
    ACL_EVENT_STATUS_COMPLETE,
    ACL_EVENT_STATUS_NOT_READY,
    ACL_EVENT_SYNC,
    ACL_MEM_MALLOC_NORMAL_ONLY,
    ACL_MEMCPY_DEVICE_TO_DEVICE,
    ACL_MEMCPY_DEVICE_TO_HOST,
    ACL_MEMCPY_HOST_TO_DEVICE,
    ACL_MEMCPY_HOST_TO_HOST,
    ACL_STREAM_PERSISTENT,
    ACL_STREAM_STATUS_COMPLETE,
    ACL_STREAM_STATUS_NOT_READY,
    ACL_SUCCESS,
)
from acl_lab.runtime.session import Session
from tests.helpers import ok

MiB = 1 << 20
BIG = 32 * MiB



def pinned_h2d_ns(session: Session, nbytes: int) -> int:
    """How long a pinned host-to-device copy of ``nbytes`` occupies the copy engine."""
    p = session.profile
    return p.copy_setup_ns + int(nbytes / p.h2d_pinned_bw)


def queue_h2d(acl: ModuleType, stream: int, nbytes: int) -> tuple[int, int]:
    """Queue a pinned H2D copy of ``nbytes`` on ``stream``; returns (host, device) pointers."""
    host = ok(acl.rt.malloc_host(nbytes))
    dev = ok(acl.rt.malloc(nbytes, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy_async(dev, nbytes, host, nbytes, ACL_MEMCPY_HOST_TO_DEVICE,
                               stream) == ACL_SUCCESS
    return host, dev


def read_device(acl: ModuleType, dev: int, nbytes: int) -> bytes:
    """The bytes of device memory, read with a synchronous D2H copy into a bytes object."""
    out = bytes(nbytes)
    dst = acl.util.bytes_to_ptr(out)
    assert acl.rt.memcpy(dst, nbytes, dev, nbytes, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS
    return out


def pattern(nbytes: int) -> bytes:
    """Deterministic non-zero test data."""
    return np.resize(np.arange(1, 252, dtype=np.uint8), nbytes).tobytes()


def run_in_thread(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a fresh threading.Thread and return its result."""
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(fn()))
    t.start()
    t.join(60)
    assert not t.is_alive() and box
    return box[0]


# ----------------------------------------------------------------------------- contexts


class TwoContexts(NamedTuple):
    acl: ModuleType
    default_ctx: int
    other_ctx: int
    other_stream: int


@pytest.fixture
def two_contexts(ready: ModuleType) -> Iterator[TwoContexts]:
    """The default context is current; ``other_stream`` belongs to a second context."""
    default_ctx = ok(ready.rt.get_context())
    other_ctx = ok(ready.rt.create_context(0))
    other_stream = ok(ready.rt.create_stream())
    assert ready.rt.set_context(default_ctx) == ACL_SUCCESS
    yield TwoContexts(ready, default_ctx, other_ctx, other_stream)


def _memcpy_async(acl: ModuleType, s: int) -> int:
    host = ok(acl.rt.malloc_host(64))
    dev = ok(acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    return acl.rt.memcpy_async(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s)


def _memset_async(acl: ModuleType, s: int) -> int:
    dev = ok(acl.rt.malloc(64, ACL_MEM_MALLOC_NORMAL_ONLY))
    return acl.rt.memset_async(dev, 64, 0, 64, s)


def _record_event(acl: ModuleType, s: int) -> int:
    return acl.rt.record_event(ok(acl.rt.create_event()), s)


def _reset_event(acl: ModuleType, s: int) -> int:
    return acl.rt.reset_event(ok(acl.rt.create_event_with_flag(ACL_EVENT_SYNC)), s)


def _stream_wait_event(acl: ModuleType, s: int) -> int:
    e = ok(acl.rt.create_event())
    assert acl.rt.record_event(e, 0) == ACL_SUCCESS
    return acl.rt.stream_wait_event(s, e)


def _launch_callback(acl: ModuleType, s: int) -> int:
    assert acl.rt.subscribe_report(threading.get_ident(), s) == ACL_SUCCESS
    return acl.rt.launch_callback(lambda _: None, None, ACL_CALLBACK_NO_BLOCK, s)


def _destroy_stream(acl: ModuleType, s: int) -> int:
    return acl.rt.destroy_stream(s)


CHECKED_OPS: list[Callable[[ModuleType, int], int]] = [
    _memcpy_async, _memset_async, _record_event, _reset_event, _stream_wait_event,
    _launch_callback, _destroy_stream]


@pytest.mark.parametrize("op", CHECKED_OPS, ids=lambda f: f.__name__.strip("_"))
def test_stream_of_another_context_returns_107003(two_contexts: TwoContexts,
                                                  op: Callable[[ModuleType, int], int]) -> None:
    """Submitting to (or destroying) a stream of a non-current context returns 107003."""
    assert op(two_contexts.acl, two_contexts.other_stream) == ACL_ERROR_RT_STREAM_CONTEXT


def test_synchronize_stream_accepts_a_stream_of_another_context(
        two_contexts: TwoContexts) -> None:
    """synchronize_stream switches context itself: it waits for the other stream's work."""
    acl = two_contexts.acl
    assert acl.rt.set_context(two_contexts.other_ctx) == ACL_SUCCESS
    data = pattern(4096)
    host = ok(acl.rt.malloc_host(len(data)))
    assert acl.rt.memcpy(host, len(data), acl.util.bytes_to_ptr(data), len(data),
                         ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev = ok(acl.rt.malloc(len(data), ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memcpy_async(dev, len(data), host, len(data), ACL_MEMCPY_HOST_TO_DEVICE,
                               two_contexts.other_stream) == ACL_SUCCESS
    assert acl.rt.set_context(two_contexts.default_ctx) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(two_contexts.other_stream) == ACL_SUCCESS
    assert read_device(acl, dev, len(data)) == data


def test_stream_works_again_after_set_context(two_contexts: TwoContexts) -> None:
    """After set_context to the stream's own context, the same call succeeds."""
    acl = two_contexts.acl
    assert acl.rt.set_context(two_contexts.other_ctx) == ACL_SUCCESS
    assert _memcpy_async(acl, two_contexts.other_stream) == ACL_SUCCESS
    assert acl.rt.destroy_stream(two_contexts.other_stream) == ACL_SUCCESS


@pytest.mark.timeout(120)
def test_synchronize_stream_needs_some_context(ready: ModuleType) -> None:
    """synchronize_stream in a thread with no context returns 107002."""
    stream = ok(ready.rt.create_stream())
    assert run_in_thread(lambda: ready.rt.synchronize_stream(stream)) == \
        ACL_ERROR_RT_CONTEXT_NULL


# ----------------------------------------------------------------------------- waits on events


def test_legacy_event_wait_before_record_returns_107000(ready: ModuleType) -> None:
    """stream_wait_event on a create_event event that was never recorded returns 107000."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    assert ready.rt.stream_wait_event(stream, event) == ACL_ERROR_RT_PARAM_INVALID


def test_legacy_sync_flag_event_wait_before_record_returns_107000(ready: ModuleType) -> None:
    """create_event_with_flag(ACL_EVENT_SYNC) is a legacy event too: waiting unrecorded fails."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event_with_flag(ACL_EVENT_SYNC))
    assert ready.rt.stream_wait_event(stream, event) == ACL_ERROR_RT_PARAM_INVALID


def test_new_mode_event_wait_before_record_is_a_no_op(ready: ModuleType) -> None:
    """A create_event_ex_with_flag event can be waited on before any record: returns 0."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event_ex_with_flag(ACL_EVENT_SYNC))
    assert ready.rt.stream_wait_event(stream, event) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS


def test_wait_on_recorded_event_delays_the_waiting_stream(ready: ModuleType,
                                                          session: Session) -> None:
    """Tasks after stream_wait_event start only once the recorded work has finished."""
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    queue_h2d(ready, s1, BIG)
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS
    assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(s2) == ACL_SUCCESS
    # s2 is done only when s1's copy is: querying the event now shows it complete.
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    assert ready.rt.stream_query(s1) == (ACL_STREAM_STATUS_COMPLETE, ACL_SUCCESS)


def test_new_mode_wait_uses_the_latest_record(ready: ModuleType) -> None:
    """A new-mode event re-recorded after a copy makes a later wait cover that copy too."""
    n = 4 * MiB
    data = pattern(n)
    host = ok(ready.rt.malloc_host(n))
    assert ready.rt.memcpy(host, n, ready.util.bytes_to_ptr(data), n,
                           ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev_b = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    dev_c = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    s1, s2 = ok(ready.rt.create_stream()), ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event_ex_with_flag(ACL_EVENT_SYNC))
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS  # before the copy
    assert ready.rt.memcpy_async(dev_b, n, host, n, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
    assert ready.rt.record_event(event, s1) == ACL_SUCCESS  # re-record after it
    assert ready.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert ready.rt.memcpy_async(dev_c, n, dev_b, n, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
    assert ready.rt.synchronize_stream(s2) == ACL_SUCCESS
    assert read_device(ready, dev_c, n) == data


def test_record_captures_only_tasks_already_submitted(ready: ModuleType) -> None:
    """synchronize_event waits for work before the record, not for work queued after it."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    queue_h2d(ready, stream, MiB)
    assert ready.rt.record_event(event, stream) == ACL_SUCCESS
    queue_h2d(ready, stream, BIG)
    assert ready.rt.synchronize_event(event) == ACL_SUCCESS
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)


# ----------------------------------------------------------------------------- queries


def test_query_event_and_query_event_status_use_opposite_numbers(ready: ModuleType) -> None:
    """query_event says COMPLETE with 0, query_event_status with 1 (and NOT_READY likewise)."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    queue_h2d(ready, stream, BIG)
    assert ready.rt.record_event(event, stream) == ACL_SUCCESS
    assert ready.rt.query_event(event) == (ACL_EVENT_STATUS_NOT_READY, ACL_SUCCESS)
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_NOT_READY,
                                                  ACL_SUCCESS)
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.query_event(event) == (ACL_EVENT_STATUS_COMPLETE, ACL_SUCCESS)
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_COMPLETE,
                                                  ACL_SUCCESS)
    assert ACL_EVENT_STATUS_COMPLETE != ACL_EVENT_RECORDED_STATUS_COMPLETE


def test_unrecorded_legacy_event_is_not_ready(ready: ModuleType) -> None:
    """query_event_status of a never-recorded legacy event reports NOT_READY (0)."""
    event = ok(ready.rt.create_event())
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_NOT_READY, 0)


def test_unrecorded_new_mode_event_is_complete(ready: ModuleType) -> None:
    """query_event_status of a new-mode event before its first record reports COMPLETE (1)."""
    event = ok(ready.rt.create_event_ex_with_flag(ACL_EVENT_SYNC))
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)


def test_stream_query_not_ready_then_complete(ready: ModuleType) -> None:
    """stream_query is NOT_READY right after a large async copy and COMPLETE after sync."""
    stream = ok(ready.rt.create_stream())
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_COMPLETE, ACL_SUCCESS)
    queue_h2d(ready, stream, BIG)
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_COMPLETE, ACL_SUCCESS)


def test_synchronize_stream_zero_waits_for_the_default_stream(ready: ModuleType) -> None:
    """Stream handle 0 is the current context's default stream for submit, query and sync."""
    data = pattern(BIG)
    host = ok(ready.rt.malloc_host(BIG))
    assert ready.rt.memcpy(host, BIG, ready.util.bytes_to_ptr(data), BIG,
                           ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev = ok(ready.rt.malloc(BIG, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy_async(dev, BIG, host, BIG, ACL_MEMCPY_HOST_TO_DEVICE, 0) == 0
    assert ready.rt.stream_query(0) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)
    assert ready.rt.synchronize_stream(0) == ACL_SUCCESS
    assert ready.rt.stream_query(0) == (ACL_STREAM_STATUS_COMPLETE, ACL_SUCCESS)
    assert read_device(ready, dev, BIG) == data


def test_synchronize_device_waits_for_every_stream(ready: ModuleType) -> None:
    """synchronize_device returns only when all streams of the device are done."""
    streams = [ok(ready.rt.create_stream()) for _ in range(3)]
    for s in streams:
        queue_h2d(ready, s, 4 * MiB)
    assert ready.rt.synchronize_device() == ACL_SUCCESS
    for s in streams:
        assert ready.rt.stream_query(s) == (ACL_STREAM_STATUS_COMPLETE, ACL_SUCCESS)


def test_destroy_stream_waits_for_queued_work(ready: ModuleType) -> None:
    """destroy_stream lets pending tasks finish: the copied data is there afterwards."""
    stream = ok(ready.rt.create_stream())
    data = pattern(MiB)
    host = ok(ready.rt.malloc_host(MiB))
    assert ready.rt.memcpy(host, MiB, ready.util.bytes_to_ptr(data), MiB,
                           ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev = ok(ready.rt.malloc(MiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert ready.rt.memcpy_async(dev, MiB, host, MiB, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.destroy_stream(stream) == ACL_SUCCESS
    assert read_device(ready, dev, MiB) == data


def test_persistent_stream_synchronize_returns_at_once(ready: ModuleType) -> None:
    """synchronize_stream on an ACL_STREAM_PERSISTENT stream succeeds without waiting."""
    stream = ok(ready.rt.create_stream_with_config(0, ACL_STREAM_PERSISTENT))
    queue_h2d(ready, stream, BIG)
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)


# ----------------------------------------------------------------------------- timeouts


def short_timeout_ms(session: Session, nbytes: int) -> int:
    """A timeout (ms) that a pinned H2D copy of ``nbytes`` cannot beat, from the profile."""
    needed_ns = pinned_h2d_ns(session, nbytes)
    timeout = max(1, needed_ns // 2_000_000)
    assert timeout * 1_000_000 < needed_ns
    return timeout


def long_timeout_ms(session: Session, nbytes: int) -> int:
    """A timeout (ms) comfortably longer than the copy plus launch latencies."""
    p = session.profile
    return (pinned_h2d_ns(session, nbytes) + 10 * p.launch_latency_ns) // 1_000_000 + 2


def test_synchronize_stream_with_timeout_times_out_with_507046(ready: ModuleType,
                                                               session: Session) -> None:
    """A timeout shorter than the queued copy gives ACL_ERROR_RT_STREAM_SYNC_TIMEOUT."""
    stream = ok(ready.rt.create_stream())
    queue_h2d(ready, stream, BIG)
    timeout = short_timeout_ms(session, BIG)
    assert ready.rt.synchronize_stream_with_timeout(stream, timeout) == \
        ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    assert ready.rt.stream_query(stream) == (ACL_STREAM_STATUS_NOT_READY, ACL_SUCCESS)
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS


def test_synchronize_stream_with_long_enough_timeout_succeeds(ready: ModuleType,
                                                              session: Session) -> None:
    """A timeout longer than the queued work returns 0; -1 waits forever."""
    stream = ok(ready.rt.create_stream())
    queue_h2d(ready, stream, BIG)
    assert ready.rt.synchronize_stream_with_timeout(stream, long_timeout_ms(session, BIG)) == 0
    queue_h2d(ready, stream, BIG)
    assert ready.rt.synchronize_stream_with_timeout(stream, -1) == ACL_SUCCESS


def test_synchronize_event_with_timeout_times_out_with_507047(ready: ModuleType,
                                                              session: Session) -> None:
    """synchronize_event_with_timeout on an event behind a long copy gives 507047."""
    stream = ok(ready.rt.create_stream())
    event = ok(ready.rt.create_event())
    queue_h2d(ready, stream, BIG)
    assert ready.rt.record_event(event, stream) == ACL_SUCCESS
    timeout = short_timeout_ms(session, BIG)
    assert ready.rt.synchronize_event_with_timeout(event, timeout) == \
        ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    assert ready.rt.synchronize_event_with_timeout(event, long_timeout_ms(session, BIG)) == 0
    assert ready.rt.query_event_status(event) == (ACL_EVENT_RECORDED_STATUS_COMPLETE, 0)


# ----------------------------------------------------------------------------- elapsed time


def elapsed_ms(acl: ModuleType, stream: int, src: int, dev: int, nbytes: int) -> float:
    """Milliseconds between two events recorded around one async H2D copy."""
    start, end = ok(acl.rt.create_event()), ok(acl.rt.create_event())
    assert acl.rt.record_event(start, stream) == ACL_SUCCESS
    assert acl.rt.memcpy_async(dev, nbytes, src, nbytes, ACL_MEMCPY_HOST_TO_DEVICE,
                               stream) == ACL_SUCCESS
    assert acl.rt.record_event(end, stream) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(stream) == ACL_SUCCESS
    ms, ret = acl.rt.event_elapsed_time(start, end)
    assert ret == ACL_SUCCESS and isinstance(ms, float)
    return ms


def test_elapsed_time_is_positive_and_grows_with_bytes(ready: ModuleType,
                                                       session: Session) -> None:
    """The time between records around a copy is positive and grows with the copy size."""
    stream = ok(ready.rt.create_stream())
    host = ok(ready.rt.malloc_host(8 * MiB))
    dev = ok(ready.rt.malloc(8 * MiB, ACL_MEM_MALLOC_NORMAL_ONLY))
    small = elapsed_ms(ready, stream, host, dev, MiB)
    large = elapsed_ms(ready, stream, host, dev, 8 * MiB)
    assert 0 < small < large
    # The difference is the extra bytes over the pinned host-to-device bandwidth.
    expected = 7 * MiB / session.profile.h2d_pinned_bw / 1e6
    assert large - small == pytest.approx(expected, rel=0.02)


def test_pinned_copy_is_faster_than_pageable(ready: ModuleType, session: Session) -> None:
    """A pageable H2D copy takes about 1/pageable_factor (1.3x) as long as a pinned one."""
    n = 16 * MiB
    stream = ok(ready.rt.create_stream())
    dev = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    pinned = elapsed_ms(ready, stream, ok(ready.rt.malloc_host(n)), dev, n)
    pageable_buf = bytes(n)
    pageable = elapsed_ms(ready, stream, ready.util.bytes_to_ptr(pageable_buf), dev, n)
    assert pageable > pinned
    assert pageable / pinned == pytest.approx(1 / session.profile.pageable_factor, rel=0.02)


def test_elapsed_time_of_never_recorded_event_is_507000(ready: ModuleType) -> None:
    """event_elapsed_time with an event that was never recorded returns 507000."""
    start, end = ok(ready.rt.create_event()), ok(ready.rt.create_event())
    assert ready.rt.record_event(start, 0) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(0) == ACL_SUCCESS
    assert ready.rt.event_elapsed_time(start, end) == (0.0, ACL_ERROR_RT_INTERNAL_ERROR)
    assert ready.rt.event_elapsed_time(end, start) == (0.0, ACL_ERROR_RT_INTERNAL_ERROR)


def test_elapsed_time_before_completion_is_107006(ready: ModuleType) -> None:
    """event_elapsed_time when the end record has not completed yet returns 107006."""
    stream = ok(ready.rt.create_stream())
    start, end = ok(ready.rt.create_event()), ok(ready.rt.create_event())
    assert ready.rt.record_event(start, stream) == ACL_SUCCESS
    queue_h2d(ready, stream, BIG)
    assert ready.rt.record_event(end, stream) == ACL_SUCCESS
    ms, ret = ready.rt.event_elapsed_time(start, end)
    assert ret == ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    ms, ret = ready.rt.event_elapsed_time(start, end)
    assert ret == ACL_SUCCESS and ms > 0


def test_elapsed_time_is_negative_when_end_recorded_first(ready: ModuleType) -> None:
    """Recording ``end`` before ``start`` gives a negative time, not an error."""
    stream = ok(ready.rt.create_stream())
    start, end = ok(ready.rt.create_event()), ok(ready.rt.create_event())
    assert ready.rt.record_event(end, stream) == ACL_SUCCESS
    queue_h2d(ready, stream, MiB)
    assert ready.rt.record_event(start, stream) == ACL_SUCCESS
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    ms, ret = ready.rt.event_elapsed_time(start, end)
    assert ret == ACL_SUCCESS
    assert ms < 0
    forward, _ = ready.rt.event_elapsed_time(end, start)
    assert forward == pytest.approx(-ms)


# ----------------------------------------------------------------------------- ordering


def missing_wait_scenario(acl: ModuleType, with_event: bool) -> tuple[bytes, bytes]:
    """Copy A (host) -> B on stream 1, then B -> C on stream 2; return (C, A)."""
    n = MiB
    data = pattern(n)
    host_a = ok(acl.rt.malloc_host(n))
    assert acl.rt.memcpy(host_a, n, acl.util.bytes_to_ptr(data), n,
                         ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev_b = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    assert acl.rt.memset(dev_b, n, 0, n) == ACL_SUCCESS  # B's old contents: zeros
    dev_c = ok(acl.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    s1, s2 = ok(acl.rt.create_stream()), ok(acl.rt.create_stream())
    assert acl.rt.memcpy_async(dev_b, n, host_a, n, ACL_MEMCPY_HOST_TO_DEVICE, s1) == 0
    if with_event:
        event = ok(acl.rt.create_event())
        assert acl.rt.record_event(event, s1) == ACL_SUCCESS
        assert acl.rt.stream_wait_event(s2, event) == ACL_SUCCESS
    assert acl.rt.memcpy_async(dev_c, n, dev_b, n, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) == 0
    assert acl.rt.synchronize_stream(s1) == ACL_SUCCESS
    assert acl.rt.synchronize_stream(s2) == ACL_SUCCESS
    return read_device(acl, dev_c, n), data


def test_missing_wait_gives_old_contents(ready: ModuleType) -> None:
    """Without an event, stream 2 reads B before stream 1's H2D copy has written it.

    Both copies are launched about one API call apart, the D2D copy runs on its own engine
    and reads its input at its start, while the H2D copy of 1 MiB writes B only at its end,
    tens of microseconds later: C receives B's old contents (zeros).
    """
    c, a = missing_wait_scenario(ready, with_event=False)
    assert c == bytes(len(c))
    assert c != a


def test_missing_wait_result_is_deterministic(ready: ModuleType) -> None:
    """The wrong result of the race is the same in every fresh session."""
    first, _ = missing_wait_scenario(ready, with_event=False)
    for _ in range(2):
        with Session(watchdog=2.0):
            assert ready.init() == ACL_SUCCESS
            assert ready.rt.set_device(0) == ACL_SUCCESS
            again, _ = missing_wait_scenario(ready, with_event=False)
        assert again == first


def test_event_wait_fixes_the_race(ready: ModuleType) -> None:
    """With record_event on stream 1 and stream_wait_event on stream 2, C gets A's data."""
    c, a = missing_wait_scenario(ready, with_event=True)
    assert c == a


def test_same_stream_needs_no_event(ready: ModuleType) -> None:
    """Tasks on one stream run in order: B -> C after A -> B on the same stream sees A."""
    n = MiB
    data = pattern(n)
    host_a = ok(ready.rt.malloc_host(n))
    assert ready.rt.memcpy(host_a, n, ready.util.bytes_to_ptr(data), n,
                           ACL_MEMCPY_HOST_TO_HOST) == ACL_SUCCESS
    dev_b = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    dev_c = ok(ready.rt.malloc(n, ACL_MEM_MALLOC_NORMAL_ONLY))
    stream = ok(ready.rt.create_stream())
    assert ready.rt.memcpy_async(dev_b, n, host_a, n, ACL_MEMCPY_HOST_TO_DEVICE, stream) == 0
    assert ready.rt.memcpy_async(dev_c, n, dev_b, n, ACL_MEMCPY_DEVICE_TO_DEVICE, stream) == 0
    assert ready.rt.synchronize_stream(stream) == ACL_SUCCESS
    assert read_device(ready, dev_c, n) == data
