"""``acl.rt``: devices, contexts, streams, events, memory and host callbacks.

Each function is the pyACL binding's name and return shape over one runtime operation. Every
docstring ends with how the emulator differs from real ACL, where it does.
"""

from __future__ import annotations

from typing import Any

from ..constants import ErrorCode
from ..runtime import alloc, copies, devices, events, streams, threads, waits
from ..runtime.errors import AclError
from ..runtime.objects import LEGACY, NEW_MODE, HostThread
from ..runtime.session import Session
from ._boundary import acl_api

S = Session

# ----------------------------------------------------------------------------- devices


@acl_api("acl.rt.set_device", "aclrtSetDevice", "i")
def set_device(s: S, th: HostThread, cid: int, device_id: int) -> None:
    """Bind device ``device_id``'s default context to this thread; ref-counted.

    Returns ret: 0, or 107001 for an invalid id.
    Differs from real ACL: devices are emulated from the session's profile.
    """
    devices.set_device(s, th, cid, device_id)


@acl_api("acl.rt.reset_device", "aclrtResetDevice", "i")
def reset_device(s: S, th: HostThread, cid: int, device_id: int) -> None:
    """Drop one set_device reference; at zero wait for the device's streams and release
    its default context, streams, events and leaked memory.

    Returns ret: 0, 107001 invalid id, 107000 when the device is not set.
    Differs from real ACL: leaked device memory is reclaimed and recorded as leaked (newest
    drivers recycle it too); the over-reset code is approximate.
    """
    devices.reset_device(s, th, cid, device_id)


@acl_api("acl.rt.reset_device_force", "aclrtResetDeviceForce", "i")
def reset_device_force(s: S, th: HostThread, cid: int, device_id: int) -> None:
    """Release the device whatever its reference count.

    Returns ret: 0, 107001, or 107000 when it was already released.
    Differs from real ACL: the second-reset code is approximate.
    """
    devices.reset_device(s, th, cid, device_id, force=True)


@acl_api("acl.rt.get_device", "aclrtGetDevice", "", out=1)
def get_device(s: S, th: HostThread, cid: int) -> int:
    """``(device_id, ret)``; ``(0, 107002)`` when the thread has no context.

    Differs from real ACL: no difference known.
    """
    return devices.get_device(s, th)


@acl_api("acl.rt.get_device_count", "aclrtGetDeviceCount", "", out=1)
def get_device_count(s: S, th: HostThread, cid: int) -> int:
    """``(count, ret)``: the number of emulated devices.

    Differs from real ACL: the count is the session's ``device_count`` setting.
    """
    return len(s.devices)


@acl_api("acl.rt.get_run_mode", "aclrtGetRunMode", "", out=1)
def get_run_mode(s: S, th: HostThread, cid: int) -> int:
    """``(mode, ret)``: ``ACL_HOST`` (1), the EP mode of a PCIe card in a server, or
    ``ACL_DEVICE`` (0) in a session made with ``run_mode="device"`` (``acl-lab run
    --run-mode device``), the RC mode of a program running on the board.

    Differs from real ACL: the mode is the session's choice, not the hardware's; in device
    mode host and device memory are one only as far as acl.util goes (ptr_to_bytes,
    ptr_to_numpy read and write device buffers); device memory keeps its own address range.
    """
    return 0 if s.run_mode == "device" else 1


@acl_api("acl.rt.synchronize_device", "aclrtSynchronizeDevice", "", launch=False)
def synchronize_device(s: S, th: HostThread, cid: int) -> None:
    """Block until every stream of the current device is done.

    Returns ret: 0, 107002 without a context, or the code of a failed task.
    Differs from real ACL: a wait that can never finish raises acl_lab.DeadlockError
    instead of hanging.
    """
    waits.synchronize_device(s, th, cid, -1)


