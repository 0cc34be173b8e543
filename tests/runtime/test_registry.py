"""The Session's one handle registry: ``register`` / ``lookup`` / ``retire``.

Every module that hands out handles (contexts, streams, events, data buffers, descs, DVPP and
aclnn objects, profiling configs) goes through these three calls, so their codes, messages and
trace rows are checked here once, and through the API where the codes reach the program.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from acl_lab.constants import ErrorCode
from acl_lab.runtime import buffers, events, streams
from acl_lab.runtime.errors import AclError
from acl_lab.runtime.kinds import Ending, ObjectKind
from acl_lab.runtime.objects import DataBuffer, Event, Stream
from acl_lab.runtime.session import HANDLE_STEP, Session


class _Thing:
    """A handle object with the attributes the registry sets and reads."""

    def __init__(self) -> None:
        self.oid = -1
        self.handle = 0
        self.alive = True


class _Other(_Thing):
    pass


class _Watch:
    """Collects the object and destroy hooks."""

    def __init__(self) -> None:
        self.objects: list[tuple[Any, ...]] = []
        self.destroys: list[tuple[int, int, int]] = []

    def on_object(self, *args: Any) -> None:
        self.objects.append(args)

    def on_destroy(self, oid: int, call: int, how: int) -> None:
        self.destroys.append((oid, call, how))


@pytest.fixture
def watched(session: Session) -> _Watch:
    w = _Watch()
    session.hooks.subscribe(w)
    return w


def test_register_with_a_kind_gives_an_oid_and_announces_the_object(
        session: Session, watched: _Watch) -> None:
    a, b = _Thing(), _Thing()
    ha = session.register(a, ObjectKind.TENSOR_DESC, 7, "thing a", device=0, ctx=3, param=5)
    hb = session.register(b, ObjectKind.OP_ATTR, 8, lambda: f"thing {b.handle:#x}")
    assert (a.handle, b.handle) == (ha, hb)
    assert hb == ha + HANDLE_STEP
    assert session.objects[a.oid] is a and session.objects[b.oid] is b
    assert b.oid == a.oid + 1
    # the label function runs once the handle is set, so a label may name the handle
    assert watched.objects == [
        (a.oid, ObjectKind.TENSOR_DESC, ha, 0, 3, 5, 7, "thing a"),
        (b.oid, ObjectKind.OP_ATTR, hb, -1, -1, 0, 8, f"thing {hb:#x}"),
    ]


def test_register_without_a_kind_gives_only_a_handle(session: Session,
                                                     watched: _Watch) -> None:
    t = _Thing()
    n = len(session.objects)
    h = session.register(t)
    assert t.handle == h and t.oid == -1
    assert len(session.objects) == n and watched.objects == []
    assert session.lookup(h, _Thing, "thing") is t


def test_lookup_codes_and_messages(session: Session) -> None:
    t = _Thing()
    h = session.register(t, ObjectKind.OP_ATTR, 0, "t")
    assert session.lookup(h, _Thing, "thing") is t
    with pytest.raises(AclError) as null:
        session.lookup(0, _Thing, "thing", 507000, null_code=161001)
    assert null.value.code == 161001 and null.value.message == "thing is null"
    with pytest.raises(AclError) as other:
        session.lookup(h, _Other, "other thing", 507000)
    assert other.value.code == 507000
    assert other.value.message == f"{h:#x} is not a live other thing"
    with pytest.raises(AclError) as unknown:
        session.lookup(h + 1, _Thing, "thing")
    assert unknown.value.code == ErrorCode.ACL_ERROR_INVALID_PARAM
    with pytest.raises(AclError) as garbage:
        session.lookup("x", _Thing, "thing")  # type: ignore[arg-type]
    assert garbage.value.code == ErrorCode.ACL_ERROR_INVALID_PARAM


def test_retire_records_the_end_and_lookup_refuses_the_object(
        session: Session, watched: _Watch) -> None:
    t = _Thing()
    h = session.register(t, ObjectKind.OP_ATTR, 0, "t")
    session.retire(t, 4)
    session.retire(_registered(session), 5, Ending.RECLAIMED)
    assert watched.destroys[0] == (t.oid, 4, Ending.EXPLICIT)
    assert watched.destroys[1][1:] == (5, Ending.RECLAIMED)
    with pytest.raises(AclError) as dead:
        session.lookup(h, _Thing, "thing", 107000, gone=" (and buried)")
    assert dead.value.code == 107000
    assert dead.value.message == f"thing {h:#x} was already destroyed (and buried)"
    # live=False hands the retired object back, for callers whose code for it differs
    assert session.lookup(h, _Thing, "thing", live=False) is t
    # a handle is never given out again
    assert session.register(_Thing()) > h


def _registered(session: Session) -> _Thing:
    t = _Thing()
    session.register(t, ObjectKind.OP_ATTR, 0, "u")
    return t


def test_the_modules_resolve_their_handles_with_their_codes(ready: ModuleType,
                                                             session: Session) -> None:
    """Stream, event and data-buffer handles through the module lookups: each kind keeps the
    code real ACL gives for a wrong or destroyed handle."""
    th = session.thread()
    stream, _ = ready.rt.create_stream()
    event, _ = ready.rt.create_event()
    buf = ready.create_data_buffer(0, 0)
    assert isinstance(streams.lookup(session, th, stream), Stream)
    assert streams.lookup(session, th, 0) is th.ctx.default_stream
    assert isinstance(events.lookup(session, event), Event)
    assert isinstance(buffers.lookup(session, buf), DataBuffer)
    with pytest.raises(AclError) as wrong:
        streams.lookup(session, th, event)
    assert wrong.value.code == ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR
    with pytest.raises(AclError) as wrong_event:
        events.lookup(session, stream)
    assert wrong_event.value.code == ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert ready.rt.destroy_stream(stream) == 0
    assert ready.rt.destroy_event(event) == 0
    assert ready.destroy_data_buffer(buf) == 0
    # destroyed: the same codes through the API as through the lookups
    assert ready.rt.synchronize_stream(stream) == ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert ready.rt.query_event_status(event)[1] == ErrorCode.ACL_ERROR_RT_INTERNAL_ERROR
    assert ready.destroy_data_buffer(buf) == ErrorCode.ACL_ERROR_INVALID_PARAM
    assert ready.rt.destroy_event(0) == ErrorCode.ACL_ERROR_INVALID_PARAM
    trace = session.trace()
    kinds = [int(k) for k in trace.objects["kind"]]
    assert kinds.count(ObjectKind.STREAM) >= 2       # the default stream and ours
    assert ObjectKind.EVENT in kinds and ObjectKind.DATA_BUFFER in kinds
