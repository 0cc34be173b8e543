"""Devices and contexts: init and finalize, set/reset device, create/destroy/set context.

Functions over a ``Session`` (the state: its ``devices``, ``thread_list`` and handle
registry). A device's default context is made by the first ``set_device`` and released by
the ``reset_device`` that drops its last reference; releasing a device first waits for the
streams of its contexts (or, at program exit, drops what never ran), then destroys the
contexts with their streams and events, and reclaims the device's leaked memory. Anything
released that the program did not release itself is recorded as reclaimed (leaked).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..constants import ErrorCode
from . import streams, waits
from .errors import AclError
from .kinds import Ending, ObjectKind
from .memory import DEVICE, DVPP, HOST_PINNED, Region
from .objects import Context, Device, HostThread

if TYPE_CHECKING:
    from .session import Session

# Short names for how a resource ended (``kinds.Ending``, the trace's ``destroys.how`` and
# ``frees.how`` columns).
HOW_EXPLICIT, HOW_RECLAIMED = Ending.EXPLICIT, Ending.RECLAIMED

#: the status of a task dropped before it ran (as destroy_stream_force leaves it)
_NEVER_RAN = 507903


# ------------------------------------------------------------------ init / finalize


def init(s: Session, th: HostThread, cid: int, config_path: str | None) -> int:
    """aclInit: reference-counted; a repeat returns 100002."""
    if config_path is not None and config_path != "" and not os.path.isfile(config_path):
        raise AclError(ErrorCode.ACL_ERROR_INVALID_FILE,
                       f"config file {config_path!r} does not exist")
    s.init_count += 1
    if s.init_count > 1:
        raise AclError(ErrorCode.ACL_ERROR_REPEAT_INITIALIZE,
                       "acl.init was already called (repeat init is harmless; many programs "
                       "ignore 100002)")
    s.finalized = False
    return 0


def finalize(s: Session, th: HostThread, cid: int, reference: bool = False) -> int:
    """aclFinalize (or aclFinalizeReference when ``reference``): returns the new count."""
    if s.init_count < 1:
        raise AclError(ErrorCode.ACL_ERROR_REPEAT_FINALIZE,
                       "acl.finalize was already called (or acl.init never was)")
    s.init_count = s.init_count - 1 if reference else 0
    if s.init_count == 0:
        teardown(s, th, cid, "finalize")
        s.finalized = True
    return s.init_count


def teardown(s: Session, th: HostThread, cid: int, why: str) -> None:
    """Release everything still open: devices, contexts, streams, events, memory.

    ``why`` is ``"finalize"``, ``"reset_device"`` or ``"exit"`` (the program ended: pending
    tasks are dropped instead of waited for)."""
    for dev in s.devices:
        if dev.is_open or dev.contexts:
            release_device(s, th, cid, dev, why)
    for r in s.memory.live_regions():
        if r.kind == HOST_PINNED:
            reclaim_region(s, r, cid)


# ------------------------------------------------------------------ devices


def device(s: Session, index: int) -> Device:
    """The device numbered ``index``, or 107001 for an id this machine does not have."""
    if not isinstance(index, int) or not 0 <= index < len(s.devices):
        raise AclError(ErrorCode.ACL_ERROR_RT_INVALID_DEVICEID,
                       f"device id {index} is invalid: this machine has {len(s.devices)} "
                       "device(s), numbered from 0")
    return s.devices[index]


def set_device(s: Session, th: HostThread, cid: int, index: int) -> None:
    """aclrtSetDevice: bind the device's default context to this thread (ref-counted)."""
    dev = device(s, index)
    dev.refcount += 1
    if dev.default_ctx is None or not dev.default_ctx.alive:
        dev.default_ctx = make_context(s, dev, True, cid)
    th.ctx = dev.default_ctx
    th.device = index


def reset_device(s: Session, th: HostThread, cid: int, index: int, force: bool = False) -> None:
    """aclrtResetDevice(Force): drop a reference; at zero release everything of it."""
    dev = device(s, index)
    if dev.refcount <= 0:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       f"device {index} is not set (reset without a matching set_device, or "
                       "reset twice)")
    dev.refcount = 0 if force else dev.refcount - 1
    if dev.refcount == 0:
        release_device(s, th, cid, dev, "reset_device")


def release_device(s: Session, th: HostThread, cid: int, dev: Device, why: str) -> None:
    """Release a device: its contexts (after their streams), their objects, its memory."""
    for ctx in list(dev.contexts):
        if ctx.alive:
            if why == "exit":
                drop_pending(s, ctx, "the program exited")
            else:
                drain_context(s, th, cid, ctx)
    for ctx in list(dev.contexts):
        if ctx.alive:
            # The default context is released by reset_device by design; anything else
            # still alive here was leaked.
            ok = ctx.is_default and why == "reset_device"
            destroy_context_now(s, ctx, cid, HOW_EXPLICIT if ok else HOW_RECLAIMED)
    dev.contexts = []
    dev.default_ctx = None
    dev.refcount = 0
    for r in s.memory.live_regions():
        if r.kind in (DEVICE, DVPP) and r.device == dev.index:
            reclaim_region(s, r, cid)
    for t in s.thread_list:
        if t.ctx is not None and t.ctx.device is dev:
            t.ctx = None
            t.device = -1