@acl_api("acl.rt.synchronize_device_with_timeout", "aclrtSynchronizeDeviceWithTimeout", "i")
def synchronize_device_with_timeout(s: S, th: HostThread, cid: int, timeout: int) -> None:
    """Like synchronize_device with a timeout in ms (-1 forever, 0 check now, > 0 ms).

    Returns ret: 0, 507046 on timeout, 100000 for a timeout below -1.
    Differs from real ACL: the timeout is measured in virtual time; a wait that can never
    finish returns 507046 at once.
    """
    waits.synchronize_device(s, th, cid, _timeout_ns(timeout))


def _timeout_ns(timeout: int) -> int:
    if timeout < -1:
        raise AclError(ErrorCode.ACL_ERROR_INVALID_PARAM,
                       f"timeout {timeout} must be -1 (forever), 0 or > 0 ms")
    return -1 if timeout == -1 else timeout * 1_000_000


# ----------------------------------------------------------------------------- contexts


@acl_api("acl.rt.create_context", "aclrtCreateContext", "i", out=1)
def create_context(s: S, th: HostThread, cid: int, device_id: int) -> int:
    """``(context, ret)``: a new context on the device, made current for this thread.

    Differs from real ACL: no difference known.
    """
    return devices.create_context(s, th, cid, device_id)


@acl_api("acl.rt.destroy_context", "aclrtDestroyContext", "k")
def destroy_context(s: S, th: HostThread, cid: int, context: int) -> None:
    """Destroy an explicit context (waits for its streams; releases them).

    Returns ret: 0, 107000 for the default context or an unknown one, 100000 for null.
    Differs from real ACL: streams and events still in the context are released and
    recorded as leaked.
    """
    devices.destroy_context(s, th, cid, context)


@acl_api("acl.rt.set_context", "aclrtSetCurrentContext", "k")
def set_context(s: S, th: HostThread, cid: int, context: int) -> None:
    """Make ``context`` current for this thread (its device too).

    Returns ret: 0, 100000 for null, 107000 for an unknown or destroyed context.
    Differs from real ACL: the code for a destroyed context is approximate.
    """
    devices.set_context(s, th, context)


@acl_api("acl.rt.get_context", "aclrtGetCurrentContext", "", out=1)
def get_context(s: S, th: HostThread, cid: int) -> int:
    """``(context, ret)``; ``(0, 107002)`` when the thread has none.

    Differs from real ACL: no difference known.
    """
    return devices.require_ctx(s, th).handle


@acl_api("acl.rt.ctx_get_current_default_stream", "aclrtCtxGetCurrentDefaultStream", "",
         out=1)
def ctx_get_current_default_stream(s: S, th: HostThread, cid: int) -> int:
    """``(stream, ret)``: the current context's default stream.

    Differs from real ACL: no difference known.
    """
    ctx = devices.require_ctx(s, th)
    assert ctx.default_stream is not None
    return ctx.default_stream.handle


# ----------------------------------------------------------------------------- streams


@acl_api("acl.rt.create_stream", "aclrtCreateStream", "", out=1)
def create_stream(s: S, th: HostThread, cid: int) -> int:
    """``(stream, ret)``: a stream of the current context.

    Returns ret 107002 without a context, 207008 past the profile's stream limit.
    Differs from real ACL: priorities are not modelled.
    """
    return streams.create(s, th, cid)


@acl_api("acl.rt.create_stream_with_config", "aclrtCreateStreamWithConfig", "ii", out=1)
def create_stream_with_config(s: S, th: HostThread, cid: int, priority: int, flag: int) -> int:
    """``(stream, ret)`` with flags; PERSISTENT, CPU_SCHEDULE and DEVICE_USE_ONLY streams
    make synchronize_stream return at once (C-doc 06).

    Differs from real ACL: priority is ignored (the docs call it reserved).
    """
    return streams.create(s, th, cid, flag)


@acl_api("acl.rt.destroy_stream", "aclrtDestroyStream", "k")
def destroy_stream(s: S, th: HostThread, cid: int, stream: int) -> None:
    """Destroy a stream of the current context, after its pending tasks finish.

    Returns ret: 0, 107003 for a stream of another context, 507000 for a bad handle,
    107000 for the default stream.
    Differs from real ACL: a stream that can never drain raises DeadlockError.
    """
    streams.destroy(s, th, cid, stream, force=False)


