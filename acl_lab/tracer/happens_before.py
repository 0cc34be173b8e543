"""The happens-before algebra shared by the race check and the recorder's task shedding.

Both ``checks.ordering`` (the race check over a finished trace) and ``shedding`` (which
decides, while recording, which finished tasks the trace can leave out) reason with the same
vector clocks; if they disagreed, shedding would invent races (a left-out task carried an
ordering the check can no longer see) or hide them. So the clock algebra and the naming of
timelines live here, once.

Timelines: every stream is one (keyed by its object id, ``>= 0``) and every host thread is
one (keyed by ``host_key(thread) = -1 - thread``). A clock maps timeline keys to the latest
point of that timeline known to have happened before; a missing key means "nothing". The
race check numbers the accesses of a timeline 1, 2, ...; the shedder uses task ids (which
grow along a timeline too) and opaque tuple keys for what happened before shedding started.
Only the order of values along one timeline matters, so both use the same operations.

Happens-before comes from (``checks.ordering._Graph`` builds these edges over a trace, the
shedder follows them as the runtime reports them):

* stream FIFO: a stream runs its tasks in queue order;
* submission: a task comes after everything its submitting host thread had done, or waited
  for, when it called the API;
* events: a ``stream_wait_event`` task comes after the record its edge names, and so after
  everything queued before that record on the recording stream;
* host waits: after ``synchronize_stream/device/event`` (and a timed-out wait: nothing) the
  host thread comes after the tasks it waited for; a synchronous copy (stream -1) is an
  access of the host thread's own timeline;
* threads: a thread's first call comes after its starter's last call before it, a joined
  thread's last call before the joiner's next one (``acl.util.stop_thread`` is a join sync);
* callbacks: a callback's host code comes after the work queued before it on its stream, and
  a *blocking* callback's stream continues only after that host code.

Clocks are shared between program points and never changed once published: ``join`` and
``tick`` return new clocks (or an argument unchanged when nothing is added); ``join_into`` is
for a clock its caller owns.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from ..constants import ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT

#: Return codes of a host wait that timed out: it orders nothing.
WAIT_TIMEOUTS = (ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT)

#: A vector clock: timeline key -> latest point known to have happened before.
Clock = dict[Hashable, int]

#: What a missing key means: before any point (race-check points start at 1, task ids at 0).
NOTHING = -1


def host_key(thread: int) -> int:
    """The timeline key of host thread ``thread`` (streams use their object id, >= 0)."""
    return -1 - thread


def thread_of_key(key: int) -> int:
    """The host thread of a host timeline key (the inverse of ``host_key``)."""
    return -1 - key


def is_host(key: Hashable) -> bool:
    """Whether ``key`` names a host thread's timeline (not a stream)."""
    return isinstance(key, int) and key < 0


def join(a: Clock, b: Clock) -> Clock:
    """Everything ``a`` or ``b`` knows: ``a`` (or ``b``) itself when the other adds nothing,
    else a new clock."""
    if not b or a is b:
        return a
    if not a:
        return b
    out: Clock | None = None
    get = a.get
    for k, v in b.items():
        if get(k, NOTHING) < v:
            if out is None:
                out = dict(a)
            out[k] = v
    return a if out is None else out


def join_into(dst: Clock, src: Mapping[Hashable, int]) -> None:
    """Add what ``src`` knows to ``dst`` in place (``dst`` must be the caller's own clock)."""
    get = dst.get
    for k, v in src.items():
        if get(k, NOTHING) < v:
            dst[k] = v


def covers(a: Mapping[Hashable, int], b: Mapping[Hashable, int]) -> bool:
    """Does ``a`` know everything ``b`` knows (every point of ``b`` happened before ``a``)?"""
    get = a.get
    return all(get(k, NOTHING) >= v for k, v in b.items())


def tick(clock: Clock, key: Hashable, point: int) -> Clock:
    """``clock`` after point ``point`` of timeline ``key`` (a new clock)."""
    out = dict(clock)
    out[key] = point
    return out


def ordered(clock: Mapping[Hashable, int], key: Hashable, point: int) -> bool:
    """Did point ``point`` of timeline ``key`` happen before a program point with ``clock``?"""
    return clock.get(key, NOTHING) >= point