def reclaim_region(s: Session, r: Region, cid: int) -> None:
    """Free an allocation the program left behind (recorded as reclaimed)."""
    s.memory.free(r)
    s.hooks.on_free(r, cid, HOW_RECLAIMED)


def get_device(s: Session, th: HostThread) -> int:
    """aclrtGetDevice: the thread's device, 107002 if it has no context."""
    if th.ctx is None:
        raise AclError(ErrorCode.ACL_ERROR_RT_CONTEXT_NULL,
                       "this thread has no current context or device: call "
                       "acl.rt.set_device or acl.rt.set_context in this thread")
    return th.ctx.device.index


def require_ctx(s: Session, th: HostThread) -> Context:
    """The thread's current context, or 107002 explained."""
    ctx = th.ctx
    if ctx is None:
        where = ("a thread started by acl.util.start_thread" if th.started_by_acl
                 else f"{th.label()}")
        raise AclError(ErrorCode.ACL_ERROR_RT_CONTEXT_NULL,
                       f"no current context in {where}: a new thread starts with none; call "
                       "acl.rt.set_context(ctx) (or acl.rt.set_device) in this thread first")
    return ctx


# ------------------------------------------------------------------ contexts


def make_context(s: Session, dev: Device, is_default: bool, cid: int) -> Context:
    """A new context of ``dev`` with its default stream (registered and announced)."""
    ctx = Context(-1, 0, dev, is_default)
    s.register(ctx, ObjectKind.CONTEXT, cid, ctx.label, device=dev.index, param=int(is_default))
    dev.contexts.append(ctx)
    ctx.default_stream = streams.make(s, ctx, True, 0, cid)
    return ctx


def create_context(s: Session, th: HostThread, cid: int, index: int) -> int:
    """aclrtCreateContext: a new context that becomes current for this thread."""
    dev = device(s, index)
    ctx = make_context(s, dev, False, cid)
    th.ctx = ctx
    th.device = index
    return ctx.handle


def context(s: Session, handle: int) -> Context:
    """Resolve a context handle (100000 for null, 107000 for unknown or destroyed ones)."""
    ctx: Context = s.lookup(handle, Context, "context", ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                            gone=" (or its device was reset)")
    return ctx


def destroy_context(s: Session, th: HostThread, cid: int, handle: int) -> None:
    """aclrtDestroyContext: only explicit contexts; waits for their streams first."""
    ctx = context(s, handle)
    if ctx.is_default:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       "the default context of set_device cannot be destroyed; call "
                       "acl.rt.reset_device instead")
    drain_context(s, th, cid, ctx)
    destroy_context_now(s, ctx, cid, HOW_EXPLICIT)


def drop_pending(s: Session, ctx: Context, why: str) -> None:
    """Cancel tasks that never got to run (at process exit nothing waits for them)."""
    for st in ctx.streams:
        for t in st.pending:
            t.status = _NEVER_RAN
            t.reason = f"never ran: {why}"
            t.callback = t.user_data = None
            s.hooks.on_task_status(t)
        st.pending.clear()
        st.blocked_by = None
        if st in s.blocked_streams:  # the scheduler's list of streams with a queue
            s.blocked_streams.remove(st)


def drain_context(s: Session, th: HostThread, cid: int, ctx: Context) -> None:
    """Wait until every live stream of ``ctx`` has finished its tasks."""
    live = [st for st in ctx.streams if st.alive]
    waits.wait_streams(s, th, cid, live, f"{ctx.label()} being released", timeout_ns=-1)


def destroy_context_now(s: Session, ctx: Context, cid: int, how: int) -> None:
    """Destroy a context with its streams and events; no thread keeps it current."""
    for st in ctx.streams:
        if st.alive and not st.is_default:
            streams.destroy_now(s, st, cid, HOW_RECLAIMED)
    for e in ctx.events:
        if e.alive:
            s.retire(e, cid, HOW_RECLAIMED)
    if ctx.default_stream is not None and ctx.default_stream.alive:
        streams.destroy_now(s, ctx.default_stream, cid, how)
    s.retire(ctx, cid, how)
    for t in s.thread_list:
        if t.ctx is ctx:
            t.ctx = None


def set_context(s: Session, th: HostThread, handle: int) -> None:
    """aclrtSetCurrentContext: the thread's context (and device) become ``handle``'s."""
    ctx = context(s, handle)
    th.ctx = ctx
    th.device = ctx.device.index
