"""The race check and task shedding read the syncs table by the runtime's numbering.

``happens_before.SYNC`` names the ``syncs.kind`` values from ``schema.SYNC_KINDS``; the
runtime writes them as ``runtime.session.SYNC_*``. If the two numberings parted, the race check
would take a stream wait for a device wait (and shedding would follow it), so they are compared
here, as are the timeout codes a wait that orders nothing returns.
"""

from __future__ import annotations

from acl_lab.constants import ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
from acl_lab.runtime import session
from acl_lab.tracer.happens_before import SYNC, WAIT_TIMEOUTS


def test_sync_kinds_match_the_runtime_numbering() -> None:
    """Every sync kind the runtime writes has the number the tracer reads it by."""
    assert SYNC == {"stream": session.SYNC_STREAM, "device": session.SYNC_DEVICE,
                    "event": session.SYNC_EVENT, "report": session.SYNC_REPORT,
                    "join": session.SYNC_JOIN}


def test_wait_timeouts_are_the_stream_and_event_sync_timeouts() -> None:
    """A timed-out stream/device wait returns 507046, an event wait 507047 (both order nothing)."""
    assert set(WAIT_TIMEOUTS) == {ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT}
    assert set(WAIT_TIMEOUTS) == {507046, 507047}