@acl_api("acl.rt.destroy_stream_force", "aclrtDestroyStreamForce", "k")
def destroy_stream_force(s: S, th: HostThread, cid: int, stream: int) -> None:
    """Destroy a stream, dropping tasks that have not started.

    Differs from real ACL: tasks already placed in virtual time still complete.
    """
    streams.destroy(s, th, cid, stream, force=True)


@acl_api("acl.rt.synchronize_stream", "aclrtSynchronizeStream", "k")
def synchronize_stream(s: S, th: HostThread, cid: int, stream: int) -> None:
    """Block until every task on ``stream`` (0: the default stream) is done.

    A stream of another context is accepted (the runtime switches context); a current
    context is still needed (107002). Returns the code of a failed task, e.g. 507053.
    Differs from real ACL: a wait that can never finish raises acl_lab.DeadlockError.
    """
    waits.synchronize_stream(s, th, cid, stream, -1)


@acl_api("acl.rt.synchronize_stream_with_timeout", "aclrtSynchronizeStreamWithTimeout", "ki")
def synchronize_stream_with_timeout(s: S, th: HostThread, cid: int,
                                    stream: int, timeout: int) -> None:
    """synchronize_stream with a timeout in ms (-1 forever, 0 check now, > 0).

    Returns ret: 0, 507046 on timeout, 100000 for a timeout below -1.
    Differs from real ACL: the timeout is in virtual time; a wait that can never finish
    returns 507046 at once.
    """
    waits.synchronize_stream(s, th, cid, stream, _timeout_ns(timeout))


@acl_api("acl.rt.stream_query", "aclrtStreamQuery", "k", out=1)
def stream_query(s: S, th: HostThread, cid: int, stream: int) -> int:
    """``(status, ret)``: ACL_STREAM_STATUS_COMPLETE (0) or NOT_READY (1) at this moment
    of the caller's virtual clock.

    Differs from real ACL: "now" is the calling thread's virtual time.
    """
    return 0 if streams.query(s, th, stream) else 1


@acl_api("acl.rt.stream_wait_event", "aclrtStreamWaitEvent", "kk", launch=True)
def stream_wait_event(s: S, th: HostThread, cid: int, stream: int, event: int) -> None:
    """Later tasks on ``stream`` wait until the event's latest record has completed.

    Returns ret: 0; 107000 when a legacy event was never recorded (new-mode: no-op);
    107003 for a stream of another context; 507000 for a bad handle.
    Differs from real ACL: a wait whose event is reset before it runs waits for the next
    record, and if none can come, synchronizing raises DeadlockError.
    """
    events.stream_wait(s, th, cid, stream, event)


# ----------------------------------------------------------------------------- events


@acl_api("acl.rt.create_event", "aclrtCreateEvent", "", out=1)
def create_event(s: S, th: HostThread, cid: int) -> int:
    """``(event, ret)``: a legacy event of the current context.

    Differs from real ACL: event resources are counted at creation, not at first record.
    """
    return events.create(s, th, cid, 0, LEGACY)


@acl_api("acl.rt.create_event_with_flag", "aclrtCreateEventWithFlag", "I", out=1)
def create_event_with_flag(s: S, th: HostThread, cid: int, flag: int) -> int:
    """``(event, ret)``: a legacy event with flags (ACL_EVENT_SYNC needed for wait/reset).

    Differs from real ACL: using an event without ACL_EVENT_SYNC in stream_wait_event or
    reset_event returns 107000 (the real code is unverified).
    """
    return events.create(s, th, cid, flag, LEGACY)


@acl_api("acl.rt.create_event_ex_with_flag", "aclrtCreateEventExWithFlag", "I", out=1)
def create_event_ex_with_flag(s: S, th: HostThread, cid: int, flag: int) -> int:
    """``(event, ret)``: a new-mode event (re-recordable; waiting before a record is a
    no-op; query reports COMPLETE before the first record).

    Differs from real ACL: no difference known.
    """
    return events.create(s, th, cid, flag, NEW_MODE)


