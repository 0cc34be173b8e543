"""Streams: create, look up, destroy and query the task queues of a context.

Functions over a ``Session``. A stream belongs to one context; handle 0 names the current
context's default stream. ``lookup`` resolves a handle on the path of every asynchronous call,
so it does the least work that keeps the error codes right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..constants import ErrorCode
from . import devices, waits
from .errors import AclError
from .kinds import ObjectKind
from .objects import Context, HostThread, Stream

if TYPE_CHECKING:
    from .session import Session

_INTERNAL = ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR  # 507000: a garbage or destroyed handle


def make(s: Session, ctx: Context, is_default: bool, flags: int, cid: int) -> Stream:
    """A new stream of ``ctx`` (207008 past the profile's stream limit per device)."""
    dev = ctx.device
    count = sum(1 for c in dev.contexts for st in c.streams if st.alive)
    if count >= s.profile.max_streams:
        raise AclError(ErrorCode.ACL_ERROR_RT_NO_STREAM_RESOURCE,
                       f"no stream resources left: {count} streams exist on device "
                       f"{dev.index} (limit {s.profile.max_streams}, default streams included)")
    st = Stream(-1, 0, ctx, is_default, flags)
    s.register(st, ObjectKind.STREAM, cid,
               lambda: st.label() + (f" of {ctx.label()}" if is_default else ""),
               device=dev.index, ctx=ctx.oid, param=flags)
    ctx.streams.append(st)
    return st


def create(s: Session, th: HostThread, cid: int, flags: int = 0) -> int:
    """aclrtCreateStream(WithConfig): a stream of the current context."""
    ctx = devices.require_ctx(s, th)
    return make(s, ctx, False, flags, cid).handle


def lookup(s: Session, th: HostThread, handle: int, check_ctx: bool = True) -> Stream:
    """Resolve a stream handle; 0 is the current context's default stream.

    Raises:
        AclError: 107002 without a current context, 507000 for a garbage or destroyed
            handle, 107003 when the stream belongs to another context (``check_ctx``).
    """
    # On the hot path of every async call: the context check of devices.require_ctx and
    # the registry's lookup are inlined (Session.lookup would give 100000 for a null handle).
    ctx = th.ctx
    if ctx is None:
        ctx = devices.require_ctx(s, th)  # raises 107002
    if handle == 0:
        assert ctx.default_stream is not None
        return ctx.default_stream
    obj = s.handles.get(handle)
    if not isinstance(obj, Stream):
        raise AclError(_INTERNAL, f"{handle:#x} is not a stream handle")
    if not obj.alive:
        raise AclError(_INTERNAL, f"stream {handle:#x} was already destroyed")
    if check_ctx and obj.ctx is not ctx:
        raise AclError(ErrorCode.ACL_ERROR_RT_STREAM_CONTEXT,
                       f"{obj.label()} belongs to {obj.ctx.label()}, but the current context "
                       f"of this thread is {ctx.label()}: call acl.rt.set_context with the "
                       "stream's context first")
    return obj


def destroy(s: Session, th: HostThread, cid: int, handle: int, force: bool) -> None:
    """aclrtDestroyStream(Force): waits for (or, forced, drops) pending tasks."""
    st = lookup(s, th, handle)
    if st.is_default:
        raise AclError(ErrorCode.ACL_ERROR_RT_PARAM_INVALID,
                       "the default stream cannot be destroyed")
    if force:
        for t in st.pending:
            t.status = 507903
            t.reason = "dropped by destroy_stream_force"
            s.hooks.on_task_status(t)
        st.pending.clear()
        st.blocked_by = None
    else:
        waits.wait_streams(s, th, cid, [st], f"{st.label()} being destroyed", timeout_ns=-1)
    destroy_now(s, st, cid, devices.HOW_EXPLICIT)


def destroy_now(s: Session, st: Stream, cid: int, how: int) -> None:
    """Destroy ``st`` without waiting; its report subscription ends with it."""
    if st.subscriber is not None:
        st.subscriber.subscriptions = [x for x in st.subscriber.subscriptions if x is not st]
        st.subscriber = None
    s.retire(st, cid, how)


def done_at(st: Stream, t: int) -> bool:
    """True when every task of ``st`` has finished by virtual time ``t``."""
    return st.idle and st.tail_end <= t


def query(s: Session, th: HostThread, stream: int) -> bool:
    """aclrtStreamQuery: True when the stream's tasks are done by the caller's clock."""
    return done_at(lookup(s, th, stream), th.clock)
