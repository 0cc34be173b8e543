"""The race check and task shedding read the syncs table by the runtime's numbering.

``runtime.kinds.SyncKind`` is the one declaration: the runtime passes its members to
``on_sync``, the recorder stores their values, ``checks.ordering`` and ``shedding`` compare
against them and ``schema.SYNC_KINDS`` names them. A wait recorded under another kind would
make the race check take a stream wait for a device wait (and shedding would follow it), so
each host wait is run here and its recorded row read back by name, as are the timeout codes
a wait that orders nothing returns.
"""

from __future__ import annotations

from types import ModuleType

import acl_lab
from acl_lab.constants import ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_lab.runtime.kinds import ObjectKind, SyncKind
from acl_lab.runtime.session import Session
from acl_lab.tracer.happens_before import WAIT_TIMEOUTS
from acl_lab.tracer.schema import SYNC_KINDS
from acl_lab.tracer.trace import Trace


def _waits(acl: ModuleType) -> None:
    assert acl.init() == 0
    assert acl.rt.set_device(0) == 0
    stream, ret = acl.rt.create_stream()
    assert ret == 0
    event, ret = acl.rt.create_event()
    assert ret == 0
    assert acl.rt.record_event(event, stream) == 0
    assert acl.rt.synchronize_stream(stream) == 0
    assert acl.rt.synchronize_event(event) == 0
    assert acl.rt.synchronize_device() == 0
    tid, ret = acl.util.start_thread(lambda: None, None)
    assert ret == 0
    assert acl.util.stop_thread(tid) == 0
    assert acl.rt.destroy_event(event) == 0
    assert acl.rt.destroy_stream(stream) == 0
    assert acl.rt.reset_device(0) == 0
    assert acl.finalize() == 0


def _record() -> Trace:
    with Session(watchdog=5.0) as s:
        acl = acl_lab.install()
        try:
            _waits(acl)
            return s.finish()
        finally:
            acl_lab.uninstall()


def test_each_host_wait_records_its_sync_kind() -> None:
    """synchronize_stream/event/device and stop_thread each leave a sync row of their kind,
    whose target is the stream, the event or the caller's context (an object of that kind)."""
    trace = _record()
    sy, objs = trace.syncs, trace.objects
    got: dict[str, tuple[SyncKind, int]] = {}
    for i in range(sy.rows):
        name = trace.call_name(int(sy["call"][i]))
        kind = SyncKind(int(sy["kind"][i]))
        target = int(sy["target"][i])
        got[name] = (kind, int(objs["kind"][target]) if target >= 0 else -1)
    assert got == {
        "acl.rt.synchronize_stream": (SyncKind.STREAM, ObjectKind.STREAM),
        "acl.rt.synchronize_event": (SyncKind.EVENT, ObjectKind.EVENT),
        "acl.rt.synchronize_device": (SyncKind.DEVICE, ObjectKind.CONTEXT),
        "acl.util.stop_thread": (SyncKind.JOIN, -1),
        # destroying a stream and resetting the device wait for the stream's tasks first
        "acl.rt.destroy_stream": (SyncKind.STREAM, got["acl.rt.destroy_stream"][1]),
        "acl.rt.reset_device": (SyncKind.STREAM, got["acl.rt.reset_device"][1]),
    }
    # and the names the views print are the members' labels, indexed by the stored value
    assert [SYNC_KINDS[int(k)] for k in sy["kind"]] == [SyncKind(int(k)).label
                                                        for k in sy["kind"]]


def test_wait_timeouts_are_the_stream_and_event_sync_timeouts() -> None:
    """A timed-out stream/device wait returns 507046, an event wait 507047 (both order nothing)."""
    assert set(WAIT_TIMEOUTS) == {ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT}
    assert set(WAIT_TIMEOUTS) == {507046, 507047}