@acl_api("acl.rt.record_event", "aclrtRecordEvent", "kk", launch=True)
def record_event(s: S, th: HostThread, cid: int, event: int, stream: int) -> None:
    """Queue a record of ``event`` on ``stream``: it completes after every task already
    submitted there.

    Returns ret: 0, 107003 for a stream of another context, 507000 for bad handles.
    Differs from real ACL: no difference known.
    """
    events.record(s, th, cid, event, stream)


@acl_api("acl.rt.reset_event", "aclrtResetEvent", "kk", launch=True)
def reset_event(s: S, th: HostThread, cid: int, event: int, stream: int) -> None:
    """Queue a reset of ``event`` on ``stream``; waits that run after it need a new record.

    Differs from real ACL: reset of a plain create_event event is allowed with a warning
    (the docs call it undefined); without ACL_EVENT_SYNC it returns 107000.
    """
    events.reset(s, th, cid, event, stream)


@acl_api("acl.rt.query_event", "aclrtQueryEvent", "k", out=1)
def query_event(s: S, th: HostThread, cid: int, event: int) -> int:
    """``(status, ret)`` with the deprecated enum: ACL_EVENT_STATUS_COMPLETE = 0,
    NOT_READY = 1 (the opposite numbering of query_event_status).

    Differs from real ACL: "now" is the calling thread's virtual time.
    """
    return 0 if events.query(s, th, event) else 1


@acl_api("acl.rt.query_event_status", "aclrtQueryEventStatus", "k", out=1)
def query_event_status(s: S, th: HostThread, cid: int, event: int) -> int:
    """``(status, ret)``: ACL_EVENT_RECORDED_STATUS_NOT_READY = 0, COMPLETE = 1.

    Differs from real ACL: "now" is the calling thread's virtual time.
    """
    return 1 if events.query(s, th, event) else 0


@acl_api("acl.rt.synchronize_event", "aclrtSynchronizeEvent", "k")
def synchronize_event(s: S, th: HostThread, cid: int, event: int) -> None:
    """Block until the event's latest record has completed (at once if never recorded).

    Differs from real ACL: a wait that can never finish raises acl_lab.DeadlockError.
    """
    events.synchronize(s, th, cid, event, -1)


@acl_api("acl.rt.synchronize_event_with_timeout", "aclrtSynchronizeEventWithTimeout", "ki")
def synchronize_event_with_timeout(s: S, th: HostThread, cid: int,
                                   event: int, timeout: int) -> None:
    """synchronize_event with a timeout in ms; returns 507047 on timeout.

    Differs from real ACL: the timeout is in virtual time.
    """
    events.synchronize(s, th, cid, event, _timeout_ns(timeout))


@acl_api("acl.rt.event_elapsed_time", "aclrtEventElapsedTime", "kk", out=1, default=0.0)
def event_elapsed_time(s: S, th: HostThread, cid: int, start: int, end: int) -> float:
    """``(ms, ret)``: milliseconds between the two events' latest records (float).

    Returns ret 507000 if either was never recorded, 107006 if one is not complete yet.
    Recording ``end`` before ``start`` gives a negative time, as on hardware.
    Differs from real ACL: times are virtual.
    """
    return events.elapsed_ms(s, th, start, end)


@acl_api("acl.rt.destroy_event", "aclrtDestroyEvent", "k")
def destroy_event(s: S, th: HostThread, cid: int, event: int) -> None:
    """Destroy an event; queued records still complete (current docs).

    Differs from real ACL: no difference known.
    """
    events.destroy(s, th, cid, event)


# ----------------------------------------------------------------------------- memory


@acl_api("acl.rt.malloc", "aclrtMalloc", "ki", out=1)
def malloc(s: S, th: HostThread, cid: int, size: int, policy: int) -> int:
    """``(ptr, ret)``: device memory, 64-byte aligned, ``((size+63)//32)*32`` bytes.

    Policies: HUGE_FIRST (0: huge pages above 1 MiB, else normal), HUGE_ONLY (1),
    NORMAL_ONLY (2), P2P variants (3-5), HUGE1G (6, 7; 910B only). Returns ret 100000 for
    size 0, 107002 without a context, 207001 when the device is full.
    Differs from real ACL: memory reads as zero before it is written (real memory holds
    garbage); the trace records which bytes were never written.
    """
    return alloc.malloc(s, th, cid, size, policy, "normal")


@acl_api("acl.rt.malloc_align32", "aclrtMallocAlign32", "ki", out=1)
def malloc_align32(s: S, th: HostThread, cid: int, size: int, policy: int) -> int:
    """``(ptr, ret)``: like malloc but rounded up to 32 bytes with no padding.

    Differs from real ACL: as malloc.
    """
    return alloc.malloc(s, th, cid, size, policy, "align32")


@acl_api("acl.rt.malloc_cached", "aclrtMallocCached", "ki", out=1)
def malloc_cached(s: S, th: HostThread, cid: int, size: int, policy: int) -> int:
    """``(ptr, ret)``: cache-able device memory, rounded like malloc.

    Differs from real ACL: caches are not modelled (no flush/invalidate needed).
    """
    return alloc.malloc(s, th, cid, size, policy, "cached")


@acl_api("acl.rt.malloc_host", "aclrtMallocHost", "k", out=1)
def malloc_host(s: S, th: HostThread, cid: int, size: int) -> int:
    """``(ptr, ret)``: page-locked host memory (a real 64-byte-aligned buffer).

    Differs from real ACL: the buffer reads as zero before it is written.
    """
    return alloc.malloc_host(s, th, cid, size)


@acl_api("acl.rt.free", "aclrtFree", "p")
def free(s: S, th: HostThread, cid: int, ptr: int) -> None:
    """Free device memory at once (queued tasks are not waited for).

    Returns ret: 0, 100000 for null, 107000 for a double free, a foreign pointer or host
    memory. DVPP memory is freed too, as the runtime does (one driver free), with a warning
    finding naming acl.media.dvpp_free. Differs from real ACL: a queued task that uses the
    memory fails with 507053 when it runs instead of corrupting whatever reuses the address.
    """
    alloc.free(s, th, cid, ptr, "device")


@acl_api("acl.rt.free_host", "aclrtFreeHost", "p")
def free_host(s: S, th: HostThread, cid: int, ptr: int) -> None:
    """Free malloc_host memory at once.

    Returns ret: 0, 100000 for null, 107000 for device memory, a double free or a pointer
    the allocator never gave out. Differs from real ACL: as free.
    """
    alloc.free(s, th, cid, ptr, "host")


@acl_api("acl.rt.memcpy", "aclrtMemcpy", "pkpki")
def memcpy(s: S, th: HostThread, cid: int, dst: int, dest_max: int, src: int, count: int,
           kind: int) -> None:
    """Synchronous copy of ``count`` bytes; the direction is taken from the pointers.

    Returns ret: 0 (also for count 0 and dst == src), 100000 for null pointers or a kind
    outside 0-7, 107000 for count > dest_max or unknown/freed pointers, 507053 when the
    range runs past the end of an allocation. Differs from real ACL: out-of-bounds copies
    are refused instead of corrupting neighbouring memory, except a host source that runs
    past its ``acl.util`` buffer: like real ACL it copies the bytes that follow when they
    are mapped readable (107000 when not, where real ACL may crash), with an error-level
    finding; a host destination past its buffer is always refused (507053), never written.
    A kind that disagrees with the pointers is corrected (as the newest runtime does) and
    noted in the trace.
    """
    copies.memcpy(s, th, cid, dst, dest_max, src, count, kind)


@acl_api("acl.rt.memcpy_async", "aclrtMemcpyAsync", "pkpkik", launch=True)
def memcpy_async(s: S, th: HostThread, cid: int, dst: int, dest_max: int, src: int, count: int,
                 kind: int, stream: int) -> None:
    """Queue a copy on ``stream``. Host memory should come from malloc_host.

    Returns ret: as memcpy, plus 107002/107003 for context problems and 207000 for
    host-to-host. Differs from real ACL: follows the CANN 7/8 rule for pageable host
    memory (accepted, slower, flagged in the trace); ``Session(pageable_async="sync")``
    switches to the newest runtime's synchronous fallback. Misaligned pointers are
    accepted and flagged (the real runtime does not check either).
    """
    copies.memcpy_async(s, th, cid, dst, dest_max, src, count, kind, stream)


@acl_api("acl.rt.memset", "aclrtMemset", "pkik")
def memset(s: S, th: HostThread, cid: int,
           ptr: int, max_count: int, value: int, count: int) -> None:
    """Synchronous memset; every byte gets the low 8 bits of ``value``.

    Differs from real ACL: out-of-bounds ranges are refused (507053).
    """
    copies.memset(s, th, cid, ptr, max_count, value, count)


@acl_api("acl.rt.memset_async", "aclrtMemsetAsync", "pkikk", launch=True)
def memset_async(s: S, th: HostThread, cid: int, ptr: int, max_count: int, value: int, count: int,
                 stream: int) -> None:
    """Queue a memset on ``stream``; host memory is set at once (RT2 behaviour).

    Differs from real ACL: as memset.
    """
    copies.memset_async(s, th, cid, ptr, max_count, value, count, stream)


@acl_api("acl.rt.get_mem_info", "aclrtGetMemInfo", "i", out=2, default=(0, 0))
def get_mem_info(s: S, th: HostThread, cid: int, attr: int) -> tuple[int, int]:
    """``(free, total, ret)`` of the current device for an aclrtMemAttr.

    DDR on a DDR device (310, 310P) or HBM on an HBM device; HBM asked of a DDR device
    reports DDR; an attribute the device lacks gives (0, 0).
    Differs from real ACL: huge and normal pools share one capacity.
    """
    return alloc.mem_info(s, th, attr)


# ----------------------------------------------------------------------------- callbacks


@acl_api("acl.rt.subscribe_report", "aclrtSubscribeReport", "Kk")
def subscribe_report(s: S, th: HostThread, cid: int, tid: int, stream: int) -> None:
    """Callbacks launched on ``stream`` will run in thread ``tid`` (its process_report).

    ``tid`` is the id from acl.util.start_thread or threading.get_ident().
    Returns ret: 0, 107011 if the stream is already subscribed, 100000 for an unknown tid.
    Differs from real ACL: the tid must be a running Python thread.
    """
    threads.subscribe_report(s, th, cid, tid, stream)


@acl_api("acl.rt.unsubscribe_report", "aclrtUnSubscribeReport", "Kk")
def unsubscribe_report(s: S, th: HostThread, cid: int, tid: int, stream: int) -> None:
    """Undo subscribe_report.

    Differs from real ACL: the code for a stream that is not subscribed (107000) is
    approximate.
    """
    threads.unsubscribe_report(s, th, cid, tid, stream)


@acl_api("acl.rt.launch_callback", "aclrtLaunchCallback", "COik", launch=True)
def launch_callback(s: S, th: HostThread, cid: int, fn: Any, user_data: Any, block_type: int,
                    stream: int) -> None:
    """Queue ``fn(user_data)`` on ``stream``; it runs in the subscribed thread.

    ``block_type`` ACL_CALLBACK_BLOCK (1) holds later tasks until the callback returns.
    Returns ret: 0, 100000 for another block type, 107003, 107015 without a subscription.
    Differs from real ACL: a blocking callback whose thread can never run it raises
    DeadlockError at the next synchronize instead of hanging.
    """
    threads.launch_callback(s, th, cid, fn, user_data, block_type, stream)


@acl_api("acl.rt.process_report", "aclrtProcessReport", "i")
def process_report(s: S, th: HostThread, cid: int, timeout: int) -> None:
    """Run the callbacks reported to this thread, waiting up to ``timeout`` ms (-1 forever).

    Returns ret: 0, 507012 on timeout, 107012 in a thread with no subscription, 100000 for
    a timeout of 0 or below -1. Differs from real ACL: the wait is in real time (so other
    threads can submit work), while the virtual clock advances by at most the timeout.
    """
    threads.process_report(s, th, cid, timeout)
